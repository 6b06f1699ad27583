"""``tensorplug.ao.nn``: quantized modules (``tensorplug.ao.nn.quantized``, ``...quantized.dynamic``)."""

from __future__ import annotations

from . import quantized

__all__ = ["quantized"]
