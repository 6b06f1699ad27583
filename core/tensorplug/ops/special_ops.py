"""Pointwise math beyond :mod:`.math_ops`: the inverse hyperbolic functions, the error and gamma
function families, Bessel functions, the normal distribution's functions, ``zeta``, and the
binary ``hypot``, ``fmax``/``fmin``, ``copysign``, ``gcd``/``lcm``, ``xlogy``/``xlog1py``,
``float_power`` and ``logaddexp2``.

Backend primitives (the CPU computes them in numpy to float64 accuracy):
``asinh acosh atanh erfc erfinv lgamma digamma polygamma i0 sinc``, the
``special_*`` functions ``erfcx i0e i1 i1e ndtri log_ndtr entr zeta``,
``hypot fmax fmin copysign gcd lcm signbit nan_to_num``. The rest are
CompositeImplicitAutograd over existing ops (``deg2rad``, ``logit``, ``xlogy``,
``float_power``, ``logaddexp2``, ``sgn``, ``special_ndtr``, ``special_multigammaln``),
so autograd and vmap come with the pieces. Every primitive has a backward formula
next to it; all are tagged pointwise (vmap batches them by broadcasting).
"""

from __future__ import annotations

import math as _math

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from ._common import document as _document, opmath as _opmath, as_dtype as _as
from ._lib import POINTWISE, defop, public, attach
from .arithmetic import add, mul, div, maximum
from .comparison import where, where_fn as _where, clamp as _clamp
from .math_ops import exp, log, log1p, sign, sign_, rsqrt, sin, cos, erf
from .pointwise import (scalar_tensor, not_implemented, check_binary, check_inplace_binary,
                        check_inplace_float_binary, defunary, defbinary, check_float_inplace, export, export_unary,
                        documented, tensor_or_scalar, with_inplace, zero, float_dtype, is_tensor,
                        inplace_scalar_overload)
from .promotion import check_can_cast, result_type

_FLOATING = _dt.FLOATING
_BOOL = _dt.BOOL
_INTEGRAL = _dt.INTEGRAL
_SQRT_PI = _math.sqrt(_math.pi)
_LN2 = _math.log(2.0)
_INF = _math.inf
_NAN = _math.nan


# -- floating unary primitives ------------------------------------------------------------------
FLOAT_UNARY = ("asinh", "acosh", "atanh", "erfc", "erfinv", "lgamma", "digamma", "i0", "sinc")
asinh, asinh_ = defunary("asinh", None, check_float_inplace)
acosh, acosh_ = defunary("acosh", None, check_float_inplace)
atanh, atanh_ = defunary("atanh", None, check_float_inplace)
erfc, erfc_ = defunary("erfc", None, check_float_inplace)
erfinv, erfinv_ = defunary("erfinv", None, check_float_inplace)
lgamma, lgamma_ = defunary("lgamma", None, check_float_inplace)
digamma, digamma_ = defunary("digamma", None, check_float_inplace)
i0, i0_ = defunary("i0", None, check_float_inplace)
sinc, sinc_ = defunary("sinc", None, check_float_inplace)


def _check_polygamma(n, self):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def _check_polygamma_(self, n):
    _check_polygamma(n, self)
    check_float_inplace(self)


polygamma = defop("polygamma(int n, Tensor self) -> Tensor", check=_check_polygamma, tags=POINTWISE)
polygamma_ = defop("polygamma_(Tensor(a!) self, int n) -> Tensor(a!)", check=_check_polygamma_, tags=POINTWISE)


@with_inplace("asinh")
def _(grad, self):
    return mul(grad, rsqrt(add(mul(self, self), scalar_tensor(1, self._dtype, self._device))))


@with_inplace("acosh")
def _(grad, self):
    return mul(grad, rsqrt(mul(self, self) - 1))


@with_inplace("atanh")
def _(grad, self):
    return div(grad, 1 - mul(self, self))


@with_inplace("erfc")
def _(grad, self):
    return mul(grad, exp(-mul(self, self))) * (-2.0 / _SQRT_PI)


@with_inplace("erfinv")
def _(grad, result):
    return mul(grad, exp(mul(result, result))) * (_SQRT_PI / 2.0)


@with_inplace("lgamma")
def _(grad, self):
    return mul(grad, digamma(self))


@with_inplace("digamma")
def _(grad, self):
    return mul(grad, polygamma(1, self))


@derivative("polygamma")
def _(grad, n, self):
    return mul(grad, polygamma(n + 1, self))


@derivative("polygamma_")
def _(grad, self, n):
    return mul(grad, polygamma(n + 1, self))


@with_inplace("i0")
def _(grad, self):
    return mul(grad, special_i1(self))


@with_inplace("sinc")
def _(grad, self):
    # (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at 0
    px = self * _math.pi
    g = div(px * cos(px) - sin(px), px * self)
    return mul(grad, _where(self == 0, 0.0, g))


# -- special_* primitives (tensorplug.special) ---------------------------------------------------
def _no_half(kernel_name):
    def check(self):
        d = self._dtype
        if d is _dt.float16 or d is _dt.bfloat16:
            raise not_implemented(kernel_name, d)
    return check


special_erfcx = defop("special_erfcx(Tensor self) -> Tensor", check=_no_half("erfcx_cpu"), tags=POINTWISE)
special_i0e = defop("special_i0e(Tensor self) -> Tensor", tags=POINTWISE)
special_i1 = defop("special_i1(Tensor self) -> Tensor", tags=POINTWISE)
special_i1e = defop("special_i1e(Tensor self) -> Tensor", tags=POINTWISE)
special_ndtri = defop("special_ndtri(Tensor self) -> Tensor", check=_no_half("ndtri_cpu"), tags=POINTWISE)
special_log_ndtr = defop("special_log_ndtr(Tensor self) -> Tensor", check=_no_half("log_ndtr_cpu"), tags=POINTWISE)
special_entr = defop("special_entr(Tensor self) -> Tensor", tags=POINTWISE)


def _check_zeta(self, other):
    check_binary(self, other)
    d = result_type(self, other)
    if d is _dt.float16 or d is _dt.bfloat16:
        raise not_implemented("zeta_cpu", d)


special_zeta = defop("special_zeta(Tensor self, Tensor other) -> Tensor", check=_check_zeta, tags=POINTWISE)


@derivative("special_erfcx")
def _(grad, self, result):
    # 2 x erfcx(x) - 2 / sqrt(pi)
    return mul(grad, mul(self, result) * 2.0 - 2.0 / _SQRT_PI)


@derivative("special_i0e")
def _(grad, self, result):
    return mul(grad, special_i1e(self) - mul(sign(self), result))


@derivative("special_i1")
def _(grad, self, result):
    # I1'(x) = I0(x) - I1(x) / x, 1/2 at 0
    g = i0(self) - div(result, self)
    return mul(grad, _where(self == 0, 0.5, g))


@derivative("special_i1e")
def _(grad, self, result):
    g = special_i0e(self) - mul(result, add(sign(self), self.reciprocal()))
    return mul(grad, _where(self == 0, 0.5, g))


@derivative("special_ndtri")
def _(grad, result):
    # 1 / pdf(ndtri(p)) = sqrt(2 pi) exp(y^2 / 2)
    return mul(grad, exp(mul(result, result) * 0.5)) * _math.sqrt(2.0 * _math.pi)


@derivative("special_log_ndtr")
def _(grad, self, result):
    # pdf(x) / cdf(x) = exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi)
    return mul(grad, exp(-mul(self, self) * 0.5 - result)) * (1.0 / _math.sqrt(2.0 * _math.pi))


@derivative("special_entr")
def _(grad, self):
    return mul(grad, -(log(self) + 1))


@derivative("special_zeta")
def _(grad, self, other, needs_input_grad):
    if needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'self' of special_zeta is not implemented.")
    return None, sum_to(mul(grad, -mul(self, special_zeta(self + 1, other))), other._shape)


# -- composites of one tensor ---------------------------------------------------------------------
def _deg2rad(self):
    return mul(_float_self(self), scalar_tensor(_math.pi / 180.0, float_dtype(self._dtype), self._device))


def _rad2deg(self):
    return mul(_float_self(self), scalar_tensor(180.0 / _math.pi, float_dtype(self._dtype), self._device))


def _float_self(self):
    return self if self._dtype.category == _FLOATING else _as(self, _dt.get_default_dtype())


def _deg2rad_(self):
    check_float_inplace(self)
    return self.mul_(_math.pi / 180.0)


def _rad2deg_(self):
    check_float_inplace(self)
    return self.mul_(180.0 / _math.pi)


deg2rad = defop("deg2rad(Tensor self) -> Tensor", composite=_deg2rad, tags=POINTWISE)
deg2rad_ = defop("deg2rad_(Tensor(a!) self) -> Tensor(a!)", composite=_deg2rad_, tags=POINTWISE)
rad2deg = defop("rad2deg(Tensor self) -> Tensor", composite=_rad2deg, tags=POINTWISE)
rad2deg_ = defop("rad2deg_(Tensor(a!) self) -> Tensor(a!)", composite=_rad2deg_, tags=POINTWISE)


def _logit(self, eps=None):
    x = _float_self(self)
    if eps is not None:
        x = _clamp(x, eps, 1.0 - eps)
    return log(div(x, 1 - x))


def _logit_(self, eps=None):
    check_float_inplace(self)
    return self.copy_(_logit(self, eps))


logit = defop("logit(Tensor self, float? eps=None) -> Tensor", composite=_logit, tags=POINTWISE)
logit_ = defop("logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)", composite=_logit_, tags=POINTWISE)

# sgn itself (z / |z| for complex numbers) is defined with the complex ops; its in-place form here
sgn_ = defop("sgn_(Tensor(a!) self) -> Tensor(a!)", composite=sign_, tags=POINTWISE)
signbit = defop("signbit(Tensor self) -> Tensor", tags=POINTWISE)


def _ndtr(self):
    # PyTorch's (1 + erf(x / sqrt 2)) / 2: absolute accuracy, 0 below about -8.3 in float64
    x = _float_self(self)
    return (erf(x * (1.0 / _math.sqrt(2.0))) + 1) * 0.5


special_ndtr = defop("special_ndtr(Tensor self) -> Tensor", composite=_ndtr)


def _check_multigammaln(self, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def _multigammaln(self, p):
    x = _float_self(self)
    out = lgamma(x)
    for j in range(1, p):
        out = out + lgamma(x - j / 2.0)
    return out + p * (p - 1) / 4.0 * _math.log(_math.pi)


special_multigammaln = defop("special_multigammaln(Tensor self, int p) -> Tensor", check=_check_multigammaln,
                             composite=_multigammaln)


# -- nan_to_num ---------------------------------------------------------------------------------------
nan_to_num = defop("nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
                   tags=POINTWISE)
nan_to_num_ = defop("nan_to_num_(Tensor(a!) self, float? nan=None, float? posinf=None, float? neginf=None)"
                    " -> Tensor(a!)", tags=POINTWISE)


@with_inplace("nan_to_num")
def _(grad, self):
    return _where(self.isfinite(), grad, 0.0)


# -- binary primitives ---------------------------------------------------------------------------------
def _floating_only(name, check):
    def checked(a, b, *rest):
        check(a, b, *rest)
        d = a._dtype if a._dtype is b._dtype else result_type(a, b)
        if d.category != _FLOATING:
            raise not_implemented(name, d)
    return checked


hypot = defop("hypot(Tensor self, Tensor other) -> Tensor", check=_floating_only("hypot_cpu", check_binary),
              tags=POINTWISE)
hypot_ = defop("hypot_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
               check=_floating_only("hypot_cpu", check_inplace_binary), tags=POINTWISE)
fmax = defop("fmax(Tensor self, Tensor other) -> Tensor", check=check_binary, tags=POINTWISE)
fmin = defop("fmin(Tensor self, Tensor other) -> Tensor", check=check_binary, tags=POINTWISE)
# PyTorch tags the out-of-place forms pointwise, not the in-place ones (vmap names those itself)
copysign, copysign_scalar = defbinary("copysign", check_binary, compute=float_dtype)
copysign_ = defop("copysign_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", check=check_inplace_float_binary)
copysign_scalar_ = defop("copysign_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                         composite=inplace_scalar_overload(copysign_, float_dtype))


def _no_bool_int(name, check):
    def checked(a, b, *rest):
        check(a, b, *rest)
        d = a._dtype if a._dtype is b._dtype else result_type(a, b)
        if d.category != _INTEGRAL:
            raise not_implemented(name, d)
    return checked


gcd = defop("gcd(Tensor self, Tensor other) -> Tensor", check=_no_bool_int("gcd_cpu", check_binary),
            tags=POINTWISE)
gcd_ = defop("gcd_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
             check=_no_bool_int("gcd_cpu", check_inplace_binary))
lcm = defop("lcm(Tensor self, Tensor other) -> Tensor", check=_no_bool_int("lcm_cpu", check_binary),
            tags=POINTWISE)
lcm_ = defop("lcm_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
             check=_no_bool_int("lcm_cpu", check_inplace_binary))


@with_inplace("hypot")
def _(grad, self, other, result, needs_input_grad):
    g = div(grad, result)
    return (sum_to(mul(g, self), self._shape) if needs_input_grad[0] else None,
            sum_to(mul(g, other), other._shape) if needs_input_grad[1] else None)


def _fminmax_backward(pick_self):
    def formula(grad, self, other, needs_input_grad):
        # the gradient goes where the result came from: self unless other won or self is NaN
        takes_self = pick_self(self, other).logical_or(other.isnan())
        z = zero(grad)
        return (sum_to(where(takes_self, grad, z), self._shape) if needs_input_grad[0] else None,
                sum_to(where(takes_self, z, grad), other._shape) if needs_input_grad[1] else None)
    return formula


derivative("fmax")(_fminmax_backward(lambda a, b: a >= b))
derivative("fmin")(_fminmax_backward(lambda a, b: a <= b))


@with_inplace("copysign.Tensor")
def _(grad, self, result, other_shape, needs_input_grad):
    ratio = _where(self == 0, 0.0, div(result, self))
    return (sum_to(mul(grad, ratio), self._shape) if needs_input_grad[0] else None,
            _zeros_of(grad, other_shape) if needs_input_grad[1] else None)


def _zeros_of(grad, shape):
    return sum_to(grad, shape) * 0.0


# -- binary composites -----------------------------------------------------------------------------------
def _float_pair(self, other):
    d = float_dtype(result_type(self, other))
    return _as(self, d), _as(other, d)


def _xlogy(self, other):
    x, y = _float_pair(self, other)
    out = _where(x == 0, 0.0, mul(x, log(y)))
    return _where(y.isnan(), _NAN, out)


def _xlog1py(self, other):
    x, y = _float_pair(self, other)
    out = _where(x == 0, 0.0, mul(x, log1p(y)))
    return _where(y.isnan(), _NAN, out)


def _xlogy_scalar_self(self, other):
    return xlogy(scalar_tensor(self, float_dtype(result_type(self, other)), other._device), other)


def _xlogy_scalar_other(self, other):
    return xlogy(self, scalar_tensor(other, float_dtype(result_type(self, other)), self._device))


def _xlog1py_scalar_self(self, other):
    return special_xlog1py(scalar_tensor(self, float_dtype(result_type(self, other)), other._device), other)


def _xlog1py_scalar_other(self, other):
    return special_xlog1py(self, scalar_tensor(other, float_dtype(result_type(self, other)), self._device))


def _xlogy_(self, other):
    check_can_cast(float_dtype(result_type(self, other)), self._dtype)
    return self.copy_(_xlogy(self, other))


def _xlogy_scalar_(self, other):
    return _xlogy_(self, scalar_tensor(other, self._dtype, self._device))


xlogy = defop("xlogy.Tensor(Tensor self, Tensor other) -> Tensor", check=check_binary, composite=_xlogy,
              tags=POINTWISE)
xlogy_scalar_self = defop("xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor", composite=_xlogy_scalar_self,
                          tags=POINTWISE)
xlogy_scalar_other = defop("xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor",
                           composite=_xlogy_scalar_other, tags=POINTWISE)
xlogy_ = defop("xlogy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", check=check_inplace_float_binary,
               composite=_xlogy_, tags=POINTWISE)
xlogy_scalar_other_ = defop("xlogy_.Scalar_Other(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                            composite=_xlogy_scalar_)
special_xlog1py = defop("special_xlog1py(Tensor self, Tensor other) -> Tensor", check=check_binary,
                        composite=_xlog1py, tags=POINTWISE)
special_xlog1py_self_scalar = defop("special_xlog1py.self_scalar(Scalar self, Tensor other) -> Tensor",
                                    composite=_xlog1py_scalar_self, tags=POINTWISE)
special_xlog1py_other_scalar = defop("special_xlog1py.other_scalar(Tensor self, Scalar other) -> Tensor",
                                     composite=_xlog1py_scalar_other, tags=POINTWISE)


def _check_float_power_(self, exponent):
    if self._dtype is not _dt.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dt_name(self._dtype)} but the operation's "
                           "result requires dtype Double")


def _dt_name(d):
    from .promotion import _pt_name  # lazy: not needed on any other path
    return _pt_name(d)


def _float_power(self, exponent):
    return _as(self, _dt.float64).pow(_as(exponent, _dt.float64))


def _float_power_ts(self, exponent):
    return _as(self, _dt.float64).pow(float(exponent))


def _float_power_st(self, exponent):
    return scalar_tensor(float(self), _dt.float64, exponent._device).pow(_as(exponent, _dt.float64))


def _float_power_(self, exponent):
    _check_float_power_(self, exponent)
    return self.pow_(_as(exponent, _dt.float64))


def _float_power_scalar_(self, exponent):
    _check_float_power_(self, exponent)
    return self.pow_(float(exponent))


float_power = defop("float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", check=check_binary,
                    composite=_float_power, tags=POINTWISE)
float_power_ts = defop("float_power.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
                       composite=_float_power_ts, tags=POINTWISE)
float_power_st = defop("float_power.Scalar(Scalar self, Tensor exponent) -> Tensor", composite=_float_power_st,
                       tags=POINTWISE)
float_power_ = defop("float_power_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
                     composite=_float_power_, tags=POINTWISE)
float_power_scalar_ = defop("float_power_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
                            composite=_float_power_scalar_, tags=POINTWISE)


def _check_logaddexp2(self, other):
    check_binary(self, other)
    d = result_type(self, other)
    if not d.is_floating_point:
        raise not_implemented("logaddexp2_cpu", d)


def _logaddexp2(self, other):
    d = result_type(self, other)
    a, b = _opmath(_as(self, d)), _opmath(_as(other, d))
    out = maximum(a, b) + log1p((-(a - b).abs() * _LN2).exp()) * (1.0 / _LN2)
    return _as(_where((a == b) & (a.abs() == _INF), a, out), d)


logaddexp2 = _document(defop("logaddexp2(Tensor self, Tensor other) -> Tensor", check=_check_logaddexp2,
                             composite=_logaddexp2, tags=POINTWISE),
                       "log2(2**x + 2**y) without overflow; floating point results only.")


# -- public functions and methods ---------------------------------------------------------------------
export_unary({
    "asinh": ("asinh arcsinh", "Inverse hyperbolic sine."),
    "acosh": ("acosh arccosh", "Inverse hyperbolic cosine (NaN below 1)."),
    "atanh": ("atanh arctanh", "Inverse hyperbolic tangent (NaN outside [-1, 1])."),
    "erfc": ("erfc", "Complementary error function 1 - erf(x), accurate in the tail."),
    "erfinv": ("erfinv", "Inverse error function on [-1, 1] (+-inf at +-1, NaN outside)."),
    "lgamma": ("lgamma", "log |Gamma(x)| (inf at the poles 0, -1, -2, ...)."),
    "digamma": ("digamma", "The logarithmic derivative of Gamma (-inf at 0, NaN at the negative integers)."),
    "i0": ("i0", "Modified Bessel function of the first kind, order 0."),
    "sinc": ("sinc", "sin(pi x) / (pi x), 1 at 0."),
    "deg2rad": ("deg2rad", "Degrees to radians."),
    "rad2deg": ("rad2deg", "Radians to degrees."),
}, globals(), FLOAT_UNARY + ("deg2rad", "rad2deg"))


def polygamma_fn(n, input):
    """The n-th derivative of digamma (n = 0 is digamma itself)."""
    return polygamma(n, input)


def polygamma_method(self, n):
    """``x.polygamma(n)`` is ``polygamma(n, x)``."""
    return polygamma(n, self)


public("polygamma", polygamma_fn)
attach("polygamma", polygamma_method)
attach("polygamma_", documented(polygamma_, "In-place polygamma: ``x.polygamma_(n)``."))

export("logit", documented(logit, "log(p / (1 - p)); with ``eps``, p is first clamped to [eps, 1 - eps]."))
attach("logit_", documented(logit_, "In-place logit."))
attach("sgn_", documented(sgn_, "In-place sgn (for real tensors the same as sign_)."))
export("signbit", documented(signbit, "True where the sign bit is set (-0.0 included)."))
export("nan_to_num", documented(nan_to_num, "NaN, +inf and -inf replaced by ``nan`` (0), ``posinf`` and "
                                            "``neginf`` (the dtype's largest and lowest finite values)."))
public("nan_to_num_", nan_to_num_)
attach("nan_to_num_", documented(nan_to_num_, "In-place nan_to_num."))
for _name, _entry, _doc in (("hypot", hypot, "sqrt(x^2 + y^2) without overflow (floating point only)."),
                            ("fmax", fmax, "Elementwise maximum that ignores NaN (NaN only where both are)."),
                            ("fmin", fmin, "Elementwise minimum that ignores NaN (NaN only where both are)."),
                            ("gcd", gcd, "Greatest common divisor (integers only)."),
                            ("lcm", lcm, "Least common multiple (integers only).")):
    export(_name, documented(_entry, _doc))
for _name, _entry in (("hypot_", hypot_), ("gcd_", gcd_), ("lcm_", lcm_)):
    attach(_name, documented(_entry, f"In-place {_name[:-1]}."))
export("copysign", tensor_or_scalar("copysign", copysign, copysign_scalar,
                                    "The magnitude of input with the sign of other (a Tensor or a Python number); "
                                    "integer inputs give the default float dtype."))
attach("copysign_", tensor_or_scalar("copysign_", copysign_, copysign_scalar_, "In-place copysign."))


def xlogy_fn(input, other):
    """x * log(y), 0 where x is 0 (unless y is NaN); either argument may be a Python number."""
    if not is_tensor(input):
        return xlogy_scalar_self(input, other)
    if not is_tensor(other):
        return xlogy_scalar_other(input, other)
    return xlogy(input, other)


def xlogy_inplace(self, other):
    """In-place xlogy."""
    if not is_tensor(other):
        return xlogy_scalar_other_(self, other)
    return xlogy_(self, other)


export("xlogy", xlogy_fn)
attach("xlogy_", xlogy_inplace)


def xlog1py_fn(input, other):
    """x * log1p(y), 0 where x is 0 (unless y is NaN); either argument may be a Python number."""
    if not is_tensor(input):
        return special_xlog1py_self_scalar(input, other)
    if not is_tensor(other):
        return special_xlog1py_other_scalar(input, other)
    return special_xlog1py(input, other)


def float_power_fn(input, exponent):
    """input ** exponent computed in float64 (the result is always float64)."""
    if not is_tensor(input):
        return float_power_st(input, exponent)
    if not is_tensor(exponent):
        return float_power_ts(input, exponent)
    return float_power(input, exponent)


def float_power_inplace(self, exponent):
    """In-place float_power: self must be float64."""
    if not is_tensor(exponent):
        return float_power_scalar_(self, exponent)
    return float_power_(self, exponent)


export("float_power", float_power_fn)
attach("float_power_", float_power_inplace)
export("logaddexp2", logaddexp2)
