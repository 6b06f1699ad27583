"""The API on one process (MPI singleton, or mpiexec -n 1): errors, work handles, the profiler.

Prints "api ok: <checks> checks" at the end; any failed expectation raises.
"""

import datetime
import os

import tensorplug as tp
import tensorplug.distributed as dist

checks = 0


def raises(exc, text, fn, *args, **kwargs):
    global checks
    try:
        fn(*args, **kwargs)
    except exc as e:
        assert text in str(e), f"{fn.__name__}: {e!r} lacks {text!r}"
        checks += 1
        return
    raise AssertionError(f"{fn.__name__}{args} did not raise {exc.__name__}")


NO_GROUP = "Default process group has not been initialized, please make sure to call init_process_group."
assert dist.is_available() and not dist.is_initialized()
raises(ValueError, NO_GROUP, dist.all_reduce, tp.ones(2))
raises(ValueError, NO_GROUP, dist.get_rank)
raises(ValueError, NO_GROUP, dist.barrier)
raises(ValueError, "disagrees with MPI", dist.init_process_group, "mpi", world_size=2)
os.environ["WORLD_SIZE"] = "4"
raises(ValueError, "WORLD_SIZE=4 in the environment disagrees with MPI", dist.init_process_group)
del os.environ["WORLD_SIZE"]
raises(ValueError, "Invalid backend: 'nope'", dist.init_process_group, "nope")
assert not dist.is_initialized()

dist.init_process_group(backend="gloo", timeout=datetime.timedelta(seconds=30))   # gloo is served by MPI
raises(ValueError, "trying to initialize the default process group twice!", dist.init_process_group)
assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
assert dist.get_backend() == "gloo" and dist.group.WORLD is dist.GroupMember.WORLD
assert str(dist.ReduceOp.SUM) == "RedOpType.SUM"
raises(TypeError, "Expected parameter `tensor` of type tensorplug.Tensor", dist.all_reduce, [1.0, 2.0])
raises(ValueError, "does not support RedOpType.MAX on complex tensors", dist.all_reduce,
       tp.ones(2, dtype=tp.complex64), op=dist.ReduceOp.MAX)
raises(RuntimeError, "ProcessGroupMPI::broadcast: invalid root rank: 3", dist.broadcast, tp.ones(2), src=3)
raises(ValueError, "Must specify global_rank or group_rank", dist.broadcast, tp.ones(2))
raises(RuntimeError, "output tensor size must be equal to world_size times input tensor size",
       dist.all_gather_into_tensor, tp.empty(3), tp.ones(2))
raises(RuntimeError, "invalid tensor type", dist.all_gather_into_tensor, tp.empty(2, dtype=tp.float64), tp.ones(2))
raises(RuntimeError, "Tensors must be contiguous", dist.all_gather_into_tensor, tp.empty(2, 2).t(), tp.ones(4))
raises(RuntimeError, "input tensor size must be equal to world_size times output tensor size",
       dist.reduce_scatter_tensor, tp.empty(3), tp.ones(2))
raises(RuntimeError, "invalid output tensor list at index 0 (expected length 1, got 2)", dist.all_gather,
       [tp.empty(2), tp.empty(2)], tp.ones(2))
raises(RuntimeError, "invalid tensor size at index 0 (expected (2,), got (3,))", dist.all_gather,
       [tp.empty(3)], tp.ones(2))
raises(ValueError, "Argument ``gather_list`` must be specified on destination rank.", dist.gather, tp.ones(2),
       None, dst=0)
raises(ValueError, "Argument ``scatter_list`` must be specified on source rank.", dist.scatter, tp.ones(2), None,
       src=0)
raises(ValueError, "destination rank should not be the same as the rank of the current process", dist.send,
       tp.ones(2), dst=0)
raises(RuntimeError, "needs an integer or bool tensor", dist.all_reduce, tp.ones(2), op=dist.ReduceOp.BAND)

# work handles
x = tp.tensor([1.0, 2.0])
w = dist.all_reduce(x, async_op=True)
assert isinstance(w, dist.Work) and w.wait() is True and w.is_completed() and w.is_success()
assert w.result()[0] is x and w.get_future().wait()[0] is x
assert dist.all_reduce(x) is None
bw = dist.barrier(async_op=True)
assert bw.wait()

# groups
g = dist.new_group([0])
assert dist.get_world_size(g) == 1 and dist.get_process_group_ranks(g) == [0] and dist.get_global_rank(g, 0) == 0
raises(ValueError, "Invalid rank 5", dist.new_group, [0, 5])

# the collectives are dispatcher operators: the profiler sees them
with tp.profiler.profile() as prof:
    dist.all_reduce(tp.ones(4))
    dist.broadcast(tp.ones(4), src=0)
names = {e.key for e in prof.key_averages()}
assert {"c10d::allreduce_", "c10d::broadcast_"} <= names, names
checks += 1

# autograd lets collectives through (DDP runs them on gradients)
p = tp.ones(3, requires_grad=True)
with tp.no_grad():
    dist.all_reduce(p)
checks += 1

dist.destroy_process_group()
assert not dist.is_initialized()
raises(ValueError, NO_GROUP, dist.get_world_size)
dist.init_process_group()      # again, after destroy
assert dist.get_backend() == "mpi"
dist.destroy_process_group()
print(f"api ok: {checks} checks")
