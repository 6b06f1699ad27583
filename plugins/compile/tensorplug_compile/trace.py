"""Tracing: the Compile key's boxed fallback records each backend kernel call of a function.

The key sits just above Dense (priority 10), below Autograd, vmap's Batched, Quantized and
Autocast: by the time a call reaches it, every transform above has done its work, so what it
records is exactly the backend kernels the eager call runs, forward, backward (the autograd engine's
calls arrive here too) and optimizer updates alike. Replaying them needs no dispatcher, no
autograd and no transform.

While a thread traces, :data:`STATE.rec` is its :class:`Recorder`, the Compile key is in its include
set, and an observer (``plugin_api.set_observer``), a module forward pre-hook, an optimizer step
pre-hook and an autograd node scope tell the recorder what the kernel calls alone do not show: values
read by Python (a graph break), ``.grad`` reads and writes, the modules and optimizers the function
used, and whether it ran a backward pass.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import sys
import threading
import weakref

from tensorplug import Tag, Tensor
from tensorplug.plugin_api import BOOL, add_node_scope, remove_node_scope, set_observer

KEY_NAME = "Compile"
PRIORITY = 10

# slot kinds
INPUT, CONST, GRAD_IN, NODE, GRAD_OUT = "input", "const", "grad_in", "node", "grad_out"

_BREAK_TAGS = (Tag.dynamic_output_shape, Tag.data_dependent_output)


class GraphBreak(RuntimeError):
    """Raised with ``fullgraph=True`` where a traced function does something a graph cannot hold."""


class Ref:
    """An argument that is a tensor: slot ``slot`` of the program."""

    __slots__ = ("slot",)

    def __init__(self, slot):
        self.slot = slot

    def __repr__(self):
        return f"s{self.slot}"

    def __eq__(self, other):
        return other.__class__ is Ref and other.slot == self.slot

    def __hash__(self):
        return hash(("ref", self.slot))


class Node:
    """One recorded kernel call: ``op`` at key set ``ks`` with ``args`` (tensors as :class:`Ref`),
    producing ``out`` (the same structure as the kernel's result, tensors as :class:`Ref`).
    ``recheck``: the op's argument check read values, so replay runs it again."""

    __slots__ = ("op", "ks", "args", "out", "recheck", "where")

    def __init__(self, op, ks, args, out, recheck, where):
        self.op, self.ks, self.args, self.out, self.recheck, self.where = op, ks, args, out, recheck, where


class Effect:
    """A Python call a replay repeats at its place among the kernel calls (a generator reseeded)."""

    __slots__ = ("fn", "qualname")
    tags = ()
    check = None

    def __init__(self, fn):
        self.fn = fn
        self.qualname = f"effect {fn.__qualname__}"

    def __eq__(self, other):
        return other.__class__ is Effect and other.fn is self.fn

    def __hash__(self):
        return hash(self.fn)


class Slot:
    """What a slot holds: a function input (``index`` into the flat inputs), a constant tensor
    captured by identity (``obj``), a parameter's ``.grad`` at entry (``obj`` the parameter), a
    grad output of a traced backward, or a node's output. ``tensor`` is the traced value: a node's
    output is held weakly (a strong reference would change what the autograd engine may reuse in
    place, and keep every intermediate of the trace alive), the others strongly. ``meta``: the
    tensor's ``(shape, dtype)``."""

    __slots__ = ("kind", "index", "obj", "meta", "device", "_strong", "_weak")

    def __init__(self, kind, tensor, index=None, obj=None, weak=None):
        self.kind, self.index, self.obj = kind, index, obj
        self.meta = (tensor._shape, tensor._dtype)
        self.device = tensor._device
        self._strong = None if weak is not None else tensor
        self._weak = weak

    @property
    def tensor(self):
        return self._strong if self._weak is None else self._weak()


class Recorder:
    """One trace in progress: slots, nodes, breaks and the Python state the function touched."""

    def __init__(self, fullgraph=False):
        self.fullgraph = fullgraph
        self.slots = []          # Slot per slot number
        self.by_id = {}          # id(tensor) -> slot number, while the tensor lives
        self.by_data = {}        # id(native array) -> slot number: aliases (detach(), saved outputs) share it
        self.arrays = []         # those arrays, kept alive while the trace is (their ids stay their own)
        self.watched = []        # weak references whose callbacks forget dead tensors' ids
        self.meta0 = {}          # slot -> layout when first seen (made or met)
        self.nodes = []
        self.depth = 0
        self.inlining = 0        # composites being recorded as their parts
        self.spoiled = False     # a part read values into Python: record the composite whole
        self.breaks = []         # (reason, "file:line: source")
        self.value_checked = False
        self.grad_in = {}        # id(param) -> (param, grad was None at entry)
        self.initial_grad = {}   # id(grad at entry) -> (param, grad): the grad is kept alive, its id its own
        self.grad_final = {}     # id(param) -> (param, final grad or None)
        self.modules = {}        # id -> module whose forward ran
        self.optimizers = {}     # id -> optimizer that stepped
        self.backward_ran = False
        # a forward whose result requires grad: its backward is traced too (split: the first backward node)
        self.split = None
        self.diff_outs = []      # slots of the differentiable results
        self.leaves = []         # slots of the tensors requiring grad that the forward read
        self.leaf_grads = []     # per leaf: Ref of its gradient, or None

    # -- slots ----------------------------------------------------------------------------------
    def bind_input(self, t, index):
        k = self.by_id.get(id(t))
        if k is None:
            k = self._new_slot(INPUT, t, index=index)
        return k

    def bind_grad_output(self, t, index):
        return self._new_slot(GRAD_OUT, t, index=index)

    def _watch(self, t, k):
        """A weak reference to ``t`` whose callback forgets ``id(t)`` (it may be reused) when ``t`` dies."""
        by_id, i = self.by_id, id(t)

        def gone(_, by_id=by_id, i=i, k=k):
            if by_id.get(i) == k:
                del by_id[i]
        return weakref.ref(t, gone)

    def _new_slot(self, kind, t, index=None, obj=None):
        k = len(self.slots)
        self.slots.append(Slot(kind, t, index, obj, self._watch(t, k) if kind == NODE else None))
        self.meta0[k] = _layout(t)
        self.by_id[id(t)] = k
        data = getattr(t, "_data", None)
        if data is not None and id(data) not in self.by_data:
            self.by_data[id(data)] = k
            self.arrays.append(data)
        return k

    def slot_of(self, t):
        k = self.by_id.get(id(t))
        if k is not None:
            return k
        entry = self.initial_grad.get(id(t))
        if entry is not None and entry[1] is t:
            return self._new_slot(GRAD_IN, t, obj=entry[0])
        k = self.by_data.get(id(getattr(t, "_data", None)))
        if k is not None and self.slots[k].meta == (t._shape, t._dtype):
            # an alias without history of a tensor of the trace (detach(), a saved output): its values
            self.by_id[id(t)] = k
            self.watched.append(self._watch(t, k))
            return k
        return self._new_slot(CONST, t, obj=t)

    def template(self, x):
        if isinstance(x, Tensor):
            return Ref(self.slot_of(x))
        if x.__class__ in (list, tuple):
            return x.__class__(self.template(v) for v in x)
        if x.__class__ is dict:
            return {k: self.template(v) for k, v in x.items()}
        return x

    def _bind_out(self, x, op):
        if isinstance(x, Tensor):
            k = self.by_id.get(id(x))
            if k is None:
                k = self._new_slot(NODE, x)
            return Ref(k)
        if x.__class__ in (list, tuple):
            return x.__class__(self._bind_out(v, op) for v in x)
        if x is not None:
            self.add_break(f"{op.qualname} returns a Python value ({type(x).__name__})")
        return x

    # -- events -----------------------------------------------------------------------------------
    def record(self, op, ks, args, out):
        if any(t in op.tags for t in _BREAK_TAGS) and not _static_index(op, args):
            self.add_break(f"{op.qualname} has a data-dependent output "
                           f"({'shape' if Tag.dynamic_output_shape in op.tags else 'value'})")
        tmpl = self.template(args)
        recheck = self.value_checked and op.check is not None
        self.value_checked = False
        self.nodes.append(Node(op, ks, tmpl, self._bind_out(out, op), recheck, user_location()))

    def check_layouts(self):
        """A break when a tensor's shape or strides changed other than through a recorded kernel
        (``resize_`` rewrites a tensor's metadata in Python): a replay would not."""
        viewed = set()
        for node in self.nodes:
            if Tag.inplace_view in node.op.tags:
                collect_refs(node.args, viewed)
        for k, before in self.meta0.items():
            t = self.slots[k].tensor
            if t is not None and k not in viewed and _layout(t) != before:
                self.add_break(f"the shape or strides of a tensor changed without a kernel "
                               f"(from {list(before[0])} to {list(t._shape)})")
                return

    def add_break(self, reason):
        where = user_frame()
        self.breaks.append((reason, where))
        if self.fullgraph:
            raise GraphBreak(f"tensorplug.compile(fullgraph=True): {reason}, at {where}. Move it out of the "
                             f"compiled function or call tensorplug.compile without fullgraph=True (the "
                             f"function then runs eagerly).")


def _static_index(op, args):
    """Advanced indexing with integer indices only: its result shape depends on the shapes alone (the
    data-dependent tag is for boolean masks)."""
    if op.qualname != "tensorplug::index.Tensor":
        return False
    return all(i is None or (isinstance(i, Tensor) and i._dtype.category != BOOL and i._dtype.name != "uint8")
               for i in args[1])


def _layout(t):
    return (t._shape, t.stride()) if isinstance(t, Tensor) else None


def collect_refs(x, into):
    """Add the slots of the :class:`Ref` in ``x`` (nested lists, tuples, dicts) to the set ``into``."""
    if x.__class__ is Ref:
        into.add(x.slot)
    elif x.__class__ in (list, tuple):
        for v in x:
            collect_refs(v, into)
    elif x.__class__ is dict:
        for v in x.values():
            collect_refs(v, into)


def _is_internal(filename):
    f = filename.replace(os.sep, "/")
    return "/tensorplug/" in f or "/tensorplug_" in f or f.startswith("<tensorplug") or "/contextlib.py" in f


def user_location():
    """``(filename, lineno)`` of the innermost frame outside tensorplug and its plugins (None if none)."""
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if not _is_internal(code.co_filename):
            return code.co_filename, f.f_lineno
        f = f.f_back
    return None


def user_frame():
    """``file:line: source`` of the innermost frame outside tensorplug and its plugins."""
    loc = user_location()
    if loc is None:
        return "<unknown>"
    return f"{loc[0]}:{loc[1]}: {linecache.getline(loc[0], loc[1]).strip()}"


class _State(threading.local):
    rec = None


STATE = _State()


def trace_fallback(op, ks, *args):
    """The Compile key's fallback: run the call below the key and record it (outermost calls only).

    A call that decomposes into other ops (a composite) is recorded as its parts, so a replay runs
    the kernels without the composite's dispatches, unless its result is not one of their results
    (a view the composite builds itself): then the call is recorded whole.
    """
    rec = STATE.rec
    if rec is None or rec.depth:
        return op.redispatch(ks, *args)
    if op.provenance(ks) == "composite":
        mark, spoiled = len(rec.nodes), rec.spoiled
        rec.spoiled = False
        rec.inlining += 1
        try:
            out = op.redispatch(ks, *args)
        finally:
            rec.inlining -= 1
        inner_spoiled, rec.spoiled = rec.spoiled, spoiled or rec.spoiled
        if not inner_spoiled and rec.nodes[mark:] and _all_known(rec, out):
            return out
        # recorded whole: its parts read values (a replay of the parts would not) or made its result
        checked = any(n.recheck for n in rec.nodes[mark:])
        del rec.nodes[mark:]
        rec.value_checked = rec.value_checked or checked or inner_spoiled
        rec.record(op, ks, args, out)
        return out
    rec.depth = 1
    try:
        out = op.redispatch(ks, *args)
    finally:
        rec.depth = 0
    rec.record(op, ks, args, out)
    return out


def _all_known(rec, out):
    if isinstance(out, Tensor):
        return id(out) in rec.by_id
    if out.__class__ in (list, tuple):
        return all(_all_known(rec, v) for v in out)
    return out is None


class _Observer:
    """What the core reports beyond op calls (plugin_api.set_observer), for the tracing threads only."""

    def host_read(self, t, what):
        rec = STATE.rec
        if rec is not None and rec.depth == 0 and rec.inlining:
            rec.spoiled = True
        elif rec is not None and rec.depth == 0:
            rec.add_break(f"{what} reads {'a tensor' if t is not None else 'random state'} into Python")

    def effect(self, fn, *args):
        rec = STATE.rec
        if rec is not None and rec.depth == 0:
            rec.nodes.append(Node(Effect(fn), None, rec.template(args), None, False, user_location()))

    def value_check(self, t):
        rec = STATE.rec
        if rec is not None and rec.depth == 0:
            rec.value_checked = True

    def grad_read(self, t):
        rec = STATE.rec
        if rec is None or id(t) in rec.grad_final or id(t) in rec.grad_in:
            return
        g = t._grad
        rec.slot_of(t)  # the parameter itself: held by the program
        rec.grad_in[id(t)] = (t, g is None)
        if g is not None:
            rec.initial_grad[id(g)] = (t, g)

    def grad_write(self, t, value):
        rec = STATE.rec
        if rec is None:
            return
        k = rec.by_id.get(id(t))
        if k is not None and rec.slots[k].kind == NODE:  # a non-leaf's retained grad: not replayed
            return
        rec.slot_of(t)
        if value is not None:
            rec.slot_of(value)
        rec.grad_final[id(t)] = (t, value)


_OBSERVER = _Observer()
_ACTIVE = [0]
_LOCK = threading.Lock()


def _on_module(module, args):
    r = STATE.rec
    if r is not None:
        r.modules[id(module)] = module


def _on_step(opt, args, kwargs):
    r = STATE.rec
    if r is not None:
        r.optimizers[id(opt)] = opt


@contextlib.contextmanager
def _node_scope(node):
    r = STATE.rec
    if r is not None:
        r.backward_ran = True
    yield


_HANDLES = []


@contextlib.contextmanager
def observing(rec):
    """Make ``rec`` this thread's recorder for the block; the observers are installed while any
    thread traces (and cost nothing otherwise)."""
    from tensorplug import nn, optim  # lazy: nn and optim only once something is traced

    with _LOCK:
        _ACTIVE[0] += 1
        if _ACTIVE[0] == 1:
            set_observer(_OBSERVER)
            add_node_scope(_node_scope)
            _HANDLES[:] = [nn.modules.module.register_module_forward_pre_hook(_on_module),
                           optim.optimizer.register_optimizer_step_pre_hook(_on_step)]
    prev, STATE.rec = STATE.rec, rec
    try:
        yield rec
    finally:
        STATE.rec = prev
        with _LOCK:
            _ACTIVE[0] -= 1
            if _ACTIVE[0] == 0:
                set_observer(None)
                remove_node_scope(_node_scope)
                for h in _HANDLES:
                    h.remove()
                _HANDLES.clear()


def tracing():
    """Whether this thread is tracing now (a compiled function called inside a trace runs inline)."""
    return STATE.rec is not None

