"""``DataParallel``: with no CUDA device it wraps the module and calls it unchanged, as PyTorch does."""

from __future__ import annotations

from ... import cuda as _cuda
from ..modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Replicate ``module`` over CUDA devices and split the batch along ``dim``.

    Without CUDA devices (tensorplug's CPU install) it holds ``module`` as
    ``self.module`` and ``forward`` calls it with the same arguments, as
    ``torch.nn.DataParallel`` does when CUDA is unavailable; ``state_dict``
    keys therefore start with ``module.``.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.dim = dim
        if not _cuda.is_available():
            self.device_ids = []
            self.output_device = None
            return
        raise NotImplementedError("DataParallel over CUDA devices needs a cuda backend plugin that provides it")

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
