"""CPU kernels of ``core/tensorplug/ops/special_more.py``: the orthogonal polynomials of
``tensorplug.special``, ``frexp``, ``nextafter``, the bit shifts and the histograms.

The polynomials compute in the op's own float type, step by step as PyTorch's kernels do (the
degree ``n`` truncated to an integer; a degree that is negative, NaN or infinite gives 0): the
three-term recurrence for small degrees, the trigonometric closed forms of the Chebyshev
polynomials inside (-1, 1) for large ones. Elements of different degrees advance together,
each one leaving the loop at its own degree.
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug.plugin_api import binary_dtype, float_dtype

from .elementwise import quiet, _inplace
from .kernels import wrap, cast

_I64_MIN = np.iinfo(np.int64).min


# -- the polynomials ------------------------------------------------------------------------------
def _degree(n):
    """``n`` truncated to int64 as C++'s cast does on x86: NaN, inf and out-of-range values give INT64_MIN."""
    n = np.asarray(n)
    if n.dtype.kind in "iub":
        return n.astype(np.int64)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(n) & (np.abs(n) < 9.2e18)
        return np.where(ok, np.trunc(np.where(ok, n, 0)), 0).astype(np.int64) + np.where(ok, 0, _I64_MIN)


def _recurrence(x, n, out, todo, first, step):
    """Fill ``out[todo]`` from ``p_0 = 1``, ``p_1 = first(x)`` and ``p_{k} = step(k, x, p_{k-1}, p_{k-2})``
    for the k from 2 to each element's own degree ``n`` (all >= 2 here)."""
    idx = np.nonzero(todo)[0]
    if not idx.size:
        return
    xs, ns = x[idx], n[idx]
    one = x.dtype.type(1)
    p = np.full(xs.shape, one)
    q = first(xs)
    k = 2
    while idx.size:
        r = step(k, xs, q, p).astype(x.dtype, copy=False)
        p, q = q, r
        done = ns == k
        if done.any():
            out[idx[done]] = r[done]
            keep = ~done
            idx, xs, ns, p, q = idx[keep], xs[keep], ns[keep], p[keep], q[keep]
        if idx.size and np.isnan(q).all() and np.isnan(p).all():
            out[idx] = q  # NaN stays NaN: no need to count the rest of the way
            break
        k += 1


def _odd(n):
    return (n % 2) != 0


def _finish(x, n, out, todo, first, step):
    """The common tail: degree 0 is 1, degree 1 is ``first(x)``, higher degrees by the recurrence."""
    one = x.dtype.type(1)
    out[todo & (n == 0)] = one
    m1 = todo & (n == 1)
    out[m1] = first(x[m1])
    _recurrence(x, n, out, todo & (n >= 2), first, step)


def fms(a, b, c):
    """``a * b - c`` rounded once, as a fused multiply-add: PyTorch's CPU kernels are compiled with FMA
    contraction, and its recurrences round this way (for float32 exactly: the product is exact in float64)."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b.astype(np.float64) - np.asarray(c, np.float32).astype(np.float64)).astype(
            np.float32)
    return a * b - c


def _libm(fn):
    """numpy's ``fn`` as C's float function: in float64, rounded once (glibc's float32 functions are
    correctly rounded; numpy's own float32 loops may be an ulp or more off)."""
    def call(v):
        v = np.asarray(v)
        if v.dtype == np.float32:
            return fn(v.astype(np.float64)).astype(np.float32)
        return fn(v)
    return call


_acos, _cos, _sin = _libm(np.arccos), _libm(np.cos), _libm(np.sin)


def _cheb_step(k, x, q, p):
    return fms(x + x, q, p)


def chebyshev_t(x, n):
    out = np.zeros(x.shape, x.dtype)
    ax = np.abs(x)
    todo = n >= 0
    edge = todo & (ax == 1)
    out[edge] = np.where((x[edge] > 0) | ~_odd(n[edge]), 1, -1)
    todo &= ~edge
    trig = todo & (n > 6) & (ax < 1)
    out[trig] = _cos(n[trig].astype(x.dtype) * _acos(x[trig]))
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: v, _cheb_step)
    return out


def chebyshev_u(x, n):
    out = np.zeros(x.shape, x.dtype)
    ax = np.abs(x)
    todo = n >= 0
    edge = todo & (ax == 1)
    np1 = (n + 1).astype(x.dtype)
    out[edge] = np.where((x[edge] > 0) | ~_odd(n[edge]), np1[edge], -np1[edge])
    todo &= ~edge
    trig = todo & (n > 8) & (ax < 1)
    a = _acos(x[trig])
    s = _sin(a)
    k = np1[trig]
    out[trig] = np.where(s != 0, _sin(k * a) / s, k * _cos(k * a) / x[trig])
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: v + v, _cheb_step)
    return out


def chebyshev_v(x, n):
    out = np.zeros(x.shape, x.dtype)
    ax = np.abs(x)
    todo = n >= 0
    edge = todo & (ax == 1)
    t2 = (n + n + 1).astype(x.dtype)
    out[edge] = np.where(x[edge] > 0, 1, np.where(_odd(n[edge]), -t2[edge], t2[edge]))
    todo &= ~edge
    trig = todo & (n > 8) & (ax < 1)
    a = _acos(x[trig])
    half = x.dtype.type(0.5)
    alt = np.where(_odd(n[trig]), -t2[trig], t2[trig])
    out[trig] = np.where(_sin(a / 2) != 1, _cos((n[trig].astype(x.dtype) + half) * a) / _cos(a / 2), alt)
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: v + v - 1, _cheb_step)
    return out


def chebyshev_w(x, n):
    out = np.zeros(x.shape, x.dtype)
    ax = np.abs(x)
    todo = n >= 0
    edge = todo & (ax == 1)
    t2 = (n + n + 1).astype(x.dtype)
    out[edge] = np.where(x[edge] > 0, t2[edge], np.where(_odd(n[edge]), -1, 1))
    todo &= ~edge
    trig = todo & (n > 8) & (ax < 1)
    a = _acos(x[trig])
    half = x.dtype.type(0.5)
    alt = np.where(x[trig] > 0, t2[trig], np.where(_odd(n[trig]), -1, 1))
    out[trig] = np.where(_cos(a / 2) != 1, _sin((n[trig].astype(x.dtype) + half) * a) / _sin(a / 2), alt)
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: v + v + 1, _cheb_step)
    return out


def _shifted_step(k, x, q, p):
    y = x + x - 1
    return fms(y + y, q, p)


def shifted_chebyshev_t(x, n):
    out = np.zeros(x.shape, x.dtype)
    todo = n >= 0
    one = todo & (x == 1)
    out[one] = 1
    zero = todo & (x == 0)
    out[zero] = np.where(_odd(n[zero]), -1, 1)
    todo &= ~(one | zero)
    y = x + x - 1
    trig = todo & (n > 6) & (np.abs(y) < 1)
    out[trig] = _cos(n[trig].astype(x.dtype) * _acos(y[trig]))
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: v + v - 1, _shifted_step)
    return out


def shifted_chebyshev_u(x, n):
    out = np.zeros(x.shape, x.dtype)
    todo = n >= 0
    np1 = (n + 1).astype(x.dtype)
    one = todo & (x == 1)
    out[one] = np1[one]
    zero = todo & (x == 0)
    out[zero] = np.where(_odd(n[zero]), -np1[zero], np1[zero])
    todo &= ~(one | zero)
    y = x + x - 1
    trig = todo & (n > 6) & (np.abs(y) < 1)
    a = _acos(y[trig])
    s = _sin(a)
    k = np1[trig]
    out[trig] = np.where(s != 0, _sin(k * a) / s, k * _cos(k * a) / y[trig])
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: (v + v - 1) + (v + v - 1), _shifted_step)
    return out


def shifted_chebyshev_v(x, n):
    out = np.zeros(x.shape, x.dtype)
    todo = n >= 0
    t2 = (n + n + 1).astype(x.dtype)
    one = todo & (x == 1)
    out[one] = 1
    zero = todo & (x == 0)
    out[zero] = np.where(_odd(n[zero]), -t2[zero], t2[zero])
    todo &= ~(one | zero)
    y = x + x - 1
    trig = todo & (n > 6) & (np.abs(y) < 1)
    a = _acos(y[trig])
    half = x.dtype.type(0.5)
    alt = np.where(_odd(n[trig]), -t2[trig], t2[trig])
    out[trig] = np.where(_sin(a / 2) != 1, _cos((n[trig].astype(x.dtype) + half) * a) / _cos(a / 2), alt)
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: (v + v - 1) + (v + v - 1) - 1, _shifted_step)
    return out


def shifted_chebyshev_w(x, n):
    out = np.zeros(x.shape, x.dtype)
    todo = n >= 0
    t2 = (n + n + 1).astype(x.dtype)
    one = todo & (x == 1)
    out[one] = t2[one]
    zero = todo & (x == 0)
    out[zero] = np.where(_odd(n[zero]), -1, 1)
    todo &= ~(one | zero)
    y = x + x - 1
    trig = todo & (n > 4) & (np.abs(y) < 1)
    a = _acos(y[trig])
    half = x.dtype.type(0.5)
    alt = np.where(_odd(n[trig]), -1, 1)
    out[trig] = np.where(_cos(a / 2) != 1, _sin((n[trig].astype(x.dtype) + half) * a) / _sin(a / 2), alt)
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: (v + v - 1) + (v + v - 1) + 1, _shifted_step)
    return out


def hermite_h(x, n):
    out = np.zeros(x.shape, x.dtype)
    todo = n >= 0
    ft = x.dtype.type

    def step(k, v, q, p):  # H_k = 2x H_{k-1} - 2(k-1) H_{k-2}, PyTorch's loop counter running over 2k
        return fms(v + v, q, ft(2 * (k - 1)) * p)
    _finish(x, n, out, todo, lambda v: v + v, step)
    return out


def hermite_he(x, n):
    out = np.zeros(x.shape, x.dtype)
    todo = n >= 0
    ft = x.dtype.type

    def step(k, v, q, p):
        return fms(v, q, ft(k - 1) * p)
    _finish(x, n, out, todo, lambda v: v, step)
    return out


def laguerre_l(x, n):
    out = np.zeros(x.shape, x.dtype)
    todo = n >= 0
    zero = todo & (np.abs(x) == 0)
    out[zero] = 1
    todo &= ~zero
    ft = x.dtype.type

    def step(k, v, q, p):
        j = k - 1
        return fms(ft(j + j) + (ft(1) - v), q, ft(j) * p) / ft(j + 1)
    _finish(x, n, out, todo, lambda v: 1 - v, step)
    return out


def legendre_p(x, n):
    out = np.zeros(x.shape, x.dtype)
    todo = n >= 0
    edge = todo & (np.abs(x) == 1)
    out[edge] = np.where((x[edge] > 0) | (n[edge] == 0) | ~_odd(n[edge]), 1, -1)
    todo &= ~edge
    ft = x.dtype.type

    def step(k, v, q, p):
        j = k - 1
        return fms(ft(j + j + 1) * v, q, ft(j) * p) / ft(j + 1)
    _finish(x, n, out, todo, lambda v: v, step)
    return out


def _polynomial_kernel(fn):
    def kernel(x, n):
        d = float_dtype(binary_dtype(x, n))
        ft = d.np
        xs, ns = np.broadcast_arrays(cast(x, d), cast(n, d))
        shape = xs.shape
        r = fn(np.ascontiguousarray(xs, dtype=ft).reshape(-1), _degree(ns).reshape(-1))
        return wrap(r.reshape(shape), d)
    kernel.__name__ = fn.__name__
    return kernel


POLYNOMIALS = {
    "chebyshev_polynomial_t": chebyshev_t, "chebyshev_polynomial_u": chebyshev_u,
    "chebyshev_polynomial_v": chebyshev_v, "chebyshev_polynomial_w": chebyshev_w,
    "shifted_chebyshev_polynomial_t": shifted_chebyshev_t, "shifted_chebyshev_polynomial_u": shifted_chebyshev_u,
    "shifted_chebyshev_polynomial_v": shifted_chebyshev_v, "shifted_chebyshev_polynomial_w": shifted_chebyshev_w,
    "hermite_polynomial_h": hermite_h, "hermite_polynomial_he": hermite_he,
    "laguerre_polynomial_l": laguerre_l, "legendre_polynomial_p": legendre_p,
}


# -- frexp, nextafter -------------------------------------------------------------------------------------
def frexp(self):
    d = self._dtype
    m, e = np.frexp(self._data.astype(np.float64))
    return wrap(m.astype(d.np), d), wrap(e.astype(np.int32), tensorplug.int32)


def _bf16_nextafter(a, b):
    """nextafter on bfloat16 through its 16 bits: one step of the integer code toward ``b``."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    bits = a.view(np.uint16).astype(np.int32)
    mag = bits & 0x7FFF
    neg = (bits & 0x8000) != 0
    up = b32 > a32  # toward +inf
    # away from zero when moving in the direction of the sign
    away = np.where(neg, ~up, up)
    mag2 = np.where(away, mag + 1, mag - 1)
    res = np.where(neg, mag2 | 0x8000, mag2).astype(np.uint16)
    zero = a32 == 0
    tiny = np.where(up, 0x0001, 0x8001).astype(np.uint16)
    res = np.where(zero, tiny, res)
    out = res.view(a.dtype).copy()
    eq = a32 == b32
    out[eq] = b[eq]
    nan = np.isnan(a32) | np.isnan(b32)
    out[nan] = np.nan
    return out


def nextafter(self, other):
    d = binary_dtype(self, other)
    a, b = np.broadcast_arrays(cast(self, d), cast(other, d))
    if d is tensorplug.bfloat16:
        r = _bf16_nextafter(np.ascontiguousarray(a), np.ascontiguousarray(b))
    else:
        r = np.nextafter(a, b)
    return wrap(np.asarray(r, dtype=d.np), d)


# -- bit shifts ---------------------------------------------------------------------------------------------
def _shift_args(self, other):
    d = binary_dtype(self, other)
    a, b = np.broadcast_arrays(cast(self, d), cast(other, d))
    return d, a, b.astype(np.int64)


def lshift(self, other):
    d, a, b = _shift_args(self, other)
    bits = np.dtype(d.np).itemsize * 8
    ok = (b >= 0) & (b < bits)
    ua = a.astype(np.uint64)
    r = np.left_shift(ua, np.where(ok, b, 0).astype(np.uint64))
    r = np.where(ok, r, 0).astype(d.np)  # the low bits, wrapped to the dtype
    return wrap(np.asarray(r, dtype=d.np), d)


def rshift(self, other):
    d, a, b = _shift_args(self, other)
    bits = np.dtype(d.np).itemsize * 8
    ok = (b >= 0) & (b < bits)
    signed = np.dtype(d.np).kind == "i"
    big = np.where(a < 0, -1, 0) if signed else 0
    r = np.where(ok, np.right_shift(a, np.where(ok, b, 0).astype(a.dtype)), big)
    return wrap(np.asarray(r, dtype=d.np), d)


# -- histograms -----------------------------------------------------------------------------------------
def _bins_of(values, edges):
    """Each value's bin (PyTorch's rule: half-open bins, the last one closed) and whether it counts."""
    inside = (values >= edges[0]) & (values <= edges[-1])
    pos = np.searchsorted(edges, values, side="right") - 1
    pos = np.minimum(pos, len(edges) - 2)
    return np.clip(pos, 0, max(len(edges) - 2, 0)), inside


def histogramdd_from_edges(self, bins, weight=None, density=False):
    d = self._dtype
    data = np.ascontiguousarray(self._data).reshape(-1, self._shape[-1])
    edges = [np.asarray(b._data, dtype=d.np) for b in bins]
    n = data.shape[0]
    keep = np.ones(n, dtype=bool)
    flat = np.zeros(n, dtype=np.int64)
    sizes = [max(len(e) - 1, 0) for e in edges]
    for j, e in enumerate(edges):
        pos, inside = _bins_of(data[:, j], e)
        keep &= inside
        flat = flat * sizes[j] + pos
    total = int(np.prod(sizes)) if sizes else 1
    if weight is None:  # counts: exact either way
        hist = np.bincount(flat[keep], minlength=total).astype(d.np)
    else:
        # PyTorch adds the weights one after the other in the input's dtype: so does np.add.at
        hist = np.zeros(total, dtype=d.np)
        np.add.at(hist, flat[keep], np.ascontiguousarray(weight._data, dtype=d.np).reshape(-1)[keep])
    hist = hist.reshape(sizes)
    if density:
        hist = hist / hist.sum()
        for j, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[j] = sizes[j]
            hist = hist / np.diff(e).reshape(shape)
    return wrap(np.asarray(hist, dtype=d.np), d)


KERNELS = {f"special_{name}": quiet(_polynomial_kernel(fn)) for name, fn in POLYNOMIALS.items()}
KERNELS.update({
    "frexp.Tensor": quiet(frexp),
    "nextafter": quiet(nextafter), "nextafter_": quiet(_inplace(nextafter)),
    "bitwise_left_shift.Tensor": lshift, "bitwise_left_shift_.Tensor": _inplace(lshift),
    "bitwise_right_shift.Tensor": rshift, "bitwise_right_shift_.Tensor": _inplace(rshift),
    "_histogramdd_from_bin_tensors": quiet(histogramdd_from_edges),
})
