"""Small helpers the op modules share: entry docstrings, dim arguments, the compute dtype.

It imports no op module but :mod:`.memory`, so any op module may import it.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch.dispatcher import OPS as _OPS
from .memory import _to_copy

_F16, _BF16, _F32 = _dt.float16, _dt.bfloat16, _dt.float32


def document(entry, text):
    """Put a user-facing sentence in front of an entry function's schema docstring."""
    entry.__doc__ = f"{text}\n\n{entry.__doc__}"
    return entry


def dims_arg(dim):
    """``dim`` as the entries take it: an int or a list becomes a tuple."""
    c = dim.__class__
    if c is int:
        return (dim,)
    if c is list:
        return tuple(dim)
    return dim


def opmath(x):
    """``x`` in the dtype PyTorch computes in: float32 for float16 and bfloat16, else its own.

    float16 and bfloat16 inputs of reductions and multi-step activations compute in
    float32 and round once at the end, as PyTorch's CPU kernels do (their "opmath"
    type): a float16 sum of squares overflows at 256, and each rounding of an
    intermediate would cost accuracy PyTorch does not lose.
    """
    d = x._dtype
    return _to_copy(x, dtype=_F32) if d is _F16 or d is _BF16 else x


def as_dtype(x, dtype):
    """``x`` in ``dtype`` (itself when it has it already)."""
    return x if x._dtype is dtype else _to_copy(x, dtype=dtype)


_COMPLEX = _dt.COMPLEX


def cj(t):
    """``conj(t)`` for a complex ``t``, else ``t`` itself: what a holomorphic op's backward formula multiplies
    by (PyTorch's convention passes ``grad * conj(f'(z))`` back). Real tensors pay one comparison."""
    if t._dtype.category == _COMPLEX:
        return _OPS["tensorplug::conj_physical"](t)  # defined in complex_ops, a module above this one
    return t
