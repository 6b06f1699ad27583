"""Datasets made of datasets: :class:`ConcatDataset` (map-style) and :class:`ChainDataset` (iterable)."""

from __future__ import annotations

import bisect

from .dataset import Dataset, IterableDataset

__all__ = ["ConcatDataset", "ChainDataset"]


class ConcatDataset(Dataset):
    """The map-style datasets of ``datasets`` one after another: index ``len(a) + i`` is ``b[i]``."""

    @staticmethod
    def cumsum(sequence):
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """The iterable datasets of ``datasets`` chained: all of the first's samples, then the second's..."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


def _add(self, other):
    return ConcatDataset([self, other])


def _add_iterable(self, other):
    return ChainDataset([self, other])


Dataset.__add__ = _add
IterableDataset.__add__ = _add_iterable
