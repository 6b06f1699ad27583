"""Fused CPU kernels of the transformer layers: attention, layer norm and GELU, forward and backward.

* ``_fused_sdpa`` computes the scores, the masked softmax and the weighted sum in one kernel (a few
  numpy passes over the (..., L, S) scores instead of a dozen dispatched ops), and returns the attention
  weights, which ``_fused_sdpa_backward`` reuses;
* ``native_layer_norm`` returns the output with each row's mean and 1/std, which
  ``native_layer_norm_backward`` reuses;
* ``gelu`` and ``gelu_backward`` evaluate the normal CDF in float32 for float32 input (a Chebyshev
  fit of erfc with relative error below 1.2e-7, about 25 float32 passes), where ``erf`` computes a
  float64 rational approximation with masked branches; float64 keeps the exact ``erf``.

float16 and bfloat16 compute in float32 and round once at the end, as PyTorch's CPU kernels do.
"""

from __future__ import annotations

import numpy as np

import tensorplug

from .elementwise import quiet, _erf
from .kernels import wrap
from .xp import xp

_f32 = np.dtype(xp.float32)
_HALF = (tensorplug.float16, tensorplug.bfloat16)
_BOOL = tensorplug.bool
_NEG_INF = -xp.inf
_CAUSAL: dict = {}  # (L, S, dtype) -> 0 on and below the diagonal, -inf above it


def _vals(t, d):
    """t's numpy values, in float32 for the half types."""
    return t._data.astype(_f32) if d in _HALF else t._data


def _out(a, d):
    return wrap(a.astype(d.np) if a.dtype != d.np else a, d)


def _causal_bias(L, S, dtype):
    m = _CAUSAL.get((L, S, dtype))
    if m is None:
        m = _CAUSAL[(L, S, dtype)] = xp.where(xp.tri(L, S, dtype=bool), 0.0, _NEG_INF).astype(dtype)
        if len(_CAUSAL) > 64:
            _CAUSAL.pop(next(iter(_CAUSAL)))
    return m


def fused_sdpa(query, key, value, attn_mask, is_causal, scale):
    d = query._dtype
    q, k, v = _vals(query, d), _vals(key, d), _vals(value, d)
    s = xp.matmul(q, k.swapaxes(-1, -2))
    s *= scale
    L, S = s.shape[-2], s.shape[-1]
    may_be_empty = False
    if is_causal:
        s += _causal_bias(L, S, s.dtype)  # one broadcast pass; boolean-mask assignment is slower
        may_be_empty = S == 0
    elif attn_mask is not None:
        if attn_mask._dtype is _BOOL:
            s = xp.where(attn_mask._data, s, _NEG_INF)
        else:
            s = s + _vals(attn_mask, d)
        may_be_empty = True
    if not S:
        w = s
    else:
        m = s.max(-1, keepdims=True)
        if may_be_empty:
            m[xp.isneginf(m)] = 0.0  # a row in which nothing takes part: exp gives 0 everywhere
        s -= m
        w = xp.exp(s, out=s)
        z = w.sum(-1, keepdims=True)
        if may_be_empty:
            z[z == 0] = 1.0  # PyTorch's safe softmax: such a row gives 0
        w /= z
    out = xp.matmul(w, v)
    return _out(out, d), _out(w, d)


def fused_sdpa_backward(grad, query, key, value, weights, scale):
    d = query._dtype
    g, q, k, v, w = (_vals(t, d) for t in (grad, query, key, value, weights))
    gv = xp.matmul(w.swapaxes(-1, -2), g)
    gs = xp.matmul(g, v.swapaxes(-1, -2))
    gs -= xp.einsum("...ij,...ij->...i", gs, w)[..., None]
    gs *= w
    gq = xp.matmul(gs, k)
    gq *= scale
    gk = xp.matmul(gs.swapaxes(-1, -2), q)
    gk *= scale
    return _out(gq, d), _out(gk, d), _out(gv, d), _out(gs, d)


def _rows(t, d, n):
    """t's values as a C-ordered (rows, n) matrix (a copy only when the layout needs one)."""
    return xp.ascontiguousarray(_vals(t, d)).reshape(-1, n)


def _row_sums(x):
    """Each row's sum of a C-ordered float (rows, n) matrix, as a column: one matrix-vector product
    (numpy's reduce costs ~10x more on short rows)."""
    return (x @ xp.ones(x.shape[1], x.dtype))[:, None]


def _col_sums(x):
    return xp.ones(x.shape[0], x.dtype) @ x


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    d = input._dtype
    n = 1
    for s in normalized_shape:
        n *= s
    stat_shape = input._shape[:input.dim() - len(normalized_shape)] + (1,) * len(normalized_shape)
    x = _rows(input, d, n)
    if not x.size:
        zero = xp.zeros(stat_shape, x.dtype)
        return _out(x.reshape(input._shape).copy(), d), _out(zero, d), _out(zero.copy(), d)
    mean = _row_sums(x)
    mean /= n
    xc = x - mean
    var = xp.einsum("ij,ij->i", xc, xc)[:, None]
    var /= n
    var += eps
    rstd = xp.sqrt(var, out=var)
    xp.reciprocal(rstd, out=rstd)
    xc *= rstd
    if weight is not None:
        xc *= _vals(weight, d).reshape(n)
    if bias is not None:
        xc += _vals(bias, d).reshape(n)
    return _out(xc.reshape(input._shape), d), _out(mean.reshape(stat_shape), d), _out(rstd.reshape(stat_shape), d)


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    d = input._dtype
    n = 1
    for s in normalized_shape:
        n *= s
    g, x = _rows(grad_out, d, n), _rows(input, d, n)
    mu, r = _vals(mean, d).reshape(-1, 1), _vals(rstd, d).reshape(-1, 1)
    xhat = x - mu
    xhat *= r
    gi = gw = gb = None
    if output_mask[1] and weight is not None:
        gw = _out(_col_sums(g * xhat).reshape(weight._shape), d)
    if output_mask[2] and bias is not None:
        gb = _out(_col_sums(g).reshape(bias._shape), d)
    if output_mask[0]:
        gg = g * _vals(weight, d).reshape(n) if weight is not None else g.copy()
        if n:
            a = _row_sums(gg)
            a /= n
            b = xp.einsum("ij,ij->i", gg, xhat)[:, None]
            b /= n
            gg -= a
            xhat *= b
            gg -= xhat
            gg *= r
        gi = _out(gg.reshape(input._shape), d)
    return gi, gw, gb


# erfc(z) = t * exp(-z^2 + P(t)), t = 1 / (1 + z / 2), P of degree 9 (Numerical Recipes' erfcc)
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587,
         -0.82215223, 0.17087277)
_SQRT_HALF = float(xp.sqrt(0.5))
_INV_SQRT_2PI = float(1 / xp.sqrt(2 * xp.pi))
_SQRT_2_OVER_PI = float(xp.sqrt(2 / xp.pi))
_F = xp.float32
_C9 = _F(_ERFC[9])
_HORNER = tuple(_F(c) for c in _ERFC[8:0:-1])
_C0_HALF = _F(_ERFC[0] + xp.log(0.5))  # erfc(z) / 2 = t exp(-z^2 + P(t) + ln 1/2): the halving is free
_T_SCALE = _F(_SQRT_HALF * 0.5)


def _normal_cdf(x, pdf=False):
    """(Phi(x), exp(-x^2 / 2) or None) of a float32 or float64 array, in its dtype.

    float32 goes in whole-array passes, as few as the formula allows (a pass over a 1 MiB array
    costs about as much as numpy's call overhead a thousand times over): the tail q = Phi(-|x|)
    from the erfc fit, then Phi(x) = q + [x > 0] (1 - 2q), exact in the negative tail (a masked
    or xp.where pass costs tens of times more, on random signs).
    """
    if x.dtype == xp.float64:
        return 0.5 * (1.0 + _erf(x * _SQRT_HALF)), (xp.exp(-0.5 * x * x) if pdf else None)
    a = xp.abs(x)
    t = a * _T_SCALE
    t += _F(1.0)
    xp.reciprocal(t, out=t)
    q = t * _C9
    for c in _HORNER:
        q += c
        q *= t
    q += _C0_HALF
    xp.square(a, out=a)
    a *= _F(-0.5)  # -z^2 = -x^2 / 2
    q += a
    xp.exp(q, out=q)
    q *= t  # q = Phi(-|x|)
    e = xp.exp(a, out=a) if pdf else None
    r = xp.multiply(q, _F(-2.0), out=t)
    r += _F(1.0)
    r *= x > 0
    r += q
    return r, e


def _gelu_vals(self):
    d = self._dtype
    x = _vals(self, d)
    return d, (x if x.ndim else x.reshape(1))


def gelu(self, approximate="none"):
    d, x = _gelu_vals(self)
    if approximate == "tanh":
        x = x.astype(xp.float64)  # 1 + tanh(u) cancels for u << 0: float64 keeps float32's precision
        inner = x * x
        inner *= 0.044715
        inner += 1.0
        inner *= x
        inner *= _SQRT_2_OVER_PI
        y = xp.tanh(inner, out=inner)
        y += 1.0
        y *= x
        y *= 0.5
    else:
        y, _ = _normal_cdf(x)
        y *= x
    return _out(y.reshape(self._shape), d)


def gelu_backward(grad_output, self, approximate="none"):
    d, x = _gelu_vals(self)
    g = _vals(grad_output, d)
    if approximate == "tanh":
        x = x.astype(xp.float64)  # 1 + tanh(u) and 1 - tanh(u)^2 cancel for u << 0
        x2 = x * x
        inner = x2 * 0.044715
        inner += 1.0
        inner *= x
        inner *= _SQRT_2_OVER_PI
        th = xp.tanh(inner, out=inner)
        # d/dx [x (1 + tanh u) / 2] = (1 + tanh u) / 2 + x (1 - tanh^2 u) u' / 2
        du = x2 * (3 * 0.044715)
        du += 1.0
        du *= _SQRT_2_OVER_PI
        sech2 = 1.0 - th * th
        sech2 *= du
        sech2 *= x
        th += 1.0
        th += sech2
        th *= 0.5
        dy = th
    else:
        dy, e = _normal_cdf(x, pdf=True)
        e *= x
        e *= _INV_SQRT_2PI
        dy += e
    dy = dy.reshape(self._shape) * g
    return _out(dy, d)


def fused_gelu(self):
    """(x * Phi(x), Phi(x)) of a float32 or float64 tensor: the CDF is kept for the backward."""
    d, x = _gelu_vals(self)
    cdf, _ = _normal_cdf(x)
    y = xp.multiply(cdf, x)
    return _out(y.reshape(self._shape), d), _out(cdf.reshape(self._shape), d)


def fused_gelu_backward(grad, self, cdf):
    """g * (Phi(x) + x phi(x)) from the kept Phi(x): phi's exp is the one transcendental pass."""
    d, x = _gelu_vals(self)
    g = _vals(grad, d)
    e = xp.multiply(x, x)
    e *= -0.5
    xp.exp(e, out=e)
    e *= x
    e *= _INV_SQRT_2PI
    e += _vals(cdf, d).reshape(e.shape)
    e *= g.reshape(e.shape)
    return _out(e.reshape(self._shape), d)


KERNELS = {
    "gelu": quiet(gelu), "gelu_backward": quiet(gelu_backward),
    "_fused_gelu": quiet(fused_gelu), "_fused_gelu_backward": quiet(fused_gelu_backward),
    "_fused_sdpa": quiet(fused_sdpa), "_fused_sdpa_backward": quiet(fused_sdpa_backward),
    "native_layer_norm": quiet(native_layer_norm), "native_layer_norm_backward": quiet(native_layer_norm_backward),
}
