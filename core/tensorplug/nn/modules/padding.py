"""Padding layers: constant (and zero), reflection, replication and circular padding of the last 1-3 dims,
as ``torch.nn``'s (``padding`` in ``F.pad``'s order: last dim first, a (left, right) pair per dim)."""

from __future__ import annotations

from .. import functional as F
from .module import Module
from .utils import _ntuple

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]

_SIDES = {1: _ntuple(2, "_pair"), 2: _ntuple(4, "_quadruple"), 3: _ntuple(6, "_sextuple")}


class _ConstantPadNd(Module):
    _nd = 1

    def __init__(self, padding, value):
        super().__init__()
        self.padding = _SIDES[type(self)._nd](padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``: ``padding`` an int or (left, right)."""
    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with ``value``: ``padding`` an int or (left, right, top, bottom)."""
    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with ``value``: ``padding`` an int or (left, right, top, bottom, front, back)."""
    _nd = 3


class _ZeroPad:
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pad the last dim with zeros."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pad the last 2 dims with zeros."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pad the last 3 dims with zeros."""


class _ModePadNd(Module):
    _nd = 1
    _mode = "reflect"

    def __init__(self, padding):
        super().__init__()
        self.padding = _SIDES[type(self)._nd](padding)

    def forward(self, input):
        return F.pad(input, self.padding, type(self)._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    """Pad the last dim with its reflection (the edge not repeated) of (C, W) or (N, C, W)."""
    _nd, _mode = 1, "reflect"


class ReflectionPad2d(_ModePadNd):
    """Pad the last 2 dims of (C, H, W) or (N, C, H, W) with their reflection."""
    _nd, _mode = 2, "reflect"


class ReflectionPad3d(_ModePadNd):
    """Pad the last 3 dims of (C, D, H, W) or (N, C, D, H, W) with their reflection."""
    _nd, _mode = 3, "reflect"


class ReplicationPad1d(_ModePadNd):
    """Pad the last dim of (C, W) or (N, C, W) by repeating its edge values."""
    _nd, _mode = 1, "replicate"


class ReplicationPad2d(_ModePadNd):
    """Pad the last 2 dims of (C, H, W) or (N, C, H, W) by repeating their edge values."""
    _nd, _mode = 2, "replicate"


class ReplicationPad3d(_ModePadNd):
    """Pad the last 3 dims of (C, D, H, W) or (N, C, D, H, W) by repeating their edge values."""
    _nd, _mode = 3, "replicate"


class _CircularPadNd(_ModePadNd):
    _mode = "circular"

    def forward(self, input):
        nd = type(self)._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise ValueError(f"expected {nd + 1}D or {nd + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim of (C, W) or (N, C, W) circularly: the end wraps around to the start."""
    _nd = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dims of (C, H, W) or (N, C, H, W) circularly."""
    _nd = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dims of (C, D, H, W) or (N, C, D, H, W) circularly."""
    _nd = 3
