"""``Tensor.__getitem__`` and ``__setitem__``: parsing an index into views and advanced indices.

Indexing follows PyTorch: ints (anything with ``__index__``, and 0-dim
integer tensors and numpy arrays), slices (positive steps), ``None`` and
``...`` are *basic* indices and give views built from the view ops (select,
slice, unsqueeze), so writes through the result reach the base. Integer and
boolean tensors, Python bools and sequences (lists, tuples, ranges, numpy
arrays: they become int64 index tensors, or masks when their values are
bools) are *advanced* indices: after the basic ones are applied, the
remaining view is gathered with ``index.Tensor`` (a copy), which has numpy's
rules (index tensors broadcast together; if they are not adjacent their dims
go first). Ints are applied as ``select`` first, as PyTorch does, so unlike
numpy an int never counts as an advanced index. A short non-tuple sequence
holding a sequence, tensor, slice, ``None`` or ``...`` is read as a tuple of
indices (with PyTorch's deprecation warning).

Assignment writes into the basic view with ``fill_``/``copy_`` or, with
advanced indices, ``index_put_`` from :mod:`tensorplug.ops.indexing`.
"""

from __future__ import annotations

import numbers
import operator
import warnings
from collections.abc import Mapping

import numpy as np

from .. import dtypes as _dt
from ..dispatch.argcheck import check_no_internal_overlap
from ..tensor import Tensor
from ._lib import attach
from .factories import tensor, _to_array
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


def _is_sequence(obj):
    """Whether ``obj`` is a sequence for indexing (PyTorch's ``PySequence_Check``): a list, tuple, range, numpy
    array, string, or any object with ``__len__`` and ``__getitem__`` that is not a mapping or a tensor."""
    if isinstance(obj, _SEQUENCES):
        return True
    if isinstance(obj, (Tensor, Mapping, np.generic)):
        return False
    cls = type(obj)
    return hasattr(cls, "__getitem__") and hasattr(cls, "__len__")


_SEQUENCES = (list, tuple, range, np.ndarray, str, bytes)
_MAX_TUPLE_LIKE = 32  # PyTorch (after numpy) only reads sequences shorter than this as tuples


def _reads_as_tuple(key):
    """Whether a non-tuple sequence ``key`` stands for a tuple of indices, as in PyTorch: ``x[[0, [1, 2]]]`` is
    ``x[0, [1, 2]]`` (with a deprecation warning) but ``x[[0, 1]]`` is one index."""
    if isinstance(key, (Tensor, np.ndarray)) or not _is_sequence(key):
        return False
    try:
        items = list(key) if len(key) < _MAX_TUPLE_LIKE else ()
    except Exception:  # noqa: BLE001 - like PyTorch, a sequence that cannot be read is one index
        return False
    for k in items:
        if k.__class__ is int:
            continue
        if k is None or k is Ellipsis or k.__class__ is slice or isinstance(k, Tensor) or _is_sequence(k):
            warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
                          "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
                          "be interpreted as tensor index, x[tensorplug.tensor(seq)], which will result either in "
                          "an error or a different result", UserWarning, stacklevel=4)
            return True
    return False


def _as_index_tensor(obj, device):
    """A sequence (list, tuple, range, numpy array...) or Python bool used as an index, as a tensor.

    PyTorch's rule: bool values give a mask (uint8 ones, from numpy, a deprecated mask), any other
    values an int64 index tensor (floats truncate toward zero).
    """
    if isinstance(obj, range):
        arr = np.arange(obj.start, obj.stop, obj.step, dtype=np.int64)
    elif isinstance(obj, np.ndarray):
        arr = obj
    else:
        arr = _to_array(obj)  # PyTorch's errors for ragged lists, strings, None, out-of-range ints
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.dtype.kind == "b":
        return tensor(arr, dtype=_dt.bool, device=device)
    if arr.dtype == np.uint8:
        return tensor(arr, dtype=_dt.uint8, device=device)
    if arr.dtype.kind in "iuf":
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
        key = tuple(key) if isinstance(key, tuple) or _reads_as_tuple(key) else (key,)
    if any(k.__class__ is not int and k.__class__ is not slice and _is_sequence(k) for k in key):
        key = tuple(_as_index_tensor(k, self._device) if k.__class__ is not slice and _is_sequence(k) else k
                    for k in key)
    consumed = 0
    ellipsis = False
    for k in key:
        if k is None or k.__class__ is bool:
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
            if not isinstance(key[0], Tensor):
                _select(self, 0, 0, 0)  # an int: PyTorch's message for 0-dim tensors
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
        elif cls is bool:
            out = unsqueeze(out, dim)
            adv.append((dim, _as_index_tensor([k], out._device)))
            dim += 1
        elif isinstance(k, Tensor):
            if not k._shape and cls is Tensor and k._dtype not in _MASK_DTYPES and not k._dtype.is_floating_point:
                # a 0-dim integer tensor is an int, as in PyTorch: a select (a view), not a gather
                out = _select(out, dim, int(k.item()), pos)
                continue
            if k._dtype in _MASK_DTYPES and not k._shape:
                out = unsqueeze(out, dim)
                k = unsqueeze(k, 0)
            adv.append((dim, k))
            dim += len(k._shape) if k._dtype in _MASK_DTYPES else 1
        elif isinstance(k, numbers.Integral):
            out = _select(out, dim, int(k), pos)
        else:
            try:
                i = operator.index(k)  # any object with __index__ is an int (numpy's bool is not)
            except TypeError:
                raise _bad_index(k) from None
            out = _select(out, dim, i, pos)
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

