"""Finding MPI: mpi4py is imported on first use (importing it starts MPI), mpiexec looked up beside Python.

Nothing here runs at ``import tensorplug``: ``is_available()`` only looks for the two pieces.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys

EXTRA = "pip install 'tensorplug-distributed[mpi]'"

_MPI = [None]


def mpiexec_path():
    """The ``mpiexec`` of this environment (where the mpich wheel installs it), else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    return shutil.which("mpiexec")


def has_mpi4py():
    return importlib.util.find_spec("mpi4py") is not None


def missing():
    """Why MPI cannot be used here (None when it can)."""
    if not has_mpi4py():
        return f"mpi4py is not installed ({EXTRA} installs mpich and mpi4py)"
    if mpiexec_path() is None and "PMI_RANK" not in os.environ:
        return f"no mpiexec was found beside {sys.executable} or on PATH ({EXTRA} installs mpich's)"
    return None


def mpi():
    """mpi4py's ``MPI`` module, imported (and MPI initialised, thread level MULTIPLE) on first use."""
    if _MPI[0] is None:
        why = missing() if not has_mpi4py() else None
        if why is not None:
            raise RuntimeError(f"tensorplug.distributed: the mpi backend needs MPI: {why}")
        from mpi4py import MPI  # lazy: importing mpi4py.MPI initialises MPI
        _MPI[0] = MPI
    return _MPI[0]
