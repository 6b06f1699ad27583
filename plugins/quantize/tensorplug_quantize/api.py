"""The public names this plugin provides (``tensorplug.NAME``, ``tensorplug.ao.quantization.NAME``, ...)."""

from __future__ import annotations

from . import modules, qtensor, workflows

TOP_LEVEL = ("qint8", "quint8", "qint32", "quint4x2", "qscheme", "per_tensor_affine", "per_channel_affine",
             "per_tensor_symmetric", "per_channel_symmetric", "per_channel_affine_float_qparams",
             "quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic", "dequantize", "int_repr")
AO_QUANTIZATION = ("quantize_dynamic",)
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
    return names
