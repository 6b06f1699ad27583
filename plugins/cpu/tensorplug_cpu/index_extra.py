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

_int64 = tensorplug.int64
_int32 = tensorplug.int32
_f32 = np.dtype(np.float32)
_HALF = ("float16", "bfloat16")


def _keys(a):
    """``a`` as numpy can sort and compare it (bfloat16 through float32, which holds it exactly)."""
    return a.astype(_f32) if a.dtype.name == "bfloat16" else a


def nonzero(self):
    a = self._data
    r = np.argwhere(a)
    return wrap(np.ascontiguousarray(r, dtype=np.int64).reshape(r.shape[0], a.ndim), _int64)


def masked_select(self, mask):
    a, m = np.broadcast_arrays(self._data, mask._data)
    return wrap(np.ascontiguousarray(a[m]), self._dtype)


def _empty_long():
    return wrap(np.empty((0,), dtype=np.int64), _int64)


def _unique_flat(a, return_inverse, return_counts):
    flat = a.reshape(-1)
    keys = _keys(flat)
    order = np.argsort(keys, kind="stable")
    s = keys[order]
    if s.size:
        # NaNs are each distinct, as in PyTorch's sort-based unique
        new = np.empty(s.size, dtype=bool)
        new[0] = True
        new[1:] = (s[1:] != s[:-1])
        if s.dtype.kind == "f":
            new[1:] |= np.isnan(s[1:])
    else:
        new = np.zeros(0, dtype=bool)
    starts = np.flatnonzero(new)
    values = flat[order][starts]
    inverse = counts = None
    if return_inverse:
        group = np.cumsum(new) - 1
        inverse = np.empty(flat.size, dtype=np.int64)
        inverse[order] = group
        inverse = inverse.reshape(a.shape)
    if return_counts:
        counts = np.diff(np.append(starts, s.size)).astype(np.int64)
    return values, inverse, counts


def _unique_result(values, dtype, inverse, counts):
    return (wrap(np.ascontiguousarray(values), dtype),
            wrap(inverse, _int64) if inverse is not None else _empty_long(),
            wrap(counts, _int64) if counts is not None else _empty_long())


def unique2(self, sorted=True, return_inverse=False, return_counts=False):
    values, inverse, counts = _unique_flat(self._data, return_inverse, return_counts)
    return _unique_result(values, self._dtype, inverse, counts)


def _slices(a, dim):
    """``a`` with ``dim`` first and the rest flattened: one row per slice."""
    moved = np.moveaxis(a, dim, 0)
    return moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:], dtype=np.int64))), moved.shape


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
        values = np.moveaxis(np.moveaxis(a, dim, 0)[:keep], 0, dim) if n and not rows.shape[1] else \
            np.moveaxis(np.empty((0,) + mshape[1:], dtype=a.dtype), 0, dim)
        inv = np.zeros(n, dtype=np.int64)
        cnt = np.array([n] if keep else [], dtype=np.int64)
        return _unique_result(values, self._dtype, inv if return_inverse else None, cnt if return_counts else None)
    order = np.lexsort(keys.T[::-1]) if keys.shape[1] and n else np.arange(n)
    s = keys[order]
    new = np.ones(n, dtype=bool)
    if n > 1:
        new[1:] = np.any(s[1:] != s[:-1], axis=1) if s.shape[1] else False
    starts = np.flatnonzero(new)
    values = np.moveaxis(rows[order][starts].reshape((len(starts),) + mshape[1:]), 0, dim)
    group = np.cumsum(new) - 1
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group
    counts = np.diff(np.append(starts, n)).astype(np.int64)
    return _unique_result(values, self._dtype, inverse if return_inverse else None,
                          counts if return_counts else None)


def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    a = self._data
    if dim is None or not a.ndim:
        flat = a.reshape(-1)
        keys = _keys(flat)
        new = np.ones(flat.size, dtype=bool)
        if flat.size > 1:
            new[1:] = keys[1:] != keys[:-1]
        starts = np.flatnonzero(new)
        values = flat[starts]
        shape = a.shape
    else:
        dim %= a.ndim
        rows, mshape = _slices(a, dim)
        keys = _keys(rows)
        n = rows.shape[0]
        new = np.ones(n, dtype=bool)
        if n > 1 and rows.shape[1]:
            new[1:] = np.any(keys[1:] != keys[:-1], axis=1)
        elif n > 1:
            new[1:] = False
        starts = np.flatnonzero(new)
        values = np.moveaxis(rows[starts].reshape((len(starts),) + mshape[1:]), 0, dim)
        shape = (n,)
    inverse = (np.cumsum(new) - 1).astype(np.int64).reshape(shape) if return_inverse else None
    counts = np.diff(np.append(starts, new.size)).astype(np.int64) if return_counts else None
    return _unique_result(values, self._dtype, inverse, counts)


def repeat_interleave_index(repeats, output_size=None):
    r = repeats._data.astype(np.int64)
    if r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")
    total = int(r.sum())
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    return wrap(np.repeat(np.arange(r.size, dtype=repeats._data.dtype), r), repeats._dtype)


_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}
_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _extreme_identity(dtype, reduce):
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
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
    key = tuple(idx if d == dim else np.arange(n).reshape([-1 if e == d else 1 for e in range(idx.ndim)])
                for d, n in enumerate(idx.shape))
    half = a.dtype.name in _HALF
    acc = a.astype(np.float32) if half else a.copy()
    vals = values.astype(np.float32) if half else values
    if reduce == "sum" and acc.dtype.kind == "b":
        acc = acc.astype(np.int64)
        vals = vals.astype(np.int64)
    if not include_self:
        ident = _IDENTITY.get(reduce)
        if ident is None:
            ident = _extreme_identity(acc.dtype, reduce)
        acc[key] = ident
    _UFUNC[reduce].at(acc, key, vals)
    if reduce == "mean":
        count = np.full(acc.shape, 1 if include_self else 0, dtype=np.int64)
        np.add.at(count, key, 1)
        count = np.maximum(count, 1)
        if acc.dtype.kind == "f":
            acc = acc / count.astype(acc.dtype)
        else:
            acc = np.floor_divide(acc, count).astype(acc.dtype)
    a[...] = acc.astype(a.dtype) if acc.dtype != a.dtype else acc
    return self


def searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    seq, v = sorted_sequence._data, self._data
    side = side or ("right" if right else "left")
    common = np.result_type(_keys(seq).dtype, _keys(v).dtype)
    seq = seq.astype(common)
    v = v.astype(common)
    out_dtype = np.int32 if out_int32 else np.int64
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter._data, -1)
    if seq.ndim == 1:
        out = np.searchsorted(seq, v, side=side)
    else:
        rows = seq.reshape(-1, seq.shape[-1])
        vals = v.reshape(rows.shape[0], -1)
        out = np.stack([np.searchsorted(r, x, side=side) for r, x in zip(rows, vals)]).reshape(v.shape) \
            if rows.shape[0] else np.zeros(v.shape, dtype=np.int64)
    return wrap(np.asarray(out, dtype=out_dtype).reshape(v.shape), _int32 if out_int32 else _int64)


def bincount(self, weights=None, minlength=0):
    a = self._data.astype(np.int64)
    if weights is None:
        return wrap(np.bincount(a, minlength=minlength).astype(np.int64), _int64)
    w = weights._data
    dtype = tensorplug.float32 if weights._dtype is tensorplug.float32 else tensorplug.float64
    out = np.bincount(a, weights=w.astype(np.float64), minlength=minlength)
    return wrap(out.astype(dtype.np), dtype)


def histc(self, bins=100, min=0, max=0):
    a = self._data
    work = a.astype(np.float32) if a.dtype.name in _HALF else a
    lo, hi = float(min), float(max)
    if lo == hi and work.size:
        lo, hi = float(work.min()), float(work.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    x = work.reshape(-1)
    x = x[(x >= lo) & (x <= hi)]
    lo_t, hi_t = work.dtype.type(lo), work.dtype.type(hi)
    pos = ((x - lo_t) * work.dtype.type(bins) / (hi_t - lo_t)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    out = np.bincount(pos, minlength=bins).astype(a.dtype)
    return wrap(out, self._dtype)


KERNELS = {
    "nonzero": nonzero, "masked_select": masked_select, "_unique2": unique2, "unique_dim": unique_dim,
    "unique_consecutive": unique_consecutive, "repeat_interleave.Tensor": repeat_interleave_index,
    "scatter_reduce_.two": scatter_reduce_, "searchsorted.Tensor": searchsorted, "bincount": bincount,
    "histc": histc,
}
