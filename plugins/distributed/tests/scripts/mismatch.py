"""Run under mpiexec -n 2 with TORCH_DISTRIBUTED_DEBUG=DETAIL: rank 1 passes a float64 tensor to the
all_reduce where rank 0 passes float32; every rank raises PyTorch's mismatch error, before MPI runs."""

import tensorplug as tp
import tensorplug.distributed as dist

dist.init_process_group()
rank = dist.get_rank()
x = tp.ones(4, dtype=tp.float32 if rank == 0 else tp.float64)
try:
    dist.all_reduce(x)
except RuntimeError as e:
    assert "Detected mismatch between collectives on ranks" in str(e), e
    assert "TensorDtypes=['float32']" in str(e) and "TensorDtypes=['float64']" in str(e), e
    print(f"rank {rank} caught: {e}", flush=True)
else:
    raise AssertionError("the mismatch went through")
y = tp.ones(3)
dist.all_reduce(y)        # the group still works: nothing was sent
assert y.tolist() == [2.0, 2.0, 2.0]
dist.destroy_process_group()
