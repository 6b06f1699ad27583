"""Pointwise math: exponentials and logarithms, powers and roots, trigonometric and hyperbolic
functions, sigmoid, erf, reciprocal, abs, sign and rounding, with ``pow``, ``atan2`` and
``logaddexp``.

Backend primitives (kernels take the schema's arguments positionally), out of
place and in place (``exp`` and ``exp_``): the floating ops of
:data:`FLOAT_UNARY`, whose integer and bool inputs compute in the default float
dtype, ``abs sign floor ceil round round.decimals trunc frac``, and the binary
``atan2`` and ``pow.Tensor_Tensor`` (``pow_.Tensor``).

Everything else is CompositeImplicitAutograd: the scalar overloads of ``pow``
(exponents 0.5 and -0.5 are ``sqrt`` and ``rsqrt``, as in PyTorch), ``square``
(``pow``), ``logaddexp``, and ``tanh_backward``/``sigmoid_backward``, ops of their
own that a backend may fuse. Every primitive has a backward formula, next to it.
"""

from __future__ import annotations

import math as _math

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from ..tensor import Tensor
from ._common import document as _document, opmath as _opmath, as_dtype as _as, cj
from ._lib import POINTWISE, defop, public, attach
from .arithmetic import neg, add, add_scalar, sub_scalar, mul, mul_scalar, div, rsub_scalar, maximum
from .comparison import where, where_fn as _where, eq_scalar, ge_scalar, logical_and
from .pointwise import (scalar_tensor, scalar_result_dtype, not_implemented, check_binary, check_inplace_binary,
                        check_inplace_float_binary, no_bool, defunary, check_float_inplace, unsupported, export,
                        export_unary, documented, tensor_or_scalar, attach_operators, reflected, with_inplace,
                        zero, zero_grad, refuse_complex)
from .promotion import check_can_cast, result_type

_FLOATING = _dt.FLOATING
_BOOL = _dt.BOOL
_INTEGRAL = _dt.INTEGRAL
_INF = _math.inf
_LN2 = _math.log(2.0)
_LN10 = _math.log(10.0)
_LOG_TWO_OVER_SQRT_PI = _math.log(2.0 / _math.sqrt(_math.pi))


# -- floating unary ops: integer and bool inputs compute in the default float dtype ----------------
FLOAT_UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
               "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "reciprocal")
exp, exp_ = defunary("exp", None, check_float_inplace)
exp2, exp2_ = defunary("exp2", None, check_float_inplace)
expm1, expm1_ = defunary("expm1", None, check_float_inplace)
log, log_ = defunary("log", None, check_float_inplace)
log2, log2_ = defunary("log2", None, check_float_inplace)
log10, log10_ = defunary("log10", None, check_float_inplace)
log1p, log1p_ = defunary("log1p", None, check_float_inplace)
sqrt, sqrt_ = defunary("sqrt", None, check_float_inplace)
rsqrt, rsqrt_ = defunary("rsqrt", None, check_float_inplace)
sin, sin_ = defunary("sin", None, check_float_inplace)
cos, cos_ = defunary("cos", None, check_float_inplace)
tan, tan_ = defunary("tan", None, check_float_inplace)
asin, asin_ = defunary("asin", None, check_float_inplace)
acos, acos_ = defunary("acos", None, check_float_inplace)
atan, atan_ = defunary("atan", None, check_float_inplace)
sinh, sinh_ = defunary("sinh", None, check_float_inplace)
cosh, cosh_ = defunary("cosh", None, check_float_inplace)
tanh, tanh_ = defunary("tanh", None, check_float_inplace)
sigmoid, sigmoid_ = defunary("sigmoid", None, check_float_inplace)
erf, erf_ = defunary("erf", refuse_complex("erf_vml_cpu"), refuse_complex("erf_vml_cpu", check_float_inplace))
reciprocal, reciprocal_ = defunary("reciprocal", None, check_float_inplace)


# formulas that read ``result`` spare the in-place forms a copy of self
@with_inplace("exp")
def _(grad, result):
    return mul(grad, cj(result))


@with_inplace("exp2")
def _(grad, result):
    return mul_scalar(mul(grad, cj(result)), _LN2)


@with_inplace("expm1")
def _(grad, result):
    return mul(grad, cj(add_scalar(result, 1)))


@with_inplace("log")
def _(grad, self):
    return div(grad, cj(self))


@with_inplace("log2")
def _(grad, self):
    return div(grad, cj(mul_scalar(self, _LN2)))


@with_inplace("log10")
def _(grad, self):
    return div(grad, cj(mul_scalar(self, _LN10)))


@with_inplace("log1p")
def _(grad, self):
    return div(grad, cj(add_scalar(self, 1)))


@with_inplace("sqrt")
def _(grad, result):
    return div(grad, cj(mul_scalar(result, 2)))  # inf at 0, as in PyTorch


@with_inplace("rsqrt")
def _(grad, result):
    # -0.5 * result ** 3: two multiplies cost less than a general power
    return mul(mul_scalar(grad, -0.5), cj(mul(mul(result, result), result)))


@with_inplace("sin")
def _(grad, self):
    return mul(grad, cj(cos(self)))


@with_inplace("cos")
def _(grad, self):
    return neg(mul(grad, cj(sin(self))))


@with_inplace("tan")
def _(grad, result):
    return mul(grad, cj(add_scalar(mul(result, result), 1)))


@with_inplace("asin")
def _(grad, self):
    return mul(grad, cj(rsqrt(rsub_scalar(mul(self, self), 1))))


@with_inplace("acos")
def _(grad, self):
    return neg(mul(grad, cj(rsqrt(rsub_scalar(mul(self, self), 1)))))


@with_inplace("atan")
def _(grad, self):
    return div(grad, cj(add_scalar(mul(self, self), 1)))


@with_inplace("sinh")
def _(grad, self):
    return mul(grad, cj(cosh(self)))


@with_inplace("cosh")
def _(grad, self):
    return mul(grad, cj(sinh(self)))


# tanh and sigmoid backward are ops of their own, as in PyTorch: a composite every backend gets,
# which a backend may fuse into one kernel (the CPU does); a formula of their own keeps double backward.
def _check_same_shape(grad_output, output):
    if grad_output._shape != output._shape:
        raise RuntimeError(f"grad_output and output must have the same shape, got {list(grad_output._shape)} "
                           f"and {list(output._shape)}")


tanh_backward = defop("tanh_backward(Tensor grad_output, Tensor output) -> Tensor", check=_check_same_shape,
                      composite=lambda grad_output, output: mul(grad_output, rsub_scalar(mul(output, output), 1)), tags=POINTWISE)
sigmoid_backward = defop("sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
                         check=_check_same_shape,
                         composite=lambda grad_output, output: mul(mul(grad_output, rsub_scalar(output, 1)), output), tags=POINTWISE)


@derivative("tanh_backward")
def _(grad, grad_output, output, needs_input_grad):
    # g * (1 - y^2): d/dg = 1 - y^2, d/dy = -2 y g
    return (tanh_backward(grad, output) if needs_input_grad[0] else None,
            mul(grad, mul_scalar(mul(grad_output, output), -2)) if needs_input_grad[1] else None)


@derivative("sigmoid_backward")
def _(grad, grad_output, output, needs_input_grad):
    # g * y * (1 - y): d/dg = y (1 - y), d/dy = g (1 - 2 y)
    return (sigmoid_backward(grad, output) if needs_input_grad[0] else None,
            mul(grad, mul(grad_output, rsub_scalar(mul_scalar(output, 2), 1))) if needs_input_grad[1] else None)


@with_inplace("tanh")
def _(grad, result):
    return tanh_backward(grad, cj(result))


@with_inplace("sigmoid")
def _(grad, result):
    return sigmoid_backward(grad, cj(result))


@with_inplace("erf")
def _(grad, self):
    # 2/sqrt(pi) * exp(-x^2), the constant folded into the exponent: one multiply fewer
    return mul(grad, exp(rsub_scalar(mul(self, self), _LOG_TWO_OVER_SQRT_PI)))


@with_inplace("reciprocal")
def _(grad, result):
    return neg(mul(grad, cj(mul(result, result))))


# -- abs, sign and rounding: dtype-preserving -------------------------------------------------------
def _no_complex_rounding(name):
    return refuse_complex(lambda d: NotImplementedError(f"{name} is not supported for complex inputs"),
                          unsupported(name, _BOOL))


# abs of a complex tensor is real: its in-place form cannot hold it
abs, abs_ = defunary("abs", unsupported("abs", _BOOL), refuse_complex(
    lambda d: RuntimeError("In-place abs is not supported for complex tensors."), unsupported("abs", _BOOL)),
    inplace_tags=())  # PyTorch's abs_ has no pointwise tag
sign, sign_ = defunary("sign", refuse_complex(lambda d: NotImplementedError(
    "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.")))
floor, floor_ = defunary("floor", _no_complex_rounding("floor"))
ceil, ceil_ = defunary("ceil", _no_complex_rounding("ceil"))
round, round_ = defunary("round", refuse_complex("round_vml_cpu", unsupported("round", _BOOL)))
trunc, trunc_ = defunary("trunc", _no_complex_rounding("trunc"))
frac, frac_ = defunary("frac", refuse_complex("frac_cpu", unsupported("frac", _BOOL, _INTEGRAL)))
round_decimals = defop("round.decimals(Tensor self, *, int decimals) -> Tensor",
                       check=refuse_complex("round_cpu", unsupported("round", _BOOL, _INTEGRAL)), tags=POINTWISE)
round_decimals_ = defop("round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)",
                        check=refuse_complex("round_cpu", unsupported("round", _BOOL, _INTEGRAL)), tags=POINTWISE)


@with_inplace("abs")
def _(grad, self):
    if self._dtype.category == _dt.COMPLEX:
        a = abs(self)
        return mul(grad, where(eq_scalar(a, 0), zero(self), div(self, a)))  # sgn(z): z / |z|, 0 at 0
    return mul(grad, sign(self))  # 0 at 0, as in PyTorch


@with_inplace("frac")
def _(grad):
    return grad


for _name in ("sign", "floor", "ceil", "round", "round.decimals", "trunc"):
    with_inplace(_name)(zero_grad)


def round_fn(input, *, decimals=0):
    """Round half to even; with ``decimals``, to that many decimal places (negative: tens, hundreds...)."""
    if decimals == 0:
        return round(input)
    return round_decimals(input, decimals=decimals)


def round_inplace(self, *, decimals=0):
    """In-place :func:`round`."""
    if decimals == 0:
        return round_(self)
    return round_decimals_(self, decimals=decimals)


# -- pow, square ----------------------------------------------------------------------------------
_check_pow = no_bool("pow", check_binary)
_check_pow_ = no_bool("pow", check_inplace_binary)


def _check_negative_int_power(result, exponent):
    if result.category < _FLOATING and exponent.__class__ is int and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _root_power(d, exponent):
    """sqrt or rsqrt, which PyTorch computes for exponents 0.5 and -0.5 (they differ from pow at
    -0.0 and -inf) except on float16; None for other exponents."""
    if d.category == _FLOATING and d is not _dt.float16:
        if exponent == 0.5:
            return sqrt, sqrt_
        if exponent == -0.5:
            return rsqrt, rsqrt_
    return None


def _pow_tensor_scalar_impl(self, exponent):
    d = scalar_result_dtype(self._dtype, exponent)
    root = _root_power(d, exponent)
    if root is not None:
        return root[0](self)
    _check_negative_int_power(d, exponent)
    return pow(self, scalar_tensor(exponent, d, self._device))


def _pow_scalar_impl(self, exponent):
    return pow(scalar_tensor(self, scalar_result_dtype(exponent._dtype, self), exponent._device), exponent)


def _pow_inplace_scalar_impl(self, exponent):
    check_can_cast(scalar_result_dtype(self._dtype, exponent), self._dtype)
    root = _root_power(self._dtype, exponent)
    if root is not None:
        return root[1](self)
    _check_negative_int_power(self._dtype, exponent)
    return pow_(self, scalar_tensor(exponent, self._dtype, self._device))


pow = defop("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", check=_check_pow, tags=POINTWISE)
pow_tensor_scalar = defop("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
                          composite=_pow_tensor_scalar_impl, tags=POINTWISE)
pow_scalar = defop("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", composite=_pow_scalar_impl, tags=POINTWISE)
pow_ = defop("pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", check=_check_pow_, tags=POINTWISE)
pow_scalar_ = defop("pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
                    composite=_pow_inplace_scalar_impl, tags=POINTWISE)


def _square_impl(self):
    return pow_tensor_scalar(self, 2)


def _square_inplace_impl(self):
    return pow_scalar_(self, 2)


square = defop("square(Tensor self) -> Tensor", composite=_square_impl, tags=POINTWISE)
square_ = defop("square_(Tensor(a!) self) -> Tensor(a!)", composite=_square_inplace_impl, tags=POINTWISE)


def pow_fn(input, exponent):
    """input ** exponent; either may be a Python number. Integer tensors raise for negative
    Python integer exponents, and give 0 (or +-1 for bases +-1) for negative tensor exponents."""
    if input.__class__ is Tensor or isinstance(input, Tensor):
        if exponent.__class__ is Tensor or isinstance(exponent, Tensor):
            return pow(input, exponent)
        return pow_tensor_scalar(input, exponent)
    return pow_scalar(input, exponent)


@with_inplace("pow.Tensor_Tensor", "pow_.Tensor")
def _(grad, self, exponent, needs_input_grad):
    gs = ge = None
    if needs_input_grad[0]:
        # exponent * self ** (exponent - 1), the power taken as 1 where the exponent is 0: the
        # factor is then 0, and 0 ** -1 = inf would make it NaN (PyTorch's gradient there is 0).
        # Unlike PyTorch's where() after the fact this costs no full-size op for a scalar
        # exponent; it differs only at exponent 0 with an infinite or NaN self or grad (NaN
        # here, 0 in PyTorch).
        power = where(eq_scalar(exponent, 0), scalar_tensor(1, exponent._dtype, exponent._device),
                      sub_scalar(exponent, 1))
        gs = sum_to(mul(grad, cj(mul(exponent, pow(self, power)))), self._shape)
    if needs_input_grad[1]:
        # result * log(self), but 0 where self == 0 and exponent >= 0 (PyTorch's
        # pow_backward_exponent); the power is recomputed rather than saved, so that
        # x ** 2 does not keep its result (and in-place changes to it stay legal)
        base = self if self._dtype is grad._dtype else self.to(grad._dtype)
        zero_base = logical_and(eq_scalar(base, 0), ge_scalar(
            exponent.real if exponent._dtype.category == _dt.COMPLEX else exponent, 0))
        ge = sum_to(mul(grad, where(zero_base, zero(grad), cj(mul(pow(base, exponent), log(base))))),
                    exponent._shape)
    return gs, ge


# -- atan2 ----------------------------------------------------------------------------------------
atan2 = defop("atan2(Tensor self, Tensor other) -> Tensor", check=refuse_complex("atan2_cpu", check_binary),
              tags=POINTWISE)
atan2_ = defop("atan2_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
               check=refuse_complex("atan2_cpu", check_inplace_float_binary), tags=POINTWISE)


@with_inplace("atan2")
def _(grad, self, other, needs_input_grad):
    # (other, -self) / (self^2 + other^2), but 0 where the denominator is 0, as in PyTorch
    denom = add(mul(self, self), mul(other, other))
    g = where(eq_scalar(denom, 0), zero(grad), div(grad, denom))
    return (sum_to(mul(g, other), self._shape) if needs_input_grad[0] else None,
            neg(sum_to(mul(g, self), other._shape)) if needs_input_grad[1] else None)


# -- logaddexp --------------------------------------------------------------------------------------
def _check_logaddexp(self, other):
    check_binary(self, other)
    d = result_type(self, other)
    if not d.is_floating_point:
        raise not_implemented("logaddexp_cpu", d)


def _logaddexp(self, other):
    d = result_type(self, other)
    a, b = _opmath(_as(self, d)), _opmath(_as(other, d))
    out = maximum(a, b) + (-(a - b).abs()).exp().log1p()
    # inf - inf would be NaN: equal infinities are their own result
    return _as(_where((a == b) & (a.abs() == _INF), a, out), d)


logaddexp = _document(defop("logaddexp(Tensor self, Tensor other) -> Tensor", check=_check_logaddexp,
                            composite=_logaddexp, tags=POINTWISE),
                      "log(exp(x) + exp(y)) without overflow; floating point results only.")


# -- public functions, methods and operators ------------------------------------------------------
export_unary({
    # op: (public names, doc)
    "exp": ("exp", "e raised to each element."),
    "exp2": ("exp2", "2 raised to each element."),
    "expm1": ("expm1", "exp(x) - 1, accurate near 0."),
    "log": ("log", "Natural logarithm."),
    "log2": ("log2", "Base-2 logarithm."),
    "log10": ("log10", "Base-10 logarithm."),
    "log1p": ("log1p", "log(1 + x), accurate near 0."),
    "sqrt": ("sqrt", "Square root."),
    "rsqrt": ("rsqrt", "Reciprocal of the square root."),
    "sin": ("sin", "Sine."),
    "cos": ("cos", "Cosine."),
    "tan": ("tan", "Tangent."),
    "asin": ("asin arcsin", "Inverse sine."),
    "acos": ("acos arccos", "Inverse cosine."),
    "atan": ("atan arctan", "Inverse tangent."),
    "sinh": ("sinh", "Hyperbolic sine."),
    "cosh": ("cosh", "Hyperbolic cosine."),
    "tanh": ("tanh", "Hyperbolic tangent."),
    "sigmoid": ("sigmoid", "Logistic sigmoid 1 / (1 + exp(-x))."),
    "erf": ("erf", "Gauss error function."),
    "reciprocal": ("reciprocal", "1 / x."),
    "abs": ("abs absolute", "Absolute value (bool is not supported)."),
    "sign": ("sign", "-1, 0 or 1 by the sign of each element (0 for NaN)."),
    "floor": ("floor", "Largest integer not greater than each element."),
    "ceil": ("ceil", "Smallest integer not less than each element."),
    "trunc": ("trunc fix", "Round toward zero."),
    "frac": ("frac", "x - trunc(x) (floating point only)."),
    "square": ("square", "x * x, as pow(x, 2): bool inputs give int64."),
}, globals(), FLOAT_UNARY)
export("round", round_fn)
attach("round_", round_inplace)
export("pow", pow_fn)
attach("pow_", tensor_or_scalar("pow_", pow_, pow_scalar_, "In-place pow."))
export("atan2 arctan2", documented(atan2, "Angle of the point (other, input) in radians (float result)."))
attach("atan2_", documented(atan2_, "In-place atan2."))
attach("arctan2_", atan2_)
attach("logaddexp", logaddexp)
public("logaddexp", logaddexp)

attach_operators({"pow": (pow, pow_tensor_scalar, pow_, pow_scalar_, reflected(pow))})
attach("__abs__", abs)
