"""``tensorplug run``: start a script on N processes through ``mpiexec``, torchrun-style.

``tensorplug run -n 2 train.py --lr 0.1`` runs ``mpiexec -n 2 python -m tensorplug_distributed.worker
train.py --lr 0.1``; each worker sets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``,
``MASTER_ADDR`` and ``MASTER_PORT`` from MPI's process manager (as torchrun sets them) and runs the
script as ``__main__``. ``mpiexec`` is the one beside this Python (where the mpich wheel installs it)
or the one on PATH. The exit status is mpiexec's: non-zero when any rank failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import uuid

from . import _mpi


def parser():
    ap = argparse.ArgumentParser(prog="tensorplug run", description="Run a script on N processes (over mpiexec).")
    ap.add_argument("-n", "--nproc-per-node", "--nproc_per_node", dest="nproc", type=int, default=1,
                    metavar="N", help="number of processes (default 1)")
    ap.add_argument("-m", "--module", action="store_true", help="run the target as a module (python -m)")
    ap.add_argument("--mpiexec", metavar="PATH", help="the mpiexec to use (default: this environment's, then PATH)")
    ap.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    ap.add_argument("target", metavar="SCRIPT", help="the script (or module, with -m) each process runs")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return ap


def command(nproc, target, args, module=False, mpiexec=None):
    """The argv that starts ``target`` on ``nproc`` processes."""
    exe = mpiexec or _mpi.mpiexec_path()
    if exe is None:
        raise RuntimeError(f"tensorplug run needs mpiexec: {_mpi.missing() or 'none was found'}")
    worker = [sys.executable, "-m", "tensorplug_distributed.worker"] + (["-m"] if module else [])
    return [exe, "-n", str(nproc)] + worker + [target] + list(args)


def main(argv=None):
    """Parse ``argv`` (after ``tensorplug run``), start the job, return its exit status."""
    args = parser().parse_args(argv)
    if args.nproc < 1:
        print("tensorplug run: -n must be at least 1", file=sys.stderr)
        return 2
    try:
        argv_ = command(args.nproc, args.target, args.args, args.module, args.mpiexec)
    except RuntimeError as e:
        print(f"tensorplug run: {e}", file=sys.stderr)
        return 1
    if args.dry_run:
        print(" ".join(argv_))
        return 0
    env = dict(os.environ)
    env.setdefault("TORCHELASTIC_RUN_ID", uuid.uuid4().hex[:12])
    env.setdefault("MASTER_ADDR", "127.0.0.1")
    env.setdefault("MASTER_PORT", "29500")
    try:
        return subprocess.call(argv_, env=env)
    except KeyboardInterrupt:
        return 130


# ``tensorplug.distributed.run`` is this module (``.main(argv)`` starts a job), imported on first use
LAUNCHER = sys.modules[__name__]
