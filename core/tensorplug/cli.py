"""The ``tensorplug`` command.

::

    tensorplug plugins [--json]          every plugin: distribution, version, state, keys, backends, kernels
    tensorplug dispatch-table OP [--json]
                                         where each runtime key sends OP (add.Tensor, add, myns::op.overload),
                                         with the provenance and the plugin that registered the entry
    tensorplug keys [--json]             functionality keys (priority, bit, owner) and backends (bit, plugin)
    tensorplug conformance NAME [--ops PATTERN] [--dtypes DTYPE...] [--json]
                                         the conformance suite for a backend or transform, op by op
                                         (docs/conformance.md)
    tensorplug demo [ARGS...]            a tour of tensorplug (tensorplug.demo)

Exit status: 0 on success, 1 for an unknown operator, backend or transform (or a missing demo)
and for a conformance run with failures, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import sys

import tensorplug
from . import dtypes as _dt
from .dispatch import dispatcher as _d
from ._printing import text_table
from .dispatch.keys import REGISTRY, BACKEND_BITS


def _dump(obj):
    print(json.dumps(obj, indent=2))


def cmd_plugins(args):
    """``tensorplug plugins``: the plugin listing."""
    infos = tensorplug.plugins.list()
    if args.json:
        _dump([i.as_dict() for i in infos])
        return 0
    if not infos:
        print("no plugins installed (entry point group 'tensorplug.plugins')")
        return 0
    rows = [(i.name, i.dist or "-", i.version or "-", i.state, ",".join(i.keys) or "-",
             ",".join(i.backends) or "-", i.kernel_count) for i in infos]
    print(text_table(("NAME", "DISTRIBUTION", "VERSION", "STATE", "KEYS", "BACKENDS", "KERNELS"), rows))
    for i in infos:
        if i.state == "failed":
            print(f"{i.name}: {i.error}")
    return 0


def find_ops(spec):
    """The overloads ``spec`` names: ``add.Tensor``, ``add`` (every overload), ``ns::op[.overload]``.

    A name without a namespace is looked up in ``tensorplug``. Returns [] if nothing matches.
    """
    ns, sep, rest = spec.rpartition("::")
    ns = ns if sep else "tensorplug"
    name, dot, overload = rest.partition(".")
    if dot:
        op = _d.OPS.get(f"{ns}::{name}.{overload}")
        if op is None and overload == "default":
            op = _d.OPS.get(f"{ns}::{name}")
        return [op] if op is not None else []
    pkt = _d.PACKETS.get(f"{ns}::{name}")
    return list(pkt.overloads.values()) if pkt is not None else []


def cmd_dispatch_table(args):
    """``tensorplug dispatch-table OP``: one line per runtime key."""
    ops = find_ops(args.op)
    if not ops:
        known = [q.replace("tensorplug::", "") for q in tuple(_d.OPS)]
        close = difflib.get_close_matches(args.op, known, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        print(f"tensorplug dispatch-table: unknown operator {args.op!r}{hint}", file=sys.stderr)
        return 1
    if args.json:
        _dump([{"op": op.qualname, "schema": str(op.schema),
                "table": [{"key": k, "provenance": p, "plugin": o} for k, p, o in op.dispatch_table()]}
               for op in ops])
        return 0
    for n, op in enumerate(ops):
        if n:
            print()
        print(f"{op.namespace}::{op.schema}" if not op.schema.namespace else str(op.schema))
        print(text_table(("KEY", "PROVENANCE", "PLUGIN"), op.dispatch_table(), indent="  "))
    return 0


def cmd_keys(args):
    """``tensorplug keys``: functionality keys and backend components."""
    fkeys = sorted(REGISTRY.functionality.values(), key=lambda k: -k.priority)
    backends = [b for b in REGISTRY.backends if b is not None]
    if args.json:
        _dump({"functionality": [{"name": k.name, "priority": k.priority, "bit": BACKEND_BITS + k.priority,
                                  "per_backend": k.per_backend, "owner": k.owner} for k in fkeys],
               "backends": [{"name": b.name, "device": getattr(b.record, "name", None), "bit": b.index,
                             "plugin": getattr(b.record, "owner", None)} for b in backends]})
        return 0
    print("functionality keys, highest priority first:")
    print(text_table(("KEY", "PRIORITY", "BIT", "PER-BACKEND", "OWNER"),
                 [(k.name, k.priority, BACKEND_BITS + k.priority, "yes" if k.per_backend else "no", k.owner)
                  for k in fkeys], indent="  "))
    print("backends:")
    if not backends:
        print("  none (install a backend plugin such as tensorplug-cpu)")
    else:
        print(text_table(("KEY", "DEVICE", "BIT", "PLUGIN"),
                     [(b.name, getattr(b.record, "name", "-"), b.index, getattr(b.record, "owner", None) or "-")
                      for b in backends], indent="  "))
    return 0


def cmd_conformance(args):
    """``tensorplug conformance NAME``: the op-by-op table and the summary line; 1 on any failure."""
    from .testing import run_conformance  # lazy: the conformance kit loads only for this command
    dtypes = None
    if args.dtypes is not None:
        names = [n.strip() for item in args.dtypes for n in item.split(",") if n.strip()]
        unknown = [n for n in names if n not in _dt._BY_NAME]
        if unknown:
            print(f"tensorplug conformance: unknown dtype {unknown[0]!r}; known: "
                  f"{', '.join(d.name for d in _dt.all_dtypes())}", file=sys.stderr)
            return 2
        dtypes = [_dt._by_name(n) for n in names]
    try:
        report = run_conformance(args.name, ops=args.ops, dtypes=dtypes)
    except LookupError as e:
        print(f"tensorplug conformance: {e.args[0]}", file=sys.stderr)
        return 1
    if args.json:
        _dump(report.as_dict())
    else:
        print(report.table())
    return 0 if report.ok else 1


def cmd_demo(args):
    """``tensorplug demo``: runs ``tensorplug.demo.main(argv)``."""
    try:
        demo = importlib.import_module("tensorplug.demo")
    except ModuleNotFoundError as e:
        if e.name != "tensorplug.demo":
            raise
        print("tensorplug demo: this installation has no tensorplug.demo module", file=sys.stderr)
        return 1
    return demo.main(args.args)


def cmd_run(args):
    """``tensorplug run -n N script.py ...``: the distributed plugin's launcher (over mpiexec)."""
    import tensorplug.distributed as dist  # lazy: only this command needs the namespace
    try:
        launcher = dist.run
    except AttributeError as e:
        print(f"tensorplug run: {e}", file=sys.stderr)
        return 1
    return launcher.main(args.args)


def build_parser():
    """The argparse parser of the ``tensorplug`` command."""
    ap = argparse.ArgumentParser(prog="tensorplug", description="Inspect tensorplug's plugins and dispatcher.",
                                 epilog="Exit status: 0 ok, 1 unknown operator, 2 usage error.")
    ap.add_argument("--version", action="version", version=f"tensorplug {tensorplug.__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("plugins", help="list plugins with their state, keys, backends and kernel count")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(run=cmd_plugins)
    p = sub.add_parser("dispatch-table", help="show where each dispatch key sends an operator")
    p.add_argument("op", metavar="OP", help="add.Tensor, add (all overloads) or ns::op.overload")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(run=cmd_dispatch_table)
    p = sub.add_parser("keys", help="list functionality keys and backends with their bits")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(run=cmd_keys)
    p = sub.add_parser("conformance", help="run the conformance suite for a backend or transform",
                       description="Run the generic conformance checks for every op of the database on backend "
                                   "(or transform) NAME and print an op-by-op table. Exit status 1 if any "
                                   "check fails.")
    p.add_argument("name", metavar="NAME", help="a backend's device type (cpu) or a transform's name")
    p.add_argument("--ops", metavar="PATTERN", help="op names or glob patterns, comma separated (add,exp,nn.*)")
    p.add_argument("--dtypes", nargs="+", metavar="DTYPE", help="dtypes to test (float32 int64 ...)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(run=cmd_conformance)
    # the demo parses its own arguments (and its own --help)
    p = sub.add_parser("demo", help="run a tour of tensorplug", add_help=False)
    p.set_defaults(run=cmd_demo)
    # the launcher parses its own arguments too (tensorplug run -n 2 script.py --script-flag)
    p = sub.add_parser("run", help="run a script on N processes (tensorplug-distributed, over mpiexec)",
                       add_help=False)
    p.set_defaults(run=cmd_run)
    return ap


def main(argv=None):
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    ap = build_parser()
    try:
        args, rest = ap.parse_known_args(argv)
        if rest and args.command not in ("demo", "run"):
            ap.error(f"unrecognized arguments: {' '.join(rest)}")
    except SystemExit as e:  # argparse exits on --help (0) and on usage errors (2)
        return e.code if isinstance(e.code, int) else 2
    args.args = rest
    if args.command is None:
        ap.print_usage(sys.stderr)
        print("tensorplug: error: a command is required (plugins, dispatch-table, keys, conformance, demo, run)",
              file=sys.stderr)
        return 2
    return args.run(args)
