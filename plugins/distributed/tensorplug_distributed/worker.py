"""One process of ``tensorplug run``: torchrun's environment variables from MPI's, then the script.

``python -m tensorplug_distributed.worker [-m] TARGET ARGS...`` under mpiexec.
"""

from __future__ import annotations

import os
import runpy
import sys


def _first(*names, default=None):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            return v
    return default


def environment():
    """Set RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK from the process manager's variables."""
    rank = _first("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", default="0")
    size = _first("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", default="1")
    local = _first("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", default=rank)
    local_size = _first("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", default=size)
    os.environ.update(RANK=rank, WORLD_SIZE=size, LOCAL_RANK=local, LOCAL_WORLD_SIZE=local_size, GROUP_RANK="0")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    module = bool(argv) and argv[0] == "-m"
    if module:
        argv = argv[1:]
    if not argv:
        sys.exit("usage: python -m tensorplug_distributed.worker [-m] TARGET [ARGS...]")
    environment()
    sys.argv = argv
    if module:
        runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
