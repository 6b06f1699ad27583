"""``tensorplug.ao``: as ``torch.ao``, the home of quantization (``tensorplug.ao.quantization``,
``tensorplug.ao.nn.quantized``), whose names come from the tensorplug-quantize plugin."""

from __future__ import annotations

from . import nn, quantization

__all__ = ["nn", "quantization"]
