"""DataLoader worker semantics against torch's DataLoader: batch order with sharded and replicated iterable
datasets, worker ids and seeds relative to the base seed, the re-raised exception's first line."""

from __future__ import annotations

import collections

import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")
import torch.utils.data as tud  # noqa: E402
import tensorplug.utils.data as pud  # noqa: E402


def _sharded(data_mod, n):
    class Sharded(data_mod.IterableDataset):
        def __iter__(self):
            info = data_mod.get_worker_info()
            lo, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(range(lo, n, step))
    return Sharded()


def _batches(data_mod, dataset, **kw):
    out = []
    for b in data_mod.DataLoader(dataset, **kw):
        out.append(b.tolist() if hasattr(b, "tolist") else b)
    return out


@pytest.mark.parametrize("kw", [{"batch_size": 2, "num_workers": 3}, {"batch_size": 3, "num_workers": 2},
                                {"batch_size": 2, "num_workers": 2, "drop_last": True},
                                {"batch_size": None, "num_workers": 2}, {"batch_size": 4, "num_workers": 4}])
def test_iterable_order_matches_torch(kw):
    assert _batches(pud, _sharded(pud, 11), **kw) == _batches(tud, _sharded(tud, 11), **kw)


def test_map_style_order_and_worker_assignment_match_torch():
    def run(data_mod, m):
        class Who(data_mod.Dataset):
            def __len__(self):
                return 7

            def __getitem__(self, i):
                info = data_mod.get_worker_info()
                return [i, info.id]
        return list(data_mod.DataLoader(Who(), batch_size=None, num_workers=3, prefetch_factor=1))
    ours = [[int(v) for v in b] for b in run(pud, tp)]
    theirs = [[int(v) for v in b] for b in run(tud, torch)]
    assert ours == theirs


def test_seeds_are_base_seed_plus_worker_id_as_in_torch():
    def run(data_mod, m):
        class Seeds(data_mod.Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                info = data_mod.get_worker_info()
                return [info.id, info.seed, m.initial_seed()]
        rows = [[int(v) for v in b] for b in data_mod.DataLoader(Seeds(), batch_size=None, num_workers=2)]
        base = rows[0][1] - rows[0][0]
        return [(wid, seed - base, initial - base) for wid, seed, initial in rows]
    assert run(pud, tp) == run(tud, torch)


def test_replicated_iterable_counts_match_torch():
    def counts(data_mod):
        class Three(data_mod.IterableDataset):
            def __iter__(self):
                return iter(range(3))
        return collections.Counter(int(b) for b in data_mod.DataLoader(Three(), batch_size=None, num_workers=2))
    assert counts(pud) == counts(tud)


def test_worker_exception_first_line_matches_torch():
    def first_line(data_mod):
        class Bad(data_mod.Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                if i == 1:
                    raise ValueError("bad")
                return i
        with pytest.raises(ValueError) as info:
            list(data_mod.DataLoader(Bad(), batch_size=None, num_workers=2))
        return str(info.value).splitlines()[:2], str(info.value).splitlines()[-1]
    assert first_line(pud) == first_line(tud)
