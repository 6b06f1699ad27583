"""The conformance report: run a target's cases and summarise them op by op.

:func:`run_conformance` runs every case of a backend or transform and
returns a :class:`Report`, which prints as a table (:meth:`Report.table`),
ends with the summary line ``N passed, N failed, N skipped``
(:meth:`Report.summary`) and converts to JSON (:meth:`Report.as_dict`).

Each case ends in one status: ``passed`` (natively), ``fallback`` (it passed,
but some operator it reached ran through the backend's boxed fallback, that
is another backend's kernels), ``failed``, ``xfailed`` (failed as declared)
or ``skipped``. Fallback and xfailed cases are never counted as passed.
"""

from __future__ import annotations

import dataclasses
import time

from .._printing import text_table
from ..ops.memory import empty as _empty
from .suite import conformance_cases, conformance_config, run_case

STATUSES = ("passed", "fallback", "failed", "xfailed", "skipped")

# dtype columns stay narrow with PyTorch's short names
SHORT = {"bool": "b8", "uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
         "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64"}

REASON_WIDTH = 100


def _short(name):
    return SHORT.get(name, name)


@dataclasses.dataclass
class OpResult:
    """One op's cases: ``dtype name -> status`` (the worst of its checks) and the messages."""

    op: str
    dtypes: dict = dataclasses.field(default_factory=dict)
    failed_checks: dict = dataclasses.field(default_factory=dict)  # dtype name or "any" -> [check]
    fallback: tuple = ()
    reasons: list = dataclasses.field(default_factory=list)
    cases: list = dataclasses.field(default_factory=list)

    def with_status(self, status):
        return [d for d, s in self.dtypes.items() if s == status]


# which status a dtype shows when its checks end differently: the worst one
_RANK = {"failed": 0, "fallback": 1, "xfailed": 2, "passed": 3, "skipped": 4}


class Report:
    """The outcome of every case of one conformance target."""

    def __init__(self, target, backend, results, seconds):
        self.target = target
        self.backend = backend
        self.results = results  # [(Case, Outcome)] in run order
        self.seconds = seconds

    def counts(self):
        """``{status: number of cases}`` for every status."""
        out = dict.fromkeys(STATUSES, 0)
        for _, o in self.results:
            out[o.status] += 1
        return out

    @property
    def ok(self):
        """No case failed."""
        return not self.counts()["failed"]

    def ops(self):
        """One :class:`OpResult` per op name, in database order."""
        rows = {}
        undtyped = {}  # op name -> worst status of its checks that take no dtype (a transform's)
        for case, o in self.results:
            r = rows.setdefault(case.opinfo.name, OpResult(case.opinfo.name))
            dt = case.dtype.name if case.dtype is not None else None
            if dt is None:
                prev = undtyped.get(r.op)
                if prev is None or _RANK[o.status] < _RANK[prev]:
                    undtyped[r.op] = o.status
            r.cases.append({"dtype": dt, "check": case.check.name, "status": o.status, "message": o.message})
            if o.fallback:
                r.fallback = tuple(sorted(set(r.fallback) | set(o.fallback)))
            if dt is not None and (dt not in r.dtypes or _RANK[o.status] < _RANK[r.dtypes[dt]]):
                r.dtypes[dt] = o.status
            if o.status == "failed":
                r.failed_checks.setdefault(dt or "any", []).append(case.check.name)
            if o.status in ("failed", "xfailed", "skipped") and o.message:
                reason = f"{case.check.name}: {o.message}" if o.status == "failed" else o.message
                if o.status == "xfailed":
                    reason = "xfail: " + reason
                if reason not in r.reasons:
                    r.reasons.append(reason)
        for name, status in undtyped.items():
            if not rows[name].dtypes:  # only dtype-free checks ran: show them as "any"
                rows[name].dtypes["any"] = status
        return list(rows.values())

    def summary(self):
        """The line ``N passed, N failed, N skipped`` (passed counts native passes only)."""
        c = self.counts()
        return f"{c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped"

    def table(self):
        """The op-by-op table, a line on fallback and xfailed cases, and the summary line."""
        rows = []
        for r in self.ops():
            failed = ",".join(_short(d) for d in r.failed_checks)
            fb = ""
            if r.fallback:
                fb = " ".join(filter(None, (",".join(_short(d) for d in r.with_status("fallback")),
                                            "via " + ",".join(r.fallback))))
            reasons = "; ".join(r.reasons)
            if len(reasons) > REASON_WIDTH:
                reasons = reasons[:REASON_WIDTH - 3] + "..."
            rows.append((r.op, ",".join(_short(d) for d in r.with_status("passed")) or "-", failed or "-",
                         ",".join(_short(d) for d in r.with_status("skipped")) or "-", fb or "-",
                         reasons.replace("\n", " ") or "-"))
        c = self.counts()
        lines = [f"conformance of {self.target!r} (device type {self.backend!r}): {len(rows)} ops, "
                 f"{len(self.results)} checks in {self.seconds:.1f}s"]
        if rows:
            lines.append(text_table(("OP", "PASSED", "FAILED", "SKIPPED", "FALLBACK", "REASONS"), rows))
        lines.append(f"{c['fallback']} passed through a fallback (not counted as passed), {c['xfailed']} xfailed")
        lines.append(self.summary())
        return "\n".join(lines)

    def as_dict(self):
        """The report as JSON-ready data: target, counts and one entry per op with its cases."""
        return {"target": self.target, "backend": self.backend, "seconds": round(self.seconds, 3),
                "summary": self.counts(),
                "ops": [{"op": r.op, "passed": r.with_status("passed"), "failed": r.failed_checks,
                         "skipped": r.with_status("skipped"), "xfailed": r.with_status("xfailed"),
                         "fallback_dtypes": r.with_status("fallback"), "fallback_ops": list(r.fallback),
                         "reasons": r.reasons, "cases": r.cases} for r in self.ops()]}


def run_conformance(name, *, ops=None, dtypes=None, op_db=None):
    """Run every conformance case of backend or transform ``name`` and return the :class:`Report`.

    ``ops`` (names or glob patterns, a list or comma-separated string),
    ``dtypes`` and ``op_db`` narrow the run as in :func:`conformance_cases`.
    """
    cfg = conformance_config(name)
    try:  # a backend whose device cannot be used (no GPU, no driver) says so once, not in every case
        _empty((0,), device=cfg.backend)
    except RuntimeError as e:
        raise LookupError(f"{name}: the backend {cfg.backend!r} has no usable device: {e}") from None
    start = time.perf_counter()
    results = [(case, run_case(case)) for case in conformance_cases(name, ops=ops, dtypes=dtypes, op_db=op_db)]
    return Report(cfg.name, cfg.backend, results, time.perf_counter() - start)
