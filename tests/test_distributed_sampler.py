"""DistributedSampler (tensorplug.utils.data): PyTorch's padding, slicing, seeding and errors."""

import importlib.util

import pytest

import tensorplug as tp
from tensorplug.utils.data import DataLoader, DistributedSampler, TensorDataset


def shards(n, replicas, **kw):
    return [list(DistributedSampler(list(range(n)), num_replicas=replicas, rank=r, **kw)) for r in range(replicas)]


def test_padding_and_slicing_without_shuffle():
    assert shards(10, 3, shuffle=False) == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    assert shards(10, 3, shuffle=False, drop_last=True) == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert shards(2, 5, shuffle=False) == [[0], [1], [0], [1], [0]]   # padding longer than the data
    assert len(DistributedSampler(list(range(10)), num_replicas=3, rank=0)) == 4


def test_shuffle_is_the_same_permutation_on_every_rank_and_changes_with_the_epoch():
    parts = shards(12, 3, seed=7)
    assert sorted(i for p in parts for i in p) == list(range(12))
    assert parts == shards(12, 3, seed=7)
    s = DistributedSampler(list(range(12)), num_replicas=3, rank=1, seed=7)
    first = list(s)
    s.set_epoch(1)
    assert list(s) != first
    assert shards(12, 3, seed=7) != shards(12, 3, seed=8)


def test_errors():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler([1, 2], num_replicas=3, rank=3)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        DistributedSampler([1, 2], num_replicas=3, rank=-1)


def test_without_a_process_group_the_defaults_need_one():
    import tensorplug.distributed as dist
    if dist.is_available():
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            DistributedSampler([1, 2])
    else:
        with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
            DistributedSampler([1, 2])


def test_with_a_data_loader():
    data = TensorDataset(tp.arange(8.0))
    seen = [float(v) for r in range(2) for (b,) in DataLoader(data, batch_size=3, sampler=DistributedSampler(
        data, num_replicas=2, rank=r, shuffle=False)) for v in b]
    assert sorted(seen) == [float(i) for i in range(8)]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch (the oracle)")
@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (7, 4, False), (3, 5, False)])
def test_unshuffled_indices_match_torch(n, replicas, drop_last):
    import torch.utils.data as tud
    want = [list(tud.DistributedSampler(list(range(n)), num_replicas=replicas, rank=r, shuffle=False,
                                        drop_last=drop_last)) for r in range(replicas)]
    assert shards(n, replicas, shuffle=False, drop_last=drop_last) == want
