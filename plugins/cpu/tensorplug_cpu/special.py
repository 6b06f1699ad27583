"""CPU kernels of the special functions: error function family, gamma family, Bessel functions,
the normal distribution's functions and the Hurwitz zeta function, vectorized in numpy.

Everything computes in float64 (float32 and the half types round once at the end), to
about the accuracy of PyTorch's own kernels: Cody's rational approximations for erf,
erfc and erfcx, Newton refinement for the inverses (erfinv, ndtri), shifted
asymptotic series for lgamma, digamma and zeta, and power series with asymptotic
expansions for the modified Bessel functions of order 0 and 1.
"""

from __future__ import annotations

import math

import numpy as np

import tensorplug
from tensorplug.plugin_api import float_dtype, binary_dtype

from .elementwise import quiet, _inplace
from .kernels import wrap, cast
from .erf_cody import erf64, erfc64, erfcx64
from .xp import xp

_F64 = xp.float64
_SQRT_PI_INV = 1.0 / math.sqrt(math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)

# Giles, "Approximating the erfinv function" (2010): a single precision first guess
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
               -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coeffs, w):
    p = xp.full_like(w, coeffs[0])
    for c in coeffs[1:]:
        p = p * w + c
    return p


def erfinv64(x):
    x = xp.asarray(x, dtype=_F64).reshape(-1)
    a = xp.abs(x)
    inside = a < 1.0
    xa = a[inside]
    w = -xp.log((1.0 - xa) * (1.0 + xa))
    y = xp.where(w < 5.0, _horner(_GILES_CENTRAL, w - 2.5), _horner(_GILES_TAIL, xp.sqrt(w) - 3.0)) * xa
    # Newton on erf near 0; in the tails (where 1 - |x| is exact and erf(y) - |x| would cancel) on
    # log(erfc(y)) = log(erfcx(y)) - y^2, which is close to linear there, so that it converges fast
    tail = xa > 0.5
    log_one_minus = xp.log(1.0 - xa)
    for _ in range(4):
        ex = erfcx64(y)
        step_tail = (xp.log(ex) - y * y - log_one_minus) * ex / (2.0 * _SQRT_PI_INV)
        step_mid = -(erf64(y) - xa) / (2.0 * _SQRT_PI_INV * xp.exp(-y * y))
        y = y + xp.where(tail, step_tail, step_mid)
    out = xp.full_like(x, xp.nan)
    out[inside] = y
    out[a == 1.0] = xp.inf
    return xp.copysign(out, x)


def ndtr64(x):
    return 0.5 * erfc64(-xp.asarray(x, dtype=_F64) / math.sqrt(2.0))


def log_ndtr64(x):
    x = xp.asarray(x, dtype=_F64).reshape(-1)
    out = xp.empty_like(x)
    low = x < -1.0
    xl = x[low]
    out[low] = xp.log(erfcx64(-xl / math.sqrt(2.0)) / 2.0) - xl * xl / 2.0
    out[~low] = xp.log1p(-erfc64(x[~low] / math.sqrt(2.0)) / 2.0)
    return out


def _ndtri_lower(p):
    """ndtri for 0 < p <= 0.5: a rational first guess (absolute error < 5e-4), then Newton on log p."""
    t = xp.sqrt(-2.0 * xp.log(p))
    y = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1.0 + 1.432788 * t + 0.189269 * t * t
                                                              + 0.001308 * t * t * t))
    logp = xp.log(p)
    for _ in range(4):
        # d log(ndtr(y)) / dy = pdf / cdf = 1 / (sqrt(pi / 2) * erfcx(-y / sqrt 2)), with no underflow
        y = y - (log_ndtr64(y) - logp) * math.sqrt(math.pi / 2.0) * erfcx64(-y / math.sqrt(2.0))
    return y


def ndtri64(p):
    p = xp.asarray(p, dtype=_F64).reshape(-1)
    out = xp.full_like(p, xp.nan)
    # the centre through erfinv (2p - 1 is exact there), the tails by Newton on log p
    mid = (p >= 0.25) & (p <= 0.75)
    out[mid] = math.sqrt(2.0) * erfinv64(2.0 * p[mid] - 1.0)
    low = (p > 0) & (p < 0.25)
    out[low] = _ndtri_lower(p[low])
    high = (p > 0.75) & (p < 1)
    out[high] = -_ndtri_lower(1.0 - p[high])
    out[p == 0] = -xp.inf
    out[p == 1] = xp.inf
    return out


# -- gamma family ------------------------------------------------------------------------------
def _sinpi(x):
    """sin(pi x) with the argument reduced first, so integers give exact zeros."""
    r = x - xp.round(x)  # in [-1/2, 1/2]: sin(pi x) = +-sin(pi r), exact near the integers
    return xp.where(xp.round(x) % 2 == 0, 1.0, -1.0) * xp.sin(xp.pi * r)


def _lgamma_positive(x):
    """lgamma on x > 0: shifted to x >= 10 by the recurrence, then Stirling's series."""
    shift = xp.maximum(xp.ceil(10.0 - x), 0.0)
    prod = xp.ones_like(x)
    z = x.copy()
    for k in range(int(shift.max()) if shift.size else 0):
        m = shift > k
        prod = xp.where(m, prod * z, prod)
        z = xp.where(m, z + 1.0, z)
    r = 1.0 / (z * z)
    series = (1.0 / 12 + r * (-1.0 / 360 + r * (1.0 / 1260 + r * (-1.0 / 1680 + r * (
        1.0 / 1188 + r * (-691.0 / 360360 + r * (1.0 / 156 + r * (-3617.0 / 122400)))))))) / z
    return (z - 0.5) * xp.log(z) - z + _HALF_LOG_2PI + series - xp.log(prod)


def lgamma64(x):
    x = xp.asarray(x, dtype=_F64).reshape(-1)
    out = xp.full_like(x, xp.inf)
    pos = (x > 0) & xp.isfinite(x)
    out[pos] = _lgamma_positive(x[pos])
    neg = (x < 0) & (x != xp.floor(x)) & xp.isfinite(x)
    xn = x[neg]
    # reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x)
    out[neg] = math.log(math.pi) - xp.log(xp.abs(_sinpi(xn))) - _lgamma_positive(1.0 - xn)
    out[(x == 1.0) | (x == 2.0)] = 0.0  # the roots, exactly
    out[xp.isnan(x)] = xp.nan
    return out


def _digamma_positive(x):
    shift = xp.maximum(xp.ceil(10.0 - x), 0.0)
    acc = xp.zeros_like(x)
    z = x.copy()
    for k in range(int(shift.max()) if shift.size else 0):
        m = shift > k
        acc = xp.where(m, acc + 1.0 / z, acc)
        z = xp.where(m, z + 1.0, z)
    r = 1.0 / (z * z)
    series = r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (
        1.0 / 132 - r * (691.0 / 32760 - r / 12))))))
    return xp.log(z) - 0.5 / z - series - acc


def digamma64(x):
    x = xp.asarray(x, dtype=_F64).reshape(-1)
    out = xp.full_like(x, xp.nan)
    pos = (x > 0) & xp.isfinite(x)
    out[pos] = _digamma_positive(x[pos])
    out[x == xp.inf] = xp.inf
    # PyTorch: -inf at +0.0 and inf at -0.0 (the sides' limits), NaN at the negative integers
    zero = x == 0
    out[zero] = xp.where(xp.signbit(x[zero]), xp.inf, -xp.inf)
    neg = (x < 0) & (x != xp.floor(x)) & xp.isfinite(x)
    xn = x[neg]
    # reflection: psi(1 - x) - psi(x) = pi / tan(pi x)
    r = xn - xp.round(xn)
    out[neg] = _digamma_positive(1.0 - xn) - xp.pi / xp.tan(xp.pi * r)
    return out


# (2k)! / B_2k for k = 1..12: the Euler-Maclaurin corrections of the zeta sum
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)


def zeta64(x, q):
    """Hurwitz zeta sum_k (k + q) ** -x, with Cephes' domain rules (x == 1: inf; x < 1: NaN;
    q a non-positive integer: inf; q < 0 with x not an integer: NaN)."""
    x, q = xp.broadcast_arrays(xp.asarray(x, dtype=_F64), xp.asarray(q, dtype=_F64))
    shape = x.shape
    x, q = x.reshape(-1).copy(), q.reshape(-1).copy()
    out = xp.full_like(x, xp.nan)
    ok = (x > 1) & ~xp.isnan(q) & ~((q <= 0) & (q == xp.floor(q))) & ~((q < 0) & (x != xp.floor(x)))
    xs, qs = x[ok], q[ok]
    fin = xp.isfinite(qs) & xp.isfinite(xs)
    res = xp.zeros_like(xs)  # q = inf (or x = inf with q > 1) gives 0
    xf, qf = xs[fin], qs[fin]
    # sum directly until the base reaches max(10, x), then Euler-Maclaurin for the tail
    n = xp.maximum(xp.ceil(xp.maximum(10.0, xf) - qf), 0.0)
    s = xp.zeros_like(xf)
    a = qf.copy()
    for k in range(int(n.max()) if n.size else 0):
        m = n > k
        s = xp.where(m, s + a ** -xf, s)
        a = xp.where(m, a + 1.0, a)
    w = a
    b = w ** -xf
    s = s + b * w / (xf - 1.0) + 0.5 * b
    fac = xp.ones_like(xf)
    kk = 0.0
    for coef in _ZETA_A:
        fac = fac * (xf + kk)
        b = b / w
        s = s + fac * b / coef
        kk += 1.0
        fac = fac * (xf + kk)
        b = b / w
        kk += 1.0
    res[fin] = s
    # PyTorch's: x = inf gives 1 at q = 1 and inf for 0 < q < 1, NaN otherwise, as q = inf does
    res[~fin] = xp.nan
    inf_x = xp.isinf(xs) & xp.isfinite(qs)
    res[inf_x] = xp.where(qs[inf_x] == 1, 1.0, xp.where(qs[inf_x] < 1, xp.inf, xp.nan))
    out[ok] = res
    out[x == 1] = xp.inf
    out[(q <= 0) & (q == xp.floor(q)) & ~(x <= 1)] = xp.inf  # NaN x included, as in Cephes
    return out.reshape(shape)


def polygamma64(n, x):
    x = xp.asarray(x, dtype=_F64).reshape(-1)
    if n == 0:
        return digamma64(x)
    sign = 1.0 if n % 2 else -1.0
    out = sign * math.exp(math.lgamma(n + 1.0)) * zeta64(float(n + 1), x)
    if n == 1:  # PyTorch's trigamma: NaN at -inf, 0 at inf
        out[x == -xp.inf] = xp.nan
        out[x == xp.inf] = 0.0
    return out


# -- modified Bessel functions of order 0 and 1 ----------------------------------------------------
_SERIES_MAX = 20.0  # below: the power series (positive terms, 60 of them); above: the asymptotic series


def _bessel_series(y, order):
    """I_order(y) for 0 <= y <= 20 by its power series sum (y/2)^(2k+order) / (k! (k+order)!)."""
    q = (y / 2.0) ** 2
    term = xp.ones_like(y) if order == 0 else y / 2.0
    s = term.copy()
    for k in range(1, 60):
        term = term * q / (k * (k + order))
        s = s + term
    return s


def _bessel_asymptotic_scaled(y, order):
    """exp(-y) I_order(y) for y > 20: (2 pi y)^-1/2 sum_k (-1)^k a_k(order) / y^k."""
    mu = 4.0 * order * order
    term = xp.ones_like(y)
    s = term.copy()
    for k in range(1, 30):
        term = term * -(mu - (2 * k - 1) ** 2) / (k * 8.0 * y)
        s = s + term
    return s / xp.sqrt(2.0 * xp.pi * y)


def _bessel(x, order, scaled):
    x = xp.asarray(x, dtype=_F64).reshape(-1)
    y = xp.abs(x)
    out = xp.empty_like(x)
    small = y <= _SERIES_MAX
    v = _bessel_series(y[small], order)
    out[small] = v * xp.exp(-y[small]) if scaled else v
    big = ~small & ~xp.isnan(y)
    yb = y[big]
    with np.errstate(over="ignore", invalid="ignore"):
        v = _bessel_asymptotic_scaled(yb, order)
        if scaled:
            v = xp.where(xp.isinf(yb), 0.0, v)
        else:
            v = xp.where(xp.isinf(yb), xp.nan, v * xp.exp(yb))  # inf from about 709.8, NaN at inf, as PyTorch
    out[big] = v
    out[xp.isnan(y)] = xp.nan
    return out if order == 0 else xp.copysign(out, x)


def i0_64(x):
    return _bessel(x, 0, False)


def i0e64(x):
    return _bessel(x, 0, True)


def i1_64(x):
    return _bessel(x, 1, False)


def i1e64(x):
    return _bessel(x, 1, True)


# -- elementary ---------------------------------------------------------------------------------
def entr64(x):
    x = xp.asarray(x, dtype=_F64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = xp.where(x > 0, -x * xp.log(xp.where(x > 0, x, 1.0)), xp.where(x == 0, 0.0, -xp.inf))
    return xp.where(xp.isnan(x), xp.nan, r)


def sinc64(x):
    x = xp.asarray(x, dtype=_F64)
    px = xp.pi * x
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where(x == 0, 1.0, xp.sin(px) / px)


# -- kernels ----------------------------------------------------------------------------------------
_HALF = (tensorplug.float16, tensorplug.bfloat16)
_BF16_MAX = 3.3895313892515355e38  # (2 - 2**-7) * 2**127


def _float_kernel(fn64, native=None):
    """Kernel of a floating unary op: float64 math (``native`` numpy function in the input's own
    float type when given), the result rounded to the op's dtype."""
    def kernel(self):
        d = float_dtype(self._dtype)
        a = self._data
        if native is not None:
            c = tensorplug.float32 if d in _HALF else d
            r = native(cast(self, c))
        else:
            r = fn64(a.astype(_F64)).reshape(a.shape)
        return wrap(xp.asarray(r).astype(d.np, copy=False), d)
    kernel.__name__ = (native or fn64).__name__
    return kernel


def _float_binary_kernel(fn64):
    def kernel(self, other):
        d = float_dtype(binary_dtype(self, other))
        r = fn64(self._data.astype(_F64), other._data.astype(_F64))
        return wrap(xp.asarray(r).astype(d.np, copy=False), d)
    kernel.__name__ = fn64.__name__
    return kernel


def trigamma(x, ft):
    """PyTorch's trigamma, step by step in the float type ``ft`` (its float32 kernel computes in float32):
    the reflection for x < 0.5 with sin(pi x) in that type, six recurrence steps, then the asymptotic
    series (in double, as its literals are). Near and at the poles (the non-positive integers) this gives
    PyTorch's values, large and finite where sin(pi x) does not round to zero (exactly inf at 0)."""
    x = xp.asarray(x, dtype=ft).copy()
    one = ft(1)
    neg = x < 0.5
    with np.errstate(all="ignore"):
        s = xp.sin(ft(xp.pi) * x)
        result = xp.where(neg, -(ft(xp.pi) * ft(xp.pi)) / (s * s), ft(0)).astype(ft)
        x = xp.where(neg, one - x, x)
        for _ in range(6):
            result = result + one / (x * x)
            x = x + one
        ixx = (one / (x * x)).astype(_F64)
        xd = x.astype(_F64)
        tail = (1.0 + 1.0 / (2.0 * xd) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / xd
        result = (result.astype(_F64) + tail).astype(ft)
    return xp.where(neg, -result, result)


def polygamma(n, self):
    d = float_dtype(self._dtype)
    a = self._data
    if n == 1 and d is not tensorplug.float64:
        # float32 and the half types as PyTorch's float32 kernel; float64 keeps the accurate series
        # (PyTorch's float64 formula is off by 5e-10 at x = 1 and finite at the poles)
        return wrap(trigamma(a, xp.float32).astype(d.np, copy=False), d)
    return wrap(polygamma64(n, a.astype(_F64)).reshape(a.shape).astype(d.np, copy=False), d)


def polygamma_(self, n):
    xp.copyto(self._data, polygamma(n, self)._data, casting="unsafe")
    return self


def _same_dtype_binary(ufunc):
    """Binary kernel in the promoted dtype (half types compute in float32)."""
    def kernel(self, other):
        d = binary_dtype(self, other)
        c = tensorplug.float32 if d in _HALF else d
        r = ufunc(cast(self, c), cast(other, c))
        return wrap(xp.asarray(r).astype(d.np, copy=False), d)
    kernel.__name__ = ufunc.__name__
    return kernel


def _fmax(a, b):
    # PyTorch's: NaN loses; on ties (0.0 and -0.0) self wins
    return xp.where(xp.isnan(a), b, xp.where(xp.isnan(b) | (a >= b), a, b)) if a.dtype.kind == "f" else \
        xp.where(a >= b, a, b)


def _fmin(a, b):
    return xp.where(xp.isnan(a), b, xp.where(xp.isnan(b) | (a <= b), a, b)) if a.dtype.kind == "f" else \
        xp.where(a <= b, a, b)


def _copysign(self, other):
    d = float_dtype(binary_dtype(self, other))
    c = tensorplug.float32 if d in _HALF else d
    return wrap(xp.copysign(cast(self, c), cast(other, c)).astype(d.np, copy=False), d)


def signbit(self):
    a = self._data
    if self._dtype is tensorplug.bool:
        return wrap(xp.zeros(a.shape, xp.bool_), tensorplug.bool)
    if not self._dtype.is_floating_point:
        return wrap(a < 0, tensorplug.bool)
    return wrap(xp.signbit(a.astype(xp.float32) if self._dtype is tensorplug.bfloat16 else a), tensorplug.bool)


def nan_to_num(self, nan=None, posinf=None, neginf=None):
    d = self._dtype
    a = self._data
    if not d.is_floating_point:
        return wrap(a.copy(), d)
    if d is tensorplug.bfloat16:
        big = _BF16_MAX
    else:
        big = float(np.finfo(d.np).max)
    small = -big
    r = a.copy()
    r[xp.isnan(a)] = 0.0 if nan is None else nan
    r[a == xp.inf] = big if posinf is None else posinf
    r[a == -xp.inf] = small if neginf is None else neginf
    return wrap(r, d)


def _float_kernels():
    table = {
        "erfc": _float_kernel(erfc64), "erfinv": _float_kernel(erfinv64), "lgamma": _float_kernel(lgamma64),
        "digamma": _float_kernel(digamma64), "i0": _float_kernel(i0_64),
        "asinh": _float_kernel(None, xp.arcsinh), "acosh": _float_kernel(None, xp.arccosh),
        "atanh": _float_kernel(None, xp.arctanh), "sinc": _float_kernel(sinc64),
        "special_erfcx": _float_kernel(erfcx64), "special_i0e": _float_kernel(i0e64),
        "special_i1": _float_kernel(i1_64), "special_i1e": _float_kernel(i1e64),
        "special_ndtri": _float_kernel(ndtri64), "special_log_ndtr": _float_kernel(log_ndtr64),
        "special_entr": _float_kernel(entr64),
        "special_zeta": _float_binary_kernel(zeta64),
    }
    for name in list(table):
        if not name.startswith("special_"):
            table[name + "_"] = _inplace(table[name])
    return table


KERNELS = {name: quiet(k) for name, k in _float_kernels().items()}
KERNELS.update({
    "polygamma": quiet(polygamma), "polygamma_": quiet(polygamma_),
    "hypot": quiet(_same_dtype_binary(xp.hypot)), "hypot_": quiet(_inplace(_same_dtype_binary(xp.hypot))),
    "fmax": quiet(_same_dtype_binary(_fmax)), "fmin": quiet(_same_dtype_binary(_fmin)),
    "copysign.Tensor": quiet(_copysign), "copysign_.Tensor": quiet(_inplace(_copysign)),
    "gcd": quiet(_same_dtype_binary(xp.gcd)), "gcd_": quiet(_inplace(_same_dtype_binary(xp.gcd))),
    "lcm": quiet(_same_dtype_binary(xp.lcm)), "lcm_": quiet(_inplace(_same_dtype_binary(xp.lcm))),
    "signbit": signbit,
    "nan_to_num": quiet(nan_to_num), "nan_to_num_": quiet(_inplace(nan_to_num)),
})
