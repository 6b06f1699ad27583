"""Samplers: iterables of dataset indices (or of index lists, for :class:`BatchSampler`)."""

from __future__ import annotations

import itertools

from ... import dtypes as _dt
from ...ops.factories import as_tensor, empty
from ...ops.random import Generator, multinomial, randint, randperm

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler",
           "WeightedRandomSampler"]


class Sampler:
    """Base class of samplers: subclasses implement ``__iter__`` (and ``__len__`` when the length is known)."""

    def __iter__(self):
        raise NotImplementedError


def _fresh_generator(generator):
    """``generator``, or a new one seeded from the default generator (so ``manual_seed`` controls shuffling)."""
    if generator is not None:
        return generator
    seed = int(empty((), dtype=_dt.int64).random_().item())
    return Generator().manual_seed(seed)


class SequentialSampler(Sampler):
    """Indices ``0, 1, ..., len(data_source) - 1`` in order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


_CHUNK = 32  # indices RandomSampler draws at a time with replacement (PyTorch's number)


class RandomSampler(Sampler):
    """A random permutation of the indices each pass (or ``num_samples`` draws with ``replacement``).

    With a ``generator``, the sequence of passes is reproducible; without
    one, each pass seeds a fresh generator from tensorplug's default one.
    Draws with replacement are made lazily, 32 at a time, so a huge
    ``num_samples`` (an endless loader) costs nothing up front.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        """How many indices one pass yields (the dataset's length unless given)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = _fresh_generator(self.generator)
        if self.replacement:
            # drawn lazily, _CHUNK at a time as in PyTorch: num_samples may be huge (an "infinite" loader)
            for _ in range(self.num_samples // _CHUNK):
                yield from randint(high=n, size=(_CHUNK,), dtype=_dt.int64, generator=generator).tolist()
            yield from randint(high=n, size=(self.num_samples % _CHUNK,), dtype=_dt.int64,
                               generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order each pass."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


def check_batching(batch_size, drop_last):
    """PyTorch's checks of ``batch_size`` (a positive int) and ``drop_last`` (a bool)."""
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
        raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
    if not isinstance(drop_last, bool):
        raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless ``drop_last``)."""

    def __init__(self, sampler, batch_size, drop_last):
        check_batching(batch_size, drop_last)
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (with or without replacement)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=_dt.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        rand_tensor = multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from iter(rand_tensor.tolist())

    def __len__(self):
        return self.num_samples
