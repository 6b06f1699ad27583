"""``Conv3d`` and the transposed convolutions ``ConvTranspose1d`` / ``ConvTranspose2d``."""

from __future__ import annotations

import math

from ...ops.factories import empty
from .. import functional as F, init
from ..parameter import Parameter
from .conv import _ConvNd
from .module import Module
from .utils import _ntuple, _single, _pair

__all__ = ["Conv3d", "ConvTranspose1d", "ConvTranspose2d"]

_triple = _ntuple(3, "_triple")


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W): ``weight`` (C_out, C_in / groups, kd, kh, kw),
    ``bias`` (C_out). ``padding`` may be "valid" or "same"; ``padding_mode`` "zeros", "reflect", "replicate" or
    "circular"."""

    _ntuple = staticmethod(_triple)
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(Module):
    _ntuple = None
    _conv = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        ntuple = type(self)._ntuple
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = ntuple(kernel_size)
        self.stride = ntuple(stride)
        self.padding = ntuple(padding)
        self.dilation = ntuple(dilation)
        self.transposed = True
        self.output_padding = ntuple(output_padding)
        self.groups = groups
        self.padding_mode = padding_mode
        # the weight of the convolution this one is the input gradient of: (C_in, C_out / groups, *kernel)
        self.weight = Parameter(empty((in_channels, out_channels // groups) + self.kernel_size, dtype=dtype,
                                      device=device))
        if bias:
            self.bias = Parameter(empty((out_channels,), dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """PyTorch's default init: kaiming_uniform_(a=sqrt(5)) of the weight, the bias U(+-1/sqrt(fan_in))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _output_padding(self, input, output_size):
        """The output padding that gives ``output_size`` (which may include the batch and channel dims)."""
        if output_size is None:
            return self.output_padding
        nd = len(self.kernel_size)
        lead = 2 if input.dim() == nd + 2 else 1
        output_size = list(output_size)
        if len(output_size) == lead + nd:
            output_size = output_size[lead:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} or "
                             f"{lead + nd} elements (got {len(output_size)})")
        lo = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
              + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        hi = [m + self.stride[d] - 1 for d, m in enumerate(lo)]
        for size, a, b in zip(output_size, lo, hi):
            if size < a or size > b:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {lo} to "
                                 f"{hi} (for an input of {list(input.shape[lead:])})")
        return tuple(size - m for size, m in zip(output_size, lo))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return type(self)._conv(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                self.groups, self.dilation)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        return s.format(**self.__dict__)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L): ``weight`` (C_in, C_out / groups, k); the
    forward takes an optional ``output_size`` that picks the output padding."""

    _ntuple = staticmethod(_single)
    _conv = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W): ``weight`` (C_in, C_out / groups, kh, kw);
    the forward takes an optional ``output_size`` that picks the output padding."""

    _ntuple = staticmethod(_pair)
    _conv = staticmethod(F.conv_transpose2d)
