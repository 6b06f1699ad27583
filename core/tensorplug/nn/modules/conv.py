"""``Conv1d`` and ``Conv2d`` (im2col + matmul, see ``nn.functional``)."""

from __future__ import annotations

import math

from ...ops.factories import empty
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module
from .utils import _single, _pair, _reverse_repeat_tuple

__all__ = ["Conv1d", "Conv2d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}
_PADDING_STRINGS = {"same", "valid"}


class _ConvNd(Module):
    _ntuple = None
    _conv = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        ntuple = type(self)._ntuple
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size, stride, dilation = ntuple(kernel_size), ntuple(stride), ntuple(dilation)
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = ntuple(padding)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = False
        self.output_padding = ntuple(0)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad order (last dim first); 'same' puts an odd total's extra element on the right
        if isinstance(padding, str):
            pads = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    pads[2 * i], pads[2 * i + 1] = total // 2, total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = list(_reverse_repeat_tuple(padding, 2))
        self.weight = Parameter(empty((out_channels, in_channels // groups) + kernel_size, dtype=dtype,
                                      device=device))
        if bias:
            self.bias = Parameter(empty((out_channels,), dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw fresh default initial values (PyTorch's: kaiming_uniform_(a=sqrt(5)), bias U(+-1/sqrt(fan_in)))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        conv = type(self)._conv
        if self.padding_mode != "zeros":
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(input, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.kernel_size):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L): ``weight`` (C_out, C_in / groups, k), ``bias`` (C_out).

    ``padding`` is an int, "valid" or "same"; ``padding_mode`` "zeros", "reflect", "replicate" or "circular".
    """

    _ntuple = staticmethod(_single)
    _conv = staticmethod(F.conv1d)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W): ``weight`` (C_out, C_in / groups, kh, kw),
    ``bias`` (C_out). ``stride``, ``padding``, ``dilation`` are ints or pairs; ``padding`` may be "valid" or
    "same"; ``padding_mode`` "zeros", "reflect", "replicate" or "circular"."""

    _ntuple = staticmethod(_pair)
    _conv = staticmethod(F.conv2d)
