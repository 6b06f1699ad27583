"""Indexing, joining and sorting against PyTorch: same results and the same errors (type and message)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

from test_reductions_torch_oracle import assert_same, pair, sample, torch_dtype  # noqa: E402

DTYPES = [tp.bool, tp.uint8, tp.int8, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64]


def ix(values, dtype=tp.int64):
    """The same index values as a tensorplug and a torch tensor."""
    return tp.tensor(values, dtype=dtype), torch.tensor(values, dtype=torch_dtype(dtype))


INDEX_SELECT = [(0, [2, 0, 2]), (1, [3, 1]), (-1, []), (0, [3]), (1, [-1]), (2, [0]), (0, [[0]])]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_index_select(dtype):
    t, u = pair(sample((3, 4), dtype))
    for dim, index in INDEX_SELECT:
        for index_dtype in (tp.int64, tp.int32, tp.int16):
            i, j = ix(index, index_dtype)
            assert_same(lambda: t.index_select(dim, i), lambda: u.index_select(dim, j), (dim, index, index_dtype))


GATHER = [  # dim, index
    (1, [[0, 0], [1, 0], [3, 3]]), (0, [[2, 1, 0, 0]]), (-1, [[3], [2]]), (1, [[0, 1, 2, 3, 3, 2]]),
    (1, [[0, 4]]), (1, [[-1, 0]]), (0, [0, 1]), (1, [[0]] * 4), (2, [[0]]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gather_scatter_scatter_add(dtype):
    t, u = pair(sample((3, 4), dtype))
    for dim, index in GATHER:
        for index_dtype in (tp.int64, tp.int32, tp.float32):
            i, j = ix(index, index_dtype)
            what = (dim, index, index_dtype)
            assert_same(lambda: t.gather(dim, i), lambda: u.gather(dim, j), what)
            shape = np.shape(index) if np.ndim(index) == 2 else (1, 1)
            s, r = pair(sample(tuple(n + 1 for n in shape), dtype, seed=1))
            assert_same(lambda: t.scatter_add(dim, i, s), lambda: u.scatter_add(dim, j, r), what)
            if unique_targets(index, dim):  # PyTorch does not define which duplicate write wins
                assert_same(lambda: t.scatter(dim, i, s), lambda: u.scatter(dim, j, r), what)
                assert_same(lambda: t.scatter(dim, i, 1), lambda: u.scatter(dim, j, 1), what)


def unique_targets(index, dim):
    i = np.asarray(index)
    d = dim % i.ndim
    targets = {tuple(p[:d]) + (i[p],) + tuple(p[d + 1:]) for p in np.ndindex(*i.shape)}
    return len(targets) == i.size


INDEX_PUT = [  # self shape, indices (lists or None; "b:" prefix = bool), values shape
    ((3, 4), [[0, 2]], (4,)), ((3, 4), [[0, 2], [1, 3]], (2,)), ((3, 4), [[[0], [2]], [1, 3]], (2, 2)),
    ((3, 4), [None, [1, -1]], (3, 2)), ((3, 4), [[5]], ()), ((3, 4), [[0], [-5]], ()),
    ((3, 4), [[0, 1]], (3,)), ((3, 4), [[0, 1], [0, 1, 2]], ()), ((3, 4), [[1], [1], [1]], ()),
    ((3, 4), [("b", [True, False, True])], (4,)), ((3, 4), [("b", [True, False])], ()),
    ((3, 4), [("b", [[True, False, False, True]] * 3)], (6,)), ((3, 4), [("b", [True, False, True])], (3,)),
    ((2, 3, 4), [[0, 1], None, [0, 3]], (2, 3)), ((2, 3, 4), [None, [0, 2], [1, 1]], (2, 2)),
    ((2, 3, 4), [[0, 1], None, [0, 3]], (3, 2)), ((3,), [[0, 0, 2]], (3,)), ((3,), [[]], ()),
    ((2, 0), [None, [1]], ()),
]


def to_indices(spec):
    ours, theirs = [], []
    for e in spec:
        if e is None:
            ours.append(None)
            theirs.append(None)
        elif isinstance(e, tuple):
            i, j = ix(e[1], tp.bool)
            ours.append(i)
            theirs.append(j)
        else:
            i, j = ix(e)
            ours.append(i)
            theirs.append(j)
    return ours, theirs


@pytest.mark.parametrize("dtype", [tp.bool, tp.int8, tp.int64, tp.float16, tp.bfloat16, tp.float32], ids=str)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(dtype, accumulate):
    for shape, spec, vshape in INDEX_PUT:
        (t, u), (v, w) = pair(sample(shape, dtype)), pair(sample(vshape, dtype, seed=1))
        ours, theirs = to_indices(spec)
        flat = [x for e in spec if isinstance(e, list) for x in np.ravel(e)]
        if not accumulate and len(set(flat)) != len(flat):
            continue  # which duplicate write wins is not defined
        assert_same(lambda: t.index_put(ours, v, accumulate),
                    lambda: torch.ops.aten.index_put(u, theirs, w, accumulate), (shape, spec, vshape))
    t, u = pair(sample((3, 4), dtype))
    v, w = pair(sample((4,), tp.float64 if dtype is not tp.float64 else tp.float32))
    assert_same(lambda: t.index_put([ix([0])[0]], v, accumulate),
                lambda: torch.ops.aten.index_put(u, [ix([0])[1]], w, accumulate))


MASKED_FILL_VALUES = [0, 1, -1, 2.5, True, 300, -129, 70000.0, math.inf, math.nan, 1e39]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_masked_fill(dtype):
    t, u = pair(sample((3, 4), dtype))
    m, n = pair(sample((3, 4), tp.bool, seed=2))
    for value in MASKED_FILL_VALUES:
        assert_same(lambda: t.masked_fill(m, value), lambda: u.masked_fill(n, value), value)
    for mask_shape in ((4,), (1, 4), (2, 3, 4), (2, 4), ()):
        m, n = pair(sample(mask_shape, tp.bool, seed=3))
        assert_same(lambda: t.masked_fill(m, 1), lambda: u.masked_fill(n, 1), mask_shape)
        assert_same(lambda: t.clone().masked_fill_(m, 1), lambda: u.clone().masked_fill_(n, 1), mask_shape)
    for vdtype in (tp.float64, tp.int64, tp.bool):
        v, w = pair(sample((), vdtype, seed=4))
        assert_same(lambda: t.masked_fill(m, v), lambda: u.masked_fill(n, w), vdtype)
    v, w = pair(sample((1,), tp.float32))
    assert_same(lambda: t.masked_fill(m, v), lambda: u.masked_fill(n, w))
    m, n = pair(sample((3, 4), tp.uint8))
    assert_same(lambda: t.masked_fill(m, 1), lambda: u.masked_fill(n, 1))


CAT = [  # shapes, dtypes, dim
    ([(2, 3), (1, 3)], None, 0), ([(2, 3), (2, 4)], None, 1), ([(2, 3), (2, 4)], None, 0),
    ([(2, 3), (3, 4)], None, 1), ([(2, 3), (2, 3), (5, 4)], None, 0), ([(2, 3), (2, 3, 1)], None, 0),
    ([(), ()], None, 0), ([(2,), ()], None, 0), ([(0,), (2, 3)], None, 0), ([(2, 3), (0,), (2, 1)], None, 1),
    ([(0,), (0,)], None, 0), ([(0,), (0, 3)], None, 0), ([(0, 4), (2, 3)], None, 0), ([(2, 3), (2, 3)], None, 2),
    ([(2, 3), (2, 3)], None, -1), ([(0,), (2, 3)], None, 2), ([(2, 3)], None, 0),
    ([(2, 3), (1, 3)], (tp.int32, tp.float16), 0), ([(2, 3), (1, 3)], (tp.int8, tp.uint8), 0),
    ([(2,), (1,)], (tp.bool, tp.int64), 0), ([(0,), (2, 3)], (tp.float64, tp.float32), 0),
    ([(2,), (1,), (3,)], (tp.float16, tp.bfloat16, tp.uint8), 0),
]


@pytest.mark.parametrize("shapes,dtypes,dim", CAT, ids=str)
def test_cat(shapes, dtypes, dim):
    dtypes = dtypes or [tp.float32] * len(shapes)
    pairs = [pair(sample(s, d, seed=k)) for k, (s, d) in enumerate(zip(shapes, dtypes))]
    assert_same(lambda: tp.cat([p[0] for p in pairs], dim), lambda: torch.cat([p[1] for p in pairs], dim))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sort_argsort_topk(dtype):
    a = sample((4, 5), dtype)
    if dtype.is_floating_point:
        a[1, 2] = a[3, 0] = math.nan
    t, u = pair(a)
    for dim in (0, 1, -1, 2):
        for descending in (False, True):
            assert_same(lambda: t.sort(dim=dim, descending=descending, stable=True),
                        lambda: u.sort(dim=dim, descending=descending, stable=True), (dim, descending))
            assert_same(lambda: t.argsort(dim, descending, stable=True),
                        lambda: u.argsort(dim=dim, descending=descending, stable=True), (dim, descending))
    t, u = pair(sample((), dtype))
    assert_same(lambda: t.sort(), lambda: u.sort())
    if dtype is tp.bool:
        return  # PyTorch's topk refuses bool "on CPU"; tensorplug's check is the same for every backend
    for k in (0, 1, 2):
        assert_same(lambda: t.topk(k), lambda: u.topk(k), k)
    # distinct values: which of equal elements topk returns is not defined
    t, u = pair(np.random.default_rng(0).permutation(20).reshape(4, 5).astype(dtype.np))
    for k in (0, 2, 4, 6, -1):
        for largest in (True, False):
            assert_same(lambda: t.topk(k, 0, largest), lambda: u.topk(k, 0, largest), (k, largest))
