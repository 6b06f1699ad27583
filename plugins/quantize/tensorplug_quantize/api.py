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
AO_QUANTIZATION = {"quantize_dynamic": "workflows"}
"""name -> module of tensorplug_quantize, for ``tensorplug.ao.quantization`` (and ``tensorplug.quantization``)"""
TORCHAO = {n: "workflows" for n in (
    "quantize_", "Int8DynamicActivationInt8Weight", "Int8WeightOnly", "Int4WeightOnly",
    "Int8DynamicActivationInt8WeightConfig", "Int8WeightOnlyConfig", "Int4WeightOnlyConfig")}
"""name -> module, for ``tensorplug.quantization`` only (torchao's names)"""
AO_NN_QUANTIZED = {}
"""name -> (module, attribute), for ``tensorplug.ao.nn.quantized``"""
AO_NN_QUANTIZED_DYNAMIC = {"Linear": ("modules", "DynamicLinear")}


def _lazy(module, attr):
    return lazy_name(f"tensorplug_quantize.{module}", attr)


def namespace():
    names = {n: getattr(qtensor, n) for n in TOP_LEVEL}
    for n, mod in AO_QUANTIZATION.items():
        names[f"ao.quantization.{n}"] = names[f"quantization.{n}"] = _lazy(mod, n)
    for n, mod in TORCHAO.items():
        names[f"quantization.{n}"] = _lazy(mod, n)
    for n, (mod, attr) in AO_NN_QUANTIZED.items():
        names[f"ao.nn.quantized.{n}"] = _lazy(mod, attr)
    for n, (mod, attr) in AO_NN_QUANTIZED_DYNAMIC.items():
        names[f"ao.nn.quantized.dynamic.{n}"] = _lazy(mod, attr)
    return names
