"""``DistributedDataParallel``: the class users name; a distributed plugin provides the working subclass."""

from __future__ import annotations

from ... import distributed as _dist
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Data parallelism across processes (``torch.nn.parallel.DistributedDataParallel``).

    ``DistributedDataParallel(module, ...)`` builds the subclass the enabled
    distributed plugin provides as ``tensorplug.distributed.DistributedDataParallel``
    (tensorplug-distributed's: gradient buckets averaged by asynchronous
    allreduce during backward; see docs/distributed.md), so
    ``isinstance(ddp, tensorplug.nn.parallel.DistributedDataParallel)`` holds.
    Without a distributed plugin there is no process group, so construction
    raises PyTorch's ``ValueError`` ("Default process group has not been
    initialized...").
    """

    def __new__(cls, *args, **kwargs):
        if cls is DistributedDataParallel:
            impl = _dist._impl("DistributedDataParallel")
            if impl is not None:
                return super().__new__(impl)
        return super().__new__(cls)

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, **kwargs):
        if not _dist.is_initialized():
            raise ValueError(_dist._NO_GROUP)
        raise RuntimeError("DistributedDataParallel needs a distributed plugin: "
                           "pip install 'tensorplug-distributed[mpi]'")
