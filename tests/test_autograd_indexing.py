"""Backward of the indexing primitives (index_select, gather, scatter_, scatter_add_, index_put_,
masked_fill_, cat, sort, index) and of what is built on them: the functional forms, ``x[...]`` and
``x[...] = v`` on tensors that require grad.

Gradients are checked against central finite differences (``gradcheck`` in float64), second derivatives
with ``gradgradcheck``, and accumulation over duplicate indices against counts computed with numpy.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.autograd import gradcheck

from test_autograd_reductions import F64, check_gradgrad, grad_of, rand, values


def ix(*data):
    return tp.tensor(list(data) if len(data) > 1 else data[0], dtype=tp.int64)


MASK = tp.tensor([[True, False, True, False], [False, False, True, True], [True, True, False, False]])

# (id, input shapes, fn): every input requires grad
GRADCHECK = [
    ("index_select dim 0", [(3, 4)], lambda a: a.index_select(0, ix(2, 0))),
    ("index_select dim -1 duplicates", [(3, 4)], lambda a: a.index_select(-1, ix(1, 3, 1, 1))),
    ("index_select 0-dim index", [(3, 4)], lambda a: a.index_select(1, ix(2))),
    ("index_select 0-dim input", [()], lambda a: a.index_select(0, ix([0]))),
    ("index_select empty index", [(3, 4)], lambda a: a.index_select(0, ix([]))),
    ("gather dim 1", [(3, 4)], lambda a: a.gather(1, ix([[0, 0, 3], [1, 2, 2]]))),
    ("gather dim 0 duplicates", [(3, 4)], lambda a: tp.gather(a, 0, ix([[2, 2, 2, 2], [0, 2, 1, 2]]))),
    ("gather 0-dim", [()], lambda a: a.gather(0, ix(0))),
    ("scatter", [(3, 4), (2, 3)], lambda a, s: a.scatter(1, ix([[0, 1, 2], [3, 0, 1]]), s)),
    ("scatter src larger than index", [(3, 4), (3, 5)], lambda a, s: a.scatter(0, ix([[2, 0], [1, 2]]), s)),
    ("scatter 0-dim index", [(3,), (2,)], lambda a, s: a.scatter(0, ix(1), s)),
    ("scatter_add 0-dim src", [(3,), ()], lambda a, s: a.scatter_add(0, ix([2]), s)),
    ("scatter value", [(3, 4)], lambda a: a.scatter(1, ix([[0, 3], [2, 1]]), 2.5)),
    ("scatter_add duplicates", [(3, 4), (2, 3)], lambda a, s: a.scatter_add(0, ix([[0, 0, 0], [0, 2, 0]]), s)),
    ("scatter_add src larger than index", [(3, 4), (2, 5)],
     lambda a, s: tp.scatter_add(a, 1, ix([[3, 3], [0, 1]]), s)),
    ("scatter_ on a non-leaf", [(3, 4), (2, 2)], lambda a, s: (a * 1).scatter_(1, ix([[0, 2], [1, 3]]), s)),
    ("scatter_add_ on a non-leaf", [(3, 4), (1, 4)],
     lambda a, s: (a * 1).scatter_add_(0, ix([[2, 2, 0, 1]]), s)),
    ("index_put", [(3, 4), (2, 4)], lambda a, v: a.index_put((ix(2, 0),), v)),
    ("index_put accumulate duplicates", [(3, 4), (3, 4)], lambda a, v: a.index_put((ix(1, 1, 0),), v, True)),
    ("index_put broadcast values", [(3, 4), (4,)], lambda a, v: a.index_put((ix(2, 0),), v)),
    ("index_put 0-dim values", [(3, 4), ()], lambda a, v: tp.index_put(a, (ix(2, 0), ix(1, 1)), v, True)),
    ("index_put two indices", [(3, 4), (3,)], lambda a, v: a.index_put((ix(0, 2, 2), ix(1, 3, 3)), v, True)),
    ("index_put None then index", [(3, 4), (3, 2)], lambda a, v: a.index_put([None, ix(3, 0)], v)),
    ("index_put mask", [(3, 4), (6,)], lambda a, v: a.index_put((MASK,), v)),
    ("index_put_ on a non-leaf", [(3, 4), (2, 4)], lambda a, v: (a * 1).index_put_((ix(0, 2),), v)),
    ("masked_fill tensor value", [(3, 4), ()], lambda a, w: a.masked_fill(MASK, w)),
    ("masked_fill broadcast mask", [(3, 4), ()], lambda a, w: a.masked_fill(tp.tensor([True, False, False, True]), w)),
    ("masked_fill broadcast self", [(1, 4), ()], lambda a, w: tp.masked_fill(a, MASK, w)),
    ("masked_fill scalar", [(3, 4)], lambda a: a.masked_fill(MASK, 0.5)),
    ("masked_fill_ on a non-leaf", [(3, 4), ()], lambda a, w: (a * 1).masked_fill_(MASK[0], w)),
    ("cat dim 0", [(2, 3), (1, 3)], lambda a, b: tp.cat([a, b])),
    ("cat dim -1 three", [(2, 3), (2, 1), (2, 2)], lambda a, b, c: tp.cat((a, b, c), -1)),
    ("cat one tensor", [(2, 3)], lambda a: tp.cat([a], 1)),
    ("cat the same tensor twice", [(2, 3)], lambda a: tp.concat([a, a], 0)),
    ("cat 1-D", [(3,), (2,)], lambda a, b: tp.cat([a, b])),
    ("sort values", [(3, 4)], lambda a: a.sort(1).values),
    ("index", [(3, 4)], lambda a: a[ix(0, 2, 0)]),
    ("index 2-D index", [(3, 4)], lambda a: a[ix([[0, 1], [2, 2]])]),
    ("index mask", [(3, 4)], lambda a: a[MASK]),
    ("index row mask", [(3, 4)], lambda a: a[tp.tensor([True, False, True])]),
    ("index list", [(3, 4)], lambda a: a[[2, 2, 1]]),
    ("index two lists", [(3, 4)], lambda a: a[[0, 2, 2], [1, 3, 3]]),
    ("index then slice", [(3, 4)], lambda a: a[[0, 2], 1:3]),
    ("slice then index", [(3, 4)], lambda a: a[:, [3, 1, 3]]),
    ("separated indices", [(2, 3, 4)], lambda a: a[[1, 0], :, [3, 3]]),
    ("index with None and ellipsis", [(2, 3, 4)], lambda a: a[None, ..., ix(0, 2)]),
    ("basic int and slice", [(3, 4)], lambda a: a[0, 1:3]),
    ("basic stepped slice", [(3, 4)], lambda a: a[::2, 1::2]),
]


@pytest.mark.parametrize("shapes,fn", [c[1:] for c in GRADCHECK], ids=[c[0] for c in GRADCHECK])
def test_gradients_match_finite_differences(shapes, fn):
    assert gradcheck(fn, tuple(rand(*s, seed=i) for i, s in enumerate(shapes)))


GRADGRAD = [
    ("index_select", [(3, 4)], lambda a: a.index_select(1, ix(1, 3, 1))),
    ("gather", [(3, 4)], lambda a: a.gather(1, ix([[0, 0, 3], [1, 2, 2]]))),
    ("cat", [(2, 3), (1, 3)], lambda a, b: tp.cat([a, b])),
    ("cat with duplicate", [(2, 3)], lambda a: tp.cat([a, a], 1)),
    ("scatter_add", [(3, 4), (2, 3)], lambda a, s: a.scatter_add(0, ix([[0, 0, 0], [0, 2, 0]]), s)),
    ("scatter", [(3, 4), (2, 3)], lambda a, s: a.scatter(1, ix([[0, 1, 2], [3, 0, 1]]), s)),
    ("scatter src larger than index", [(3, 4), (3, 5)], lambda a, s: a.scatter(0, ix([[2, 0], [1, 2]]), s)),
    ("index_put accumulate", [(3, 4), (3, 4)], lambda a, v: a.index_put((ix(1, 1, 0),), v, True)),
    ("index", [(3, 4)], lambda a: a[[0, 2, 2], [1, 3, 3]]),
    ("masked_fill", [(3, 4), ()], lambda a, w: a.masked_fill(MASK, w)),
    ("sort values", [(3, 4)], lambda a: a.sort(0).values),
]


@pytest.mark.parametrize("shapes,fn", [c[1:] for c in GRADGRAD], ids=[c[0] for c in GRADGRAD])
def test_second_derivatives(shapes, fn):
    check_gradgrad(fn, tuple(rand(*s, seed=i) for i, s in enumerate(shapes)))


# -- duplicates accumulate --------------------------------------------------------------------------
def test_index_select_duplicates_accumulate():
    idx = [3, 1, 3, 3, 0]
    g = grad_of(lambda a: a.index_select(1, ix(*idx)), rand(2, 4))
    np.testing.assert_array_equal(g, np.broadcast_to(np.bincount(idx, minlength=4), (2, 4)))


def test_index_duplicates_accumulate():
    rows, cols = [0, 2, 0, 0], [1, 3, 1, 1]
    up = values((4,), [1, 2, 3, 4], requires_grad=False)
    expected = np.zeros((3, 4))
    np.add.at(expected, (rows, cols), [1, 2, 3, 4])
    np.testing.assert_array_equal(grad_of(lambda a: a[rows, cols], rand(3, 4), up), expected)


def test_gather_duplicates_accumulate():
    idx = np.array([[0, 0, 0], [2, 1, 2]])
    expected = np.zeros((2, 3))
    for i, row in enumerate(idx):
        expected[i] = np.bincount(row, minlength=3)
    np.testing.assert_array_equal(grad_of(lambda a: a.gather(1, ix(idx.tolist())), rand(2, 3)), expected)


def test_index_put_without_accumulate_zeroes_written_positions():
    up = values((3, 2), np.arange(1, 7), requires_grad=False)
    x, v = rand(3, 2), rand(2, 2, seed=1)
    out = x.index_put((ix(2, 0),), v)
    gx, gv = tp.autograd.grad([out], [x, v], [up])
    np.testing.assert_array_equal(gx._host(), [[0, 0], [3, 4], [0, 0]])
    np.testing.assert_array_equal(gv._host(), [[5, 6], [1, 2]])


def test_index_put_broadcast_values_get_summed_gradient():
    up = values((3, 2), np.arange(1, 7), requires_grad=False)
    x, v = rand(3, 2), rand(2, seed=1)
    (gv,) = tp.autograd.grad([x.index_put((ix(2, 0, 2),), v, True)], [v], [up])
    np.testing.assert_array_equal(gv._host(), [5 + 1 + 5, 6 + 2 + 6])


def test_scatter_zeroes_the_gradient_of_overwritten_positions():
    up = values((2, 3), np.arange(1, 7), requires_grad=False)
    x, s = rand(2, 3), rand(2, 2, seed=1)
    gx, gs = tp.autograd.grad([x.scatter(1, ix([[2, 0], [1, 1]]), s)], [x, s], [up])
    np.testing.assert_array_equal(gx._host(), [[0, 2, 0], [4, 0, 6]])
    np.testing.assert_array_equal(gs._host(), [[3, 1], [5, 5]])


def test_masked_fill_value_gets_the_sum_of_masked_gradients():
    up = values((3, 4), np.arange(12), requires_grad=False)
    x, w = rand(3, 4), values((), 2.0)
    gx, gw = tp.autograd.grad([x.masked_fill(MASK, w)], [x, w], [up])
    m = MASK._host()
    np.testing.assert_array_equal(gx._host(), np.where(m, 0, np.arange(12).reshape(3, 4)))
    assert gw.shape == () and gw.item() == np.arange(12).reshape(3, 4)[m].sum()


def test_masked_fill_value_of_another_dtype_gets_its_own_dtype():
    x, w = rand(2, 2), tp.tensor(1.0, dtype=tp.float32, requires_grad=True)
    x.masked_fill(tp.tensor([[True, False], [True, True]]), w).sum().backward()
    assert w.grad.dtype is tp.float32 and w.grad.item() == 3.0


# -- cat: a list of gradients -------------------------------------------------------------------
def test_cat_gives_every_list_element_its_gradient():
    a, b, c = rand(2, 2), tp.zeros(0, dtype=F64, requires_grad=True), rand(2, 1, seed=1)
    up = values((2, 3), np.arange(6), requires_grad=False)
    ga, gb, gc = tp.autograd.grad([tp.cat([a, b, c], 1)], [a, b, c], [up])
    np.testing.assert_array_equal(ga._host(), [[0, 1], [3, 4]])
    assert gb.shape == (0,)  # skipped by cat, but still an input: an empty gradient, as in PyTorch
    np.testing.assert_array_equal(gc._host(), [[2], [5]])


def test_cat_of_mixed_dtypes_gives_each_input_its_dtype():
    a = tp.tensor([1.0, 2.0], dtype=tp.float32, requires_grad=True)
    b = tp.tensor([3.0], dtype=F64, requires_grad=True)
    out = tp.cat([a, b])
    assert out.dtype is F64
    (out * values((3,), [1, 2, 3], requires_grad=False)).sum().backward()
    assert a.grad.dtype is tp.float32 and b.grad.dtype is F64
    np.testing.assert_array_equal(a.grad._host(), [1, 2])
    np.testing.assert_array_equal(b.grad._host(), [3])


def test_cat_with_inputs_that_need_no_grad():
    a, b = rand(2), rand(3, requires_grad=False)
    (g,) = tp.autograd.grad([tp.cat([b, a]).sum()], [a])
    np.testing.assert_array_equal(g._host(), [1, 1])


# -- empty tensors ---------------------------------------------------------------------------------
EMPTY = [
    ("index_select", lambda a: a.index_select(1, ix(0, 0))),
    ("gather", lambda a: a.gather(0, tp.zeros(0, 2, dtype=tp.int64))),
    ("index", lambda a: a[ix([])]),
    ("cat", lambda a: tp.cat([a, a])),
    ("sort", lambda a: a.sort(0).values),
    ("masked_fill", lambda a: a.masked_fill(tp.zeros(0, 3, dtype=tp.bool), 1.0)),
]


@pytest.mark.parametrize("fn", [c[1] for c in EMPTY], ids=[c[0] for c in EMPTY])
def test_empty_inputs(fn):
    x = tp.zeros(0, 3, dtype=F64, requires_grad=True)
    fn(x).sum().backward()
    assert x.grad.shape == (0, 3)


# -- x[...] = v on tensors that require grad -----------------------------------------------------------
def _set(key, scalar=None):
    def fn(a, *v):
        y = a * 1
        y[key] = v[0] if v else scalar
        return y
    return fn


SETITEM = [
    pytest.param([(3, 4)], _set((0, slice(1, 3)), scalar=2.0), id="basic scalar"),
    pytest.param([(3, 4), (2,)], _set((0, slice(1, 3))), id="basic tensor"),
    pytest.param([(3, 4), (2, 4)], _set([0, 2]), id="advanced"),
    pytest.param([(3, 4), ()], _set(MASK), id="mask"),
    pytest.param([(3, 4), (2, 2)], _set((slice(1, None), [0, 3])), id="view then advanced"),
]


@pytest.mark.parametrize("shapes,fn", SETITEM)
def test_setitem_on_a_non_leaf(shapes, fn):
    assert gradcheck(fn, tuple(rand(*s, seed=i) for i, s in enumerate(shapes)))


def test_setitem_on_a_leaf_that_requires_grad_raises():
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation"):
        rand(3)[[0, 1]] = 1.0


# -- forward checks the backward relies on -------------------------------------------------------
@pytest.mark.parametrize("index", [[0, 0], []], ids=["two", "none"])
def test_index_select_of_a_0_dim_tensor_takes_one_index(index):
    n = len(index)
    with pytest.raises(RuntimeError, match=rf"index_select\(\): Index to scalar can have only 1 value, "
                                           rf"got {n} value\(s\)"):
        tp.tensor(5.0).index_select(0, ix(index))


def test_uint8_mask_warns_only_in_the_forward_call():
    x, m = rand(3, 4), MASK.to(tp.uint8)
    with pytest.warns(UserWarning, match="indexing with dtype") as forward:
        out = x[m]
    assert len(forward) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out.sum().backward()
    np.testing.assert_array_equal(x.grad._host(), MASK._host().astype(float))
