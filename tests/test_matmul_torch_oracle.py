"""matmul, mm, bmm, dot and mv against PyTorch: same results, and the same errors for bad shapes and dtypes."""

from __future__ import annotations

import itertools

import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

from test_reductions_torch_oracle import assert_same, pair, sample  # noqa: E402

RANK_SHAPES = {1: [(3,), (4,)], 2: [(2, 3), (3, 4), (4, 5)], 3: [(5, 2, 3), (5, 3, 4), (1, 4, 5), (6, 3, 2)],
               4: [(2, 1, 2, 3), (7, 1, 3, 4)]}
ALL_SHAPES = [s for shapes in RANK_SHAPES.values() for s in shapes] + [()]


@pytest.mark.parametrize("sa", ALL_SHAPES, ids=str)
def test_every_shape_pair_matches_pytorch(sa):
    for sb in ALL_SHAPES:
        (t, u), (v, w) = pair(sample(sa, tp.float32)), pair(sample(sb, tp.float32, seed=1))
        assert_same(lambda: t @ v, lambda: u @ w, (sa, sb))
        for name in ("mm", "bmm", "dot", "mv"):
            assert_same(lambda: getattr(tp, name)(t, v), lambda: getattr(torch, name)(u, w), (name, sa, sb))


DTYPES = [tp.bool, tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64]


@pytest.mark.parametrize("da,db", list(itertools.product(DTYPES, repeat=2)), ids=str)
def test_dtype_pairs_match_pytorch(da, db):
    (t, u), (v, w) = pair(sample((2, 3), da)), pair(sample((3, 2), db, seed=1))
    assert_same(lambda: t @ v, lambda: u @ w, (da, db))
    (t, u), (v, w) = pair(sample((3,), da)), pair(sample((3,), db, seed=1))
    assert_same(lambda: tp.mm(t.unsqueeze(0), v.unsqueeze(1)), lambda: torch.mm(u.unsqueeze(0), w.unsqueeze(1)))
    assert_same(lambda: tp.dot(t, v), lambda: torch.dot(u, w), (da, db))
    assert_same(lambda: tp.mv(t.unsqueeze(0), v), lambda: torch.mv(u.unsqueeze(0), w), (da, db))
