"""CPU indexing, joining and sorting kernels on numpy.

The core has checked dtypes and shapes; these kernels check what depends on
index values (bounds, bool-mask counts) and raise the core's errors for them.
A zero-dim tensor is handled as the one-element 1-D tensor PyTorch treats it as.
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug.plugin_api import (index_bounds_error, index_select_range_error, check_index_put_shapes,
                                     cat_plan)

from .kernels import wrap
from .xp import xp

_int64 = tensorplug.int64
_bool = tensorplug.bool
_uint8 = tensorplug.uint8
_f32 = np.dtype(xp.float32)
_HALF = ("float16", "bfloat16")  # numpy dtype names: bfloat16's numpy dtype is resolved lazily


def _first_outside(idx, lo, hi):
    """The first element of ``idx`` outside ``[lo, hi)``, or None; one min/max pass when all are in range."""
    if not idx.size or (idx.min() >= lo and idx.max() < hi):
        return None
    flat = idx.ravel()
    return int(flat[(flat < lo) | (flat >= hi)][0])


def _check_dim_index(idx, dim, size):
    bad = _first_outside(idx, 0, size)
    if bad is not None:
        raise index_bounds_error(bad, dim, size)


def _as_1d(a):
    return a.reshape(1) if not a.ndim else a


def index_select(self, dim, index):
    a, idx = self._data, index._data
    size = a.shape[dim] if a.ndim else 1
    bad = _first_outside(idx, 0, size)
    if bad is not None:
        raise index_select_range_error(bad, dim % max(a.ndim, 1), a.ndim, size)
    if not a.ndim:
        return wrap(a.copy(), self._dtype)
    return wrap(xp.take(a, _as_1d(idx), axis=dim), self._dtype)


def _leading(a, shape, dim):
    """``a`` cut to ``shape`` on every dim but ``dim`` (index tensors may be smaller than self)."""
    if a.shape == shape:
        return a
    return a[tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(shape))]


def gather(self, dim, index, sparse_grad=False):
    idx = _as_1d(index._data)
    a = _as_1d(self._data)
    if not idx.size:
        return wrap(xp.empty(index._shape, dtype=a.dtype), self._dtype)
    dim %= a.ndim
    _check_dim_index(idx, dim, a.shape[dim])
    out = xp.take_along_axis(_leading(a, idx.shape, dim), idx, dim)
    return wrap(out.reshape(index._shape), self._dtype)


def _scatter_operands(self, dim, index, src):
    """(target array, index array, dim, the src block the index covers), or None for an empty index."""
    idx = _as_1d(index._data)
    if not idx.size:
        return None
    a = _as_1d(self._data)
    dim %= a.ndim
    _check_dim_index(idx, dim, a.shape[dim])
    return a, idx, dim, _as_1d(src._data)[tuple(slice(0, s) for s in idx.shape)]


def scatter_(self, dim, index, src):
    ops = _scatter_operands(self, dim, index, src)
    if ops is not None:
        a, idx, dim, values = ops
        xp.put_along_axis(_leading(a, idx.shape, dim), idx, values, dim)
    return self


def scatter_add_(self, dim, index, src):
    ops = _scatter_operands(self, dim, index, src)
    if ops is None:
        return self
    a, idx, dim, values = ops
    # full coordinates of every index element: its own position, except ``index`` along ``dim``
    key = tuple(idx if d == dim else xp.arange(s).reshape([-1 if e == d else 1 for e in range(idx.ndim)])
                for d, s in enumerate(idx.shape))
    if a.dtype.name in _HALF:
        # PyTorch sums float16/bfloat16 in float32 ("opmath") and rounds once per element
        acc = a.astype(xp.float32)
        xp.add.at(acc, key, values.astype(xp.float32))
        a[...] = acc
    else:
        xp.add.at(a, key, values)
    return self


def index_put_(self, indices, values, accumulate=False):
    a = self._data
    key, entries, masks, d = [], [], False, 0
    for ix in indices:
        if ix is None:
            key.append(slice(None))
            entries.append(None)
            d += 1
        elif ix._dtype is _bool or ix._dtype is _uint8:
            m = ix._data if ix._dtype is _bool else ix._data.astype(bool)
            key.append(m)
            count = (int(xp.count_nonzero(m)),)
            entries.extend([(count, 1)] * m.ndim if m.ndim else [(count, 0)])
            masks = True
            d += m.ndim
        else:
            idx = ix._data
            size = a.shape[d]
            bad = _first_outside(idx, -size, size)
            if bad is not None:
                raise index_bounds_error(bad, d, size, IndexError)
            key.append(idx)
            entries.append((idx.shape, 1))
            d += 1
    if masks:
        check_index_put_shapes(a.shape, entries, values._shape)
    key = tuple(key)
    if not accumulate:
        a[key] = values._data
    elif not (len(key) == 1 and entries[0] is not None and not masks and _add_rows(a, key[0], values._data)):
        xp.add.at(a, key, values._data)
    return self


def _add_rows(a, idx, values):
    """``a[idx] += values`` with repeated rows summed (embedding's backward), by sorting: the rows of each
    index are summed in their order by one ``reduceat``, then added once. ``add.at`` costs per element, about
    4x as much for rows of 64. Returns False, doing nothing, where ``add.at`` is as good or needed: short
    rows, half types (which accumulate in float32 elsewhere), values that broadcast, or another array module."""
    row = a.size // a.shape[0] if a.ndim > 1 and a.shape[0] else 0
    if xp is not np or row < 8 or a.dtype.kind not in "fiuc" or a.dtype.name in _HALF or not idx.size \
            or values.shape != idx.shape + a.shape[1:]:
        return False
    flat = idx.reshape(-1)
    if flat.min() < 0:
        flat = xp.where(flat < 0, flat + a.shape[0], flat)  # one row, one group
    order = xp.argsort(flat, kind="stable")
    rows = flat[order]
    starts = xp.flatnonzero(xp.concatenate(([True], rows[1:] != rows[:-1])))
    a[rows[starts]] += xp.add.reduceat(values.reshape((-1,) + a.shape[1:])[order], starts, axis=0)
    return True


def masked_fill_(self, mask, value):
    xp.copyto(self._data, value._data, casting="unsafe", where=mask._data)
    return self


def cat(tensors, dim=0):
    kept, dim, dtype = cat_plan(tensors, dim)
    if not kept:
        return wrap(xp.empty((0,), dtype=dtype.np), dtype)
    return wrap(xp.concatenate([t._data for t in kept], axis=dim, dtype=dtype.np, casting="unsafe"), dtype)


def sort(self, stable=None, dim=-1, descending=False):
    a = self._data
    if not a.ndim:
        return wrap(a.copy(), self._dtype), wrap(xp.zeros((), dtype=xp.int64), _int64)
    # ml_dtypes' bfloat16 sort does not order NaN; float32 holds every bfloat16 exactly
    keys = a.astype(_f32) if self._dtype is tensorplug.bfloat16 else a
    if descending:
        # a stable ascending sort of the reversed input, read backwards, is a stable descending
        # sort that puts NaN first, as PyTorch does
        rev = xp.argsort(xp.flip(keys, dim), axis=dim, kind="stable")
        idx = (a.shape[dim] - 1) - xp.flip(rev, dim)
    else:
        idx = xp.argsort(keys, axis=dim, kind="stable")
    idx = idx.astype(xp.int64, copy=False)
    return wrap(xp.take_along_axis(a, idx, dim), self._dtype), wrap(idx, _int64)


KERNELS = {
    "index_select": index_select, "gather": gather, "scatter_.src": scatter_, "scatter_add_": scatter_add_,
    "index_put_": index_put_, "masked_fill_.Tensor": masked_fill_, "cat": cat, "sort.stable": sort,
}
