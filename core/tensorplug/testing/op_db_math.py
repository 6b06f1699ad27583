"""Op database entries of the pointwise math, the special functions (``tensorplug.special``,
named ``special.<name>``) and the statistics (scans, order statistics, quantiles, NaN-aware sums).

The references are independent of the kernels: Python's ``math`` (``erf``, ``erfc``, ``lgamma``),
bisection for the inverses, central differences of ``lgamma`` for ``digamma``, direct sums with
an integral tail for ``polygamma`` and ``zeta``, numpy's ``i0`` and power series for the Bessel
functions, numpy sorting for the order statistics.

``register(db)`` adds the entries; ``db`` is the namespace of :mod:`.op_db`, whose constructors
(``unary``, ``binary``, ``_add`` ...) this module uses. op_db calls it at its end, so this module
does not import op_db (which would make an import cycle).
"""

from __future__ import annotations

import math

import numpy as np

import tensorplug as tp

from . import samples as S
from .opinfo import SampleInput
from .samples import ALL, INTEGRAL, FLOATING, NO_BOOL, make_tensor

_NO_HALF = tuple(d for d in ALL if d not in (tp.float16, tp.bfloat16))
_FLOAT_32_64 = (tp.float32, tp.float64)


class _BF16_INFO:
    max, min = 3.3895313892515355e38, -3.3895313892515355e38


# -- scalar references ----------------------------------------------------------------------------------
def _vec(fn):
    v = np.vectorize(fn, otypes=[np.float64])

    def ref(x):
        x = np.asarray(x, dtype=np.float64)
        return v(x) if x.size else x.copy()
    return ref


def _erfinv1(x):
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    if abs(x) == 1:
        return math.copysign(math.inf, x)
    lo, hi = 0.0, 10.0
    a = abs(x)
    for _ in range(200):  # bisection: erfc in the tail, where 1 - |x| is exact
        mid = (lo + hi) / 2
        if (math.erfc(mid) > 1 - a) if a > 0.5 else (math.erf(mid) < a):
            lo = mid
        else:
            hi = mid
    return math.copysign((lo + hi) / 2, x)


def _lgamma1(x):
    if math.isnan(x):
        return x
    if math.isinf(x) or (x <= 0 and x == math.floor(x)):
        return math.inf
    return math.lgamma(x)


def _digamma1(x):
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    if x == 0:
        return math.inf if math.copysign(1, x) < 0 else -math.inf
    if x < 0 and x == math.floor(x):
        return math.nan
    if x < 0.5:  # reflection
        return _digamma1(1 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 20:
        acc -= 1 / x
        x += 1
    h = 1e-3 * x  # lgamma is smooth here: a central difference with a Richardson step
    d1 = (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)
    d2 = (math.lgamma(x + h / 2) - math.lgamma(x - h / 2)) / h
    return acc + (4 * d2 - d1) / 3


def _hurwitz(s, q):
    """sum_k (q + k) ** -s for s > 1 and q > 0: 40 terms, then the Euler-Maclaurin tail."""
    total = 0.0
    for k in range(40):
        total += (q + k) ** -s
    w = q + 40
    return total + w ** (1 - s) / (s - 1) + 0.5 * w ** -s + s * w ** (-s - 1) / 12 \
        - s * (s + 1) * (s + 2) * w ** (-s - 3) / 720


def _zeta1(s, q):
    # Cephes' order of the domain rules, which PyTorch keeps
    if s == 1:
        return math.inf
    if s < 1:
        return math.nan
    if q == -math.inf or (q <= 0 and q == math.floor(q)):
        return math.inf
    if math.isnan(s) or math.isnan(q):
        return math.nan
    if s == math.inf:
        return 1.0 if q == 1 else (math.inf if q < 1 else math.nan)
    if q == math.inf:
        return math.nan
    if q < 0:
        if s != math.floor(s):
            return math.nan
        shift = math.ceil(-q) + 1  # sum the first terms directly until the base is positive
        return sum((q + k) ** -s for k in range(shift)) + _hurwitz(s, q + shift)
    return _hurwitz(s, q)


def _polygamma_ref(n, x):
    out = _float_of(x)
    x = S.f64(x)
    if n == 0:
        r = _vec(_digamma1)(x)
    else:
        z = np.vectorize(lambda v: _zeta1(n + 1.0, v), otypes=[np.float64])(x) if x.size else x.copy()
        r = (-1) ** (n + 1) * math.factorial(n) * z
        if n == 1:  # PyTorch's trigamma: 0 at inf, NaN at -inf
            r = np.where(x == np.inf, 0.0, np.where(x == -np.inf, np.nan, r))
    return S.cast(r, out)


def _float_of(x):
    return S.float_dtype(np.asarray(x).dtype)


def _bessel_series(x, order):
    x = np.abs(np.asarray(x, dtype=np.float64))
    q = (x / 2) ** 2
    term = np.ones_like(x) if order == 0 else x / 2
    s = term.copy()
    for k in range(1, 120):
        term = term * q / (k * (k + order))
        s = s + term
    return s


def _i1(x):
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.copysign(_bessel_series(np.where(np.isinf(x), 0.0, x), 1), x)
    return np.where(np.isinf(x) | np.isnan(x), np.nan, r)


def _i0(x):
    x = np.asarray(x, dtype=np.float64)
    r = np.i0(np.where(np.isfinite(x), x, 0.0))
    return np.where(np.isfinite(x), r, np.nan)


def _i0e(x):
    x = np.asarray(x, dtype=np.float64)
    r = np.i0(np.where(np.isfinite(x), x, 0.0)) * np.exp(-np.abs(np.where(np.isfinite(x), x, 0.0)))
    return np.where(np.isinf(x), 0.0, np.where(np.isnan(x), np.nan, r))


def _i1e(x):
    x = np.asarray(x, dtype=np.float64)
    fin = np.where(np.isfinite(x), x, 0.0)
    r = _i1(fin) * np.exp(-np.abs(fin))
    return np.where(np.isinf(x), 0.0, np.where(np.isnan(x), np.nan, r))


def _ndtr1(x):
    return 0.5 * math.erfc(-x / math.sqrt(2)) if not math.isnan(x) else x


def _log_ndtr1(x):
    if math.isnan(x):
        return x
    if x < -20:  # the asymptotic series of log(cdf) in the far left tail
        return -x * x / 2 - math.log(-x) - 0.5 * math.log(2 * math.pi) + math.log1p(-1 / x ** 2 + 3 / x ** 4)
    return math.log(_ndtr1(x)) if x < 0 else math.log1p(-0.5 * math.erfc(x / math.sqrt(2)))


def _ndtri1(p):
    if math.isnan(p) or p < 0 or p > 1:
        return math.nan
    if p in (0.0, 1.0):
        return math.copysign(math.inf, p - 0.5)
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if (_ndtr1(mid) < p) if p < 0.5 else (0.5 * math.erfc(mid / math.sqrt(2)) > 1 - p):
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _erfcx1(x):
    if math.isnan(x):
        return x
    if x < 26:
        return math.exp(x * x) * math.erfc(x) if x > -26.7 else math.inf
    return 1 / (x * math.sqrt(math.pi)) * (1 - 1 / (2 * x * x) + 3 / (4 * x ** 4))


def _entr(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(x > 0, -x * np.log(np.where(x > 0, x, 1.0)), np.where(x == 0, 0.0, -np.inf))
    return np.where(np.isnan(x), np.nan, r)


def _sinc(x):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(x == 0, 1.0, np.sin(np.pi * x) / (np.pi * x))


def _logit(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (1 - x))


def _nan_to_num_ref(x, nan=None, posinf=None, neginf=None):
    if not S.is_float(x.dtype):
        return x.copy()
    fi = _BF16_INFO if x.dtype == S.BF16 else np.finfo(x.dtype)
    v = S.f64(x)
    v = np.where(np.isnan(v), 0.0 if nan is None else nan, v)
    v = np.where(v == np.inf, float(fi.max) if posinf is None else posinf, v)
    v = np.where(v == -np.inf, float(fi.min) if neginf is None else neginf, v)
    return S.cast(v, x.dtype)


def _signbit(x):
    if x.dtype == np.bool_:
        return np.zeros(x.shape, np.bool_)
    return np.signbit(S.f64(x)) if S.is_float(x.dtype) else x < 0


def register(db):
    """Add the entries, with op_db's constructors (``db``: op_db's module namespace)."""
    _float_entries(db)
    _binary_entries(db)
    _special_entries(db)
    _statistics_entries(db)


# -- tensorplug.* pointwise --------------------------------------------------------------------------------------
def _float_entries(db):
    # name, reference on float64 values, value range
    for name, fn, rng in (
            ("asinh", np.arcsinh, None), ("acosh", np.arccosh, (1.1, 9)), ("atanh", np.arctanh, (-0.9, 0.9)),
            ("erfc", _vec(math.erfc), None), ("erfinv", _vec(_erfinv1), (-0.95, 0.95)),
            ("lgamma", _vec(_lgamma1), (0.1, 9)), ("digamma", _vec(_digamma1), (0.1, 9)),
            ("i0", _i0, None), ("sinc", _sinc, None),
            ("deg2rad", lambda x: x * (math.pi / 180), None), ("rad2deg", lambda x: x * (180 / math.pi), None)):
        lo, hi = rng or (None, None)
        db.unary(name, fn, low=lo, high=hi, avoid_zero=name == "sinc", errors=db._errors(db._not_a_tensor(name)))
    db._alias("asinh", "arcsinh", "arcsinh_")
    db._alias("acosh", "arccosh", "arccosh_")
    db._alias("atanh", "arctanh", "arctanh_")
    db.unary("sgn", db._torch_sign, kind="same", int_fn=lambda x: np.sign(x.astype(np.int64)) if x.dtype != np.bool_
             else x.copy(), avoid_zero=True)
    db.unary("signbit", _signbit, kind="bool", grad=False, inplace=False)

    def logit_extra(dtype, requires_grad):
        t = make_tensor((3, 4), dtype, 0.02, 0.98, seed=5, requires_grad=requires_grad)
        yield SampleInput(t, (), {"eps": 0.1}, name="eps")
    info = db.unary("logit", _logit, low=0.05, high=0.95, extra=logit_extra)
    info.ref = lambda x, eps=None: S.cast(_logit(S.f64(x), eps), _float_of(x))

    def polygamma_samples(device, dtype, requires_grad):
        for n in (0, 1, 2, 3):
            for i, (name, shape, kw) in enumerate(S.LAYOUTS):
                t = make_tensor(shape, dtype, 0.2, 9, seed=i + 10 * n, requires_grad=requires_grad, **kw)
                yield SampleInput(t, (n,), name=f"n{n}_{name}")
        if dtype.is_floating_point and not requires_grad:
            yield SampleInput(S.special_tensor(dtype, (math.inf, math.nan, 0.5, -2.5, 3.0)), (1,),
                              name="special_values")

    def polygamma_ref(x, n):
        return _polygamma_ref(n, x)
    db._add("polygamma", tp.Tensor.polygamma, polygamma_ref, ALL, polygamma_samples,
            aten=("polygamma", "polygamma_"), inplace=tp.Tensor.polygamma_, atol=1e-7, rtol=1e-6,
            error_inputs=db._errors(lambda: db._err(RuntimeError, r"polygamma\(n, x\) does not support negative n",
                                                    db._t((3,)), -1)))

    def nan_to_num_samples(device, dtype, requires_grad):
        yield from db._unary_samples()(device, dtype, requires_grad)
        if dtype.is_floating_point and not requires_grad:
            yield SampleInput(S.special_tensor(dtype), (), {"nan": 1.5, "posinf": 9.0, "neginf": -9.0},
                              name="replacements")
    db._add("nan_to_num", tp.nan_to_num, _nan_to_num_ref, ALL, nan_to_num_samples, inplace=db._method("nan_to_num_"),
            aten=("nan_to_num", "nan_to_num_"))


def _binary_entries(db):
    def float_ref(np_fn):
        return db._float_binary_ref(np_fn)
    db.binary("hypot", db._promote_ref(np.hypot), FLOATING, mixed=False,
              errors=(lambda: db._err(NotImplementedError, db._not_impl("hypot", "Long"), db._t((3,), tp.int64),
                                      db._t((3,), tp.int64)),))
    db.binary("fmax", db._promote_ref(np.fmax), ALL, inplace=False)
    db.binary("fmin", db._promote_ref(np.fmin), ALL, inplace=False)
    db.binary("copysign", float_ref(np.copysign), ALL, scalars=(2, -2.5), rhs_nonzero=True,
              aten=("copysign.Tensor", "copysign.Scalar", "copysign_.Tensor", "copysign_.Scalar"))
    for name, fn in (("gcd", np.gcd), ("lcm", np.lcm)):
        db.binary(name, db._promote_ref(fn), INTEGRAL, grad=False, rhs_low=1, mixed=False,
                  errors=(lambda n=name: db._err(NotImplementedError, db._not_impl(n, "Float"), db._t((3,)),
                                                 db._t((3,))),))

    def xlogy_ref(a, b):
        vals, out = db._promoted(a, b)
        x, y = S.f64(vals[0]), S.f64(vals[1])
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log(y)))
        return S.cast(r, S.float_dtype(out))

    def xlog1py_ref(a, b):
        vals, out = db._promoted(a, b)
        x, y = S.f64(vals[0]), S.f64(vals[1])
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log1p(y)))
        return S.cast(r, S.float_dtype(out))
    db.binary("xlogy", xlogy_ref, ALL, scalars=(3, 2.5), rhs_low=0.1, rhs_high=9,
              aten=("xlogy.Tensor", "xlogy.Scalar_Other", "xlogy_.Tensor", "xlogy_.Scalar_Other"))
    db.binary("special.xlog1py", xlog1py_ref, ALL, op=tp.special.xlog1py, inplace=False, scalars=(3, 2.5),
              rhs_low=-0.9, rhs_high=9, aten=("special_xlog1py", "special_xlog1py.other_scalar"))

    def float_power_ref(a, b):
        # both operands in float64 as they are (no rounding to their promoted dtype first)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.asarray(np.power(S.f64(np.asarray(a)), S.f64(np.asarray(b))))
    # float_power_ refuses every self but float64 with a message of its own (tests/test_special_torch_oracle.py),
    # not the generic cast error the in-place check expects
    db.binary("float_power", float_power_ref, ALL, inplace=False, scalars=(2, 0.5), rhs_low=-2, rhs_high=3,
              grad_low=0.5,
              grad_high=3, aten=("float_power.Tensor_Tensor", "float_power.Tensor_Scalar", "float_power_.Tensor",
                                 "float_power_.Scalar"))
    db.binary("float_power.float64_self", float_power_ref, (tp.float64,), op=tp.float_power,
              inplace=tp.Tensor.float_power_, scalars=(2, 0.5), rhs_low=-2, rhs_high=3, grad_low=0.5, grad_high=3,
              aten=("float_power_.Tensor", "float_power_.Scalar"))

    def logaddexp2_ref(a, b):
        return db._float_binary_ref(np.logaddexp2)(a, b)
    db.binary("logaddexp2", logaddexp2_ref, FLOATING, inplace=False, mixed=False,
              errors=(lambda: db._err(NotImplementedError, db._not_impl("logaddexp2", "Long"), db._t((3,), tp.int64),
                                      db._t((3,), tp.int64)),))


# -- tensorplug.special ---------------------------------------------------------------------------------------
def _special_entries(db):
    sp = tp.special
    for name, fn, rng, dtypes in (
            ("erfcx", _vec(_erfcx1), None, _NO_HALF), ("i0e", _i0e, None, ALL), ("i1", _i1, None, ALL),
            ("i1e", _i1e, None, ALL), ("ndtri", _vec(_ndtri1), (0.05, 0.95), _NO_HALF),
            ("log_ndtr", _vec(_log_ndtr1), None, _NO_HALF), ("entr", _entr, (0.1, 9), ALL),
            ("ndtr", _vec(_ndtr1), None, ALL)):
        lo, hi = rng or (None, None)
        errors = None
        if dtypes is _NO_HALF:
            errors = db._errors(lambda n=name: db._err(NotImplementedError, db._not_impl(n, "Half"),
                                                       db._t((3,), tp.float16)))
        db.unary(f"special.{name}", fn, op=getattr(sp, name), dtypes=dtypes, low=lo, high=hi, inplace=False,
                 avoid_zero=name in ("i1", "i1e", "i0e"), errors=errors,
                 aten=("special_" + name,))

    def multigammaln_samples(device, dtype, requires_grad):
        for p in (1, 2, 3):
            yield SampleInput(make_tensor((3, 4), dtype, 2, 9, seed=p, requires_grad=requires_grad), (p,),
                              name=f"p{p}")

    def multigammaln_ref(x, p):
        v = S.f64(x)
        r = sum(_vec(_lgamma1)(v - j / 2) for j in range(p)) + p * (p - 1) / 4 * math.log(math.pi)
        return S.cast(r, _float_of(x))
    db._add("special.multigammaln", sp.multigammaln, multigammaln_ref, ALL, multigammaln_samples,
            aten=("special_multigammaln",),
            error_inputs=db._errors(lambda: db._err(RuntimeError, "p has to be greater than or equal to 1",
                                                    db._t((3,)), 0)))

    def zeta_samples(device, dtype, requires_grad):
        yield SampleInput(make_tensor((3, 4), dtype, 1.5, 9, seed=1), (make_tensor((3, 4), dtype, 0.5, 9, seed=2),),
                          name="matrix")
        yield SampleInput(make_tensor((4,), dtype, 2, 6, seed=3), (make_tensor((3, 1), dtype, 0.5, 5, seed=4),),
                          name="broadcast")
        yield SampleInput(make_tensor((3,), dtype, 2, 6, seed=5), (2.5,), name="python_other")
        if dtype.is_floating_point:
            a, b = S.special_pair(dtype, (math.inf, math.nan, 1.0, 0.5, -2.5, 3.0, 0.0, -2.0))
            yield SampleInput(a, (b,), name="special_values")

    def zeta_ref(x, q):
        vals, out = db._promoted(x, q)
        z = np.vectorize(_zeta1, otypes=[np.float64])(S.f64(vals[0]), S.f64(vals[1]))
        return S.cast(z, S.float_dtype(out))
    db._add("special.zeta", sp.zeta, zeta_ref, _NO_HALF, zeta_samples, supports_autograd=False,
            aten=("special_zeta",), atol=1e-7, rtol=1e-6,
            error_inputs=db._errors(lambda: db._err(NotImplementedError, db._not_impl("zeta", "Half"),
                                                    db._t((3,), tp.float16), db._t((3,), tp.float16))))


# -- statistics ----------------------------------------------------------------------------------------------------
def _axis(x, dim):
    return 0 if x.ndim == 0 else dim % x.ndim


def _scan_samples(db, special=True):
    def sample_inputs(device, dtype, requires_grad):
        for s in db._reduction_samples(dims="int", special=False)(device, dtype, requires_grad):
            s.kwargs.pop("keepdim", None)
            yield s
        if special and dtype.is_floating_point and not requires_grad:
            yield SampleInput(S.special_tensor(dtype), (0,), name="special_values")
    return sample_inputs


def _statistics_entries(db):
    def cumprod_ref(x, dim, dtype=None):
        out = db._sum_dtype(x, dtype)
        v = S.f64(x) if S.is_float(out) else x.astype(out)
        return S.cast(np.cumprod(v, axis=_axis(x, dim)).reshape(x.shape), out)

    def cumprod_samples(device, dtype, requires_grad):
        for s in _scan_samples(db)(device, dtype, requires_grad):
            if requires_grad and s.input.numel() > 30:
                continue  # products of many values leave float64's useful range for finite differences
            yield s
        v = np.array([[2.0, 0.0, 3.0, 0.5], [0.0, 0.0, 1.5, 2.0], [1.0, 2.0, 0.0, 4.0]])
        yield SampleInput(make_tensor(v.shape, dtype, values=v, requires_grad=requires_grad), (1,), name="zeros")
    db._add("cumprod", tp.cumprod, cumprod_ref, ALL, cumprod_samples, aten=("cumprod",),
            error_inputs=db._errors(lambda: db._err(IndexError, db._DIM_RANGE, db._t((3,)), 1)))

    def cumextreme_ref(acc):
        def ref(x, dim):
            if x.ndim == 0:
                return x.copy(), np.zeros((), np.int64)
            ax = _axis(x, dim)
            v = S.f64(x) if S.is_float(x.dtype) else x
            vals = acc(v, axis=ax)
            hit = (v == vals) | (np.isnan(v) & np.isnan(vals)) if S.is_float(x.dtype) else v == vals
            shape = [1] * x.ndim
            shape[ax] = x.shape[ax]
            pos = np.arange(x.shape[ax]).reshape(shape)
            idx = np.maximum.accumulate(np.where(hit, pos, 0), axis=ax) if x.size else np.zeros(x.shape, np.int64)
            return S.cast(vals, x.dtype), idx.astype(np.int64)
        return ref

    def distinct_scan(device, dtype, requires_grad):
        for s in db._reduction_samples(dims="int", special=False, distinct=True)(device, dtype, requires_grad):
            s.kwargs.pop("keepdim", None)
            yield s
        if dtype.is_floating_point and not requires_grad:
            v = np.array([1.0, 3.0, 3.0, np.nan, 2.0, np.nan, -np.inf])
            yield SampleInput(make_tensor(v.shape, dtype, values=v), (0,), name="ties_and_nan")
    for name, acc in (("cummax", np.maximum.accumulate), ("cummin", np.minimum.accumulate)):
        db._add(name, getattr(tp, name), cumextreme_ref(acc), ALL, distinct_scan, aten=(name,),
                error_inputs=db._errors(lambda: db._err(IndexError, db._DIM_RANGE, db._t((3,)), 1)))

    def logcumsumexp_ref(x, dim):
        if x.ndim == 0:
            return x.copy()
        return S.cast(np.logaddexp.accumulate(S.f64(x), axis=_axis(x, dim)), x.dtype)
    db._add("logcumsumexp", tp.logcumsumexp, logcumsumexp_ref, FLOATING, _scan_samples(db), aten=("logcumsumexp",),
            error_inputs=db._errors(
                lambda: db._err(NotImplementedError, db._not_impl("logcumsumexp_out", "Long"), db._t((3,), tp.int64),
                                0)))

    def aminmax_samples(device, dtype, requires_grad):
        for s in db._reduction_samples(dims="optional", empty=False, distinct=True)(device, dtype, requires_grad):
            s.kwargs = {"dim": s.args[0], **s.kwargs} if s.args else {}
            s.args = ()
            yield s
        yield SampleInput(make_tensor((2, 3), dtype, seed=3), kwargs={"keepdim": True}, name="all_keepdim")

    def aminmax_ref(x, dim=None, keepdim=False):
        v = S.f64(x) if S.is_float(x.dtype) else x
        if dim is None:
            lo, hi = np.min(v), np.max(v)
            if keepdim:
                lo, hi = np.reshape(lo, (1,) * x.ndim), np.reshape(hi, (1,) * x.ndim)
        else:
            ax = _axis(x, dim)
            kd = bool(keepdim) and x.ndim > 0
            lo, hi = np.min(v, axis=ax, keepdims=kd), np.max(v, axis=ax, keepdims=kd)
            if x.ndim == 0:
                lo, hi = v.copy(), v.copy()
        return S.cast(np.asarray(lo), x.dtype), S.cast(np.asarray(hi), x.dtype)
    db._add("aminmax", tp.aminmax, aminmax_ref, ALL, aminmax_samples, aten=("aminmax",), supports_autograd=False,
            error_inputs=db._errors(lambda: db._err(RuntimeError, r"aminmax\(\): cannot compute aminmax over an "
                                                                  "empty dimension", db._t((0, 3)))))

    _order_entries(db)
    _quantile_entries(db)
    _nan_entries(db)
    _clamp_entries(db)


def _sorted_pick(x, dim, keepdim, pick):
    """values, indices of the element ``pick(n, valid)`` of each slice in stable sorted order (NaN last)."""
    xx = x.reshape(1) if x.ndim == 0 else x
    ax = _axis(x, dim)
    v = S.f64(xx) if S.is_float(x.dtype) else xx
    order = np.argsort(v, axis=ax, kind="stable")
    valid = np.sum(~np.isnan(v), axis=ax, keepdims=True) if S.is_float(x.dtype) else \
        np.full(np.sum(v == v, axis=ax, keepdims=True).shape, v.shape[ax])
    k = np.broadcast_to(pick(v.shape[ax], valid), valid.shape).astype(np.int64)
    idx = np.take_along_axis(order, k, axis=ax)
    vals = np.take_along_axis(xx, idx, axis=ax)
    if not keepdim or x.ndim == 0:
        vals, idx = vals.squeeze(ax), idx.squeeze(ax)
        if x.ndim == 0:
            vals, idx = vals.reshape(()), idx.reshape(())
    return vals.copy(), idx.astype(np.int64)


def _order_entries(db):
    def median_ref(x, dim=None, keepdim=False):
        pick = lambda n, valid: np.where(valid < n, valid, (n - 1) // 2)  # noqa: E731
        if dim is None:
            return _sorted_pick(x.reshape(-1), 0, False, pick)[0]
        return _sorted_pick(x, dim, keepdim, pick)

    def nanmedian_ref(x, dim=None, keepdim=False):
        pick = lambda n, valid: np.where(valid == 0, (n - 1) // 2, (np.maximum(valid, 1) - 1) // 2)  # noqa: E731
        if dim is None:
            return _sorted_pick(x.reshape(-1), 0, False, pick)[0]
        return _sorted_pick(x, dim, keepdim, pick)

    def order_samples(device, dtype, requires_grad):
        for s in db._reduction_samples(dims="optional", empty=False, distinct=True)(device, dtype, requires_grad):
            if s.name.startswith("large") and requires_grad:
                continue
            if s.input.numel() == 0:
                continue
            yield s
        if dtype.is_floating_point and not requires_grad:
            v = np.array([[3.0, np.nan, 1.0, np.nan, 2.0], [5.0, 4.0, 4.5, 1.0, 9.0], [np.nan] * 5])
            yield SampleInput(make_tensor(v.shape, dtype, values=v), (1,), name="nan")
            yield SampleInput(make_tensor(v.shape, dtype, values=v), name="nan_all")

    no_bool_dims = NO_BOOL
    for name, ref in (("median", median_ref), ("nanmedian", nanmedian_ref)):
        db._add(name, getattr(tp, name), ref, no_bool_dims, order_samples, aten=(name, name + ".dim"),
                error_inputs=db._errors(
                    lambda n=name: db._err(IndexError, rf"{n}\(\): Expected reduction dim 0 to have non-zero size",
                                           db._t((0, 3)), 0),
                    lambda n=name: db._err(NotImplementedError, db._not_impl("median_out", "Bool"),
                                           db._t((3,), tp.bool), 0)))

    def kth_samples(device, dtype, requires_grad):
        for s in db._reduction_samples(dims="int", empty=False, distinct=True)(device, dtype, requires_grad):
            if s.input.numel() == 0:
                continue
            n = s.input.shape[s.args[0]] if s.input.dim() else 1
            yield SampleInput(s.input, (min(2, n),) + s.args, s.kwargs, name=s.name)
        if dtype.is_floating_point and not requires_grad:
            v = np.array([3.0, 1.0, 2.0, np.nan])
            yield SampleInput(make_tensor(v.shape, dtype, values=v), (4,), name="nan_last")

    def kth_ref(x, k, dim=-1, keepdim=False):
        return _sorted_pick(x, dim, keepdim, lambda n, valid: np.full(valid.shape, k - 1))
    db._add("kthvalue", tp.kthvalue, kth_ref, NO_BOOL, kth_samples, aten=("kthvalue",),
            error_inputs=db._errors(
                lambda: db._err(RuntimeError, r"kthvalue\(\): selected number k out of range for dimension 0",
                                db._t((2,)), 3)))

    def mode_samples(device, dtype, requires_grad):
        v = np.array([[1, 2, 2, 3, 3, 1], [5, 5, 5, 1, 1, 1], [0, 1, 0, 1, 1, 0]])
        if dtype is tp.bool:
            v = v % 2
        t = make_tensor(v.shape, dtype, values=v, requires_grad=requires_grad)
        yield SampleInput(t, (1,), name="ties")
        yield SampleInput(t, (0, True), name="dim0_keepdim")
        yield SampleInput(make_tensor((), dtype, seed=2, requires_grad=requires_grad), name="scalar")
        if dtype.is_floating_point and not requires_grad:
            w = np.array([1.0, np.nan, np.nan, 2.0, 2.0])
            yield SampleInput(make_tensor(w.shape, dtype, values=w), name="nan")

    def mode_ref(x, dim=-1, keepdim=False):
        xx = x.reshape(1) if x.ndim == 0 else x
        ax = _axis(x, dim)
        moved = np.moveaxis(xx, ax, -1)
        rows = moved.reshape(-1, moved.shape[-1])
        vals, idx = [], []
        for row in rows:
            r64 = row.astype(np.float64)
            best, best_count = None, 0
            for u in sorted(set(r64.tolist()), key=lambda t: (math.isnan(t), t)):
                c = 1 if math.isnan(u) else int(np.sum(r64 == u))
                if c > best_count:
                    best, best_count = u, c
            vals.append(best)
            hits = np.flatnonzero(np.isnan(r64) if math.isnan(best) else r64 == best)
            idx.append(hits[-1])
        shape = moved.shape[:-1]
        v = S.cast(np.array(vals, dtype=np.float64).reshape(shape), x.dtype) if S.is_float(x.dtype) else \
            np.array(vals).astype(x.dtype).reshape(shape)
        i = np.array(idx, dtype=np.int64).reshape(shape)
        if keepdim and x.ndim:
            v, i = np.expand_dims(v, ax), np.expand_dims(i, ax)
        return v, i
    # finite differences move the mode between tied values: its gradient is checked in tests/test_special.py
    db._add("mode", tp.mode, mode_ref, ALL, mode_samples, aten=("mode",), supports_autograd=False,
            error_inputs=db._errors(lambda: db._err(IndexError, r"mode\(\): Expected reduction dim 0 to have "
                                                                "non-zero size", db._t((0, 3)), 0)))


def _quantile_entries(db):
    def samples(device, dtype, requires_grad):
        x = make_tensor((3, 5), dtype, seed=1, requires_grad=requires_grad)
        for i, interp in enumerate(("linear", "lower", "higher", "midpoint", "nearest")):
            for q in (0.3, 0.5):
                yield SampleInput(x, (q,), {"interpolation": interp}, name=f"{interp}_{q}")
            yield SampleInput(x, (make_tensor((3,), dtype, values=np.array([0.1, 0.5, 0.9])), 1, True),
                              {"interpolation": interp}, name=f"{interp}_tensor_q_dim_keepdim")
            yield SampleInput(x, (0.25, 0), {"interpolation": interp}, name=f"{interp}_dim0")
        yield SampleInput(x, (0.75, None, True), name="all_keepdim")
        yield SampleInput(make_tensor((), dtype, seed=2, requires_grad=requires_grad), (0.4,), name="scalar")
        if not requires_grad:
            v = np.array([[1.0, 5.0, np.nan, 8.0], [3.0, 3.0, 2.0, 1.0], [np.nan] * 4])
            t = make_tensor(v.shape, dtype, values=v)
            yield SampleInput(t, (0.4, 1), name="nan")
            yield SampleInput(t, (make_tensor((2,), dtype, values=np.array([0.0, 1.0])), 1), name="nan_tensor_q")

    def ref(ignore_nan):
        def quantile_ref(x, q, dim=None, keepdim=False, interpolation="linear"):
            method = {"midpoint": "midpoint", "nearest": "nearest", "lower": "lower", "higher": "higher",
                      "linear": "linear"}[interpolation]
            fn = np.nanquantile if ignore_nan else np.quantile
            v = S.f64(x)
            axis = None if dim is None else _axis(x, dim)
            qq = S.f64(q) if isinstance(q, np.ndarray) else q
            with np.errstate(invalid="ignore"), _warnings_off():
                if ignore_nan:
                    r = fn(v, qq, axis=axis, keepdims=bool(keepdim) and x.ndim > 0, method=method)
                else:
                    r = fn(v, qq, axis=axis, keepdims=bool(keepdim) and x.ndim > 0, method=method)
                    nan = np.isnan(v).any(axis=axis, keepdims=bool(keepdim) and x.ndim > 0)
                    r = np.where(nan, np.nan, r)
            return S.cast(np.asarray(r), x.dtype)
        return quantile_ref

    errs = db._errors(
        lambda: db._err(RuntimeError, "quantile\\(\\) input tensor must be either float or double dtype",
                        db._t((3,), tp.int64), 0.5),
        lambda: db._err(RuntimeError, r"quantile\(\) q must be in the range \[0, 1\] but got 1.5", db._t((3,)), 1.5),
        lambda: db._err(RuntimeError, r"quantile\(\) q must be a scalar or 1D tensor", db._t((3,)),
                        db._t((1, 1))),
        lambda: db._err(RuntimeError, r"quantile\(\) interpolation must be one of linear, lower, higher, midpoint "
                                      "or nearest, but got bad", db._t((3,)), 0.5, interpolation="bad"),
        lambda: db._err(RuntimeError, r"quantile\(\) input tensor must be non-empty", db._t((0,)), 0.5),
        lambda: db._err(RuntimeError, r"quantile\(\) q tensor must be same dtype as the input tensor", db._t((3,)),
                        db._t((1,), tp.float64)))
    for name, ignore in (("quantile", False), ("nanquantile", True)):
        db._add(name, getattr(tp, name), ref(ignore), _FLOAT_32_64, samples, aten=(name, name + ".scalar"),
                error_inputs=errs)


class _warnings_off:
    def __enter__(self):
        import warnings  # lazy: only the references of all-NaN slices need it
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def _nan_entries(db):
    def nan_samples(device, dtype, requires_grad):
        yield from db._reduction_samples()(device, dtype, requires_grad)
        if dtype.is_floating_point and not requires_grad:
            v = np.array([[np.nan, 1.0, 2.0], [3.0, np.nan, np.nan]])
            t = make_tensor(v.shape, dtype, values=v, requires_grad=requires_grad)
            yield SampleInput(t, name="nan_all")
            yield SampleInput(t, (1,), {"keepdim": True}, name="nan_dim")

    def nansum_ref(x, dim=None, keepdim=False, dtype=None):
        out = db._sum_dtype(x, dtype)
        v = np.where(np.isnan(S.f64(x)), 0.0, S.f64(x)) if S.is_float(x.dtype) else x.astype(out)
        return db._reduce_ref(np.sum, lambda *_: out)(S.cast(v, x.dtype) if S.is_float(x.dtype) else v, dim, keepdim)

    def nanmean_ref(x, dim=None, keepdim=False, dtype=None):
        with np.errstate(invalid="ignore"), _warnings_off():
            return db._reduce_ref(np.nanmean, lambda y, d: y.dtype)(x, dim, keepdim)
    def count_samples(device, dtype, requires_grad):
        for s in db._reduction_samples()(device, dtype, False):
            s.kwargs.pop("keepdim", None)
            yield s
    db._add("count_nonzero", tp.count_nonzero, lambda x, dim=None: db._reduce_ref(
        np.sum, lambda *_: np.dtype(np.int64))((x != 0).astype(np.int64), dim, False), ALL, count_samples,
        supports_autograd=False, aten=("count_nonzero",),
        error_inputs=db._errors(lambda: db._err(IndexError, db._DIM_RANGE, db._t((3,)), 1)))
    db._add("nansum", tp.nansum, nansum_ref, ALL, nan_samples, aten=("nansum",),
            error_inputs=db._errors(lambda: db._err(IndexError, db._DIM_RANGE, db._t((3,)), 1)))
    db._add("nanmean", tp.nanmean, nanmean_ref, FLOATING, nan_samples, aten=("nanmean",),
            error_inputs=db._errors(lambda: db._err(RuntimeError, "nanmean\\(\\): expected input to have floating "
                                                                  "point or complex dtype but got Long",
                                                    db._t((3,), tp.int64))))


def _clamp_entries(db):
    def samples(device, dtype, requires_grad):
        x = make_tensor((3, 4), dtype, seed=1, requires_grad=requires_grad)
        yield SampleInput(x, (make_tensor((3, 4), dtype, seed=2),), name="tensor_bound")
        yield SampleInput(x, (make_tensor((4,), dtype, seed=3),), name="broadcast_bound")
        if dtype is not tp.bool:
            yield SampleInput(x, (2,), name="python_bound")

    def ref(lo):
        def clamp_ref(x, b):
            vals, out = db._promoted(x, b)
            v = [S.f64(t) for t in vals] if S.is_float(out) else vals
            return S.cast(np.maximum(v[0], v[1]) if lo else np.minimum(v[0], v[1]), out)
        return clamp_ref
    for name, lo in (("clamp_min.tensor_bound", True), ("clamp_max.tensor_bound", False)):
        base = name.partition(".")[0]
        db._add(name, getattr(tp, base), ref(lo), NO_BOOL, samples, inplace=db._method(base + "_"),
                aten=(f"{base}.Tensor", f"{base}_.Tensor"))

    def clip_samples(device, dtype, requires_grad):
        x = make_tensor((3, 4), dtype, seed=1, requires_grad=requires_grad)
        lo = make_tensor((3, 4), dtype, -9, -1, seed=2)
        hi = make_tensor((4,), dtype, 1, 9, seed=3)
        yield SampleInput(x, (lo, hi), name="tensor_bounds")
        yield SampleInput(x, (), {"max": hi}, name="tensor_max")

    def clip_ref(x, min=None, max=None):
        vals, out = db._promoted(*[v for v in (x, min, max) if v is not None])
        v = [S.f64(t) for t in vals] if S.is_float(out) else vals
        return S.cast(np.clip(v[0], v[1] if min is not None else None,
                              (v[-1] if max is not None else None)), out)
    db._add("clip.tensor_bounds", tp.clip, clip_ref, NO_BOOL, clip_samples, inplace=db._method("clip_"),
            aten=("clamp.Tensor", "clamp_.Tensor"))
