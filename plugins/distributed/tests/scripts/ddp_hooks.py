"""DDP communication hooks: PyTorch's default hooks and a custom one against the built-in average;
run under mpiexec -n N. Prints "ddp_hooks ok: 4 hooks on <N> ranks" on rank 0."""

import numpy as np

import tensorplug as tp
import tensorplug.distributed as dist
from tensorplug import nn
from tensorplug.distributed.algorithms.ddp_comm_hooks import default_hooks

dist.init_process_group("mpi")
rank, size = dist.get_rank(), dist.get_world_size()


def model_and_grads(hook=None, state=None, bucket_cap_mb=None):
    tp.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    ddp = nn.parallel.DistributedDataParallel(net, bucket_cap_mb=bucket_cap_mb)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    tp.manual_seed(100 + rank)
    for _ in range(2):   # twice: the second backward reuses the buckets
        ddp.zero_grad()
        ddp(tp.randn(5, 6) * 10).pow(2).sum().backward()
    return ddp, [p.grad.numpy().copy() for p in net.parameters()]


_, plain = model_and_grads()
_, same = model_and_grads(default_hooks.allreduce_hook)
for a, b in zip(plain, same):
    assert np.allclose(a, b, rtol=1e-6, atol=1e-6), (a, b)   # divided before the sum instead of after
for hook, dtype in ((default_hooks.fp16_compress_hook, np.float16), (default_hooks.bf16_compress_hook, None)):
    _, got = model_and_grads(hook, dist.group.WORLD)
    for a, b in zip(plain, got):
        assert b.dtype == np.float32
        if dtype is not None:   # the average went over the wire in float16: every value is a float16
            assert np.array_equal(b.astype(np.float16).astype(np.float32), b), hook.__name__
        # each rank's share and the sum rounded to 8 (bfloat16) or 11 (float16) significant bits
        assert np.abs(a - b).max() <= 2e-2 * np.abs(a).max(), (hook.__name__, a, b)

seen = []


def custom(state, bucket):
    """Counts its calls, checks what a GradBucket shows, and averages like the built-in path."""
    assert state == "my state" and isinstance(bucket, dist.GradBucket)
    grads = bucket.gradients()
    assert bucket.buffer().numel() == sum(g.numel() for g in grads) == sum(p.numel() for p in bucket.parameters())
    seen.append((bucket.index(), bucket.is_last()))
    buf = bucket.buffer()
    buf.div_(size)
    return dist.all_reduce(buf, async_op=True).get_future().then(lambda fut: fut.value()[0])


ddp, got = model_and_grads(custom, "my state", bucket_cap_mb=0.0001)   # 100-byte buckets: several
n = len(ddp.bucket_sizes())
assert n > 1 and seen == [(i, i == n - 1) for i in range(n)] * 2, seen   # each bucket, in order, twice
for a, b in zip(plain, got):
    assert np.allclose(a, b, rtol=1e-6, atol=1e-6)
try:
    ddp.register_comm_hook(None, custom)
except RuntimeError as e:
    assert "can only be called once" in str(e)
else:
    raise AssertionError("a second register_comm_hook did not raise")
try:
    model_and_grads(lambda state, bucket: None)
except TypeError as e:   # the hook returned no future: backward fails, it does not hang or drop the gradients
    assert "must return a future" in str(e), e
else:
    raise AssertionError("a hook returning None was accepted")
dist.destroy_process_group()
if rank == 0:
    print(f"ddp_hooks ok: 4 hooks on {size} ranks")
