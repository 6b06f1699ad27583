"""Reductions over dimensions: schemas, dim normalisation and result dtypes."""

from __future__ import annotations

from .. import dtypes as _dt
from ..tensor import _wrap_dim
from ._lib import defop


def reduce_dims(self, dim):
    """Normalised, sorted, unique dims for ``dim`` (None or () means all dims)."""
    n = len(self._shape)
    if dim is None or dim == ():
        return tuple(range(n))
    out = sorted({_wrap_dim(d, n) for d in dim})
    if len(out) != len(dim):
        raise RuntimeError(f"dim {[d for d in dim]} appears multiple times in the list of dims")
    return tuple(out)


def sum_dtype(self, dtype=None):
    """sum/prod/cumsum accumulate bool and integer inputs in int64, as in PyTorch."""
    if dtype is not None:
        return dtype
    d = self._dtype
    return _dt.int64 if d.category != _dt.FLOATING else d


def _check_sum(self, dim=None, keepdim=False, dtype=None):
    reduce_dims(self, dim)


sum = defop("sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)"
            " -> Tensor", check=_check_sum)
