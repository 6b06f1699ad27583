"""More indexing ops: selections by value, set-like ops, index updates, scatter reductions and searches.

Backend primitives: ``nonzero``, ``masked_select``, ``_unique2``, ``unique_dim``,
``unique_consecutive``, ``repeat_interleave.Tensor`` (in :mod:`.shape_extra`),
``scatter_reduce_.two``, ``searchsorted.Tensor``, ``bincount`` and ``histc``.
The ops whose output shape depends on the data (``nonzero``, ``masked_select``,
the uniques, ``bincount``) carry ``Tag.dynamic_output_shape``; vmap refuses them
as PyTorch's does.

The rest decompose (``argwhere``, ``bucketize`` and the number forms of ``index_fill`` and of
``scatter`` with ``reduce=`` as plain functions, each operator costing import time): ``argwhere`` into
``nonzero``; ``index_add``/``index_copy``/
``index_fill`` (functional and in place) into ``index_put_`` along one dim;
``scatter`` with ``reduce=`` into ``scatter_add_`` or ``scatter_reduce_``;
``bucketize`` into ``searchsorted``; ``isin`` into a broadcast comparison;
``equal`` into ``eq`` and ``all``.
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from ..tensor import Tensor, _wrap_dim
from ._common import document as _document
from ._lib import DYNAMIC_SHAPE, defop, attach, public
from .comparison import where_fn as _where
from .factories import zeros_for as _zeros
from .indexing import (index_put_, gather, scatter_add_, index_select, check_scalar_fits,
                       scalar_as_tensor, _out_of_place, _same_device, _shape_str, _check_scatter)
from .joining import cat
from .joining import unbind
from .memory import clone, _to_copy
from .promotion import broadcast_shapes, result_type
from .views import expand, reshape, unsqueeze

_INDEX = (_dt.int64, _dt.int32)
_name = _dt.scalar_type_name


# -- nonzero, argwhere, masked_select ------------------------------------------------------------------
nonzero_op = _document(defop("nonzero(Tensor self) -> Tensor", tags=DYNAMIC_SHAPE),
                       "The (N, ndim) int64 indices of the nonzero elements, in row-major order.")


def nonzero(input, *, as_tuple=False):
    """The indices of the nonzero elements: an (N, ndim) int64 tensor, or with ``as_tuple`` one 1-D tensor
    per dim (a 0-dim input counts as 1-D)."""
    if not as_tuple:
        return nonzero_op(input)
    x = reshape(input, (1,)) if not input._shape else input
    return tuple(unbind(nonzero_op(x), 1))


def argwhere(input):
    """``nonzero(input)``: the (N, ndim) int64 indices of the nonzero elements."""
    return nonzero_op(input)


def _check_masked_select(self, mask):
    if mask._dtype is not _dt.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    _same_device("masked_select", self, mask)
    broadcast_shapes(mask._shape, self._shape)


masked_select = _document(defop("masked_select(Tensor self, Tensor mask) -> Tensor", check=_check_masked_select,
                                tags=DYNAMIC_SHAPE),
                          "The elements of ``self`` where the bool ``mask`` is True (both broadcast), as a 1-D "
                          "tensor.")


@derivative("masked_select")
def _(grad, self_shape, mask):
    shape = broadcast_shapes(self_shape, mask._shape)
    m = mask if mask._shape == shape else expand(mask, shape)
    g = index_put_(_zeros(shape or (1,), grad), [reshape(m, (1,)) if not shape else m], grad, True)
    g = g if shape else reshape(g, ())
    return (g if shape == self_shape else sum_to(g, self_shape)), None


# -- unique, unique_consecutive -----------------------------------------------------------------------
def _check_unique_dtype(self, name):
    return None


unique2 = defop("_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) "
                "-> (Tensor, Tensor, Tensor)", tags=DYNAMIC_SHAPE)


def _check_unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    d = _wrap_dim(dim, len(self._shape))
    if self.numel() == 0 and any(s == 0 for i, s in enumerate(self._shape) if i != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")


unique_dim = defop("unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
                   "bool return_counts=False) -> (Tensor, Tensor, Tensor)", check=_check_unique_dim,
                   tags=DYNAMIC_SHAPE)


def _check_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        _check_unique_dim(self, dim)


unique_consecutive_op = defop("unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, "
                              "int? dim=None) -> (Tensor, Tensor, Tensor)", check=_check_unique_consecutive,
                              tags=DYNAMIC_SHAPE)


def _pick(out, return_inverse, return_counts):
    values, inverse, counts = out
    if not return_inverse and not return_counts:
        return values
    res = (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return res


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` (or distinct slices along ``dim``), sorted; with ``return_inverse``
    also the index of each input element's value in them (input-shaped), with ``return_counts`` how often
    each occurs."""
    if dim is None:
        out = unique2(input, sorted, return_inverse, return_counts)
    else:
        out = unique_dim(input, dim, sorted, return_inverse, return_counts)
    return _pick(out, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``input`` with each run of equal consecutive elements (or slices along ``dim``) collapsed to one; with
    ``return_inverse`` the run index of each element, with ``return_counts`` each run's length."""
    return _pick(unique_consecutive_op(input, return_inverse, return_counts, dim), return_inverse, return_counts)


# -- index_add, index_copy, index_fill ----------------------------------------------------------------
def _index_vector(name, index, exc=IndexError):
    if len(index._shape) > 1:
        if name == "index_fill_":
            raise RuntimeError("Index has to be a vector/scalar")
        raise exc(f"{name}(): Index is supposed to be a vector, but got dim: {len(index._shape)} with type: "
                  f"{_name(index._dtype)} and size: {_shape_str(index._shape)}")


def _check_bounds(name, index, d, size, negatives, exc, prefix=""):
    if not index.numel():
        return
    v = index._check_values()
    lo, hi = int(v.min()), int(v.max())
    low = -size if negatives else 0
    if lo < low or hi >= size:
        bad = lo if lo < low else hi
        raise exc(f"{prefix}index {bad} is out of bounds for dimension {d} with size {size}")


def _slice_shape(self, d, n):
    shape = self._shape or (1,)
    return shape[:d] + (n,) + shape[d + 1:]


def _check_index_add(self, dim, index, source, alpha=1):
    d = _wrap_dim(dim, len(self._shape))
    _index_vector("index_add_", index)
    if index._dtype not in _INDEX:
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {_name(index._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"index_add_(): self ({_name(self._dtype)}) and source ({_name(source._dtype)}) must "
                           f"have the same scalar type")
    _same_device("index_add_", self, index, source)
    n = index.numel()
    sshape = source._shape or (1,)
    src_n = sshape[d] if len(sshape) > d else 1
    if n != src_n:
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to source.size(dim): ({src_n}), "
                           f"for dim: {dim}")
    if source._shape and self._shape and _slice_shape(self, d, n) != source._shape:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {_shape_str(self._shape)} source.shape = {_shape_str(source._shape)}")
    _check_bounds("index_add_", index, d, (self._shape or (1,))[d], False, RuntimeError)


def _along(self, dim, index, source):
    """``(target, indices, values)`` for ``index_put_`` writing ``source`` at ``index`` along ``dim``."""
    target = reshape(self, (1,)) if not self._shape else self
    d = _wrap_dim(dim, len(target._shape))
    idx = reshape(index, (-1,))
    if source is not None and source._shape != _slice_shape(target, d, idx.numel()):
        source = reshape(source, _slice_shape(target, d, idx.numel()))
    return target, [None] * d + [idx], source


def _index_add_(self, dim, index, source, alpha=1):
    target, indices, src = _along(self, dim, index, source)
    if alpha != 1:
        src = src * alpha
        if src._dtype is not self._dtype:
            src = _to_copy(src, dtype=self._dtype)
    index_put_(target, indices, src, True)
    return self


def _check_index_copy(self, dim, index, source):
    d = _wrap_dim(dim, len(self._shape))
    _index_vector("index_copy_", index)
    if index._dtype is not _dt.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_name(index._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_name(self._dtype)} and (source) {_name(source._dtype)}")
    _same_device("index_copy_", self, index, source)
    n = index.numel()
    sshape = source._shape or (1,)
    src_n = sshape[d] if len(sshape) > d else 1
    if n != src_n:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) ({src_n})")
    if source._shape and self._shape:
        if len(self._shape) != len(source._shape):
            raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality "
                               f"must match. Source dimensionality ({len(source._shape)}), destination "
                               f"dimensionality ({len(self._shape)})")
        rest_self = self._shape[:d] + self._shape[d + 1:]
        rest_src = source._shape[:d] + source._shape[d + 1:]
        if rest_self != rest_src:
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                               f"slice shape: {' '.join(map(str, rest_self))} at dimension {d} and source slice "
                               f"shape: {' '.join(map(str, rest_src))} at dimension 0.")
    _check_bounds("index_copy_", index, d, (self._shape or (1,))[d], False, IndexError, "index_copy_(): ")


def _index_copy_(self, dim, index, source):
    target, indices, src = _along(self, dim, index, source)
    index_put_(target, indices, src, False)
    return self


def _check_index_fill_common(self, dim, index):
    d = _wrap_dim(dim, len(self._shape))
    _index_vector("index_fill_", index)
    if index._dtype is not _dt.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    _same_device("index_fill_", self, index)
    _check_bounds("index_fill_", index, d, (self._shape or (1,))[d], True, IndexError)


def _check_index_fill_tensor(self, dim, index, value):
    if value._shape:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{len(value._shape)} dimension(s).")
    _check_index_fill_common(self, dim, index)


def _index_fill_tensor_(self, dim, index, value):
    target, indices, _ = _along(self, dim, index, None)
    v = value if value._dtype is self._dtype else _to_copy(value, dtype=self._dtype)
    index_put_(target, indices, v, False)
    return self


index_add_ = defop("index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) "
                   "-> Tensor(a!)", check=_check_index_add, composite=_index_add_)
index_add = defop("index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
                  check=_check_index_add,
                  composite=lambda self, dim, index, source, alpha=1: _index_add_(clone(self), dim, index, source,
                                                                                  alpha))
index_copy_ = defop("index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)",
                    check=_check_index_copy, composite=_index_copy_)
index_copy = defop("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor",
                   check=_check_index_copy, composite=_out_of_place(index_copy_))
index_fill_tensor_ = defop("index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) "
                           "-> Tensor(a!)", check=_check_index_fill_tensor, composite=_index_fill_tensor_)
index_fill_tensor = defop("index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",
                          check=_check_index_fill_tensor, composite=_out_of_place(index_fill_tensor_))


def _index_fill(t_op, name):
    def fn(input, dim, index, value):
        if not isinstance(value, Tensor):
            # a number is checked against the dtype, then filled as a 0-dim tensor of that dtype
            check_scalar_fits(value, input._dtype)
            value = scalar_as_tensor(value, input._dtype, input._device)
        return t_op(input, dim, index, value)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Set the slices of ``input`` at ``index`` along ``dim`` to ``value`` (a number or a 0-dim "
                  f"tensor){' in place' if name.endswith('_') else ', in a copy'}.")
    return fn


_document(index_add, "A copy of ``self`` with ``alpha * source`` added to the slices at ``index`` along ``dim`` "
                     "(duplicate indices add up).")
_document(index_add_, "In place: ``alpha * source`` added to the slices at ``index`` along ``dim``.")
_document(index_copy, "A copy of ``self`` with the slices at ``index`` along ``dim`` replaced by ``source``'s.")
_document(index_copy_, "In place: the slices at ``index`` along ``dim`` replaced by ``source``'s.")


# -- scatter_reduce, scatter with reduce= --------------------------------------------------------------
_REDUCES = ("sum", "prod", "mean", "amax", "amin")
_REDUCE_ALIASES = {"max": "amax", "min": "amin"}  # PyTorch's scatter_reduce accepts these too


def _check_scatter_reduce(self, dim, index, src, reduce, include_self=True):
    _check_scatter(self, dim, index, src)
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if reduce == "mean" and self._dtype is _dt.bool:
        raise NotImplementedError("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'")


scatter_reduce_ = defop("scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, *, "
                        "bool include_self=True) -> Tensor(a!)", check=_check_scatter_reduce)
scatter_reduce = defop("scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, "
                       "bool include_self=True) -> Tensor", check=_check_scatter_reduce,
                       composite=_out_of_place(scatter_reduce_))
_document(scatter_reduce, "A copy of ``self`` with ``src`` reduced (``sum``, ``prod``, ``mean``, ``amax``, ``amin``) "
                          "into the positions ``index`` gives along ``dim``; ``include_self`` says whether the "
                          "values of ``self`` there take part.")
_document(scatter_reduce_, "In place: ``src`` reduced into the positions ``index`` gives along ``dim``.")


def _scattered(grad, dim, index):
    """Bool mask of the positions of ``grad``'s shape that ``index`` writes along ``dim``."""
    ones = expand(_zeros((), grad) + 1, index._shape)
    return scatter_add_(_zeros(grad._shape, grad), dim, index, ones) > 0


@derivative("scatter_reduce_.two")
def _(grad, self, dim, index, src, reduce, include_self, result, needs_input_grad):
    scattered = _scattered(grad, dim, index)
    self_in = scattered.logical_not() if not include_self else None
    g_self = g_src = None
    if reduce == "sum":
        g_self = grad if include_self else _where(scattered, _zeros((), grad), grad)
        g_src = gather(grad, dim, index)
    elif reduce == "mean":
        ones = expand(_zeros((), grad) + 1, index._shape)
        count = scatter_add_(_zeros(grad._shape, grad) + (1 if include_self else 0), dim, index, ones)
        g = grad / count.clamp(min=1)
        g_self = g if include_self else _where(scattered, _zeros((), grad), grad)
        g_src = gather(g, dim, index)
    elif reduce in ("amax", "amin"):
        # as PyTorch: a value of self equal to the result shares the gradient even where include_self=False
        # leaves it out (it then gets none of it)
        self_tie = self == result
        src_tie = src == gather(result, dim, index)
        count = scatter_add_(self_tie.to(grad._dtype), dim, index, src_tie.to(grad._dtype))
        g = grad / count.clamp(min=1)
        if self_in is not None:
            self_tie = self_tie & self_in
        g_self = _where(self_tie, g, _zeros((), grad))
        g_src = _where(src_tie, gather(g, dim, index), _zeros((), grad))
    else:  # prod: each member's gradient is grad times the product of the other members of its group
        member = self if self_in is None else _where(self_in, self, _zeros((), self) + 1)
        zero_self = (member == 0)
        nz_self = _where(zero_self, _zeros((), self) + 1, member)
        zero_src = src == 0
        nz_src = _where(zero_src, _zeros((), src) + 1, src)
        zeros = scatter_add_(zero_self.to(grad._dtype), dim, index, zero_src.to(grad._dtype))
        nz_prod = scatter_reduce_(nz_self.clone(), dim, index, nz_src, "prod")

        def others(x, is_zero, z, p, r):
            return _where(is_zero, _where(z == 1, p, _zeros((), p)), _where(z == 0, r / _where(is_zero, r, x), _zeros((), r)))
        g_self = grad * others(member, zero_self, zeros, nz_prod, result)
        if self_in is not None:
            g_self = _where(self_in, g_self, _zeros((), grad))
        zi, pi, ri = gather(zeros, dim, index), gather(nz_prod, dim, index), gather(result, dim, index)
        g_src = gather(grad, dim, index) * others(src, zero_src, zi, pi, ri)
    if g_src is not None and g_src._shape != src._shape:
        g_src = _pad_to(g_src, src._shape)
    return (g_self if needs_input_grad[0] else None, None,
            g_src if needs_input_grad[2] else None)


def _pad_to(g, shape):
    """``g`` (the index's shape) padded with zeros to ``shape``: src elements the index does not reach."""
    if len(g._shape) != len(shape):
        g = reshape(g, (1,) * len(shape))
    for d, (n, m) in enumerate(zip(g._shape, shape)):
        if n != m:
            g = cat([g, _zeros(g._shape[:d] + (m - n,) + g._shape[d + 1:], g)], d)
    return g


_REDUCE_WARNED = [False]


def _check_scatter_reduce_arg(reduce):
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")


def _scatter_with_reduce_(self, dim, index, src, reduce):
    if reduce == "add":
        return scatter_add_(self, dim, index, src)
    return scatter_reduce_(self, dim, index, src, "prod")


def _check_scatter_reduce_src(self, dim, index, src, reduce):
    _check_scatter_reduce_arg(reduce)
    _check_scatter(self, dim, index, src)


def _check_scatter_reduce_value(self, dim, index, value, reduce):
    _check_scatter_reduce_arg(reduce)
    _check_scatter(self, dim, index)
    check_scalar_fits(value, self._dtype)


def _value_reduce(src_op):
    """The number form of scatter with reduce=: checked, then the src form with the number expanded."""
    def fn(self, dim, index, value, reduce):
        _check_scatter_reduce_value(self, dim, index, value, reduce)
        return src_op(self, dim, index, expand(scalar_as_tensor(value, self._dtype, self._device), index._shape),
                      reduce=reduce)
    return fn


scatter_reduce_src_ = defop("scatter_.reduce(Tensor(a!) self, int dim, Tensor index, Tensor src, *, str reduce) "
                            "-> Tensor(a!)", check=_check_scatter_reduce_src, composite=_scatter_with_reduce_)
scatter_reduce_src = defop("scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor",
                           check=_check_scatter_reduce_src,
                           composite=lambda self, dim, index, src, reduce: _scatter_with_reduce_(
                               clone(self), dim, index, src, reduce))


def _scatter(inplace, plain):
    src_op = scatter_reduce_src_ if inplace else scatter_reduce_src
    value_op = _value_reduce(src_op)
    name = "scatter_" if inplace else "scatter"

    def fn(input, dim, index, src=None, *, value=None, reduce=None):
        if reduce is None:
            return plain(input, dim, index, src, value=value)
        if src is None and value is None:
            raise TypeError(f"{name}(): expected a src tensor or a value")
        if src is not None and value is not None:
            raise TypeError(f"{name}(): src and value cannot both be given")
        v = src if src is not None else value
        if isinstance(v, Tensor):
            if not _REDUCE_WARNED[0]:
                _REDUCE_WARNED[0] = True
                warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed "
                              "in a future PyTorch release. Use torch.scatter_reduce instead for more reduction "
                              "options.", UserWarning, stacklevel=2)
            return src_op(input, dim, index, v, reduce=reduce)
        return value_op(input, dim, index, v, reduce=reduce)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = plain.__doc__ + (" With ``reduce='add'`` or ``'multiply'`` the values are added to or multiplied "
                                  "into the positions instead (duplicate indices accumulate).")
    return fn


def _scatter_reduce_method(inplace):
    op = scatter_reduce_ if inplace else scatter_reduce

    def fn(input, dim, index, src, reduce, *, include_self=True):
        reduce = _REDUCE_ALIASES.get(reduce, reduce)
        return op(input, dim, index, src, reduce, include_self=include_self)
    fn.__name__ = fn.__qualname__ = op.__name__
    fn.__doc__ = op.__doc__
    return fn


# -- searchsorted, bucketize ---------------------------------------------------------------------------
def _check_searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
    seq = sorted_sequence
    _same_device("searchsorted", seq, self)
    if sorter is not None:
        _same_device("searchsorted", seq, sorter)
        if sorter._dtype is not _dt.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{_name(sorter._dtype)}")
        if sorter._shape != seq._shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {_shape_str(seq._shape)}and got sorter tensor {_shape_str(sorter._shape)}")
    if not seq._shape:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {_shape_str(seq._shape)} and input value tensor "
                           f"{_shape_str(self._shape)}")
    if len(seq._shape) > 1 and seq._shape[:-1] != self._shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {_shape_str(seq._shape)} and input value tensor "
                           f"{_shape_str(self._shape)}")
    if seq._dtype is _dt.bool or self._dtype is _dt.bool:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    if sorter is not None and sorter.numel():
        v = sorter._check_values()
        if v.min() < 0 or v.max() >= seq._shape[-1]:
            raise RuntimeError("torch.searchsorted(): sorter index out of range")


searchsorted_op = defop("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, "
                        "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor", check=_check_searchsorted)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """For each value of ``input``, the index in the innermost dim of ``sorted_sequence`` where it would be
    inserted to keep it sorted (the first such index; the last with ``right=True`` or ``side='right'``).
    ``sorter`` sorts an unsorted sequence; ``out_int32`` gives int32 indices instead of int64."""
    if not isinstance(input, Tensor):
        value = scalar_as_tensor(input, result_type(sorted_sequence, input), sorted_sequence._device)
        return searchsorted_op(sorted_sequence, value, out_int32=out_int32, right=right, side=side, sorter=sorter)
    return searchsorted_op(sorted_sequence, input, out_int32=out_int32, right=right, side=side, sorter=sorter)


def _check_bucketize(self, boundaries, out_int32=False, right=False):
    if len(boundaries._shape) != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({len(boundaries._shape)})")


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value of ``input`` among the sorted 1-D ``boundaries``: i with
    ``boundaries[i-1] < x <= boundaries[i]`` (``<= x <`` with ``right=True``)."""
    if not isinstance(input, Tensor):
        input = scalar_as_tensor(input, result_type(boundaries, input), boundaries._device)
    _check_bucketize(input, boundaries)
    return searchsorted_op(boundaries, input, out_int32=out_int32, right=right)


# -- bincount, histc ------------------------------------------------------------------------------------
def _check_bincount(self, weights=None, minlength=0):
    if self._dtype.category != _dt.INTEGRAL or self._dtype is _dt.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_name(self._dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if len(self._shape) != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None:
        _same_device("bincount", self, weights)
        if len(weights._shape) != 1 or weights._shape[0] != self._shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
    if self.numel() and self._check_values().min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")


bincount = _document(defop("bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor",
                           check=_check_bincount, tags=DYNAMIC_SHAPE),
                     "How often each value 0..max(self) occurs in the 1-D non-negative int ``self`` (at least "
                     "``minlength`` bins); with ``weights``, the sum of the weights per value (float32 weights give "
                     "float32, other weights float64).")


def _check_histc(self, bins=100, min=0, max=0):
    if not self._dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_name(self._dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")


histc = _document(defop("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor", check=_check_histc),
                  "A histogram of ``self`` with ``bins`` equal bins over [min, max] (the data's range when both are "
                  "0); values outside are ignored.")


# -- equal, isin ----------------------------------------------------------------------------------------
def equal(input, other):
    """True when ``input`` and ``other`` have the same shape and equal elements (compared after type
    promotion), else False."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        bad = other if isinstance(input, Tensor) else input
        raise TypeError(f"equal(): argument '{'other' if isinstance(input, Tensor) else 'input'}' must be Tensor, "
                        f"not {type(bad).__name__}")
    _same_device("equal", input, other)
    if input._shape != other._shape:
        return False
    return bool((input == other).all().item())


def _check_isin(elements, test_elements, assume_unique=False, invert=False):
    for t in (elements, test_elements):
        if t._dtype is _dt.bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    _same_device("isin", elements, test_elements)


def _isin(elements, test_elements, assume_unique=False, invert=False):
    dtype = result_type(elements, test_elements)
    e = elements if elements._dtype is dtype else _to_copy(elements, dtype=dtype)
    t = test_elements if test_elements._dtype is dtype else _to_copy(test_elements, dtype=dtype)
    t = reshape(t, (-1,))
    n = t._shape[0]
    if not n:
        found = _zeros(e._shape, e) != 0
    elif n < 10 * max(e.numel(), 1) ** 0.145:
        # few test elements (PyTorch's rule of thumb): compare every pair
        found = (unsqueeze(e, -1) == t).any(-1)
    else:
        # many: look each element up in the sorted test elements (memory linear in the sizes)
        s = t.sort()[0]
        pos = searchsorted_op(s, e).clamp(max=n - 1)
        found = reshape(index_select(s, 0, reshape(pos, (-1,))), e._shape) == e
    return found.logical_not() if invert else found


isin_op = defop("isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, "
                "bool invert=False) -> Tensor", check=_check_isin, composite=_isin)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Bool tensor of ``elements``' shape: whether each element occurs in ``test_elements`` (its negation with
    ``invert``); either may be a number, not both."""
    e_t, t_t = isinstance(elements, Tensor), isinstance(test_elements, Tensor)
    if not e_t and not t_t:
        raise TypeError(f"isin() received an invalid combination of arguments - got ({type(elements).__name__}, "
                        f"{type(test_elements).__name__})")
    if not e_t:
        elements = scalar_as_tensor(elements, result_type(test_elements, elements), test_elements._device)
    if not t_t:
        test_elements = scalar_as_tensor(test_elements, result_type(elements, test_elements), elements._device)
    return isin_op(elements, test_elements, assume_unique=assume_unique, invert=invert)


# -- Tensor methods and tensorplug.* functions -------------------------------------------------------
_plain_scatter, _plain_scatter_ = Tensor.scatter, Tensor.scatter_
_scatter_fn = _scatter(False, _plain_scatter)
attach("scatter", _scatter_fn)
attach("scatter_", _scatter(True, _plain_scatter_))
public("scatter", _scatter_fn)
attach("scatter_reduce", _scatter_reduce_method(False))
attach("scatter_reduce_", _scatter_reduce_method(True))
public("scatter_reduce", Tensor.scatter_reduce)
for _n, _fn in {"nonzero": nonzero, "argwhere": argwhere, "masked_select": masked_select, "unique": unique,
                "unique_consecutive": unique_consecutive, "index_add": index_add, "index_copy": index_copy,
                "index_fill": _index_fill(index_fill_tensor, "index_fill"),
                "bincount": bincount, "histc": histc, "equal": equal}.items():
    attach(_n, _fn)
    public(_n, _fn)
attach("index_add_", index_add_)
attach("index_copy_", index_copy_)
attach("index_fill_", _index_fill(index_fill_tensor_, "index_fill_"))
for _n, _fn in {"searchsorted": searchsorted, "bucketize": bucketize, "isin": isin}.items():
    public(_n, _fn)
