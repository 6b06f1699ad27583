"""More of ``tensorplug.nn.functional``: ``channel_shuffle``, ``max_unpool1d/2d/3d``, 3-d adaptive pooling and
``conv_transpose3d``, with PyTorch's arguments, defaults and errors (re-exported by
:mod:`tensorplug.nn.functional`). The operators are in ``tensorplug/ops/nn_more.py``.
"""

from __future__ import annotations

import math
import warnings

import tensorplug as _tp

from .. import dtypes as _dt
from ..ops import nn_ops as _nn_ops
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
    if not isinstance(output_size, (int, list, tuple)) and output_size is not None:
        raise TypeError(f"object of type '{type(output_size).__name__}' has no len()")
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


__all__ += ["linear_cross_entropy"]


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)`` for ``input`` (in_features) or
    (N, in_features) and ``linear_weight`` (C, in_features) or (C, d_1, ..., d_K, in_features) (a K-dimensional
    loss). ``ignore_index=None`` means -100 for class indices; it may not be given with class probabilities.
    ``options`` (PyTorch's chunking configuration) is accepted and computes the same values (the logits are
    not chunked here)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None and (out_features or reduction not in {"mean", "sum", "none"} or label_smoothing != 0.0
                                or target.dtype is not _dt.int64):
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}, tracing=False, linear_bias.shape="
                      f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    if out_features:
        n = math.prod(out_features) * num_classes
        linear_weight = linear_weight.reshape(n, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(n)
    logits = _tp.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    if reduction not in _nn_ops.REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _nn_ops.cross_entropy_loss(logits, target, weight, _nn_ops.REDUCTIONS[reduction], ignore_index,
                                      label_smoothing)


__all__ += ["fractional_max_pool2d", "fractional_max_pool3d"]


def _fractional(nd, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if len(output_ratio) > nd:  # (a number raises TypeError, as in PyTorch)
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _ntuple(output_ratio, nd)
        output_size = [int(input.shape[-nd + i] * ratio[i]) for i in range(nd)]
    if _random_samples is None:
        n_batch = 1 if input.dim() == nd + 1 else input.shape[0]
        _random_samples = _tp.rand(n_batch, input.shape[-nd - 1], nd, dtype=input.dtype, device=input.device)
    op = _more.fractional_max_pool2d if nd == 2 else _more.fractional_max_pool3d
    out, idx = op(input, _ntuple(kernel_size, nd), _ntuple(output_size, nd), _random_samples)
    return (out, idx) if return_indices else out


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling of (N, C, H, W) or (C, H, W): kh x kw windows at pseudo-random starts (drawn
    from ``_random_samples`` (N, C, 2) in [0, 1), or from ``tensorplug.rand``) to ``output_size`` or to the
    input size times ``output_ratio``; with ``return_indices`` also the flat positions."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W), as ``fractional_max_pool2d`` in three dims
    (``_random_samples`` (N, C, 3))."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)
