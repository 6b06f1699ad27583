"""Custom differentiable operations: ``tensorplug.autograd.Function``.

>>> class Exp(Function):
...     @staticmethod
...     def forward(ctx, x):
...         y = x.exp()
...         ctx.save_for_backward(y)
...         return y
...     @staticmethod
...     def backward(ctx, grad):
...         (y,) = ctx.saved_tensors
...         return grad * y
>>> Exp.apply(x)
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch.keys import Autograd
from ..tensor import Tensor
from . import _ops
from .graph import Node, SavedTensor, gradient_edge
from .grad_mode import no_grad, is_grad_enabled
from .views import rebase_history, regenerate_views

_BIT = Autograd.bit


def _rebase_dirty(t, node, tensor_args):
    """An input the Function modified in place (``mark_dirty``): its base, or its views, see the write."""
    if t._base is not None:
        if not tensor_args or tensor_args[0] is not t:
            raise RuntimeError("a custom Function that modifies a view in place (mark_dirty) must take that "
                               "view as its first tensor argument")
        rebase_history(t, node)
    elif "_views" in t.__dict__:
        regenerate_views(t)


class FunctionCtx:
    """The ``ctx`` passed to ``forward`` and ``backward``."""

    def __init__(self):
        self._to_save = None
        self._saved = None
        self._non_differentiable = set()
        self._dirty = set()
        self.needs_input_grad = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        """Keep tensors for ``backward`` (checked against in-place changes)."""
        self._to_save = tensors

    def mark_non_differentiable(self, *tensors):
        """Outputs that never get gradients (integer indices, masks)."""
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        """Inputs modified in place by ``forward``."""
        self._dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        node = getattr(self, "_node", None)
        if self._saved is None:
            if self._to_save is None:
                return ()
            raise RuntimeError("Trying to backward through the graph a second time (or directly access saved "
                               "tensors after they have already been freed). Specify retain_graph=True if you "
                               "need to backward through the graph a second time.")
        return tuple(s.unpack(node) if s is not None else None for s in self._saved)


class BackwardCFunction(Node):
    """The node of a custom Function; named after it (``ExpBackward``)."""

    def __init__(self, cls, ctx, edges, meta, out_meta):
        super().__init__(edges, meta)
        self._cls, self._ctx, self._out_meta = cls, ctx, out_meta
        self.num_outputs = len(out_meta)

    def name(self):
        return self._cls.__name__ + "Backward"

    def apply(self, grads):
        ctx = self._ctx
        if ctx.materialize_grads:
            grads = tuple(g if g is not None else _ops.zeros(m[0], m[1], m[2])
                          for g, m in zip(grads, self._out_meta))
        out = self._cls.backward(ctx, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self.next_functions)
        if len(out) < n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(out)})")
        extra = out[n:]
        if any(g is not None for g in extra):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(out)})")
        return tuple(out[:n])

    def release(self):
        ctx = self._ctx
        if ctx._saved:
            for s in ctx._saved:
                if s is not None:
                    s.release()
            ctx._saved = None


class FunctionMeta(type):
    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {})


class Function(metaclass=FunctionMeta):
    """Base class for custom autograd operations (static ``forward``/``backward``; call ``apply``)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args, **kwargs)
        record = is_grad_enabled() and any(t._requires_grad for t in tensor_args)
        if not record:
            return out
        outs = out if isinstance(out, tuple) else (out,)
        edges, meta = [], []
        for a in args:
            if isinstance(a, Tensor):
                edges.append(gradient_edge(a) if a._requires_grad else (None, 0))
                meta.append((a._shape, a._dtype, a._device))
        out_meta = [(t._shape, t._dtype, t._device) if isinstance(t, Tensor) else None for t in outs]
        node = cls._backward_cls(cls, ctx, tuple(edges), tuple(meta), out_meta)
        ctx._node = node
        input_ids = {id(a) for a in tensor_args}
        new_outs = []
        for i, t in enumerate(outs):
            if not isinstance(t, Tensor):
                new_outs.append(t)
                continue
            if id(t) in input_ids and id(t) not in ctx._dirty:
                t = t.detach()  # returning an input unchanged: a new tensor carries the history
            if id(t) not in ctx._non_differentiable and t._dtype.category >= _dt.FLOATING:
                t._grad_fn = node
                t._output_nr = i
                t._requires_grad = True
                t._ks |= _BIT
                if id(t) in ctx._dirty:
                    _rebase_dirty(t, node, tensor_args)
            new_outs.append(t)
        out_ids = {id(t): i for i, t in enumerate(new_outs)}
        if ctx._to_save is not None:
            ctx._saved = [None if t is None else
                          (SavedTensor(t, is_output=True, output_nr=out_ids[id(t)]) if id(t) in out_ids
                           else SavedTensor(t)) for t in ctx._to_save]
        return tuple(new_outs) if isinstance(out, tuple) else new_outs[0]
