"""The Chrome trace format (the JSON object format that chrome://tracing and Perfetto read).

Each event becomes a complete event (``ph: "X"``) with ``ts`` and ``dur`` in
microseconds relative to the first event, so events nest exactly as they
were recorded; ``ph: "M"`` metadata events name the process and threads.
"""

from __future__ import annotations

import json
import os


def chrome_trace(events, thread_names=None):
    """``{"traceEvents": [...], "displayTimeUnit": "ms"}`` for ``events`` (recorded Events)."""
    pid = os.getpid()
    base = min((e.start for e in events), default=0)
    out = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "tensorplug"}}]
    tids = []
    for e in events:
        if e.tid not in tids:
            tids.append(e.tid)
    names = thread_names or {}
    for i, tid in enumerate(tids):
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                    "args": {"name": names.get(tid, f"thread {tid}")}})
        out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": i}})
    for e in events:
        args = {"Device": e.device}
        if e.input_shapes is not None:
            args["Input Dims"] = e.input_shapes
            args["Input type"] = e.input_types
        if e.nbytes:
            args["Allocated bytes"] = e.nbytes
        if e.stack is not None:
            args["Call stack"] = ";".join(e.stack)
        if e.is_backward:
            args["Backward"] = True
        out.append({"ph": "X", "cat": e.kind, "name": e.name, "pid": pid, "tid": e.tid,
                    "ts": (e.start - base) / 1000, "dur": (e.end - e.start) / 1000, "args": args})
    return {"traceEvents": out, "displayTimeUnit": "ms"}


def write_chrome_trace(path, events, thread_names=None):
    """Write :func:`chrome_trace` of ``events`` to ``path`` as JSON."""
    with open(path, "w") as f:
        json.dump(chrome_trace(events, thread_names), f)
