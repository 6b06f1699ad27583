"""Cody's rational approximations of erf, erfc and erfcx in float64 (as in CALERF), on the array
module ``xp``: the special functions' kernels use them, and ``erf`` does where the array module is not
numpy (on numpy it takes math.erf, exact, element by element)."""

from __future__ import annotations

import math

import numpy as np

from .xp import xp

_F64 = xp.float64
_SQRT_PI_INV = 1.0 / math.sqrt(math.pi)

# Cody (1969), as in CALERF: erf on [0, 0.46875], erfc on [0.46875, 4] and beyond 4
_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02, 3.20937758913846947e03,
      1.85777706184603153e-1)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01, 2.98635138197400131e02,
      8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03,
      2.15311535474403846e-8)
_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02, 1.62138957456669019e03,
      3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)
_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1, 1.60837851487422766e-2,
      6.58749161529837803e-4, 1.63153871373020978e-2)
_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1, 6.05183413124413191e-2,
      2.33520497626869185e-3)


def _small_erf(y):
    z = y * y
    num, den = _A[4] * z, z.copy()
    for i in range(3):
        num = (num + _A[i]) * z
        den = (den + _B[i]) * z
    return y * (num + _A[3]) / (den + _B[3])


def _scaled_erfc(y):
    """exp(y*y) * erfc(y) for y >= 0.46875 (Cody's second and third ranges)."""
    out = xp.empty_like(y)
    mid = y <= 4.0
    t = y[mid]
    num, den = _C[8] * t, t.copy()
    for i in range(7):
        num = (num + _C[i]) * t
        den = (den + _D[i]) * t
    out[mid] = (num + _C[7]) / (den + _D[7])
    t = y[~mid]
    with np.errstate(divide="ignore"):
        z = 1.0 / (t * t)
    num, den = _P[5] * z, z.copy()
    for i in range(4):
        num = (num + _P[i]) * z
        den = (den + _Q[i]) * z
    r = z * (num + _P[4]) / (den + _Q[4])
    out[~mid] = (_SQRT_PI_INV - r) / t
    return out


def _exp_neg_square(y):
    """exp(-y*y) with y*y split so that its rounding error does not reach the exponent (Cody)."""
    head = xp.trunc(y * 16.0) / 16.0
    return xp.exp(-head * head) * xp.exp(-(y - head) * (y + head))


def erf64(x):
    x = xp.asarray(x, dtype=_F64).reshape(-1)
    y = xp.abs(x)
    out = xp.empty_like(x)
    small = y <= 0.46875
    out[small] = _small_erf(y[small])
    big = ~small & ~xp.isnan(y)
    yb = y[big]
    out[big] = 1.0 - _exp_neg_square(yb) * _scaled_erfc(yb)
    out[xp.isinf(y)] = 1.0
    out[xp.isnan(y)] = xp.nan
    return xp.copysign(out, x)


def erfc64(x):
    x = xp.asarray(x, dtype=_F64).reshape(-1)
    y = xp.abs(x)
    out = xp.empty_like(x)
    small = y <= 0.46875
    out[small] = 1.0 - _small_erf(x[small])
    big = ~small & ~xp.isnan(y)
    r = _exp_neg_square(y[big]) * _scaled_erfc(y[big])
    out[big] = xp.where(x[big] < 0, 2.0 - r, r)
    out[xp.isinf(x)] = xp.where(x[xp.isinf(x)] > 0, 0.0, 2.0)
    out[xp.isnan(y)] = xp.nan
    return out


def erfcx64(x):
    x = xp.asarray(x, dtype=_F64).reshape(-1)
    y = xp.abs(x)
    out = xp.empty_like(x)
    small = y <= 0.46875
    ys = x[small]
    out[small] = xp.exp(ys * ys) * (1.0 - _small_erf(ys))
    big = ~small & ~xp.isnan(y)
    r = _scaled_erfc(y[big])
    xb = x[big]
    # erfcx(-y) = 2 exp(y^2) - erfcx(y): overflows to inf below about -26.6, as it should
    neg = xp.where(xb < 0, 2.0 * xp.exp(xb * xb) - r, r)
    out[big] = neg
    out[xp.isnan(y)] = xp.nan
    return out
