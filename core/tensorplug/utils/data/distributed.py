"""``DistributedSampler``: each process of a job draws its own shard of the dataset's indices."""

from __future__ import annotations

import math

from ... import distributed as _dist
from ...ops.random import Generator, randperm
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices of the shard of ``dataset`` that process ``rank`` of ``num_replicas`` reads (PyTorch's).

    Each epoch, the indices (shuffled with a generator seeded ``seed + epoch``
    when ``shuffle``, so every rank draws the same permutation) are padded by
    repeating the first ones until their count divides by ``num_replicas``
    (or cut to a multiple with ``drop_last=True``), and rank ``r`` takes
    ``indices[r::num_replicas]``. Call :meth:`set_epoch` before each epoch
    for a new order. ``num_replicas`` and ``rank`` default to the default
    process group's world size and rank.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            if not _dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = _dist.get_world_size()
        if rank is None:
            if not _dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            rank = _dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = randperm(n, generator=Generator().manual_seed(self.seed + self.epoch)).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank:self.total_size:self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch the next pass shuffles for: every rank must call it with the same number."""
        self.epoch = epoch
