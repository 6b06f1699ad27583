"""``Tensor.__getitem__`` and ``__setitem__``: parsing an index into views and advanced indices.

Indexing follows PyTorch: ints, slices (positive steps), ``None`` and
``...`` are *basic* indices and give views built from the view ops (select,
slice, unsqueeze), so writes through the result reach the base. Integer and
boolean tensors (or lists, numpy arrays, Python bools) are *advanced*
indices: after the basic ones are applied, the remaining view is gathered
with ``index.Tensor`` (a copy; :mod:`.indexing` defines it), which has numpy's
rules (index tensors broadcast together; if they are not adjacent their dims
go first). Ints are applied as ``select`` first, as PyTorch does, so unlike
numpy an int never counts as an advanced index.

Assignment writes into the basic view with ``fill_``/``copy_`` or, with
advanced indices, ``index_put_`` from :mod:`tensorplug.ops.indexing`.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as _dt
from ..dispatch.argcheck import check_no_internal_overlap
from ..tensor import Tensor
from ._lib import attach
from .factories import tensor
from .indexing import index, index_put_
from .memory import fill_, copy_
from .pointwise import scalar_tensor
from .views import select, slice as slice_op, unsqueeze, squeeze, alias, expand

_MASK_DTYPES = (_dt.bool, _dt.uint8)


# -- parsing an index -----------------------------------------------------------
def _bad_index(obj):
    name = type(obj).__name__ if type(obj).__module__ == "builtins" else \
        f"{type(obj).__module__}.{type(obj).__name__}"
    return IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                      f"valid indices (got {name})")


def _as_index_tensor(obj, device):
    """A list / numpy array / Python bool used as an index, as an int64 or bool tensor."""
    if isinstance(obj, np.ndarray):
        arr = obj
    else:
        try:
            arr = np.asarray(obj)
        except ValueError:
            raise _bad_index(obj) from None
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.dtype.kind == "b":
        return tensor(arr, dtype=_dt.bool, device=device)
    if arr.dtype.kind in "iu":
        return tensor(arr.astype(np.int64, copy=False), device=device)
    raise _bad_index(obj)


def _slice_bounds(s):
    start, stop, step = s.start, s.stop, s.step
    if step is None:
        step = 1
    else:
        step = _int(step)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        if step < 0:
            raise ValueError("step must be greater than zero")
    return (None if start is None else _int(start)), (None if stop is None else _int(stop)), step


def _int(v):
    if v.__class__ is int:
        return v
    try:
        return v.__index__()
    except (AttributeError, TypeError):
        raise TypeError("slice indices must be integers or None or have an __index__ method") from None


def _select(t, dim, i, pos):
    shape = t._shape
    if not shape:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                         "in C++ to convert a 0-dim tensor to a number")
    size = shape[dim]
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for dimension {pos} with size {size}")
    return select(t, dim, i)


def _apply(self, key):
    """Apply the basic part of ``key``; returns (view, advanced) where advanced
    lists ``(dim in view, index tensor)`` in order."""
    if key.__class__ is not tuple:
        key = (key,)
    if any(isinstance(k, (list, tuple, np.ndarray)) for k in key):
        key = tuple(_as_index_tensor(k, self._device) if isinstance(k, (list, tuple, np.ndarray)) else k
                    for k in key)
    consumed = 0
    ellipsis = False
    for k in key:
        if k is None or k.__class__ is bool or k.__class__ is np.bool_:
            continue
        if k is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
        elif isinstance(k, Tensor) and k._dtype in _MASK_DTYPES:
            consumed += len(k._shape)
        else:
            consumed += 1
    ndim = len(self._shape)
    if consumed > ndim:
        if not ndim and len(key) == 1:
            if key[0].__class__ is slice:
                raise IndexError("slice() cannot be applied to a 0-dim tensor.")
            _select(self, 0, 0, 0)
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    out = self
    dim = 0
    adv = []
    for pos, k in enumerate(key):
        cls = k.__class__
        if cls is int:
            out = _select(out, dim, k, pos)
        elif cls is slice:
            start, stop, step = _slice_bounds(k)
            if start is not None or stop is not None or step != 1:
                out = slice_op(out, dim, start, stop, step)
            dim += 1
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif k is Ellipsis:
            dim += ndim - consumed
        elif cls is bool or cls is np.bool_:
            out = unsqueeze(out, dim)
            adv.append((dim, _as_index_tensor([bool(k)], out._device)))
            dim += 1
        elif isinstance(k, Tensor):
            if k._dtype in _MASK_DTYPES and not k._shape:
                out = unsqueeze(out, dim)
                k = unsqueeze(k, 0)
            adv.append((dim, k))
            dim += len(k._shape) if k._dtype in _MASK_DTYPES else 1
        elif isinstance(k, numbers.Integral):
            out = _select(out, dim, int(k), pos)
        else:
            raise _bad_index(k)
    if out is self:
        out = alias(self)
    return out, adv


def _index_list(view, adv):
    """The ``Tensor?[]`` argument of index/index_put_ for advanced indices at view dims."""
    indices = []
    dim = 0
    for d, t in adv:
        while dim < d:
            indices.append(None)
            dim += 1
        indices.append(t)
        dim += len(t._shape) if t._dtype in _MASK_DTYPES else 1
    return indices


def getitem(self, key):
    """``tensor[key]``: a view for basic indices, a copy when any index is a tensor, list or bool."""
    if key.__class__ is int:
        return _select(self, 0, key, 0)
    view, adv = _apply(self, key)
    if not adv:
        return view
    return index(view, _index_list(view, adv))


def _value_tensor(self, value):
    if isinstance(value, Tensor):
        if value._dtype is not self._dtype:
            value = value.to(self._dtype)
        return value
    return scalar_tensor(value, self._dtype, self._device)


def _strip_leading_ones(value):
    """Drop leading size-1 dims of ``value``, as PyTorch does (so ``x[0] = ones(1, n)`` works)."""
    shape = value._shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return squeeze(value, tuple(range(lead))) if lead else value


def setitem(self, key, value):
    """``tensor[key] = value`` with a Python number or a tensor (broadcast, cast to ``self.dtype``)."""
    if not isinstance(value, (Tensor, numbers.Number)):
        raise TypeError(f"can't assign a {type(value).__name__} to a {self._dtype!r} tensor")
    if key.__class__ is int:
        view, adv = _select(self, 0, key, 0), None
    else:
        view, adv = _apply(self, key)
    if not adv:
        if isinstance(value, Tensor):
            value = _strip_leading_ones(value)
            if value._shape != view._shape:
                value = expand(value, view._shape)
            copy_(view, value)
        else:
            # PyTorch copies a number in as a tensor: unlike fill_, that rejects an expanded view
            check_no_internal_overlap(view)
            fill_(view, value)
        return
    value = _value_tensor(self, value)
    value = _strip_leading_ones(value)
    index_put_(view, _index_list(view, adv), value)


attach("__getitem__", getitem)
attach("__setitem__", setitem)

