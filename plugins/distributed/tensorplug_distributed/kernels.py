"""The collectives as dispatcher operators (namespace ``c10d``): schemas, shared checks, kernels.

Each operator takes the group as its id (``int group``) and ``bool async_op``; the kernel leaves
the collective's :class:`~tensorplug_distributed.group.Work` on the group (``last_work``) for
the Python function that called it. The checks run once before dispatch, so every backend
raises the same errors. Kernels here: CPU (MPI on the numpy buffers, zero-copy and in place where
MPI allows) and CUDA (NCCL through cupy on the current stream; tensorplug-cuda's simulated
devices hold numpy arrays and use the MPI path). Another backend registers its own kernels for
these operators with ``library("c10d", "IMPL")``.
"""

from __future__ import annotations

from time import monotonic as _monotonic

import numpy as np


from . import _mpi
from .group import GROUPS, RedOpType, Work

SCHEMAS = {
    "allreduce_": "allreduce_(Tensor(a!) tensor, int reduce_op, int group, bool async_op) -> Tensor(a!)",
    "broadcast_": "broadcast_(Tensor(a!) tensor, int src, int group, bool async_op) -> Tensor(a!)",
    "reduce_": "reduce_(Tensor(a!) tensor, int dst, int reduce_op, int group, bool async_op) -> Tensor(a!)",
    "allgather_into_tensor_": "allgather_into_tensor_(Tensor(a!) output, Tensor input, int group, bool async_op) "
                              "-> Tensor(a!)",
    "reduce_scatter_tensor_": "reduce_scatter_tensor_(Tensor(a!) output, Tensor input, int reduce_op, int group, "
                              "bool async_op) -> Tensor(a!)",
    "gather_": "gather_(Tensor(a!) output, Tensor input, int dst, int group, bool async_op) -> Tensor(a!)",
    "scatter_": "scatter_(Tensor(a!) output, Tensor input, int src, int group, bool async_op) -> Tensor(a!)",
    "send": "send(Tensor tensor, int dst, int tag, int group, bool async_op) -> Tensor",
    "recv_": "recv_(Tensor(a!) tensor, int src, int tag, int group, bool async_op) -> Tensor(a!)",
    "alltoall_base_": "alltoall_base_(Tensor(a!) output, Tensor input, int[] output_split_sizes, "
                      "int[] input_split_sizes, int group, bool async_op) -> Tensor(a!)",
}

NAMES = {"allreduce_": "all_reduce", "broadcast_": "broadcast", "reduce_": "reduce",
         "allgather_into_tensor_": "all_gather_into_tensor", "reduce_scatter_tensor_": "reduce_scatter_tensor",
         "gather_": "gather", "scatter_": "scatter", "send": "send", "recv_": "recv",
         "alltoall_base_": "all_to_all_single"}


# -- checks shared by every backend --------------------------------------------------------------------------

def _type_name(dtype):
    return str(dtype).rpartition(".")[2]


def _contiguous(t):
    if not t.is_contiguous():
        raise RuntimeError("Tensors must be contiguous")


def _same_kind(name, out, inp):
    if out.dtype != inp.dtype:
        raise RuntimeError(f"ProcessGroupMPI::{name}: invalid tensor type (expected {_type_name(inp.dtype)}, "
                           f"got {_type_name(out.dtype)}): the output and input tensors must have the same dtype")
    if out.device != inp.device:
        raise RuntimeError(f"ProcessGroupMPI::{name}: the output tensor is on {out.device} and the input on "
                           f"{inp.device}; they must be on the same device")


def _op_for(name, t, op):
    op = RedOpType(op)
    if op is RedOpType.PREMUL_SUM or op is RedOpType.UNUSED:
        raise ValueError(f"{name} does not support {op} on the mpi backend")
    if t.is_complex() and op in (RedOpType.MAX, RedOpType.MIN):
        raise ValueError(f"{name} does not support {op} on complex tensors")
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and (t.is_floating_point() or t.is_complex()):
        raise RuntimeError(f"{name}: {op} needs an integer or bool tensor, got {_type_name(t.dtype)}")
    return op


def _root(name, root, pg, what="root rank"):
    if not 0 <= root < pg.nranks:
        raise RuntimeError(f"ProcessGroupMPI::{name}: invalid {what}: {root}")


_OP_TYPES = {"all_reduce": "ALLREDUCE", "broadcast": "BROADCAST", "reduce": "REDUCE",
             "all_gather_into_tensor": "_ALLGATHER_BASE", "reduce_scatter_tensor": "_REDUCE_SCATTER_BASE",
             "gather": "GATHER", "scatter": "SCATTER", "all_to_all_single": "ALLTOALL_BASE"}


def _fingerprint(name, pg, *tensors):
    """With ``TORCH_DISTRIBUTED_DEBUG=DETAIL``: every rank of the group compares what it is about to run
    (the collective, its tensors' shapes, dtypes and devices) and all raise PyTorch's mismatch error."""
    fp = (f"CollectiveFingerPrint(SequenceNumber={pg.seq + 1}, OpType={_OP_TYPES[name]}, TensorShape="
          f"{[list(t.shape) for t in tensors]}, TensorDtypes={[_type_name(t.dtype) for t in tensors]}, "
          f"TensorDeviceTypes={[t.device.type for t in tensors]})")
    everyone = pg.comm.allgather(fp)
    for r, other in enumerate(everyone):
        if other != fp:
            raise RuntimeError(f"Detected mismatch between collectives on ranks. Rank {pg.rank_} is running "
                               f"collective: {fp}, but Rank {r} is running collective: {other}.")


def check_allreduce(t, op, gid, async_op):
    if op != 0:  # SUM needs no check: every dtype adds
        _op_for("all_reduce", t, op)
    pg = GROUPS[gid]
    if pg.detail:
        _fingerprint("all_reduce", pg, t)


def check_broadcast(t, src, gid, async_op):
    pg = GROUPS[gid]
    _root("broadcast", src, pg)
    if pg.detail:
        _fingerprint("broadcast", pg, t)


def check_reduce(t, dst, op, gid, async_op):
    _op_for("reduce", t, op)
    pg = GROUPS[gid]
    _root("reduce", dst, pg)
    if pg.detail:
        _fingerprint("reduce", pg, t)


def _world_times(name, pg, out, inp, big, small, what):
    """The checks of the two collectives whose ``big`` tensor holds world_size ``small`` ones."""
    _same_kind(name, out, inp)
    _contiguous(out)
    if big.numel() != small.numel() * pg.nranks:
        raise RuntimeError(f"ProcessGroupMPI::{name}: {what} (world_size {pg.nranks}, input size {inp.numel()}, "
                           f"output size {out.numel()})")


def check_allgather(out, inp, gid, async_op):
    pg = GROUPS[gid]
    _world_times("_allgather_base", pg, out, inp, out, inp,
                 "output tensor size must be equal to world_size times input tensor size")
    if pg.detail:
        _fingerprint("all_gather_into_tensor", pg, inp)


def check_reduce_scatter(out, inp, op, gid, async_op):
    pg = GROUPS[gid]
    _op_for("reduce_scatter_tensor", inp, op)
    _world_times("_reduce_scatter_base", pg, out, inp, inp, out,
                 "input tensor size must be equal to world_size times output tensor size")
    if pg.detail:
        _fingerprint("reduce_scatter_tensor", pg, out)


def check_gather(out, inp, dst, gid, async_op):
    pg = GROUPS[gid]
    _root("gather", dst, pg)
    if pg.rank_ == dst:
        _same_kind("gather", out, inp)
        _contiguous(out)
        if out.numel() != inp.numel() * pg.nranks:
            raise RuntimeError(f"ProcessGroupMPI::gather: invalid tensor size (expected {pg.nranks} tensors of "
                               f"{inp.numel()} elements, got {out.numel()} elements in all)")


def check_scatter(out, inp, src, gid, async_op):
    pg = GROUPS[gid]
    _root("scatter", src, pg)
    if pg.rank_ == src:
        _same_kind("scatter", out, inp)
        if inp.numel() != out.numel() * pg.nranks:
            raise RuntimeError(f"ProcessGroupMPI::scatter: invalid tensor size (expected {pg.nranks} tensors of "
                               f"{out.numel()} elements, got {inp.numel()} elements in all)")


def check_send(t, dst, tag, gid, async_op):
    pg = GROUPS[gid]
    _root("send", dst, pg, "destination rank")
    if dst == pg.rank_:
        raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the "
                         "current process.")


def check_recv(t, src, tag, gid, async_op):
    pg = GROUPS[gid]
    if src != -1:
        _root("recv", src, pg, "source rank")
        if src == pg.rank_:
            raise ValueError("Invalid source rank: source rank should not be the same as the rank of the "
                             "current process.")


def _split_sizes(splits, t, size):
    if t.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if not splits:
        if t.shape[0] % size:
            raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
        return
    if len(splits) != size:
        raise RuntimeError("Number of tensor splits not equal to group size")
    if any(s < 0 for s in splits) or sum(splits) != t.shape[0]:
        raise RuntimeError("Split sizes doesn't match total dim 0 size")


def _row(t):
    """Elements per index of dim 0."""
    n = 1
    for d in t.shape[1:]:
        n *= d
    return n


def check_alltoall(out, inp, out_splits, in_splits, gid, async_op):
    pg = GROUPS[gid]
    _same_kind("alltoall_base", out, inp)
    _contiguous(out)
    if not out_splits and not in_splits:
        if out.numel() != inp.numel():
            raise RuntimeError("Tensors are not equal in size or data type")
        _split_sizes((), out, pg.nranks)
        _split_sizes((), inp, pg.nranks)
    else:
        _split_sizes(out_splits, out, pg.nranks)
        _split_sizes(in_splits, inp, pg.nranks)
        if out.shape[1:] != inp.shape[1:]:
            raise RuntimeError(f"ProcessGroupMPI::alltoall_base: the output's rows {list(out.shape[1:])} and the "
                               f"input's rows {list(inp.shape[1:])} differ in shape")
    if pg.detail:
        _fingerprint("all_to_all_single", pg, out[:0])  # the row shape: dim 0 may differ between ranks


CHECKS = {"allreduce_": check_allreduce, "broadcast_": check_broadcast, "reduce_": check_reduce,
          "allgather_into_tensor_": check_allgather, "reduce_scatter_tensor_": check_reduce_scatter,
          "gather_": check_gather, "scatter_": check_scatter, "send": check_send, "recv_": check_recv,
          "alltoall_base_": check_alltoall}


# -- MPI on host buffers -------------------------------------------------------------------------------------

_BF16 = [None]


def _is_bf16(arr):
    if _BF16[0] is None:
        import ml_dtypes  # lazy: only a bfloat16 tensor needs it, and tensorplug already depends on it
        _BF16[0] = np.dtype(ml_dtypes.bfloat16)
    return arr.dtype == _BF16[0]


def _moving(arr):
    """``arr`` as an MPI buffer for a collective that only moves bytes (bfloat16 and bool included)."""
    kind = arr.dtype.kind
    if kind == "b":
        return [arr, _mpi.mpi().C_BOOL]
    if kind not in "iufc":  # bfloat16 (kind "V") and other dtypes MPI has no type for: their bytes
        return [arr.view(np.uint8), _mpi.mpi().BYTE]
    return arr


_MPI_OPS = {}


def _mpi_op(op, arr):
    MPI = _mpi.mpi()
    if not _MPI_OPS:
        _MPI_OPS.update({RedOpType.SUM: MPI.SUM, RedOpType.AVG: MPI.SUM, RedOpType.PRODUCT: MPI.PROD,
                         RedOpType.MIN: MPI.MIN, RedOpType.MAX: MPI.MAX, RedOpType.BAND: MPI.BAND,
                         RedOpType.BOR: MPI.BOR, RedOpType.BXOR: MPI.BXOR,
                         ("b", RedOpType.SUM): MPI.LOR, ("b", RedOpType.AVG): MPI.LOR,
                         ("b", RedOpType.PRODUCT): MPI.LAND, ("b", RedOpType.MIN): MPI.LAND,
                         ("b", RedOpType.MAX): MPI.LOR, ("b", RedOpType.BAND): MPI.LAND,
                         ("b", RedOpType.BOR): MPI.LOR, ("b", RedOpType.BXOR): MPI.LXOR})
    if arr.dtype.kind == "b":
        return _MPI_OPS[("b", op)]
    return _MPI_OPS[op]


def _reducing(arr, op, size):
    """(buffer MPI reduces, the finishing step or None) for reducing ``arr`` in place with ``op``.

    bfloat16 (which MPI cannot add) is reduced in float32 and rounded back once; a non-contiguous
    array through a contiguous copy written back; AVG is SUM divided by the group size.
    """
    buf = arr
    if _is_bf16(arr):
        buf = arr.astype(np.float32)
    elif not arr.flags.c_contiguous:
        buf = np.ascontiguousarray(arr)
    avg = op is RedOpType.AVG and arr.dtype.kind != "b"
    if buf is arr and not avg:
        return buf, None

    def finish():
        if avg:
            if buf.dtype.kind in "iu":
                q = np.abs(buf) // size
                np.copyto(buf, np.where(buf < 0, -q, q))
            else:
                np.divide(buf, size, out=buf)
        if buf is not arr:
            arr[...] = buf
    return buf, finish


def _done(pg, out, work=None):
    """Leave ``work`` (None for a finished call: the caller makes a finished Work if it wants one)."""
    pg.last_work = work
    return out


def cpu_allreduce(t, op, gid, async_op):
    pg = GROUPS[gid]
    arr = t._data
    if op == 0 and not async_op and arr.dtype.kind in "fiuc" and arr.flags.c_contiguous:
        # the common case (a gradient, a metric): one blocking in-place MPI call
        if pg.nranks > 1:
            pg.seq += 1
            pg.inflight = ("all_reduce", pg.seq, _monotonic())  # what the watchdog reads (group.py)
            try:
                pg.comm.Allreduce(pg.IN_PLACE, arr, pg.SUM)
            finally:
                pg.inflight = None
        pg.last_work = None
        return t
    op = RedOpType(op)
    buf, finish = _reducing(arr, op, pg.nranks)
    if pg.nranks == 1:
        if finish is not None:
            finish()
        return _done(pg, t)
    MPI = _mpi.mpi()
    mop = _mpi_op(op, arr)
    if async_op:
        return _done(pg, t, pg.started("all_reduce", pg.comm.Iallreduce(MPI.IN_PLACE, buf, mop), finish, (t,)))
    pg.blocking("all_reduce", pg.comm.Allreduce, MPI.IN_PLACE, buf, mop)
    if finish is not None:
        finish()
    return _done(pg, t)


def _through_contiguous(arr):
    """(a contiguous buffer for ``arr``, the step writing it back or None)."""
    if arr.flags.c_contiguous:
        return arr, None
    buf = np.ascontiguousarray(arr)

    def finish():
        arr[...] = buf
    return buf, finish


def cpu_broadcast(t, src, gid, async_op):
    pg = GROUPS[gid]
    if pg.nranks == 1:
        return _done(pg, t)
    buf, finish = _through_contiguous(t._data)
    spec = _moving(buf)
    if async_op:
        return _done(pg, t, pg.started("broadcast", pg.comm.Ibcast(spec, root=src), finish, (t,)))
    pg.blocking("broadcast", pg.comm.Bcast, spec, src)
    if finish is not None:
        finish()
    return _done(pg, t)


def cpu_reduce(t, dst, op, gid, async_op):
    pg = GROUPS[gid]
    arr = t._data
    op = RedOpType(op)
    buf, finish = _reducing(arr, op, pg.nranks)
    if pg.nranks == 1:
        if finish is not None:
            finish()
        return _done(pg, t)
    MPI = _mpi.mpi()
    mop = _mpi_op(op, arr)
    mine = pg.rank_ == dst
    send = MPI.IN_PLACE if mine else buf
    recv = buf if mine else None
    step = finish if mine else None
    if async_op:
        return _done(pg, t, pg.started("reduce", pg.comm.Ireduce(send, recv, mop, root=dst), step, (t,)))
    pg.blocking("reduce", pg.comm.Reduce, send, recv, mop, dst)
    if step is not None:
        step()
    return _done(pg, t)


def _flat_input(inp):
    arr = inp._data
    return np.ascontiguousarray(arr).reshape(-1)


def cpu_allgather(out, inp, gid, async_op):
    pg = GROUPS[gid]
    send = _flat_input(inp)
    recv = out._data.reshape(-1)
    if pg.nranks == 1:
        recv[...] = send
        return _done(pg, out)
    if async_op:
        return _done(pg, out, pg.started("all_gather_into_tensor",
                                         pg.comm.Iallgather(_moving(send), _moving(recv)), None, (out,)))
    pg.blocking("all_gather_into_tensor", pg.comm.Allgather, _moving(send), _moving(recv))
    return _done(pg, out)


def cpu_reduce_scatter(out, inp, op, gid, async_op):
    pg = GROUPS[gid]
    op = RedOpType(op)
    send = _flat_input(inp)
    recv_arr = out._data.reshape(-1)
    recv, finish = _reducing(recv_arr, op, pg.nranks)
    if _is_bf16(send):
        send = send.astype(np.float32)
    if pg.nranks == 1:
        recv[...] = send
        if finish is not None:
            finish()
        return _done(pg, out)
    mop = _mpi_op(op, send)
    if async_op:
        return _done(pg, out, pg.started("reduce_scatter_tensor",
                                         pg.comm.Ireduce_scatter_block(send, recv, mop), finish, (out,)))
    pg.blocking("reduce_scatter_tensor", pg.comm.Reduce_scatter_block, send, recv, mop)
    if finish is not None:
        finish()
    return _done(pg, out)


def cpu_gather(out, inp, dst, gid, async_op):
    pg = GROUPS[gid]
    send = _flat_input(inp)
    mine = pg.rank_ == dst
    recv = out._data.reshape(-1) if mine else None
    if pg.nranks == 1:
        recv[...] = send
        return _done(pg, out)
    rspec = _moving(recv) if mine else None
    if async_op:
        return _done(pg, out, pg.started("gather", pg.comm.Igather(_moving(send), rspec, root=dst), None, (out,)))
    pg.blocking("gather", pg.comm.Gather, _moving(send), rspec, dst)
    return _done(pg, out)


def cpu_scatter(out, inp, src, gid, async_op):
    pg = GROUPS[gid]
    mine = pg.rank_ == src
    send = _flat_input(inp) if mine else None
    recv, finish = _through_contiguous(out._data)
    if pg.nranks == 1:
        recv.reshape(-1)[...] = send
        if finish is not None:
            finish()
        return _done(pg, out)
    sspec = _moving(send) if mine else None
    rspec = _moving(recv.reshape(-1))
    if async_op:
        return _done(pg, out, pg.started("scatter", pg.comm.Iscatter(sspec, rspec, root=src), finish, (out,)))
    pg.blocking("scatter", pg.comm.Scatter, sspec, rspec, src)
    if finish is not None:
        finish()
    return _done(pg, out)


def cpu_send(t, dst, tag, gid, async_op):
    pg = GROUPS[gid]
    buf = _flat_input(t)
    if async_op:
        return _done(pg, t, pg.started("send", pg.comm.Isend(_moving(buf), dest=dst, tag=tag), None, (t,)))
    pg.blocking("send", pg.comm.Send, _moving(buf), dst, tag)
    return _done(pg, t)


def cpu_recv(t, src, tag, gid, async_op):
    pg = GROUPS[gid]
    MPI = _mpi.mpi()
    buf, finish = _through_contiguous(t._data)
    source = MPI.ANY_SOURCE if src == -1 else src
    if async_op:
        work = pg.started("recv", pg.comm.Irecv(_moving(buf.reshape(-1)), source=source, tag=tag), finish, (t,))
        if src != -1:
            work._source = pg.global_of(src)
        return _done(pg, t, work)
    status = MPI.Status()
    pg.blocking("recv", pg.comm.Recv, _moving(buf.reshape(-1)), source, tag, status)
    if finish is not None:
        finish()
    work = Work(pg, "recv", pg.seq, None, None, (t,))
    work._source = pg.global_of(status.Get_source())
    pg.last_work = work
    return t


def _bytes(arr):
    return arr.reshape(-1).view(np.uint8)


def alltoall_counts(out, inp, out_splits, in_splits, nranks):
    """(send counts, send displacements, receive counts, receive displacements) in bytes."""
    def layout(t, splits):
        unit = _row(t) * t.element_size()
        splits = list(splits) or [t.shape[0] // nranks] * nranks
        counts = [s * unit for s in splits]
        displs = [sum(counts[:i]) for i in range(nranks)]
        return counts, displs
    return layout(inp, in_splits) + layout(out, out_splits)


def cpu_alltoall(out, inp, out_splits, in_splits, gid, async_op):
    pg = GROUPS[gid]
    send = _bytes(_flat_input(inp))
    recv = _bytes(out._data)
    if pg.nranks == 1:
        recv[...] = send
        return _done(pg, out)
    BYTE = _mpi.mpi().BYTE
    scounts, sdispls, rcounts, rdispls = alltoall_counts(out, inp, out_splits, in_splits, pg.nranks)
    sspec, rspec = [send, scounts, sdispls, BYTE], [recv, rcounts, rdispls, BYTE]
    if async_op:
        return _done(pg, out, pg.started("all_to_all_single", pg.comm.Ialltoallv(sspec, rspec), None, (out,)))
    pg.blocking("all_to_all_single", pg.comm.Alltoallv, sspec, rspec)
    return _done(pg, out)


CPU_KERNELS = {"allreduce_": cpu_allreduce, "broadcast_": cpu_broadcast, "reduce_": cpu_reduce,
               "allgather_into_tensor_": cpu_allgather, "reduce_scatter_tensor_": cpu_reduce_scatter,
               "gather_": cpu_gather, "scatter_": cpu_scatter, "send": cpu_send, "recv_": cpu_recv,
               "alltoall_base_": cpu_alltoall}
