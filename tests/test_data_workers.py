"""DataLoader with worker processes (PyTorch's semantics) and the added datasets and samplers."""

from __future__ import annotations

import collections
import os
import time

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset, IterableDataset,
                                   SequentialSampler, Subset, SubsetRandomSampler, TensorDataset,
                                   WeightedRandomSampler, default_collate, get_worker_info, random_split)


def _ds(n=10):
    return TensorDataset(tp.arange(2.0 * n).reshape(n, 2), tp.arange(n))


class Sharded(IterableDataset):
    """Each worker yields its share: PyTorch's get_worker_info pattern."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        lo, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(lo, self.n, step))

    def __len__(self):
        return self.n


class Replicated(IterableDataset):
    def __iter__(self):
        return iter(range(3))


class WhoAmI(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return {"i": i, "worker": info.id, "pid": os.getpid(), "seed": info.seed, "initial": tp.initial_seed(),
                "draw": float(tp.rand(()).item()), "np": float(np.random.rand())}


class Failing(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 4:
            raise ValueError(f"bad sample {i}")
        return i


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(3)
        return i


def test_workers_give_the_same_batches_in_order():
    ds = _ds(11)
    single = [(x.tolist(), y.tolist()) for x, y in DataLoader(ds, batch_size=3)]
    multi = [(x.tolist(), y.tolist()) for x, y in DataLoader(ds, batch_size=3, num_workers=2)]
    assert multi == single
    loader = DataLoader(ds, batch_size=3, num_workers=3, prefetch_factor=1, drop_last=True)
    assert [y.tolist() for _, y in loader] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(loader) == 3


def test_shuffle_with_a_generator_is_reproducible_with_workers():
    ds = _ds(12)
    runs = [[y.tolist() for _, y in DataLoader(ds, batch_size=4, shuffle=True, num_workers=2,
                                               generator=tp.Generator().manual_seed(7))] for _ in range(2)]
    assert runs[0] == runs[1]
    assert sorted(sum(runs[0], [])) == list(range(12))


def test_worker_info_seeds_and_init_fn():
    seen = []

    def init(worker_id):
        info = get_worker_info()
        assert info.id == worker_id and info.num_workers == 2
        np.random.seed(1000 + worker_id)

    batches = list(DataLoader(WhoAmI(), batch_size=None, num_workers=2, worker_init_fn=init,
                              generator=tp.Generator().manual_seed(3)))
    assert [b["i"] for b in batches] == list(range(8))
    assert [b["worker"] for b in batches] == [0, 1] * 4            # indices are dealt round robin
    assert len({b["pid"] for b in batches}) == 2 and os.getpid() not in {b["pid"] for b in batches}
    seeds = {b["worker"]: b["seed"] for b in batches}
    assert seeds[1] == seeds[0] + 1                                  # base_seed + worker_id
    assert all(b["initial"] == b["seed"] for b in batches)           # tensorplug is seeded with it
    # the same generator gives the same base seed, hence the same draws in the workers
    again = list(DataLoader(WhoAmI(), batch_size=None, num_workers=2, worker_init_fn=init,
                            generator=tp.Generator().manual_seed(3)))
    assert [b["draw"] for b in again] == [b["draw"] for b in batches]
    assert [b["np"] for b in again] == [b["np"] for b in batches]
    assert [b["np"] for b in batches[:1]] == [np.random.RandomState(1000).rand()]
    assert get_worker_info() is None
    del seen


def test_iterable_dataset_sharding_and_replication():
    assert [b.tolist() for b in DataLoader(Sharded(10), batch_size=2, num_workers=3)] == \
        [[0, 3], [1, 4], [2, 5], [6, 9], [7], [8]]
    assert [b.tolist() for b in DataLoader(Sharded(7), batch_size=2, num_workers=2, drop_last=True)] == \
        [[0, 2], [1, 3], [4, 6]]
    # without sharding every worker yields the whole stream (as in PyTorch)
    items = [int(b) for b in DataLoader(Replicated(), batch_size=None, num_workers=2)]
    assert collections.Counter(items) == {0: 2, 1: 2, 2: 2}


def test_worker_exception_is_reraised_with_the_worker_id():
    with pytest.raises(ValueError) as info:
        list(DataLoader(Failing(), batch_size=2, num_workers=2))
    msg = str(info.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 0.\nOriginal Traceback (most recent call "
                          "last):")
    assert "ValueError: bad sample 4" in msg

    def init(worker_id):
        raise KeyError("no config")
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process"):
        list(DataLoader(_ds(), num_workers=1, worker_init_fn=init))


def test_timeout():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 1 seconds"):
        list(DataLoader(Slow(), num_workers=1, timeout=1))


def test_persistent_workers_survive_epochs():
    loader = DataLoader(WhoAmI(), batch_size=4, num_workers=2, persistent_workers=True)
    pids = []
    for _ in range(3):
        batches = list(loader)
        assert [b["i"].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7]]
        pids.append({p for b in batches for p in b["pid"].tolist()})
    assert pids[0] == pids[1] == pids[2]
    it = iter(loader)
    next(it)                      # an epoch left early
    assert [b["i"].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    loader._iterator._shutdown_workers()
    fresh = DataLoader(WhoAmI(), batch_size=4, num_workers=2)
    assert {p for b in fresh for p in b["pid"].tolist()} != pids[0]


def test_worker_options_are_checked():
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(_ds(), persistent_workers=True)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
        DataLoader(_ds(), prefetch_factor=2)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader(_ds(), timeout=-1)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(_ds(), num_workers=-1)
    loader = DataLoader(_ds(), batch_size=5, pin_memory=True)
    if tp.accelerator.is_available():  # the batches come back pinned
        assert all(b[0].is_pinned() for b in loader)
    else:
        with pytest.warns(UserWarning, match="pin_memory"):
            assert len(list(loader)) == 2


def test_concat_and_chain():
    a, b = _ds(3), _ds(4)
    cat = ConcatDataset([a, b])
    assert len(cat) == 7 and cat[3][1].item() == 0 and cat[-1][1].item() == 3
    assert (a + b).cumulative_sizes == [3, 7]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Sharded(2)])
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        cat[-8]
    chain = ChainDataset([Sharded(2), Sharded(3)])
    assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    assert list(Sharded(1) + Sharded(2)) == [0, 0, 1]
    assert [y.tolist() for _, y in DataLoader(cat, batch_size=4)] == [[0, 1, 2, 0], [1, 2, 3]]


def test_weighted_random_sampler():
    s = WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=tp.Generator().manual_seed(0))
    counts = collections.Counter(s)
    assert len(s) == 4000 and counts[0] == 0
    assert abs(counts[2] / 4000 - 0.75) < 0.03
    no_rep = list(WeightedRandomSampler([1.0, 1.0, 1.0, 1.0], 4, replacement=False))
    assert sorted(no_rep) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean value"):
        WeightedRandomSampler([1.0], 1, replacement=1)
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0]], 1)


def test_samplers_subset_and_split():
    ds = _ds(10)
    assert list(BatchSampler(SequentialSampler(range(5)), 2, drop_last=False)) == [[0, 1], [2, 3], [4]]
    assert sorted(SubsetRandomSampler([3, 5, 7])) == [3, 5, 7]
    sub = Subset(ds, [9, 0])
    assert [sub[i][1].item() for i in range(2)] == [9, 0]
    parts = random_split(ds, [0.5, 0.3, 0.2], generator=tp.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [5, 3, 2]
    assert sorted(i for p in parts for i in p.indices) == list(range(10))
    assert [len(p) for p in random_split(ds, [7, 3])] == [7, 3]


def test_default_collate_structures():
    Point = collections.namedtuple("Point", "x y")
    batch = default_collate([{"a": np.array([1.0, 2.0]), "p": Point(1, 2.5)}, {"a": np.array([3.0, 4.0]),
                                                                              "p": Point(3, 4.5)}])
    assert batch["a"].tolist() == [[1.0, 2.0], [3.0, 4.0]] and batch["a"].dtype == tp.float64
    assert isinstance(batch["p"], Point) and batch["p"].x.tolist() == [1, 3] and batch["p"].y.dtype == tp.float64
    t = default_collate([(tp.ones(2), 1), (tp.zeros(2), 2)])
    assert t[0].shape == (2, 2) and t[1].tolist() == [1, 2]
