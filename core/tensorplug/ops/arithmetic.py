"""Arithmetic: ``neg``, ``add``, ``sub``, ``mul``, ``div``, ``remainder``, ``fmod``, ``maximum``,
``minimum`` and the composites built from them (``rsub``, ``floor_divide``, ``positive``,
``addcmul``, ``addcdiv``, ``lerp``), with the Python operators ``+ - * / // %``.

Backend primitives (kernels take the schema's arguments positionally), out of
place and in place (``add.Tensor`` and ``add_.Tensor``): ``neg add sub mul div
div.Tensor_mode remainder fmod``; out of place only: ``maximum minimum``.

Everything else is CompositeImplicitAutograd: the ``.Scalar`` overloads,
``rsub``, ``floor_divide`` (``div`` with ``rounding_mode="floor"``),
``positive``, ``addcmul``/``addcdiv`` (``add`` with ``alpha=value`` of
``mul``/``div``) and ``lerp`` (PyTorch's two-sided formula over ``sub``, ``add``,
``mul`` and ``where``), with their in-place forms. Each primitive has its
backward formula next to it; composites are differentiated through their
decomposition.
"""

from __future__ import annotations

import numbers

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from ..tensor import Tensor
from ._common import cj
from ._lib import POINTWISE, defop, attach
from .comparison import where, eq, lt, gt, lt_scalar
from .factories import zeros
from .memory import same_device, copy_, _to_copy
from .pointwise import (scalar_tensor, scalar_result_dtype, float_dtype, not_implemented, check_binary,
                        check_inplace_shape, check_inplace_binary, check_inplace_float_binary, no_bool, defbinary,
                        defunary, export, export_binary, export_unary, documented, tensor_or_scalar,
                        attach_operators, reflected, with_inplace, zero, wrapped_pair, refuse_complex)
from .promotion import broadcast_shapes, result_type

_FLOATING = _dt.FLOATING


# -- checks ---------------------------------------------------------------------------------
def _check_alpha(a, b, alpha):
    result = result_type(a, b)
    if alpha.__class__ is bool:
        if result is not _dt.bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, float) and result.category < _FLOATING:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _alpha_checker(name):
    """The check of ``name(a, b, alpha)``: shapes broadcast, one device, an alpha the result can take."""
    def check(a, b, alpha=1):
        if a._shape != b._shape and a._shape and b._shape:
            broadcast_shapes(a._shape, b._shape)
        if a._device is not b._device:
            same_device(name, a, b)
        if alpha != 1 or alpha is True:
            _check_alpha(a, b, alpha)
    return check


check_add = _alpha_checker("add")
_check_sub_operands = _alpha_checker("sub")


def _check_no_bool_sub(a_is_bool, b_is_bool):
    if a_is_bool and b_is_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a_is_bool or b_is_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def check_sub(a, b, alpha=1):
    _check_sub_operands(a, b, alpha)
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


_ROUNDING_MODES = (None, "trunc", "floor")


def _check_rounding_mode(a, b, rounding_mode):
    if rounding_mode not in _ROUNDING_MODES:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    if rounding_mode is not None:
        d = result_type(a, b)
        if d is _dt.bool or d.category == _dt.COMPLEX:
            raise not_implemented(f"div_{rounding_mode}" + ("_cpu" if d is not _dt.bool else ""), d)


def check_div_mode(a, b, rounding_mode=None):
    check_binary(a, b)
    _check_rounding_mode(a, b, rounding_mode)


def check_inplace_div_mode(a, b, rounding_mode=None):
    if rounding_mode is None:
        check_inplace_float_binary(a, b)
    else:
        check_inplace_binary(a, b)
    _check_rounding_mode(a, b, rounding_mode)


def _check_neg(self):
    if self._dtype is _dt.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _check_positive(self):
    if self._dtype is _dt.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")


# -- neg, positive --------------------------------------------------------------------------
neg, neg_ = defunary("neg", _check_neg)
positive = defop("positive(Tensor(a) self) -> Tensor(a)", check=_check_positive, composite=lambda self: self, tags=POINTWISE)

export_unary({"neg": ("neg negative", "-x (bool is not supported: use ~ or logical_not).")}, globals())
export("positive", documented(positive, "The input itself (bool raises, as for the unary `+` operator)."))


@with_inplace("neg")
def _(grad):
    return neg(grad)


# -- add, sub, rsub -------------------------------------------------------------------------
add, add_scalar, add_, add_scalar_ = defbinary("add", check_add, check_inplace_add, ", *, Scalar alpha=1")
sub, sub_scalar, sub_, sub_scalar_ = defbinary("sub", check_sub, check_inplace_sub, ", *, Scalar alpha=1",
                                               scalar_check=_check_sub_scalar)


def _rsub_scalar_impl(self, other, alpha=1):
    return sub(scalar_tensor(other, scalar_result_dtype(self._dtype, other), self._device), self, alpha=alpha)


def _check_rsub_scalar(self, other, alpha=1):
    _check_no_bool_sub(other.__class__ is bool, self._dtype is _dt.bool)


rsub = defop("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
             composite=lambda self, other, alpha=1: sub(other, self, alpha=alpha))
rsub_scalar = defop("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", check=_check_rsub_scalar,
                    composite=_rsub_scalar_impl, tags=POINTWISE)


# the result has the broadcast shape; each gradient is summed back to its input's
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


# -- mul ------------------------------------------------------------------------------------
mul, mul_scalar, mul_, mul_scalar_ = defbinary("mul", check_binary, check_inplace_binary)


@with_inplace("mul.Tensor", uses={"self": ("other",), "other": ("self",)})
def _(grad, self, other, self_shape, other_shape, needs_input_grad):
    return (sum_to(mul(grad, cj(other)), self_shape) if needs_input_grad[0] else None,
            sum_to(mul(grad, cj(self)), other_shape) if needs_input_grad[1] else None)


# -- div, floor_divide, remainder, fmod -----------------------------------------------------
div, div_scalar, div_, div_scalar_ = defbinary("div", check_binary, check_inplace_float_binary,
                                               compute=float_dtype)
div_mode, div_scalar_mode, div_mode_, div_scalar_mode_ = defbinary(
    "div", check_div_mode, check_inplace_div_mode, ", *, str? rounding_mode", "Tensor_mode", "Scalar_mode")
remainder, remainder_scalar, remainder_, remainder_scalar_ = defbinary(
    "remainder", refuse_complex("remainder_cpu", no_bool("remainder", check_binary)),
    refuse_complex("remainder_cpu", no_bool("remainder", check_inplace_binary)))
fmod, fmod_scalar, fmod_, fmod_scalar_ = defbinary(
    "fmod", refuse_complex("fmod_cpu", no_bool("fmod", check_binary)),
    refuse_complex("fmod_cpu", no_bool("fmod", check_inplace_binary)))


def _remainder_scalar_tensor(self, other):
    return remainder(scalar_tensor(self, scalar_result_dtype(other._dtype, self), other._device), other)


remainder_scalar_tensor = defop("remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
                                composite=_remainder_scalar_tensor, tags=POINTWISE)


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


def div_fn(input, other, *, rounding_mode=None):
    """input / other: true division (integers give the default float dtype), or with
    ``rounding_mode`` "trunc" or "floor" the rounded quotient in the promoted dtype."""
    if other.__class__ is Tensor or isinstance(other, Tensor):
        if not isinstance(input, Tensor) and isinstance(input, (int, float, bool)):
            input = scalar_tensor(input, result_type(input, other), other._device)  # 1 / t
        if rounding_mode is None:
            return div(input, other)
        return div_mode(input, other, rounding_mode=rounding_mode)
    if not isinstance(input, Tensor) and isinstance(input, numbers.Number):  # div(2, 3): two wrapped numbers
        input, other = wrapped_pair(input, other)
        return div(input, other) if rounding_mode is None else div_mode(input, other, rounding_mode=rounding_mode)
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


_remainder_fn = tensor_or_scalar("remainder", remainder, remainder_scalar, "")


def remainder_fn(input, other):
    """Python-style remainder: the result has the sign of the divisor; ``input`` may be a Python number."""
    if input.__class__ is Tensor or isinstance(input, Tensor):
        return _remainder_fn(input, other)
    return remainder_scalar_tensor(input, other)


def _div_grads(grad, self, other, needs):
    g = div(grad, cj(other))
    gs = sum_to(g, self._shape) if needs[0] else None
    go = neg(sum_to(mul(g, cj(div(self, other))), other._shape)) if needs[1] else None
    return gs, go


@with_inplace("div.Tensor")
def _(grad, self, other, needs_input_grad):
    return _div_grads(grad, self, other, needs_input_grad)


@with_inplace("div.Tensor_mode")
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


@with_inplace("remainder.Tensor")
def _(grad, self, other, needs_input_grad):
    return _mod_grads(grad, self, other, needs_input_grad, "floor")


@with_inplace("fmod.Tensor")
def _(grad, self, other, needs_input_grad):
    return _mod_grads(grad, self, other, needs_input_grad, "trunc")


# -- maximum, minimum -----------------------------------------------------------------------
maximum = defop("maximum(Tensor self, Tensor other) -> Tensor", tags=POINTWISE, check=refuse_complex(
    lambda d: RuntimeError("maximum not implemented for complex tensors."), check_binary))
minimum = defop("minimum(Tensor self, Tensor other) -> Tensor", tags=POINTWISE, check=refuse_complex(
    lambda d: RuntimeError("minimum not implemented for complex tensors."), check_binary))


def _minmax_grads(grad, self, other, needs, loses):
    # ties split the gradient equally, as in PyTorch; where a NaN propagates both inputs get it
    shared = where(eq(self, other), mul_scalar(grad, 0.5), grad)
    z = zero(grad)
    return (sum_to(where(loses(self, other), z, shared), self._shape) if needs[0] else None,
            sum_to(where(loses(other, self), z, shared), other._shape) if needs[1] else None)


@derivative("maximum")
def _(grad, self, other, needs_input_grad):
    return _minmax_grads(grad, self, other, needs_input_grad, lt)


@derivative("minimum")
def _(grad, self, other, needs_input_grad):
    return _minmax_grads(grad, self, other, needs_input_grad, gt)


# -- addcmul, addcdiv, lerp: composites of add, mul, div and sub ----------------------------------
def _alpha_of(value, result):
    """``value`` as the ``alpha`` of ``add``: integer results truncate a float value, as PyTorch does."""
    if result.category < _FLOATING and value.__class__ is float:
        return int(value)
    return value


def _check_addcdiv(self, tensor1, tensor2, value=1):
    if tensor1._dtype.category < _FLOATING and tensor2._dtype.category < _FLOATING:
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
        check_inplace_shape(self, tensor1, tensor2)
        return copy_(self, _addcmul_impl(self, tensor1, tensor2, value))
    return add_(self, mul(tensor1, tensor2), alpha=_alpha_of(value, self._dtype))


def _addcdiv_impl(self, tensor1, tensor2, value=1):
    out = result_type(self, tensor1, tensor2)
    if out in _HALF:
        return _in_float32(_addcdiv_impl, self, tensor1, tensor2, value, out)
    return add(self, div(tensor1, tensor2), alpha=value)


def _addcdiv_inplace_impl(self, tensor1, tensor2, value=1):
    if self._dtype in _HALF:
        check_inplace_shape(self, tensor1, tensor2)
        return copy_(self, _addcdiv_impl(self, tensor1, tensor2, value))
    return add_(self, div(tensor1, tensor2), alpha=value)


addcmul = defop("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
                composite=_addcmul_impl, tags=POINTWISE)
addcmul_ = defop("addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)",
                 composite=_addcmul_inplace_impl, tags=POINTWISE)
addcdiv = defop("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
                check=_check_addcdiv, composite=_addcdiv_impl, tags=POINTWISE)
addcdiv_ = defop("addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)",
                 check=_check_addcdiv, composite=_addcdiv_inplace_impl, tags=POINTWISE)


def _check_lerp(self, end, weight):
    d = self._dtype
    if d.category < _FLOATING:
        raise not_implemented("lerp", d)
    tensors = (end, weight) if isinstance(weight, Tensor) else (end,)
    for name, t in zip(("end", "weight"), tensors):
        if t._dtype is not d:
            raise RuntimeError(f"expected dtype {d.name} for `{name}` but got dtype {t._dtype.name}")
    broadcast_shapes(self._shape, *[t._shape for t in tensors])
    same_device("lerp", self, *tensors)


def _check_lerp_(self, end, weight):
    _check_lerp(self, end, weight)
    check_inplace_shape(self, end, weight if isinstance(weight, Tensor) else None)


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
    w = weight.abs() if weight._dtype.category == _dt.COMPLEX else weight  # complex weights: by magnitude
    return where(lt_scalar(w, 0.5), add(self, mul(weight, diff)), sub(end, mul(diff, rsub_scalar(weight, 1))))


lerp = defop("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", check=_check_lerp,
             composite=_lerp_impl, tags=POINTWISE)
lerp_scalar = defop("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", check=_check_lerp,
                    composite=_lerp_scalar_impl, tags=POINTWISE)
lerp_ = defop("lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)", check=_check_lerp_,
              composite=lambda self, end, weight: copy_(self, _lerp_impl(self, end, weight)), tags=POINTWISE)
lerp_scalar_ = defop("lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)", check=_check_lerp_,
                     composite=_lerp_scalar_inplace_impl, tags=POINTWISE)


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


# -- public functions, methods and operators ------------------------------------------------
export_binary({
    # op: (Tensor entry, Scalar entry, in-place Tensor, in-place Scalar, public names, doc)
    "add": (add, add_scalar, add_, add_scalar_, "add", "input + alpha * other."),
    "sub": (sub, sub_scalar, sub_, sub_scalar_, "sub subtract", "input - alpha * other (bool is not supported)."),
    "mul": (mul, mul_scalar, mul_, mul_scalar_, "mul multiply", "input * other (on bool: logical and)."),
    "rsub": (rsub, rsub_scalar, None, None, "rsub", "other - alpha * input (bool is not supported)."),
    "fmod": (fmod, fmod_scalar, fmod_, fmod_scalar_, "fmod",
             "C-style remainder: the result has the sign of the dividend."),
    "floor_divide": (floor_divide, floor_divide_scalar, floor_divide_, floor_divide_scalar_, "floor_divide",
                     "Division rounded down: div(input, other, rounding_mode='floor')."),
})
export("remainder", remainder_fn)
attach("remainder_", tensor_or_scalar("remainder_", remainder_, remainder_scalar_, "In-place remainder."))
export("div divide true_divide", div_fn)
for _n in ("div_", "divide_", "true_divide_"):
    attach(_n, div_inplace)
export("maximum", documented(maximum, "Elementwise maximum; NaN propagates."))
export("minimum", documented(minimum, "Elementwise minimum; NaN propagates."))
export("addcmul", documented(addcmul, "input + value * tensor1 * tensor2 (composite of mul and add)."))
attach("addcmul_", documented(addcmul_, "In-place addcmul (composite of mul and add_)."))
export("addcdiv", documented(addcdiv, "input + value * tensor1 / tensor2 (composite of div and add); "
                                      "integer tensor1 and tensor2 raise."))
attach("addcdiv_", documented(addcdiv_, "In-place addcdiv (composite of div and add_)."))
export("lerp", lerp_fn)
attach("lerp_", lerp_inplace)


def _rsub_operator(self, other):
    """``number - x``; called directly with a tensor ``y``, ``y - x`` as in PyTorch."""
    if isinstance(other, numbers.Number):
        return rsub_scalar(self, other)
    if isinstance(other, Tensor):
        return sub(other, self)
    return NotImplemented


attach_operators({
    # operator: (Tensor entry, Scalar entry, in-place Tensor, in-place Scalar, reflected operator)
    "add": (add, add_scalar, add_, add_scalar_, None),
    "sub": (sub, sub_scalar, sub_, sub_scalar_, _rsub_operator),
    "mul": (mul, mul_scalar, mul_, mul_scalar_, None),
    "truediv": (div, div_scalar, div_, div_scalar_, reflected(div, float_dtype)),
    "floordiv": (floor_divide, floor_divide_scalar, floor_divide_, floor_divide_scalar_, reflected(floor_divide)),
    "mod": (remainder, remainder_scalar, remainder_, remainder_scalar_, reflected(remainder)),
})
attach("__neg__", neg)
attach("__pos__", positive)
