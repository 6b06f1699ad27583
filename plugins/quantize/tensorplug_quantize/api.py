"""The public names this plugin provides (``tensorplug.NAME``, ``tensorplug.ao.quantization.NAME``, ...).

The tensor-level names come from :mod:`~tensorplug_quantize.qtensor` (imported with the plugin); the
workflows and modules need ``tensorplug.nn`` and are imported on first use (:func:`lazy_name`).
"""

from __future__ import annotations

from tensorplug.plugin_api import lazy_name

from . import qtensor

TOP_LEVEL = ("qint8", "quint8", "qint32", "quint4x2", "qscheme", "per_tensor_affine", "per_channel_affine",
             "per_tensor_symmetric", "per_channel_symmetric", "per_channel_affine_float_qparams",
             "quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic", "dequantize", "int_repr")
AO_QUANTIZATION = {"quantize_dynamic": "workflows", **{n: "observers" for n in (
    "MinMaxObserver", "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver",
    "HistogramObserver", "default_histogram_observer", "default_observer", "default_weight_observer",
    "default_per_channel_weight_observer")}, **{n: "static" for n in (
    "QConfig", "default_qconfig", "default_qat_qconfig", "default_per_channel_qconfig", "get_default_qconfig",
    "get_default_qat_qconfig", "QuantStub", "DeQuantStub", "fuse_modules", "prepare", "convert", "prepare_qat",
    "propagate_qconfig_")}, **{n: "fake_quantize" for n in (
    "FakeQuantize", "FusedMovingAvgObsFakeQuantize", "default_fake_quant", "default_weight_fake_quant",
    "default_per_channel_weight_fake_quant")}}
"""name -> module of tensorplug_quantize, for ``tensorplug.ao.quantization`` (and ``tensorplug.quantization``)"""
TORCHAO = {n: "workflows" for n in (
    "quantize_", "Int8DynamicActivationInt8Weight", "Int8WeightOnly", "Int4WeightOnly",
    "Int8DynamicActivationInt8WeightConfig", "Int8WeightOnlyConfig", "Int4WeightOnlyConfig")}
"""name -> module, for ``tensorplug.quantization`` only (torchao's names)"""
REPORT = {"report": "report"}
"""name -> module, for ``tensorplug.quantization`` only"""
FAKE_QUANT_FUNCTIONS = ("fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine")
"""top-level ``tensorplug.NAME``, from :mod:`~tensorplug_quantize.fake_quantize`"""
AO_NN_QUANTIZED = {n: ("static_modules", n) for n in (
    "Linear", "Conv2d", "LinearReLU", "ConvReLU2d", "Quantize", "DeQuantize")}
"""name -> (module, attribute), for ``tensorplug.ao.nn.quantized`` (PyTorch has the fused ones under
``torch.ao.nn.intrinsic.quantized``)"""
AO_NN_QUANTIZED_DYNAMIC = {"Linear": ("modules", "DynamicLinear")}


def _lazy(module, attr):
    return lazy_name(f"tensorplug_quantize.{module}", attr)


def namespace():
    names = {n: getattr(qtensor, n) for n in TOP_LEVEL}
    for n, mod in AO_QUANTIZATION.items():
        names[f"ao.quantization.{n}"] = names[f"quantization.{n}"] = _lazy(mod, n)
    for n, mod in {**TORCHAO, **REPORT}.items():
        names[f"quantization.{n}"] = _lazy(mod, n)
    for n in FAKE_QUANT_FUNCTIONS:
        names[n] = _lazy("fake_quantize", n)
    for n, (mod, attr) in AO_NN_QUANTIZED.items():
        names[f"ao.nn.quantized.{n}"] = _lazy(mod, attr)
    for n, (mod, attr) in AO_NN_QUANTIZED_DYNAMIC.items():
        names[f"ao.nn.quantized.dynamic.{n}"] = _lazy(mod, attr)
    return names
