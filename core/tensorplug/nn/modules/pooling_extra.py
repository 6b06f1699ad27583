"""``AdaptiveMaxPool1d`` and ``AdaptiveMaxPool2d`` (see ``F.adaptive_max_pool*d``)."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]


class _AdaptiveMaxPoolNd(Module):
    _pool = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._pool(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) or (C, L) to ``output_size``; ``return_indices`` also gives the positions."""
    _pool = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, H, W) or (C, H, W) to ``output_size`` (None keeps a dim); ``return_indices`` also
    gives the flat positions."""
    _pool = staticmethod(F.adaptive_max_pool2d)
