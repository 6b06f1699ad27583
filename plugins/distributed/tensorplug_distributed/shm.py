"""DDP's gradient buckets in memory that every rank of a node maps, and their allreduce there.

When all ranks of a process group run on one machine, MPI can give them one shared memory window
(``MPI.Win.Allocate_shared``): each rank's segment holds its flat bucket buffers, and every rank
reads and writes every segment directly. A bucket's allreduce is then a barrier (every rank's
gradients are in), each rank summing its own slice of the bucket over all segments in rank order and
writing the sum into every segment, and a second barrier. Each value is summed once, by one rank,
so every rank holds the same bits; for two ranks they are MPI's too (``a + b == b + a``). Measured on
a two-core machine: about 10x faster than MPICH's ``Allreduce`` for a 1 MiB bucket (0.07 ms against
0.6 ms), with no copy into or out of MPI.

Only float32 and float64 buckets on the CPU take this path (see :func:`eligible`); the environment
variable ``TENSORPLUG_DISTRIBUTED_SHM=0`` turns it off. The window belongs to the process group and
is freed with it (``destroy_process_group`` is collective, as freeing a window is).
"""

from __future__ import annotations

import os

import numpy as np

import tensorplug

from . import _mpi

__all__ = ["NodeBuffers", "eligible", "enabled", "has_room"]

_DTYPES = {tensorplug.float32: np.float32, tensorplug.float64: np.float64}


def enabled():
    """Whether the shared-memory path may be used (``TENSORPLUG_DISTRIBUTED_SHM`` is not ``0``)."""
    return os.environ.get("TENSORPLUG_DISTRIBUTED_SHM", "1") != "0"


def eligible(pg, dtype, device):
    """Whether buffers of ``dtype`` on ``device`` for group ``pg`` can live in a node's shared memory:
    more than one rank, all on this node, float32 or float64 on the CPU, and the path enabled."""
    return (enabled() and pg.nranks > 1 and dtype in _DTYPES and device.type == "cpu"
            and pg.node_comm() is not None)


def has_room(pg, nbytes):
    """Whether every rank sees room for ``nbytes`` per rank of shared memory (collective: all ranks agree).

    A container's ``/dev/shm`` may be small (64 MiB by default under Docker); a window that does not
    fit would fail on some ranks and not others, so the decision is taken first and together."""
    try:
        st = os.statvfs("/dev/shm")
        ok = st.f_bavail * st.f_frsize >= 2 * nbytes * pg.nranks
    except OSError:  # no /dev/shm to look at: MPI finds its own shared memory
        ok = True
    return bool(pg.node_comm().allreduce(int(ok), op=_mpi.mpi().MIN))


class NodeBuffers:
    """Flat buffers of ``sizes`` elements of ``dtype`` in one shared window of group ``pg``'s node
    (collective: every rank of ``pg`` constructs it with the same arguments)."""

    def __init__(self, pg, sizes, dtype):
        MPI = _mpi.mpi()
        self.pg = pg
        self.node = pg.node_comm()
        np_dtype = np.dtype(_DTYPES[dtype])
        total = sum(sizes)
        self.win = MPI.Win.Allocate_shared(max(1, total) * np_dtype.itemsize, np_dtype.itemsize, comm=self.node)
        pg.windows.append(self.win)
        self.win.Lock_all(MPI.MODE_NOCHECK)
        segments = [np.frombuffer(self.win.Shared_query(k)[0], np_dtype, total) for k in range(self.node.Get_size())]
        me, n = self.node.Get_rank(), self.node.Get_size()
        self.buffers, self._slices, offset = [], [], 0
        for size in sizes:
            cut = [offset + size * k // n for k in range(n + 1)]
            lo, hi = cut[me], cut[me + 1]
            self._slices.append([s[lo:hi] for s in segments])
            self.buffers.append(tensorplug.from_numpy(segments[me][offset:offset + size]))
            offset += size

    def allreduce(self, index, average):
        """Sum (``average``: the mean) buffer ``index`` over the node's ranks, in place on every rank."""
        parts = self._slices[index]
        self._fence()
        acc = np.add(parts[0], parts[1]) if len(parts) > 1 else parts[0].copy()
        for p in parts[2:]:
            np.add(acc, p, out=acc)
        if average:
            np.divide(acc, len(parts), out=acc)
        for p in parts:
            p[...] = acc
        self._fence()

    def _fence(self):
        # every rank's writes are visible to all before any reads on: the window's memory barrier both sides
        self.win.Sync()
        self.node.Barrier()
        self.win.Sync()
