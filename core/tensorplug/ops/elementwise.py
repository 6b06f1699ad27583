"""Elementwise operators: schemas, checks, scalar overloads, functions, methods and operators.

Every check (broadcasting, devices, dtypes a kernel does not support,
in-place casts) runs here, once per call, so all backends raise the same
errors. Result dtypes follow PyTorch (:mod:`.promotion`): integer and bool
inputs of floating ops (``exp``, true ``div``, ``atan2``) give the default
float dtype, comparisons and logical ops give bool, the rest promote.

The backend contract for this module, each kernel taking its schema's
arguments positionally:

* unary, out of place and in place (``exp`` and ``exp_``): the FLOAT_UNARY
  ops, ``abs neg sign floor ceil round round.decimals trunc frac
  logical_not bitwise_not``;
* binary tensor-tensor, out of place and in place (``add.Tensor`` and
  ``add_.Tensor``): ``add sub mul div div.Tensor_mode remainder fmod
  bitwise_and bitwise_or bitwise_xor logical_and logical_or logical_xor
  atan2 pow.Tensor_Tensor``; out of place only: ``maximum minimum`` and the
  comparisons ``eq ne lt le gt ge`` (``.Tensor``);
* ``where.self``, ``clamp.Tensor`` and ``clamp_.Tensor``.

Kernels raise the errors only data can reveal: integer division or
remainder by zero raises ``RuntimeError("ZeroDivisionError")``.

Everything else is CompositeImplicitAutograd, built from those kernels:
the ``.Scalar`` overloads (the scalar becomes a zero-dim "wrapped number"
tensor of the result dtype), ``floor_divide`` (``div`` with
``rounding_mode="floor"``), ``square`` (``pow``), ``clamp`` with scalar
bounds, ``clamp_min``/``clamp_max``, ``where`` with scalars, ``positive``,
``addcmul``/``addcdiv`` (``add`` with ``alpha=value`` of ``mul``/``div``) and
``lerp`` (PyTorch's two-sided formula over ``sub``, ``add``, ``mul`` and ``where``), with their
in-place forms.

The backward formulas of the kernels' ops (those with floating results) are at the end;
composites are differentiated through their decomposition.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as _dt
from ..backend import backend_of as _backend_of
from ..tensor import Tensor, make_tensor
from ._lib import defop, public, attach
from .factories import as_tensor
from .memory import same_device, copy_, _to_copy
from .promotion import broadcast_shapes, result_type, check_can_cast, _pt_name

_FLOATING = _dt.FLOATING
_BOOL = _dt.BOOL
_INTEGRAL = _dt.INTEGRAL


# -- wrapped numbers --------------------------------------------------------------------
_SCALARS: dict = {}  # (type, value, dtype, device) -> wrapped-number tensor


def scalar_tensor(value, dtype, device):
    """A zero-dim "wrapped number" tensor holding ``value`` in ``dtype``.

    Integers out of the dtype's range wrap around, as in PyTorch
    (``int8_tensor + 300`` adds 44); beyond 64 bits they raise OverflowError.
    Wrapped numbers are read-only inputs of the op they were made for, so one
    tensor per (value, dtype, device) is reused: ``x * 0.5`` in a loop, and an
    optimizer's ``mul_(beta)``, create no tensor per call.
    """
    key = (value.__class__, value, dtype, device)
    try:
        return _SCALARS[key]
    except (KeyError, TypeError):
        pass
    t = _new_scalar_tensor(value, dtype, device)
    if len(_SCALARS) >= 1024:
        _SCALARS.clear()  # bounded: values that keep changing must not grow the cache
    _SCALARS[key] = t
    return t


def _new_scalar_tensor(value, dtype, device):
    if dtype.category != _FLOATING and value.__class__ is float:
        value = int(value)
    if value.__class__ is int and not -2 ** 63 <= value < 2 ** 63:
        if not -2 ** 63 <= value < 2 ** 64:  # PyTorch reads Python ints as 64-bit words
            raise OverflowError("int too big to convert")
        if dtype.category == _INTEGRAL:
            value -= 2 ** 64
    if dtype.category == _INTEGRAL and value.__class__ is int:
        arr = np.array(value, dtype=np.int64)
        if dtype is not _dt.int64:
            arr = arr.astype(dtype.np)
    else:
        arr = np.array(value, dtype=dtype.np)
    b = _backend_of(device.type)
    t = make_tensor(b.from_numpy(arr, device), dtype, device, b.ks)
    t._wrapped_number = True
    return t


def python_scalar(value):
    """``value`` as a Python bool, int or float (numpy scalars convert); TypeError otherwise."""
    c = value.__class__
    if c is int or c is float or c is bool:
        return value
    if type(value).__name__ == "bool_":
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"expected a Tensor or a Python number, got {type(value).__name__}")


def scalar_result_dtype(dtype, value):
    """Result dtype of a tensor of ``dtype`` combined with the Python number ``value``."""
    c = value.__class__
    if c is float:
        return dtype if dtype.category == _FLOATING else _dt.get_default_dtype()
    if c is int:
        return dtype if dtype.category != _BOOL else _dt.int64
    return dtype


def float_dtype(dtype):
    """The result dtype of a floating op on ``dtype`` (integers and bool give the default float)."""
    return dtype if dtype.category == _FLOATING else _dt.get_default_dtype()


def _wrap_for(self, value):
    value = python_scalar(value)
    return scalar_tensor(value, scalar_result_dtype(self._dtype, value), self._device)


# -- checks ---------------------------------------------------------------------------------
def not_implemented(opname, dtype):
    """PyTorch's error for a dtype an op does not support (the same on every backend)."""
    return NotImplementedError(f'"{opname}" not implemented for \'{_pt_name(dtype)}\'')


# zero-dim operands (Python scalars among them) broadcast with anything: no need to ask
def check_binary(a, b, *rest):
    if a._shape != b._shape and a._shape and b._shape:
        broadcast_shapes(a._shape, b._shape)
    if a._device is not b._device:
        same_device("binary op", a, b)


def _check_inplace_shape(a, *others):
    shapes = [t._shape for t in others if t is not None and t._shape != a._shape]
    if shapes:
        out = broadcast_shapes(a._shape, *shapes)
        if out != a._shape:
            raise RuntimeError(f"output with shape {list(a._shape)} doesn't match the broadcast shape {list(out)}")


def check_inplace_binary(a, b, *rest):
    check_binary(a, b)
    if b._shape != a._shape and b._shape:
        _check_inplace_shape(a, b)
    if a._dtype is not b._dtype:
        check_can_cast(result_type(a, b), a._dtype)


def _check_alpha(a, b, alpha):
    result = result_type(a, b)
    if alpha.__class__ is bool:
        if result is not _dt.bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, float) and not result.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def check_add(a, b, alpha=1):
    if a._shape != b._shape and a._shape and b._shape:
        broadcast_shapes(a._shape, b._shape)
    if a._device is not b._device:
        same_device("add", a, b)
    if alpha != 1 or alpha is True:
        _check_alpha(a, b, alpha)


def _check_no_bool_sub(a_is_bool, b_is_bool):
    if a_is_bool and b_is_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a_is_bool or b_is_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def check_sub(a, b, alpha=1):
    if a._shape != b._shape and a._shape and b._shape:
        broadcast_shapes(a._shape, b._shape)
    if a._device is not b._device:
        same_device("sub", a, b)
    if alpha != 1 or alpha is True:
        _check_alpha(a, b, alpha)
    if a._dtype is _dt.bool or b._dtype is _dt.bool:
        _check_no_bool_sub(a._dtype is _dt.bool, b._dtype is _dt.bool)


def _check_sub_scalar(self, other, alpha=1):
    _check_no_bool_sub(self._dtype is _dt.bool, other.__class__ is bool)


def check_inplace_add(a, b, alpha=1):
    check_inplace_binary(a, b)
    if alpha != 1 or alpha is True:
        _check_alpha(a, b, alpha)


def check_inplace_sub(a, b, alpha=1):
    _check_no_bool_sub(a._dtype is _dt.bool, b._dtype is _dt.bool)
    check_inplace_add(a, b, alpha)


def _check_inplace_float_binary(a, b):
    check_binary(a, b)
    if b._shape != a._shape and b._shape:
        _check_inplace_shape(a, b)
    check_can_cast(float_dtype(result_type(a, b)), a._dtype)


_ROUNDING_MODES = (None, "trunc", "floor")


def _check_rounding_mode(a, b, rounding_mode):
    if rounding_mode not in _ROUNDING_MODES:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    if rounding_mode is not None:
        d = result_type(a, b)
        if d is _dt.bool:
            raise not_implemented(f"div_{rounding_mode}", d)


def check_div_mode(a, b, rounding_mode=None):
    check_binary(a, b)
    _check_rounding_mode(a, b, rounding_mode)


def check_inplace_div_mode(a, b, rounding_mode=None):
    if rounding_mode is None:
        _check_inplace_float_binary(a, b)
    else:
        check_inplace_binary(a, b)
    _check_rounding_mode(a, b, rounding_mode)


def _no_bool(opname, check):
    def checked(a, b, *rest):
        check(a, b, *rest)
        d = a._dtype if a._dtype is b._dtype else result_type(a, b)
        if d is _dt.bool:
            raise not_implemented(opname, d)
    return checked


def _integral_only(opname, check):
    def checked(a, b, *rest):
        check(a, b, *rest)
        d = a._dtype if a._dtype is b._dtype else result_type(a, b)
        if d.category == _FLOATING:
            raise not_implemented(opname, d)
    return checked


def _check_inplace_logical(a, b):
    check_binary(a, b)
    if b._shape != a._shape and b._shape:
        _check_inplace_shape(a, b)


# -- definitions --------------------------------------------------------------------------
def _same(dtype):
    return dtype


def scalar_overload(tensor_entry, compute=_same):
    """CompositeImplicitAutograd kernel for ``op.Scalar``: wrap the scalar and call ``op.Tensor``.

    The scalar is wrapped in ``compute(result dtype)``: the promoted dtype, or for true division
    the float dtype it computes in (so ``uint8_tensor / -3`` divides by -3.0, not by a wrapped 253).
    """
    op = tensor_entry._op

    def impl(self, other, *rest):
        d = compute(scalar_result_dtype(self._dtype, other))
        return op.positional(self, scalar_tensor(other, d, self._device), *rest)
    return impl


def inplace_scalar_overload(tensor_entry, compute=_same):
    """Kernel for ``op_.Scalar``: the scalar is wrapped in self's dtype once the result may be cast there."""
    op = tensor_entry._op

    def impl(self, other, *rest):
        check_can_cast(compute(scalar_result_dtype(self._dtype, other)), self._dtype)
        return op.positional(self, scalar_tensor(other, self._dtype, self._device), *rest)
    return impl


def defbinary(name, check, inplace_check=None, extra="", tensor="Tensor", scalar="Scalar", compute=_same,
              scalar_check=None):
    """Define ``name.Tensor`` and ``name.Scalar`` and, given ``inplace_check``, ``name_.Tensor``
    and ``name_.Scalar``; ``extra`` appends arguments to every schema, ``compute`` maps the
    promoted dtype to the one the op computes in and ``scalar_check`` checks the ``.Scalar``
    overloads. Returns the entries."""
    t = defop(f"{name}.{tensor}(Tensor self, Tensor other{extra}) -> Tensor", check=check)
    s = defop(f"{name}.{scalar}(Tensor self, Scalar other{extra}) -> Tensor", check=scalar_check,
              composite=scalar_overload(t, compute))
    if inplace_check is None:
        return t, s
    ti = defop(f"{name}_.{tensor}(Tensor(a!) self, Tensor other{extra}) -> Tensor(a!)", check=inplace_check)
    si = defop(f"{name}_.{scalar}(Tensor(a!) self, Scalar other{extra}) -> Tensor(a!)", check=scalar_check,
               composite=inplace_scalar_overload(ti, compute))
    return t, s, ti, si


def defunary(name, check=None, inplace_check=None):
    """Define ``name(Tensor self)`` and its in-place form ``name_``; returns both entries."""
    f = defop(f"{name}(Tensor self) -> Tensor", check=check)
    f_ = defop(f"{name}_(Tensor(a!) self) -> Tensor(a!)", check=inplace_check or check)
    return f, f_


def _check_float_inplace(self):
    if self._dtype.category != _FLOATING:
        check_can_cast(_dt.get_default_dtype(), self._dtype)


def _unsupported(opname, *categories):
    def check(self, *rest):
        if self._dtype.category in categories:
            raise not_implemented(opname, self._dtype)
    return check


def _check_neg(self):
    if self._dtype is _dt.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


# floating unary ops: integer and bool inputs compute in the default float dtype
FLOAT_UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
               "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "reciprocal")
exp, exp_ = defunary("exp", None, _check_float_inplace)
exp2, exp2_ = defunary("exp2", None, _check_float_inplace)
expm1, expm1_ = defunary("expm1", None, _check_float_inplace)
log, log_ = defunary("log", None, _check_float_inplace)
log2, log2_ = defunary("log2", None, _check_float_inplace)
log10, log10_ = defunary("log10", None, _check_float_inplace)
log1p, log1p_ = defunary("log1p", None, _check_float_inplace)
sqrt, sqrt_ = defunary("sqrt", None, _check_float_inplace)
rsqrt, rsqrt_ = defunary("rsqrt", None, _check_float_inplace)
sin, sin_ = defunary("sin", None, _check_float_inplace)
cos, cos_ = defunary("cos", None, _check_float_inplace)
tan, tan_ = defunary("tan", None, _check_float_inplace)
asin, asin_ = defunary("asin", None, _check_float_inplace)
acos, acos_ = defunary("acos", None, _check_float_inplace)
atan, atan_ = defunary("atan", None, _check_float_inplace)
sinh, sinh_ = defunary("sinh", None, _check_float_inplace)
cosh, cosh_ = defunary("cosh", None, _check_float_inplace)
tanh, tanh_ = defunary("tanh", None, _check_float_inplace)
sigmoid, sigmoid_ = defunary("sigmoid", None, _check_float_inplace)
erf, erf_ = defunary("erf", None, _check_float_inplace)
reciprocal, reciprocal_ = defunary("reciprocal", None, _check_float_inplace)

# dtype-preserving unary ops
abs, abs_ = defunary("abs", _unsupported("abs", _BOOL))
neg, neg_ = defunary("neg", _check_neg)
sign, sign_ = defunary("sign")
floor, floor_ = defunary("floor", _unsupported("floor", _BOOL))
ceil, ceil_ = defunary("ceil", _unsupported("ceil", _BOOL))
round, round_ = defunary("round", _unsupported("round", _BOOL))
trunc, trunc_ = defunary("trunc", _unsupported("trunc", _BOOL))
frac, frac_ = defunary("frac", _unsupported("frac", _BOOL, _INTEGRAL))
round_decimals = defop("round.decimals(Tensor self, *, int decimals) -> Tensor",
                       check=_unsupported("round", _BOOL, _INTEGRAL))
round_decimals_ = defop("round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)",
                        check=_unsupported("round", _BOOL, _INTEGRAL))
logical_not, logical_not_ = defunary("logical_not")
bitwise_not, bitwise_not_ = defunary("bitwise_not", _unsupported("bitwise_not", _FLOATING))

# arithmetic
add, add_scalar, add_, add_scalar_ = defbinary("add", check_add, check_inplace_add, ", *, Scalar alpha=1")
sub, sub_scalar, sub_, sub_scalar_ = defbinary("sub", check_sub, check_inplace_sub, ", *, Scalar alpha=1",
                                               scalar_check=_check_sub_scalar)
mul, mul_scalar, mul_, mul_scalar_ = defbinary("mul", check_binary, check_inplace_binary)
div, div_scalar, div_, div_scalar_ = defbinary("div", check_binary, _check_inplace_float_binary,
                                               compute=float_dtype)
div_mode, div_scalar_mode, div_mode_, div_scalar_mode_ = defbinary(
    "div", check_div_mode, check_inplace_div_mode, ", *, str? rounding_mode", "Tensor_mode", "Scalar_mode")
remainder, remainder_scalar, remainder_, remainder_scalar_ = defbinary(
    "remainder", _no_bool("remainder", check_binary), _no_bool("remainder", check_inplace_binary))
fmod, fmod_scalar, fmod_, fmod_scalar_ = defbinary(
    "fmod", _no_bool("fmod", check_binary), _no_bool("fmod", check_inplace_binary))
atan2 = defop("atan2(Tensor self, Tensor other) -> Tensor", check=check_binary)
atan2_ = defop("atan2_(Tensor(a!) self, Tensor other) -> Tensor(a!)", check=_check_inplace_float_binary)
maximum = defop("maximum(Tensor self, Tensor other) -> Tensor", check=check_binary)
minimum = defop("minimum(Tensor self, Tensor other) -> Tensor", check=check_binary)


def _remainder_scalar_tensor(self, other):
    return remainder(scalar_tensor(self, scalar_result_dtype(other._dtype, self), other._device), other)


def _rsub_scalar_impl(self, other, alpha=1):
    return sub(scalar_tensor(other, scalar_result_dtype(self._dtype, other), self._device), self, alpha=alpha)


rsub = defop("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
             composite=lambda self, other, alpha=1: sub(other, self, alpha=alpha))
def _check_rsub_scalar(self, other, alpha=1):
    _check_no_bool_sub(other.__class__ is bool, self._dtype is _dt.bool)


rsub_scalar = defop("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", check=_check_rsub_scalar,
                    composite=_rsub_scalar_impl)
remainder_scalar_tensor = defop("remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
                                composite=_remainder_scalar_tensor)


def _floor_divide_impl(self, other):
    return div_mode(self, other, rounding_mode="floor")


def _floor_divide_scalar_impl(self, other):
    return div_scalar_mode(self, other, rounding_mode="floor")


def _floor_divide_inplace_impl(self, other):
    return div_mode_(self, other, rounding_mode="floor")


def _floor_divide_scalar_inplace_impl(self, other):
    return div_scalar_mode_(self, other, rounding_mode="floor")


floor_divide = defop("floor_divide(Tensor self, Tensor other) -> Tensor", composite=_floor_divide_impl)
floor_divide_scalar = defop("floor_divide.Scalar(Tensor self, Scalar other) -> Tensor",
                            composite=_floor_divide_scalar_impl)
floor_divide_ = defop("floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                      composite=_floor_divide_inplace_impl)
floor_divide_scalar_ = defop("floor_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                             composite=_floor_divide_scalar_inplace_impl)


# pow
_check_pow = _no_bool("pow", check_binary)
_check_pow_ = _no_bool("pow", check_inplace_binary)


def _check_negative_int_power(result, exponent):
    if result.category != _FLOATING and exponent.__class__ is int and exponent < 0:
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


pow = defop("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", check=_check_pow)
pow_tensor_scalar = defop("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
                          composite=_pow_tensor_scalar_impl)
pow_scalar = defop("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", composite=_pow_scalar_impl)
pow_ = defop("pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", check=_check_pow_)
pow_scalar_ = defop("pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
                    composite=_pow_inplace_scalar_impl)


def _square_impl(self):
    return pow_tensor_scalar(self, 2)


def _square_inplace_impl(self):
    return pow_scalar_(self, 2)


square = defop("square(Tensor self) -> Tensor", composite=_square_impl)
square_ = defop("square_(Tensor(a!) self) -> Tensor(a!)", composite=_square_inplace_impl)


def _check_positive(self):
    if self._dtype is _dt.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")


positive = defop("positive(Tensor(a) self) -> Tensor(a)", check=_check_positive, composite=lambda self: self)

# comparisons
eq, eq_scalar = defbinary("eq", check_binary)
ne, ne_scalar = defbinary("ne", check_binary)
lt, lt_scalar = defbinary("lt", check_binary)
le, le_scalar = defbinary("le", check_binary)
gt, gt_scalar = defbinary("gt", check_binary)
ge, ge_scalar = defbinary("ge", check_binary)

# logical and bitwise
logical_and = defop("logical_and(Tensor self, Tensor other) -> Tensor", check=check_binary)
logical_or = defop("logical_or(Tensor self, Tensor other) -> Tensor", check=check_binary)
logical_xor = defop("logical_xor(Tensor self, Tensor other) -> Tensor", check=check_binary)
logical_and_ = defop("logical_and_(Tensor(a!) self, Tensor other) -> Tensor(a!)", check=_check_inplace_logical)
logical_or_ = defop("logical_or_(Tensor(a!) self, Tensor other) -> Tensor(a!)", check=_check_inplace_logical)
logical_xor_ = defop("logical_xor_(Tensor(a!) self, Tensor other) -> Tensor(a!)", check=_check_inplace_logical)
bitwise_and, bitwise_and_scalar, bitwise_and_, bitwise_and_scalar_ = defbinary(
    "bitwise_and", _integral_only("bitwise_and", check_binary), _integral_only("bitwise_and", check_inplace_binary))
bitwise_or, bitwise_or_scalar, bitwise_or_, bitwise_or_scalar_ = defbinary(
    "bitwise_or", _integral_only("bitwise_or", check_binary), _integral_only("bitwise_or", check_inplace_binary))
bitwise_xor, bitwise_xor_scalar, bitwise_xor_, bitwise_xor_scalar_ = defbinary(
    "bitwise_xor", _integral_only("bitwise_xor", check_binary), _integral_only("bitwise_xor", check_inplace_binary))


# where
def _check_where(condition, self, other):
    if condition._dtype is not _dt.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_pt_name(condition._dtype)}")
    s = condition._shape
    if self._shape != s or other._shape != s:
        broadcast_shapes(s, self._shape, other._shape)
    same_device("where", condition, self, other)


def _where_scalar_other(condition, self, other):
    return where(condition, self, _wrap_for(self, other))


def _where_scalar_self(condition, self, other):
    return where(condition, _wrap_for(other, self), other)


def _where_scalar(condition, self, other):
    d = result_type(self, other)
    return where(condition, scalar_tensor(self, d, condition._device), scalar_tensor(other, d, condition._device))


where = defop("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", check=_check_where)
where_scalar_other = defop("where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
                           composite=_where_scalar_other)
where_scalar_self = defop("where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
                          composite=_where_scalar_self)
where_scalar = defop("where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor", composite=_where_scalar)


# clamp
def _check_bounds_given(min, max):
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")


def _check_clamp_result(*operands):
    d = result_type(*[v for v in operands if v is not None])
    if d is _dt.bool:
        raise not_implemented("clamp", d)
    return d


def _check_clamp_tensor(self, min=None, max=None):
    _check_bounds_given(min, max)
    _check_clamp_result(self, min, max)
    s = self._shape
    if (min is not None and min._shape != s) or (max is not None and max._shape != s):
        broadcast_shapes(s, *[t._shape for t in (min, max) if t is not None])
    same_device("clamp", self, min, max)


def _check_clamp_tensor_(self, min=None, max=None):
    _check_clamp_tensor(self, min, max)
    _check_inplace_shape(self, min, max)
    check_can_cast(result_type(*[t for t in (self, min, max) if t is not None]), self._dtype)


def _check_clamp(self, min=None, max=None):
    _check_bounds_given(min, max)
    _check_clamp_result(self, min, max)


def _scalar_bounds(self, min, max, dtype):
    dev = self._device
    return (None if min is None else scalar_tensor(min, dtype, dev),
            None if max is None else scalar_tensor(max, dtype, dev))


def _clamp_impl(self, min=None, max=None):
    d = result_type(*[v for v in (self, min, max) if v is not None])
    return clamp_tensor(self, *_scalar_bounds(self, min, max, d))


def _clamp_inplace_impl(self, min=None, max=None):
    check_can_cast(result_type(*[v for v in (self, min, max) if v is not None]), self._dtype)
    return clamp_tensor_(self, *_scalar_bounds(self, min, max, self._dtype))


clamp_tensor = defop("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
                     check=_check_clamp_tensor)
clamp_tensor_ = defop("clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
                      check=_check_clamp_tensor_)
clamp = defop("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", check=_check_clamp,
              composite=_clamp_impl)
clamp_ = defop("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)", check=_check_clamp,
               composite=_clamp_inplace_impl)
clamp_min = defop("clamp_min(Tensor self, Scalar min) -> Tensor", composite=lambda self, min: clamp(self, min))
clamp_max = defop("clamp_max(Tensor self, Scalar max) -> Tensor", composite=lambda self, max: clamp(self, None, max))
clamp_min_ = defop("clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)",
                   composite=lambda self, min: clamp_(self, min))
clamp_max_ = defop("clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)",
                   composite=lambda self, max: clamp_(self, None, max))


# addcmul / addcdiv / lerp: composites of add, mul, div and sub
def _alpha_of(value, result):
    """``value`` as the ``alpha`` of ``add``: integer results truncate a float value, as PyTorch does."""
    if result.category != _FLOATING and value.__class__ is float:
        return int(value)
    return value


def _check_addcdiv(self, tensor1, tensor2, value=1):
    if tensor1._dtype.category != _FLOATING and tensor2._dtype.category != _FLOATING:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * tensorplug.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")


# PyTorch's addcmul/addcdiv kernels compute float16 and bfloat16 in float32 ("opmath") and round
# once: a product or quotient rounded to half precision before the addition loses the low bits
# that cancellation then exposes (far more than one rounding off)
_HALF = (_dt.float16, _dt.bfloat16)


def _in_float32(impl, self, tensor1, tensor2, value, out):
    up = [_to_copy(t, dtype=_dt.float32) for t in (self, tensor1, tensor2)]
    return _to_copy(impl(*up, value), dtype=out)


def _addcmul_impl(self, tensor1, tensor2, value=1):
    out = result_type(self, tensor1, tensor2)
    if out in _HALF:
        return _in_float32(_addcmul_impl, self, tensor1, tensor2, value, out)
    prod = mul(tensor1, tensor2)
    return add(self, prod, alpha=_alpha_of(value, result_type(self, prod)))


def _addcmul_inplace_impl(self, tensor1, tensor2, value=1):
    if self._dtype in _HALF:
        _check_inplace_shape(self, tensor1, tensor2)
        return copy_(self, _addcmul_impl(self, tensor1, tensor2, value))
    return add_(self, mul(tensor1, tensor2), alpha=_alpha_of(value, self._dtype))


def _addcdiv_impl(self, tensor1, tensor2, value=1):
    out = result_type(self, tensor1, tensor2)
    if out in _HALF:
        return _in_float32(_addcdiv_impl, self, tensor1, tensor2, value, out)
    return add(self, div(tensor1, tensor2), alpha=value)


def _addcdiv_inplace_impl(self, tensor1, tensor2, value=1):
    if self._dtype in _HALF:
        _check_inplace_shape(self, tensor1, tensor2)
        return copy_(self, _addcdiv_impl(self, tensor1, tensor2, value))
    return add_(self, div(tensor1, tensor2), alpha=value)


addcmul = defop("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
                composite=_addcmul_impl)
addcmul_ = defop("addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)",
                 composite=_addcmul_inplace_impl)
addcdiv = defop("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
                check=_check_addcdiv, composite=_addcdiv_impl)
addcdiv_ = defop("addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)",
                 check=_check_addcdiv, composite=_addcdiv_inplace_impl)


def _check_lerp(self, end, weight):
    d = self._dtype
    if d.category != _FLOATING:
        raise not_implemented("lerp", d)
    tensors = (end, weight) if isinstance(weight, Tensor) else (end,)
    for name, t in zip(("end", "weight"), tensors):
        if t._dtype is not d:
            raise RuntimeError(f"expected dtype {d.name} for `{name}` but got dtype {t._dtype.name}")
    broadcast_shapes(self._shape, *[t._shape for t in tensors])
    same_device("lerp", self, *tensors)


def _check_lerp_(self, end, weight):
    _check_lerp(self, end, weight)
    _check_inplace_shape(self, end, weight if isinstance(weight, Tensor) else None)


# PyTorch's formula: exact at both ends (weight 0 gives self, 1 gives end) and finite-safe
def _lerp_scalar_impl(self, end, weight):
    diff = sub(end, self)
    if weight < 0.5:
        return add(self, diff, alpha=weight)
    return sub(end, diff, alpha=1 - weight)


def _lerp_scalar_inplace_impl(self, end, weight):
    diff = sub(end, self)
    if weight < 0.5:
        return add_(self, diff, alpha=weight)
    return copy_(self, sub(end, diff, alpha=1 - weight))


def _lerp_impl(self, end, weight):
    diff = sub(end, self)
    return where(lt_scalar(weight, 0.5), add(self, mul(weight, diff)), sub(end, mul(diff, rsub_scalar(weight, 1))))


lerp = defop("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", check=_check_lerp,
             composite=_lerp_impl)
lerp_scalar = defop("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", check=_check_lerp,
                    composite=_lerp_scalar_impl)
lerp_ = defop("lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)", check=_check_lerp_,
              composite=lambda self, end, weight: copy_(self, _lerp_impl(self, end, weight)))
lerp_scalar_ = defop("lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)", check=_check_lerp_,
                     composite=_lerp_scalar_inplace_impl)


# -- public functions, methods and operators -----------------------------------------------
def _is_tensor(x):
    return x.__class__ is Tensor or isinstance(x, Tensor)


def _export(names, fn, doc=None):
    """Make ``fn`` the public function and the Tensor method of each of ``names``."""
    if doc is not None:
        fn.__doc__ = doc
    for n in names.split():
        public(n, fn)
        attach(n, fn)
    return fn


def _documented(entry, doc):
    entry.__doc__ = f"{doc}\n\nSchema: {entry._op.schema}"
    return entry


def _tensor_or_scalar(name, t_entry, s_entry, doc):
    """``name(input, other, ...)`` where ``other`` is a Tensor or a Python number."""
    def fn(input, other, *args, **kwargs):
        if other.__class__ is Tensor or isinstance(other, Tensor):
            if not isinstance(input, Tensor) and isinstance(input, (int, float, bool)):
                # a Python number first (tensorplug.sub(3, t)): a wrapped number, as in PyTorch
                input = scalar_tensor(input, result_type(input, other), other._device)
            return t_entry(input, other, *args, **kwargs)
        return s_entry(input, other, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


_FLOAT_NOTE = " Integer and bool inputs give the default float dtype."
_UNARY_DOCS = {
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
    "neg": ("neg negative", "-x (bool is not supported: use ~ or logical_not)."),
    "sign": ("sign", "-1, 0 or 1 by the sign of each element (0 for NaN)."),
    "floor": ("floor", "Largest integer not greater than each element."),
    "ceil": ("ceil", "Smallest integer not less than each element."),
    "trunc": ("trunc fix", "Round toward zero."),
    "frac": ("frac", "x - trunc(x) (floating point only)."),
    "logical_not": ("logical_not", "True where the element is zero (bool result)."),
    "bitwise_not": ("bitwise_not", "Bitwise NOT of integer tensors; logical NOT of bool tensors."),
    "square": ("square", "x * x, as pow(x, 2): bool inputs give int64."),
}
for _name, (_names, _doc) in _UNARY_DOCS.items():
    _f, _f_ = globals()[_name], globals()[_name + "_"]
    _export(_names, _documented(_f, _doc + (_FLOAT_NOTE if _name in FLOAT_UNARY else "")))
    _documented(_f_, f"In-place {_name}." + (" An integer self raises: the float result can't be cast to it."
                                             if _name in FLOAT_UNARY else ""))
    for _n in _names.split():
        attach(_n + "_", _f_)
_export("positive", _documented(positive, "The input itself (bool raises, as for the unary `+` operator)."))


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


_export("round", round_fn)
attach("round_", round_inplace)

_BINARY = {
    # op: (Tensor entry, Scalar entry, in-place Tensor, in-place Scalar, public names, doc)
    "add": (add, add_scalar, add_, add_scalar_, "add", "input + alpha * other."),
    "sub": (sub, sub_scalar, sub_, sub_scalar_, "sub subtract", "input - alpha * other (bool is not supported)."),
    "mul": (mul, mul_scalar, mul_, mul_scalar_, "mul multiply", "input * other (on bool: logical and)."),
    "rsub": (rsub, rsub_scalar, None, None, "rsub", "other - alpha * input (bool is not supported)."),
    "fmod": (fmod, fmod_scalar, fmod_, fmod_scalar_, "fmod",
             "C-style remainder: the result has the sign of the dividend."),
    "floor_divide": (floor_divide, floor_divide_scalar, floor_divide_, floor_divide_scalar_, "floor_divide",
                     "Division rounded down: div(input, other, rounding_mode='floor')."),
    "bitwise_and": (bitwise_and, bitwise_and_scalar, bitwise_and_, bitwise_and_scalar_, "bitwise_and",
                    "Bitwise AND of integer or bool tensors."),
    "bitwise_or": (bitwise_or, bitwise_or_scalar, bitwise_or_, bitwise_or_scalar_, "bitwise_or",
                   "Bitwise OR of integer or bool tensors."),
    "bitwise_xor": (bitwise_xor, bitwise_xor_scalar, bitwise_xor_, bitwise_xor_scalar_, "bitwise_xor",
                    "Bitwise XOR of integer or bool tensors."),
    "eq": (eq, eq_scalar, None, None, "eq", "input == other, elementwise (bool result)."),
    "ne": (ne, ne_scalar, None, None, "ne not_equal", "input != other, elementwise (bool result)."),
    "lt": (lt, lt_scalar, None, None, "lt less", "input < other, elementwise (bool result)."),
    "le": (le, le_scalar, None, None, "le less_equal", "input <= other, elementwise (bool result)."),
    "gt": (gt, gt_scalar, None, None, "gt greater", "input > other, elementwise (bool result)."),
    "ge": (ge, ge_scalar, None, None, "ge greater_equal", "input >= other, elementwise (bool result)."),
}
for _name, (_t, _s, _ti, _si, _names, _doc) in _BINARY.items():
    _export(_names, _tensor_or_scalar(_name, _t, _s, _doc + " ``other`` may be a Python number."))
    if _ti is not None:
        _fi = _tensor_or_scalar(_name + "_", _ti, _si, f"In-place {_name}: the result is cast to self's dtype.")
        for _n in _names.split():
            attach(_n + "_", _fi)

_remainder_fn = _tensor_or_scalar("remainder", remainder, remainder_scalar, "")


def remainder_fn(input, other):
    """Python-style remainder: the result has the sign of the divisor; ``input`` may be a Python number."""
    if input.__class__ is Tensor or isinstance(input, Tensor):
        return _remainder_fn(input, other)
    return remainder_scalar_tensor(input, other)


_export("remainder", remainder_fn)
attach("remainder_", _tensor_or_scalar("remainder_", remainder_, remainder_scalar_, "In-place remainder."))


def div_fn(input, other, *, rounding_mode=None):
    """input / other: true division (integers give the default float dtype), or with
    ``rounding_mode`` "trunc" or "floor" the rounded quotient in the promoted dtype."""
    if other.__class__ is Tensor or isinstance(other, Tensor):
        if not isinstance(input, Tensor) and isinstance(input, (int, float, bool)):
            input = scalar_tensor(input, result_type(input, other), other._device)  # 1 / t
        if rounding_mode is None:
            return div(input, other)
        return div_mode(input, other, rounding_mode=rounding_mode)
    if rounding_mode is None:
        return div_scalar(input, other)
    return div_scalar_mode(input, other, rounding_mode=rounding_mode)


def div_inplace(self, other, *, rounding_mode=None):
    """In-place :func:`div`."""
    if other.__class__ is Tensor or isinstance(other, Tensor):
        if rounding_mode is None:
            return div_(self, other)
        return div_mode_(self, other, rounding_mode=rounding_mode)
    if rounding_mode is None:
        return div_scalar_(self, other)
    return div_scalar_mode_(self, other, rounding_mode=rounding_mode)


_export("div divide true_divide", div_fn)
for _n in ("div_", "divide_", "true_divide_"):
    attach(_n, div_inplace)


def pow_fn(input, exponent):
    """input ** exponent; either may be a Python number. Integer tensors raise for negative
    Python integer exponents, and give 0 (or +-1 for bases +-1) for negative tensor exponents."""
    if input.__class__ is Tensor or isinstance(input, Tensor):
        if exponent.__class__ is Tensor or isinstance(exponent, Tensor):
            return pow(input, exponent)
        return pow_tensor_scalar(input, exponent)
    return pow_scalar(input, exponent)


_export("pow", pow_fn)
attach("pow_", _tensor_or_scalar("pow_", pow_, pow_scalar_, "In-place pow."))

_export("atan2 arctan2", _documented(atan2, "Angle of the point (other, input) in radians (float result)."))
attach("atan2_", _documented(atan2_, "In-place atan2."))
attach("arctan2_", atan2_)
_export("maximum", _documented(maximum, "Elementwise maximum; NaN propagates."))
_export("minimum", _documented(minimum, "Elementwise minimum; NaN propagates."))
for _name, _f, _f_ in (("logical_and", logical_and, logical_and_), ("logical_or", logical_or, logical_or_),
                       ("logical_xor", logical_xor, logical_xor_)):
    _export(_name, _documented(_f, f"Elementwise {_name[8:]} of truth values (nonzero is True); bool result."))
    attach(_name + "_", _documented(_f_, f"In-place {_name}: the bool result is cast to self's dtype."))


def where_fn(condition, input, other):
    """Elements of ``input`` where the bool tensor ``condition`` is True, else of ``other``;
    either may be a Python number; the result dtype is their promotion."""
    if input.__class__ is Tensor or isinstance(input, Tensor):
        if other.__class__ is Tensor or isinstance(other, Tensor):
            return where(condition, input, other)
        return where_scalar_other(condition, input, other)
    if other.__class__ is Tensor or isinstance(other, Tensor):
        return where_scalar_self(condition, input, other)
    return where_scalar(condition, input, other)


def where_method(self, condition, other):
    """``self.where(condition, other)`` is ``where(condition, self, other)``."""
    return where_fn(condition, self, other)


public("where", where_fn)
attach("where", where_method)


def _bound(self, v):
    return v if v is None or _is_tensor(v) else _wrap_for(self, v)


def clamp_fn(input, min=None, max=None):
    """Limit ``input`` to [min, max]; bounds are Python numbers, tensors (broadcast) or None.
    The result dtype promotes input with the bounds (``int_tensor.clamp(min=0.5)`` is float)."""
    if _is_tensor(min) or _is_tensor(max):
        return clamp_tensor(input, _bound(input, min), _bound(input, max))
    return clamp(input, min, max)


def clamp_inplace(self, min=None, max=None):
    """In-place :func:`clamp`."""
    if _is_tensor(min) or _is_tensor(max):
        return clamp_tensor_(self, _bound(self, min), _bound(self, max))
    return clamp_(self, min, max)


_export("clamp clip", clamp_fn)
attach("clamp_", clamp_inplace)
attach("clip_", clamp_inplace)
_export("clamp_min", _documented(clamp_min, "clamp(input, min=min)."))
_export("clamp_max", _documented(clamp_max, "clamp(input, max=max)."))
attach("clamp_min_", _documented(clamp_min_, "In-place clamp_min."))
attach("clamp_max_", _documented(clamp_max_, "In-place clamp_max."))

_export("addcmul", _documented(addcmul, "input + value * tensor1 * tensor2 (composite of mul and add)."))
attach("addcmul_", _documented(addcmul_, "In-place addcmul (composite of mul and add_)."))
_export("addcdiv", _documented(addcdiv, "input + value * tensor1 / tensor2 (composite of div and add); "
                                        "integer tensor1 and tensor2 raise."))
attach("addcdiv_", _documented(addcdiv_, "In-place addcdiv (composite of div and add_)."))


def lerp_fn(input, end, weight):
    """input + weight * (end - input) for floating tensors of one dtype; weight is a number or a tensor."""
    if weight.__class__ is Tensor or isinstance(weight, Tensor):
        return lerp(input, end, weight)
    return lerp_scalar(input, end, weight)


def lerp_inplace(self, end, weight):
    """In-place :func:`lerp`."""
    if weight.__class__ is Tensor or isinstance(weight, Tensor):
        return lerp_(self, end, weight)
    return lerp_scalar_(self, end, weight)


_export("lerp", lerp_fn)
attach("lerp_", lerp_inplace)


# -- Python operators -------------------------------------------------------------------------
def _operator(t_entry, s_entry):
    """``x OP y`` for a Tensor, Python number or numpy array ``y``; anything else is left to Python."""
    def op(self, other):
        c = other.__class__
        if c is Tensor:
            return t_entry(self, other)
        if c is float or c is int:
            return s_entry(self, other)
        if isinstance(other, Tensor):
            return t_entry(self, other)
        if isinstance(other, numbers.Number):
            return s_entry(self, other)
        if isinstance(other, np.ndarray):
            return t_entry(self, as_tensor(other))
        return NotImplemented
    return op


def _reflected(t_entry, compute=_same):
    """``number OP x``: the number becomes a wrapped zero-dim tensor on the left."""
    def op(self, other):
        if isinstance(other, numbers.Number):
            other = python_scalar(other)
            d = compute(scalar_result_dtype(self._dtype, other))
            return t_entry(scalar_tensor(other, d, self._device), self)
        return NotImplemented
    return op


def _rsub_operator(self, other):
    if isinstance(other, numbers.Number):
        return rsub_scalar(self, other)
    return NotImplemented


def _invert(self):
    if self._dtype.category == _FLOATING:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


_OPERATORS = {
    # operator: (Tensor entry, Scalar entry, in-place Tensor, in-place Scalar, reflected operator)
    "add": (add, add_scalar, add_, add_scalar_, None),
    "sub": (sub, sub_scalar, sub_, sub_scalar_, _rsub_operator),
    "mul": (mul, mul_scalar, mul_, mul_scalar_, None),
    "truediv": (div, div_scalar, div_, div_scalar_, _reflected(div, float_dtype)),
    "floordiv": (floor_divide, floor_divide_scalar, floor_divide_, floor_divide_scalar_, _reflected(floor_divide)),
    "mod": (remainder, remainder_scalar, remainder_, remainder_scalar_, _reflected(remainder)),
    "pow": (pow, pow_tensor_scalar, pow_, pow_scalar_, _reflected(pow)),
    "and": (bitwise_and, bitwise_and_scalar, bitwise_and_, bitwise_and_scalar_, None),
    "or": (bitwise_or, bitwise_or_scalar, bitwise_or_, bitwise_or_scalar_, None),
    "xor": (bitwise_xor, bitwise_xor_scalar, bitwise_xor_, bitwise_xor_scalar_, None),
    "eq": (eq, eq_scalar, None, None, None),
    "ne": (ne, ne_scalar, None, None, None),
    "lt": (lt, lt_scalar, None, None, None),
    "le": (le, le_scalar, None, None, None),
    "gt": (gt, gt_scalar, None, None, None),
    "ge": (ge, ge_scalar, None, None, None),
}
for _name, (_t, _s, _ti, _si, _r) in _OPERATORS.items():
    _op = _operator(_t, _s)
    attach(f"__{_name}__", _op)
    if _ti is not None:
        attach(f"__i{_name}__", _operator(_ti, _si))
        # commutative operators reflect onto themselves: 2 + x is x + 2
        attach(f"__r{_name}__", _op if _r is None else _r)
attach("__neg__", neg)
attach("__abs__", abs)
attach("__pos__", positive)
attach("__invert__", _invert)
# numpy scalars and arrays on the left defer to the Tensor's reflected operators
attach("__array_priority__", 1000)



# -- backward formulas ----------------------------------------------------------------
# Every primitive above with floating outputs has one; comparisons and the logical and
# bitwise ops give bool or integer results, which never carry history. Formulas skip
# the gradients of inputs nobody needs (``needs_input_grad``; wrapped Python numbers
# never need one). An in-place form shares its op's formula: the ``self`` it reads is
# the kernel's copy of the old value, and its result keeps self's shape.
import math as _math  # noqa: E402

from ..autograd.formulas import derivative  # noqa: E402
from ..autograd.helpers import sum_to  # noqa: E402
from .factories import zeros, zeros_like  # noqa: E402

_LN2 = _math.log(2.0)
_LN10 = _math.log(10.0)
_LOG_TWO_OVER_SQRT_PI = _math.log(2.0 / _math.sqrt(_math.pi))


def _with_inplace(name, inplace=None, uses=None):
    """Register the decorated formula for ``name`` and its in-place form (``exp_``, ``mul_.Tensor``)."""
    if inplace is None:
        base, _, overload = name.partition(".")
        inplace = f"{base}_.{overload}" if overload else base + "_"

    def register(formula):
        derivative(name, uses=uses)(formula)
        derivative(inplace, uses=uses)(formula)
        return formula
    return register


def _zero(like):
    return scalar_tensor(0, like._dtype, like._device)


def _zero_grad(grad):
    # what PyTorch gives for piecewise-constant ops: zeros, not "no gradient"
    return zeros_like(grad)


# unary ops; formulas that read ``result`` spare the in-place forms a copy of self
@_with_inplace("exp")
def _(grad, result):
    return mul(grad, result)


@_with_inplace("exp2")
def _(grad, result):
    return mul_scalar(mul(grad, result), _LN2)


@_with_inplace("expm1")
def _(grad, result):
    return mul(grad, add_scalar(result, 1))


@_with_inplace("log")
def _(grad, self):
    return div(grad, self)


@_with_inplace("log2")
def _(grad, self):
    return div(grad, mul_scalar(self, _LN2))


@_with_inplace("log10")
def _(grad, self):
    return div(grad, mul_scalar(self, _LN10))


@_with_inplace("log1p")
def _(grad, self):
    return div(grad, add_scalar(self, 1))


@_with_inplace("sqrt")
def _(grad, result):
    return div(grad, mul_scalar(result, 2))  # inf at 0, as in PyTorch


@_with_inplace("rsqrt")
def _(grad, result):
    # -0.5 * result ** 3: two multiplies cost less than a general power
    return mul(mul_scalar(grad, -0.5), mul(mul(result, result), result))


@_with_inplace("sin")
def _(grad, self):
    return mul(grad, cos(self))


@_with_inplace("cos")
def _(grad, self):
    return neg(mul(grad, sin(self)))


@_with_inplace("tan")
def _(grad, result):
    return mul(grad, add_scalar(mul(result, result), 1))


@_with_inplace("asin")
def _(grad, self):
    return mul(grad, rsqrt(rsub_scalar(mul(self, self), 1)))


@_with_inplace("acos")
def _(grad, self):
    return neg(mul(grad, rsqrt(rsub_scalar(mul(self, self), 1))))


@_with_inplace("atan")
def _(grad, self):
    return div(grad, add_scalar(mul(self, self), 1))


@_with_inplace("sinh")
def _(grad, self):
    return mul(grad, cosh(self))


@_with_inplace("cosh")
def _(grad, self):
    return mul(grad, sinh(self))


# tanh and sigmoid backward are ops of their own, as in PyTorch: a composite every backend gets,
# which a backend may fuse into one kernel (the CPU does); a formula of their own keeps double backward.
def _check_same_shape(grad_output, output):
    if grad_output._shape != output._shape:
        raise RuntimeError(f"grad_output and output must have the same shape, got {list(grad_output._shape)} "
                           f"and {list(output._shape)}")


tanh_backward = defop("tanh_backward(Tensor grad_output, Tensor output) -> Tensor", check=_check_same_shape,
                      composite=lambda grad_output, output: mul(grad_output, rsub_scalar(mul(output, output), 1)))
sigmoid_backward = defop("sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
                         check=_check_same_shape,
                         composite=lambda grad_output, output: mul(mul(grad_output, rsub_scalar(output, 1)), output))


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


@_with_inplace("tanh")
def _(grad, result):
    return tanh_backward(grad, result)


@_with_inplace("sigmoid")
def _(grad, result):
    return sigmoid_backward(grad, result)


@_with_inplace("erf")
def _(grad, self):
    # 2/sqrt(pi) * exp(-x^2), the constant folded into the exponent: one multiply fewer
    return mul(grad, exp(rsub_scalar(mul(self, self), _LOG_TWO_OVER_SQRT_PI)))


@_with_inplace("reciprocal")
def _(grad, result):
    return neg(mul(mul(grad, result), result))


@_with_inplace("abs")
def _(grad, self):
    return mul(grad, sign(self))  # 0 at 0, as in PyTorch


@_with_inplace("neg")
def _(grad):
    return neg(grad)


@_with_inplace("frac")
def _(grad):
    return grad


for _name in ("sign", "floor", "ceil", "round", "round.decimals", "trunc"):
    _with_inplace(_name)(_zero_grad)


# binary ops: the result has the broadcast shape; each gradient is summed back to its input's
def _add_grads(grad, self_shape, other_shape, alpha, needs, negate):
    gs = sum_to(grad, self_shape) if needs[0] else None
    go = None
    if needs[1]:
        go = sum_to(grad, other_shape)
        if negate:
            go = neg(go) if alpha == 1 else mul_scalar(go, -alpha)
        elif alpha != 1:
            go = mul_scalar(go, alpha)
    return gs, go


# add and sub read only shapes: their inputs are not kept alive, and in-place changes to them are fine
@derivative("add.Tensor")
def _(grad, self_shape, other_shape, alpha, needs_input_grad):
    return _add_grads(grad, self_shape, other_shape, alpha, needs_input_grad, False)


@derivative("sub.Tensor")
def _(grad, self_shape, other_shape, alpha, needs_input_grad):
    return _add_grads(grad, self_shape, other_shape, alpha, needs_input_grad, True)


@derivative("add_.Tensor")
def _(grad, other_shape, alpha, needs_input_grad):
    return _add_grads(grad, grad._shape, other_shape, alpha, needs_input_grad, False)


@derivative("sub_.Tensor")
def _(grad, other_shape, alpha, needs_input_grad):
    return _add_grads(grad, grad._shape, other_shape, alpha, needs_input_grad, True)


@_with_inplace("mul.Tensor", uses={"self": ("other",), "other": ("self",)})
def _(grad, self, other, self_shape, other_shape, needs_input_grad):
    return (sum_to(mul(grad, other), self_shape) if needs_input_grad[0] else None,
            sum_to(mul(grad, self), other_shape) if needs_input_grad[1] else None)


def _div_grads(grad, self, other, needs):
    g = div(grad, other)
    gs = sum_to(g, self._shape) if needs[0] else None
    go = neg(sum_to(mul(g, div(self, other)), other._shape)) if needs[1] else None
    return gs, go


@_with_inplace("div.Tensor")
def _(grad, self, other, needs_input_grad):
    return _div_grads(grad, self, other, needs_input_grad)


@_with_inplace("div.Tensor_mode")
def _(grad, self, other, rounding_mode, needs_input_grad):
    if rounding_mode is None:
        return _div_grads(grad, self, other, needs_input_grad)
    # a rounded quotient is piecewise constant: zero gradients, as in PyTorch
    return tuple(zeros(t._shape, dtype=grad._dtype, device=grad._device) if need else None
                 for t, need in zip((self, other), needs_input_grad))


def _mod_grads(grad, self, other, needs, rounding_mode):
    # self - other * rounded(self / other), the rounded quotient piecewise constant
    gs = sum_to(grad, self._shape) if needs[0] else None
    go = None
    if needs[1]:
        go = neg(sum_to(mul(grad, div_mode(self, other, rounding_mode=rounding_mode)), other._shape))
    return gs, go


@_with_inplace("remainder.Tensor")
def _(grad, self, other, needs_input_grad):
    return _mod_grads(grad, self, other, needs_input_grad, "floor")


@_with_inplace("fmod.Tensor")
def _(grad, self, other, needs_input_grad):
    return _mod_grads(grad, self, other, needs_input_grad, "trunc")


@_with_inplace("atan2")
def _(grad, self, other, needs_input_grad):
    # (other, -self) / (self^2 + other^2), but 0 where the denominator is 0, as in PyTorch
    denom = add(mul(self, self), mul(other, other))
    g = where(eq_scalar(denom, 0), _zero(grad), div(grad, denom))
    return (sum_to(mul(g, other), self._shape) if needs_input_grad[0] else None,
            neg(sum_to(mul(g, self), other._shape)) if needs_input_grad[1] else None)


@_with_inplace("pow.Tensor_Tensor", "pow_.Tensor")
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
        gs = sum_to(mul(mul(grad, exponent), pow(self, power)), self._shape)
    if needs_input_grad[1]:
        # result * log(self), but 0 where self == 0 and exponent >= 0 (PyTorch's
        # pow_backward_exponent); the power is recomputed rather than saved, so that
        # x ** 2 does not keep its result (and in-place changes to it stay legal)
        base = self if self._dtype is grad._dtype else self.to(grad._dtype)
        zero_base = logical_and(eq_scalar(base, 0), ge_scalar(exponent, 0))
        ge = sum_to(mul(grad, where(zero_base, _zero(grad), mul(pow(base, exponent), log(base)))),
                    exponent._shape)
    return gs, ge


def _minmax_grads(grad, self, other, needs, loses):
    # ties split the gradient equally, as in PyTorch; where a NaN propagates both inputs get it
    shared = where(eq(self, other), mul_scalar(grad, 0.5), grad)
    zero = _zero(grad)
    return (sum_to(where(loses(self, other), zero, shared), self._shape) if needs[0] else None,
            sum_to(where(loses(other, self), zero, shared), other._shape) if needs[1] else None)


@derivative("maximum")
def _(grad, self, other, needs_input_grad):
    return _minmax_grads(grad, self, other, needs_input_grad, lt)


@derivative("minimum")
def _(grad, self, other, needs_input_grad):
    return _minmax_grads(grad, self, other, needs_input_grad, gt)


@derivative("where.self")
def _(grad, condition, self, other, needs_input_grad):
    zero = _zero(grad)
    return (None,
            sum_to(where(condition, grad, zero), self._shape) if needs_input_grad[1] else None,
            sum_to(where(condition, zero, grad), other._shape) if needs_input_grad[2] else None)


@_with_inplace("clamp.Tensor")
def _(grad, self, min, max, needs_input_grad):
    # PyTorch's clamp_backward and clamp_backward_min_max: self gets the gradient where
    # min <= self <= max (so 1 at the bounds), a bound where it is the result (with
    # min > max the result is max everywhere)
    zero = _zero(grad)
    gs = gmin = gmax = None
    if needs_input_grad[0]:
        if min is not None and max is not None:
            keep = logical_and(ge(self, min), le(self, max))
        else:
            keep = ge(self, min) if min is not None else le(self, max)
        gs = sum_to(where(keep, grad, zero), self._shape)
    if needs_input_grad[1]:
        below = lt(self, min)
        if max is not None:
            below = logical_and(below, lt(min, max))
        gmin = sum_to(where(below, grad, zero), min._shape)
    if needs_input_grad[2]:
        above = gt(self, max)
        if min is not None:
            above = logical_or(above, lt(max, min))
        gmax = sum_to(where(above, grad, zero), max._shape)
    return gs, gmin, gmax
