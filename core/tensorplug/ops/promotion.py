"""Broadcasting and type promotion, shared by every op and every backend."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from .. import dtypes as _dt
from ..dtypes import promote_types, FLOATING, COMPLEX

__all__ = ["broadcast_shapes", "broadcast_shapes_fn", "result_type", "binary_dtype", "scalar_dtype", "check_can_cast"]


def broadcast_shapes(*shapes):
    """The broadcast of ``shapes``, with PyTorch's error on mismatch."""
    if len(shapes) == 2:
        a, b = shapes
        if a == b:
            return tuple(a)
        # the common broadcast (a bias over rows): one shape is a suffix of the other, no loop needed
        if len(a) < len(b):
            a, b = b, a
        if b and a[len(a) - len(b):] == b and min(a) >= 0:
            return tuple(a)
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        for i, n in enumerate(s):
            j = off + i
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {tuple(s)}")
            cur = out[j]
            if cur == 1:
                out[j] = n
            elif n != 1 and n != cur:
                raise RuntimeError(
                    f"The size of tensor a ({cur}) must match the size of tensor b ({n}) "
                    f"at non-singleton dimension {j}")
    return tuple(out)


def broadcast_shapes_fn(*shapes):
    """``tensorplug.broadcast_shapes``: the shape that tensors of ``shapes`` broadcast to, as a tuple.

    As PyTorch's: each shape is a sequence of ints or an int (a 1-d shape), None is skipped, and the
    errors are PyTorch's (the core's own checks use :func:`broadcast_shapes`, with the messages of the
    tensor ops)."""
    shapes = tuple((s,) if isinstance(s, numbers.Integral) else s for s in shapes if s is not None)
    if not shapes:
        return ()
    for s in shapes:
        if not isinstance(s, Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
    common = [1] * max(len(s) for s in shapes)
    for k, s in enumerate(shapes):
        for i in range(-1, -1 - len(s), -1):
            if s[i] == common[i]:
                continue
            if common[i] == 1:
                if s[i] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[i] = s[i]
            if s[i] != 1 and common[i] != s[i]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[i]} at {i}! Mismatching "
                                   f"argument at index {k} had {s}; but expected shape should be broadcastable "
                                   f"to {common}")
    return tuple(common)


def scalar_dtype(value):
    """dtype a Python scalar takes when it stands alone (default float for floats)."""
    if isinstance(value, bool):
        return _dt.bool
    if isinstance(value, int):
        return _dt.int64
    if isinstance(value, float):
        return _dt.get_default_dtype()
    if isinstance(value, complex):
        return _dt.get_default_complex_dtype()
    raise TypeError(f"expected a Tensor or a Python number, got {type(value).__name__}")


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None or lower.category <= higher.category:
        return higher
    if lower.category == COMPLEX and higher.category == FLOATING:
        return higher.to_complex()  # the higher class keeps its precision
    return promote_types(higher, lower)


def result_type(*operands):
    """PyTorch's result type of tensors and Python scalars.

    Dimensioned tensors take priority over zero-dim tensors, which take
    priority over Python scalars (and tensors marked as wrapped numbers); a
    lower-priority operand only widens the result when it is of a higher
    category (bool < integer < floating < complex).
    """
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "_dtype", None)
        if d is None:
            if isinstance(x, _dt.dtype):
                dim = x if dim is None else promote_types(dim, x)
                continue
            sd = scalar_dtype(x)
            wrapped = sd if wrapped is None else _wider_scalar(wrapped, sd)
        elif x._wrapped_number:
            sd = d if d.category < FLOATING else (
                _dt.get_default_dtype() if d.category == FLOATING else _dt.get_default_complex_dtype())
            wrapped = sd if wrapped is None else _wider_scalar(wrapped, sd)
        elif x._shape:
            dim = d if dim is None else promote_types(dim, d)
        else:
            zero = d if zero is None else promote_types(zero, d)
    return _combine(_combine(dim, zero), wrapped) or _dt.get_default_dtype()


def _wider_scalar(a, b):
    return a if a.category >= b.category else b


def binary_dtype(a, b):
    """Result dtype of a binary op on tensors ``a`` and ``b`` (fast when equal)."""
    da = a._dtype
    if da is b._dtype:
        return da
    return result_type(a, b)


def check_can_cast(result, out_dtype):
    """In-place/out ops: PyTorch refuses to cast float results into integer outputs etc."""
    if result.category > out_dtype.category:
        raise RuntimeError(f"result type {_pt_name(result)} can't be cast to the desired output type "
                           f"{_pt_name(out_dtype)}")


_pt_name = _dt.scalar_type_name
