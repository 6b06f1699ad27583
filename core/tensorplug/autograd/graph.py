"""The autograd graph: nodes, edges and saved tensors.

A :class:`Node` is one recorded operation. Its ``next_functions`` are edges
``(node, input_nr)`` towards the nodes that produced its differentiable
inputs (``AccumulateGrad`` for leaves, ``None`` for inputs that need no
gradient). Nodes are numbered in creation order; the engine runs later nodes
first.
"""

from __future__ import annotations

import itertools
import traceback
import weakref

import numpy as np

from .. import dtypes as _dt
from ..dispatch.keys import Autograd
from ..ops.promotion import _pt_name
from ..tensor import make_tensor

_BIT = Autograd.bit
_seq = itertools.count()
_anomaly = [False]

NODE_SCOPES: list = []
"""Context-manager factories ``scope(node)`` the engine enters around each node's
backward while the list is non-empty: a generic hook (the profiler encloses the ops a
node's formula runs in that node's scope) that costs one list check per node otherwise."""


class Node:
    """Base class of graph nodes. Subclasses implement :meth:`apply`."""

    # the fields every node has are slots: the generated kernels store them without making a dict
    __slots__ = ("next_functions", "_meta", "sequence_nr", "__dict__", "__weakref__")
    num_outputs = 1  # gradients this node receives (one per output of the forward op)
    # rarely set: class defaults, so a recorded node only stores what it has
    _pre_hooks = None
    _hooks = None
    _stack = None  # forward stack, recorded in anomaly mode

    def __init__(self, next_functions, meta):
        self.next_functions = next_functions
        self._meta = meta  # per input: (shape, dtype, device) a gradient must have
        self.sequence_nr = next(_seq)
        if _anomaly[0]:
            self._stack = traceback.format_stack()[:-3]

    def name(self):
        return type(self).__name__

    def apply(self, grads):
        """Gradients for each input from gradients for each output (tuples)."""
        raise NotImplementedError

    def release(self):
        """Drop saved values once backward has used them (unless the graph is retained)."""

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; a non-None result replaces grad_inputs."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return _Handle(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; a non-None result replaces grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return _Handle(self._pre_hooks, fn)

    def __repr__(self):
        return f"<{self.name()} object>"

    def __call__(self, *grads):
        return self.apply(grads)


class _Handle:
    """What ``register_hook`` returns: ``.remove()`` takes the hook away."""

    def __init__(self, lst, fn):
        self._lst, self._fn = lst, fn

    def remove(self):
        if self._fn in self._lst:
            self._lst.remove(self._fn)


class AccumulateGrad(Node):
    """Sink for a leaf: adds the incoming gradient to ``variable.grad``."""

    __slots__ = ("variable",)
    # made by leaf_edge (and its inline copy in the generated kernels), which sets every field:
    # calling the class without Node's __init__ costs a third less than object.__new__(cls)
    __init__ = object.__init__
    # a sink has no edges, and its input's metadata is the leaf's: neither is stored per accumulator
    next_functions = ()

    @property
    def _meta(self):
        v = self.variable
        return ((v._shape, v._dtype, v._device),)

    def apply(self, grads):
        return ()


_next_seq = _seq.__next__
_weakref = weakref.ref


class SavedTensor:
    """A tensor kept for backward, with its version at save time.

    Outputs of the node that saves them are stored without their grad_fn (no
    reference cycle) and get it back on unpack, so double backward sees the
    graph through them.
    """

    __slots__ = ("tensor", "version", "is_output", "output_nr", "requires_grad", "grad_fn")

    def __init__(self, t, is_output=False, output_nr=0):
        self.version = t._version
        self.is_output = is_output
        self.output_nr = output_nr
        self.requires_grad = t._requires_grad
        if is_output:
            alias = make_tensor(t._data, t._dtype, t._device, t._ks & ~_BIT)
            alias._storage = t._get_storage()
            self.tensor = alias
            self.grad_fn = None
        else:
            self.tensor = t
            self.grad_fn = t._grad_fn

    def unpack(self, node):
        t = self.tensor
        if t is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after "
                "they have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling backward.")
        if t._version != self.version:
            owner = node if self.is_output else self.grad_fn
            what = f"output {self.output_nr} of {owner.name()}" if owner is not None else "a leaf"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{_type_name(t)} {list(t._shape)}], which is {what}, is at version {t._version}; "
                f"expected version {self.version} instead. Hint: the backtrace further above can point to the "
                "operation that failed to compute its gradient. The variable in question was changed in there or "
                "anywhere later. Good luck!")
        if self.is_output and self.requires_grad:
            out = make_tensor(t._data, t._dtype, t._device, t._ks | _BIT)
            out._storage = t._storage
            out._requires_grad = True
            out._grad_fn = node
            out._output_nr = self.output_nr
            return out
        return t

    def release(self):
        self.tensor = None


def _type_name(t):
    """PyTorch's legacy type name: ``tensorplug.FloatTensor`` (``tensorplug.cuda.FloatTensor`` off the CPU)."""
    dev = "" if t._device.type == "cpu" else t._device.type + "."
    return f"tensorplug.{dev}{_pt_name(t._dtype)}Tensor"


def check_hook_result(hook, old, new):
    """``new``, what a gradient hook returned in place of gradient ``old``, if it may replace it; PyTorch's
    errors when it is not a tensor or changes the gradient's size, dtype or device."""
    if not hasattr(new, "_ks"):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    name = getattr(hook, "__name__", None) or repr(hook)
    if new._shape != old._shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if new._dtype is not old._dtype or new._device != old._device:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {_type_name(old)} "
                           f"got {_type_name(new)})")
    return new


def gradient_edge(t):
    """The edge a gradient for tensor ``t`` flows into."""
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return leaf_edge(t)


def leaf_edge(t):
    """The edge into the accumulator of leaf ``t`` (one that requires grad)."""
    # the leaf keeps its accumulator weakly (the accumulator holds the leaf), so
    # every graph that uses the leaf meets the same node while any graph is alive
    try:
        acc = t._grad_acc()
    except AttributeError:  # the slot is unset until the leaf's first graph
        acc = None
    if acc is None:
        # an op on leaves whose last graph is gone (x + y in a loop) makes one per leaf per call,
        # as PyTorch does
        acc = AccumulateGrad()
        acc.sequence_nr = _next_seq()
        acc.variable = t
        t._grad_acc = _weakref(acc)
    return (acc, 0)


def has_nan(t):
    if t._dtype.category < _dt.FLOATING:  # neither floating nor complex
        return False
    return bool(np.isnan(t._host().astype(np.float64)).any())


def forward_stack(node):
    return "".join(node._stack) if node._stack else ""


__all__ = ["Node", "AccumulateGrad", "SavedTensor", "gradient_edge", "leaf_edge"]
