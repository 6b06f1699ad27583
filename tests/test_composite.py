"""Composite ops (statistics, softmax, activations, joining and splitting, reordering, closeness, norms,
linear algebra) against numpy and math references, their result dtypes, views, errors and dispatches."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tensorplug as tp

FLOATS = [tp.float16, tp.bfloat16, tp.float32, tp.float64]
INTS = [tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64]
ALL_DTYPES = [tp.bool] + INTS + FLOATS
RTOL = {tp.float64: 1e-12, tp.float32: 2e-6, tp.float16: 1e-3, tp.bfloat16: 8e-3}
nan, inf = math.nan, math.inf


def t(a):
    return tp.from_numpy(np.array(a, copy=True))


def values(x):
    return np.asarray(x.numpy(), dtype=np.float64)


def assert_close(out, ref, dtype, what="", atol=0.0, rtol=None):
    """``out`` has ``dtype``, the reference's shape and its values to the dtype's rounding."""
    ref = np.asarray(ref, dtype=np.float64)
    assert out.dtype is dtype, (what, out.dtype)
    assert out.shape == ref.shape, (what, out.shape, ref.shape)
    np.testing.assert_allclose(values(out), ref, rtol=RTOL.get(dtype, 0) if rtol is None else rtol, atol=atol,
                               err_msg=str(what))


def axes(ndim, dim):
    """numpy's axis for a tensorplug ``dim`` (None, an int or a tuple; 0-dim inputs reduce nothing)."""
    return None if dim is None or ndim == 0 else dim


# shapes with a choice of dims among them: drawn by hypothesis for the reductions
@st.composite
def array_and_dim(draw, min_side=1, elements=st.floats(-50, 50, width=32)):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=min_side, max_side=5))
    a = draw(hnp.arrays(np.float64, shape, elements=elements))
    n = len(shape)
    if n == 0:
        dim = draw(st.sampled_from([None, 0, -1]))
    else:
        dim = draw(st.one_of(st.none(), st.integers(-n, n - 1),
                             st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True).map(tuple)))
    return a, dim, draw(st.booleans())


# -- mean, var, std, var_mean, std_mean -------------------------------------------------------
@settings(max_examples=120, deadline=None)
@given(array_and_dim(min_side=0), st.sampled_from([tp.float32, tp.float64]))
def test_mean_is_numpys(case, dtype):
    a, dim, keepdim = case
    a = a.astype(dtype.np)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warns about empty slices; their mean is NaN in both
        ref = np.mean(a.astype(np.float64), axis=axes(a.ndim, dim), keepdims=keepdim)
    assert_close(t(a).mean(dim, keepdim), ref, dtype, (a.shape, dim), atol=1e-5)
    assert_close(tp.mean(t(a), dim, keepdim=keepdim), ref, dtype, (a.shape, dim), atol=1e-5)


@settings(max_examples=120, deadline=None)
@given(array_and_dim(), st.sampled_from([0, 1, 2, 0.5]))
def test_var_and_std_are_numpys(case, correction):
    a, dim, keepdim = case
    axis = axes(a.ndim, dim)
    n = a.size // np.mean(a, axis=axis, keepdims=True).size
    if n - correction <= 0:
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            out = t(a).var(dim, correction=correction, keepdim=keepdim)
        with np.errstate(all="ignore"):  # the divisor is clamped at 0: inf, or NaN for no spread
            ssq = np.sum((a - np.mean(a, axis=axis, keepdims=True)) ** 2, axis=axis, keepdims=keepdim)
            np.testing.assert_array_equal(values(out), ssq / 0.0)
        return
    ref = np.var(a, axis=axis, ddof=correction, keepdims=keepdim)
    assert_close(t(a).var(dim, correction=correction, keepdim=keepdim), ref, tp.float64,
                 (a.shape, dim, correction), atol=1e-10)
    assert_close(t(a).std(dim, correction=correction, keepdim=keepdim), np.sqrt(ref), tp.float64, atol=1e-10)
    var, mean = tp.var_mean(t(a), dim, correction=correction, keepdim=keepdim)
    assert_close(var, ref, tp.float64, atol=1e-10)
    assert_close(mean, np.mean(a, axis=axis, keepdims=keepdim), tp.float64, atol=1e-12)
    std, mean = tp.std_mean(t(a), dim, correction=correction, keepdim=keepdim)
    assert_close(std, np.sqrt(ref), tp.float64, atol=1e-10)


STAT_SIGNATURES = [
    # (call, numpy reference of a = arange(6).reshape(2, 3) + 1)
    (lambda x: x.var(), lambda a: np.var(a, ddof=1)),
    (lambda x: x.var(True), lambda a: np.var(a, ddof=1)),
    (lambda x: x.var(False), lambda a: np.var(a)),
    (lambda x: x.var(0), lambda a: np.var(a, axis=0, ddof=1)),
    (lambda x: x.var(0, True), lambda a: np.var(a, axis=0, ddof=1)),
    (lambda x: x.var(1, False, True), lambda a: np.var(a, axis=1, keepdims=True)),
    (lambda x: x.var(dim=0, unbiased=False), lambda a: np.var(a, axis=0)),
    (lambda x: x.var([1, 0], correction=0), lambda a: np.var(a)),
    (lambda x: tp.var(x, 1), lambda a: np.var(a, axis=1, ddof=1)),
    (lambda x: tp.var(x, None, correction=0, keepdim=True), lambda a: np.var(a, keepdims=True)),
    (lambda x: x.std(correction=0), lambda a: np.std(a)),
    (lambda x: tp.std(x, 1, False), lambda a: np.std(a, axis=1)),
    (lambda x: x.std(-1, unbiased=True, keepdim=True), lambda a: np.std(a, axis=-1, ddof=1, keepdims=True)),
    (lambda x: x.mean(1), lambda a: np.mean(a, axis=1)),
    (lambda x: x.mean([0, 1], True), lambda a: np.mean(a, keepdims=True)),
    (lambda x: x.mean(()), lambda a: np.mean(a)),
    (lambda x: x.mean(dtype=tp.float64), lambda a: np.mean(a)),
    (lambda x: tp.var_mean(x, 1, False)[0], lambda a: np.var(a, axis=1)),
    (lambda x: tp.std_mean(x, 1)[1], lambda a: np.mean(a, axis=1)),
]


@pytest.mark.parametrize("call, ref", STAT_SIGNATURES)
def test_statistics_take_pytorchs_signatures(call, ref):
    a = np.arange(1.0, 7.0).reshape(2, 3)
    out = call(t(a))
    assert out.shape == np.shape(ref(a))
    np.testing.assert_allclose(values(out), ref(a), rtol=1e-12)


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16])
def test_reduced_precision_statistics_accumulate_in_float32(dtype):
    big = np.full((1000,), 6e4, dtype=dtype.np)  # the sum overflows float16
    out = t(big).mean()
    assert out.dtype is dtype and values(out) == float(big[0])
    a = np.array([300.0, 301.0, 302.0, 600.0], dtype=dtype.np)
    ref = np.var(a.astype(np.float32), ddof=1).astype(dtype.np)
    assert values(t(a).var()) == float(ref)
    assert values(t(a).std()) == float(np.sqrt(np.var(a.astype(np.float32), ddof=1)).astype(dtype.np))


def test_mean_of_integers_takes_a_float_dtype():
    x = t(np.array([1, 2, 4], dtype=np.int64))
    assert_close(x.mean(dtype=tp.float32), 7 / 3, tp.float32)
    assert_close(tp.mean(x, 0, dtype=tp.float16), 7 / 3, tp.float16)
    assert_close(t(np.arange(6.0)).mean(dtype=tp.float16), 2.5, tp.float16)


def test_statistics_of_empty_slices_are_nan_and_of_too_few_elements_inf():
    assert math.isnan(tp.zeros(0).mean().item())
    assert np.isnan(values(tp.zeros(0, 3).mean(0))).all() and tp.zeros(0, 3).mean(1).shape == (0,)
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        assert math.isnan(tp.tensor([2.0]).var().item())
    with pytest.warns(UserWarning, match=r"std\(\): degrees of freedom is <= 0"):
        assert values(tp.tensor([[1.0, 2.0]]).std(1, correction=3)).tolist() == [inf]
    assert tp.tensor(2.0).var(0, correction=0).item() == 0.0


# -- logsumexp, softmax, log_softmax -----------------------------------------------------------
def np_logsumexp(a, axis, keepdims):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


@settings(max_examples=120, deadline=None)
@given(array_and_dim(elements=st.floats(-1e4, 1e4, width=32)))
def test_logsumexp_is_the_shifted_formula(case):
    a, dim, keepdim = case
    dim = 0 if dim is None else dim
    axis = dim if a.ndim else None
    ref = np_logsumexp(a, axis, keepdim) if a.ndim else a
    assert_close(tp.logsumexp(t(a), dim, keepdim), ref, tp.float64, (a.shape, dim))
    assert_close(t(a.astype(np.float32)).logsumexp(dim, keepdim), ref, tp.float32, (a.shape, dim), atol=1e-4)


LSE_ROWS = [
    ([1.0, 2.0, 3.0], math.log(math.exp(1) + math.exp(2) + math.exp(3))),
    ([1000.0, 1000.0], 1000.0 + math.log(2)),            # exp would overflow without the shift
    ([-1000.0, -1000.0], -1000.0 + math.log(2)),         # and underflow to log(0)
    ([-inf, -inf], -inf), ([inf, 1.0], inf), ([inf, -inf], inf), ([nan, 1.0], nan), ([nan, inf], nan),
    ([-inf, 0.0], 0.0),
]


@pytest.mark.parametrize("row, expected", LSE_ROWS)
def test_logsumexp_of_hard_rows(row, expected):
    out = tp.logsumexp(t(np.array(row)), 0)
    np.testing.assert_allclose(out.item(), expected, rtol=1e-15)


@pytest.mark.parametrize("dtype, expected", [(tp.int64, tp.float32), (tp.bool, tp.float32), (tp.uint8, tp.float32),
                                             (tp.float16, tp.float16), (tp.bfloat16, tp.bfloat16)])
def test_logsumexp_result_dtypes(dtype, expected):
    a = np.array([[1, 0, 1], [0, 1, 1]]).astype(dtype.np)
    assert_close(tp.logsumexp(t(a), 1), np_logsumexp(a.astype(np.float64), 1, False), expected)


def test_logsumexp_of_empty_slices_is_minus_infinity():
    assert values(tp.logsumexp(tp.zeros(0, 3), 0)).tolist() == [-inf] * 3
    assert tp.logsumexp(tp.zeros(0, 3), 1).shape == (0,)
    assert tp.logsumexp(tp.zeros(2, 0), (0, 1), True).shape == (1, 1)


def np_softmax(a, axis):
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


@settings(max_examples=100, deadline=None)
@given(array_and_dim(elements=st.floats(-300, 300)))
def test_softmax_and_log_softmax_are_the_formulas(case):
    a, dim, _ = case
    dim = dim[0] if isinstance(dim, tuple) else (0 if dim is None else dim)
    axis = dim if a.ndim else None
    with np.errstate(divide="ignore"):
        ref = np_softmax(a, axis)
        log_ref = (a - np.max(a, axis=axis, keepdims=True)) - np.log(
            np.sum(np.exp(a - np.max(a, axis=axis, keepdims=True)), axis=axis, keepdims=True))
    assert_close(tp.softmax(t(a), dim), ref, tp.float64, atol=1e-15)
    assert_close(t(a).log_softmax(dim), log_ref, tp.float64, atol=1e-12)
    total = values(t(a).softmax(dim)).sum(axis=axis)
    np.testing.assert_allclose(total, 1.0, rtol=1e-12)


SOFTMAX_ROWS = [
    # row, softmax, log_softmax (PyTorch's answers: NaN where the max is infinite)
    ([1000.0, 0.0], [1.0, 0.0], [0.0, -1000.0]),
    ([-inf, 1.0], [0.0, 1.0], [-inf, 0.0]),
    ([-inf, -inf], [nan, nan], [nan, nan]),
    ([inf, 1.0], [nan, nan], [nan, nan]),
    ([nan, 1.0], [nan, nan], [nan, nan]),
]


@pytest.mark.parametrize("row, soft, log_soft", SOFTMAX_ROWS)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_softmax_of_hard_rows(row, soft, log_soft, dtype):
    x = t(np.array(row).astype(dtype.np))
    np.testing.assert_array_equal(values(tp.softmax(x, 0)), soft)
    np.testing.assert_array_equal(values(tp.log_softmax(x, -1)), log_soft)


@pytest.mark.parametrize("dtype, out, expected", [
    (tp.float16, None, tp.float16), (tp.bfloat16, None, tp.bfloat16), (tp.float32, tp.float64, tp.float64),
    (tp.int64, tp.float32, tp.float32), (tp.float64, tp.float16, tp.float16)])
def test_softmax_dtype_argument_casts_first(dtype, out, expected):
    a = np.array([[1, 2, 3], [0, 1, 4]]).astype(dtype.np)
    ref = np_softmax(a.astype(np.float64), 1)
    assert_close(tp.softmax(t(a), 1, out), ref, expected)
    assert_close(t(a).log_softmax(1, dtype=out), np.log(ref), expected)
    assert t(a[:0]).softmax(0, dtype=out).dtype is expected


# -- activations -------------------------------------------------------------------------------
SQ = math.sqrt


def erf_gelu(x):
    return 0.5 * x * (1 + math.erf(x / SQ(2)))


def tanh_gelu(x):
    return 0.5 * x * (1 + math.tanh(SQ(2 / math.pi) * (x + 0.044715 * x ** 3)))


def softplus_ref(x, beta=1, threshold=20):
    return x if x * beta > threshold else math.log1p(math.exp(x * beta)) / beta


def elu_ref(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return x * scale if x > 0 else alpha * scale * math.expm1(x * input_scale)


ACTIVATIONS = [
    # (name, call, scalar reference)
    ("relu", lambda x: x.relu(), lambda v: max(v, 0.0)),
    ("relu fn", tp.relu, lambda v: max(v, 0.0)),
    ("leaky_relu", tp.leaky_relu, lambda v: v if v > 0 else 0.01 * v),
    ("leaky_relu 0.2", lambda x: tp.leaky_relu(x, 0.2), lambda v: v if v > 0 else 0.2 * v),
    ("gelu", tp.gelu, erf_gelu),
    ("gelu tanh", lambda x: tp.gelu(x, approximate="tanh"), tanh_gelu),
    ("silu", tp.silu, lambda v: v / (1 + math.exp(-v))),
    ("elu", tp.elu, elu_ref),
    ("elu params", lambda x: tp.elu(x, 2.0, 3.0, 0.5), lambda v: elu_ref(v, 2.0, 3.0, 0.5)),
    ("softplus", tp.softplus, softplus_ref),
    ("softplus beta", lambda x: tp.softplus(x, 2, 5), lambda v: softplus_ref(v, 2, 5)),
    ("mish", tp.mish, lambda v: v * math.tanh(math.log1p(math.exp(v)))),
    ("hardtanh", tp.hardtanh, lambda v: min(max(v, -1.0), 1.0)),
    ("hardtanh 0 2", lambda x: tp.hardtanh(x, 0, 2), lambda v: min(max(v, 0.0), 2.0)),
    ("relu6", tp.relu6, lambda v: min(max(v, 0.0), 6.0)),
]
GRID = np.concatenate([np.linspace(-12, 12, 97), [0.0, 1e-8, -1e-8, 19.9, 20.0, 20.1, 40.0, -40.0]])


@pytest.mark.parametrize("name, call, ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_activations_are_their_formulas(name, call, ref, dtype):
    a = GRID.astype(dtype.np)
    expected = [ref(float(v)) for v in a]
    # PyTorch's formulas too lose the relative accuracy of tails like gelu(-12) to cancellation
    assert_close(call(t(a)), expected, dtype, name, atol=RTOL[dtype])
    strided = tp.from_numpy(np.repeat(a, 2))[::2]
    assert_close(call(strided), expected, dtype, name, atol=RTOL[dtype])
    assert call(t(np.array([nan], dtype=dtype.np))).isnan().all()  # NaN propagates through each
    assert call(t(a[:0])).shape == (0,)


# hardtanh's negative limits on uint8 raise (see the errors below)
@pytest.mark.parametrize("name, call, ref, dtype", [
    (*a, d) for a in ACTIVATIONS[:2] + ACTIVATIONS[-3:] for d in INTS if not (d is tp.uint8 and a[0] == "hardtanh")])
def test_clamping_activations_keep_integer_dtypes(name, call, ref, dtype):
    a = np.array([0, 1, 3, 5, 6, 7, 100] + ([] if dtype is tp.uint8 else [-1, -7])).astype(dtype.np)
    assert_close(call(t(a)), [math.trunc(ref(float(v))) for v in a], dtype, name)


def test_relu_keeps_minus_zero_and_works_in_place():
    x = t(np.array([-0.0, -2.0, 3.0, nan]))
    assert np.signbit(x.relu().numpy()).tolist() == [True, False, False, False]
    assert x.relu_() is x and x._version == 1
    np.testing.assert_array_equal(values(x)[1:], [0.0, 3.0, nan])
    y = t(np.array([[-1, 2], [3, -4]], dtype=np.int32)).t()
    assert tp.relu_(y).tolist() == [[0, 3], [2, 0]]


def test_relu_is_one_primitive_call(logging_plugin):
    x = tp.tensor([-1.0, 2.0])
    with tp.logging_mode():
        x.relu()
    assert [name for _, name, _ in logging_plugin.LOG] == ["tensorplug::relu", "tensorplug::maximum"]


def test_relu_zeros_follow_backends_across_plugin_changes(testdev):
    x = tp.tensor([-1.0, 2.0])
    assert x.relu().tolist() == [0.0, 2.0]
    tp.plugins.disable("testdev")
    assert x.relu().tolist() == [0.0, 2.0]
    tp.plugins.enable("testdev")
    assert x.double().relu().tolist() == [0.0, 2.0] and x.relu().tolist() == [0.0, 2.0]


def test_reduced_precision_activations_compute_in_float32():
    # exp(15) overflows float16: a float16 formula would give inf
    assert tp.softplus(tp.tensor([15.0], dtype=tp.float16)).item() == 15.0
    x = tp.tensor([2.5, -3.0], dtype=tp.bfloat16)
    expected = np.array([erf_gelu(2.5), erf_gelu(-3.0)], dtype=np.float32).astype(tp.bfloat16.np)
    assert tp.gelu(x).numpy().tolist() == expected.tolist()


def test_one_hot_compares_with_a_range():
    idx = np.array([[0, 3], [2, 0]])
    assert tp.one_hot(t(idx)).tolist() == np.eye(4, dtype=np.int64)[idx].tolist()
    out = tp.one_hot(t(idx), 6)
    assert out.dtype is tp.int64 and out.tolist() == np.eye(6, dtype=np.int64)[idx].tolist()
    assert tp.one_hot(tp.tensor(2), 3).tolist() == [0, 0, 1]
    assert tp.one_hot(tp.zeros(0, dtype=tp.int64), 3).shape == (0, 3)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 8), elements=st.floats(-800, 800) | st.sampled_from([inf, -inf])),
       hnp.arrays(np.float64, st.integers(1, 1), elements=st.floats(-800, 800) | st.sampled_from([inf, -inf])))
def test_logaddexp_is_numpys(a, b):
    with np.errstate(invalid="ignore"):
        ref = np.logaddexp(a, b)
    assert_close(tp.logaddexp(t(a), t(b)), ref, tp.float64)
    assert tp.logaddexp(t(a.astype(np.float32)), t(b)).dtype is tp.float64


# -- linear, addmm, outer ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tp.float32, tp.float64, tp.int64], ids=str)
@pytest.mark.parametrize("in_shape, bias_shape", [((2, 3), (4,)), ((5, 2, 3), (4,)), ((3,), (4,)),
                                                  ((2, 5, 3), (5, 4)), ((2, 3), ()), ((2, 3), None),
                                                  ((0, 3), (4,)), ((2, 2, 5, 3), (1, 4))])
def test_linear_is_x_at_w_transposed_plus_b(dtype, in_shape, bias_shape):
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, size=in_shape).astype(dtype.np)
    w = rng.integers(-3, 4, size=(4, 3)).astype(dtype.np)
    b = None if bias_shape is None else rng.integers(-3, 4, size=bias_shape).astype(dtype.np)
    ref = x @ w.T + (0 if b is None else b)
    out = tp.linear(t(x), t(w), None if b is None else t(b))
    assert_close(out, ref, dtype)
    transposed = tp.from_numpy(np.ascontiguousarray(np.swapaxes(x, -1, -2))).transpose(-1, -2) \
        if x.ndim >= 2 else t(x)
    assert_close(tp.linear(transposed, t(w), None if b is None else t(b)), ref, dtype)


ADDMM = [
    # (self shape, beta, alpha)
    ((2, 4), 1, 1), ((2, 4), 0.5, 2), ((4,), 2, 3), ((), 1, -1), ((1, 4), 0, 1), ((2, 1), 1, 0),
]


@pytest.mark.parametrize("shape, beta, alpha", ADDMM)
@pytest.mark.parametrize("dtype", [tp.float32, tp.float64, tp.float16], ids=str)
def test_addmm_is_beta_self_plus_alpha_product(shape, beta, alpha, dtype):
    rng = np.random.default_rng(1)
    s, a, b = (rng.integers(-3, 4, size=sh).astype(dtype.np) for sh in (shape, (2, 3), (3, 4)))
    ref = beta * s.astype(np.float64) + alpha * (a.astype(np.float64) @ b.astype(np.float64))
    assert_close(tp.addmm(t(s), t(a), t(b), beta=beta, alpha=alpha), np.broadcast_to(ref, (2, 4)), dtype)
    assert_close(t(s).addmm(t(a), t(b).t().contiguous().t(), beta=beta, alpha=alpha),
                 np.broadcast_to(ref, (2, 4)), dtype)


def test_addmm_zero_factors_ignore_nan_and_integers_truncate_factors():
    ones = tp.ones(2, 2)
    assert tp.addmm(tp.full((2, 2), nan), ones, ones, beta=0).tolist() == [[2.0, 2.0]] * 2
    assert tp.addmm(ones, tp.full((2, 2), nan), ones, alpha=0).tolist() == [[1.0, 1.0]] * 2
    i = tp.ones(2, 2, dtype=tp.int64)
    out = tp.addmm(i, i, i, beta=1.7, alpha=0.5)  # int(1.7) * 1 + int(0.5) * 2
    assert out.dtype is tp.int64 and out.tolist() == [[1, 1]] * 2
    assert tp.addmm(i, i[:, :0], i[:0], beta=3).tolist() == [[3, 3]] * 2


@pytest.mark.parametrize("a, b, expected", [
    (np.array([1, 2, 3]), np.array([1.5, -1.0]), tp.float64), (np.array([True, False]), np.array([True]), tp.bool),
    (np.array([], dtype=np.float64), np.array([2.0]), tp.float64), (np.array([2], np.int8), np.array([3], np.int8),
                                                                    tp.int8)])
def test_outer_is_numpys_with_promotion(a, b, expected):
    assert_close(tp.outer(t(a), t(b)), np.outer(a, b), expected)
    assert_close(t(a).outer(t(b)), np.outer(a, b), expected)


# -- stack, hstack, vstack, dstack, atleast --------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), st.integers(1, 3), st.data())
def test_stacking_is_numpys(shape, count, data):
    arrays = [np.random.default_rng(i).standard_normal(shape) for i in range(count)]
    ts = [t(a) for a in arrays]
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    assert_close(tp.stack(ts, dim), np.stack(arrays, dim), tp.float64)
    assert_close(tp.vstack(ts), np.vstack(arrays), tp.float64)
    if len(shape) >= 1 or count:
        assert_close(tp.hstack(ts), np.hstack(arrays), tp.float64)
    assert_close(tp.dstack(tuple(ts)), np.dstack(arrays), tp.float64)
    for fn, ref in ((tp.atleast_1d, np.atleast_1d), (tp.atleast_2d, np.atleast_2d), (tp.atleast_3d, np.atleast_3d)):
        assert_close(fn(ts[0]), ref(arrays[0]), tp.float64)
        assert all(o.shape == r.shape for o, r in zip(fn(*ts), ref(*arrays))) if count > 1 else True


def test_stack_promotes_and_atleast_returns_views():
    out = tp.stack([tp.tensor([1, 2]), tp.tensor([0.5, 1.5])], 1)
    assert out.dtype is tp.float32 and out.tolist() == [[1.0, 0.5], [2.0, 1.5]]
    x = tp.tensor(3.0)
    v = tp.atleast_2d(x)
    v.fill_(7.0)
    assert x.item() == 7.0 and v.shape == (1, 1)
    assert isinstance(tp.atleast_1d([x]), tuple) and isinstance(tp.atleast_1d(x, x), tuple)


# -- split, chunk, unbind -------------------------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(st.integers(0, 9), st.integers(1, 10), st.integers(1, 12))
def test_split_and_chunk_pieces(n, size, chunks):
    a = np.arange(2 * n).reshape(2, n)
    pieces = tp.split(t(a), size, 1)
    starts = list(range(0, n, size)) or [0]
    assert [p.tolist() for p in pieces] == [a[:, s:s + size].tolist() for s in starts]
    csize = -(-n // chunks)
    got = t(a).chunk(chunks, -1)
    if n == 0:
        assert len(got) == chunks and all(p.shape == (2, 0) for p in got)
    else:
        assert [p.tolist() for p in got] == [a[:, s:s + csize].tolist() for s in range(0, n, csize)]
    sizes = [n // 3, n - n // 3]
    assert [p.shape[1] for p in t(a).split(sizes, 1)] == sizes
    assert [p.shape[1] for p in tp.split_with_sizes(t(a), tuple(sizes), -1)] == sizes


def test_split_chunk_and_unbind_return_tuples_of_views():
    x = tp.arange(12.0).reshape(3, 4)
    for pieces in (x.split(2, 1), x.split([1, 3], -1), tp.chunk(x, 2, 1), x.unbind(1), tp.unbind(x),
                   x.split_with_sizes([2, 2], 1)):
        assert isinstance(pieces, tuple)
        pieces[0].fill_(-1.0)
        assert (x == -1.0).any().item()
        x.fill_(0.0)
    assert [r.tolist() for r in tp.unbind(t(np.arange(6).reshape(2, 3)), 1)] == [[0, 3], [1, 4], [2, 5]]
    assert tp.unbind(tp.zeros(0, 3)) == ()


# -- tril, triu, flip, roll -------------------------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=5), st.integers(-6, 6),
       st.sampled_from([tp.float32, tp.int16, tp.bool]))
def test_tril_and_triu_are_numpys(shape, k, dtype):
    a = (np.arange(np.prod(shape)).reshape(shape) % 3).astype(dtype.np)
    assert_close(tp.tril(t(a), k), np.tril(a, k), dtype)
    assert_close(t(a).triu(k), np.triu(a, k), dtype)
    assert_close(t(a).transpose(-1, -2).tril(k), np.tril(np.swapaxes(a, -1, -2), k), dtype)


def test_tril_zeroes_nan_and_inf_outside_the_triangle():
    a = np.full((3, 3), nan)
    a[0, 1] = inf
    np.testing.assert_array_equal(values(tp.tril(t(a))), np.tril(a))
    np.testing.assert_array_equal(values(tp.triu(t(a), 1)), np.triu(a, 1))


@settings(max_examples=80, deadline=None)
@given(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4), st.data())
def test_flip_and_roll_are_numpys(shape, data):
    a = np.arange(np.prod(shape, dtype=int)).reshape(shape).astype(np.int32)
    n = len(shape)
    dims = data.draw(st.lists(st.integers(-max(n, 1), max(n, 1) - 1), max_size=n, unique_by=lambda d: d % max(n, 1)))
    ref = np.flip(a, [d % n for d in dims]) if n else a
    assert_close(tp.flip(t(a), dims), ref, tp.int32)
    if dims:
        assert_close(t(a).flip(*dims), ref, tp.int32)
    shifts = data.draw(st.lists(st.integers(-9, 9), min_size=len(dims), max_size=len(dims)))
    if dims:
        assert_close(tp.roll(t(a), shifts, dims), np.roll(a, shifts, [d % n for d in dims]) if n else a, tp.int32)
    s = data.draw(st.integers(-9, 9))
    assert_close(t(a).roll(s), np.roll(a, s), tp.int32)


def test_flip_and_roll_copy():
    x = tp.arange(4.0)
    for out in (x.flip(()), x.roll(0, 0), x.roll(4), tp.zeros(0).roll(1), x.flip(0)):
        out.fill_(9.0)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
    y = tp.arange(6).reshape(2, 3).t()
    assert y.flip(0, 1).tolist() == np.flip(np.arange(6).reshape(2, 3).T).tolist()
    assert y.roll(1, 0).tolist() == np.roll(np.arange(6).reshape(2, 3).T, 1, 0).tolist()


def test_flip_method_takes_dims_as_a_keyword():
    y = tp.arange(6).reshape(2, 3)
    assert y.flip(dims=(0, 1)).tolist() == y.flip(0, 1).tolist() == np.flip(np.arange(6).reshape(2, 3)).tolist()
    assert y.flip(dims=[1]).tolist() == [[2, 1, 0], [5, 4, 3]]
    with pytest.raises(TypeError, match="multiple values for argument 'dims'"):
        y.flip(0, dims=(1,))


# -- isclose, allclose, isnan, isinf, isfinite ----------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(hnp.arrays(np.float64, 6, elements=st.floats(allow_nan=True, allow_infinity=True, width=32)),
       hnp.arrays(np.float64, 6, elements=st.floats(allow_nan=True, allow_infinity=True, width=32)),
       st.sampled_from([(1e-5, 1e-8), (0.0, 0.0), (1e-2, 0.0), (0.0, 1.0)]), st.booleans())
def test_isclose_is_numpys(a, b, tols, equal_nan):
    rtol, atol = tols
    b[:2] = a[:2]
    ref = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert t(a).isclose(t(b), rtol, atol, equal_nan).tolist() == ref.tolist()
    assert tp.allclose(t(a), t(b), rtol, atol, equal_nan) is bool(ref.all())


@pytest.mark.parametrize("dtype", INTS + [tp.bool], ids=str)
def test_isclose_of_integers_compares_in_float(dtype):
    a = np.array([0, 5, 100, 1]).astype(dtype.np)
    b = np.array([5, 0, 101, 1]).astype(dtype.np)
    ref = np.abs(a.astype(np.float32) - b.astype(np.float32)) <= 1 + 0.01 * np.abs(b.astype(np.float32))
    assert tp.isclose(t(a), t(b), rtol=0.01, atol=1).tolist() == ref.tolist()
    assert tp.isclose(t(a), t(b)).tolist() == (a == b).tolist()


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_isnan_isinf_isfinite_are_numpys(dtype):
    with np.errstate(invalid="ignore"):
        a = np.array([0.0, 1.5, -2.0, nan, inf, -inf]).astype(dtype.np)
    f = a.astype(np.float64)
    for name, ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        out = getattr(t(a), name)()
        assert out.dtype is tp.bool and out.tolist() == ref(f).tolist(), name
        assert getattr(tp, name)(t(a).reshape(2, 3).t()).tolist() == ref(f.reshape(2, 3).T).tolist(), name


# -- norm -------------------------------------------------------------------------------------
NORMS = [
    # (p, numpy reference of |x| along axis)
    (2, lambda a, ax, kd: np.sqrt(np.sum(a * a, axis=ax, keepdims=kd))),
    ("fro", lambda a, ax, kd: np.sqrt(np.sum(a * a, axis=ax, keepdims=kd))),
    (None, lambda a, ax, kd: np.sqrt(np.sum(a * a, axis=ax, keepdims=kd))),
    (1, lambda a, ax, kd: np.sum(np.abs(a), axis=ax, keepdims=kd)),
    (inf, lambda a, ax, kd: np.max(np.abs(a), axis=ax, keepdims=kd)),
    (-inf, lambda a, ax, kd: np.min(np.abs(a), axis=ax, keepdims=kd)),
    (0, lambda a, ax, kd: np.sum(a != 0, axis=ax, keepdims=kd).astype(np.float64)),
    (3, lambda a, ax, kd: np.sum(np.abs(a) ** 3, axis=ax, keepdims=kd) ** (1 / 3)),
    (0.5, lambda a, ax, kd: np.sum(np.abs(a) ** 0.5, axis=ax, keepdims=kd) ** 2),
]


@pytest.mark.parametrize("p, ref", NORMS, ids=[str(n[0]) for n in NORMS])
@settings(max_examples=25, deadline=None)
@given(case=array_and_dim(elements=st.floats(-20, 20) | st.just(0.0)))
def test_norm_is_the_formula(p, ref, case):
    a, dim, keepdim = case
    if p == "fro" and isinstance(dim, tuple) and len(dim) > 2:
        dim = dim[:2]
    axis = axes(a.ndim, dim)
    with np.errstate(divide="ignore"):
        assert_close(t(a).norm(p, dim, keepdim), ref(a, axis, keepdim), tp.float64, (p, a.shape, dim))
        f = a.astype(np.float32)
        # a float32 sum of up to a few hundred terms, then the power 1/p, which multiplies its relative
        # error by 1/p (2 for p = 0.5): a bound, not the float32 rounding of one operation
        scale = 1.0 / p if isinstance(p, (int, float)) and 0 < p < 1 else 1.0
        assert_close(tp.norm(t(f), p, dim, keepdim), ref(f.astype(np.float64), axis, keepdim), tp.float32,
                     (p, a.shape, dim), atol=1e-5, rtol=5e-6 * scale)


def test_norm_dtypes():
    x = tp.full((100,), 1000.0, dtype=tp.float16)  # the sum of squares overflows float16
    assert x.norm().dtype is tp.float16 and x.norm().item() == 10000.0
    out = tp.tensor([3.0, 4.0]).norm(dtype=tp.float64)
    assert out.dtype is tp.float64 and out.item() == 5.0
    assert tp.zeros(0).norm().item() == 0.0 and tp.zeros(0, 3).norm(inf, 1).shape == (0,)


# -- errors ------------------------------------------------------------------------------------
X = tp.ones(2, 3)


def piece(call):
    """Marks a call whose error an inner op (or the data) raises, after the outer op was dispatched."""
    call.from_piece = True
    return call


ERRORS = [
    (lambda: tp.tensor([1, 2]).mean(), RuntimeError,
     r"^mean\(\): could not infer output dtype\. Input dtype must be either a floating point or complex dtype\. "
     r"Got: Long$"),
    (lambda: X.mean(dtype=tp.int32), RuntimeError, r"Optional dtype must be .* Got: Int$"),
    (lambda: X.mean((0, 0)), RuntimeError, r"^dim 0 appears multiple times in the list of dims$"),
    (lambda: X.mean(2), IndexError, r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)$"),
    (lambda: X.long().var(), RuntimeError, r"^std and var only support floating point and complex dtypes$"),
    (lambda: tp.std_mean(X.bool()), RuntimeError, r"^std_mean only support floating point"),
    (lambda: X.var(0, 1), TypeError, r"^var\(\) received an invalid combination of arguments"),
    (lambda: X.std(0, unbiased=True, correction=1), TypeError, r"^std\(\) received an invalid combination"),
    (lambda: X.logsumexp(3), IndexError, r"^Dimension out of range"),
    (lambda: X.long().softmax(1), NotImplementedError,
     r"^\"softmax_lastdim_kernel_impl\" not implemented for 'Long'$"),
    (lambda: X.int().log_softmax(0), NotImplementedError, r"^\"log_softmax_kernel_impl\" not implemented for 'Int'$"),
    (lambda: X.softmax(1, dtype=tp.bool), NotImplementedError, r"not implemented for 'Bool'$"),
    (lambda: X.softmax(-3), IndexError, r"^Dimension out of range"),
    (lambda: X.bool().relu(), RuntimeError, r"^Boolean inputs not supported for relu$"),
    (lambda: tp.relu_(X.bool()), RuntimeError, r"^Boolean inputs not supported for relu$"),
    (lambda: tp.leaky_relu(X.long()), NotImplementedError, r"^\"leaky_relu_cpu\" not implemented for 'Long'$"),
    (lambda: tp.gelu(X, approximate="erf"), RuntimeError, r"^approximate argument must be either none or tanh\.$"),
    (lambda: tp.gelu(X.short()), NotImplementedError, r"^\"GeluKernelImpl\" not implemented for 'Short'$"),
    (lambda: tp.silu(X.char()), NotImplementedError, r"^\"silu_cpu\" not implemented for 'Char'$"),
    (lambda: tp.elu(X.byte()), NotImplementedError, r"^\"elu_cpu\" not implemented for 'Byte'$"),
    (lambda: tp.softplus(X.bool()), NotImplementedError, r"^\"softplus_cpu\" not implemented for 'Bool'$"),
    (lambda: tp.mish(X.long()), NotImplementedError, r"^\"mish_cpu\" not implemented for 'Long'$"),
    (lambda: tp.hardtanh(X, 1, 0), ValueError, r"^min_val cannot be greater than max_val$"),
    (lambda: tp.hardtanh(X.bool()), RuntimeError, r"^Bool inputs not supported for hardtanh$"),
    (lambda: tp.hardtanh(X.byte()), RuntimeError, r"^cannot do hardtanh on an unsigned type with negative limits$"),
    (lambda: tp.relu6(X.bool()), RuntimeError, r"^Bool inputs not supported for hardtanh$"),
    (lambda: tp.one_hot(X), RuntimeError, r"^one_hot is only applicable to index tensor of type LongTensor\.$"),
    (lambda: tp.one_hot(tp.zeros(0, dtype=tp.int64)), RuntimeError,
     r"^Can not infer total number of classes from empty tensor\.$"),
    (piece(lambda: tp.one_hot(tp.tensor([0, -1]))), RuntimeError, r"^Class values must be non-negative\.$"),
    (piece(lambda: tp.one_hot(tp.tensor([0, 3]), 3)), RuntimeError,
     r"^Class values must be smaller than num_classes\.$"),
    (lambda: tp.logaddexp(X.long(), X.long()), NotImplementedError, r"^\"logaddexp_cpu\" not implemented for 'Long'$"),
    (piece(lambda: tp.linear(X, tp.ones(4, 5))), RuntimeError,
     r"^mat1 and mat2 shapes cannot be multiplied \(2x3 and 5x4\)$"),
    (lambda: tp.linear(X, tp.tensor(1.0)), RuntimeError,
     r"^both arguments to linear need to be at least 1D, but they are 2D and 0D$"),
    (lambda: tp.linear(X, tp.ones(4, 3, 1)), RuntimeError,
     r"^t\(\) expects a tensor with <= 2 dimensions, but self is 3D$"),
    (piece(lambda: tp.linear(X, tp.ones(3), tp.ones(1))), RuntimeError, r"^mat2 must be a matrix, got 1-D tensor$"),
    (piece(lambda: tp.linear(X, tp.ones(4, 3), tp.ones(4).double())), RuntimeError,
     r"^self and mat2 must have the same dtype, but got Double and Float$"),
    (lambda: tp.addmm(X, X, X), RuntimeError, r"^mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)$"),
    (lambda: tp.addmm(tp.ones(2, 2), X.double(), X.t()), RuntimeError,
     r"^mat1 and mat2 must have the same dtype, but got Double and Float$"),
    (lambda: tp.addmm(tp.ones(3), X, X.t()), RuntimeError,
     r"^The expanded size of the tensor \(2\) must match the existing size \(3\) at non-singleton dimension 1\.  "
     r"Target sizes: \[2, 2\]\.  Tensor sizes: \[3\]$"),
    (lambda: tp.addmm(tp.ones(1, 2, 2), X, X.t()), RuntimeError,
     r"the number of sizes provided \(2\) must be greater or equal to the number of dimensions in the tensor \(3\)$"),
    (lambda: tp.addmm(X, X[0], X), RuntimeError, r"^mat1 must be a matrix, got 1-D tensor$"),
    (lambda: tp.addmm(X.double(), X, X.t()), RuntimeError,
     r"^self and mat2 must have the same dtype, but got Double and Float$"),
    (lambda: tp.addmm(tp.ones(2, 2).bool(), X.bool(), X.bool().t()), NotImplementedError,
     r"^\"addmm_impl_cpu_\" not implemented for 'Bool'$"),
    (lambda: tp.outer(X, X[0]), RuntimeError, r"^outer: Expected 1-D argument self, but got 2-D$"),
    (lambda: tp.outer(X[0], X[0, 0]), RuntimeError, r"^outer: Expected 1-D argument vec2, but got 0-D$"),
    (lambda: tp.stack([]), RuntimeError, r"^stack expects a non-empty TensorList$"),
    (lambda: tp.stack([X, X[0]]), RuntimeError,
     r"^stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[3\] at entry 1$"),
    (lambda: tp.stack([X, X], 3), IndexError, r"^Dimension out of range \(expected to be in range of \[-3, 2\]"),
    (lambda: tp.hstack([]), RuntimeError, r"^hstack expects a non-empty TensorList$"),
    (lambda: tp.vstack(X), TypeError, r"^vstack\(\): argument 'tensors' \(position 1\) must be tuple of Tensors"),
    (lambda: tp.split(X[0, 0], 1), RuntimeError, r"^split expects at least a 1-dimensional tensor$"),
    (lambda: X.split(-1), RuntimeError, r"^split expects split_size be non-negative, but got split_size=-1$"),
    (lambda: X.split(0), RuntimeError, r"^split_size can only be 0 if dimension size is 0, but got dimension size "
                                       r"of 2$"),
    (lambda: X.split([1, 1], -1), RuntimeError, r"^split_with_sizes expects split_sizes to sum exactly to 3 \(input "
                                                r"tensor's size at dimension -1\), but got split_sizes=\[1, 1\]$"),
    (lambda: X.split([-1, 3]), RuntimeError, r"^split_with_sizes expects split_sizes have only non-negative entries, "
                                             r"but got split_sizes=\[-1, 3\]$"),
    (lambda: X.split(1.5), TypeError, r"^split_with_sizes\(\): argument 'split_sizes' \(position 2\) must be tuple "
                                      r"of ints, not float$"),
    (lambda: X.chunk(0), RuntimeError, r"^chunk expects `chunks` to be greater than 0, got: 0$"),
    (lambda: tp.chunk(X[0, 0], 2), RuntimeError, r"^chunk expects at least a 1-dimensional tensor$"),
    (lambda: tp.unbind(X[0, 0]), IndexError, r"^Dimension specified as 0 but tensor has no dimensions$"),
    (lambda: X.unbind(2), IndexError, r"^Dimension out of range"),
    (lambda: X[0].tril(), RuntimeError, r"^tril: input tensor must have at least 2 dimensions$"),
    (lambda: tp.triu(X[0, 0]), RuntimeError, r"^triu: input tensor must have at least 2 dimensions$"),
    (lambda: X.flip(), TypeError, r"^flip\(\) missing 1 required positional arguments: \"dims\"$"),
    (lambda: tp.flip(X, 0), TypeError, r"^flip\(\): argument 'dims' \(position 2\) must be tuple of ints, not int$"),
    (lambda: X.flip(0, -2), RuntimeError, r"^dim 0 appears multiple times in the list of dims$"),
    (lambda: X.roll(()), RuntimeError, r"^`shifts` required$"),
    (lambda: X.roll((1, 2)), RuntimeError, r"^shifts and dimensions must align\. shifts: 2, dims:0$"),
    (lambda: X.roll(1, (0, 1)), RuntimeError, r"^shifts and dimensions must align\. shifts: 1, dims:2$"),
    (lambda: X[0, 0].roll(1, -1), IndexError, r"^Dimension specified as -1 but tensor has no dimensions$"),
    (lambda: X.roll(1, 2), IndexError, r"^Dimension out of range"),
    (lambda: X.isclose(X.double()), RuntimeError, r"^Float did not match Double$"),
    (lambda: X.isclose(X, rtol=-1), RuntimeError, r"^rtol must be greater than or equal to zero, but got -1$"),
    (lambda: tp.allclose(X, X, atol=-1.5), RuntimeError,
     r"^atol must be greater than or equal to zero, but got -1\.5$"),
    (lambda: X.isclose(X[:, :2]), RuntimeError, r"^The size of tensor a \(3\) must match the size of tensor b \(2\)"),
    (lambda: X.long().norm(), RuntimeError,
     r"^linalg\.vector_norm: Expected a floating point or complex tensor as input\. Got Long$"),
    (lambda: X.norm(dtype=tp.float16), RuntimeError,
     r"^linalg\.vector_norm: the dtype of the input \(Float\) should be convertible without narrowing to the "
     r"specified dtype \(Half\)$"),
    (lambda: X.norm(dtype=tp.int64), RuntimeError, r"^linalg\.vector_norm: dtype should be floating point or complex, "
                                                   r"but got Long$"),
    (lambda: tp.zeros(0).norm(inf), RuntimeError, r"^linalg\.vector_norm cannot compute the inf norm on an empty "
                                                  r"tensor because the operation does not have an identity$"),
    (lambda: tp.zeros(0, 3).norm(-1, -2), RuntimeError, r"^linalg\.vector_norm cannot compute the -1 norm on the "
                                                        r"dimension -2because this dimension is empty"),
    (lambda: X.norm("nuc", 0), RuntimeError, r"^linalg\.matrix_norm: dim must be a 2-tuple\. Got 0$"),
    (lambda: tp.ones(3).norm("nuc"), RuntimeError, r"^linalg\.matrix_norm: The input tensor A must have at least 2 "
                                                   r"dimensions\.$"),
    (lambda: X.norm("foo"), RuntimeError, r"^linalg\.matrix_norm: Order foo not supported\.$"),
    (lambda: X.norm("fro", (0, 1, 0)), RuntimeError, r"^linalg\.matrix_norm: dim must be a 2-tuple\. Got 0 1 0$"),
]


@pytest.mark.parametrize("call, exc, message", ERRORS, ids=[e[2][:60] for e in ERRORS])
def test_bad_arguments_raise_pytorchs_errors(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


def test_checks_run_before_dispatch(logging_plugin):
    """A bad argument raises in the op's check, before the op reaches any key, so every backend raises the
    same error; only errors that values or an inner op reveal come after some of the decomposition ran."""
    from tensorplug.dispatch.dispatcher import OPS
    kernels = {q: op.table.get(("CompositeImplicitAutograd", None)) for q, op in OPS.items()}
    modules = {f"tensorplug.ops.{m}" for m in ("reductions", "activations", "math_ops", "linalg", "joining", "shape",
                                                "comparison")}
    ours = {q for q, k in kernels.items() if k is not None and k.kernel.__module__ in modules}
    assert {"tensorplug::relu", "tensorplug::linear", "tensorplug::one_hot"} <= ours
    for call, _, message in ERRORS:
        logging_plugin.LOG.clear()
        with tp.logging_mode(), pytest.raises(Exception):
            call()
        reached = ours & {name for _, name, _ in logging_plugin.LOG}
        assert bool(reached) == getattr(call, "from_piece", False), (message, reached)


def test_public_functions_and_methods_are_documented():
    names = ["mean", "var", "std", "var_mean", "std_mean", "logsumexp", "softmax", "log_softmax", "relu", "relu_",
             "leaky_relu", "gelu", "silu", "elu", "softplus", "mish", "hardtanh", "relu6", "one_hot", "logaddexp",
             "linear", "addmm", "outer", "stack", "hstack", "vstack", "dstack", "atleast_1d", "atleast_2d",
             "atleast_3d", "split", "split_with_sizes", "chunk", "unbind", "tril", "triu", "flip", "roll",
             "isclose", "allclose", "isnan", "isinf", "isfinite", "norm"]
    for name in names:
        assert getattr(tp, name).__doc__, name
    for name in ("mean", "var", "std", "softmax", "relu", "split", "chunk", "flip", "roll", "norm", "isclose"):
        assert getattr(tp.Tensor, name).__doc__, name


# -- gradients through the decompositions ---------------------------------------------------------
GRADIENTS = [
    # (name, function of one float64 input of shape (3, 4) away from kinks)
    ("mean", lambda x: x.mean(1)), ("var", lambda x: x.var(0)), ("std", lambda x: x.std()),
    ("var_mean", lambda x: sum(tp.var_mean(x, 1, correction=0))), ("std_mean", lambda x: sum(tp.std_mean(x, 0))),
    ("logsumexp", lambda x: x.logsumexp(1)), ("softmax", lambda x: x.softmax(0)),
    ("log_softmax", lambda x: x.log_softmax(-1)), ("relu", lambda x: x.relu()),
    ("leaky_relu", tp.leaky_relu), ("gelu", tp.gelu), ("gelu tanh", lambda x: tp.gelu(x, approximate="tanh")),
    ("silu", tp.silu), ("elu", lambda x: tp.elu(x, 0.5, 2.0, 1.5)), ("softplus", lambda x: tp.softplus(x, 2, 1)),
    ("mish", tp.mish), ("hardtanh", tp.hardtanh), ("relu6", lambda x: tp.relu6(x * 4)),
    ("logaddexp", lambda x: tp.logaddexp(x, x.flip(0))),
    ("linear", lambda x: tp.linear(x, x[:2] * 2, x[0, :2])), ("addmm", lambda x: tp.addmm(x[:, 0], x, x.t(), beta=0.5)),
    ("outer", lambda x: tp.outer(x[0], x[1])), ("stack", lambda x: tp.stack([x, x * 2], 1)),
    ("vstack", lambda x: tp.vstack([x[0], x])), ("split", lambda x: x.split([1, 3], 1)[1]),
    ("chunk", lambda x: x.chunk(3)[1]), ("unbind", lambda x: x.unbind(1)[2]), ("tril", lambda x: x.tril(1)),
    ("flip", lambda x: x.flip(0, 1)), ("roll", lambda x: x.roll((1, -1), (0, 1))), ("roll flat", lambda x: x.roll(5)),
    ("norm", lambda x: x.norm(dim=1)), ("norm 1", lambda x: x.norm(1)), ("norm 3", lambda x: x.norm(3, 0)),
    ("norm inf", lambda x: x.norm(inf, 1)), ("norm -2", lambda x: x.norm(-2)),
]


@pytest.mark.parametrize("name, fn", GRADIENTS, ids=[g[0] for g in GRADIENTS])
def test_gradients_match_finite_differences(name, fn):
    rng = np.random.default_rng(5)
    a = rng.uniform(0.2, 1.5, size=(3, 4)) * rng.choice([-1.0, 1.0], size=(3, 4))  # away from 0 and ties
    assert tp.autograd.gradcheck(fn, (t(a).requires_grad_(),))


def grad_of(fn, data):
    x = t(np.array(data, dtype=np.float64)).requires_grad_()
    out = fn(x)
    (out.sum() if out.dim() else out).backward()
    return values(x.grad).tolist()


KINKS = [
    # PyTorch's gradients where the formula has a kink, a tie or an overflowing branch
    ("relu at 0 and NaN", lambda x: x.relu(), [0.0, 2.0, -2.0, nan], [0.0, 1.0, 0.0, 1.0]),
    ("relu_ at 0", lambda x: (x * 1).relu_(), [0.0, 2.0, -2.0], [0.0, 1.0, 0.0]),
    ("hardtanh at its limits", lambda x: tp.hardtanh(x, 0.0, 1.0), [0.0, 1.0, 0.5, 2.0], [0.0, 0.0, 1.0, 0.0]),
    ("relu6 at its limits", tp.relu6, [0.0, 6.0, 3.0, 7.0], [0.0, 0.0, 1.0, 0.0]),
    ("softplus past the threshold", tp.softplus, [1000.0, 30.0, -1000.0], [1.0, 1.0, 0.0]),
    ("mish of large inputs", tp.mish, [1000.0, -1000.0], [1.0, 0.0]),
    ("elu of large inputs", tp.elu, [1000.0, -1000.0, 0.0], [1.0, 0.0, 1.0]),
    ("elu tail", lambda x: tp.elu(x.float(), 0.5).double(), [-30.0], [float(np.float32(0.5 * math.exp(-30.0)))]),
    ("norm of zeros", lambda x: x.norm(), [0.0, 0.0], [0.0, 0.0]),
    ("3-norm of zeros", lambda x: x.norm(3), [0.0, 0.0], [0.0, 0.0]),
    ("std of a constant", lambda x: x.std(), [2.0, 2.0, 2.0], [0.0, 0.0, 0.0]),
    ("logsumexp with -inf", lambda x: x.logsumexp(0), [-inf, 0.0], [0.0, 1.0]),
    ("softmax with -inf", lambda x: x.softmax(0)[1], [-inf, 0.0], [0.0, 0.0]),
]


@pytest.mark.parametrize("name, fn, data, expected", KINKS, ids=[k[0] for k in KINKS])
def test_gradients_at_kinks_and_overflows(name, fn, data, expected):
    assert grad_of(fn, data) == expected
