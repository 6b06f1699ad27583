"""The public API, ``tensorplug.profiler``: ``profile``, ``record_function`` and the reports.

::

    with tensorplug.profiler.profile(record_shapes=True) as prof:
        with tensorplug.profiler.record_function("step"):
            loss = model(x).sum()
            loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")
"""

from __future__ import annotations

import functools
import threading

from tensorplug.plugin_api import include_keys

from . import record
from .trace import chrome_trace, write_chrome_trace


class profile:
    """Record every op this thread runs inside the ``with`` block.

    ``record_shapes``: keep each op's input shapes and dtypes;
    ``profile_memory``: keep the bytes its outputs allocate;
    ``with_stack``: keep the Python call stack of each op. Profiles nest (an
    inner profile's ops are recorded by the outer one too) and each thread
    has its own.
    """

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self._events = []
        self._guard = None
        self.thread_names = {}

    def __enter__(self):
        if self._guard is not None:
            raise RuntimeError("this profile is already active; create a new profile to record again")
        self._events = []
        t = threading.current_thread()
        self.thread_names = {threading.get_ident(): t.name}
        record.push_profile(self._events, (self.record_shapes, self.profile_memory, self.with_stack))
        record.acquire_node_scopes()
        self._guard = include_keys(record.KEY_NAME)
        self._guard.__enter__()
        return self

    def __exit__(self, *exc):
        self._guard.__exit__(*exc)
        self._guard = None
        record.release_node_scopes()
        record.pop_profile(self._events)
        return False

    def events(self):
        """Every recorded :class:`~tensorplug_profiler.record.Event`, in start order."""
        return list(self._events)

    def key_averages(self, group_by_input_shape=False):
        """Events grouped by name (and input shapes when asked): an :class:`EventList` of averages."""
        groups = {}
        for ev in self._events:
            key = (ev.name, str(ev.input_shapes) if group_by_input_shape else None)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = EventAverage(ev.name, ev.input_shapes if group_by_input_shape else None)
            avg.add(ev)
        return EventList(groups.values(), group_by_input_shape, self.profile_memory)

    def table(self, sort_by="self_cpu_time_total", row_limit=100):
        """Shorthand for ``key_averages().table(...)``."""
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON) to ``path``; open it in ui.perfetto.dev."""
        write_chrome_trace(path, self._events, self.thread_names)

    def chrome_trace(self):
        """The Chrome trace as a dict (what :meth:`export_chrome_trace` writes)."""
        return chrome_trace(self._events, self.thread_names)


class record_function:
    """A user scope: the ops run inside it are its children in tables and traces.

    Use it as a context manager (``with record_function("forward"):``) or as
    a decorator (``@record_function("step")``). Outside a profile it records
    nothing.
    """

    def __init__(self, name):
        self.name = name
        self._scopes = []

    def __enter__(self):
        scope = record.user_scope(self.name)
        self._scopes.append(scope)
        scope.__enter__()
        return self

    def __exit__(self, *exc):
        return self._scopes.pop().__exit__(*exc)

    def __call__(self, fn):
        name = self.name

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record.user_scope(name):
                return fn(*args, **kwargs)
        return wrapped


class EventAverage:
    """Totals over the events of one name (and input shapes): what a table row shows.

    Times are in microseconds; ``cpu_memory_usage`` and
    ``self_cpu_memory_usage`` in bytes.
    """

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.is_backward = False

    def add(self, ev):
        self.count += 1
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.self_cpu_memory_usage += ev.nbytes
        self.cpu_memory_usage += ev.nbytes + sum(_subtree_bytes(c) for c in ev.children)
        self.is_backward = self.is_backward or ev.is_backward

    @property
    def cpu_time(self):
        """Average total time per call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return f"<EventAverage {self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us>"


def _subtree_bytes(ev):
    return ev.nbytes + sum(_subtree_bytes(c) for c in ev.children)


SORT_KEYS = ("self_cpu_time_total", "cpu_time_total", "cpu_time", "count",
             "cpu_memory_usage", "self_cpu_memory_usage")


def format_time(us):
    """``12.345us``, ``1.234ms`` or ``1.234s``, as PyTorch's tables print times."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes):
    """``512 b``, ``1.50 Kb``, ``2.00 Mb``, ``1.00 Gb`` (PyTorch's units)."""
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} b"


class EventList(list):
    """A list of :class:`EventAverage`; :meth:`table` prints it."""

    def __init__(self, rows, group_by_input_shape=False, with_memory=False):
        super().__init__(rows)
        self.group_by_input_shape = group_by_input_shape
        self.with_memory = with_memory

    @property
    def self_cpu_time_total(self):
        """Sum of the rows' self times (microseconds): the 100% of the percent columns."""
        return sum(r.self_cpu_time_total for r in self)

    def table(self, sort_by="self_cpu_time_total", row_limit=100):
        """The rows sorted by ``sort_by`` (descending), at most ``row_limit`` of them, as text.

        Columns: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time
        avg, (CPU Mem, Self CPU Mem when memory was profiled,) # of Calls
        (and Input Shapes when grouped by input shape).
        """
        if sort_by not in SORT_KEYS:
            raise ValueError(f"table(): cannot sort by {sort_by!r}; choose one of {', '.join(SORT_KEYS)}")
        rows = sorted(self, key=lambda r: getattr(r, sort_by), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        total = self.self_cpu_time_total or 1.0
        headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        if self.with_memory:
            headers += ["CPU Mem", "Self CPU Mem"]
        headers.append("# of Calls")
        if self.group_by_input_shape:
            headers.append("Input Shapes")
        body = []
        for r in rows:
            line = [r.key, f"{100 * r.self_cpu_time_total / total:.2f}%", format_time(r.self_cpu_time_total),
                    f"{100 * r.cpu_time_total / total:.2f}%", format_time(r.cpu_time_total),
                    format_time(r.cpu_time)]
            if self.with_memory:
                line += [format_memory(r.cpu_memory_usage), format_memory(r.self_cpu_memory_usage)]
            line.append(str(r.count))
            if self.group_by_input_shape:
                line.append(str(r.input_shapes if r.input_shapes is not None else []))
            body.append(line)
        widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(headers)]
        # the name column is left-aligned, the numbers right-aligned, as PyTorch prints them
        def fmt(cells):
            return "  ".join(c.ljust(w) if i == 0 or headers[i] == "Input Shapes" else c.rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
        sep = "-" * len(fmt(["-" * w for w in widths]))
        out = [sep, fmt(headers), sep] + [fmt(b) for b in body] + [sep,
                                                                   f"Self CPU time total: {format_time(total if self else 0.0)}"]
        return "\n".join(out)

    def __str__(self):
        return self.table()
