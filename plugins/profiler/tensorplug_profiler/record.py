"""Recording: the Profiler key's boxed fallback, user scopes and backward node scopes.

Each thread has its own recording state (:class:`_State`): the profiles
active on it (each an event list, a *sink*), the stack of open events and
what to record. The Profiler key is in a thread's include set only while a
profile is active on it, so the fallback runs only then and, with no profile
active, the dispatcher never sees the key.

Every interval comes from one clock (``time.perf_counter_ns``): a parent's
start is read before its children run and its end after they return, so a
child's interval always lies inside its parent's and siblings never overlap.
"""

from __future__ import annotations

import os
import threading
import traceback
from time import perf_counter_ns

from tensorplug import Tensor
from tensorplug.plugin_api import add_node_scope, remove_node_scope

KEY_NAME = "Profiler"
PRIORITY = 60

CPU_OP, USER, BACKWARD = "cpu_op", "user_annotation", "backward"


class Event:
    """One recorded interval: an op call, a user scope or a backward node's scope.

    Times are ``perf_counter_ns`` values; ``parent`` is the enclosing event
    on the same thread (None at top level); ``input_shapes``/``input_types``
    are filled when shapes are recorded, ``nbytes`` (bytes allocated by the
    outputs) when memory is.
    """

    __slots__ = ("name", "kind", "start", "end", "tid", "parent", "children", "input_shapes", "input_types",
                 "nbytes", "out_ids", "device", "is_backward", "stack")

    def __init__(self, name, kind, tid, parent, is_backward):
        self.name = name
        self.kind = kind
        self.tid = tid
        self.parent = parent
        self.children = []
        self.is_backward = is_backward
        self.input_shapes = None
        self.input_types = None
        self.nbytes = 0
        self.out_ids = ()
        self.device = "cpu"
        self.stack = None
        self.start = self.end = 0
        if parent is not None:
            parent.children.append(self)

    @property
    def cpu_time_total(self):
        """Total time in microseconds (children included), as PyTorch's FunctionEvent."""
        return (self.end - self.start) / 1000

    @property
    def self_cpu_time_total(self):
        """Time in microseconds not spent in child events."""
        return (self.end - self.start - sum(c.end - c.start for c in self.children)) / 1000

    @property
    def cpu_memory_usage(self):
        """Bytes allocated by this event's outputs (0 unless profile_memory)."""
        return self.nbytes

    def __repr__(self):
        return (f"<Event {self.name} {self.kind} {self.cpu_time_total:.3f}us"
                f"{' backward' if self.is_backward else ''}>")


class _State(threading.local):
    """A thread's recording state; the defaults mean "no profile active"."""

    def __init__(self):
        self.sinks = []       # event lists of the profiles active on this thread, outermost first
        self.configs = []     # (record_shapes, profile_memory, with_stack) per active profile
        self.stack = []       # open events, innermost last
        self.backward = 0     # depth of open backward node scopes
        self.shapes = self.memory = self.with_stack = False


STATE = _State()


def _refresh_flags(st):
    st.shapes = any(c[0] for c in st.configs)
    st.memory = any(c[1] for c in st.configs)
    st.with_stack = any(c[2] for c in st.configs)


def push_profile(sink, config):
    """Start sending this thread's events to ``sink`` (a list) as well."""
    st = STATE
    st.sinks.append(sink)
    st.configs.append(config)
    _refresh_flags(st)


def pop_profile(sink):
    """Stop sending this thread's events to ``sink``."""
    st = STATE
    i = next(i for i, s in enumerate(st.sinks) if s is sink)
    del st.sinks[i], st.configs[i]
    _refresh_flags(st)


def _open(st, name, kind):
    parent = st.stack[-1] if st.stack else None
    ev = Event(name, kind, threading.get_ident(), parent, st.backward > 0)
    for sink in st.sinks:
        sink.append(ev)
    st.stack.append(ev)
    return ev


def _shape_of(a):
    if isinstance(a, Tensor):
        return list(a._shape), a._dtype.name
    if isinstance(a, (list, tuple)) and a and all(isinstance(x, Tensor) for x in a):
        return [list(x._shape) for x in a], "TensorList"
    if a is None:
        return [], ""
    if isinstance(a, (bool, int, float)):
        return [], "Scalar"
    return [], type(a).__name__


def _device_of(args):
    for a in args:
        if isinstance(a, Tensor):
            return str(a._device)
        if isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, Tensor):
                    return str(x._device)
    return "cpu"


def _count_allocated(ev, out, args):
    """Set ``ev.nbytes`` to the bytes of new storage among the outputs.

    Views and in-place results allocate nothing, and an output a child op
    returned (a composite's result) was allocated by that child.
    """
    outs = out if isinstance(out, (tuple, list)) else (out,)
    ev.out_ids = tuple(id(t) for t in outs)
    # the children's outputs are alive here (they are among ours), so their ids are not reused
    by_children = {i for c in ev.children for i in c.out_ids}
    total = 0
    for t in outs:
        if (isinstance(t, Tensor) and t._base is None and id(t) not in by_children
                and not any(t is a for a in args)):
            total += t.numel() * t._dtype.itemsize
    ev.nbytes = total


_INTERNAL = (os.sep + "tensorplug" + os.sep, os.sep + "tensorplug_profiler" + os.sep, "<tensorplug ")


def _user_stack():
    """The caller's Python stack, innermost last, without tensorplug's own frames."""
    return [f"{f.filename}({f.lineno}): {f.name}" for f in traceback.extract_stack()
            if not any(m in f.filename for m in _INTERNAL)]


def profile_fallback(op, ks, *args):
    """The boxed fallback at the Profiler key: record the call and redispatch below the key."""
    st = STATE
    if not st.sinks:  # another thread's profile made the key resolve; this thread records nothing
        return op.redispatch(ks, *args)
    ev = _open(st, op.qualname, CPU_OP)
    if st.shapes:
        pairs = [_shape_of(a) for a in args]
        ev.input_shapes = [p[0] for p in pairs]
        ev.input_types = [p[1] for p in pairs]
    if st.with_stack:
        ev.stack = _user_stack()
    ev.device = _device_of(args)
    ev.start = perf_counter_ns()
    try:
        out = op.redispatch(ks, *args)
    finally:
        ev.end = perf_counter_ns()
        st.stack.pop()
    if st.memory:
        _count_allocated(ev, out, args)
    return out


class _Scope:
    """An interval that encloses what runs inside it (a user scope or a backward node)."""

    __slots__ = ("name", "kind", "ev")

    def __init__(self, name, kind):
        self.name = name
        self.kind = kind
        self.ev = None

    def __enter__(self):
        st = STATE
        if st.sinks:
            if self.kind == BACKWARD:
                st.backward += 1
            self.ev = ev = _open(st, self.name, self.kind)
            ev.start = perf_counter_ns()
        return self

    def __exit__(self, *exc):
        ev = self.ev
        if ev is not None:
            ev.end = perf_counter_ns()
            st = STATE
            st.stack.pop()
            if self.kind == BACKWARD:
                st.backward -= 1
            self.ev = None
        return False


class _NullScope:
    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NULL = _NullScope()


def node_scope(node):
    """The autograd engine's scope factory: a backward event named after ``node`` (``MulBackward0``)."""
    if not STATE.sinks:
        return _NULL
    name = node.name() if hasattr(node, "name") else type(node).__name__
    return _Scope(name, BACKWARD)


def user_scope(name):
    """A user scope (what ``record_function`` opens)."""
    return _Scope(name, USER)


# The engine's node-scope hook is installed while any thread profiles.
_active = [0]
_active_lock = threading.Lock()


def acquire_node_scopes():
    """Called when a profile starts: make the autograd engine open node scopes."""
    with _active_lock:
        _active[0] += 1
        if _active[0] == 1:
            add_node_scope(node_scope)


def release_node_scopes():
    """Called when a profile ends: the last one removes the engine hook."""
    with _active_lock:
        _active[0] -= 1
        if _active[0] == 0:
            remove_node_scope(node_scope)
