"""DDP's join() on uneven inputs; run under mpiexec -n N (N >= 2): rank r trains on 3 + 2r batches.

Every rank also trains the reference itself: at step k, the gradient is the sum of the mean-loss
gradients of the ranks still training, divided by the world size (or, with
divide_by_initial_world_size=False, by their number). After join() every rank holds the same
parameters, those of the reference. Also: throw_on_early_termination raises on every rank.
"""

import tensorplug as tp
import tensorplug.distributed as dist
from tensorplug import nn
from tensorplug.nn import functional as F
from tensorplug.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
rank, size = dist.get_rank(), dist.get_world_size()
BATCHES = [3 + 2 * r for r in range(size)]


def model():
    tp.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))


def data(r, k):
    g = tp.Generator().manual_seed(100 * r + k)
    return tp.randn(4, 6, generator=g), tp.randint(0, 3, (4,), generator=g)


for divide_by_initial in (True, False):
    ddp = DDP(model())
    opt = tp.optim.SGD(ddp.parameters(), lr=0.1)
    with ddp.join(divide_by_initial_world_size=divide_by_initial):
        for k in range(BATCHES[rank]):
            x, y = data(rank, k)
            opt.zero_grad()
            F.cross_entropy(ddp(x), y).backward()
            opt.step()
    ref = model()
    ropt = tp.optim.SGD(ref.parameters(), lr=0.1)
    for k in range(max(BATCHES)):
        active = [r for r in range(size) if k < BATCHES[r]]
        ropt.zero_grad()
        loss = sum(F.cross_entropy(ref(data(r, k)[0]), data(r, k)[1]) for r in active)
        (loss / (size if divide_by_initial else len(active))).backward()
        ropt.step()
    diff = max(float((p - q).abs().max()) for p, q in zip(ddp.module.parameters(), ref.parameters()))
    assert diff < 1e-5, (divide_by_initial, diff)
    mine = [p.detach().numpy().tobytes() for p in ddp.module.parameters()]
    everyone = [None] * size
    dist.all_gather_object(everyone, mine)
    assert all(e == everyone[0] for e in everyone)

ddp = DDP(model())
try:
    with ddp.join(throw_on_early_termination=True):
        for k in range(BATCHES[rank]):
            F.cross_entropy(ddp(data(rank, k)[0]), data(rank, k)[1]).backward()
except RuntimeError as e:
    assert "Detected at least one rank that exhausted inputs" in str(e), e
else:
    raise AssertionError("no rank raised")
dist.destroy_process_group()
if rank == 0:
    print(f"join ok on {size} ranks")
