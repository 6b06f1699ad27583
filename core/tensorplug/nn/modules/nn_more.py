"""``ChannelShuffle``, ``MaxUnpool1d/2d/3d``, ``AdaptiveAvgPool3d``, ``AdaptiveMaxPool3d`` and ``ConvTranspose3d``
(the functions are in ``nn/functional_more.py``)."""

from __future__ import annotations

from .. import functional as F
from .conv_extra import _ConvTransposeNd, _triple
from .module import Module
from .utils import _single, _pair

__all__ = ["ChannelShuffle", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d",
           "ConvTranspose3d"]


class ChannelShuffle(Module):
    """Shuffle the C channels of (N, C, *) seen as (groups, C / groups)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class _MaxUnpoolNd(Module):
    _ntuple = None
    _unpool = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        nt = type(self)._ntuple
        self.kernel_size = nt(kernel_size)
        self.stride = nt(stride if stride is not None else kernel_size)
        self.padding = nt(padding)

    def forward(self, input, indices, output_size=None):
        return type(self)._unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: the forward takes the pooled values, their indices and an optional
    ``output_size``."""
    _ntuple = staticmethod(_single)
    _unpool = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d: the forward takes the pooled values, their indices and an optional
    ``output_size``."""
    _ntuple = staticmethod(_pair)
    _unpool = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d: the forward takes the pooled values, their indices and an optional
    ``output_size``."""
    _ntuple = staticmethod(_triple)
    _unpool = staticmethod(F.max_unpool3d)


class AdaptiveAvgPool3d(Module):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (None keeps a dim)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(Module):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (None keeps a dim); ``return_indices``
    also gives the flat positions."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W): ``weight``
    (C_in, C_out / groups, kd, kh, kw); the forward takes an optional ``output_size`` that picks the output
    padding."""

    _ntuple = staticmethod(_triple)
    _conv = staticmethod(F.conv_transpose3d)
