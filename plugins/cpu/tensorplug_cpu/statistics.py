"""CPU kernels of the scans and order statistics: cumprod, cummax/cummin, logcumsumexp, median,
nanmedian, mode and kthvalue (numpy; the core has checked dims, dtypes and k)."""

from __future__ import annotations


import tensorplug
from tensorplug.plugin_api import FLOATING

from .elementwise import quiet
from .kernels import wrap
from .xp import xp

_I64 = tensorplug.int64
_HALF = (tensorplug.float16, tensorplug.bfloat16)


def _axis(self, dim):
    return dim % self._data.ndim if self._data.ndim else 0


def _as_1d(a):
    return a.reshape(1) if a.ndim == 0 else a


def cumprod(self, dim, dtype=None):
    d = dtype or (self._dtype if self._dtype.category == FLOATING else _I64)
    a = _as_1d(self._data)
    c = xp.float32 if d in _HALF else d.np
    r = xp.cumprod(a.astype(c), axis=_axis(self, dim))
    return wrap(r.reshape(self._data.shape).astype(d.np, copy=False), d)


def _cumextreme(accumulate):
    def kernel(self, dim):
        a = _as_1d(self._data)
        ax = _axis(self, dim)
        work = a.astype(xp.float32) if self._dtype is tensorplug.bfloat16 else a
        values = accumulate(work, axis=ax)
        hit = work == values
        if self._dtype.category == FLOATING:
            hit |= xp.isnan(work) & xp.isnan(values)
        shape = [1] * a.ndim
        shape[ax] = a.shape[ax]
        pos = xp.arange(a.shape[ax], dtype=xp.int64).reshape(shape)
        # the index moves to i wherever x_i is (or ties) the running extreme: the latest one wins
        idx = xp.maximum.accumulate(xp.where(hit, pos, 0), axis=ax)
        out_shape = self._data.shape
        return (wrap(values.astype(a.dtype, copy=False).reshape(out_shape), self._dtype),
                wrap(idx.reshape(out_shape), _I64))
    kernel.__name__ = accumulate.__self__.__name__
    return kernel


def logcumsumexp(self, dim):
    d = self._dtype
    a = _as_1d(self._data)
    c = xp.float32 if d in _HALF else a.dtype
    r = xp.logaddexp.accumulate(a.astype(c), axis=_axis(self, dim))
    return wrap(r.reshape(self._data.shape).astype(d.np, copy=False), d)


def _finish(self, dim, keepdim, values, idx):
    """Values and indices of a reduction over ``dim`` computed with the dim kept."""
    if not keepdim or not self._data.ndim:
        values, idx = values.squeeze(_axis(self, dim)), idx.squeeze(_axis(self, dim))
        if not self._data.ndim:
            values, idx = values.reshape(()), idx.reshape(())
    return wrap(xp.array(values, order="C"), self._dtype), wrap(xp.array(idx, order="C"), _I64)


def _sortable(self):
    a = _as_1d(self._data)
    return a.astype(xp.float32) if self._dtype is tensorplug.bfloat16 else a


def _select_sorted(self, dim, keepdim, position):
    """The element at ``position(order, n_valid)`` (per slice, kept dims) of each slice sorted along dim."""
    a = _sortable(self)
    ax = _axis(self, dim)
    order = xp.argsort(a, axis=ax, kind="stable")  # NaN last
    nan = xp.isnan(a) if self._dtype.category == FLOATING else xp.zeros(a.shape, bool)
    k = position(a.shape[ax], xp.sum(~nan, axis=ax, keepdims=True))
    idx = xp.take_along_axis(order, k, axis=ax)
    values = xp.take_along_axis(_as_1d(self._data), idx, axis=ax)
    return _finish(self, dim, keepdim, values, idx)


def median_dim(self, dim, keepdim=False):
    def position(n, valid):
        # a slice with NaN gives its first NaN: the first one in sorted (stable) order
        return xp.where(valid < n, valid, (n - 1) // 2)
    return _select_sorted(self, dim, keepdim, position)


def nanmedian_dim(self, dim, keepdim=False):
    def position(n, valid):
        # an all-NaN slice gives its middle NaN, as PyTorch does
        return xp.where(valid == 0, (n - 1) // 2, (xp.maximum(valid, 1) - 1) // 2)
    return _select_sorted(self, dim, keepdim, position)


def kthvalue(self, k, dim=-1, keepdim=False):
    def position(n, valid):
        return xp.full(valid.shape, k - 1, dtype=xp.int64)
    return _select_sorted(self, dim, keepdim, position)


def median(self):
    return median_dim(_flat(self), 0)[0]


def nanmedian(self):
    return nanmedian_dim(_flat(self), 0)[0]


def _flat(self):
    return wrap(xp.ascontiguousarray(self._data).reshape(-1), self._dtype)


def mode(self, dim=-1, keepdim=False):
    a = _sortable(self)
    ax = _axis(self, dim)
    moved = xp.moveaxis(a, ax, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    n = rows.shape[1]
    values = xp.empty(rows.shape[0], dtype=a.dtype)
    idx = xp.empty(rows.shape[0], dtype=xp.int64)
    for r, row in enumerate(rows):
        srt = xp.sort(row)
        # runs of equal values (each NaN a run of its own); the longest, the first (smallest) on ties
        starts = xp.flatnonzero(xp.concatenate(([True], srt[1:] != srt[:-1])))
        lengths = xp.diff(xp.append(starts, n))
        v = srt[starts[xp.argmax(lengths)]]
        values[r] = v
        same = (row == v) if v == v else xp.isnan(row)
        idx[r] = n - 1 - xp.argmax(same[::-1])
    out_shape = moved.shape[:-1] + (1,)
    values = xp.moveaxis(values.reshape(out_shape), -1, ax)
    idx = xp.moveaxis(idx.reshape(out_shape), -1, ax)
    return _finish(self, dim, keepdim, values.astype(self._data.dtype), idx)


KERNELS = {
    "cumprod": quiet(cumprod),
    "cummax": quiet(_cumextreme(xp.maximum.accumulate)),
    "cummin": quiet(_cumextreme(xp.minimum.accumulate)),
    "logcumsumexp": quiet(logcumsumexp),
    "median": quiet(median), "nanmedian": quiet(nanmedian),
    "median.dim": quiet(median_dim), "nanmedian.dim": quiet(nanmedian_dim),
    "mode": quiet(mode), "kthvalue": quiet(kthvalue),
}
