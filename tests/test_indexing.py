"""Indexing, joining and sorting (index_select, gather, scatter, scatter_add, index_put, masked_fill, cat,
sort, argsort, topk) against numpy and explicit loops."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp

ALL_DTYPES = [tp.bool, tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32,
              tp.float64]
F32 = np.dtype(np.float32)


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype is tp.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    vals = rng.integers(0 if dtype is tp.uint8 else -5, 6, size=shape)
    if dtype.is_floating_point:
        vals = vals + rng.integers(0, 4, size=shape) / 4
    return np.asarray(vals).astype(dtype.np)


def T(a):
    return tp.from_numpy(np.asarray(a).copy())


def idx(values, dtype=tp.int64):
    return tp.tensor(values, dtype=dtype)


def transposed(a):
    """A non-contiguous tensor with the values of ``a`` (2-D or more)."""
    return tp.from_numpy(np.ascontiguousarray(np.swapaxes(a, 0, 1))).transpose(0, 1)


def assert_values(out, ref, dtype, what=""):
    ref = np.asarray(ref)
    assert out.dtype is dtype, what
    assert out.shape == ref.shape, what
    np.testing.assert_array_equal(np.asarray(out.numpy(), dtype=np.float64), ref.astype(np.float64),
                                  err_msg=str(what))


# -- index_select ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_index_select_matches_take(dtype):
    a = sample((4, 5), dtype)
    for dim, index, index_dtype in itertools.product((0, 1, -1), ([3, 0, 3], [], [1]), (tp.int64, tp.int32)):
        ref = np.take(a, np.asarray(index, dtype=np.int64), axis=dim)
        for layout, t in (("contiguous", T(a)), ("transposed", transposed(a))):
            out = t.index_select(dim, idx(index, index_dtype))
            assert_values(out, ref, dtype, (dim, index, index_dtype, layout))
            assert_values(tp.index_select(t, dim, idx(index, index_dtype)), ref, dtype)


def test_index_select_zero_dim_cases():
    x = T(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert_values(x.index_select(0, tp.tensor(2)), [[8.0, 9.0, 10.0, 11.0]], tp.float32)
    assert_values(tp.tensor(5.0).index_select(0, idx([0])), np.array(5.0), tp.float32)
    assert_values(tp.tensor(5.0).index_select(-1, tp.tensor(0)), np.array(5.0), tp.float32)


# -- gather / scatter / scatter_add: explicit loops as the reference -----------------------------------
def loop_gather(a, dim, index):
    out = np.empty(index.shape, dtype=a.dtype)
    for pos in np.ndindex(*index.shape):
        src = list(pos)
        src[dim] = index[pos]
        out[pos] = a[tuple(src)]
    return out


def loop_scatter(a, dim, index, src, add):
    out = a.copy()
    for pos in np.ndindex(*index.shape):
        dst = list(pos)
        dst[dim] = index[pos]
        out[tuple(dst)] = out[tuple(dst)] + src[pos] if add else src[pos]
    return out


GATHER_CASES = [  # self shape, dim, index
    ((3, 4), 1, [[0, 0], [1, 0], [3, 3]]),
    ((3, 4), 0, [[2, 1, 0, 0]]),
    ((3, 4), -1, [[3], [2]]),
    ((3, 4), 1, [[0, 1, 2, 3, 3, 2]]),  # longer than self along dim
    ((2, 3, 4), 2, [[[1, 0], [3, 3]], [[2, 2], [0, 1]]]),
    ((5,), 0, [4, 0, 4, 1]),
]


@pytest.mark.parametrize("dtype", [tp.bool, tp.uint8, tp.int64, tp.float16, tp.bfloat16, tp.float64], ids=str)
@pytest.mark.parametrize("shape,dim,index", GATHER_CASES, ids=str)
def test_gather_matches_loop(shape, dim, index, dtype):
    a = sample(shape, dtype)
    i = np.asarray(index)
    ref = loop_gather(a, dim % a.ndim, i)
    views = [T(a)] + ([transposed(a)] if a.ndim > 1 else [])
    for t in views:
        for index_dtype in (tp.int64, tp.int32):
            assert_values(t.gather(dim, idx(index, index_dtype)), ref, dtype, (index_dtype, t.is_contiguous()))
    assert_values(tp.gather(T(a), dim, idx(index)), ref, dtype)


def test_gather_zero_dim_and_empty():
    assert_values(tp.tensor(5.0).gather(0, tp.tensor(0)), np.array(5.0), tp.float32)
    assert_values(tp.tensor(5.0).gather(0, idx([0, 0])), [5.0, 5.0], tp.float32)
    assert_values(T(np.arange(3.0)).gather(0, tp.tensor(2)), np.array(2.0), tp.float64)
    assert T(np.zeros((3, 4))).gather(1, tp.zeros(5, 0, dtype=tp.int64)).shape == (5, 0)


@pytest.mark.parametrize("dtype", [tp.uint8, tp.int8, tp.int64, tp.float16, tp.bfloat16, tp.float32], ids=str)
@pytest.mark.parametrize("shape,dim,index", GATHER_CASES[:3] + GATHER_CASES[4:], ids=str)
def test_scatter_and_scatter_add_match_loops(shape, dim, index, dtype):
    a = sample(shape, dtype)
    i = np.asarray(index)
    src = sample(tuple(s + 1 for s in i.shape), dtype, seed=1)  # src may be larger than index
    d = dim % a.ndim
    # duplicate targets make plain scatter order-dependent: compare it only where targets are unique
    targets = [tuple(p[:d]) + (i[p],) + tuple(p[d + 1:]) for p in np.ndindex(*i.shape)]
    if len(set(targets)) == len(targets):
        assert_values(T(a).scatter(dim, idx(index), T(src)), loop_scatter(a, d, i, src, False), dtype)
        assert_values(tp.scatter(T(a), dim, idx(index), 2), loop_scatter(a, d, i, np.full(i.shape, 2), False),
                      dtype)
    ref = loop_scatter(a, d, i, src, True)
    assert_values(T(a).scatter_add(dim, idx(index, tp.int32), T(src)), ref, dtype)
    out = T(a)
    assert out.scatter_add_(dim, idx(index), T(src)) is out
    assert_values(out, ref, dtype)


def test_scatter_value_conversions():
    i = idx([0, 2])
    assert T(np.zeros(3, np.int64)).scatter(0, i, 7.9).tolist() == [7, 0, 7]
    assert T(np.zeros(3, np.uint8)).scatter(0, i, -1).tolist() == [255, 0, 255]
    assert T(np.zeros(3, bool)).scatter(0, i, 0.5).tolist() == [True, False, True]
    assert tp.zeros(3).scatter(0, i, value=2.5).tolist() == [2.5, 0.0, 2.5]
    assert tp.zeros(3).scatter(0, i, tp.tensor([1.0, 2.0])).tolist() == [1.0, 0.0, 2.0]
    assert tp.tensor(1.0).scatter_(0, tp.tensor(0), 5.0).item() == 5.0


# -- index_put ------------------------------------------------------------------------------------------
def key_of(indices):
    """The numpy key for a list of index tensors and None."""
    return tuple(slice(None) if ix is None else ix.numpy() for ix in indices)


INDEX_PUT_CASES = [  # self shape, indices, values shape
    ((3, 4), [idx([0, 2])], (4,)),
    ((3, 4), [idx([0, 2]), idx([1, 3])], (2,)),
    ((3, 4), [idx([[0], [2]]), idx([1, 3])], (2, 2)),          # index tensors broadcast
    ((3, 4), [None, idx([1, -1])], (3, 2)),                    # negative indices wrap
    ((3, 4), [idx([2, 0], tp.int32)], ()),
    ((3, 4), [tp.tensor(1)], (1,)),                            # a 0-dim index
    ((3, 4), [tp.tensor([True, False, True])], (4,)),           # a mask over dim 0
    ((3, 4), [tp.tensor([[True, False, False, True]] * 3)], ()),  # a mask over both dims
    ((2, 3, 4), [idx([0, 1]), None, idx([0, 3])], (2, 3)),      # separated: broadcast dims go first
    ((2, 3, 4), [None, idx([0, 2]), idx([1, 1])], (2, 2)),      # adjacent: they stay in place
    ((2, 3, 4), [None, tp.ones(3, 4, dtype=tp.bool)], (2, 1)),
    ((3,), [tp.tensor(True)], ()),                              # a zero-dim mask
    ((3,), [idx([], tp.int64)], ()),
]


@pytest.mark.parametrize("dtype", [tp.bool, tp.int8, tp.int64, tp.float16, tp.bfloat16, tp.float32], ids=str)
@pytest.mark.parametrize("shape,indices,vshape", INDEX_PUT_CASES, ids=str)
def test_index_put_matches_numpy(shape, indices, vshape, dtype):
    a = sample(shape, dtype)
    v = sample(vshape, dtype, seed=1)
    ref = a.copy()
    ref[key_of(indices)] = v
    assert_values(T(a).index_put(indices, T(v)), ref, dtype)
    assert_values(tp.index_put(T(a), tuple(indices), T(v)), ref, dtype)
    acc = a.copy()
    np.add.at(acc, key_of(indices), v)
    assert_values(T(a).index_put(indices, T(v), accumulate=True), acc, dtype)
    if a.ndim > 1:
        t = transposed(a)
        assert t.index_put_(indices, T(v)) is t
        assert_values(t, ref, dtype, "non-contiguous self")


def test_index_put_accumulates_duplicates():
    out = tp.zeros(3).index_put((idx([0, 0, 2, 0]),), tp.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True)
    assert out.tolist() == [7.0, 0.0, 3.0]
    out = tp.zeros(2, 2).index_put_([idx([[0, 1], [1, 1]]), idx([1])], tp.tensor([[1.0, 2.0], [3.0, 4.0]]), True)
    assert out.tolist() == [[0.0, 1.0], [0.0, 9.0]]
    wrap = tp.zeros(2, dtype=tp.int8).index_put((idx([0, 0]),), tp.tensor([100, 100], dtype=tp.int8), True)
    assert wrap.tolist() == [-56, 0]
    # without accumulate, the last write of a duplicate wins (what PyTorch's CPU kernel does too)
    assert tp.zeros(3).index_put((idx([0, 0]),), tp.tensor([1.0, 2.0])).tolist() == [2.0, 0.0, 0.0]


def test_index_put_uint8_masks_are_deprecated_but_work():
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        out = tp.zeros(3).index_put((tp.tensor([1, 0, 1], dtype=tp.uint8),), tp.tensor(1.0))
    assert out.tolist() == [1.0, 0.0, 1.0]


# -- masked_fill ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_masked_fill_matches_where(dtype):
    a = sample((3, 4), dtype)
    mask = sample((3, 4), tp.bool, seed=2)
    value = a.dtype.type(1)
    ref = np.where(mask, value, a)
    assert_values(T(a).masked_fill(T(mask), 1), ref, dtype)
    assert_values(tp.masked_fill(transposed(a), T(mask), tp.tensor(1, dtype=dtype)), ref, dtype)
    row = mask[1]
    assert_values(T(a).masked_fill(T(row), tp.tensor(1.0, dtype=tp.float64)), np.where(row, value, a), dtype)
    t = transposed(a)
    assert t.masked_fill_(T(mask), 1) is t
    assert_values(t, ref, dtype)


def test_masked_fill_broadcasts_self_out_of_place_only():
    out = tp.zeros(3).masked_fill(tp.ones(2, 3, dtype=tp.bool), 2.0)
    assert out.shape == (2, 3) and out.tolist() == [[2.0] * 3] * 2
    assert tp.zeros(3).masked_fill(tp.tensor(True), 1.0).tolist() == [1.0] * 3
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        tp.zeros(3).masked_fill_(tp.ones(2, 3, dtype=tp.bool), 2.0)


SCALAR_CONVERSIONS = [  # self dtype, value, stored value
    (tp.int64, 2.5, 2), (tp.int8, -1.9, -1), (tp.uint8, -1, 255), (tp.uint8, -129, 127), (tp.bool, 2, True),
    (tp.bool, 0.5, True), (tp.int64, True, 1), (tp.float32, math.inf, math.inf), (tp.float16, 65504.0, 65504.0),
    (tp.int64, 2 ** 63 - 1, 2 ** 63 - 1),
]


@pytest.mark.parametrize("dtype,value,stored", SCALAR_CONVERSIONS, ids=str)
def test_masked_fill_scalar_conversion(dtype, value, stored):
    out = tp.zeros(2, dtype=dtype).masked_fill(tp.tensor([True, False]), value)
    assert out.tolist()[0] == stored and out.dtype is dtype


# -- cat -------------------------------------------------------------------------------------------------
CAT_PROMOTION = [
    ((tp.int32, tp.float16), tp.float16), ((tp.int8, tp.uint8), tp.int16), ((tp.bool, tp.bool), tp.bool),
    ((tp.bool, tp.int64), tp.int64), ((tp.float16, tp.bfloat16), tp.float32), ((tp.int64, tp.float64), tp.float64),
    ((tp.uint8, tp.int32, tp.float32), tp.float32),
]


@pytest.mark.parametrize("dtypes,result", CAT_PROMOTION, ids=str)
def test_cat_promotes(dtypes, result):
    parts = [sample((2, i + 1), d, seed=i) for i, d in enumerate(dtypes)]
    out = tp.cat([T(p) for p in parts], 1)
    ref = np.concatenate([p.astype(np.float64) for p in parts], axis=1)
    assert_values(out, ref, result)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_cat_along_each_dim(dim):
    parts = [sample(tuple(3 + k if d == dim % 3 else 2 for d in range(3)), tp.float32, seed=k) for k in range(3)]
    ref = np.concatenate(parts, axis=dim)
    assert_values(tp.cat([T(p) for p in parts], dim), ref, tp.float32)
    assert_values(tp.cat(tuple(transposed(p) for p in parts), dim=dim), ref, tp.float32)
    assert_values(tp.concat([T(p) for p in parts], dim), ref, tp.float32)
    assert_values(tp.concatenate([T(p) for p in parts], axis=dim), ref, tp.float32)


def test_cat_skips_one_dim_empty_tensors():
    x = tp.ones(2, 3)
    assert tp.cat([tp.zeros(0), x]).shape == (2, 3)
    assert tp.cat([x, tp.zeros(0), tp.zeros(2, 1)], 1).shape == (2, 4)
    assert tp.cat([tp.zeros(0, dtype=tp.float64), x]).dtype is tp.float64  # still promotes
    assert tp.cat([tp.zeros(0), tp.zeros(0)]).shape == (0,)
    assert tp.cat([tp.zeros(0), tp.zeros(0, 3)]).shape == (0, 3)
    assert tp.cat([tp.zeros(0, 3), x]).shape == (2, 3)


# -- sort / argsort / topk -----------------------------------------------------------------------------------
def ref_sort(a, dim, descending):
    """Stable sort with NaN above every number (descending: NaN first, equal keys in input order)."""
    keys = a.astype(np.float64) if a.dtype.name == "bfloat16" else a
    if descending:
        n = a.shape[dim]
        order = (n - 1) - np.flip(np.argsort(np.flip(keys, dim), axis=dim, kind="stable"), dim)
    else:
        order = np.argsort(keys, axis=dim, kind="stable")
    return np.take_along_axis(a, order, dim), order


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_sort_matches_stable_reference(dtype):
    a = sample((4, 6), dtype)  # few distinct values: many ties
    for dim, descending in itertools.product((0, 1, -1), (False, True)):
        vals, order = ref_sort(a, dim, descending)
        for t in (T(a), transposed(a)):
            res = t.sort(dim, descending)
            assert type(res).__name__ == "sort" and res.values is res[0]
            assert_values(res.values, vals, dtype, (dim, descending))
            assert_values(res.indices, order, tp.int64, (dim, descending))
            assert_values(tp.sort(t, dim=dim, descending=descending, stable=True).indices, order, tp.int64)
            assert_values(t.argsort(dim, descending=descending), order, tp.int64)
            assert_values(tp.argsort(t, dim, descending, stable=True), order, tp.int64)


def test_sort_places_nan_like_pytorch():
    nan = math.nan
    t = tp.tensor([3.0, nan, 1.0, nan, 2.0, -math.inf])
    res = t.sort()
    assert res.indices.tolist() == [5, 2, 4, 0, 1, 3]
    res = t.sort(descending=True)
    assert res.indices.tolist() == [1, 3, 0, 4, 2, 5]
    assert tp.tensor([nan, 1.0], dtype=tp.bfloat16).sort().indices.tolist() == [1, 0]


def test_sort_of_zero_dim_and_empty():
    res = tp.tensor(3.0).sort()
    assert res.values.shape == () and res.values.item() == 3.0 and res.indices.item() == 0
    res = tp.zeros(0, 3).sort(0)
    assert res.values.shape == (0, 3) and res.indices.dtype is tp.int64


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.integers(-3, 3), min_size=1, max_size=12), descending=st.booleans())
def test_sort_is_a_stable_permutation(values, descending):
    res = tp.tensor(values).sort(descending=descending, stable=True)
    order = res.indices.tolist()
    assert sorted(order) == list(range(len(values)))
    assert res.values.tolist() == [values[i] for i in order]
    for (i, j) in zip(order, order[1:]):
        assert (values[i] >= values[j]) if descending else (values[i] <= values[j])
        if values[i] == values[j]:
            assert i < j


TOPK_CASES = [  # values, k, kwargs, expected values, expected indices
    ([3.0, 1.0, 2.0, 5.0], 2, {}, [5.0, 3.0], [3, 0]),
    ([3.0, 1.0, 2.0, 5.0], 2, {"largest": False}, [1.0, 2.0], [1, 2]),
    ([3.0, math.nan, 2.0, 5.0], 2, {}, [math.nan, 5.0], [1, 3]),
    ([3.0, math.nan, 2.0, 5.0], 2, {"largest": False}, [2.0, 3.0], [2, 0]),
    ([3.0, 1.0], 0, {}, [], []),
    ([1, 3, 3, 2], 3, {"sorted": False}, [3, 3, 2], [1, 2, 3]),
]


@pytest.mark.parametrize("values,k,kwargs,exp_values,exp_indices", TOPK_CASES, ids=str)
def test_topk(values, k, kwargs, exp_values, exp_indices):
    res = tp.tensor(values).topk(k, **kwargs)
    assert type(res).__name__ == "topk"
    np.testing.assert_array_equal(res.values.numpy(), np.array(exp_values, dtype=res.values.numpy().dtype))
    assert res.indices.tolist() == exp_indices


def test_topk_along_a_dim_is_contiguous():
    x = T(np.arange(12.0).reshape(3, 4))
    res = tp.topk(x, 2, dim=1)
    assert res.values.tolist() == [[3.0, 2.0], [7.0, 6.0], [11.0, 10.0]] and res.values.is_contiguous()
    res = x.topk(2, 0, largest=False)
    assert res.indices.tolist() == [[0, 0, 0, 0], [1, 1, 1, 1]]
    res = tp.tensor(3.0).topk(1)
    assert res.values.shape == () and res.values.item() == 3.0


# -- in-place ops write through views and bump the shared version -------------------------------------
INPLACE = [
    ("scatter_", lambda t: t.scatter_(0, idx([[1, 0, 2]]), tp.ones(1, 3))),
    ("scatter_ value", lambda t: t.scatter_(0, idx([[1, 0, 2]]), 1.0)),
    ("scatter_add_", lambda t: t.scatter_add_(1, idx([[0], [1], [2]]), tp.ones(3, 1))),
    ("index_put_", lambda t: t.index_put_((idx([1]),), tp.tensor(1.0))),
    ("index_put_ accumulate", lambda t: tp.index_put_(t, [None, idx([0, 0])], tp.tensor(1.0), accumulate=True)),
    ("masked_fill_", lambda t: t.masked_fill_(tp.tensor([True, False, False]), 1.0)),
    ("masked_fill_ tensor", lambda t: t.masked_fill_(tp.tensor([True, False, False]), tp.tensor(1.0))),
]


@pytest.mark.parametrize("name,op", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_ops_write_through_views_and_bump_version(name, op):
    base = tp.zeros(3, 3)
    view = base.t()
    before = base._version
    assert op(view) is view
    assert base._version > before and view._version == base._version
    assert base.sum().item() > 0


# -- errors ----------------------------------------------------------------------------------------------
X = tp.zeros(3, 4)
L = idx([0, 1])
ERRORS = [
    (lambda: X.index_select(0, idx([3])), IndexError, "index out of range in self"),
    (lambda: X.index_select(0, idx([-1])), IndexError, "index out of range in self"),
    (lambda: X.index_select(-1, idx([-1, 7])), RuntimeError, "INDICES element is out of DATA bounds, id=-1 axis_dim=4"),
    (lambda: X.index_select(0, idx([0], tp.int16)), RuntimeError,
     r"index_select\(\): Expected dtype int32 or int64 for index"),
    (lambda: X.index_select(0, idx([[0]])), IndexError, r"index_select\(\): Index is supposed to be a vector"),
    (lambda: X.index_select(2, L), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\]"),
    (lambda: tp.zeros(0, 4).index_select(0, L), RuntimeError, "self indexing axis dim should be positive"),
    (lambda: X.gather(1, idx([[0, 5]])), RuntimeError, "index 5 is out of bounds for dimension 1 with size 4"),
    (lambda: X.gather(1, idx([[0, -1]])), RuntimeError, "index -1 is out of bounds for dimension 1 with size 4"),
    (lambda: X.gather(1, idx([[0.0]], tp.float32)), RuntimeError, r"gather\(\): Expected dtype int32/int64"),
    (lambda: X.gather(1, L), RuntimeError, "Index tensor must have the same number of dimensions as input tensor"),
    (lambda: X.gather(1, tp.zeros(4, 2, dtype=tp.int64)), RuntimeError,
     r"Size does not match at dimension 0 expected index \[4, 2\] to be no larger than self \[3, 4\] apart "
     r"from dimension 1"),
    (lambda: X.scatter(1, idx([[0, 9]]), tp.ones(1, 2)), RuntimeError,
     "index 9 is out of bounds for dimension 1 with size 4"),
    (lambda: X.scatter_add(1, idx([[0, 4]]), tp.ones(1, 2)), RuntimeError, "index 4 is out of bounds"),
    (lambda: X.scatter(1, idx([[0, 1]]), tp.ones(1, 2, dtype=tp.float64)), RuntimeError,
     r"scatter\(\): Expected self.dtype to be equal to src.dtype"),
    (lambda: X.scatter_add(1, idx([[0]], tp.int16), X), RuntimeError, r"scatter\(\): Expected dtype int32/int64"),
    (lambda: X.scatter(1, idx([[0, 1], [1, 1]]), tp.ones(1, 2)), RuntimeError,
     r"Expected index \[2, 2\] to be no larger than self \[3, 4\] apart from dimension 1 and to be no larger "
     r"size than src \[1, 2\]"),
    (lambda: X.scatter(1, L, 1.0), RuntimeError, "Index tensor must have the same number of dimensions as self"),
    (lambda: X.scatter(1, idx([[0, 1]]), tp.ones(2)), RuntimeError, "same number of dimensions as src tensor"),
    (lambda: tp.zeros(2, dtype=tp.int8).scatter(0, idx([0]), 300), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    (lambda: X.index_put((idx([5]),), tp.tensor(1.0)), IndexError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: X.index_put((idx([0]), idx([-5])), tp.tensor(1.0)), IndexError,
     "index -5 is out of bounds for dimension 1 with size 4"),
    (lambda: X.index_put((idx([0], tp.int16),), tp.tensor(1.0)), IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda: X.index_put((L, L, L), tp.tensor(1.0)), IndexError,
     r"too many indices for tensor of dimension 2 \(got 3\)"),
    (lambda: X.index_put((tp.tensor([True, False]),), tp.tensor(1.0)), IndexError,
     r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor \[3, 4\] at index 0"),
    (lambda: X.index_put((L,), tp.ones(3)), RuntimeError,
     r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to indexing result of shape \[2, 4\]"),
    (lambda: tp.zeros(3).index_put((tp.tensor([True, False, True]),), tp.ones(3)), RuntimeError,
     r"value tensor of shape \[3\] cannot be broadcast to indexing result of shape \[2\]"),
    (lambda: tp.zeros(3).index_put((L,), tp.ones(1, 2)), RuntimeError, r"value tensor of shape \[1, 2\]"),
    (lambda: X.index_put((L, idx([0, 1, 2])), tp.tensor(1.0)), IndexError,
     r"shape mismatch: indexing tensors could not be broadcast together with shapes \[2\], \[3\]"),
    (lambda: X.index_put((L,), tp.ones(4, dtype=tp.float64)), RuntimeError,
     "Index put requires the source and destination dtypes match, got Float for the destination and Double "
     "for the source."),
    (lambda: tp.zeros(2, 0).index_put((None, idx([1])), tp.tensor(1.0)), IndexError,
     "index is out of bounds for dimension with size 0"),
    (lambda: tp.tensor(1.0).index_put((tp.tensor(True),), tp.tensor(3.0)), IndexError,
     r"too many indices for tensor of dimension 0 \(got 1\)"),
    (lambda: X.index_put((None,), tp.tensor(1.0)), IndexError, "at least one of the indices must be a tensor"),
    (lambda: X.index_put((L, 1), tp.tensor(1.0)), TypeError, "expected Tensor as element 1|tuple of Tensors"),
    (lambda: tp.zeros(3).masked_fill(tp.tensor([1, 0, 1], dtype=tp.uint8), 2), RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"),
    (lambda: tp.zeros(3).masked_fill(tp.tensor([1, 0, 1]), 2), RuntimeError, "mask with dtype long int"),
    (lambda: tp.zeros(3).masked_fill(tp.ones(3, dtype=tp.bool), tp.ones(1)), RuntimeError,
     r"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension\(s\)."),
    (lambda: tp.zeros(3).masked_fill(tp.ones(2, dtype=tp.bool), 2), RuntimeError,
     r"The size of tensor a \(2\) must match the size of tensor b \(3\)"),
    (lambda: tp.zeros(2, dtype=tp.int8).masked_fill(tp.ones(2, dtype=tp.bool), 200), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    (lambda: tp.zeros(2, dtype=tp.int32).masked_fill(tp.ones(2, dtype=tp.bool), math.nan), RuntimeError,
     "value cannot be converted to type int without overflow"),
    (lambda: tp.zeros(2, dtype=tp.uint8).masked_fill(tp.ones(2, dtype=tp.bool), 256), RuntimeError,
     "to type uint8_t without overflow"),
    (lambda: tp.zeros(2, dtype=tp.float16).masked_fill(tp.ones(2, dtype=tp.bool), 7e4), RuntimeError,
     "to type c10::Half without overflow"),
    (lambda: tp.zeros(2).masked_fill(tp.ones(2, dtype=tp.bool), 1e39), RuntimeError,
     "to type float without overflow"),
    (lambda: tp.cat([tp.zeros(2, 3), tp.zeros(2, 4)]), RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1 in "
     "the list."),
    (lambda: tp.cat([tp.zeros(2, 3), tp.zeros(0), tp.zeros(5, 4)]), RuntimeError, "for tensor number 2 in the list"),
    (lambda: tp.cat([tp.zeros(2, 3), tp.zeros(3, 4)], 1), RuntimeError,
     "except in dimension 1. Expected size 2 but got size 3"),
    (lambda: tp.cat([tp.zeros(2, 3), tp.zeros(2, 3, 1)]), RuntimeError,
     "Tensors must have same number of dimensions: got 2 and 3"),
    (lambda: tp.cat([tp.zeros(2), tp.zeros(())]), RuntimeError,
     r"zero-dimensional tensor \(at position 1\) cannot be concatenated"),
    (lambda: tp.cat([]), ValueError, r"cat\(\): expected a non-empty list of Tensors"),
    (lambda: tp.cat([tp.zeros(2), 3]), TypeError, "expected Tensor as element 1 in argument 0|tuple of Tensors"),
    (lambda: tp.cat(tp.zeros(2, 2)), TypeError, r"must be tuple of Tensors, not Tensor"),
    (lambda: tp.cat([X, X], 2), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\]"),
    (lambda: X.sort(2), IndexError, "Dimension out of range"),
    (lambda: X.topk(5), RuntimeError, "selected index k out of range"),
    (lambda: X.topk(-1), RuntimeError, "selected index k out of range"),
    (lambda: tp.tensor(1.0).topk(2), RuntimeError, "selected index k out of range"),
    (lambda: tp.tensor([True]).topk(1), RuntimeError, "topk does not support bool dtypes"),
    (lambda: X.scatter(0, L), TypeError, "expected a src tensor or a value"),
]


@pytest.mark.parametrize("call,exc,match", ERRORS)
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_public_functions_and_methods_are_documented():
    for name in ("index_select", "gather", "scatter", "scatter_add", "index_put", "index_put_", "masked_fill",
                 "cat", "concat", "concatenate", "sort", "argsort", "topk"):
        assert getattr(tp, name).__doc__, name
    for name in ("scatter_", "scatter_add_", "masked_fill_", "index_put_"):
        assert getattr(tp.Tensor, name).__doc__, name
