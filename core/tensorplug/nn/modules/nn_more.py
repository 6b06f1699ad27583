"""``ChannelShuffle``, ``MaxUnpool1d/2d/3d``, ``AdaptiveAvgPool3d``, ``AdaptiveMaxPool3d`` and ``ConvTranspose3d``
(the functions are in ``nn/functional_more.py``)."""

from __future__ import annotations

from .. import functional as F
from .conv_extra import _ConvTransposeNd, _triple
from .module import Module
from .utils import _single, _pair

__all__ = ["ChannelShuffle", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d",
           "ConvTranspose3d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


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


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        nt = _pair if self._nd == 2 else _triple
        self.kernel_size = nt(kernel_size)
        self.return_indices = return_indices
        self._random_samples = _random_samples
        self.output_size = nt(output_size) if output_size is not None else None
        self.output_ratio = nt(output_ratio) if output_ratio is not None else None
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, H, W) or (C, H, W) to ``output_size`` or ``output_ratio`` of the input
    size, kh x kw windows at pseudo-random starts."""
    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W), windows at pseudo-random starts."""
    _nd = 3
