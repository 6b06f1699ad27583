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
from .xp import xp

_I64_MIN = np.iinfo(xp.int64).min


# -- the polynomials ------------------------------------------------------------------------------
def _degree(n):
    """``n`` truncated to int64 as C++'s cast does on x86: NaN, inf and out-of-range values give INT64_MIN."""
    n = xp.asarray(n)
    if n.dtype.kind in "iub":
        return n.astype(xp.int64)
    with np.errstate(invalid="ignore"):
        ok = xp.isfinite(n) & (xp.abs(n) < 9.2e18)
        return xp.where(ok, xp.trunc(xp.where(ok, n, 0)), 0).astype(xp.int64) + xp.where(ok, 0, _I64_MIN)


def _recurrence(x, n, out, todo, first, step):
    """Fill ``out[todo]`` from ``p_0 = 1``, ``p_1 = first(x)`` and ``p_{k} = step(k, x, p_{k-1}, p_{k-2})``
    for the k from 2 to each element's own degree ``n`` (all >= 2 here)."""
    idx = xp.nonzero(todo)[0]
    if not idx.size:
        return
    xs, ns = x[idx], n[idx]
    one = x.dtype.type(1)
    p = xp.full(xs.shape, one)
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
        if idx.size and xp.isnan(q).all() and xp.isnan(p).all():
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
    if a.dtype == xp.float32:
        return (a.astype(xp.float64) * b.astype(xp.float64) - xp.asarray(c, xp.float32).astype(xp.float64)).astype(
            xp.float32)
    return a * b - c


def _libm(fn):
    """numpy's ``fn`` as C's float function: in float64, rounded once (glibc's float32 functions are
    correctly rounded; numpy's own float32 loops may be an ulp or more off)."""
    def call(v):
        v = xp.asarray(v)
        if v.dtype == xp.float32:
            return fn(v.astype(xp.float64)).astype(xp.float32)
        return fn(v)
    return call


_acos, _cos, _sin = _libm(xp.arccos), _libm(xp.cos), _libm(xp.sin)


def _cheb_step(k, x, q, p):
    return fms(x + x, q, p)


def chebyshev_t(x, n):
    out = xp.zeros(x.shape, x.dtype)
    ax = xp.abs(x)
    todo = n >= 0
    edge = todo & (ax == 1)
    out[edge] = xp.where((x[edge] > 0) | ~_odd(n[edge]), 1, -1)
    todo &= ~edge
    trig = todo & (n > 6) & (ax < 1)
    out[trig] = _cos(n[trig].astype(x.dtype) * _acos(x[trig]))
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: v, _cheb_step)
    return out


def chebyshev_u(x, n):
    out = xp.zeros(x.shape, x.dtype)
    ax = xp.abs(x)
    todo = n >= 0
    edge = todo & (ax == 1)
    np1 = (n + 1).astype(x.dtype)
    out[edge] = xp.where((x[edge] > 0) | ~_odd(n[edge]), np1[edge], -np1[edge])
    todo &= ~edge
    trig = todo & (n > 8) & (ax < 1)
    a = _acos(x[trig])
    s = _sin(a)
    k = np1[trig]
    out[trig] = xp.where(s != 0, _sin(k * a) / s, k * _cos(k * a) / x[trig])
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: v + v, _cheb_step)
    return out


def chebyshev_v(x, n):
    out = xp.zeros(x.shape, x.dtype)
    ax = xp.abs(x)
    todo = n >= 0
    edge = todo & (ax == 1)
    t2 = (n + n + 1).astype(x.dtype)
    out[edge] = xp.where(x[edge] > 0, 1, xp.where(_odd(n[edge]), -t2[edge], t2[edge]))
    todo &= ~edge
    trig = todo & (n > 8) & (ax < 1)
    a = _acos(x[trig])
    half = x.dtype.type(0.5)
    alt = xp.where(_odd(n[trig]), -t2[trig], t2[trig])
    out[trig] = xp.where(_sin(a / 2) != 1, _cos((n[trig].astype(x.dtype) + half) * a) / _cos(a / 2), alt)
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: v + v - 1, _cheb_step)
    return out


def chebyshev_w(x, n):
    out = xp.zeros(x.shape, x.dtype)
    ax = xp.abs(x)
    todo = n >= 0
    edge = todo & (ax == 1)
    t2 = (n + n + 1).astype(x.dtype)
    out[edge] = xp.where(x[edge] > 0, t2[edge], xp.where(_odd(n[edge]), -1, 1))
    todo &= ~edge
    trig = todo & (n > 8) & (ax < 1)
    a = _acos(x[trig])
    half = x.dtype.type(0.5)
    alt = xp.where(x[trig] > 0, t2[trig], xp.where(_odd(n[trig]), -1, 1))
    out[trig] = xp.where(_cos(a / 2) != 1, _sin((n[trig].astype(x.dtype) + half) * a) / _sin(a / 2), alt)
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: v + v + 1, _cheb_step)
    return out


def _shifted_step(k, x, q, p):
    y = x + x - 1
    return fms(y + y, q, p)


def shifted_chebyshev_t(x, n):
    out = xp.zeros(x.shape, x.dtype)
    todo = n >= 0
    one = todo & (x == 1)
    out[one] = 1
    zero = todo & (x == 0)
    out[zero] = xp.where(_odd(n[zero]), -1, 1)
    todo &= ~(one | zero)
    y = x + x - 1
    trig = todo & (n > 6) & (xp.abs(y) < 1)
    out[trig] = _cos(n[trig].astype(x.dtype) * _acos(y[trig]))
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: v + v - 1, _shifted_step)
    return out


def shifted_chebyshev_u(x, n):
    out = xp.zeros(x.shape, x.dtype)
    todo = n >= 0
    np1 = (n + 1).astype(x.dtype)
    one = todo & (x == 1)
    out[one] = np1[one]
    zero = todo & (x == 0)
    out[zero] = xp.where(_odd(n[zero]), -np1[zero], np1[zero])
    todo &= ~(one | zero)
    y = x + x - 1
    trig = todo & (n > 6) & (xp.abs(y) < 1)
    a = _acos(y[trig])
    s = _sin(a)
    k = np1[trig]
    out[trig] = xp.where(s != 0, _sin(k * a) / s, k * _cos(k * a) / y[trig])
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: (v + v - 1) + (v + v - 1), _shifted_step)
    return out


def shifted_chebyshev_v(x, n):
    out = xp.zeros(x.shape, x.dtype)
    todo = n >= 0
    t2 = (n + n + 1).astype(x.dtype)
    one = todo & (x == 1)
    out[one] = 1
    zero = todo & (x == 0)
    out[zero] = xp.where(_odd(n[zero]), -t2[zero], t2[zero])
    todo &= ~(one | zero)
    y = x + x - 1
    trig = todo & (n > 6) & (xp.abs(y) < 1)
    a = _acos(y[trig])
    half = x.dtype.type(0.5)
    alt = xp.where(_odd(n[trig]), -t2[trig], t2[trig])
    out[trig] = xp.where(_sin(a / 2) != 1, _cos((n[trig].astype(x.dtype) + half) * a) / _cos(a / 2), alt)
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: (v + v - 1) + (v + v - 1) - 1, _shifted_step)
    return out


def shifted_chebyshev_w(x, n):
    out = xp.zeros(x.shape, x.dtype)
    todo = n >= 0
    t2 = (n + n + 1).astype(x.dtype)
    one = todo & (x == 1)
    out[one] = t2[one]
    zero = todo & (x == 0)
    out[zero] = xp.where(_odd(n[zero]), -1, 1)
    todo &= ~(one | zero)
    y = x + x - 1
    trig = todo & (n > 4) & (xp.abs(y) < 1)
    a = _acos(y[trig])
    half = x.dtype.type(0.5)
    alt = xp.where(_odd(n[trig]), -1, 1)
    out[trig] = xp.where(_cos(a / 2) != 1, _sin((n[trig].astype(x.dtype) + half) * a) / _sin(a / 2), alt)
    todo &= ~trig
    _finish(x, n, out, todo, lambda v: (v + v - 1) + (v + v - 1) + 1, _shifted_step)
    return out


def hermite_h(x, n):
    out = xp.zeros(x.shape, x.dtype)
    todo = n >= 0
    ft = x.dtype.type

    def step(k, v, q, p):  # H_k = 2x H_{k-1} - 2(k-1) H_{k-2}, PyTorch's loop counter running over 2k
        return fms(v + v, q, ft(2 * (k - 1)) * p)
    _finish(x, n, out, todo, lambda v: v + v, step)
    return out


def hermite_he(x, n):
    out = xp.zeros(x.shape, x.dtype)
    todo = n >= 0
    ft = x.dtype.type

    def step(k, v, q, p):
        return fms(v, q, ft(k - 1) * p)
    _finish(x, n, out, todo, lambda v: v, step)
    return out


def laguerre_l(x, n):
    out = xp.zeros(x.shape, x.dtype)
    todo = n >= 0
    zero = todo & (xp.abs(x) == 0)
    out[zero] = 1
    todo &= ~zero
    ft = x.dtype.type

    def step(k, v, q, p):
        j = k - 1
        return fms(ft(j + j) + (ft(1) - v), q, ft(j) * p) / ft(j + 1)
    _finish(x, n, out, todo, lambda v: 1 - v, step)
    return out


def legendre_p(x, n):
    out = xp.zeros(x.shape, x.dtype)
    todo = n >= 0
    edge = todo & (xp.abs(x) == 1)
    out[edge] = xp.where((x[edge] > 0) | (n[edge] == 0) | ~_odd(n[edge]), 1, -1)
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
        xs, ns = xp.broadcast_arrays(cast(x, d), cast(n, d))
        shape = xs.shape
        r = fn(xp.ascontiguousarray(xs, dtype=ft).reshape(-1), _degree(ns).reshape(-1))
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
    m, e = xp.frexp(self._data.astype(xp.float64))
    return wrap(m.astype(d.np), d), wrap(e.astype(xp.int32), tensorplug.int32)


def _bf16_nextafter(a, b):
    """nextafter on bfloat16 through its 16 bits: one step of the integer code toward ``b``."""
    a32, b32 = a.astype(xp.float32), b.astype(xp.float32)
    bits = a.view(xp.uint16).astype(xp.int32)
    mag = bits & 0x7FFF
    neg = (bits & 0x8000) != 0
    up = b32 > a32  # toward +inf
    # away from zero when moving in the direction of the sign
    away = xp.where(neg, ~up, up)
    mag2 = xp.where(away, mag + 1, mag - 1)
    res = xp.where(neg, mag2 | 0x8000, mag2).astype(xp.uint16)
    zero = a32 == 0
    tiny = xp.where(up, 0x0001, 0x8001).astype(xp.uint16)
    res = xp.where(zero, tiny, res)
    out = res.view(a.dtype).copy()
    eq = a32 == b32
    out[eq] = b[eq]
    nan = xp.isnan(a32) | xp.isnan(b32)
    out[nan] = xp.nan
    return out


def nextafter(self, other):
    d = binary_dtype(self, other)
    a, b = xp.broadcast_arrays(cast(self, d), cast(other, d))
    if d is tensorplug.bfloat16:
        r = _bf16_nextafter(xp.ascontiguousarray(a), xp.ascontiguousarray(b))
    else:
        r = xp.nextafter(a, b)
    return wrap(xp.asarray(r, dtype=d.np), d)


# -- bit shifts ---------------------------------------------------------------------------------------------
def _shift_args(self, other):
    d = binary_dtype(self, other)
    a, b = xp.broadcast_arrays(cast(self, d), cast(other, d))
    return d, a, b.astype(xp.int64)


def lshift(self, other):
    d, a, b = _shift_args(self, other)
    bits = np.dtype(d.np).itemsize * 8
    ok = (b >= 0) & (b < bits)
    ua = a.astype(xp.uint64)
    r = xp.left_shift(ua, xp.where(ok, b, 0).astype(xp.uint64))
    r = xp.where(ok, r, 0).astype(d.np)  # the low bits, wrapped to the dtype
    return wrap(xp.asarray(r, dtype=d.np), d)


def rshift(self, other):
    d, a, b = _shift_args(self, other)
    bits = np.dtype(d.np).itemsize * 8
    ok = (b >= 0) & (b < bits)
    signed = np.dtype(d.np).kind == "i"
    big = xp.where(a < 0, -1, 0) if signed else 0
    r = xp.where(ok, xp.right_shift(a, xp.where(ok, b, 0).astype(a.dtype)), big)
    return wrap(xp.asarray(r, dtype=d.np), d)


# -- histograms -----------------------------------------------------------------------------------------
def _bins_of(values, edges):
    """Each value's bin (PyTorch's rule: half-open bins, the last one closed) and whether it counts."""
    inside = (values >= edges[0]) & (values <= edges[-1])
    pos = xp.searchsorted(edges, values, side="right") - 1
    pos = xp.minimum(pos, len(edges) - 2)
    return xp.clip(pos, 0, max(len(edges) - 2, 0)), inside


def histogramdd_from_edges(self, bins, weight=None, density=False):
    d = self._dtype
    data = xp.ascontiguousarray(self._data).reshape(-1, self._shape[-1])
    edges = [xp.asarray(b._data, dtype=d.np) for b in bins]
    n = data.shape[0]
    keep = xp.ones(n, dtype=bool)
    flat = xp.zeros(n, dtype=xp.int64)
    sizes = [max(len(e) - 1, 0) for e in edges]
    for j, e in enumerate(edges):
        pos, inside = _bins_of(data[:, j], e)
        keep &= inside
        flat = flat * sizes[j] + pos
    total = int(xp.prod(sizes)) if sizes else 1
    if weight is None:  # counts: exact either way
        hist = xp.bincount(flat[keep], minlength=total).astype(d.np)
    else:
        # PyTorch adds the weights one after the other in the input's dtype: so does xp.add.at
        hist = xp.zeros(total, dtype=d.np)
        xp.add.at(hist, flat[keep], xp.ascontiguousarray(weight._data, dtype=d.np).reshape(-1)[keep])
    hist = hist.reshape(sizes)
    if density:
        hist = hist / hist.sum()
        for j, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[j] = sizes[j]
            hist = hist / xp.diff(e).reshape(shape)
    return wrap(xp.asarray(hist, dtype=d.np), d)


KERNELS = {f"special_{name}": quiet(_polynomial_kernel(fn)) for name, fn in POLYNOMIALS.items()}
KERNELS.update({
    "frexp.Tensor": quiet(frexp),
    "nextafter": quiet(nextafter), "nextafter_": quiet(_inplace(nextafter)),
    "bitwise_left_shift.Tensor": lshift, "bitwise_left_shift_.Tensor": _inplace(lshift),
    "bitwise_right_shift.Tensor": rshift, "bitwise_right_shift_.Tensor": _inplace(rshift),
    "_histogramdd_from_bin_tensors": quiet(histogramdd_from_edges),
})
