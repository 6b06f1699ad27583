"""More of ``tensorplug.nn.functional``: ``channel_shuffle``, ``max_unpool1d/2d/3d``, 3-d adaptive pooling and
``conv_transpose3d``, with PyTorch's arguments, defaults and errors (re-exported by
:mod:`tensorplug.nn.functional`). The operators are in ``tensorplug/ops/nn_more.py``.
"""

from __future__ import annotations

from ..ops import nn_more as _more

__all__ = ["channel_shuffle", "native_channel_shuffle", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           "adaptive_avg_pool3d", "adaptive_max_pool3d", "conv_transpose3d"]


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


def _ints(v):
    return tuple(v) if v.__class__ is list else v


def channel_shuffle(input, groups):
    """(N, C, *) with its C channels, seen as (groups, C / groups), transposed (ShuffleNet's channel shuffle)."""
    return _more.channel_shuffle(input, groups)


def native_channel_shuffle(input, groups):
    """The same as ``channel_shuffle``."""
    return _more.channel_shuffle(input, groups)


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """PyTorch's output size of max_unpool: ``(n - 1) * stride + kernel - 2 * padding`` per dim, or
    ``output_size`` (its spatial part) when given, which must be within a stride of it."""
    nd = len(kernel_size)
    shape = input.shape
    default = [(shape[-nd + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    return output_size


def _unpool_args(nd, kernel_size, stride, padding):
    k = _ntuple(kernel_size, nd)
    s = k if stride is None else _ntuple(stride, nd)
    return k, s, _ntuple(padding, nd)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d``: (N, C, L) or (C, L) values written at their ``indices`` (from
    ``max_pool1d(..., return_indices=True)``) of a zero output of length ``output_size``."""
    k, s, p = _unpool_args(1, kernel_size, stride, padding)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _more.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), tuple(size) + (1,)).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: (N, C, H, W) or (C, H, W) values written at their flat
    ``indices`` ``h * W_out + w`` of a zero output; ``output_size`` resolves the sizes pooling rounded."""
    k, s, p = _unpool_args(2, kernel_size, stride, padding)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _more.max_unpool2d(input, indices, tuple(size))


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d``: (N, C, D, H, W) or (C, D, H, W) values written at their flat
    ``indices`` of a zero output volume."""
    k, s, p = _unpool_args(3, kernel_size, stride, padding)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _more.max_unpool3d(input, indices, tuple(size), s, p)


def _adaptive3d_size(input, output_size):
    if isinstance(output_size, (list, tuple)) and input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    out = _ntuple(output_size, 3)
    if len(out) == 3:
        out = tuple(input.shape[-3 + i] if o is None else o for i, o in enumerate(out))
    return out


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (an int or a triple; None keeps a
    dim), over PyTorch's adaptive windows."""
    return _more.adaptive_avg_pool3d(input, _adaptive3d_size(input, output_size))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (None keeps a dim); with
    ``return_indices`` also each maximum's flat position ``(t * H + h) * W + w``."""
    out, idx = _more.adaptive_max_pool3d(input, _adaptive3d_size(input, output_size))
    return (out, idx) if return_indices else out


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution of ``input`` (N, C_in, D, H, W) or (C_in, D, H, W) with ``weight``
    (C_in, C_out / groups, kd, kh, kw): the gradient of conv3d with respect to its input."""
    return _more.conv_transpose3d(input, weight, bias, _ints(stride), _ints(padding), _ints(output_padding), groups,
                                  _ints(dilation))
