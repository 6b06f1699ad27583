"""Backward of the reductions, matmul and random primitives, and of the composites built on them.

Gradients are checked against central finite differences (``gradcheck`` in float64), second derivatives
with ``gradgradcheck``, and the cases finite differences cannot judge (ties, zeros, overwritten values)
against gradients worked out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp
from tensorplug.autograd import gradcheck, gradgradcheck

F64 = tp.float64


def rand(*shape, seed=0, requires_grad=True):
    """float64 values spread well apart (no near-ties for finite differences to straddle)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    vals = (rng.permutation(n) + rng.uniform(0.2, 0.8, n)) * (1 if n % 2 else -1) / max(n, 1) * 3
    return tp.tensor(vals.reshape(shape), dtype=F64, requires_grad=requires_grad)


def values(shape, data, requires_grad=True):
    return tp.tensor(np.asarray(data, dtype=np.float64).reshape(shape), dtype=F64, requires_grad=requires_grad)


def check_gradgrad(fn, inputs):
    """gradgradcheck with ``fn`` under enable_grad: gradgradcheck's finite differences call it under no_grad,
    where the first derivatives it differentiates would have no graph."""
    def with_grad(*args):
        with tp.enable_grad():
            return fn(*args)
    assert gradgradcheck(with_grad, inputs)


def grad_of(fn, x, upstream=None):
    """d(sum(fn(x) * upstream))/dx as numpy."""
    out = fn(x)
    g = tp.ones(out.shape, dtype=out.dtype) if upstream is None else upstream
    (res,) = tp.autograd.grad([out], [x], [g])
    return res._host()


# -- reductions against finite differences ----------------------------------------------------
REDUCTIONS = [
    ("sum all", (3, 4), lambda a: a.sum()),
    ("sum dim", (3, 4), lambda a: a.sum(1)),
    ("sum negative dim", (2, 3, 4), lambda a: a.sum(-2)),
    ("sum dims keepdim", (2, 3, 4), lambda a: a.sum((0, 2), keepdim=True)),
    ("sum dims", (2, 3, 4), lambda a: a.sum((2, 0))),
    ("sum 0-dim", (), lambda a: a.sum(0)),
    ("sum 0-dim keepdim", (), lambda a: a.sum(-1, keepdim=True)),
    ("prod all", (2, 3), lambda a: a.prod()),
    ("prod dim", (3, 4), lambda a: a.prod(1)),
    ("prod keepdim", (3, 4), lambda a: a.prod(0, keepdim=True)),
    ("prod 0-dim", (), lambda a: a.prod(0)),
    ("prod size-1 dim", (3, 1), lambda a: a.prod(1)),
    ("cumsum dim 0", (3, 4), lambda a: a.cumsum(0)),
    ("cumsum dim -1", (2, 3, 4), lambda a: a.cumsum(-1)),
    ("cumsum 0-dim", (), lambda a: a.cumsum(0)),
    ("amax all", (3, 4), lambda a: a.amax()),
    ("amax dim", (3, 4), lambda a: a.amax(1)),
    ("amax dims keepdim", (2, 3, 4), lambda a: a.amax((0, 2), keepdim=True)),
    ("amin dim", (3, 4), lambda a: a.amin(0)),
    ("amin dims", (2, 3, 4), lambda a: a.amin((-1, 1))),
    ("amax 0-dim", (), lambda a: a.amax()),
    ("max full", (3, 4), lambda a: a.max()),
    ("min full", (3, 4), lambda a: a.min()),
    ("max dim", (3, 4), lambda a: a.max(1).values),
    ("max dim keepdim", (3, 4), lambda a: a.max(0, keepdim=True).values),
    ("min dim", (2, 3, 4), lambda a: a.min(-1).values),
    ("min dim keepdim", (3, 4), lambda a: tp.min(a, 1, keepdim=True)[0]),
    ("max 0-dim", (), lambda a: a.max(0).values),
    ("topk largest", (3, 5), lambda a: a.topk(2).values),
    ("topk smallest dim 0", (4, 3), lambda a: a.topk(3, 0, largest=False).values),
    ("topk 0-dim", (), lambda a: a.topk(1).values),
    ("sort values", (3, 4), lambda a: a.sort().values),
    ("sort descending dim 0", (3, 4), lambda a: a.sort(0, descending=True).values),
    ("sort stable", (5,), lambda a: tp.sort(a, stable=True).values),
    ("sort 0-dim", (), lambda a: a.sort().values),
    ("mean (sum composite)", (3, 4), lambda a: a.mean(1)),
    ("logsumexp (amax composite)", (3, 4), lambda a: a.logsumexp(1)),
]


@pytest.mark.parametrize("shape,fn", [c[1:] for c in REDUCTIONS], ids=[c[0] for c in REDUCTIONS])
def test_reduction_gradients_match_finite_differences(shape, fn):
    assert gradcheck(fn, (rand(*shape),))


PROD_WITH_ZEROS = [
    ("one zero per slice", (2, 4), [[2, 0, 3, 4], [1, 5, 0, 2]], lambda a: a.prod(1)),
    ("two zeros in a slice", (2, 4), [[2, 0, 3, 0], [1, 5, 6, 2]], lambda a: a.prod(1)),
    ("zeros along dim 0", (3, 2), [[0, 1], [2, 0], [3, 4]], lambda a: a.prod(0, keepdim=True)),
    ("full product", (5,), [2, 0, 3, 4, 1.5], lambda a: a.prod()),
    ("all zeros", (3,), [0, 0, 0], lambda a: a.prod(0)),
]


@pytest.mark.parametrize("shape,data,fn", [c[1:] for c in PROD_WITH_ZEROS], ids=[c[0] for c in PROD_WITH_ZEROS])
def test_prod_with_zeros_first_and_second_derivatives(shape, data, fn):
    x = values(shape, data)
    assert gradcheck(fn, (x,))
    check_gradgrad(fn, (x,))


@pytest.mark.parametrize("data,expected", [
    ([2, 0, 3, 4], [0, 24, 0, 0]),   # the zero's gradient is the product of the others
    ([2, 0, 3, 0], [0, 0, 0, 0]),    # two zeros: every product of others has a zero
    ([2, 5, 3, 4], [60, 24, 40, 30]),
])
def test_prod_gradient_is_product_of_the_others(data, expected):
    np.testing.assert_array_equal(grad_of(lambda a: a.prod(0), values((4,), data)), expected)


@pytest.mark.parametrize("fn", [lambda a: a.sum(1), lambda a: a.sum(), lambda a: a.sum((0, 2), keepdim=True),
                                lambda a: a.prod(2),
                                lambda a: a.cumsum(1)],
                         ids=["sum dim", "sum all", "sum keepdim", "prod", "cumsum"])
def test_reduction_second_derivatives(fn):
    check_gradgrad(fn, (rand(2, 3, 2),))


def test_cumsum_gradient_counts_later_outputs():
    np.testing.assert_array_equal(grad_of(lambda a: a.cumsum(1), rand(2, 4)), [[4, 3, 2, 1]] * 2)


# -- ties: the gradient split evenly (amax/amin, full max/min) or to the chosen index ----------------------
TIES = [
    ("amax dim", [[1, 3, 3, 2], [5, 5, 5, 0]], lambda a: a.amax(1),
     [[0, .5, .5, 0], [1 / 3, 1 / 3, 1 / 3, 0]]),
    ("amin dim 0", [[1, 3, 3, 2], [1, 5, 2, 2]], lambda a: a.amin(0), [[.5, 1, 0, .5], [.5, 0, 1, .5]]),
    ("amax all", [[1, 3, 3, 2], [3, 0, 0, 0]], lambda a: a.amax(), [[0, 1 / 3, 1 / 3, 0], [1 / 3, 0, 0, 0]]),
    ("amax keepdim", [[1, 3, 3, 2], [5, 5, 5, 0]], lambda a: a.amax(1, keepdim=True),
     [[0, .5, .5, 0], [1 / 3, 1 / 3, 1 / 3, 0]]),
    ("max full", [[1, 3, 3, 2], [3, 0, 0, 0]], lambda a: a.max(), [[0, 1 / 3, 1 / 3, 0], [1 / 3, 0, 0, 0]]),
    ("min full", [[1, 3, 3, 2], [1, 4, 4, 4]], lambda a: a.min(), [[.5, 0, 0, 0], [.5, 0, 0, 0]]),
    # max/min over a dim return an index; the gradient goes to that (first) element only
    ("max dim", [[1, 3, 3, 2], [5, 5, 5, 0]], lambda a: a.max(1).values, [[0, 1, 0, 0], [1, 0, 0, 0]]),
    ("min dim", [[1, 3, 3, 2], [1, 5, 2, 2]], lambda a: a.min(0).values, [[1, 1, 0, 1], [0, 0, 1, 0]]),
]


@pytest.mark.parametrize("data,fn,expected", [c[1:] for c in TIES], ids=[c[0] for c in TIES])
def test_ties(data, fn, expected):
    np.testing.assert_allclose(grad_of(fn, values((2, 4), data)), expected, rtol=1e-15)


def test_amax_nan_slice_gets_nan_gradient():
    g = grad_of(lambda a: a.amax(1), values((2, 3), [[1, np.nan, 3], [1, 2, 3]]))
    assert np.isnan(g[0]).all()
    np.testing.assert_array_equal(g[1], [0, 0, 1])


def test_sort_gradient_follows_the_permutation():
    x = values((5,), [3, 1, 2, 1, 0])
    up = values((5,), [10, 20, 30, 40, 50], requires_grad=False)
    # stable ascending order: 0 (idx 4), 1 (idx 1), 1 (idx 3), 2 (idx 2), 3 (idx 0)
    np.testing.assert_array_equal(grad_of(lambda a: a.sort().values, x, up), [50, 20, 40, 30, 10])
    # stable descending: equal keys keep their order too
    np.testing.assert_array_equal(grad_of(lambda a: a.sort(descending=True).values, x, up), [10, 30, 20, 40, 50])


@pytest.mark.parametrize("largest", [True, False])
def test_topk_gradient_goes_to_the_returned_indices(largest):
    x = values((2, 4), [[1, 3, 3, 2], [5, 5, 5, 0]])
    vals, idx = x.topk(2, 1, largest=largest)
    up = values((2, 2), [[10, 20], [30, 40]], requires_grad=False)
    (g,) = tp.autograd.grad([vals], [x], [up])
    expected = np.zeros((2, 4))
    np.put_along_axis(expected, idx._host(), up._host(), 1)
    np.testing.assert_array_equal(g._host(), expected)


def test_sort_indices_carry_no_gradient():
    v, i = rand(3, 4).sort()
    assert v.requires_grad and v.grad_fn.name() == "SortBackward0"
    assert not i.requires_grad and i.grad_fn is None


# -- dtype arguments and empty inputs --------------------------------------------------------------
@pytest.mark.parametrize("fn", [lambda a: a.sum(1, dtype=F64), lambda a: tp.prod(a, 1, dtype=F64),
                                lambda a: a.cumsum(0, dtype=F64)], ids=["sum", "prod", "cumsum"])
def test_gradient_of_a_widened_reduction_has_the_input_dtype(fn):
    x = tp.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tp.float32, requires_grad=True)
    out = fn(x)
    assert out.dtype is F64
    out.sum().backward()
    assert x.grad.dtype is tp.float32
    np.testing.assert_allclose(x.grad._host(), grad_of(fn, x.detach().to(F64).requires_grad_(True)))


EMPTY = [
    ("sum all", lambda a: a.sum()), ("sum dim 0", lambda a: a.sum(0)), ("sum dim 1", lambda a: a.sum(1)),
    ("prod dim 0", lambda a: a.prod(0)), ("prod dim 1", lambda a: a.prod(1)), ("cumsum", lambda a: a.cumsum(0)),
    ("amax non-empty dim", lambda a: a.amax(1)), ("sort", lambda a: a.sort(0).values),
    ("matmul", lambda a: a @ tp.ones(3, 2, dtype=F64)), ("matmul inner 0", lambda a: a.mT @ a),
]


@pytest.mark.parametrize("fn", [c[1] for c in EMPTY], ids=[c[0] for c in EMPTY])
def test_empty_inputs_get_empty_or_zero_gradients(fn):
    x = tp.zeros(0, 3, dtype=F64, requires_grad=True)
    out = fn(x)
    out.sum().backward()
    assert x.grad.shape == (0, 3)


def test_empty_sum_and_prod_gradient_over_empty_dim_is_shaped_like_input():
    x = tp.zeros(2, 0, dtype=F64, requires_grad=True)
    (x.sum(1).sum() + x.prod(1).sum()).backward()
    assert x.grad.shape == (2, 0)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data(), keepdim=st.booleans())
def test_sum_gradient_broadcasts_upstream(shape, data, keepdim):
    ndim = len(shape)
    dims = data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim,
                              unique_by=lambda d: d % ndim))
    x = rand(*shape)
    out = x.sum(tuple(dims), keepdim=keepdim)
    up = rand(*out.shape, seed=1, requires_grad=False)
    (g,) = tp.autograd.grad([out], [x], [up])
    wrapped = tuple(d % ndim for d in dims)
    ref = up._host() if keepdim else np.expand_dims(up._host(), tuple(sorted(wrapped)))
    np.testing.assert_array_equal(g._host(), np.broadcast_to(ref, shape))


# -- matmul and its fixed-rank forms ------------------------------------------------------------------
MATMUL_SHAPES = [
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((3, 4), (4, 5)),
    ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (2, 4, 2)), ((1, 3, 4), (2, 4, 2)),
    ((2, 1, 3, 4), (5, 4, 2)), ((3, 1, 2, 3), (1, 2, 3, 2)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_matmul_gradients(sa, sb):
    a, b = rand(*sa), rand(*sb, seed=1)
    assert gradcheck(lambda p, q: p @ q, (a, b))


@pytest.mark.parametrize("sa,sb", [((4,), (4,)), ((3, 4), (4,)), ((4,), (2, 4, 3)), ((1, 2, 3), (2, 3, 2))],
                         ids=str)
def test_matmul_second_derivatives(sa, sb):
    check_gradgrad(lambda p, q: tp.matmul(p, q), (rand(*sa), rand(*sb, seed=1)))


def test_matmul_gradient_for_one_operand_only():
    a, b = rand(2, 3), rand(3, 2, seed=1, requires_grad=False)
    (g,) = tp.autograd.grad([a @ b], [a], [tp.ones(2, 2, dtype=F64)])
    np.testing.assert_allclose(g._host(), np.ones((2, 2)) @ b._host().T)
    assert b.grad is None


@pytest.mark.parametrize("batch", [(), (2,)], ids=["matrix", "batched"])
def test_matmul_gradients_keep_their_operands_layout(batch):
    # x @ w.t() (as in linear): w's gradient must come out row-major, like w itself, so optimizer
    # updates do not stride; a transposed left operand likewise
    x, w = rand(*batch, 5, 3), rand(*batch, 4, 3, seed=1)
    a = rand(*batch, 3, 5, seed=2)
    out = (x @ w.mT) + (a.mT @ w.mT)
    gx, gw, ga = tp.autograd.grad([out.sum()], [x, w, a])
    assert (gx.is_contiguous(), gw.is_contiguous(), ga.is_contiguous()) == (True, True, True)
    ones = np.ones(batch + (5, 4))
    xn, wn, an = x._host(), w._host(), a._host()
    np.testing.assert_allclose(gx._host(), ones @ wn)
    np.testing.assert_allclose(ga._host(), np.swapaxes(ones @ wn, -1, -2))
    np.testing.assert_allclose(gw._host(), np.swapaxes(ones, -1, -2) @ (xn + np.swapaxes(an, -1, -2)))


COMPOSITES = [
    ("mm", lambda p, q: tp.mm(p, q), (3, 4), (4, 2)),
    ("bmm", lambda p, q: p.bmm(q), (2, 3, 4), (2, 4, 2)),
    ("dot", lambda p, q: tp.dot(p, q), (4,), (4,)),
    ("mv", lambda p, q: p.mv(q), (3, 4), (4,)),
    ("outer", lambda p, q: tp.outer(p, q), (3,), (4,)),
]


@pytest.mark.parametrize("fn,sa,sb", [c[1:] for c in COMPOSITES], ids=[c[0] for c in COMPOSITES])
def test_fixed_rank_products_differentiate_through_matmul(fn, sa, sb):
    assert gradcheck(fn, (rand(*sa), rand(*sb, seed=1)))


@settings(max_examples=25, deadline=None)
@given(ranks=st.tuples(st.integers(1, 4), st.integers(1, 4)), data=st.data())
def test_matmul_broadcast_gradients(ranks, data):
    """Random ranks and batch shapes (size-1 dims broadcast against the other operand's)."""
    m, k, n = (data.draw(st.integers(1, 3)) for _ in range(3))
    batch = data.draw(st.lists(st.integers(1, 2), min_size=2, max_size=2))
    ra, rb = ranks

    def operand_batch(r):
        return tuple(data.draw(st.sampled_from([1, b])) for b in batch[len(batch) - (r - 2):]) if r > 2 else ()
    sa = operand_batch(ra) + ((m, k) if ra > 1 else (k,))
    sb = operand_batch(rb) + ((k, n) if rb > 1 else (k,))
    assert gradcheck(lambda p, q: p @ q, (rand(*sa), rand(*sb, seed=1)))


# -- non-differentiable outputs ---------------------------------------------------------------------
NON_DIFFERENTIABLE = [
    ("argmax", lambda a: a.argmax()), ("argmin dim", lambda a: a.argmin(1)), ("any", lambda a: (a > 0).any()),
    ("all", lambda a: tp.all(a, 1)), ("any float input", lambda a: a.any(0)),
    ("max indices", lambda a: a.max(1).indices), ("sort indices", lambda a: a.sort().indices),
    ("topk indices", lambda a: a.topk(2).indices), ("argsort", lambda a: a.argsort()),
    ("multinomial", lambda a: tp.multinomial(a.abs(), 2)), ("randperm", lambda a: tp.randperm(4)),
]


@pytest.mark.parametrize("fn", [c[1] for c in NON_DIFFERENTIABLE], ids=[c[0] for c in NON_DIFFERENTIABLE])
def test_integer_and_bool_results_have_no_history(fn):
    out = fn(rand(3, 4))
    assert not out.dtype.is_floating_point
    assert not out.requires_grad and out.grad_fn is None


# -- random in-place ops: the overwritten values get a zero gradient -----------------------------------------
RANDOM_INPLACE = [
    ("uniform_", lambda y: y.uniform_(), "UniformBackward0"),
    ("normal_", lambda y: y.normal_(2.0, 3.0), "NormalBackward0"),
    ("bernoulli_", lambda y: y.bernoulli_(0.3), "BernoulliBackward0"),
    ("random_", lambda y: y.random_(0, 5), "RandomBackward0"),
    ("random_ to", lambda y: y.random_(7), "RandomBackward0"),
]


@pytest.mark.parametrize("fn,node", [c[1:] for c in RANDOM_INPLACE], ids=[c[0] for c in RANDOM_INPLACE])
def test_random_inplace_gives_zero_gradient_to_overwritten_values(fn, node):
    tp.manual_seed(0)
    a = rand(3)
    y = a * 2
    out = fn(y)
    assert out is y and y.grad_fn.name() == node
    (y * 3).sum().backward()
    np.testing.assert_array_equal(a.grad._host(), np.zeros(3))
    # autograd.grad returns the zeros rather than complaining that the input was unused
    b = rand(3)
    (g,) = tp.autograd.grad([fn(b * 2).sum()], [b])
    np.testing.assert_array_equal(g._host(), np.zeros(3))


@pytest.mark.parametrize("fn", [c[1] for c in RANDOM_INPLACE], ids=[c[0] for c in RANDOM_INPLACE])
def test_random_inplace_on_a_view_keeps_the_rest_of_the_gradient(fn):
    tp.manual_seed(0)
    a = rand(4)
    y = a * 2
    fn(y[1:3])
    (y * values((4,), [1, 2, 3, 4], requires_grad=False)).sum().backward()
    np.testing.assert_array_equal(a.grad._host(), [2, 0, 0, 8])


@pytest.mark.parametrize("fn", [c[1] for c in RANDOM_INPLACE], ids=[c[0] for c in RANDOM_INPLACE])
def test_random_inplace_on_a_leaf_that_requires_grad_raises(fn):
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place "
                                           "operation"):
        fn(rand(3))


def test_bernoulli_of_probabilities_gives_zero_gradient():
    tp.manual_seed(0)
    p = values((3,), [0.2, 0.5, 0.9])
    out = tp.bernoulli(p)
    assert out.requires_grad and out.grad_fn.name() == "BernoulliBackward0"
    (g,) = tp.autograd.grad([out.sum()], [p])
    np.testing.assert_array_equal(g._host(), np.zeros(3))


def test_random_factories_do_not_require_grad_unless_asked():
    assert not tp.rand(3).requires_grad
    r = tp.randn(3, dtype=F64, requires_grad=True)
    assert r.requires_grad and r.is_leaf
