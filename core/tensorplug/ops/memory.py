"""Memory primitives (empty, fill_, copy_) and the composites built on them."""

from __future__ import annotations

from .. import dtypes as _dt
from ._lib import POINTWISE, defop
from .promotion import broadcast_shapes, scalar_dtype
from ..backend import backend_for, canonical_device


def _check_size(size, *rest, **kwargs):
    for d in rest + tuple(kwargs.values()):
        if d.__class__ is _dt.dtype and d.factory_error:
            raise RuntimeError(d.factory_error)
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(size)}")


def same_device(opname, *tensors):
    """PyTorch's error when tensors of one op live on different devices."""
    dev = None
    for t in tensors:
        if t is None:
            continue
        if dev is None:
            dev = t._device
        elif t._device is not dev and not t._wrapped_number:
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two devices, "
                f"{dev} and {t._device}! (when checking arguments for {opname})")


empty = defop("empty(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
              check=_check_size)


def _check_copy(self, src, non_blocking=False):
    if src._shape != self._shape:
        b = broadcast_shapes(self._shape, src._shape)
        if b != self._shape:
            raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the broadcast "
                               f"shape {list(b)}")


copy_ = defop("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", check=_check_copy)
def _check_fill(self, value):
    if value.__class__ is complex and self._dtype.category != _dt.COMPLEX:
        raise RuntimeError(f"value cannot be converted to type {_dt.c_type_name(self._dtype)} without overflow")


fill_ = defop("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", check=_check_fill)


def _fresh(t):
    """A factory's result starts at version 0, as in PyTorch: the write that
    initialised it is not a user's in-place op. Nothing else holds its storage
    yet, so dropping the lazily created one resets the counter."""
    t.__dict__.pop("_storage", None)
    return t


def _to_copy_impl(self, dtype=None, device=None, non_blocking=False):
    dev = self._device if device is None else canonical_device(device)
    out = empty(self._shape, dtype=self._dtype if dtype is None else dtype, device=dev)
    return _fresh(copy_(out, self))


def _check_to_copy(self, dtype=None, device=None, non_blocking=False):
    if dtype is not None and dtype.factory_error and dtype is not self._dtype:
        raise RuntimeError(dtype.factory_error)


_to_copy = defop("_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, "
                 "bool non_blocking=False) -> Tensor", explicit=_to_copy_impl, check=_check_to_copy)


def _clone_impl(self, memory_format=None):
    return _fresh(copy_(empty(self._shape, dtype=self._dtype, device=self._device), self))


clone = defop("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", explicit=_clone_impl, tags=POINTWISE)
clone.__doc__ = ("A copy of ``self`` in fresh, contiguous memory (autograd flows back to ``self``).\n\n"
                 "``memory_format`` is accepted for PyTorch compatibility and ignored: tensorplug has only the "
                 "row-major (contiguous) format.")


def _full_impl(size, fill_value, dtype=None, device=None):
    if dtype is None:
        dtype = scalar_dtype(fill_value)
    return _fresh(fill_(empty(size, dtype=dtype, device=device), fill_value))


full = defop("full(int[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
             check=_check_size, explicit=_full_impl)


def _contiguous_impl(self, memory_format=None):
    return self if self.is_contiguous() else clone(self)


contiguous = defop("contiguous(Tensor(a) self, *, MemoryFormat? memory_format=None) -> Tensor(a)",
                   composite=_contiguous_impl)
contiguous.__doc__ = ("``self`` if it is already contiguous, else a contiguous copy.\n\n"
                      "``memory_format`` is accepted for PyTorch compatibility and ignored (row-major only).")


# -- backward formulas ----------------------------------------------------------------
from ..autograd.formulas import derivative  # noqa: E402
from ..autograd.helpers import sum_to  # noqa: E402


@derivative("copy_")
def _(grad, src_shape, needs_input_grad):
    # the old values of self are overwritten: no gradient flows to them (zeros, as in PyTorch)
    return (full(grad._shape, 0, dtype=grad._dtype, device=grad._device) if needs_input_grad[0] else None,
            sum_to(grad, src_shape) if needs_input_grad[1] else None)


@derivative("fill_.Scalar")
def _(grad):
    return full(grad._shape, 0, dtype=grad._dtype, device=grad._device)


@derivative("_to_copy")
def _(grad, self):
    if grad._dtype.category == _dt.COMPLEX and self._dtype.category != _dt.COMPLEX:
        grad = grad.real  # a real input's gradient is the real part
    return grad.to(dtype=self._dtype, device=self._device)


@derivative("clone")
def _(grad):
    return grad
