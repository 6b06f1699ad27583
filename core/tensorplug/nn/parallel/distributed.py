"""``DistributedDataParallel``: importable; building one needs an initialised process group."""

from __future__ import annotations

from ... import distributed as _dist
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Data parallelism across processes (``torch.nn.parallel.DistributedDataParallel``).

    Without a distributed plugin there is no process group, so construction
    raises PyTorch's ``ValueError`` ("Default process group has not been
    initialized..."). A distributed plugin provides the real class through
    ``tensorplug.distributed``'s backend module (``DistributedDataParallel``).
    """

    def __new__(cls, *args, **kwargs):
        impl = _dist._impl("DistributedDataParallel")
        if impl is not None and cls is DistributedDataParallel:
            return impl(*args, **kwargs)
        return super().__new__(cls)

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, **kwargs):
        if not _dist.is_initialized():
            raise ValueError(_dist._NO_GROUP)
        super().__init__()
        self.module = module

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
