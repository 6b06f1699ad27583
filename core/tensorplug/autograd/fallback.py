"""The Autograd fallback: ops without a backward formula.

Such an op still runs on tensors that require grad; its floating outputs get
a node that raises when backward reaches it, naming the op, rather than
silently producing wrong (zero) gradients. Integer and bool outputs (argmax,
comparisons) need no gradient and carry no history.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch.keys import Autograd
from .graph import Node, gradient_edge
from .grad_mode import is_grad_enabled
from .views import check_inplace_write, rebase_history, regenerate_views

_BIT = Autograd.bit


class NotImplementedBackward(Node):
    def __init__(self, op, edges, meta):
        super().__init__(edges, meta)
        self.op = op

    def name(self):
        return f"NotImplemented({self.op.name})"

    def apply(self, grads):
        raise NotImplementedError(f"the derivative for '{self.op.qualname}' is not implemented")


def _written(op, args):
    return [args[i] for i, a in enumerate(op.schema.arguments) if a.is_write and args[i] is not None]


def autograd_fallback(op, ks, *args):
    written = _written(op, args) if op.schema.is_mutable else ()
    if written and is_grad_enabled():
        for t in written:
            check_inplace_write(t)
    out = op.redispatch(ks, *args)
    tensors = []
    for a in args:
        if isinstance(a, (list, tuple)):
            tensors.extend(t for t in a if hasattr(t, "_ks"))
        elif hasattr(a, "_ks"):
            tensors.append(a)
    if not any(t._requires_grad for t in tensors) or not is_grad_enabled():
        return out
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if not any(hasattr(t, "_ks") and t._dtype.category >= _dt.FLOATING for t in outs):
        return out
    edges = tuple(gradient_edge(t) if t._requires_grad else (None, 0) for t in tensors)
    meta = tuple((t._shape, t._dtype, t._device) for t in tensors)
    node = NotImplementedBackward(op, edges, meta)
    node.num_outputs = len(outs)
    for i, t in enumerate(outs):
        if hasattr(t, "_ks") and t._dtype.category >= _dt.FLOATING:
            t._grad_fn = node
            t._output_nr = i
            t._requires_grad = True
            t._ks |= _BIT
    for t in written:
        if t._base is not None:
            rebase_history(t, node)  # so backward through the base reaches the error too
        elif "_views" in t.__dict__:
            regenerate_views(t)
    return out
