"""DDP on N ranks (each its shard of every global batch) against one process on the whole batch.

Run under mpiexec -n N. Every rank also trains the single-process reference itself (it can make
the whole global batch) and compares parameters after 20 steps. Covers SGD with momentum, Adam,
several buckets, no_sync accumulation, find_unused_parameters, the unused-parameter error,
broadcast buffers, and checkpoints written by rank 0.
"""

import os
import sys
import tempfile


import tensorplug as tp
import tensorplug.distributed as dist
from tensorplug import nn
from tensorplug.nn import functional as F
from tensorplug.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank, size = dist.get_rank(), dist.get_world_size()
GLOBAL = 48
STEPS = 20


def model():
    tp.manual_seed(0)
    return nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 5))


def batch(step):
    g = tp.Generator().manual_seed(1000 + step)
    return tp.randn(GLOBAL, 20, generator=g), tp.randint(0, 5, (GLOBAL,), generator=g)


def shard(t):
    n = GLOBAL // size
    return t[rank * n:(rank + 1) * n]


def max_diff(a, b):
    return max(float((p - q).abs().max()) for p, q in zip(a.parameters(), b.parameters()))


def train(opt_name, accumulate, bucket_cap_mb):
    ref = model()
    local = model()
    if rank == 0:  # a different start on the other ranks: DDP must broadcast rank 0's
        pass
    else:
        with tp.no_grad():
            for p in local.parameters():
                p.add_(1.0)
    ddp = DDP(local, bucket_cap_mb=bucket_cap_mb)
    make = {"sgd": lambda ps: tp.optim.SGD(ps, lr=0.1, momentum=0.9),
            "adam": lambda ps: tp.optim.Adam(ps, lr=1e-2)}[opt_name]
    opt_ref, opt = make(ref.parameters()), make(ddp.parameters())
    for step in range(STEPS):
        x, y = batch(step)
        opt_ref.zero_grad()
        opt.zero_grad()
        if accumulate:
            half = GLOBAL // 2
            for k in range(2):
                F.cross_entropy(ref(x[k * half:(k + 1) * half]), y[k * half:(k + 1) * half]).backward()
            xs, ys = shard(x), shard(y)
            n = len(ys) // 2
            with ddp.no_sync():
                F.cross_entropy(ddp(xs[:n]), ys[:n]).backward()
            F.cross_entropy(ddp(xs[n:]), ys[n:]).backward()
        else:
            F.cross_entropy(ref(x), y).backward()
            F.cross_entropy(ddp(shard(x)), shard(y)).backward()
        opt_ref.step()
        opt.step()
    diff = max_diff(ref, ddp.module)
    if diff > 2e-5:
        print(f"rank {rank}: {opt_name} accumulate={accumulate} cap={bucket_cap_mb}: parameters differ by {diff}",
              file=sys.stderr)
        sys.exit(1)
    return ddp, diff


worst = 0.0
for opt_name in ("sgd", "adam"):
    for accumulate in (False, True):
        ddp, d = train(opt_name, accumulate, bucket_cap_mb=25)
        worst = max(worst, d)
ddp, d = train("sgd", False, bucket_cap_mb=0.002)   # 2 KB buckets: several, launched during backward
worst = max(worst, d)
assert len(ddp.bucket_sizes()) >= 2, ddp.bucket_sizes()

# state_dict keys carry the module. prefix; rank 0 writes, every rank loads the same model
keys = list(ddp.state_dict())
assert keys[0].startswith("module."), keys
path = os.path.join(tempfile.gettempdir(), f"tp-ddp-{os.environ.get('TORCHELASTIC_RUN_ID', 'x')}-{os.getppid()}.pt")
if rank == 0:
    tp.save(ddp.state_dict(), path)
dist.barrier()
fresh = DDP(model())
fresh.load_state_dict(tp.load(path))
gathered = [None] * size
dist.all_gather_object(gathered, [p.detach().numpy().tobytes() for p in fresh.parameters()])
assert all(g == gathered[0] for g in gathered)
assert max_diff(fresh, ddp) == 0.0
dist.barrier()
if rank == 0:
    os.remove(path)


# find_unused_parameters: a branch only some steps use
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x, use_b):
        return self.b(self.a(x)) if use_b else self.a(x)


tp.manual_seed(0)
m = DDP(Branchy(), find_unused_parameters=True)
x = tp.randn(8, 4)
m(x, use_b=False).sum().backward()
assert m.module.b.weight.grad is None and m.module.a.weight.grad is not None
m.zero_grad()
m(x, use_b=True).sum().backward()
assert m.module.b.weight.grad is not None

# without find_unused_parameters an unused parameter fails the next forward with PyTorch's error
tp.manual_seed(0)
m = DDP(Branchy())
m(x, use_b=False).sum().backward()
try:
    m(x, use_b=False)
except RuntimeError as e:
    assert "Expected to have finished reduction in the prior iteration" in str(e), e
    assert "Parameter indices which did not receive grad for rank" in str(e)
else:
    raise AssertionError("an unused parameter went unnoticed")

# buffers are broadcast from rank 0 at each forward
tp.manual_seed(rank)
bn = DDP(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)))
bn(tp.randn(6, 3) + rank).sum().backward()   # each rank's own statistics...
bn(tp.randn(6, 3))                            # ...replaced by rank 0's at the next forward
stats = [None] * size
dist.all_gather_object(stats, bn.module[1].running_mean.numpy().tobytes())
# rank 0's running mean after its second update differs from the others' only by their own second batch
assert bn.module[1].num_batches_tracked.item() == 2

# the same model across ranks is checked at construction
try:
    DDP(nn.Linear(3, 4 + (rank == size - 1)))
except RuntimeError as e:
    assert "DDP expects same model across all ranks" in str(e), e
    bad = True
else:
    bad = False
assert bad == (size > 1)



# the buckets live in the node's shared memory (tensorplug_distributed.shm) unless TENSORPLUG_DISTRIBUTED_SHM=0;
# that path and MPI's give the same gradients, the same bits on every rank
def bucket_grads(shared, dtype):
    os.environ["TENSORPLUG_DISTRIBUTED_SHM"] = "1" if shared else "0"
    tp.manual_seed(0)
    m = DDP(nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5)).to(dtype), bucket_cap_mb=0.0005)
    assert len(m._buckets) >= 2 and all((b.node is not None) == (shared and size > 1) for b in m._buckets), \
        [(b.node, sum(b.sizes)) for b in m._buckets]
    x, y = batch(0)
    F.cross_entropy(m(shard(x).to(dtype)), shard(y)).backward()
    return [p.grad.numpy().copy() for p in m.parameters()]


for dtype in (tp.float32, tp.float64):
    g_shm, g_mpi = bucket_grads(True, dtype), bucket_grads(False, dtype)
    for a, b in zip(g_shm, g_mpi):
        # two ranks: a + b either way; more: each its own summation order
        assert (a == b).all() if size <= 2 else abs(a - b).max() <= 1e-6 * max(1.0, abs(b).max()), (dtype, size)
    everyone = [None] * size
    dist.all_gather_object(everyone, [g.tobytes() for g in g_shm])
    assert all(e == everyone[0] for e in everyone)
os.environ.pop("TENSORPLUG_DISTRIBUTED_SHM")
# a float16 model's buckets stay in private memory and go through MPI
half = DDP(nn.Linear(4, 4).to(tp.float16))
assert all(b.node is None for b in half._buckets)
# so do buckets that would not fit in /dev/shm (a container's may be small): every rank decides alike


class Full:
    f_bavail, f_frsize = 0, 4096


statvfs = os.statvfs
os.statvfs = lambda path: Full if rank == size - 1 else statvfs(path)
crowded = DDP(nn.Linear(4, 4))
os.statvfs = statvfs
assert all(b.node is None for b in crowded._buckets) or size == 1
F.mse_loss(crowded(tp.ones(2, 4)), tp.zeros(2, 4)).backward()

dist.destroy_process_group()
if rank == 0:
    print(f"ddp ok on {size} ranks: parameters within {worst:.2e} of single-process training")
