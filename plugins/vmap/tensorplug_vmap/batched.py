"""Batched tensors: a per-example view of a value with one extra (batch) dimension.

A :class:`BatchedTensor` carries ``(value, bdim, level)``: ``value`` holds
every example, stacked along dimension ``bdim``; ``level`` says which
``vmap`` created it (1 for the outermost). Its ``_shape`` is the shape of
one example, so code inside the vmapped function sees ordinary tensors.
Its key set is the value's with the ``Batched`` bit added and the
``Autograd`` bit removed: the wrapper requires grad only when that was asked
of the wrapper itself (``grad`` inside ``vmap``), see docs/vmap.md.

The value may itself be a batched tensor of a lower level (nested vmap).
"""

from __future__ import annotations

import threading

import numpy as np

from tensorplug.plugin_api import Tensor, autograd_bit, is_contiguous as _is_contiguous, wrap_dim as _wrap_dim

KEY_NAME = "Batched"
# Below Autograd (24): a wrapper that requires grad is recorded first, then batched
PRIORITY = 20

_new = object.__new__
_AUTOGRAD = autograd_bit()
_BIT = [0]  # the Batched key's bit, set when the plugin declares the key


class VmapLevel:
    """One active ``vmap`` call: its level, batch size and randomness mode."""

    __slots__ = ("level", "size", "randomness")

    def __init__(self, level, size, randomness):
        self.level, self.size, self.randomness = level, size, randomness


class _ThreadState(threading.local):
    def __init__(self):
        self.levels = []


STATE = _ThreadState()
"""``STATE.levels``: the vmap levels active on this thread, outermost first (``levels[i].level == i + 1``)."""


def _no_data(what):
    return RuntimeError(f"vmap: {what} is not available for a batched tensor inside vmap: it holds the "
                        f"values of every example. Return the tensor from the vmapped function to get them.")


class BatchedTensor(Tensor):
    """A tensor inside ``vmap``: one example's view of ``value`` batched along ``bdim`` at ``level``."""

    __slots__ = ("_value", "_bdim", "_level")

    @property
    def _data(self):
        raise _no_data("the native array (_data)")

    @property
    def _version(self):
        return self._value._version

    def stride(self, dim=None):
        """The strides of one example (the value's strides without the batch dimension)."""
        st = self._value.stride()
        st = st[:self._bdim] + st[self._bdim + 1:]
        if dim is None:
            return st
        return st[_wrap_dim(dim, len(self._shape))]

    def is_contiguous(self, memory_format=None):
        """Whether one example is laid out densely in row-major order."""
        return _is_contiguous(self._shape, self.stride())

    def storage_offset(self):
        """The storage offset of the first example."""
        return self._value.storage_offset()

    def _get_storage(self):
        return self._value._get_storage()

    def untyped_storage(self):
        raise _no_data("untyped_storage()")

    def data_ptr(self):
        raise _no_data("data_ptr()")

    def numpy(self, *, force=False):
        raise _no_data("numpy()")

    def _host(self):
        raise _no_data("the host copy of the values")

    def _check_values(self):
        """Every example's values for the core's argument checks: batch dimensions first, then one example."""
        v = self._value._check_values()
        return np.moveaxis(v, v.ndim - self._value.dim() + self._bdim, 0)

    def tolist(self):
        raise _no_data("tolist()")

    def item(self):
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                           "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                           "operations.")

    def __bool__(self):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                           "control flow. We don't support that yet.")

    def __reduce_ex__(self, protocol):
        raise _no_data("pickling")

    def __dlpack__(self, stream=None, **kwargs):
        raise _no_data("__dlpack__")

    def _detach(self):
        """The same examples without autograd history (at every level); what ``detach()`` returns."""
        return wrap(self._value.detach(), self._bdim, self._level)

    def _alias_without_history(self):
        """A new wrapper over the same value, with no autograd state of its own."""
        return wrap(self._value, self._bdim, self._level)

    def _grad_leaf(self):
        """``(leaf, connected)`` for ``grad`` inside ``vmap``: a wrapper that requires grad at its own level.

        The value is not detached, so an enclosing ``grad`` still sees through it (``connected``).
        """
        leaf = wrap(self._value, self._bdim, self._level)
        leaf.requires_grad_(True)
        return leaf, self._requires_grad or _value_requires_grad(self._value)

    def __repr__(self):
        try:
            value = self._value
        except AttributeError:  # half-constructed: the core's text for that, rather than an error
            return Tensor.__repr__(self)
        value = repr(value).replace("\n", "\n    ")
        extra = ""
        if self._grad_fn is not None:
            extra = f", grad_fn=<{self._grad_fn.name()}>"
        elif self._requires_grad:
            extra = ", requires_grad=True"
        return f"BatchedTensor(lvl={self._level}, bdim={self._bdim}{extra}, value=\n    {value}\n)"


def _value_requires_grad(v):
    while True:
        if v._requires_grad:
            return True
        if v.__class__ is not BatchedTensor:
            return False
        v = v._value


def wrap(value, bdim, level):
    """A :class:`BatchedTensor` over ``value`` (``bdim`` non-negative)."""
    t = _new(BatchedTensor)
    t._value = value
    t._bdim = bdim
    t._level = level
    s = value._shape
    t._shape = s[:bdim] + s[bdim + 1:]
    t._dtype = value._dtype
    t._device = value._device
    t._ks = (value._ks & ~_AUTOGRAD) | _BIT[0]
    return t


def is_batched(t):
    """Whether ``t`` is a batched tensor (inside ``vmap``)."""
    return t.__class__ is BatchedTensor


def like(t, out):
    """A batched result for a ``*_like`` factory called on batched ``t``.

    ``out`` is the per-example result; every level ``t`` is batched at gets its
    own writable copy per example, so in-place writes of batched values into
    it work as they do in PyTorch.

    The copy is always fresh memory (``clone``, not ``contiguous``): with batch
    size 1 the expanded ``out`` is already contiguous, and a view of ``out``
    would make an in-place write record its history on ``out`` (the view's
    base) instead of on the value every later op reads, silently dropping that
    write's gradient (the select/slice/index backward into fresh zeros under
    ``jacrev`` of a scalar function, so ``hessian``).
    """
    levels = []
    v = t
    while v.__class__ is BatchedTensor:
        levels.append((v._level, v._value._shape[v._bdim]))
        v = v._value
    levels.reverse()  # innermost (lowest) level first: it is the outermost physical dimension
    phys = out.expand(tuple(s for _, s in levels) + out._shape).clone()
    for level, _ in levels:
        phys = wrap(phys, 0, level)
    return phys


BatchedTensor._batched_like = staticmethod(like)
