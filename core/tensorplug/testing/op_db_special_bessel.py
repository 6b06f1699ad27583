"""Op database entries of the random in-place fills ``exponential_``, ``geometric_``, ``cauchy_``,
``log_normal_`` (:mod:`tensorplug.ops.random`) and of the Bessel, Airy and incomplete gamma functions
(:mod:`tensorplug.ops.special_bessel`).

Imported at the end of :mod:`.op_db`. The random fills are checked by shape, dtype and reproducibility
under ``manual_seed``, and by their errors. The special functions' references are numpy code written
out here independently of the kernels (plain quadrature of the integral representations and the
power series, in float64), so they check the kernels' branches against a different method.
"""

from __future__ import annotations

import math

import numpy as np

import tensorplug as tp

from . import samples as S
from .opinfo import OP_DB, OpInfo, SampleInput
from .samples import FLOATING, INTEGRAL, make_tensor, small_when_grad as _small_when_grad
from .samples import error_input as _err, errors_of as _errors


def _add(name, op, ref, dtypes, samples, **kw):
    info = OpInfo(name=name, op=op, ref=ref, dtypes=tuple(dtypes), sample_inputs=_small_when_grad(samples), **kw)
    OP_DB.append(info)
    return info


def _t(shape, dtype=tp.float32, seed=0, **kw):
    return make_tensor(shape, dtype, seed=seed, **kw)


# -- random in-place fills ---------------------------------------------------------------------------------
def _on_copy(method_name):
    """``Tensor.<method_name>`` applied to a clone of the input (a functional form of an in-place fill)."""
    fn = getattr(tp.Tensor, method_name)

    def op(input, *args, **kwargs):
        return fn(input.clone(), *args, **kwargs)
    op.__name__ = op.__qualname__ = method_name
    op.__doc__ = f"``Tensor.{method_name}`` applied to a clone of the input."
    return op


def _random_samples(*args):
    def sample_inputs(device, dtype, requires_grad):
        for i, (name, shape, kw) in enumerate(S.LAYOUTS):
            yield SampleInput(make_tensor(shape, dtype, seed=i, **kw), tuple(args), name=name)
    return sample_inputs


def _random(name, args, dtypes, errors):
    _add(name, _on_copy(name), None, dtypes, _random_samples(*args), random=True, supports_autograd=False,
         inplace=getattr(tp.Tensor, name), aten=(name,), error_inputs=_errors(*errors))


_random("exponential_", (1.5,), FLOATING, (
    lambda: _err(RuntimeError, r"exponential_ expects lambda > 0.0, but found lambda=0", _t((3,)), 0.0),
    lambda: _err(RuntimeError, "Exponential distribution is a continuous probability distribution. dtype must be "
                               "a floating point but you specified Long", _t((3,), tp.int64))))
_random("geometric_", (0.3,), FLOATING + INTEGRAL, (
    lambda: _err(RuntimeError, r"geometric_ expects p to be in \(0, 1\), but got p=1", _t((3,)), 1.0),
    lambda: _err(NotImplementedError, "\"geometric_cpu\" not implemented for 'Bool'", _t((3,), tp.bool), 0.5)))
_random("cauchy_", (1.0, 0.5), FLOATING, (
    lambda: _err(RuntimeError, r"cauchy_ expects sigma > 0.0, but found sigma=-1", _t((3,)), 0.0, -1.0),
    lambda: _err(RuntimeError, "Cauchy distribution is a continuous probability distribution. dtype must be a "
                               "floating point but you specified int", _t((3,), tp.int32))))
_random("log_normal_", (0.5, 0.25), FLOATING, (
    lambda: _err(RuntimeError, r"log_normal_ expects std > 0.0, but found std=0", _t((3,)), 0.0, 0.0),
    lambda: _err(NotImplementedError, "\"log_normal_cpu\" not implemented for 'Long'", _t((3,), tp.int64))))


# -- Bessel and Airy functions -------------------------------------------------------------------------------
_NO_HALF = tuple(d for d in S.ALL if d not in (tp.float16, tp.bfloat16))
_BESSEL_TOL = {"atol": 1e-9, "rtol": 1e-9}
_GL_X, _GL_W = np.polynomial.legendre.leggauss(400)


def _gl(f, lo, hi):
    """int_lo^hi f(t) dt by 400-point Gauss-Legendre, per element (lo, hi arrays shaped like f's broadcast)."""
    lo, hi = np.asarray(lo, np.float64)[..., None], np.asarray(hi, np.float64)[..., None]
    t = (hi - lo) / 2 * _GL_X + (hi + lo) / 2
    return ((hi - lo)[..., 0] / 2) * (f(t) * _GL_W).sum(axis=-1)


def _fin(x):
    """x as float64 with the non-finite and non-positive entries replaced by 1 (their values are set apart)."""
    return np.where(np.isfinite(x), x, 1.0)


def _j_ref(n):
    def j(x):
        # (1/2pi) int_0^2pi cos(n t - x sin t) dt: the trapezoid rule is exact to rounding for |x| < 100
        t = 2 * np.pi * np.arange(512) / 512
        v = np.cos(n * t - _fin(x)[..., None] * np.sin(t)).mean(axis=-1)
        return np.where(np.isfinite(x), v, np.nan)
    return j


def _y_ref(n):
    def y(x):
        xx = np.where(np.isfinite(x) & (x > 0), x, 1.0)[..., None]
        first = _gl(lambda t: np.sin(xx * np.sin(t) - n * t), np.zeros(xx.shape[:-1]), np.full(xx.shape[:-1], np.pi))
        top = np.arcsinh((60.0 + n * 40.0) / xx[..., 0])
        second = _gl(lambda t: (np.exp(n * t) + (-1) ** n * np.exp(-n * t)) * np.exp(-xx * np.sinh(t)),
                     np.zeros(top.shape), top)
        v = (first - second) / np.pi
        return np.where(x == 0, -np.inf, np.where(np.isfinite(x) & (x > 0), v, np.nan))
    return y


def _i_ref(n):
    def i(x):
        t = 2 * np.pi * np.arange(512) / 512
        v = (np.exp(_fin(x)[..., None] * np.cos(t)) * np.cos(n * t)).mean(axis=-1)
        return np.where(np.isfinite(x), v, np.nan)
    return i


def _k_ref(n, scaled):
    def k(x):
        xx = np.where(np.isfinite(x) & (x > 0), x, 1.0)[..., None]
        top = np.arccosh(1.0 + 80.0 / xx[..., 0])
        v = _gl(lambda t: np.exp(-xx * 2 * np.sinh(t / 2) ** 2) * np.cosh(n * t), np.zeros(top.shape), top)
        v = v if scaled else v * np.exp(-xx[..., 0])
        return np.where(x == 0, np.inf, np.where(x == np.inf, 0.0, np.where(x > 0, v, np.nan)))
    return k


def _sph_j0_ref(x):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 1.0, np.where(np.isinf(x), 0.0, np.sin(x) / np.where(x == 0, 1.0, x)))


def _airy_ref(x):
    # x > 0: sqrt(x/3) K_1/3(zeta) / pi by quadrature; x <= 0: Maclaurin's series in 40-digit decimals
    import decimal  # lazy: only this reference needs it

    shape = np.shape(x)
    xs = np.asarray(x, np.float64).reshape(-1)
    out = np.full(xs.shape, np.nan)
    pos = np.isfinite(xs) & (xs > 0)
    if pos.any():
        xp = xs[pos]
        z = 2.0 / 3.0 * xp ** 1.5
        out[pos] = np.sqrt(xp / 3) / np.pi * _k_ref(1.0 / 3.0, False)(z)
    ctx = decimal.Context(prec=40)
    c1 = ctx.divide(1, ctx.multiply(ctx.power(3, ctx.divide(2, 3)), decimal.Decimal("1.3541179394264004169")))
    c2 = ctx.divide(1, ctx.multiply(ctx.power(3, ctx.divide(1, 3)), decimal.Decimal("2.6789385347077476337")))
    for idx in np.nonzero(np.isfinite(xs) & (xs <= 0))[0]:
        v = decimal.Decimal(float(xs[idx]))
        v3 = ctx.multiply(ctx.multiply(v, v), v)
        f, g = decimal.Decimal(1), v
        tf, tg = decimal.Decimal(1), v
        for k in range(1, 200):
            tf = ctx.divide(ctx.multiply(tf, v3), (3 * k - 1) * (3 * k))
            tg = ctx.divide(ctx.multiply(tg, v3), (3 * k) * (3 * k + 1))
            f, g = ctx.add(f, tf), ctx.add(g, tg)
            if abs(tf) + abs(tg) < decimal.Decimal("1e-35"):
                break
        out[idx] = float(ctx.subtract(ctx.multiply(c1, f), ctx.multiply(c2, g)))
    return out.reshape(shape)


def _unary_ref(fn):
    def ref(x):
        a = np.asarray(x)
        with np.errstate(all="ignore"):
            r = fn(S.f64(a))
        return S.cast(np.asarray(r, np.float64), S.float_dtype(a.dtype))
    return ref


_SPECIAL_VALUES = (np.inf, -np.inf, np.nan, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, 7.25, -8.5, 30.0, -40.0)


def _unary_samples(values=_SPECIAL_VALUES):
    def sample_inputs(device, dtype, requires_grad):
        for i, (name, shape, kw) in enumerate(S.LAYOUTS):
            yield SampleInput(make_tensor(shape, dtype, seed=i, **kw), name=name)
        if dtype.is_floating_point:
            yield SampleInput(S.special_tensor(dtype, values), name="special_values")
    return sample_inputs


_REFS = {
    "bessel_j0": _j_ref(0), "bessel_j1": _j_ref(1), "bessel_y0": _y_ref(0), "bessel_y1": _y_ref(1),
    "modified_bessel_i0": _i_ref(0), "modified_bessel_i1": _i_ref(1),
    "modified_bessel_k0": _k_ref(0, False), "modified_bessel_k1": _k_ref(1, False),
    "scaled_modified_bessel_k0": _k_ref(0, True), "scaled_modified_bessel_k1": _k_ref(1, True),
    "spherical_bessel_j0": _sph_j0_ref, "airy_ai": _airy_ref,
}
for _name, _fn in _REFS.items():
    _add(f"special.{_name}", getattr(tp.special, _name), _unary_ref(_fn), _NO_HALF,
         # the reference's series for Ai cancels too much below -9 (the kernel's asymptotic form is tested elsewhere)
         _unary_samples(_SPECIAL_VALUES[:-1] if _name == "airy_ai" else _SPECIAL_VALUES),
         supports_autograd=False, aten=(f"special_{_name}",), **_BESSEL_TOL,
         error_inputs=_errors(lambda n=_name: _err(NotImplementedError, f"\"{n}_cpu\" not implemented for 'Half'",
                                                   _t((3,), tp.float16))))


# -- incomplete gamma --------------------------------------------------------------------------------------------
def _p_scalar(a, x):
    """P(a, x) for one pair, by the series (x < a + 1) or 1 - the continued fraction (Legendre's, modified Lentz)."""
    # PyTorch's order of the special cases (NaN compares false)
    if x < 0 or a < 0:
        return math.nan
    if a == 0:
        return 1.0 if x > 0 else math.nan
    if x == 0:
        return 0.0
    if math.isinf(a):
        return math.nan if math.isinf(x) else 0.0
    if math.isinf(x):
        return 1.0
    if math.isnan(a) or math.isnan(x):
        return math.nan
    lead = math.exp(a * math.log(x) - x - math.lgamma(a))
    if x < a + 1:
        term = total = 1.0 / a
        n = a
        while abs(term) > 1e-17 * abs(total):
            n += 1
            term *= x / n
            total += term
        return total * lead, 1.0 - total * lead
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    q = lead * h
    return 1.0 - q, q


def _igamma_ref(upper):
    def ref(a, x):
        a, x = np.asarray(a), np.asarray(x)
        d = a.dtype if a.dtype == x.dtype else np.result_type(a, x)
        A, X = np.broadcast_arrays(S.f64(a), S.f64(x))
        out = np.empty(A.shape)
        for idx in np.ndindex(A.shape):
            r = _p_scalar(float(A[idx]), float(X[idx]))
            if isinstance(r, tuple):
                out[idx] = r[1] if upper else r[0]
            else:
                out[idx] = (1.0 - r if r == r else r) if upper else r
        return out.astype(d)
    return ref


def _igamma_samples(device, dtype, requires_grad):
    mk = make_tensor
    rg = requires_grad
    yield SampleInput(mk((3, 4), dtype, 0.2, 9, seed=1), (mk((3, 4), dtype, 0.1, 12, seed=2, requires_grad=rg),),
                      name="matrix")
    yield SampleInput(mk((4,), dtype, 0.5, 6, seed=3), (mk((3, 1), dtype, 0.1, 8, seed=4, requires_grad=rg),),
                      name="broadcast")
    yield SampleInput(mk((2, 3), dtype, 0.5, 5, seed=5, transposed=True),
                      (mk((2, 3), dtype, 0.1, 9, seed=6, noncontiguous=True, requires_grad=rg),), name="strided")
    if not rg:
        yield SampleInput(mk((0, 3), dtype, seed=7), (mk((0, 3), dtype, seed=8),), name="zero_size")
        a, b = S.special_pair(dtype, (np.inf, np.nan, 0.0, 0.5, 3.0, -1.0, 1e-3))
        yield SampleInput(a, (b,), name="special_values")
        yield SampleInput(mk((30,), dtype, 30, 60, seed=9), (mk((30,), dtype, 25, 70, seed=10),), name="large_a")


for _name, _upper in (("igamma", False), ("igammac", True)):
    _add(_name, getattr(tp, _name), _igamma_ref(_upper), (tp.float32, tp.float64), _igamma_samples,
         inplace=getattr(tp.Tensor, _name + "_"), aten=(_name, _name + "_"), atol=1e-9, rtol=1e-9,
         error_inputs=_errors(
             lambda n=_name: _err(NotImplementedError, f"\"{n}_cpu\" not implemented for 'Long'",
                                  _t((3,), tp.int64), _t((3,), tp.int64))))
