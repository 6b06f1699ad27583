"""Argument checking against schemas: the slow path behind ``op.entry``.

The generated entry accepts the common argument types with one set lookup
per argument; anything else comes here to be converted (numpy scalars,
lists for ``int[]``, device strings) or rejected with a TypeError that names
the op, the argument and its position, like PyTorch's.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._warn import warn_user
from ..device import device as _device
from ..dtypes import dtype as _dtype
from ..tensor import Tensor


def _typename(v):
    if isinstance(v, Tensor):
        return "Tensor"
    return type(v).__name__


def _fail(op, arg, value, expected=None):
    # PyTorch gives the position only for arguments that can be passed positionally
    where = ""
    if not arg.kwarg_only:
        where = f" (position {next(i for i, a in enumerate(op.schema.arguments) if a is arg) + 1})"
    raise TypeError(f"{op.schema.full_name}(): argument '{arg.name}'{where} must be "
                    f"{expected or arg.type_str()}, not {_typename(value)}")


def coerce(op, arg, value):
    """Convert ``value`` for schema argument ``arg`` or raise TypeError."""
    # the common cases first: one int, or a list of ints, for an int[] argument
    # (x.sum(1), x.permute([1, 0])): no imports, no per-element calls
    cls = value.__class__
    if arg.is_list and arg.type in ("int", "SymInt"):
        if cls is int:
            if arg.list_len is not None:
                return (value,) * arg.list_len
            _fail(op, arg, value, "tuple of ints")
        if cls is list:
            out = tuple(value)
            if all(v.__class__ is int for v in out) and arg.list_len in (None, 1, len(out)):
                return out
    if value is None:
        if arg.optional:
            return None
        _fail(op, arg, value)
    if arg.is_list and arg.type in ("int", "SymInt", "bool", "float"):
        if isinstance(value, (list, tuple)):
            out = tuple(_scalar_of(op, arg, v, arg.type) for v in value)
        elif arg.list_len is not None and not isinstance(value, (Tensor, str)):
            out = (_scalar_of(op, arg, value, arg.type),) * arg.list_len
        else:
            _fail(op, arg, value, f"tuple of {arg.type}s")
        # int[1] (dims) takes any number of values; int[N] (kernel sizes) takes 1 or N
        if arg.list_len not in (None, 1) and len(out) not in (1, arg.list_len):
            raise RuntimeError(f"{op.schema.full_name}(): argument '{arg.name}' expected "
                               f"{arg.list_len} values, got {len(out)}")
        return out
    if arg.is_list:
        return tuple(value) if isinstance(value, (list, tuple)) else _fail(op, arg, value)
    if arg.type == "ScalarType":
        if isinstance(value, _dtype):
            return value
        _fail(op, arg, value, "tensorplug.dtype")
    if arg.type == "Device":
        if isinstance(value, (_device, str)):
            return _device(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return _device("cpu", value)
        _fail(op, arg, value, "device")
    return _scalar_of(op, arg, value, arg.type)


def _scalar_of(op, arg, value, typ):
    if typ in ("int", "SymInt"):
        # a bool is not an int to PyTorch's argument parser (x.narrow(0, True, 1) is a TypeError)
        if isinstance(value, (bool, np.bool_)):
            _fail(op, arg, value, "int" if not arg.is_list else "tuple of ints")
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, Tensor) and value.numel() == 1 and not value.dtype.is_floating_point:
            return int(value.item())
        _fail(op, arg, value, "int" if not arg.is_list else "tuple of ints")
    if typ == "bool":
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        _fail(op, arg, value, "bool")
    if typ == "float":
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
        _fail(op, arg, value, "float")
    if typ == "Scalar":
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            return float(value)
        if isinstance(value, numbers.Complex):
            return complex(value)
        _fail(op, arg, value, "Number")
    if typ == "str":
        if isinstance(value, str):
            return value
        _fail(op, arg, value, "str")
    return value


def bad_arguments(op, args):
    """Called when computing the key set failed: name the offending argument."""
    for arg, v in zip(op.schema.arguments, args):
        if arg.type != "Tensor":
            continue
        if arg.is_list:
            if not isinstance(v, (list, tuple)):
                _fail(op, arg, v, "tuple of Tensors")
            for i, x in enumerate(v):
                if not isinstance(x, Tensor) and not (x is None and arg.elem_optional):
                    pos = op.schema.arguments.index(arg)
                    raise TypeError(f"expected Tensor as element {i} in argument {pos}, but got {_typename(x)}")
        elif v is None and arg.optional:
            continue
        elif not isinstance(v, Tensor):
            _fail(op, arg, v, "Tensor")


def ks_of_list(ts):
    """The union of the key sets of a ``Tensor[]`` argument (a list or tuple, never a Tensor)."""
    if not isinstance(ts, (list, tuple)):
        raise TypeError  # the entry's error path names the argument
    ks = 0
    for t in ts:
        if t is not None:
            ks |= t._ks
    return ks


def _dense_span(t):
    """``(first, last)`` element of the storage ``t`` covers if it is non-overlapping and dense, else None."""
    shape, strides = t._shape, t.stride()
    dims = sorted((st, sz) for sz, st in zip(shape, strides) if sz != 1)
    expected = 1
    for st, sz in dims:
        if sz == 0:
            return None
        if st != expected:
            return None
        expected *= sz
    off = t.storage_offset()
    return off, off + expected - 1


def check_no_partial_overlap(written, other):
    """Raise PyTorch's error if ``other`` shares memory with the ``written`` tensor without being the
    very same elements in the same layout (then reads would see some of the op's own writes).

    Called only for arguments with the same storage. As in PyTorch, layouts that are not
    non-overlapping and dense are not analysed.
    """
    if written is other:
        return
    if (written._shape == other._shape and written.stride() == other.stride()
            and written.storage_offset() == other.storage_offset()):
        return  # full overlap: every element is read before it is written
    a, b = _dense_span(written), _dense_span(other)
    if a is None or b is None:
        return
    if a[0] <= b[1] and b[0] <= a[1]:
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                           "refer to a single memory location. Please clone() the tensor before performing "
                           "the operation.")


_INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single "
                     "memory location. Please clone() the tensor before performing the operation.")

# Ops that PyTorch lets write through a tensor whose elements share memory: ``fill_`` with a number
# (``zero_`` too) writes one value everywhere; ``index_put_`` and ``masked_fill_`` warn that it is
# deprecated (the text, without PyTorch's "Triggered internally at" suffix).
_EXPANDED = ("Use of {} on expanded tensors is deprecated. Please clone() the tensor before performing this "
             "operation. This also applies to advanced indexing e.g. {}")
INTERNAL_OVERLAP_ALLOWED = {
    "tensorplug::fill_.Scalar": None,
    "tensorplug::index_put_": _EXPANDED.format("index_put_", "tensor[indices] = tensor"),
    "tensorplug::masked_fill_.Scalar": _EXPANDED.format("masked_fill_", "tensor[mask] = scalar"),
    "tensorplug::masked_fill_.Tensor": _EXPANDED.format("masked_fill_", "tensor[mask] = scalar"),
}


def has_internal_overlap(t):
    """Whether two elements of ``t`` are one memory location for sure: PyTorch's ``has_internal_overlap``
    answering YES, for a stride of 0 on a dimension of more than one element (an empty tensor has none).

    Other layouts whose elements may meet (``as_strided`` with small strides, PyTorch's MAYBE) are not
    analysed, as in PyTorch.
    """
    shape = t._shape
    for size, stride in zip(shape, t.stride()):
        if stride == 0 and size > 1:
            return 0 not in shape
    return False


def check_no_internal_overlap(t):
    """Raise PyTorch's error if writing ``t`` would write some memory location more than once.

    A tensor found free of overlap remembers it (``t._no_internal_overlap``: its layout does not change,
    except by ``.data = ...``, which forgets it), so the next writes skip the look at its strides.
    """
    if has_internal_overlap(t):
        raise RuntimeError(_INTERNAL_OVERLAP)
    t._no_internal_overlap = True


def warn_internal_overlap(t, message):
    """For the ops of :data:`INTERNAL_OVERLAP_ALLOWED`: PyTorch's deprecation warning, if any."""
    if has_internal_overlap(t):
        warn_user(message)
    else:
        t._no_internal_overlap = True


def bump_version(t):
    """In-place ops bump the version counter shared by a tensor and its views."""
    t._get_storage().version += 1
