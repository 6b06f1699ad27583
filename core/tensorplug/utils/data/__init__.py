"""Datasets, samplers, collation and the :class:`DataLoader`, after ``torch.utils.data``.

Loading happens in the calling process (``num_workers=0``) or in worker processes; see docs/training.md.
"""

from __future__ import annotations

from .dataset import Dataset, IterableDataset, TensorDataset, Subset, random_split
from .combine import ConcatDataset, ChainDataset
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, BatchSampler,
                      WeightedRandomSampler)
from .collate import default_collate, default_convert
from ._worker import get_worker_info, WorkerInfo
from .dataloader import DataLoader
from .distributed import DistributedSampler

__all__ = ["DistributedSampler", "Dataset", "IterableDataset", "TensorDataset", "Subset", "random_split", "ConcatDataset", "ChainDataset",
           "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler",
           "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info", "WorkerInfo",
           "DataLoader"]
