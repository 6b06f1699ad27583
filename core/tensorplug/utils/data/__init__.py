"""Datasets, samplers, collation and the :class:`DataLoader`, after ``torch.utils.data``.

Loading happens in the calling process (``num_workers=0``); see docs/training.md.
"""

from __future__ import annotations

from .dataset import Dataset, IterableDataset, TensorDataset, Subset, random_split
from .sampler import Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, BatchSampler
from .collate import default_collate, default_convert
from .dataloader import DataLoader

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler", "default_collate",
           "default_convert", "DataLoader"]
