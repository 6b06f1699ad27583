"""Backward formulas of the elementwise primitives.

Every differentiable primitive is checked against central finite differences
(``gradcheck``) on float64 inputs inside its domain and away from its
non-differentiable points, and its smooth formulas against second differences
(``gradgradcheck``); then broadcasting, scalar operands, in-place forms on
non-leaves and on views, the values PyTorch gives at non-differentiable points,
dtypes, node names and the errors in-place ops raise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp
from tensorplug import autograd
from tensorplug.autograd import gradcheck, gradgradcheck


def leaf(values, dtype=tp.float64):
    return tp.tensor(np.asarray(values, dtype=np.float64), dtype=dtype, requires_grad=True)


def sample(domain, shape=(2, 3), seed=0):
    """Float64 values of ``shape`` inside ``domain``, away from the op's kinks and jumps."""
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.0, 1.0, shape)
    sign = np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0)
    if domain == "any":
        return rng.uniform(-2.0, 2.0, shape)
    if domain == "pos":
        return 0.5 + 1.5 * u
    if domain == "nonzero":
        return sign * (0.3 + 1.5 * u)
    if domain == "unit":
        return 1.6 * u - 0.8
    if domain == "offgrid":  # integers plus 0.1..0.4 (no floor/round/trunc jump nearby)
        return rng.integers(-3, 3, shape) + 0.1 + 0.3 * u
    raise ValueError(domain)


def grads_of(out, inputs, grad=None):
    """d(sum(out * grad)) / d inputs (None where an input gets no gradient)."""
    grad = tp.ones_like(out) if grad is None else grad
    return autograd.grad(out, inputs, grad, allow_unused=True)


# -- unary ops -------------------------------------------------------------------------
SMOOTH_UNARY = [
    # op, domain
    ("exp", "any"), ("exp2", "any"), ("expm1", "any"), ("log", "pos"), ("log2", "pos"), ("log10", "pos"),
    ("log1p", "pos"), ("sqrt", "pos"), ("rsqrt", "pos"), ("sin", "any"), ("cos", "any"), ("tan", "unit"),
    ("asin", "unit"), ("acos", "unit"), ("atan", "any"), ("sinh", "any"), ("cosh", "any"), ("tanh", "any"),
    ("sigmoid", "any"), ("erf", "any"), ("reciprocal", "nonzero"), ("abs", "nonzero"), ("neg", "any"),
    ("frac", "offgrid"),
]
PIECEWISE_CONSTANT = ["sign", "floor", "ceil", "round", "trunc"]
@pytest.mark.parametrize("name,domain", SMOOTH_UNARY)
def test_unary_gradients_match_finite_differences(name, domain):
    fn = getattr(tp, name)
    x = leaf(sample(domain))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("name,domain", SMOOTH_UNARY)
def test_unary_in_place_on_a_non_leaf_matches_finite_differences(name, domain):
    # second derivatives of forms that read the old self go through the kernel's (recorded) copy
    x = leaf(sample(domain, seed=1))
    fn = lambda t: getattr(t * 1, name + "_")()  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("fn", [
    *[getattr(tp, n) for n in PIECEWISE_CONSTANT],
    lambda t: tp.round(t, decimals=1),
    *[lambda t, n=n: getattr(t * 1, n + "_")() for n in PIECEWISE_CONSTANT],
    lambda t: (t * 1).round_(decimals=2),
], ids=PIECEWISE_CONSTANT + ["round_decimals"] + [n + "_" for n in PIECEWISE_CONSTANT] + ["round_decimals_"])
def test_piecewise_constant_ops_give_zero_gradients_not_none(fn):
    x = leaf(sample("offgrid"))
    (g,) = grads_of(fn(x), [x])
    assert g is not None and g.shape == x.shape
    np.testing.assert_array_equal(g.numpy(), np.zeros(x.shape))
    assert gradcheck(fn, (x,))


# -- binary ops ------------------------------------------------------------------------
COND = tp.tensor([[True, False, True], [False, False, True]])
BINARY = [
    # id, function, domain of each input
    ("add", tp.add, "any", "any"),
    ("add_alpha", lambda a, b: tp.add(a, b, alpha=2.5), "any", "any"),
    ("sub", tp.sub, "any", "any"),
    ("sub_alpha", lambda a, b: tp.sub(a, b, alpha=-3), "any", "any"),
    ("mul", tp.mul, "any", "any"),
    ("div", tp.div, "any", "nonzero"),
    ("remainder", tp.remainder, "any", "nonzero"),
    ("fmod", tp.fmod, "any", "nonzero"),
    ("atan2", tp.atan2, "any", "nonzero"),
    ("maximum", tp.maximum, "any", "any"),
    ("minimum", tp.minimum, "any", "any"),
    ("pow", tp.pow, "pos", "any"),
    ("where", lambda a, b: tp.where(COND, a, b), "any", "any"),
    ("clamp_min", lambda a, b: tp.clamp(a, min=b), "any", "any"),
    ("clamp_max", lambda a, b: tp.clamp(a, max=b), "any", "any"),
]
# the in-place form of each (same inputs), where there is one
INPLACE = {
    "add": lambda a, b: (a * 1).add_(b),
    "add_alpha": lambda a, b: (a * 1).add_(b, alpha=2.5),
    "sub": lambda a, b: (a * 1).sub_(b),
    "sub_alpha": lambda a, b: (a * 1).sub_(b, alpha=-3),
    "mul": lambda a, b: (a * 1).mul_(b),
    "div": lambda a, b: (a * 1).div_(b),
    "remainder": lambda a, b: (a * 1).remainder_(b),
    "fmod": lambda a, b: (a * 1).fmod_(b),
    "atan2": lambda a, b: (a * 1).atan2_(b),
    "pow": lambda a, b: (a * 1).pow_(b),
    "clamp_min": lambda a, b: (a * 1).clamp_(min=b),
    "clamp_max": lambda a, b: (a * 1).clamp_(max=b),
}


@pytest.mark.parametrize("op_id,fn,da,db", BINARY, ids=[b[0] for b in BINARY])
def test_binary_gradients_match_finite_differences(op_id, fn, da, db):
    a, b = leaf(sample(da, seed=3)), leaf(sample(db, seed=4))
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


@pytest.mark.parametrize("op_id,fn,da,db", BINARY, ids=[b[0] for b in BINARY])
def test_binary_gradients_broadcast_back_to_each_input_shape(op_id, fn, da, db):
    a, b = leaf(sample(da, (3, 1), seed=5)), leaf(sample(db, (1, 4), seed=6))
    if op_id == "where":
        fn = lambda x, y: tp.where(tp.tensor([[True, False, False, True]]), x, y)  # noqa: E731
    ga, gb = grads_of(fn(a, b), [a, b])
    assert ga.shape == (3, 1) and gb.shape == (1, 4)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


@pytest.mark.parametrize("op_id,fn,da,db", BINARY, ids=[b[0] for b in BINARY])
def test_binary_with_a_zero_dim_tensor_operand(op_id, fn, da, db):
    a, s = leaf(sample(da, (2, 3), seed=7)), leaf(sample(db, (), seed=8))
    assert gradcheck(fn, (a, s))
    (gs,) = grads_of(fn(a, s), [s])
    assert gs.shape == ()
    s, b = leaf(sample(da, (), seed=9)), leaf(sample(db, (2, 3), seed=10))
    assert gradcheck(fn, (s, b))


@pytest.mark.parametrize("op_id", list(INPLACE))
def test_binary_in_place_on_a_non_leaf_matches_finite_differences(op_id):
    da, db = next((b[2], b[3]) for b in BINARY if b[0] == op_id)
    a, b = leaf(sample(da, seed=9)), leaf(sample(db, seed=10))
    assert gradcheck(INPLACE[op_id], (a, b))
    assert gradgradcheck(INPLACE[op_id], (a, b))
    # the other operand may broadcast into self
    b_row = leaf(sample(db, (3,), seed=11))
    assert gradcheck(INPLACE[op_id], (a, b_row))


@pytest.mark.parametrize("op_id", list(INPLACE))
def test_in_place_gradients_equal_out_of_place_gradients(op_id):
    fn = next(b[1] for b in BINARY if b[0] == op_id)
    da, db = next((b[2], b[3]) for b in BINARY if b[0] == op_id)
    g = tp.tensor(sample("any", seed=14))
    a, b = leaf(sample(da, seed=15)), leaf(sample(db, seed=16))
    y = INPLACE[op_id](a, b)
    expected = grads_of(fn(a, b), [a, b], g)
    actual = grads_of(y, [a, b], g)
    for e, r in zip(expected, actual):
        np.testing.assert_allclose(r.numpy(), e.numpy(), rtol=1e-12, atol=1e-15)


def test_where_and_clamp_with_tensor_bounds_on_every_input():
    x, lo, hi = leaf(sample("any", seed=17)), leaf(sample("any", (3,), seed=18) - 1), leaf(sample("any", (2, 1)) + 1)
    cond = tp.tensor([[True], [False]])
    assert gradcheck(lambda a, b, c: tp.clamp(a, b, c), (x, lo, hi))
    assert gradgradcheck(lambda a, b, c: tp.clamp(a, b, c), (x, lo, hi))
    assert gradcheck(lambda a, b, c: (a * 1).clamp_(b, c), (x, lo, hi))
    assert gradcheck(lambda a, b: tp.where(cond, a, b), (x, lo))
    # the result broadcasts beyond self's shape: self's gradient sums back
    small = leaf([0.3, -5.0, 5.0])
    (g,) = grads_of(tp.clamp(small, tp.tensor([[-1.0], [0.0]]), tp.tensor([[1.0], [2.0]])), [small])
    np.testing.assert_array_equal(g.numpy(), [2.0, 0.0, 0.0])


def test_div_with_rounding_modes_gives_zero_gradients_of_each_input_shape():
    a, b = leaf(sample("any", (3, 1))), leaf(sample("nonzero", (1, 4)))
    for mode in ("floor", "trunc"):
        ga, gb = grads_of(tp.div(a, b, rounding_mode=mode), [a, b])
        np.testing.assert_array_equal(ga.numpy(), np.zeros((3, 1)))
        np.testing.assert_array_equal(gb.numpy(), np.zeros((1, 4)))
        (g,) = grads_of((a * 1).div_(b[:, :1], rounding_mode=mode), [a])
        np.testing.assert_array_equal(g.numpy(), np.zeros((3, 1)))
    ga, gb = grads_of(a // b, [a, b])
    np.testing.assert_array_equal(ga.numpy(), np.zeros((3, 1)))
    # rounding_mode=None is true division
    assert gradcheck(lambda x, y: tp.ops.tensorplug.div.Tensor_mode(x, y, rounding_mode=None), (a, b))


def test_pow_with_a_constant_integer_exponent_on_negative_bases():
    x = leaf(sample("nonzero", seed=19))
    e = tp.tensor([[2.0, 3.0, -1.0], [0.0, 4.0, -2.0]])
    assert gradcheck(lambda t: tp.pow(t, e), (x,))
    assert gradgradcheck(lambda t: tp.pow(t, e), (x,))


@pytest.mark.parametrize("fn", [
    lambda x: x * 2.5, lambda x: 2.5 * x, lambda x: x + 3, lambda x: 3 - x, lambda x: x - 1.5,
    lambda x: x / 4, lambda x: 4 / x, lambda x: x ** 3, lambda x: x ** 0.5, lambda x: x ** -0.5, lambda x: 2 ** x,
    lambda x: x ** 0, lambda x: tp.square(x), lambda x: x % 1.5, lambda x: tp.fmod(x, 1.5),
    lambda x: x.clamp(min=0.8, max=1.5), lambda x: tp.where(x > 1, x, 0.0), lambda x: tp.where(x > 1, 2.0, x),
    lambda x: tp.rsub(x, 2, alpha=3), lambda x: tp.addcmul(x, x, x, value=0.5), lambda x: tp.addcdiv(x, x, x + 1),
    lambda x: tp.lerp(x, x * x, 0.3), lambda x: tp.atan2(x, tp.tensor(1.0, dtype=tp.float64)),
], ids=["mul_s", "rmul_s", "add_s", "rsub_s", "sub_s", "div_s", "rdiv_s", "pow_3", "pow_half", "pow_mhalf",
        "rpow", "pow_0", "square", "remainder_s", "fmod_s", "clamp_s", "where_so", "where_ss", "rsub",
        "addcmul", "addcdiv", "lerp", "atan2_0dim"])
def test_python_scalar_operands_and_composites(fn):
    x = leaf(sample("pos", seed=20) + 0.05)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


# -- values PyTorch gives where the function is not differentiable -----------------------
SPECIAL = [
    # id, function of the leaves, leaf values, expected gradient of each leaf
    ("abs_at_0", lambda x: x.abs(), [[-1.0, 0.0, 2.0]], [[-1.0, 0.0, 1.0]]),
    ("sqrt_at_0", lambda x: x.sqrt(), [[0.0, 4.0]], [[math.inf, 0.25]]),
    ("rsqrt_at_0", lambda x: x.rsqrt(), [[0.0, 1.0]], [[-math.inf, -0.5]]),
    ("clamp_at_bounds", lambda x: x.clamp(-1.0, 1.0), [[-2.0, -1.0, 0.0, 1.0, 2.0]], [[0.0, 1.0, 1.0, 1.0, 0.0]]),
    ("relu_via_clamp_min_at_0", lambda x: x.clamp(min=0.0), [[-1.0, 0.0, 1.0]], [[0.0, 1.0, 1.0]]),
    ("clamp_min_above_max", lambda x: x.clamp(2.0, 1.0), [[0.0, 1.5, 3.0]], [[0.0, 0.0, 0.0]]),
    ("maximum_ties", tp.maximum, [[1.0, 2.0, 3.0], [1.0, 5.0, 3.0]], [[0.5, 0.0, 0.5], [0.5, 1.0, 0.5]]),
    ("minimum_ties", tp.minimum, [[1.0, 2.0, 3.0], [1.0, 5.0, 3.0]], [[0.5, 1.0, 0.5], [0.5, 0.0, 0.5]]),
    ("maximum_nan_goes_to_both", tp.maximum, [[math.nan], [1.0]], [[1.0], [1.0]]),
    ("pow_zero_base_self", lambda x: x ** tp.tensor([0.0, 1.0, 2.0, 0.5, -1.0], dtype=tp.float64),
     [[0.0] * 5], [[0.0, 1.0, 0.0, math.inf, -math.inf]]),
    ("pow_zero_base_exponent", lambda e: tp.zeros(5, dtype=tp.float64) ** e, [[0.0, 1.0, 2.0, 0.5, -1.0]],
     [[0.0, 0.0, 0.0, 0.0, -math.inf]]),
    ("pow_scalar_0_at_0", lambda x: x ** 0, [[0.0, 2.0]], [[0.0, 0.0]]),
    ("pow_scalar_2_at_0", lambda x: x ** 2, [[0.0, -3.0]], [[0.0, -6.0]]),
    ("pow_negative_base_exponent", lambda e: tp.full((2,), -2.0, dtype=tp.float64) ** e, [[2.0, 3.0]],
     [[math.nan, math.nan]]),
    ("clamp_tensor_bounds_at_ties", lambda x, lo, hi: tp.clamp(x, lo, hi),
     [[0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0]],
     [[0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]),
    ("clamp_tensor_min_above_max", lambda x, lo, hi: tp.clamp(x, lo, hi),
     [[0.0, 1.5, 3.0], [2.0, 2.0, 2.0], [1.0, 1.0, 1.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]),
    ("sign_floor_ceil_round_trunc", lambda x: x.sign() + x.floor() + x.ceil() + x.round() + x.trunc(),
     [[0.0, 0.5, -1.5, 2.0]], [[0.0, 0.0, 0.0, 0.0]]),
    ("frac_passes_the_gradient", lambda x: x.frac(), [[-1.5, 0.0, 2.0]], [[1.0, 1.0, 1.0]]),
    ("log_at_0", lambda x: x.log(), [[0.0, 2.0]], [[math.inf, 0.5]]),
    ("atan2_at_origin", tp.atan2, [[0.0, 1.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, -1.0]]),
]


@pytest.mark.parametrize("fn,values,expected", [s[1:] for s in SPECIAL], ids=[s[0] for s in SPECIAL])
def test_gradients_at_non_differentiable_points_follow_pytorch(fn, values, expected):
    leaves = [leaf(v) for v in values]
    got = grads_of(fn(*leaves), leaves)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.numpy(), np.asarray(e))


# -- broadcasting against a reference (hypothesis) ---------------------------------------
def _reference_sum_to(g, shape):
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape)


BROADCAST_REFERENCE = {
    # op: (function, d/da, d/db) on numpy values
    "add": (tp.add, lambda a, b: np.ones_like(a + b), lambda a, b: np.ones_like(a + b)),
    "sub": (lambda a, b: tp.sub(a, b, alpha=2), lambda a, b: np.ones_like(a + b),
            lambda a, b: -2 * np.ones_like(a + b)),
    "mul": (tp.mul, lambda a, b: b + 0 * a, lambda a, b: a + 0 * b),
    "div": (tp.div, lambda a, b: 1 / b + 0 * a, lambda a, b: -a / b ** 2),
    "atan2": (tp.atan2, lambda a, b: b / (a * a + b * b), lambda a, b: -a / (a * a + b * b)),
    "maximum": (tp.maximum, lambda a, b: (a > b) + 0.5 * (a == b), lambda a, b: (b > a) + 0.5 * (a == b)),
}
_dims = st.lists(st.integers(1, 3), min_size=0, max_size=3)


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(sorted(BROADCAST_REFERENCE)), dims=_dims, mask_a=st.integers(0, 7), mask_b=st.integers(0, 7),
       drop=st.integers(0, 2), seed=st.integers(0, 2 ** 16))
def test_broadcast_gradients_against_numpy(op, dims, mask_a, mask_b, drop, seed):
    # each input keeps or collapses to 1 each dim of the result; b may also drop leading dims
    shape_a = tuple(1 if mask_a >> i & 1 else n for i, n in enumerate(dims))
    shape_b = tuple(1 if mask_b >> i & 1 else n for i, n in enumerate(dims))[min(drop, len(dims)):]
    rng = np.random.default_rng(seed)
    a_np = rng.choice([-1.5, -0.5, 0.5, 1.0, 2.0], shape_a)
    b_np = rng.choice([-2.0, -1.0, 0.5, 1.0, 1.5], shape_b)
    fn, da, db = BROADCAST_REFERENCE[op]
    a, b = leaf(a_np), leaf(b_np)
    out = fn(a, b)
    g_np = rng.standard_normal(out.shape)
    ga, gb = grads_of(out, [a, b], tp.tensor(g_np))
    np.testing.assert_allclose(ga.numpy(), _reference_sum_to(g_np * da(a_np, b_np), shape_a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gb.numpy(), _reference_sum_to(g_np * db(a_np, b_np), shape_b), rtol=1e-12, atol=1e-12)


# -- in-place ops: views, leaves, saved tensors --------------------------------------------
def test_in_place_on_a_view_of_a_non_leaf_reaches_the_base():
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    z = leaf([0.5, -1.0])
    y = x * 1
    y[0].mul_(2)
    y[:, 1].mul_(z)
    y[1].exp_()
    y.backward(tp.ones_like(y))
    e = np.exp([4.0, 5.0 * -1.0, 6.0])
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, 2.0 * 0.5, 2.0], [e[0], -1.0 * e[1], e[2]]])
    np.testing.assert_allclose(z.grad.numpy(), [4.0, 5.0 * e[1]])


@pytest.mark.parametrize("inplace", [
    lambda x: x.mul_(2), lambda x: x.add_(1), lambda x: x.exp_(), lambda x: x.neg_(), lambda x: x.clamp_(0, 1),
    lambda x: x.pow_(2), lambda x: x.div_(tp.ones(3, dtype=tp.float64)), lambda x: x.floor_(),
    lambda x: x.__iadd__(1), lambda x: x.sigmoid_(),
], ids=["mul_", "add_", "exp_", "neg_", "clamp_", "pow_", "div_", "floor_", "iadd", "sigmoid_"])
def test_in_place_on_a_leaf_that_requires_grad_raises(inplace):
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place "
                                           "operation."):
        inplace(x)
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0, 3.0])  # nothing was written
    with tp.no_grad():
        inplace(x)  # allowed without recording


def test_in_place_on_a_view_of_a_leaf_raises():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation."):
        x[1:].mul_(2)


@pytest.mark.parametrize("forward,modify,owner", [
    # the node named is the tensor's grad_fn when backward finds it changed (PyTorch drops "Backward0")
    (lambda y: y.sin(), lambda y, out: y.add_(1), "Add"),  # a saved input
    (lambda y: y * y, lambda y, out: y.mul_(2), "Mul"),
    (lambda y: y.exp(), lambda y, out: out.add_(1), "Exp"),  # a saved result
    (lambda y: y.sigmoid(), lambda y, out: out.mul_(2), "Sigmoid"),
    (lambda y: (y * 1).exp_(), lambda y, out: out.add_(1), "Exp"),  # the result of an in-place op
])
def test_modifying_a_saved_tensor_raises_at_backward(forward, modify, owner):
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    out = forward(y)
    modify(y, out)
    with pytest.raises(RuntimeError, match=rf"modified by an inplace operation: \[tensorplug.DoubleTensor \[3\]\], "
                                           rf"which is output 0 of {owner}(Backward0)?, is at version \d+; "
                                           rf"expected version \d+"):
        out.backward(tp.ones_like(out))


def test_in_place_op_reading_its_own_output_as_other_raises_like_pytorch():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    y.mul_(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward(tp.ones_like(y))


def test_in_place_change_to_an_input_only_a_scalar_gradient_needs_is_allowed():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    z = y * 2  # PyTorch's mul.Scalar keeps nothing of y
    y.add_(1)
    z.backward(tp.ones_like(z))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_in_place_changes_to_values_no_formula_reads_are_allowed():
    x = leaf([1.0, -2.0, 3.0])
    out = x ** 2  # pow's formula recomputes the power rather than keeping the result
    out.add_(1)
    out.backward(tp.ones_like(out))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, -4.0, 6.0])
    x.grad = None
    out = x + 1  # add keeps nothing a later write could change
    out.mul_(3)
    out.backward(tp.ones_like(out))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])


def test_chained_in_place_ops_on_a_non_leaf():
    x, w = leaf([0.5, -1.0, 2.0]), leaf([2.0, 3.0, -1.0])
    y = x * 1
    y.mul_(w).add_(x, alpha=2).sin_().sub_(w).mul_(x)
    expected = ((x * w + 2 * x).sin() - w) * x
    for a, b in zip(grads_of(y, [x, w]), grads_of(expected, [x, w])):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-14)


# -- non-differentiable ops, names and dtypes ----------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda x, y: x == y, lambda x, y: x != y, lambda x, y: x < y, lambda x, y: x <= y, lambda x, y: x > y,
    lambda x, y: x >= y, lambda x, y: x > 0.5, lambda x, y: tp.logical_and(x, y), lambda x, y: tp.logical_or(x, y),
    lambda x, y: tp.logical_xor(x, y), lambda x, y: tp.logical_not(x), lambda x, y: (x > 0) & (y > 0),
    lambda x, y: ~(x > 0), lambda x, y: (x > 0) ^ (y > 0), lambda x, y: (x > 0) | (y > 0),
], ids=["eq", "ne", "lt", "le", "gt", "ge", "gt_scalar", "logical_and", "logical_or", "logical_xor",
        "logical_not", "bitwise_and", "bitwise_not", "bitwise_xor", "bitwise_or"])
def test_comparisons_and_logical_ops_on_tensors_that_require_grad_carry_no_history(fn):
    x, y = leaf([1.0, 0.0, 2.0]), leaf([1.0, 3.0, 0.0])
    out = fn(x, y)
    assert out.dtype == tp.bool and not out.requires_grad and out.grad_fn is None


@pytest.mark.parametrize("fn,name", [
    (lambda x, y: x * y, "MulBackward0"), (lambda x, y: x.exp(), "ExpBackward0"),
    (lambda x, y: x + y, "AddBackward0"), (lambda x, y: x - 1, "SubBackward0"), (lambda x, y: x / y, "DivBackward0"),
    (lambda x, y: x ** 2, "PowBackward0"), (lambda x, y: x.sigmoid(), "SigmoidBackward0"),
    (lambda x, y: x.abs(), "AbsBackward0"), (lambda x, y: -x, "NegBackward0"), (lambda x, y: x.sign(), "SignBackward0"),
    (lambda x, y: tp.maximum(x, y), "MaximumBackward0"), (lambda x, y: tp.where(x > 0, x, y), "WhereBackward0"),
    (lambda x, y: tp.atan2(x, y), "Atan2Backward0"), (lambda x, y: x.tanh(), "TanhBackward0"),
    (lambda x, y: (x * 1).mul_(y), "MulBackward0"), (lambda x, y: (x * 1).exp_(), "ExpBackward0"),
    (lambda x, y: (x * 1).add_(y), "AddBackward0"), (lambda x, y: x.floor(), "FloorBackward0"),
    (lambda x, y: x.erf(), "ErfBackward0"), (lambda x, y: (x * 1).sqrt_(), "SqrtBackward0"),
])
def test_node_names(fn, name):
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    assert fn(x, y).grad_fn.name() == name


def test_gradients_come_back_in_each_input_dtype():
    a = leaf([1.0, 2.0], dtype=tp.float32)
    b = leaf([3.0, 4.0], dtype=tp.float64)
    h = leaf([0.5, 0.25], dtype=tp.float16)
    out = a * b + h.exp()
    assert out.dtype == tp.float64
    out.backward(tp.ones_like(out))
    assert (a.grad.dtype, b.grad.dtype, h.grad.dtype) == (tp.float32, tp.float64, tp.float16)
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 2.0])
    np.testing.assert_allclose(h.grad.numpy(), np.exp([0.5, 0.25]), rtol=1e-3)


def test_integer_and_bool_operands_get_no_gradient():
    x = leaf([1.0, 2.0, 3.0])
    n = tp.tensor([2, 0, -1])
    m = tp.tensor([True, False, True])
    out = x * n + x / (n + 3) + tp.where(m, x, n) + x ** n + tp.maximum(x, n) + (x * 1).add_(m)
    out.backward(tp.ones_like(out))
    nn = np.array([2.0, 0.0, -1.0])
    xx = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), nn + 1 / (nn + 3) + [1, 0, 1] + nn * xx ** (nn - 1)
                               + [0, 1, 1] + 1)
    assert n.grad is None and not n.requires_grad


def test_in_place_op_on_a_tensor_that_does_not_require_grad_with_one_that_does():
    w = leaf([2.0, 3.0])
    buf = tp.ones(2, dtype=tp.float32)
    buf.mul_(w)  # a float32 buffer takes history from a float64 leaf
    assert buf.requires_grad and buf.grad_fn.name() == "MulBackward0"
    buf.backward(tp.tensor([1.0, 1.0], dtype=tp.float32))
    assert w.grad.dtype == tp.float64
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])
