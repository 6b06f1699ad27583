"""Comparisons, logical and bitwise ops, ``where``, ``clamp``, and the closeness and finiteness tests.

Backend primitives (kernels take the schema's arguments positionally): the
comparisons ``eq ne lt le gt ge`` (``.Tensor``, out of place); ``logical_and
logical_or logical_xor`` and ``bitwise_and bitwise_or bitwise_xor`` (``.Tensor``
for bitwise), out of place and in place; the unary ``logical_not`` and
``bitwise_not`` with their in-place forms; ``where.self``, ``clamp.Tensor`` and
``clamp_.Tensor``.

Everything else is CompositeImplicitAutograd: the ``.Scalar`` overloads,
``where`` with scalars, ``clamp`` with scalar bounds, ``clamp_min``/``clamp_max``
and their in-place forms, ``isclose``, ``isnan``, ``isinf`` and ``isfinite``.

Comparisons and the logical and bitwise ops give bool or integer results, which
never carry history; ``where`` and ``clamp`` have backward formulas.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.helpers import sum_to
from ..tensor import Tensor
from ._common import document as _document
from ._lib import POINTWISE, defop, public, attach
from .factories import zeros, ones
from .memory import same_device, _to_copy
from .pointwise import (scalar_tensor, wrap_for, not_implemented, check_binary, check_inplace_shape,
                        check_inplace_binary, integral_only, unsupported, refuse_complex, defbinary, defunary, is_tensor, export,
                        export_binary, export_unary, documented, attach_operators, with_inplace, zero)
from .promotion import broadcast_shapes, result_type, check_can_cast, _pt_name

_FLOATING = _dt.FLOATING
_INF = math.inf


# -- comparisons ----------------------------------------------------------------------------
eq, eq_scalar = defbinary("eq", check_binary)
ne, ne_scalar = defbinary("ne", check_binary)
# complex numbers have no order: PyTorch's kernels refuse them
lt, lt_scalar = defbinary("lt", refuse_complex("lt_cpu", check_binary))
le, le_scalar = defbinary("le", refuse_complex("le_cpu", check_binary))
gt, gt_scalar = defbinary("gt", refuse_complex("gt_cpu", check_binary))
ge, ge_scalar = defbinary("ge", refuse_complex("ge_cpu", check_binary))


# -- logical and bitwise ----------------------------------------------------------------------
def _check_inplace_logical(a, b):
    check_binary(a, b)
    if b._shape != a._shape and b._shape:
        check_inplace_shape(a, b)


logical_not, logical_not_ = defunary("logical_not")
bitwise_not, bitwise_not_ = defunary("bitwise_not", unsupported("bitwise_not", _FLOATING))
logical_and = defop("logical_and(Tensor self, Tensor other) -> Tensor", check=check_binary, tags=POINTWISE)
logical_or = defop("logical_or(Tensor self, Tensor other) -> Tensor", check=check_binary, tags=POINTWISE)
logical_xor = defop("logical_xor(Tensor self, Tensor other) -> Tensor", check=check_binary, tags=POINTWISE)
logical_and_ = defop("logical_and_(Tensor(a!) self, Tensor other) -> Tensor(a!)", check=_check_inplace_logical, tags=POINTWISE)
logical_or_ = defop("logical_or_(Tensor(a!) self, Tensor other) -> Tensor(a!)", check=_check_inplace_logical, tags=POINTWISE)
logical_xor_ = defop("logical_xor_(Tensor(a!) self, Tensor other) -> Tensor(a!)", check=_check_inplace_logical, tags=POINTWISE)
bitwise_and, bitwise_and_scalar, bitwise_and_, bitwise_and_scalar_ = defbinary(
    "bitwise_and", integral_only("bitwise_and", check_binary), integral_only("bitwise_and", check_inplace_binary))
bitwise_or, bitwise_or_scalar, bitwise_or_, bitwise_or_scalar_ = defbinary(
    "bitwise_or", integral_only("bitwise_or", check_binary), integral_only("bitwise_or", check_inplace_binary))
bitwise_xor, bitwise_xor_scalar, bitwise_xor_, bitwise_xor_scalar_ = defbinary(
    "bitwise_xor", integral_only("bitwise_xor", check_binary), integral_only("bitwise_xor", check_inplace_binary))

export_unary({"logical_not": ("logical_not", "True where the element is zero (bool result)."),
              "bitwise_not": ("bitwise_not", "Bitwise NOT of integer tensors; logical NOT of bool tensors.")},
             globals())
export_binary({
    # op: (Tensor entry, Scalar entry, in-place Tensor, in-place Scalar, public names, doc)
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
})
for _name, _f, _f_ in (("logical_and", logical_and, logical_and_), ("logical_or", logical_or, logical_or_),
                       ("logical_xor", logical_xor, logical_xor_)):
    export(_name, documented(_f, f"Elementwise {_name[8:]} of truth values (nonzero is True); bool result."))
    attach(_name + "_", documented(_f_, f"In-place {_name}: the bool result is cast to self's dtype."))


def _invert(self):
    if self._dtype.category == _FLOATING:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


attach_operators({
    # operator: (Tensor entry, Scalar entry, in-place Tensor, in-place Scalar, reflected operator)
    "and": (bitwise_and, bitwise_and_scalar, bitwise_and_, bitwise_and_scalar_, None),
    "or": (bitwise_or, bitwise_or_scalar, bitwise_or_, bitwise_or_scalar_, None),
    "xor": (bitwise_xor, bitwise_xor_scalar, bitwise_xor_, bitwise_xor_scalar_, None),
    "eq": (eq, eq_scalar, None, None, None),
    "ne": (ne, ne_scalar, None, None, None),
    "lt": (lt, lt_scalar, None, None, None),
    "le": (le, le_scalar, None, None, None),
    "gt": (gt, gt_scalar, None, None, None),
    "ge": (ge, ge_scalar, None, None, None),
})
attach("__invert__", _invert)


# -- where ----------------------------------------------------------------------------------
def _check_where(condition, self, other):
    if condition._dtype is not _dt.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_pt_name(condition._dtype)}")
    s = condition._shape
    if self._shape != s or other._shape != s:
        broadcast_shapes(s, self._shape, other._shape)
    same_device("where", condition, self, other)


def _where_scalar_other(condition, self, other):
    return where(condition, self, wrap_for(self, other))


def _where_scalar_self(condition, self, other):
    return where(condition, wrap_for(other, self), other)


def _where_scalar(condition, self, other):
    d = result_type(self, other)
    return where(condition, scalar_tensor(self, d, condition._device), scalar_tensor(other, d, condition._device))


where = defop("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", check=_check_where, tags=POINTWISE)
where_scalar_other = defop("where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
                           composite=_where_scalar_other)
where_scalar_self = defop("where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
                          composite=_where_scalar_self)
where_scalar = defop("where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor", composite=_where_scalar)


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


def with_zero_grad(out, *sources):
    """``out``, made also a differentiable result of each of ``sources`` that requires grad (in grad mode),
    with a zero gradient: PyTorch's results that are constant in an input yet differentiable in it (the sign
    of slogdet, ``fill``, ``normal``'s samples). ``where(False, source, out)`` is ``out``, values and all
    (NaN or -0.0), and passes no gradient on; a source of another shape goes in as its sum."""
    if not is_grad_enabled():
        return out
    for src in sources:
        if isinstance(src, Tensor) and src.requires_grad:
            x = src if src._shape == out._shape else src.sum()
            if x._dtype is not out._dtype:
                x = _to_copy(x, dtype=out._dtype)
            out = where(zeros((), dtype=_dt.bool, device=out._device), x, out)
    return out


def where_method(self, condition, other):
    """``self.where(condition, other)`` is ``where(condition, self, other)``."""
    return where_fn(condition, self, other)


public("where", where_fn)
attach("where", where_method)


@derivative("where.self")
def _(grad, condition, self, other, needs_input_grad):
    z = zero(grad)
    return (None,
            sum_to(where(condition, grad, z), self._shape) if needs_input_grad[1] else None,
            sum_to(where(condition, z, grad), other._shape) if needs_input_grad[2] else None)


# -- clamp ----------------------------------------------------------------------------------
def _check_bounds_given(min, max):
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")


def _clamp_complex(d):
    return NotImplementedError("clamp is not supported for complex types")


def _check_clamp_result(*operands, bool_ok=False):
    refuse_complex(_clamp_complex)(*operands)
    d = result_type(*[v for v in operands if v is not None])
    if d is _dt.bool and not bool_ok:
        raise not_implemented("clamp", d)
    return d


def _check_clamp_tensor(self, min=None, max=None):
    _check_bounds_given(min, max)
    # one tensor bound is PyTorch's clamp_min / clamp_max, which take bool tensors; both bounds do not
    _check_clamp_result(self, min, max, bool_ok=min is None or max is None)
    s = self._shape
    if (min is not None and min._shape != s) or (max is not None and max._shape != s):
        broadcast_shapes(s, *[t._shape for t in (min, max) if t is not None])
    same_device("clamp", self, min, max)


def _check_clamp_tensor_(self, min=None, max=None):
    _check_clamp_tensor(self, min, max)
    check_inplace_shape(self, min, max)
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
                     check=_check_clamp_tensor, tags=POINTWISE)
clamp_tensor_ = defop("clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
                      check=_check_clamp_tensor_, tags=POINTWISE)
clamp = defop("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", check=_check_clamp,
              composite=_clamp_impl, tags=POINTWISE)
clamp_ = defop("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)", check=_check_clamp,
               composite=_clamp_inplace_impl, tags=POINTWISE)
clamp_min = defop("clamp_min(Tensor self, Scalar min) -> Tensor", composite=lambda self, min: clamp(self, min), tags=POINTWISE)
clamp_max = defop("clamp_max(Tensor self, Scalar max) -> Tensor", composite=lambda self, max: clamp(self, None, max), tags=POINTWISE)
clamp_min_ = defop("clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)",
                   composite=lambda self, min: clamp_(self, min), tags=POINTWISE)
clamp_max_ = defop("clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)",
                   composite=lambda self, max: clamp_(self, None, max), tags=POINTWISE)


def _bound(self, v):
    return v if v is None or is_tensor(v) else wrap_for(self, v)


def clamp_fn(input, min=None, max=None):
    """Limit ``input`` to [min, max]; bounds are Python numbers, tensors (broadcast) or None.
    The result dtype promotes input with the bounds (``int_tensor.clamp(min=0.5)`` is float)."""
    if is_tensor(min) or is_tensor(max):
        return clamp_tensor(input, _bound(input, min), _bound(input, max))
    return clamp(input, min, max)


def clamp_inplace(self, min=None, max=None):
    """In-place :func:`clamp`."""
    if is_tensor(min) or is_tensor(max):
        return clamp_tensor_(self, _bound(self, min), _bound(self, max))
    return clamp_(self, min, max)


export("clamp clip", clamp_fn)
attach("clamp_", clamp_inplace)
attach("clip_", clamp_inplace)
export("clamp_min", documented(clamp_min, "clamp(input, min=min)."))
export("clamp_max", documented(clamp_max, "clamp(input, max=max)."))
attach("clamp_min_", documented(clamp_min_, "In-place clamp_min."))
attach("clamp_max_", documented(clamp_max_, "In-place clamp_max."))


@with_inplace("clamp.Tensor")
def _(grad, self, min, max, needs_input_grad):
    # PyTorch's clamp_backward and clamp_backward_min_max: self gets the gradient where
    # min <= self <= max (so 1 at the bounds), a bound where it is the result (with
    # min > max the result is max everywhere)
    z = zero(grad)
    gs = gmin = gmax = None
    if needs_input_grad[0]:
        if min is not None and max is not None:
            keep = logical_and(ge(self, min), le(self, max))
        else:
            keep = ge(self, min) if min is not None else le(self, max)
        gs = sum_to(where(keep, grad, z), self._shape)
    if needs_input_grad[1]:
        below = lt(self, min)
        if max is not None:
            below = logical_and(below, lt(min, max))
        gmin = sum_to(where(below, grad, z), min._shape)
    if needs_input_grad[2]:
        above = gt(self, max)
        if min is not None:
            above = logical_or(above, lt(max, min))
        gmax = sum_to(where(above, grad, z), max._shape)
    return gs, gmin, gmax


# -- isclose, allclose, isnan, isinf, isfinite -------------------------------------------------------
def _check_isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if self._dtype is not other._dtype:
        raise RuntimeError(f"{_pt_name(self._dtype)} did not match {_pt_name(other._dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    check_binary(self, other)


def _isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = self == other
    floating = self._dtype.is_floating_point
    if equal_nan and floating:
        close = close | ((self != self) & (other != other))
    if rtol == 0 and atol == 0:
        return close
    # PyTorch's formula: integers compare in the default float dtype (uint8 differences would wrap)
    a = self if self._dtype is not _dt.bool else _to_copy(self, dtype=_dt.get_default_dtype())
    b = other if floating else _to_copy(other, dtype=_dt.get_default_dtype())
    allowed = (b * rtol).abs() + atol
    actual = (a - b).abs()
    return close | (isfinite(actual) & (actual <= allowed))


isclose = _document(defop("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
                          "bool equal_nan=False) -> Tensor", check=_check_isclose, composite=_isclose),
                    "|self - other| <= atol + rtol * |other| elementwise (equal infinities are close; NaNs "
                    "only with ``equal_nan``); both of one dtype.")


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of ``input`` is close to ``other`` (see :func:`isclose`)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def _isinf(self):
    if not self._dtype.is_floating_point:
        return zeros(self._shape, dtype=_dt.bool, device=self._device)
    return self.abs() == _INF


def _isfinite(self):
    if not self._dtype.is_floating_point:
        return ones(self._shape, dtype=_dt.bool, device=self._device)
    return (self - self) == 0  # inf - inf and NaN - NaN are NaN


isnan = _document(defop("isnan(Tensor self) -> Tensor", composite=lambda self: self != self, tags=POINTWISE),
                  "True where the element is NaN.")
isinf = _document(defop("isinf(Tensor self) -> Tensor", composite=_isinf, tags=POINTWISE), "True where the element is +-inf.")
isfinite = _document(defop("isfinite(Tensor self) -> Tensor", composite=_isfinite, tags=POINTWISE),
                     "True where the element is neither NaN nor +-inf.")

for _name, _fn in {"isclose": isclose, "allclose": allclose, "isnan": isnan, "isinf": isinf,
                   "isfinite": isfinite}.items():
    attach(_name, _fn)
    public(_name, _fn)
