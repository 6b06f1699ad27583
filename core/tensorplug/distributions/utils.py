"""Helpers of the distributions: broadcasting parameters, probabilities and logits, cached properties."""

from __future__ import annotations

import functools
import numbers

from .. import dtypes as _dt
from ..ops import factories as _f
from ..ops.promotion import broadcast_shapes_fn as _broadcast_shapes
from ..ops.random import _finfo
from ..tensor import Tensor

__all__ = ["broadcast_all", "probs_to_logits", "logits_to_probs", "clamp_probs", "lazy_property", "finfo_eps",
           "finfo_min", "sum_rightmost"]


def finfo_eps(dtype):
    return float(_finfo(dtype.np).eps)


def finfo_min(dtype):
    return float(_finfo(dtype.np).min)


def broadcast_all(*values):
    """The arguments as tensors of one broadcast shape; numbers take the dtype of the tensors (or the default)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    if not tensors:
        dtype = _dt.get_default_dtype()
        return tuple(_f.tensor(float(v), dtype=dtype) for v in values)
    ref = tensors[0]
    converted = [v if isinstance(v, Tensor) else _f.tensor(v, dtype=ref.dtype, device=ref.device) for v in values]
    shape = _broadcast_shapes(*[t.shape for t in converted])
    return tuple(t.expand(shape) for t in converted)


def clamp_probs(probs):
    """``probs`` clamped to ``[eps, 1 - eps]`` (eps of its dtype)."""
    eps = finfo_eps(probs.dtype)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Log-odds (``is_binary``) or log-probabilities of ``probs``, clamped away from 0 and 1."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


def logits_to_probs(logits, is_binary=False):
    """Sigmoid (``is_binary``) or softmax over the last dim of ``logits``."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


class lazy_property:
    """A property computed on first access and then stored on the instance (as in torch.distributions)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
