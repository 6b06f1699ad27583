"""Elementwise operators: schemas, shared checks and scalar overloads.

Binary ops take two tensors (``add.Tensor``); a Python scalar operand goes to
the ``.Scalar`` overload, a CompositeImplicitAutograd kernel that turns the
scalar into a zero-dim tensor of the promoted dtype on the same device and
calls the tensor overload, so backends only implement tensor-tensor kernels.
Broadcast, device and dtype errors are raised here, once, for every backend.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..backend import BACKENDS
from ..tensor import make_tensor
from ._lib import defop
from .memory import same_device
from .promotion import broadcast_shapes, result_type, check_can_cast


def scalar_tensor(value, dtype, device):
    """A zero-dim tensor holding ``value`` (wrapping out-of-range ints like PyTorch)."""
    import numpy as np
    if dtype.category != _dt.FLOATING and isinstance(value, float):
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and dtype.category == _dt.INTEGRAL:
        arr = np.array(value, dtype=np.int64 if -2 ** 63 <= value < 2 ** 63 else object).astype(dtype.np)
    else:
        arr = np.array(value, dtype=dtype.np)
    b = BACKENDS[device.type]
    t = make_tensor(b.from_numpy(arr, device), dtype, device, b.ks)
    t._wrapped_number = True
    return t


# -- checks ----------------------------------------------------------------------
def check_binary(a, b, *rest):
    if a._shape != b._shape:
        broadcast_shapes(a._shape, b._shape)
    if a._device is not b._device:
        same_device("binary op", a, b)


def _check_alpha(a, b, alpha):
    if alpha != 1 and not isinstance(alpha, bool):
        if isinstance(alpha, float) and not result_type(a, b).is_floating_point:
            raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def check_add(a, b, alpha=1):
    check_binary(a, b)
    if alpha != 1:
        _check_alpha(a, b, alpha)


def check_sub(a, b, alpha=1):
    check_add(a, b, alpha)
    if a._dtype is _dt.bool or b._dtype is _dt.bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def check_inplace_binary(a, b, *rest):
    check_binary(a, b)
    if b._shape != a._shape and broadcast_shapes(a._shape, b._shape) != a._shape:
        raise RuntimeError(f"output with shape {list(a._shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_shapes(a._shape, b._shape))}")
    if a._dtype is not b._dtype:
        check_can_cast(result_type(a, b), a._dtype)


def check_inplace_add(a, b, alpha=1):
    check_inplace_binary(a, b)
    if alpha != 1:
        _check_alpha(a, b, alpha)


def check_inplace_sub(a, b, alpha=1):
    check_inplace_add(a, b, alpha)
    check_sub(a, b, alpha)


def scalar_overload(tensor_entry):
    """CompositeImplicitAutograd kernel for ``op.Scalar``: wrap the scalar and call ``op.Tensor``."""
    call = tensor_entry._op.positional

    def impl(self, other, *rest):
        s = scalar_tensor(other, result_type(self, other), self._device)
        return call(self, s, *rest)
    return impl


def inplace_scalar_overload(tensor_entry):
    call = tensor_entry._op.positional

    def impl(self, other, *rest):
        check_can_cast(result_type(self, other), self._dtype)
        s = scalar_tensor(other, self._dtype, self._device)
        return call(self, s, *rest)
    return impl


def defbinary(name, check, inplace_check, extra="", overload_extra_args=""):
    """Define ``name.Tensor``, ``name.Scalar``, ``name_.Tensor`` and ``name_.Scalar``."""
    t = defop(f"{name}.Tensor(Tensor self, Tensor other{extra}) -> Tensor", check=check)
    s = defop(f"{name}.Scalar(Tensor self, Scalar other{extra}) -> Tensor", composite=scalar_overload(t))
    ti = defop(f"{name}_.Tensor(Tensor(a!) self, Tensor other{extra}) -> Tensor(a!)", check=inplace_check)
    si = defop(f"{name}_.Scalar(Tensor(a!) self, Scalar other{extra}) -> Tensor(a!)",
               composite=inplace_scalar_overload(ti))
    return t, s, ti, si


add, add_scalar, add_, add_scalar_ = defbinary("add", check_add, check_inplace_add, ", *, Scalar alpha=1")
sub, sub_scalar, sub_, sub_scalar_ = defbinary("sub", check_sub, check_inplace_sub, ", *, Scalar alpha=1")
mul, mul_scalar, mul_, mul_scalar_ = defbinary("mul", check_binary, check_inplace_binary)

neg = defop("neg(Tensor self) -> Tensor")
exp = defop("exp(Tensor self) -> Tensor")
