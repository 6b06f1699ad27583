"""``tensorplug.nn.parallel``: ``DataParallel`` (a pass-through without CUDA devices) and ``DistributedDataParallel``."""

from __future__ import annotations

from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
