"""Sorting: ``sort``, ``argsort`` and ``topk``.

``sort.stable`` is the backend primitive (a stable sort; NaN sorts above every
number); ``sort``, ``argsort`` and ``topk`` decompose into it. The gradient of
the sorted values is scattered back to the positions the indices give.
"""

from __future__ import annotations

from collections import namedtuple

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..tensor import _wrap_dim
from ._lib import defop, attach, public
from .factories import zeros_for
from .indexing import scatter_
from .memory import contiguous
from .views import narrow

sort_result = namedtuple("sort", ["values", "indices"])
topk_result = namedtuple("topk", ["values", "indices"])


def _check_sort(self, stable=None, dim=-1, descending=False):
    _wrap_dim(dim, len(self._shape))
    if self._dtype.category == _dt.COMPLEX:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")  # PyTorch's text, leading space


sort_stable = defop("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False)"
                    " -> (Tensor values, Tensor indices)", check=_check_sort)
_sort_call = sort_stable._op.positional


def _sort_impl(self, dim=-1, descending=False):
    return _sort_call(self, False, dim, descending)


def _argsort_impl(self, dim=-1, descending=False):
    return _sort_call(self, False, dim, descending)[1]


def _argsort_stable_impl(self, stable, dim=-1, descending=False):
    return _sort_call(self, stable, dim, descending)[1]


sort_default = defop("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
                     composite=_sort_impl)
argsort_default = defop("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor",
                        composite=_argsort_impl)
argsort_stable = defop("argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor",
                       composite=_argsort_stable_impl)


def _check_topk(self, k, dim=-1, largest=True, sorted=True):
    dim = _wrap_dim(dim, len(self._shape))
    if not 0 <= k <= (self._shape[dim] if self._shape else 1):
        raise RuntimeError("selected index k out of range")
    if self._dtype is _dt.bool:
        raise RuntimeError("topk does not support bool dtypes")
    if self._dtype.category == _dt.COMPLEX:
        raise RuntimeError(" topk does not support complex dtypes on CPU")


def _topk_impl(self, k, dim=-1, largest=True, sorted=True):
    values, indices = _sort_call(self, True, dim, largest)
    if not self._shape:
        return values, indices
    return contiguous(narrow(values, dim, 0, k)), contiguous(narrow(indices, dim, 0, k))


topk = defop("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True)"
             " -> (Tensor values, Tensor indices)", check=_check_topk, composite=_topk_impl)


def sort(input, dim=-1, descending=False, *, stable=False):
    """Sorted values along ``dim`` and their int64 indices, as a ``(values, indices)`` named tuple.

    NaN sorts above every number. Equal elements keep their order (the sort is
    always stable, so ``stable=True`` costs nothing extra).
    """
    return sort_result(*_sort_call(input, stable, dim, descending))


def argsort(input, dim=-1, descending=False, *, stable=False):
    """int64 indices that sort ``input`` along ``dim`` (see :func:`sort`)."""
    return argsort_stable(input, stable=stable, dim=dim, descending=descending)


def topk_fn(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices, largest first."""
    return topk_result(*topk(input, k, dim, largest, sorted))


for _name, _fn in (("sort", sort), ("argsort", argsort), ("topk", topk_fn)):
    attach(_name, _fn)
    public(_name, _fn)


@derivative("sort.stable", nondiff_outputs=(1,))
def _(grad, dim, result1):
    if not grad._shape:
        return grad
    return scatter_(zeros_for(grad._shape, grad, result1), dim, result1, grad)
