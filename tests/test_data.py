"""tensorplug.utils.data: datasets, samplers, collation and the DataLoader."""

from __future__ import annotations

import collections
import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp
from tensorplug.utils.data import (BatchSampler, DataLoader, Dataset, IterableDataset, RandomSampler,
                                   SequentialSampler, Subset, SubsetRandomSampler, TensorDataset,
                                   default_collate, default_convert, random_split)


def dataset(n=10):
    x = tp.arange(n * 2, dtype=tp.float32).reshape(n, 2)
    y = tp.arange(n)
    return TensorDataset(x, y)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"i": i, "sq": float(i * i), "name": f"s{i}", "vec": np.full(2, i, dtype=np.int32)}


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


# -- datasets ------------------------------------------------------------------------------------
def test_tensor_dataset_indexes_every_tensor():
    ds = dataset(4)
    assert len(ds) == 4
    x, y = ds[2]
    assert x.tolist() == [4.0, 5.0] and y.item() == 2
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(tp.zeros(3, 1), tp.zeros(4))
    with pytest.raises(TypeError, match="TensorDataset expects tensors, but got list"):
        TensorDataset([1, 2])


def test_subset_and_random_split():
    ds = dataset(10)
    sub = Subset(ds, [7, 2, 5])
    assert len(sub) == 3 and sub[0][1].item() == 7
    parts = random_split(ds, [3, 7], generator=tp.Generator().manual_seed(0))
    again = random_split(ds, [3, 7], generator=tp.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    assert [p.indices for p in parts] == [p.indices for p in again]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))


@pytest.mark.parametrize("n, fractions, sizes", [(10, [0.3, 0.7], [3, 7]), (10, [0.33, 0.33, 0.34], [4, 3, 3]),
                                                  (7, [0.5, 0.5], [4, 3])])
def test_random_split_fractions_deal_the_remainder_round_robin(n, fractions, sizes):
    assert [len(p) for p in random_split(range(n), fractions)] == sizes


def test_random_split_errors():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        random_split(range(5), [2, 2])
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        random_split(range(5), [0.5, 1.5, -1.0])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(1), [0.6, 0.4])


# -- batching ------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 30), batch_size=st.integers(1, 12), drop_last=st.booleans())
def test_batches_cover_the_dataset_in_order(n, batch_size, drop_last):
    loader = DataLoader(dataset(n), batch_size=batch_size, drop_last=drop_last)
    batches = list(loader)
    full, rest = divmod(n, batch_size)
    expected_sizes = [batch_size] * full + ([] if drop_last or rest == 0 else [rest])
    assert [len(y) for _, y in batches] == expected_sizes
    assert len(loader) == len(expected_sizes)
    ys = [v for _, y in batches for v in y.tolist()]
    assert ys == list(range(len(ys)))
    for x, y in batches:
        assert x.shape == (len(y), 2) and x.dtype is tp.float32 and y.dtype is tp.int64


def test_shuffle_is_reproducible_with_a_seeded_generator():
    def epochs(seed, n_epochs=3):
        loader = DataLoader(dataset(20), batch_size=6, shuffle=True, generator=tp.Generator().manual_seed(seed))
        return [[v for _, y in loader for v in y.tolist()] for _ in range(n_epochs)]

    first, again, other = epochs(1), epochs(1), epochs(2)
    assert first == again
    assert first != other
    assert first[0] != first[1]  # each pass draws a new permutation
    for order in first:
        assert sorted(order) == list(range(20))


def test_shuffle_without_generator_follows_manual_seed():
    def order():
        tp.manual_seed(123)
        return [v for _, y in DataLoader(dataset(12), batch_size=5, shuffle=True) for v in y.tolist()]

    assert order() == order()
    assert sorted(order()) == list(range(12))


def test_dict_samples_collate_key_by_key():
    batch = next(iter(DataLoader(Squares(5), batch_size=3)))
    assert list(batch) == ["i", "sq", "name", "vec"]
    assert batch["i"].tolist() == [0, 1, 2] and batch["i"].dtype is tp.int64
    assert batch["sq"].tolist() == [0.0, 1.0, 4.0] and batch["sq"].dtype is tp.float64
    assert batch["name"] == ["s0", "s1", "s2"]
    assert batch["vec"].tolist() == [[0, 0], [1, 1], [2, 2]] and batch["vec"].dtype is tp.int32


Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("batch, check", [
    ([(1, 2.0), (3, 4.0)], lambda b: isinstance(b, list) and b[0].tolist() == [1, 3] and b[1].tolist() == [2.0, 4.0]),
    ([[1, 2], [3, 4]], lambda b: isinstance(b, list) and [t.tolist() for t in b] == [[1, 3], [2, 4]]),
    ([Point(1, 2), Point(3, 4)], lambda b: isinstance(b, Point) and b.x.tolist() == [1, 3]),
    ([True, False], lambda b: b.dtype is tp.bool and b.tolist() == [True, False]),
    ([np.float32(1.5), np.float32(2.5)], lambda b: b.dtype is tp.float32 and b.tolist() == [1.5, 2.5]),
    ([tp.ones(2), tp.zeros(2)], lambda b: b.shape == (2, 2) and b.tolist() == [[1, 1], [0, 0]]),
    ([("a", tp.ones(1)), ("b", tp.zeros(1))], lambda b: b[0] == ("a", "b") and b[1].shape == (2, 1)),
    ([{"k": [1, {"z": 2.0}]}, {"k": [3, {"z": 4.0}]}],
     lambda b: b["k"][0].tolist() == [1, 3] and b["k"][1]["z"].tolist() == [2.0, 4.0]),
    ([collections.OrderedDict(a=1)], lambda b: isinstance(b, collections.OrderedDict) and b["a"].tolist() == [1]),
])
def test_default_collate_table(batch, check):
    assert check(default_collate(batch))


@pytest.mark.parametrize("batch, exc, message", [
    ([object()], TypeError, "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                            "found <class 'object'>"),
    ([np.array(["a"])], TypeError, "found <U1"),
    ([[1, 2], [3]], RuntimeError, "each element in list of batch should be of equal size"),
])
def test_default_collate_errors(batch, exc, message):
    with pytest.raises(exc, match=message):
        default_collate(batch)


def test_default_convert_only_converts_numpy():
    out = default_convert({"a": np.arange(3), "b": (np.float64(2.0), 5), "c": "s"})
    assert out["a"].tolist() == [0, 1, 2] and isinstance(out["a"], tp.Tensor)
    assert isinstance(out["b"], list) and out["b"][0].item() == 2.0 and out["b"][1] == 5 and out["c"] == "s"


def test_custom_collate_fn_and_unbatched_loading():
    loader = DataLoader(Squares(4), batch_size=2, collate_fn=lambda samples: [s["i"] for s in samples])
    assert list(loader) == [[0, 1], [2, 3]]
    unbatched = list(DataLoader(Squares(2), batch_size=None))
    assert len(unbatched) == 2 and unbatched[1]["vec"].tolist() == [1, 1] and unbatched[1]["i"] == 1


def test_samplers():
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    g = tp.Generator().manual_seed(5)
    draws = list(RandomSampler(range(4), replacement=True, num_samples=9, generator=g))
    assert len(draws) == 9 and all(0 <= d < 4 for d in draws)
    longer = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(longer) == 10 and sorted(longer[:8]) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert sorted(SubsetRandomSampler([10, 20, 30], generator=g)) == [10, 20, 30]
    assert list(BatchSampler(range(5), 2, drop_last=False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(range(5), 2, drop_last=True)) == [[0, 1], [2, 3]]
    loader = DataLoader(dataset(6), batch_sampler=[[5, 0], [3]])
    assert [y.tolist() for _, y in loader] == [[5, 0], [3]] and len(loader) == 2
    loader = DataLoader(dataset(6), sampler=[4, 4, 1], batch_size=2)
    assert [y.tolist() for _, y in loader] == [[4, 4], [1]]


def test_iterable_dataset_batches_the_stream():
    loader = DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]] and len(loader) == 3
    loader = DataLoader(Stream(7), batch_size=3, drop_last=True)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]] and len(loader) == 2
    assert list(DataLoader(Stream(2), batch_size=None)) == [0, 1]


@pytest.mark.parametrize("kwargs, exc, message", [
    ({"in_order": False}, NotImplementedError, "in_order=False"),
    ({"num_workers": -1}, ValueError, "num_workers option should be non-negative"),
    ({"shuffle": True, "sampler": [0]}, ValueError, "sampler option is mutually exclusive with shuffle"),
    ({"batch_sampler": [[0]], "batch_size": 2}, ValueError, "batch_sampler option is mutually exclusive with "
                                                            "batch_size, shuffle, sampler, and drop_last"),
    ({"batch_size": None, "drop_last": True}, ValueError, "batch_size=None option disables auto-batching"),
    ({"batch_size": 0}, ValueError, "batch_size should be a positive integer value, but got batch_size=0"),
    ({"drop_last": 1}, ValueError, "drop_last should be a boolean value, but got drop_last=1"),
])
def test_loader_argument_errors(kwargs, exc, message):
    with pytest.raises(exc, match=message):
        DataLoader(dataset(4), **kwargs)


def test_iterable_dataset_rejects_shuffle_and_samplers():
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(3), sampler=[0])


def test_pin_memory_without_an_accelerator_warns_when_iterating_as_pytorch_does(monkeypatch):
    from tensorplug.utils.data import dataloader as D
    monkeypatch.setattr(D, "_accelerator_available", lambda: False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loader = DataLoader(dataset(2), pin_memory=True)  # nothing at construction
        list(DataLoader(dataset(2)))
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found, then "
                                         "device pinned memory won't be used."):
        batches = list(loader)
    assert [b[0].is_pinned() for b in batches] == [False, False]


def test_pin_memory_pins_every_tensor_of_a_batch(monkeypatch):
    from tensorplug.utils.data import dataloader as D
    monkeypatch.setattr(D, "_accelerator_available", lambda: True)
    pinned = []

    def fake_pin(self):
        pinned.append(self.shape)
        return self.clone()
    monkeypatch.setattr(tp.Tensor, "pin_memory", fake_pin)
    batch = D.pin_memory({"x": tp.ones(2, 3), "rest": [tp.zeros(1), "label", (tp.ones(4),)]})
    assert pinned == [(2, 3), (1,), (4,)]
    assert batch["rest"][1] == "label" and isinstance(batch["rest"][2], tuple)


def test_random_sampler_with_replacement_draws_lazily(monkeypatch):
    # the infinite-loader idiom: PyTorch draws 32 indices at a time, so the first batches come at once
    from tensorplug.utils.data import sampler as sampler_module
    drawn = []
    real_randint = sampler_module.randint

    def randint(*args, size, **kwargs):
        drawn.append(math.prod(size))
        assert drawn[-1] <= 32, f"drew {size} indices at once"
        return real_randint(*args, size=size, **kwargs)

    monkeypatch.setattr(sampler_module, "randint", randint)
    ds = dataset(10)
    sampler = RandomSampler(ds, replacement=True, num_samples=int(1e10), generator=tp.Generator().manual_seed(0))
    loader = DataLoader(ds, sampler=sampler, batch_size=8)
    assert len(sampler) == int(1e10) and len(loader) == int(1e10) // 8
    batches = list(itertools.islice(loader, 10))
    assert [len(y) for _, y in batches] == [8] * 10 and all(0 <= v < 10 for _, y in batches for v in y.tolist())
    assert sum(drawn) <= 96


def test_random_sampler_with_replacement_is_reproducible():
    def draws(num_samples, seed=None, generator=None):
        if seed is not None:
            tp.manual_seed(seed)
        return list(RandomSampler(range(7), replacement=True, num_samples=num_samples, generator=generator))

    first = draws(70, generator=tp.Generator().manual_seed(3))
    assert len(first) == 70 and set(first) <= set(range(7))
    assert first == draws(70, generator=tp.Generator().manual_seed(3))
    assert first != draws(70, generator=tp.Generator().manual_seed(4))
    assert draws(64, generator=tp.Generator().manual_seed(3)) == first[:64]  # whole chunks of 32
    assert draws(5, seed=1) == draws(5, seed=1) and len(draws(32, seed=2)) == 32


def test_random_sampler_argument_errors():
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
        RandomSampler(range(3), replacement=1)


def _describe(obj):
    """A comparable summary of a collated batch: container types, tensor dtypes/shapes/values."""
    if hasattr(obj, "dtype") and hasattr(obj, "shape") and not isinstance(obj, np.ndarray):
        return ("tensor", str(obj.dtype).split(".")[-1], tuple(obj.shape), obj.tolist())
    if isinstance(obj, dict):
        return (type(obj).__name__, {k: _describe(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_describe(v) for v in obj])
    return obj


@pytest.mark.parametrize("make", [
    lambda T: [(1, 2.5, True), (3, 4.5, False)],
    lambda T: [{"a": [1, 2], "b": "x"}, {"a": [3, 4], "b": "y"}],
    lambda T: [np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int16)],
    lambda T: [(np.float32(1.0), "s"), (np.float32(2.0), "t")],
    lambda T: [T.ones(2, 3), T.zeros(2, 3)],
    lambda T: [[T.tensor(1.0), {"k": 2}], [T.tensor(2.0), {"k": 3}]],
])
def test_default_collate_matches_torch(make):
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate
    assert _describe(default_collate(make(tp))) == _describe(torch_collate(make(torch)))
