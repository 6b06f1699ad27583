"""Every collective, dtype and ReduceOp against numpy references; run under mpiexec -n N.

Each rank r holds values derived from r, so every rank can compute every rank's inputs and the
expected result itself. Prints "collectives ok: <checks> checks on <N> ranks" on rank 0.
"""

import sys

import ml_dtypes
import numpy as np

import tensorplug as tp
import tensorplug.distributed as dist

dist.init_process_group("mpi")
rank, size = dist.get_rank(), dist.get_world_size()
checks = 0

DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32,
          "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "uint8": np.uint8, "bool": np.bool_}
OPS = {"SUM": dist.ReduceOp.SUM, "AVG": dist.ReduceOp.AVG, "PRODUCT": dist.ReduceOp.PRODUCT,
       "MIN": dist.ReduceOp.MIN, "MAX": dist.ReduceOp.MAX}


def values(r, dtype, n=6):
    """Rank r's input: small exact values, so float16/bfloat16 sums are exact too."""
    base = (np.arange(n) % 3 + r + 1).astype(np.float64)
    if dtype == np.bool_:
        return (np.arange(n) + r) % 2 == 0
    if dtype == np.uint8:
        return (base % 4).astype(np.uint8)
    return base.astype(dtype)


def reference(name, dtype):
    xs = [values(r, dtype).astype(np.float64) if dtype != np.bool_ else values(r, dtype) for r in range(size)]
    if dtype == np.bool_:
        if name in ("SUM", "AVG", "MAX"):
            return np.logical_or.reduce(xs)
        return np.logical_and.reduce(xs)
    stack = np.stack(xs)
    out = {"SUM": stack.sum(0), "PRODUCT": stack.prod(0), "MIN": stack.min(0), "MAX": stack.max(0),
           "AVG": stack.sum(0) / size}[name]
    if name == "AVG" and np.dtype(dtype).kind in "iu":
        out = np.trunc(out)
    with np.errstate(over="ignore"):
        return out.astype(dtype)


def same(got, want, what):
    global checks
    checks += 1
    got = np.asarray(got)
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(
            got.astype(np.float64) if got.dtype.kind != "b" else got,
            want.astype(np.float64) if want.dtype.kind != "b" else want):
        print(f"rank {rank}: {what}: got {got!r}, want {want!r}", file=sys.stderr)
        sys.exit(1)


def tensor(a):
    return tp.from_numpy(np.array(a))


for dname, dt in DTYPES.items():
    for oname, op in OPS.items():
        if dt in (np.bool_,) and oname == "PRODUCT":
            continue
        for async_op in (False, True):
            x = tensor(values(rank, dt))
            w = dist.all_reduce(x, op=op, async_op=async_op)
            if async_op:
                assert w.wait() is True and w.is_completed()
            same(x.numpy(), reference(oname, dt), f"all_reduce {dname} {oname} async={async_op}")
        x = tensor(values(rank, dt))
        dist.reduce(x, dst=size - 1, op=op)
        want = reference(oname, dt) if rank == size - 1 else values(rank, dt)
        same(x.numpy(), want, f"reduce {dname} {oname}")
        if dt != np.bool_:
            inp = tensor(np.concatenate([values(rank, dt) for _ in range(size)]))
            out = tp.empty(6, dtype=inp.dtype)
            dist.reduce_scatter_tensor(out, inp, op=op)
            same(out.numpy(), reference(oname, dt), f"reduce_scatter_tensor {dname} {oname}")
    # moving collectives: broadcast, all_gather(_into_tensor), gather, scatter, reduce_scatter
    for root in range(size):
        x = tensor(values(rank, dt))
        dist.broadcast(x, src=root)
        same(x.numpy(), values(root, dt), f"broadcast {dname} from {root}")
    out = tp.empty(size * 6, dtype=x.dtype)
    dist.all_gather_into_tensor(out, tensor(values(rank, dt)))
    same(out.numpy(), np.concatenate([values(r, dt) for r in range(size)]), f"all_gather_into_tensor {dname}")
    outs = [tp.empty(2, 3, dtype=x.dtype) for _ in range(size)]
    w = dist.all_gather(outs, tensor(values(rank, dt)).view(2, 3), async_op=True)
    w.wait()
    for r in range(size):
        same(outs[r].numpy(), values(r, dt).reshape(2, 3), f"all_gather {dname} [{r}]")
    glist = [tp.empty(6, dtype=x.dtype) for _ in range(size)] if rank == 0 else None
    dist.gather(tensor(values(rank, dt)), glist, dst=0)
    if rank == 0:
        for r in range(size):
            same(glist[r].numpy(), values(r, dt), f"gather {dname} [{r}]")
    got = tp.empty(6, dtype=x.dtype)
    slist = [tensor(values(r, dt)) * 1 if dt != np.bool_ else tensor(values(r, dt)) for r in range(size)]
    dist.scatter(got, slist if rank == 0 else None, src=0)
    same(got.numpy(), values(rank, dt), f"scatter {dname}")

# non-contiguous tensors are reduced through a copy and written back
x = tp.arange(12.0).view(3, 4).t()
dist.all_reduce(x)
same(x.numpy(), (np.arange(12.0).reshape(3, 4).T * size).astype(np.float32), "all_reduce non-contiguous")

# point to point: a ring
right, left = (rank + 1) % size, (rank - 1) % size
if size > 1:
    buf = tp.empty(5)
    if rank % 2 == 0:
        dist.send(tp.full((5,), float(rank)), dst=right)
        src = dist.recv(buf, src=left)
    else:
        src = dist.recv(buf, src=left)
        dist.send(tp.full((5,), float(rank)), dst=right)
    same(buf.numpy(), np.full(5, left, np.float32), "send/recv ring")
    assert src == left
    reqs = [dist.isend(tp.full((3,), float(rank)), dst=right), dist.irecv(buf2 := tp.empty(3))]
    for r in reqs:
        r.wait()
    same(buf2.numpy(), np.full(3, left, np.float32), "isend/irecv ring")
    assert reqs[1].source_rank() == left, reqs[1].source_rank()

# groups: ranks {0, size-1}; the others are not members
g = dist.new_group([0, size - 1])
if rank in (0, size - 1):
    x = tp.tensor([float(rank)])
    dist.all_reduce(x, group=g)
    same(x.numpy(), np.array([float(size - 1)], np.float32), "all_reduce in a new group")
    assert dist.get_world_size(g) == (2 if size > 1 else 1) and dist.get_rank(g) == (0 if rank == 0 else 1)
    y = tp.tensor([float(rank)])
    dist.broadcast(y, src=size - 1, group=g)
    same(y.numpy(), np.array([float(size - 1)], np.float32), "broadcast from a global rank in a group")
else:
    assert g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1

# objects
objs = [None] * size
dist.all_gather_object(objs, {"rank": rank, "name": f"r{rank}"})
assert objs == [{"rank": r, "name": f"r{r}"} for r in range(size)], objs
lst = [rank, "x"] if rank == 0 else [None, None]
dist.broadcast_object_list(lst, src=0)
assert lst == [0, "x"], lst
checks += 2

# bad input: one error from the shared checks, on every rank
try:
    dist.all_gather_into_tensor(tp.empty(size * 6 + 1), tp.empty(6))
except RuntimeError as e:
    assert "output tensor size must be equal to world_size times input tensor size" in str(e), e
    checks += 1
else:
    raise AssertionError("mismatched sizes passed")

dist.barrier()
dist.destroy_process_group()
if rank == 0:
    print(f"collectives ok: {checks} checks on {size} ranks")
