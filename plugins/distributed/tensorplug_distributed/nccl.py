"""NCCL kernels for cuda tensors, through ``cupy.cuda.nccl``, on the current stream.

The group's NCCL communicator is made on the first cuda collective: rank 0 draws the unique id and
the group's MPI communicator broadcasts it. NCCL runs one rank per GPU (on one GPU: a one-rank
group). The calls are enqueued on tensorplug's current cuda stream, so the returned work is
complete in stream order, as PyTorch's NCCL work is once ``wait()`` returns. NCCL has no timeout
here (a stuck NCCL kernel is not aborted); the host-side watchdog covers the MPI bootstrap only.

tensorplug-cuda's simulated devices (``TENSORPLUG_CUDA_SIMULATE``) hold numpy arrays: their
collectives take the MPI path of the CPU kernels, so the dispatch to the CUDA key is tested on
machines without a GPU.
"""

from __future__ import annotations

import numpy as np

import tensorplug

from . import kernels
from .group import GROUPS, RedOpType, Work

_NCCL = [None]


def _nccl():
    if _NCCL[0] is None:
        try:
            from cupy.cuda import nccl  # lazy: cupy only when a cuda tensor is communicated
        except ImportError as e:
            raise RuntimeError(f"tensorplug.distributed: NCCL for cuda tensors needs cupy with NCCL "
                               f"(pip install 'tensorplug-distributed[nccl13]' beside tensorplug-cuda[cuda13]): "
                               f"{e}") from e
        _NCCL[0] = nccl
    return _NCCL[0]


def _dtype(nccl, arr):
    name = str(arr.dtype)
    table = {"float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64", "float16": "NCCL_FLOAT16",
             "bfloat16": "NCCL_BFLOAT16", "int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
             "int64": "NCCL_INT64", "bool": "NCCL_UINT8"}
    attr = table.get(name)
    if attr is None or not hasattr(nccl, attr):
        raise RuntimeError(f"NCCL cannot carry {name} tensors")
    return getattr(nccl, attr)


def _op(nccl, op, arr):
    op = RedOpType(op)
    if str(arr.dtype) == "bool" and op in (RedOpType.SUM, RedOpType.AVG, RedOpType.BOR):
        return nccl.NCCL_MAX
    table = {RedOpType.SUM: "NCCL_SUM", RedOpType.PRODUCT: "NCCL_PROD", RedOpType.MIN: "NCCL_MIN",
             RedOpType.MAX: "NCCL_MAX", RedOpType.AVG: "NCCL_AVG"}
    if op not in table or not hasattr(nccl, table[op]):
        raise RuntimeError(f"NCCL has no reduction {op}")
    return getattr(nccl, table[op])


def communicator(pg):
    """The group's NCCL communicator, made (collectively, over MPI) on first use."""
    if pg._nccl is None:
        nccl = _nccl()
        uid = nccl.get_unique_id() if pg.rank_ == 0 else None
        uid = pg.comm.bcast(uid, root=0)
        pg._nccl = nccl.NcclCommunicator(pg.nranks, uid, pg.rank_)
    return pg._nccl


def _stream(t):
    return tensorplug.cuda.current_stream(t.device).cuda_stream


def _simulated(t):
    return isinstance(t._data, np.ndarray)


def _count(arr):
    return int(arr.size)


def cuda_allreduce(t, op, gid, async_op):
    if _simulated(t):
        return kernels.cpu_allreduce(t, op, gid, async_op)
    pg = GROUPS[gid]
    nccl, arr = _nccl(), t._data
    communicator(pg).allReduce(arr.data.ptr, arr.data.ptr, _count(arr), _dtype(nccl, arr), _op(nccl, op, arr),
                               _stream(t))
    return kernels._done(pg, t)


def cuda_broadcast(t, src, gid, async_op):
    if _simulated(t):
        return kernels.cpu_broadcast(t, src, gid, async_op)
    pg = GROUPS[gid]
    nccl, arr = _nccl(), t._data
    communicator(pg).bcast(arr.data.ptr, _count(arr), _dtype(nccl, arr), src, _stream(t))
    return kernels._done(pg, t)


def cuda_reduce(t, dst, op, gid, async_op):
    if _simulated(t):
        return kernels.cpu_reduce(t, dst, op, gid, async_op)
    pg = GROUPS[gid]
    nccl, arr = _nccl(), t._data
    communicator(pg).reduce(arr.data.ptr, arr.data.ptr, _count(arr), _dtype(nccl, arr), _op(nccl, op, arr), dst,
                            _stream(t))
    return kernels._done(pg, t)


def cuda_allgather(out, inp, gid, async_op):
    if _simulated(out):
        return kernels.cpu_allgather(out, inp, gid, async_op)
    pg = GROUPS[gid]
    nccl = _nccl()
    src = inp.contiguous()._data
    communicator(pg).allGather(src.data.ptr, out._data.data.ptr, _count(src), _dtype(nccl, src), _stream(out))
    return kernels._done(pg, out)


def cuda_reduce_scatter(out, inp, op, gid, async_op):
    if _simulated(out):
        return kernels.cpu_reduce_scatter(out, inp, op, gid, async_op)
    pg = GROUPS[gid]
    nccl = _nccl()
    src = inp.contiguous()._data
    dst = out._data
    communicator(pg).reduceScatter(src.data.ptr, dst.data.ptr, _count(dst), _dtype(nccl, dst),
                                   _op(nccl, op, dst), _stream(out))
    return kernels._done(pg, out)


def _p2p_group(calls):
    nccl = _nccl()
    nccl.groupStart()
    try:
        for call in calls:
            call()
    finally:
        nccl.groupEnd()


def cuda_gather(out, inp, dst, gid, async_op):
    if _simulated(inp):
        return kernels.cpu_gather(out, inp, dst, gid, async_op)
    pg = GROUPS[gid]
    nccl, comm = _nccl(), communicator(pg)
    src = inp.contiguous()._data
    n, dt, stream = _count(src), _dtype(nccl, src), _stream(inp)
    if pg.rank_ == dst:
        flat = out._data.reshape(-1)
        calls = [lambda r=r: comm.recv(flat[r * n:(r + 1) * n].data.ptr, n, dt, r, stream)
                 for r in range(pg.nranks) if r != dst]
        flat[dst * n:(dst + 1) * n] = src.reshape(-1)
        _p2p_group(calls)
    else:
        _p2p_group([lambda: comm.send(src.data.ptr, n, dt, dst, stream)])
    return kernels._done(pg, out)


def cuda_scatter(out, inp, src, gid, async_op):
    if _simulated(out):
        return kernels.cpu_scatter(out, inp, src, gid, async_op)
    pg = GROUPS[gid]
    nccl, comm = _nccl(), communicator(pg)
    dst = out._data
    n, dt, stream = _count(dst), _dtype(nccl, dst), _stream(out)
    if pg.rank_ == src:
        flat = inp.contiguous()._data.reshape(-1)
        calls = [lambda r=r: comm.send(flat[r * n:(r + 1) * n].data.ptr, n, dt, r, stream)
                 for r in range(pg.nranks) if r != src]
        dst.reshape(-1)[...] = flat[src * n:(src + 1) * n]
        _p2p_group(calls)
    else:
        _p2p_group([lambda: comm.recv(dst.data.ptr, n, dt, src, stream)])
    return kernels._done(pg, out)


def cuda_send(t, dst, tag, gid, async_op):
    if _simulated(t):
        return kernels.cpu_send(t, dst, tag, gid, async_op)
    pg = GROUPS[gid]
    nccl = _nccl()
    arr = t.contiguous()._data
    communicator(pg).send(arr.data.ptr, _count(arr), _dtype(nccl, arr), dst, _stream(t))
    return kernels._done(pg, t)


def cuda_recv(t, src, tag, gid, async_op):
    if _simulated(t):
        return kernels.cpu_recv(t, src, tag, gid, async_op)
    pg = GROUPS[gid]
    if src == -1:
        raise RuntimeError("recv from any source is not supported for cuda tensors (NCCL needs the peer rank)")
    nccl = _nccl()
    arr = t._data
    communicator(pg).recv(arr.data.ptr, _count(arr), _dtype(nccl, arr), src, _stream(t))
    work = Work(pg, "recv", pg.seq, None, None, (t,))
    work._source = pg.global_of(src)
    pg.last_work = work
    return t


def cuda_alltoall(out, inp, out_splits, in_splits, gid, async_op):
    if _simulated(out):
        return kernels.cpu_alltoall(out, inp, out_splits, in_splits, gid, async_op)
    pg = GROUPS[gid]
    nccl, comm = _nccl(), communicator(pg)
    send = inp.contiguous()._data.reshape(-1).view("uint8")
    recv = out._data.reshape(-1).view("uint8")
    scounts, sdispls, rcounts, rdispls = kernels.alltoall_counts(out, inp, out_splits, in_splits, pg.nranks)
    stream, u8 = _stream(out), nccl.NCCL_UINT8
    calls = []
    for r in range(pg.nranks):
        if scounts[r]:
            calls.append(lambda r=r: comm.send(send[sdispls[r]:].data.ptr, scounts[r], u8, r, stream))
        if rcounts[r]:
            calls.append(lambda r=r: comm.recv(recv[rdispls[r]:].data.ptr, rcounts[r], u8, r, stream))
    _p2p_group(calls)
    return kernels._done(pg, out)


KERNELS = {"allreduce_": cuda_allreduce, "broadcast_": cuda_broadcast, "reduce_": cuda_reduce,
           "allgather_into_tensor_": cuda_allgather, "reduce_scatter_tensor_": cuda_reduce_scatter,
           "gather_": cuda_gather, "scatter_": cuda_scatter, "send": cuda_send, "recv_": cuda_recv,
           "alltoall_base_": cuda_alltoall}
