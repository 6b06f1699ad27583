"""all_to_all_single / all_to_all, reduce_scatter, batch_isend_irecv and send/recv_object_list against
numpy references; run under mpiexec -n N (N = 1 included). Prints "alltoall ok: <checks> checks on <N>
ranks" on rank 0.

Rank r's values are derived from r, so every rank can compute what every rank sends.
"""

import ml_dtypes
import numpy as np

import tensorplug as tp
import tensorplug.distributed as dist

dist.init_process_group("mpi")
rank, size = dist.get_rank(), dist.get_world_size()
checks = 0


def check(got, want, what):
    global checks
    got = got.numpy() if isinstance(got, tp.Tensor) else got
    if not (np.shape(got) == np.shape(want) and np.array_equal(np.asarray(got).astype(np.float64),
                                                               np.asarray(want).astype(np.float64))):
        raise AssertionError(f"rank {rank}: {what}: got {got!r}, want {want!r}")
    checks += 1


def raises(exc, text, fn, what):
    global checks
    try:
        fn()
    except exc as e:
        if text not in str(e):
            raise AssertionError(f"rank {rank}: {what}: {type(e).__name__}: {e}; wanted {text!r}")
        checks += 1
        return
    raise AssertionError(f"rank {rank}: {what}: no {exc.__name__}")


def rows(r, n, width=3, dtype=np.float32):
    """Rank r's input: n rows of ``width``, row i holding 100 r + 10 i + column."""
    return (100 * r + 10 * np.arange(n)[:, None] + np.arange(width)[None, :]).astype(dtype)


# -- all_to_all_single, equal splits: piece j of rank r goes to rank j ---------------------------------------
for dtype in (np.float32, np.int64, np.float16, ml_dtypes.bfloat16, np.bool_):
    mine = rows(rank, 2 * size) if dtype is not np.bool_ else (rows(rank, 2 * size) % 2 == 0)
    mine = mine.astype(dtype)
    out = tp.empty(mine.shape, dtype=tp.from_numpy(mine).dtype)
    dist.all_to_all_single(out, tp.from_numpy(mine))
    want = np.concatenate([(rows(j, 2 * size) if dtype is not np.bool_ else rows(j, 2 * size) % 2 == 0)
                           .astype(dtype)[2 * rank:2 * rank + 2] for j in range(size)])
    check(out, want, f"all_to_all_single {np.dtype(dtype).name}")

# -- uneven splits: rank r sends j + 1 rows to rank j, so rank j receives j + 1 rows from everyone ----------
in_splits = [j + 1 for j in range(size)]
mine = rows(rank, sum(in_splits))
out = tp.empty((size * (rank + 1), 3))
work = dist.all_to_all_single(out, tp.from_numpy(mine), [rank + 1] * size, in_splits, async_op=True)
work.wait()
offsets = np.cumsum([0] + in_splits)
want = np.concatenate([rows(j, sum(in_splits))[offsets[rank]:offsets[rank + 1]] for j in range(size)])
check(out, want, "all_to_all_single, uneven splits, async")

# -- all_to_all on lists of tensors of different shapes ---------------------------------------------------------
inputs = [tp.from_numpy(rows(rank, j + 1, width=2)) for j in range(size)]   # to rank j: j + 1 rows
outputs = [tp.empty(rank + 1, 2) for _ in range(size)]                        # from rank j: rank + 1 rows
dist.all_to_all(outputs, inputs)
for j in range(size):
    check(outputs[j], rows(j, rank + 1, width=2), f"all_to_all from rank {j}")

# -- reduce_scatter (a list of world_size tensors) -----------------------------------------------------------
pieces = [tp.from_numpy(rows(rank, 2) + j) for j in range(size)]
out = tp.empty(2, 3)
dist.reduce_scatter(out, pieces, op=dist.ReduceOp.SUM)
check(out, sum(rows(r, 2) + rank for r in range(size)), "reduce_scatter")

# -- batch_isend_irecv: a ring --------------------------------------------------------------------------------
if size > 1:
    send = tp.from_numpy(rows(rank, 2))
    recv = tp.empty(2, 3)
    ops = [dist.P2POp(dist.isend, send, (rank + 1) % size), dist.P2POp(dist.irecv, recv, (rank - 1) % size)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    check(recv, rows((rank - 1) % size, 2), "batch_isend_irecv ring")

    # -- send_object_list / recv_object_list: rank 0 sends each rank its own list --------------------------------
    if rank == 0:
        for r in range(1, size):
            dist.send_object_list([{"to": r}, "hello", r * 1.5], dst=r)
    else:
        got = [None, None, None]
        sender = dist.recv_object_list(got, src=0)
        check(np.array([sender]), np.array([0]), "recv_object_list sender")
        if got != [{"to": rank}, "hello", rank * 1.5]:
            raise AssertionError(f"rank {rank}: recv_object_list got {got!r}")
        checks += 1

# -- subgroups -------------------------------------------------------------------------------------------------
cur, subgroups = dist.new_subgroups(group_size=1)
check(np.array([len(subgroups), dist.get_rank(cur), dist.get_world_size(cur)]), np.array([size, 0, 1]),
      "new_subgroups(1)")
own = tp.full((2,), float(rank))
dist.all_reduce(own, group=cur)
check(own, np.full(2, rank), "all_reduce in a one-rank subgroup")
halves = [list(range(0, size, 2)), list(range(1, size, 2))] if size > 1 else [[0]]
cur, subgroups = dist.new_subgroups_by_enumeration(halves)
mates = tp.ones(1)
dist.all_reduce(mates, group=cur)
check(mates, [len(halves[rank % 2])], "new_subgroups_by_enumeration: even and odd ranks")
raises(ValueError, f"The arg 'group_size' ({size + 1}) must not exceed the world size ({size})",
       lambda: dist.new_subgroups(group_size=size + 1), "subgroup larger than the world")
if size == 3:
    raises(ValueError, "The world size (3) must be divisible by 'group_size=2'",
           lambda: dist.new_subgroups(group_size=2), "indivisible subgroups")
raises(ValueError, "has appeared in both subgroup", lambda: dist.new_subgroups_by_enumeration([[0], [0]]),
       "overlapping subgroups")
dist.monitored_barrier()   # everyone arrives: it returns
check(np.array([dist.get_pg_count()]), np.array([3]), "get_pg_count")  # the default and two subgroups it is in

# -- errors, with PyTorch's texts -----------------------------------------------------------------------------
x = tp.ones(2 * size + 1, 3)
if size > 1:
    raises(RuntimeError, "Tensor's dim 0 does not divide equally across group size",
           lambda: dist.all_to_all_single(tp.empty(2 * size + 1, 3), x), "uneven dim 0")
raises(RuntimeError, "Number of tensor splits not equal to group size",
       lambda: dist.all_to_all_single(tp.empty(2 * size + 1, 3), x, [1] * (size + 1), [1] * (size + 1)),
       "split count")
raises(RuntimeError, "Split sizes doesn't match total dim 0 size",
       lambda: dist.all_to_all_single(tp.empty(size, 3), x, [1] * size, [1] * size), "split sum")
raises(RuntimeError, "Tensors are not equal in size or data type",
       lambda: dist.all_to_all_single(tp.empty(size, 3), tp.ones(2 * size, 3)), "sizes")
raises(RuntimeError, "must have the same dtype",
       lambda: dist.all_to_all_single(tp.empty(size, 3, dtype=tp.float64), tp.ones(size, 3)), "dtypes")
raises(RuntimeError, "Tensors must be contiguous",
       lambda: dist.all_to_all_single(tp.empty(3, 2 * size).t(), tp.ones(2 * size, 3)), "non-contiguous output")
raises(RuntimeError, "Number of input tensors are not equal to group size",
       lambda: dist.all_to_all([tp.empty(1)] * size, [tp.ones(1)] * (size + 1)), "all_to_all list length")
raises(ValueError, "Expected ``op`` to be of type", lambda: dist.P2POp(dist.send, tp.ones(1), 0), "P2POp op")
raises(ValueError, "Each op is expected to to be of type", lambda: dist.batch_isend_irecv([1]), "batch list")
raises(ValueError, "destination rank should not be the same",
       lambda: dist.send_object_list([1], dst=rank), "send_object_list to itself")

dist.destroy_process_group()
if rank == 0:
    print(f"alltoall ok: {checks} checks on {size} ranks")
