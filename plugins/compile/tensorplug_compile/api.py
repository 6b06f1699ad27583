"""``tensorplug.compile`` and ``tensorplug.compiler``: capture a function once, replay it without dispatch.

A compiled function keeps a list of cache entries, each a traced :class:`~.program.Program` with
its guards. A call tries the entries in order; a ready entry's generated function checks its guards
and, when they hold, replays the kernel calls. When no entry's guards hold, the call is traced (it
runs eagerly while its kernel calls are recorded) and becomes a *pending* entry; the next call that
passes its guards is traced again and the two traces compared: the program is used from then on
only if both recorded the same kernel calls with the same arguments, so state a first call creates
(an optimizer's buffers) or Python values that change from call to call are never baked in.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
import time
import weakref

import tensorplug
from tensorplug import Tensor
from tensorplug.plugin_api import dispatch_generation, functionality_key, include_keys, thread_keys, key_bit, warn_user

from .program import MISS, Program, input_specs, python_values
from .trace import CONST, INPUT, KEY_NAME, STATE, Recorder, observing, tracing

__all__ = ["compile", "reset", "explain", "disable", "CompiledFunction", "ExplainOutput", "is_compiling"]

CACHE_SIZE_LIMIT = 8
"""Traces kept per compiled function (``torch._dynamo.config.recompile_limit``); past it, calls whose
guards match no entry run eagerly, with one warning."""

UNSTABLE_LIMIT = 3
"""Consecutive traces that may differ before a guard set is given up (it runs eagerly)."""

PENDING, READY, EAGER = "pending", "ready", "eager"
_BACKENDS = (None, "tensorplug", "inductor", "aot_eager", "eager")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_ALL = weakref.WeakSet()
_NAMES = itertools.count()


def is_compiling():
    """True while this thread traces a compiled function (``torch.compiler.is_compiling``)."""
    return tracing()


class Entry:
    """One cached trace: its program, what state it is in, and how often the traces disagreed."""

    __slots__ = ("program", "state", "run", "check", "unstable", "spec")

    def __init__(self, program, state, spec):
        self.program, self.state, self.spec, self.unstable = program, state, spec, 0
        self.check = program.guard_check()
        self.run = _runner(program) if state == READY else None


def _runner(prog):
    """The program's replay; one traced under a profile (its guards keep it to profiled calls) shows
    in the profile as one scope named after it, since its kernel calls reach no dispatcher."""
    run = prog.compiled()
    include = prog.state[1][0]
    if not (tensorplug.plugins.is_enabled("profiler") and include & key_bit("Profiler")):
        return run
    scope = tensorplug.profiler.record_function(f"tensorplug.compile: {prog.name}")

    def profiled(*a):
        with scope:
            return run(*a)
    return profiled


class CompiledFunction:
    """What :func:`compile` returns for a function: call it as the function.

    ``graphs``: the programs in use; ``code``: the generated code of the newest one;
    :meth:`print_tabular` prints its nodes; ``events``: what happened, in order
    (``("graph", program)``, ``("break", reason, where)``, ``("recompile", reason)``, ``("unstable", reason)``).
    """

    def __init__(self, fn, fullgraph=False, dynamic=None, backend=None, mode=None, eager=False):
        self._fn = fn
        self.fullgraph = bool(fullgraph)
        self.dynamic = dynamic
        self.backend = backend
        self.mode = mode
        self._eager = eager
        self.entries = []
        self.ready = []  # the entries whose programs replay, in the order they became ready
        self.events = []
        self._warned = False
        self.compile_seconds = 0.0
        functools.update_wrapper(self, fn, updated=())
        _ALL.add(self)

    def __get__(self, obj, objtype=None):  # a compiled method binds like the function
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self):
        return f"<tensorplug compiled {getattr(self._fn, '__qualname__', self._fn)!r}>"

    # -- calling --------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._eager or tracing():  # inside another trace: inline, recorded by the outer one
            return self._fn(*args, **kwargs)
        if kwargs or not all(a.__class__ not in _CONTAINERS for a in args):
            leaves, spec = _flatten((args, kwargs))
        else:
            leaves, spec = args, None
        for e in self.ready:  # the programs first: the pending and eager entries rarely match again
            if e.spec == spec:
                r = e.run(*leaves)
                if r is not MISS:
                    return r
        for e in self.entries:
            if e.state != READY and e.spec == spec and e.check(*leaves) is None:
                if e.state == EAGER:
                    return self._fn(*args, **kwargs)
                return self._confirm(e, args, kwargs, leaves, spec)
        return self._new_entry(args, kwargs, leaves, spec)

    def _new_entry(self, args, kwargs, leaves, spec):
        if len(self.entries) >= CACHE_SIZE_LIMIT:
            if not self._warned:
                self._warned = True
                reason = self._why_not(leaves, spec)
                warn_user(f"tensorplug.compile: {self._name()} hit the cache size limit ({CACHE_SIZE_LIMIT}) and "
                          f"runs eagerly for new inputs from now on; last guard that failed: {reason}. Call "
                          f"tensorplug.compiler.reset() to start over.")
            return self._fn(*args, **kwargs)
        if self.entries:
            self.events.append(("recompile", self._why_not(leaves, spec)))
        out, prog = self._trace(args, kwargs, leaves)
        if prog is None:  # the inputs cannot be traced (a transform's wrapper): always eager for them
            return out
        self.entries.append(Entry(prog, EAGER if prog.breaks else PENDING, spec))
        return out

    def _confirm(self, e, args, kwargs, leaves, spec):
        out, prog = self._trace(args, kwargs, leaves)
        if prog is None:
            return out
        if prog.breaks:
            e.program, e.state, e.check = prog, EAGER, prog.guard_check()
            return out
        diff = e.program.difference(prog)
        if diff is None:
            t0 = time.perf_counter()
            e.program, e.state, e.run, e.check = prog, READY, _runner(prog), prog.guard_check()
            self.ready.append(e)
            self.compile_seconds += time.perf_counter() - t0
            self.events.append(("graph", prog))
            return out
        e.unstable += 1
        self.events.append(("unstable", diff))
        e.program, e.check = prog, prog.guard_check()
        if e.unstable >= UNSTABLE_LIMIT:
            e.state = EAGER
            warn_user(f"tensorplug.compile: {self._name()} records different kernel calls on every call "
                      f"({diff}); it runs eagerly for these inputs. A Python value that changes each call "
                      f"(a counter, a random choice, a value read from a tensor) is the usual cause.")
        return out

    def _trace(self, args, kwargs, leaves):
        t0 = time.perf_counter()
        rec = Recorder(self.fullgraph)
        dense = functionality_key("Dense")
        backend_mask = (dense.bit >> dense.priority) - 1
        extra = ~(backend_mask | dense.bit | key_bit("Autograd"))
        for i, x in enumerate(leaves):
            if isinstance(x, Tensor) and x._ks & extra:
                self.events.append(("break", f"input {i} is a transform's tensor ({type(x).__name__}): "
                                             f"compile sees only plain tensors", "<call>"))
                return self._fn(*args, **kwargs), None
        specs = input_specs(rec, leaves)
        state = _state(leaves)
        read = python_values(self._fn)
        with observing(rec), include_keys(KEY_NAME):
            out = self._fn(*args, **kwargs)
        rec.check_layouts()
        if not rec.backward_ran and not rec.breaks and _requires_grad(out):
            _trace_backward(rec, out)
        prog = Program(rec, specs, rec.template(out), state, f"compiled_{next(_NAMES)}", read)
        for reason, where in rec.breaks:
            self.events.append(("break", reason, where))
        self.compile_seconds += time.perf_counter() - t0
        return out, prog

    def _why_not(self, leaves, spec):
        for e in reversed(self.entries):
            if e.spec != spec:
                return "the inputs have another structure"
            reason = e.check(*leaves)
            if reason is not None:
                return reason
        return "no entry"

    def _name(self):
        return getattr(self._fn, "__qualname__", repr(self._fn))

    # -- looking at it --------------------------------------------------------------------------
    @property
    def graphs(self):
        """The programs in use (one per guard set that replays)."""
        return [e.program for e in self.entries if e.state == READY]

    @property
    def code(self):
        """The generated Python code of the newest program in use (None before one is ready)."""
        g = self.graphs
        return g[-1].code if g else None

    def print_tabular(self):
        """Print the newest program's nodes as a table (``torch.fx.Graph.print_tabular``)."""
        g = self.graphs
        print(g[-1].tabular() if g else "(no program captured yet)")

    def reset(self):
        """Forget every trace of this function."""
        self.entries.clear()
        self.ready.clear()
        self.events.clear()
        self._warned = False


_CONTAINERS = (list, tuple, dict)


def _flatten(x):
    """The leaves of nested lists, tuples and dicts, and a hashable description of the structure."""
    leaves = []

    def go(v):
        c = v.__class__
        if c is list or c is tuple:
            return (c.__name__, tuple(go(e) for e in v))
        if c is dict:
            return ("dict", tuple((k, go(e)) for k, e in v.items()))
        leaves.append(v)
        return None
    return leaves, go(x)


def _trace_backward(rec, out):
    """Record the backward of ``out``'s differentiable tensors into ``rec`` (AOTAutograd's joint graph):
    the gradients of every tensor requiring grad that the forward read, for grad outputs that become the
    backward program's inputs. The eager graph is retained for the caller's own backward."""
    diff = []
    _tensors(out, diff)
    diff = list({id(t): t for t in diff if t._requires_grad and t._grad_fn is not None}.values())
    leaves = [k for k, s in enumerate(rec.slots) if s.kind in (INPUT, CONST) and s.tensor._requires_grad]
    if not diff or not leaves:
        return
    grad_outs = [tensorplug.ones_like(t) for t in diff]
    rec.diff_outs = [rec.slot_of(t) for t in diff]
    for i, g in enumerate(grad_outs):
        rec.bind_grad_output(g, i)
    rec.split = len(rec.nodes)
    rec.leaves = leaves
    try:
        with observing(rec), include_keys(KEY_NAME):
            grads = tensorplug.autograd.grad(diff, [rec.slots[k].tensor for k in leaves], grad_outputs=grad_outs,
                                             retain_graph=True, allow_unused=True)
    except Exception as e:  # the caller's own backward will meet the same error, eagerly
        rec.breaks.append((f"its backward could not be traced: {type(e).__name__}: {e}", "<backward>"))
        return
    rec.leaf_grads = [None if g is None else rec.template(g) for g in grads]


def _tensors(x, into):
    if isinstance(x, Tensor):
        into.append(x)
    elif x.__class__ in (list, tuple):
        for v in x:
            _tensors(v, into)
    elif x.__class__ is dict:
        for v in x.values():
            _tensors(v, into)


def _requires_grad(x):
    found = []
    _tensors(x, found)
    return any(t._requires_grad for t in found)


def _state(leaves):
    autocast = ()
    getter = getattr(tensorplug, "get_autocast_dtype", None) if tensorplug.plugins.is_enabled("autocast") else None
    if getter is not None:
        devs = {"cpu"} | {x._device.type for x in leaves if isinstance(x, Tensor)}
        autocast = tuple((d, getter(d)) for d in sorted(devs))
    return (tensorplug.is_grad_enabled(), thread_keys(), tensorplug.get_default_dtype(), autocast,
            dispatch_generation())


# -- the public functions ---------------------------------------------------------------------------
def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None, disable=False):
    """Capture ``model`` (a function or an ``nn.Module``) and replay it without dispatch, as ``torch.compile``.

    The first call runs eagerly while every backend kernel call is recorded; the second is recorded
    again and, if both recorded the same calls, later calls whose guards hold (input shapes, dtypes,
    devices, ``requires_grad``, grad mode, the thread's transform state, the training flag and
    parameters of every module called, optimizer hyperparameters and state, ``.grad`` being None)
    replay the kernels directly. A function may run a whole training step: forward,
    ``loss.backward()``, ``optimizer.step()`` and ``zero_grad()``.

    Values read into Python (``.item()``, ``.tolist()``, ``bool(t)``, printing) are graph breaks:
    the function then runs eagerly (with ``fullgraph=True`` they raise, naming the operation and
    line). ``backend="eager"``, ``disable=True`` or ``TENSORPLUG_COMPILE_DISABLE=1`` run ``model``
    eagerly. Used without ``model`` it is a decorator factory (``@tensorplug.compile(fullgraph=True)``).
    """
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if backend not in _BACKENDS:
        raise ValueError(f"tensorplug.compile: unknown backend {backend!r}; known: "
                         f"{', '.join(repr(b) for b in _BACKENDS)}")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           + ", ".join(m for m in _MODES if m is not None))
    if options is not None and mode is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if not callable(model):
        raise RuntimeError("compile: model must be callable")
    eager = disable or backend == "eager" or os.environ.get("TENSORPLUG_COMPILE_DISABLE", "") not in ("", "0")
    nn = sys.modules.get("tensorplug.nn")
    if nn is not None and isinstance(model, nn.Module):
        from .module import OptimizedModule  # lazy: needs tensorplug.nn, imported by the caller already
        return OptimizedModule(model, CompiledFunction(model.__call__, fullgraph, dynamic, backend, mode, eager))
    return CompiledFunction(model, fullgraph, dynamic, backend, mode, eager)


def disable(fn=None, recursive=True):
    """``fn`` kept out of captures (``torch.compiler.disable``): called while a compiled function is
    traced, it is a graph break (the compiled function runs eagerly); otherwise it just runs. Also a
    decorator, with or without arguments."""
    if fn is None:
        return functools.partial(disable, recursive=recursive)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if tracing():
            STATE.rec.add_break(f"{getattr(fn, '__qualname__', fn)!s} is marked tensorplug.compiler.disable")
        return fn(*args, **kwargs)
    return run


def reset():
    """Forget every trace of every compiled function (``torch.compiler.reset``)."""
    for f in list(_ALL):
        f.reset()


class ExplainOutput:
    """What :func:`explain` found: ``graphs``, ``graph_count``, ``graph_break_count``, ``break_reasons``
    (``(reason, where)``), ``recompiles`` (the guard that failed, per recompilation) and
    ``unstable`` (how consecutive traces differed)."""

    def __init__(self, events):
        self.graphs = [e[1] for e in events if e[0] == "graph"]
        self.break_reasons = list(dict.fromkeys((e[1], e[2]) for e in events if e[0] == "break"))
        self.recompiles = [e[1] for e in events if e[0] == "recompile"]
        self.unstable = [e[1] for e in events if e[0] == "unstable"]
        self.graph_count = len(self.graphs)
        self.graph_break_count = len(self.break_reasons)

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {sum(len(g.nodes) for g in self.graphs)}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            lines += [f"  {i + 1}. {reason}\n     at {where}" for i, (reason, where) in enumerate(self.break_reasons)]
        if self.recompiles:
            lines.append("Recompilations:")
            lines += [f"  {i + 1}. guard failed: {r}" for i, r in enumerate(self.recompiles)]
        if self.unstable:
            lines.append("Traces that differed:")
            lines += [f"  {i + 1}. {r}" for i, r in enumerate(self.unstable)]
        for i, g in enumerate(self.graphs):
            lines.append(f"Graph {i}:")
            lines.append(g.tabular())
        return "\n".join(lines)


def explain(fn, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)`` (``torch._dynamo.explain``): compile ``fn``, call it until its program
    is captured (at most three times, as a fresh compile would), and return an :class:`ExplainOutput`.

    The calls run ``fn`` for real: a training step steps. ``explain(compiled_fn)`` reports what that
    compiled function has done so far without calling it again when no arguments are given.
    """
    if isinstance(fn, CompiledFunction) or hasattr(fn, "_compiled_call"):
        cf = fn if isinstance(fn, CompiledFunction) else fn._compiled_call
        if not extra_args and not extra_kwargs:
            def report(*args, **kwargs):
                if args or kwargs:
                    for _ in range(3):
                        cf(*args, **kwargs)
                return ExplainOutput(cf.events)
            return report
    else:
        cf = CompiledFunction(fn)

    def run(*args, **kwargs):
        for _ in range(3):
            before = len(cf.events)
            cf(*args, **kwargs)
            if any(e[0] == "graph" for e in cf.events[before:]) or cf.entries and cf.entries[-1].state == EAGER:
                break
        return ExplainOutput(cf.events)
    if extra_args or extra_kwargs:
        return run(*extra_args, **extra_kwargs)
    return run
