"""``Parameter`` (a tensor a Module learns) and ``Buffer`` (state a Module keeps but does not learn)."""

from __future__ import annotations

from ..dispatch.keys import Autograd
from ..ops.factories import empty
from ..ops.methods import requires_grad_
from ..tensor import Tensor


_new = object.__new__


def _share(cls, data, requires_grad):
    """A ``cls`` instance over ``data``'s memory (storage and version counter shared), without history."""
    t = _new(cls)
    t._data = data._data
    t._shape = data._shape
    t._dtype = data._dtype
    t._device = data._device
    t._ks = data._ks & ~Autograd.bit
    t._storage = data._get_storage()
    if requires_grad:
        requires_grad_(t, True)
    return t


class Parameter(Tensor):
    """A tensor that is a module parameter: assigned to a Module attribute, it is registered in
    ``parameters()`` and ``state_dict()``.

    ``Parameter(t)`` shares ``t``'s memory (writes to one show in the other) but not its autograd
    history: the parameter is a leaf. It requires grad by default; only floating point tensors can.
    ``Parameter()`` is an empty float tensor.
    """

    _plain_subclass = True  # a plain tensor to the fused primitives (layer norm's weight takes the fused path)

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
                    data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): expected a Tensor as data, got {type(data).__name__}")
        return _share(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happened in __new__; Tensor.__init__ refuses to run

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (Tensor.__reduce_ex__(self, protocol), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)(self.detach().clone(), self._requires_grad)
        memo[id(self)] = out
        return out


def _rebuild_parameter(reduced, requires_grad):
    fn, args = reduced
    return Parameter(fn(*args), requires_grad)


class _BufferMeta(type):
    # a plain tensor is not a Buffer: only what Buffer(...) made is (PyTorch's isinstance rule)
    def __instancecheck__(cls, instance):
        return type(instance) is cls or getattr(instance, "_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor that, assigned to a Module attribute, is registered as a buffer (``persistent``:
    included in ``state_dict``). The module stores a plain tensor sharing its memory."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
                    data = empty(0)
        t = _share(Tensor, data, data._requires_grad)
        t._is_buffer = True
        t.persistent = persistent
        return t
