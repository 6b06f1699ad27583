"""CPU kernels of the selection, set-like, scatter-reduction and search primitives on numpy.

The core has checked shapes, dtypes and the index values its checks read;
these kernels compute. float16 and bfloat16 reduce in float32 and round once,
as PyTorch's CPU kernels do; bfloat16 sorts through float32 (ml_dtypes' own
sort does not order NaN).
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug.plugin_api import index_bounds_error

from .kernels import wrap
from .xp import xp

_int64 = tensorplug.int64
_int32 = tensorplug.int32
_f32 = np.dtype(xp.float32)
_HALF = ("float16", "bfloat16")


def _keys(a):
    """``a`` as numpy can sort and compare it (bfloat16 through float32, which holds it exactly)."""
    return a.astype(_f32) if a.dtype.name == "bfloat16" else a


def nonzero(self):
    a = self._data
    r = xp.argwhere(a)
    return wrap(xp.ascontiguousarray(r, dtype=xp.int64).reshape(r.shape[0], a.ndim), _int64)


def masked_select(self, mask):
    a, m = xp.broadcast_arrays(self._data, mask._data)
    return wrap(xp.ascontiguousarray(a[m]), self._dtype)


def _empty_long():
    return wrap(xp.empty((0,), dtype=xp.int64), _int64)


def _unique_flat(a, return_inverse, return_counts):
    flat = a.reshape(-1)
    keys = _keys(flat)
    order = xp.argsort(keys, kind="stable")
    s = keys[order]
    if s.size:
        # NaNs are each distinct, as in PyTorch's sort-based unique
        new = xp.empty(s.size, dtype=bool)
        new[0] = True
        new[1:] = (s[1:] != s[:-1])
        if s.dtype.kind == "f":
            new[1:] |= xp.isnan(s[1:])
    else:
        new = xp.zeros(0, dtype=bool)
    starts = xp.flatnonzero(new)
    values = flat[order][starts]
    inverse = counts = None
    if return_inverse:
        group = xp.cumsum(new) - 1
        inverse = xp.empty(flat.size, dtype=xp.int64)
        inverse[order] = group
        inverse = inverse.reshape(a.shape)
    if return_counts:
        counts = xp.diff(xp.append(starts, s.size)).astype(xp.int64)
    return values, inverse, counts


def _unique_result(values, dtype, inverse, counts):
    return (wrap(xp.ascontiguousarray(values), dtype),
            wrap(inverse, _int64) if inverse is not None else _empty_long(),
            wrap(counts, _int64) if counts is not None else _empty_long())


def unique2(self, sorted=True, return_inverse=False, return_counts=False):
    values, inverse, counts = _unique_flat(self._data, return_inverse, return_counts)
    return _unique_result(values, self._dtype, inverse, counts)


def _slices(a, dim):
    """``a`` with ``dim`` first and the rest flattened: one row per slice."""
    moved = xp.moveaxis(a, dim, 0)
    return moved.reshape(moved.shape[0], int(xp.prod(moved.shape[1:], dtype=xp.int64))), moved.shape


def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    a = self._data
    dim %= max(a.ndim, 1)
    if not a.ndim:
        return unique2(self, sorted, return_inverse, return_counts)
    rows, mshape = _slices(a, dim)
    n = rows.shape[0]
    keys = _keys(rows)
    if not rows.size:  # no elements: the slices are all equal (n of them) or there are none
        keep = min(n, 1) if rows.shape[1] == 0 else 0
        values = xp.moveaxis(xp.moveaxis(a, dim, 0)[:keep], 0, dim) if n and not rows.shape[1] else \
            xp.moveaxis(xp.empty((0,) + mshape[1:], dtype=a.dtype), 0, dim)
        inv = xp.zeros(n, dtype=xp.int64)
        cnt = xp.array([n] if keep else [], dtype=xp.int64)
        return _unique_result(values, self._dtype, inv if return_inverse else None, cnt if return_counts else None)
    order = xp.lexsort(keys.T[::-1]) if keys.shape[1] and n else xp.arange(n)
    s = keys[order]
    new = xp.ones(n, dtype=bool)
    if n > 1:
        new[1:] = xp.any(s[1:] != s[:-1], axis=1) if s.shape[1] else False
    starts = xp.flatnonzero(new)
    values = xp.moveaxis(rows[order][starts].reshape((len(starts),) + mshape[1:]), 0, dim)
    group = xp.cumsum(new) - 1
    inverse = xp.empty(n, dtype=xp.int64)
    inverse[order] = group
    counts = xp.diff(xp.append(starts, n)).astype(xp.int64)
    return _unique_result(values, self._dtype, inverse if return_inverse else None,
                          counts if return_counts else None)


def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    a = self._data
    if dim is None or not a.ndim:
        flat = a.reshape(-1)
        keys = _keys(flat)
        new = xp.ones(flat.size, dtype=bool)
        if flat.size > 1:
            new[1:] = keys[1:] != keys[:-1]
        starts = xp.flatnonzero(new)
        values = flat[starts]
        shape = a.shape
    else:
        dim %= a.ndim
        rows, mshape = _slices(a, dim)
        keys = _keys(rows)
        n = rows.shape[0]
        new = xp.ones(n, dtype=bool)
        if n > 1 and rows.shape[1]:
            new[1:] = xp.any(keys[1:] != keys[:-1], axis=1)
        elif n > 1:
            new[1:] = False
        starts = xp.flatnonzero(new)
        values = xp.moveaxis(rows[starts].reshape((len(starts),) + mshape[1:]), 0, dim)
        shape = (n,)
    inverse = (xp.cumsum(new) - 1).astype(xp.int64).reshape(shape) if return_inverse else None
    counts = xp.diff(xp.append(starts, new.size)).astype(xp.int64) if return_counts else None
    return _unique_result(values, self._dtype, inverse, counts)


def repeat_interleave_index(repeats, output_size=None):
    r = repeats._data.astype(xp.int64)
    if r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")
    total = int(r.sum())
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    return wrap(xp.repeat(xp.arange(r.size, dtype=repeats._data.dtype), r), repeats._dtype)


_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}
_UFUNC = {"sum": xp.add, "mean": xp.add, "prod": xp.multiply, "amax": xp.maximum, "amin": xp.minimum}


def _extreme_identity(dtype, reduce):
    if dtype.kind == "f":
        return -xp.inf if reduce == "amax" else xp.inf
    if dtype.kind == "b":
        return reduce != "amax"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def scatter_reduce_(self, dim, index, src, reduce, include_self=True):
    idx = index._data.reshape(1) if not index._data.ndim else index._data
    if not idx.size:
        return self
    a = self._data.reshape(1) if not self._data.ndim else self._data
    dim %= a.ndim
    size = a.shape[dim]
    if idx.min() < 0 or idx.max() >= size:
        flat = idx.ravel()
        raise index_bounds_error(int(flat[(flat < 0) | (flat >= size)][0]), dim, size)
    s = src._data.reshape(1) if not src._data.ndim else src._data
    values = s[tuple(slice(0, n) for n in idx.shape)]
    key = tuple(idx if d == dim else xp.arange(n).reshape([-1 if e == d else 1 for e in range(idx.ndim)])
                for d, n in enumerate(idx.shape))
    half = a.dtype.name in _HALF
    acc = a.astype(xp.float32) if half else a.copy()
    vals = values.astype(xp.float32) if half else values
    if reduce == "sum" and acc.dtype.kind == "b":
        acc = acc.astype(xp.int64)
        vals = vals.astype(xp.int64)
    if not include_self:
        ident = _IDENTITY.get(reduce)
        if ident is None:
            ident = _extreme_identity(acc.dtype, reduce)
        acc[key] = ident
    _UFUNC[reduce].at(acc, key, vals)
    if reduce == "mean":
        count = xp.full(acc.shape, 1 if include_self else 0, dtype=xp.int64)
        xp.add.at(count, key, 1)
        count = xp.maximum(count, 1)
        if acc.dtype.kind == "f":
            acc = acc / count.astype(acc.dtype)
        else:
            acc = xp.floor_divide(acc, count).astype(acc.dtype)
    a[...] = acc.astype(a.dtype) if acc.dtype != a.dtype else acc
    return self


def searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    seq, v = sorted_sequence._data, self._data
    side = side or ("right" if right else "left")
    common = xp.result_type(_keys(seq).dtype, _keys(v).dtype)
    seq = seq.astype(common)
    v = v.astype(common)
    out_dtype = xp.int32 if out_int32 else xp.int64
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter._data, -1)
    if seq.ndim == 1:
        out = xp.searchsorted(seq, v, side=side)
    else:
        rows = seq.reshape(-1, seq.shape[-1])
        vals = v.reshape(rows.shape[0], -1)
        out = xp.stack([xp.searchsorted(r, x, side=side) for r, x in zip(rows, vals)]).reshape(v.shape) \
            if rows.shape[0] else xp.zeros(v.shape, dtype=xp.int64)
    return wrap(xp.asarray(out, dtype=out_dtype).reshape(v.shape), _int32 if out_int32 else _int64)


def bincount(self, weights=None, minlength=0):
    a = self._data.astype(xp.int64)
    if weights is None:
        return wrap(xp.bincount(a, minlength=minlength).astype(xp.int64), _int64)
    w = weights._data
    dtype = tensorplug.float32 if weights._dtype is tensorplug.float32 else tensorplug.float64
    out = xp.bincount(a, weights=w.astype(xp.float64), minlength=minlength)
    return wrap(out.astype(dtype.np), dtype)


def histc(self, bins=100, min=0, max=0):
    a = self._data
    work = a.astype(xp.float32) if a.dtype.name in _HALF else a
    lo, hi = float(min), float(max)
    if lo == hi and work.size:
        lo, hi = float(work.min()), float(work.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (xp.isfinite(lo) and xp.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    x = work.reshape(-1)
    x = x[(x >= lo) & (x <= hi)]
    lo_t, hi_t = work.dtype.type(lo), work.dtype.type(hi)
    pos = ((x - lo_t) * work.dtype.type(bins) / (hi_t - lo_t)).astype(xp.int64)
    pos = xp.minimum(pos, bins - 1)
    out = xp.bincount(pos, minlength=bins).astype(a.dtype)
    return wrap(out, self._dtype)


KERNELS = {
    "nonzero": nonzero, "masked_select": masked_select, "_unique2": unique2, "unique_dim": unique_dim,
    "unique_consecutive": unique_consecutive, "repeat_interleave.Tensor": repeat_interleave_index,
    "scatter_reduce_.two": scatter_reduce_, "searchsorted.Tensor": searchsorted, "bincount": bincount,
    "histc": histc,
}
