"""Collectives and DDP on cuda tensors; run under mpiexec -n N with TENSORPLUG_CUDA_SIMULATE=1 (the
simulated device: the c10d operators dispatch to their CUDA kernels, which take the MPI path for
its numpy arrays) or on a GPU machine (NCCL, one rank per GPU)."""

import numpy as np

import tensorplug as tp
import tensorplug.distributed as dist
from tensorplug import nn
import tensorplug_distributed.nccl as nccl_kernels

dist.init_process_group("nccl")
rank, size = dist.get_rank(), dist.get_world_size()
dev = "cuda"
calls = []
_simulated = nccl_kernels._simulated
nccl_kernels._simulated = lambda t: calls.append(t.device.type) or _simulated(t)   # the CUDA kernels ask it
x = tp.full((4,), float(rank + 1), device=dev)
dist.all_reduce(x)
assert x.device.type == "cuda" and calls == ["cuda"], calls   # served by the CUDA key's kernel
assert np.array_equal(x.cpu().numpy(), np.full(4, size * (size + 1) / 2, np.float32)), x
y = tp.full((3,), float(rank), device=dev)
dist.broadcast(y, src=size - 1)
assert np.array_equal(y.cpu().numpy(), np.full(3, size - 1, np.float32))
out = tp.empty(size * 2, device=dev)
dist.all_gather_into_tensor(out, tp.full((2,), float(rank), device=dev))
assert np.array_equal(out.cpu().numpy(), np.repeat(np.arange(size, dtype=np.float32), 2))
calls.clear()
a2a = tp.empty(size * 2, device=dev)
dist.all_to_all_single(a2a, tp.arange(size * 2, device=dev, dtype=tp.float32) + 10 * rank)
assert calls == ["cuda"], calls
assert np.array_equal(a2a.cpu().numpy(), np.array([10 * j + 2 * rank + i for j in range(size) for i in range(2)],
                                                   np.float32)), a2a
with tp.profiler.profile() as prof:
    dist.all_reduce(tp.ones(2, device=dev))
assert "c10d::allreduce_" in {e.key for e in prof.key_averages()}
tp.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Linear(5, 3).to(dev))
tp.manual_seed(rank)
model(tp.randn(4, 5, device=dev)).sum().backward()
grads = [None] * size
dist.all_gather_object(grads, model.module.weight.grad.cpu().numpy().tobytes())
assert all(g == grads[0] for g in grads)   # every rank holds the same averaged gradient
dist.destroy_process_group()
if rank == 0:
    print(f"cuda collectives ok on {size} ranks")
