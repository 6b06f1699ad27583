"""The public names this plugin provides (``tensorplug.NAME``, ``tensorplug.ao.quantization.NAME``, ...)."""

from __future__ import annotations

from . import fake_quantize, modules, observers, qtensor, report, static, static_modules, workflows

TOP_LEVEL = ("qint8", "quint8", "qint32", "quint4x2", "qscheme", "per_tensor_affine", "per_channel_affine",
             "per_tensor_symmetric", "per_channel_symmetric", "per_channel_affine_float_qparams",
             "quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic", "dequantize", "int_repr")
AO_QUANTIZATION = ("quantize_dynamic",)
STATIC = {
    "MinMaxObserver": observers, "MovingAverageMinMaxObserver": observers, "PerChannelMinMaxObserver": observers,
    "MovingAveragePerChannelMinMaxObserver": observers, "HistogramObserver": observers,
    "default_histogram_observer": observers, "default_observer": observers,
    "default_weight_observer": observers, "default_per_channel_weight_observer": observers,
    "QConfig": static, "default_qconfig": static, "default_qat_qconfig": static, "get_default_qconfig": static,
    "get_default_qat_qconfig": static, "QuantStub": static, "DeQuantStub": static, "fuse_modules": static,
    "prepare": static, "convert": static, "prepare_qat": static, "propagate_qconfig_": static,
    "FakeQuantize": fake_quantize, "default_fake_quant": fake_quantize, "default_weight_fake_quant": fake_quantize,
    "default_per_channel_weight_fake_quant": fake_quantize, "FusedMovingAvgObsFakeQuantize": fake_quantize,
    "default_per_channel_qconfig": static,
}
"""``tensorplug.ao.quantization.NAME`` (and ``tensorplug.quantization.NAME``): static quantization and QAT."""
QUANTIZED_MODULES = ("Linear", "Conv2d", "LinearReLU", "ConvReLU2d", "Quantize", "DeQuantize")
"""``tensorplug.ao.nn.quantized.NAME`` (PyTorch has the fused ones under ``torch.ao.nn.intrinsic.quantized``)."""
FAKE_QUANT_FUNCTIONS = ("fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine")
TORCHAO = ("quantize_", "Int8DynamicActivationInt8Weight", "Int8WeightOnly", "Int4WeightOnly",
           "Int8DynamicActivationInt8WeightConfig", "Int8WeightOnlyConfig", "Int4WeightOnlyConfig")


def namespace():
    names = {n: getattr(qtensor, n) for n in TOP_LEVEL}
    for n in AO_QUANTIZATION:
        names[f"ao.quantization.{n}"] = getattr(workflows, n)
        names[f"quantization.{n}"] = getattr(workflows, n)
    for n in TORCHAO:
        names[f"quantization.{n}"] = getattr(workflows, n)
    names["ao.nn.quantized.dynamic.Linear"] = modules.DynamicLinear
    for n, mod in STATIC.items():
        names[f"ao.quantization.{n}"] = getattr(mod, n)
        names[f"quantization.{n}"] = getattr(mod, n)
    for n in QUANTIZED_MODULES:
        names[f"ao.nn.quantized.{n}"] = getattr(static_modules, n)
    for n in FAKE_QUANT_FUNCTIONS:
        names[n] = getattr(fake_quantize, n)
    names["quantization.report"] = report.report
    return names
