"""Composite ops against PyTorch itself: same values (to a dtype's tolerance), dtypes, shapes, and the
same errors (type and first line of the message).

Each case is a function of a namespace ``L`` (``L.T`` is tensorplug or torch, ``L.F`` their functional
namespace) and the input tensors, so one lambda runs on both libraries.
"""

from __future__ import annotations

import math
import types
import warnings

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")
F = torch.nn.functional

TP = types.SimpleNamespace(T=tp, F=tp, name="tp")
TORCH = types.SimpleNamespace(T=torch, F=F, name="torch")

FLOATS = [tp.float16, tp.bfloat16, tp.float32, tp.float64]
INTS = [tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64]
ALL_DTYPES = [tp.bool] + INTS + FLOATS
# (rtol, atol): the ops compute in other orders than PyTorch's kernels; reduced floats round once at the end
TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 1e-6), "float16": (2e-3, 1e-3),
       "bfloat16": (1.6e-2, 1e-2)}

nan, inf = math.nan, math.inf


def sample(shape, dtype, seed=0, lo=-3.0, hi=3.0):
    """Random values for ``dtype`` as a numpy array (floats exactly representable in the dtype)."""
    rng = np.random.default_rng(seed)
    if dtype is tp.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if not dtype.is_floating_point:
        return rng.integers(0 if dtype is tp.uint8 else -4, 5, size=shape).astype(dtype.np)
    return rng.uniform(lo, hi, size=shape).astype(dtype.np)


def both(a):
    """``a`` (numpy) as a tensorplug tensor and a torch tensor with the same values."""
    if a.dtype.name == "bfloat16":
        return tp.from_numpy(a.copy()), torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return tp.from_numpy(a.copy()), torch.from_numpy(a.copy())


def outcome(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("ok", call())
        except Exception as e:  # noqa: BLE001 - the oracle compares whatever was raised
            return ("err", type(e).__name__, str(e).split("\n")[0])


def host(t):
    if isinstance(t, torch.Tensor):
        return t.to(torch.float64).numpy()
    return np.asarray(t.numpy(), dtype=np.float64)


def assert_same_value(ours, theirs, what):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tp.Tensor), what
        assert ours.dtype.name == str(theirs.dtype).replace("torch.", ""), (what, ours.dtype, theirs.dtype)
        assert tuple(ours.shape) == tuple(theirs.shape), (what, ours.shape, theirs.shape)
        rtol, atol = TOL.get(ours.dtype.name, (0, 0))
        np.testing.assert_allclose(host(ours), host(theirs), rtol=rtol, atol=atol, err_msg=str(what))
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(ours, tuple) == isinstance(theirs, tuple), what
        assert len(ours) == len(theirs), what
        for a, b in zip(ours, theirs):
            assert_same_value(a, b, what)
    else:
        assert ours == theirs, what


def assert_same(fn, arrays, what="", view=None):
    """``fn(L, *tensors)`` succeeds on both libraries with equal results, or raises the same error."""
    pairs = [both(a) for a in arrays]
    ours_in = [p[0] if view is None else view(p[0]) for p in pairs]
    theirs_in = [p[1] if view is None else view(p[1]) for p in pairs]
    ours = outcome(lambda: fn(TP, *ours_in))
    theirs = outcome(lambda: fn(TORCH, *theirs_in))
    assert ours[0] == theirs[0], (what, ours, theirs)
    if ours[0] == "err":
        assert ours[1:] == theirs[1:], what
    else:
        assert_same_value(ours[1], theirs[1], what)


SHAPES = [(), (0,), (5,), (3, 4), (0, 3), (2, 0, 3), (2, 3, 4)]


def dim_choices(ndim):
    """Every single dim (negative ones too), a pair, a repeated dim and one out of range."""
    n = max(ndim, 1)
    out = list(range(-n, n)) + [n]
    if ndim >= 2:
        out += [(0, -1), (-1, 0), (1, 1)]
    return out


# -- reductions ------------------------------------------------------------------------------
REDUCTIONS = {
    "mean": lambda L, x, d, k: x.mean(d, k),
    "mean_fn": lambda L, x, d, k: L.T.mean(x, d, keepdim=k),
    "var": lambda L, x, d, k: x.var(d, keepdim=k),
    "var_biased": lambda L, x, d, k: x.var(d, unbiased=False, keepdim=k),
    "std": lambda L, x, d, k: x.std(d, keepdim=k),
    "std_c0": lambda L, x, d, k: L.T.std(x, d, correction=0, keepdim=k),
    "var_c2": lambda L, x, d, k: L.T.var(x, d, correction=2, keepdim=k),
    "var_c_half": lambda L, x, d, k: x.var(d, correction=0.5, keepdim=k),
    "var_mean": lambda L, x, d, k: L.T.var_mean(x, d, keepdim=k),
    "std_mean": lambda L, x, d, k: L.T.std_mean(x, d, correction=0, keepdim=k),
    "logsumexp": lambda L, x, d, k: L.T.logsumexp(x, d, k),
    "norm": lambda L, x, d, k: x.norm(dim=d, keepdim=k),
    "norm1": lambda L, x, d, k: L.T.norm(x, 1, d, k),
    "norm_inf": lambda L, x, d, k: x.norm(inf, d, k),
    "norm_ninf": lambda L, x, d, k: x.norm(-inf, d, k),
    "norm0": lambda L, x, d, k: x.norm(0, d, k),
    "norm3": lambda L, x, d, k: x.norm(3, d, k),
    "norm_neg": lambda L, x, d, k: x.norm(-1.5, d, k),
}


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_reductions_match_torch(name, dtype):
    fn = REDUCTIONS[name]
    for shape in SHAPES:
        a = sample(shape, dtype, seed=len(shape))
        for keepdim in (False, True):
            if name != "logsumexp":  # torch.logsumexp needs a dim
                assert_same(lambda L, x: fn(L, x, None, keepdim), [a], (name, shape, None, keepdim))
            for d in dim_choices(len(shape)):
                assert_same(lambda L, x: fn(L, x, d, keepdim), [a], (name, shape, d, keepdim))


@pytest.mark.parametrize("name", ["mean", "var", "std", "logsumexp", "norm", "norm_inf", "norm1", "norm3"])
@pytest.mark.parametrize("view", [lambda t: t.t(), lambda t: t[:, 1::2], lambda t: t.permute(1, 0)[::2]],
                         ids=["t", "stride", "permuted"])
def test_reductions_of_non_contiguous_inputs(name, view):
    a = sample((6, 5), tp.float32, seed=3)
    for d in (0, 1, (0, 1)):
        assert_same(lambda L, x: REDUCTIONS[name](L, x, d, False), [a], (name, d), view=view)


SPECIAL_ROWS = np.array([[1.0, 2.0, 3.0], [-inf, -inf, -inf], [inf, 1.0, 2.0], [-inf, 0.0, 1.0],
                         [nan, 1.0, 2.0], [inf, -inf, 0.0], [1000.0, 1000.0, -1000.0], [-1e4, -1e4 + 1, -1e4]])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", ["logsumexp", "softmax", "log_softmax", "norm", "norm_inf", "mean", "var"])
def test_numerically_hard_rows(name, dtype):
    a = SPECIAL_ROWS.astype(dtype.np)
    fns = {"logsumexp": lambda L, x: L.T.logsumexp(x, 1), "softmax": lambda L, x: L.T.softmax(x, 1),
           "log_softmax": lambda L, x: x.log_softmax(-1), "norm": lambda L, x: x.norm(dim=1),
           "norm_inf": lambda L, x: x.norm(inf, 1), "mean": lambda L, x: x.mean(1), "var": lambda L, x: x.var(1)}
    assert_same(fns[name], [a], (name, dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("out", [None, tp.float16, tp.float32, tp.float64, tp.int64], ids=str)
def test_mean_dtype_argument(dtype, out):
    a = sample((3, 4), dtype, seed=5)
    tdt = None if out is None else getattr(torch, out.name)
    assert_same(lambda L, x: x.mean(1, dtype=out if L is TP else tdt), [a], (dtype, out))
    assert_same(lambda L, x: L.T.mean(x, dtype=out if L is TP else tdt), [a], (dtype, out))


def test_reduced_precision_sums_do_not_overflow():
    big = np.full((1000,), 6e4, dtype=np.float16)
    assert_same(lambda L, x: x.mean(), [big])
    assert_same(lambda L, x: x.norm(), [np.full((100,), 1000.0, dtype=np.float16)])
    assert_same(lambda L, x: x.var(), [np.array([300.0, 301.0, 302.0, 600.0], dtype=np.float16)])
    assert_same(lambda L, x: L.T.softmax(x, 0), [np.array([1.0, 2.0, 3.0], dtype=np.float16)])


STAT_CALLS = [
    ("var(True)", lambda L, x: x.var(True)), ("var(False)", lambda L, x: x.var(False)),
    ("var(0, True)", lambda L, x: x.var(0, True)), ("var(0, False, True)", lambda L, x: x.var(0, False, True)),
    ("std(1, True, True)", lambda L, x: x.std(1, True, True)), ("torch.std(x, 1, False)",
                                                                lambda L, x: L.T.std(x, 1, False)),
    ("var(unbiased=False)", lambda L, x: L.T.var(x, unbiased=False)),
    ("var(None, keepdim)", lambda L, x: x.var(None, keepdim=True)),
    ("var([-1, 0])", lambda L, x: x.var([-1, 0], correction=0)),
    ("var(correction=-0.0)", lambda L, x: x.var(1, correction=-0.0)),
    ("var(correction=3)", lambda L, x: x.var(0, correction=3)),
    ("mean([0, 1])", lambda L, x: x.mean([0, 1], True)), ("mean(())", lambda L, x: x.mean(())),
    ("var_mean(1)", lambda L, x: L.T.var_mean(x, 1)), ("std_mean(unbiased)", lambda L, x: L.T.std_mean(x, 1, False)),
]


@pytest.mark.parametrize("what, fn", STAT_CALLS, ids=[c[0] for c in STAT_CALLS])
def test_statistics_signatures(what, fn):
    assert_same(fn, [sample((2, 3), tp.float32, seed=1)], what)


NORM_CALLS = [
    ("p=None", lambda L, x: L.T.norm(x, p=None)), ("fro", lambda L, x: x.norm("fro")),
    ("fro dim", lambda L, x: x.norm("fro", 1)), ("fro dims", lambda L, x: x.norm("fro", (0, 1), True)),
    ("p=2.0", lambda L, x: x.norm(2.0)), ("p=True", lambda L, x: x.norm(True)),
    ("p=0.5", lambda L, x: x.norm(0.5)), ("dtype", lambda L, x: x.norm(dtype=L.T.float64)),
    ("fro dtype", lambda L, x: L.T.norm(x, "fro", dtype=L.T.float64)),
    ("dims list", lambda L, x: x.norm(1, [0, 1])),
]


@pytest.mark.parametrize("what, fn", NORM_CALLS, ids=[c[0] for c in NORM_CALLS])
def test_norm_signatures(what, fn):
    assert_same(fn, [sample((2, 3), tp.float32, seed=2)], what)


# -- softmax, log_softmax ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_softmax_matches_torch(name, dtype):
    for shape in SHAPES:
        a = sample(shape, dtype, seed=7, lo=-20, hi=20)
        for d in range(-max(len(shape), 1), max(len(shape), 1) + 1):
            assert_same(lambda L, x: getattr(L.T, name)(x, d), [a], (name, shape, d))
            assert_same(lambda L, x: getattr(x, name)(d), [a], (name, shape, d))
        for out in (tp.float32, tp.float64, tp.float16, tp.int64):
            d = len(shape) - 1 if shape else 0
            assert_same(lambda L, x: getattr(L.T, name)(x, d, dtype=out if L is TP else getattr(torch, out.name)),
                        [a], (name, shape, out))


def test_softmax_of_non_contiguous_input():
    a = sample((5, 6), tp.float32, seed=4)
    for d in (0, 1, -1):
        assert_same(lambda L, x: L.T.softmax(x, d), [a], d, view=lambda t: t.t())
        assert_same(lambda L, x: x.log_softmax(d), [a], d, view=lambda t: t[::2, 1::2])


# -- activations ------------------------------------------------------------------------------
ACTIVATIONS = {
    "relu": lambda L, x: x.relu(), "relu_fn": lambda L, x: L.T.relu(x),
    "leaky_relu": lambda L, x: L.F.leaky_relu(x), "leaky_relu_0.2": lambda L, x: L.F.leaky_relu(x, 0.2),
    "leaky_relu_2": lambda L, x: L.F.leaky_relu(x, 2),
    "gelu": lambda L, x: L.F.gelu(x), "gelu_tanh": lambda L, x: L.F.gelu(x, approximate="tanh"),
    "silu": lambda L, x: L.F.silu(x), "elu": lambda L, x: L.F.elu(x), "elu_0.5": lambda L, x: L.F.elu(x, 0.5),
    "softplus": lambda L, x: L.F.softplus(x), "softplus_beta": lambda L, x: L.F.softplus(x, 2, 5),
    "softplus_neg_beta": lambda L, x: L.F.softplus(x, -1),
    "mish": lambda L, x: L.F.mish(x), "hardtanh": lambda L, x: L.F.hardtanh(x),
    "hardtanh_0_2": lambda L, x: L.F.hardtanh(x, 0.0, 2.0), "hardtanh_frac": lambda L, x: L.F.hardtanh(x, -0.5, 1.5),
    "relu6": lambda L, x: L.F.relu6(x), "isnan": lambda L, x: x.isnan(), "isinf": lambda L, x: L.T.isinf(x),
    "isfinite": lambda L, x: x.isfinite(),
}
SPECIALS = [0.0, -0.0, 1e-8, -1e-8, 0.5, -0.5, 5.0, -5.0, 6.0, 7.0, 15.0, 19.99, 20.0, 20.5, 30.0, -30.0,
            -100.0, 100.0, nan, -inf]


@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_activations_match_torch(name, dtype):
    fn = ACTIVATIONS[name]
    for shape in [(), (0,), (7,), (3, 5)]:
        assert_same(fn, [sample(shape, dtype, seed=11, lo=-8, hi=8)], (name, shape))
    if dtype.is_floating_point:
        specials = np.array(SPECIALS, dtype=np.float64).astype(dtype.np)
        assert_same(fn, [specials], (name, "specials"))
        assert_same(fn, [sample((6, 8), dtype, seed=12)], (name, "strided"), view=lambda t: t[::2, 1::3])


def test_relu_keeps_the_sign_of_zero():
    ours = tp.tensor([-0.0, 0.0, -1.0]).relu().numpy()
    theirs = torch.tensor([-0.0, 0.0, -1.0]).relu().numpy()
    assert np.signbit(ours).tolist() == np.signbit(theirs).tolist()


def test_positive_infinity_activations():
    # PyTorch's vectorised CPU gelu gives NaN at +inf (erf's polynomial); the formula and its scalar path give inf
    a = np.array([inf], dtype=np.float32)
    for name in ("relu", "leaky_relu", "gelu_tanh", "silu", "elu", "softplus", "mish", "hardtanh", "relu6"):
        assert_same(ACTIVATIONS[name], [a], name)


def test_relu_inplace_matches_torch():
    a = sample((4, 5), tp.float32, seed=9)
    ours, theirs = both(a)
    assert ours.relu_() is ours
    theirs.relu_()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


ONE_HOT = [
    ("default", lambda L, x: L.F.one_hot(x)), ("n=6", lambda L, x: L.F.one_hot(x, 6)),
    ("n=4", lambda L, x: L.F.one_hot(x, 4)), ("n=0", lambda L, x: L.F.one_hot(x, 0)),
    ("n=-2", lambda L, x: L.F.one_hot(x, -2)),
]


@pytest.mark.parametrize("what, fn", ONE_HOT, ids=[c[0] for c in ONE_HOT])
@pytest.mark.parametrize("dtype", [tp.int64, tp.int32, tp.float32, tp.bool], ids=str)
def test_one_hot_matches_torch(what, fn, dtype):
    for values in ([0, 2, 1], [[0, 4], [3, 0]], [], [-1, 2], 3, [[]]):
        assert_same(fn, [np.array(values, dtype=dtype.np)], (what, values))


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float64", "float32"), ("int64", "int64"),
                                    ("int32", "float16"), ("bfloat16", "bfloat16")])
def test_logaddexp_matches_torch(dtypes):
    with np.errstate(invalid="ignore"):  # integer casts of inf and NaN: any value will do
        a = np.array([1.0, -inf, inf, -inf, 1000.0, nan, 0.0, inf]).astype(getattr(tp, dtypes[0]).np)
        b = np.array([2.0, -inf, inf, 1.0, 1000.0, 1.0, -0.0, -inf]).astype(getattr(tp, dtypes[1]).np)
    assert_same(lambda L, x, y: L.T.logaddexp(x, y), [a, b], dtypes)
    assert_same(lambda L, x, y: x.logaddexp(y), [a, b[:1]], dtypes)


# -- linear algebra ---------------------------------------------------------------------------
LINALG = [
    ("linear", lambda L, x, w, b: L.F.linear(x, w, b), [(2, 3), (4, 3), (4,)]),
    ("linear nobias", lambda L, x, w, b: L.F.linear(x, w), [(2, 3), (4, 3), (4,)]),
    ("linear 3d", lambda L, x, w, b: L.F.linear(x, w, b), [(2, 5, 3), (4, 3), (4,)]),
    ("linear 1d in", lambda L, x, w, b: L.F.linear(x, w, b), [(3,), (4, 3), (4,)]),
    ("linear 1d w", lambda L, x, w, b: L.F.linear(x, w), [(2, 3), (3,), (4,)]),
    ("linear 1d w bias", lambda L, x, w, b: L.F.linear(x, w, b), [(2, 3), (3,), ()]),
    ("linear 2d bias", lambda L, x, w, b: L.F.linear(x, w, b), [(2, 5, 3), (4, 3), (5, 4)]),
    ("linear 0d bias", lambda L, x, w, b: L.F.linear(x, w, b), [(5, 3), (4, 3), ()]),
    ("linear bad bias", lambda L, x, w, b: L.F.linear(x, w, b), [(2, 5, 3), (4, 3), (3,)]),
    ("linear bad shapes", lambda L, x, w, b: L.F.linear(x, w), [(2, 3), (4, 5), (4,)]),
    ("linear 3d w", lambda L, x, w, b: L.F.linear(x, w), [(2, 3), (4, 3, 1), (4,)]),
    ("linear 0d w", lambda L, x, w, b: L.F.linear(x, w), [(2, 3), (), (4,)]),
    ("linear 0d in", lambda L, x, w, b: L.F.linear(x, w), [(), (4, 3), (4,)]),
    ("linear empty", lambda L, x, w, b: L.F.linear(x, w, b), [(0, 3), (4, 3), (4,)]),
    ("linear k=0", lambda L, x, w, b: L.F.linear(x, w, b), [(2, 0), (4, 0), (4,)]),
    ("addmm", lambda L, s, a, b: L.T.addmm(s, a, b), [(2, 4), (2, 3), (3, 4)]),
    ("addmm method", lambda L, s, a, b: s.addmm(a, b, beta=0.5, alpha=2), [(2, 4), (2, 3), (3, 4)]),
    ("addmm bcast", lambda L, s, a, b: L.T.addmm(s, a, b, beta=2, alpha=3), [(4,), (2, 3), (3, 4)]),
    ("addmm bcast 0d", lambda L, s, a, b: L.T.addmm(s, a, b), [(), (2, 3), (3, 4)]),
    ("addmm bad self", lambda L, s, a, b: L.T.addmm(s, a, b), [(3,), (2, 3), (3, 4)]),
    ("addmm bad self 2d", lambda L, s, a, b: L.T.addmm(s, a, b), [(3, 3), (2, 3), (3, 4)]),
    ("addmm mat1 1d", lambda L, s, a, b: L.T.addmm(s, a, b), [(2, 4), (3,), (3, 4)]),
    ("addmm mat2 1d", lambda L, s, a, b: L.T.addmm(s, a, b), [(2, 4), (2, 3), (3,)]),
    ("addmm shapes", lambda L, s, a, b: L.T.addmm(s, a, b), [(2, 4), (2, 3), (2, 4)]),
    ("addmm bad self and shapes", lambda L, s, a, b: L.T.addmm(s, a, b), [(3,), (2, 3), (2, 4)]),
    ("addmm k=0", lambda L, s, a, b: L.T.addmm(s, a, b), [(2, 4), (2, 0), (0, 4)]),
    ("addmm beta=0", lambda L, s, a, b: L.T.addmm(s.log(), a, b, beta=0), [(2, 4), (2, 3), (3, 4)]),
    ("addmm alpha=0", lambda L, s, a, b: L.T.addmm(s, a.log(), b, alpha=0), [(2, 4), (2, 3), (3, 4)]),
    ("outer", lambda L, a, b, c: L.T.outer(a, b), [(3,), (4,), ()]),
    ("outer method", lambda L, a, b, c: a.outer(b), [(0,), (4,), ()]),
    ("outer 2d", lambda L, a, b, c: L.T.outer(a, b), [(2, 3), (4,), ()]),
    ("outer 0d", lambda L, a, b, c: L.T.outer(c, b), [(2, 3), (4,), ()]),
    ("outer vec2 2d", lambda L, a, b, c: L.T.outer(b, a), [(2, 3), (4,), ()]),
]


@pytest.mark.parametrize("what, fn, shapes", LINALG, ids=[c[0] for c in LINALG])
@pytest.mark.parametrize("dtype", [tp.float32, tp.float64, tp.float16, tp.bfloat16, tp.int64, tp.bool], ids=str)
def test_linalg_matches_torch(what, fn, shapes, dtype):
    arrays = [sample(s, dtype, seed=i) for i, s in enumerate(shapes)]
    if dtype.is_floating_point:
        arrays = [np.asarray(np.abs(a) + np.asarray(0.5, dtype=a.dtype)) for a in arrays]  # logs stay finite
    assert_same(fn, arrays, what)


def test_addmm_zero_factors_skip_their_operands():
    nan_self = np.full((2, 2), nan, dtype=np.float32)
    ones = np.ones((2, 3), dtype=np.float32)
    assert_same(lambda L, s, a, b: L.T.addmm(s, a, b, beta=0), [nan_self, ones, ones.T.copy()])
    assert_same(lambda L, s, a, b: L.T.addmm(s, a, b, alpha=0), [np.ones((2, 2), np.float32), ones * nan,
                                                                 ones.T.copy()])


def test_addmm_of_integers_truncates_factors_and_of_halves_accumulates_in_float():
    i = [np.ones((2, 2), np.int64), np.ones((2, 3), np.int64), np.ones((3, 2), np.int64)]
    assert_same(lambda L, s, a, b: L.T.addmm(s, a, b, beta=1.7, alpha=0.5), i)
    h = [np.ones((2, 2), np.float16), np.full((2, 300), 300.0, np.float16), np.ones((300, 2), np.float16)]
    assert_same(lambda L, s, a, b: L.T.addmm(s, a, b, alpha=0.001), h)


MIXED = [
    ("addmm self f64", lambda L, s, a, b: L.T.addmm(s.double(), a, b)),
    ("addmm mat1 f64", lambda L, s, a, b: L.T.addmm(s, a.double(), b)),
    ("addmm mats f64", lambda L, s, a, b: L.T.addmm(s, a.double(), b.double())),
    ("addmm self, mat1 f64", lambda L, s, a, b: L.T.addmm(s.double(), a.double(), b)),
    ("linear weight f64", lambda L, s, a, b: L.F.linear(a, b.t().double())),
    ("linear bias f64", lambda L, s, a, b: L.F.linear(a, b.t(), s[0].double())),
    ("linear 1d in bias f64", lambda L, s, a, b: L.F.linear(a[0], b.t(), s[0].double())),
    ("outer mixed", lambda L, s, a, b: L.T.outer(a[0].long(), b[0])),
    ("stack mixed", lambda L, s, a, b: L.T.stack([a[0].long(), b[:, 0]])),
]


@pytest.mark.parametrize("what, fn", MIXED, ids=[c[0] for c in MIXED])
def test_mixed_dtypes_match_torch(what, fn):
    arrays = [sample((2, 4), tp.float32, 0), sample((2, 3), tp.float32, 1), sample((3, 4), tp.float32, 2)]
    assert_same(fn, arrays, what)


# -- joining, splitting, reordering ------------------------------------------------------------
SHAPE_OPS = [
    ("stack", lambda L, x: L.T.stack([x, x + 1 if x.dtype != L.T.bool else x])),
    ("stack dims", lambda L, x: [L.T.stack((x, x), d) for d in range(-x.dim() - 1, x.dim() + 2)]),
    ("hstack", lambda L, x: L.T.hstack([x, x])), ("vstack", lambda L, x: L.T.vstack([x, x])),
    ("dstack", lambda L, x: L.T.dstack([x, x])),
    ("atleast_1d", lambda L, x: L.T.atleast_1d(x)), ("atleast_2d", lambda L, x: L.T.atleast_2d(x)),
    ("atleast_3d", lambda L, x: L.T.atleast_3d(x)), ("atleast_2d pair", lambda L, x: L.T.atleast_2d(x, x)),
    ("atleast_3d list", lambda L, x: L.T.atleast_3d([x])),
    ("split", lambda L, x: [L.T.split(x, s, d) for s in (1, 2, 5) for d in range(-x.dim(), x.dim() + 1)]),
    ("split 0", lambda L, x: x.split(0)), ("split neg", lambda L, x: x.split(-1)),
    ("split sizes", lambda L, x: x.split([1, x.shape[0] - 1])),
    ("split sizes dim -1", lambda L, x: x.split([1, 1], -1)),
    ("split sizes tuple", lambda L, x: L.T.split(x, (x.shape[-1],), -1)),
    ("split sizes neg", lambda L, x: x.split([-1, x.shape[0] + 1])),
    ("split sizes empty", lambda L, x: x.split([], 0)),
    ("split float", lambda L, x: x.split(1.5)),
    ("split_with_sizes", lambda L, x: x.split_with_sizes([x.shape[0]])),
    ("chunk", lambda L, x: [L.T.chunk(x, c, d) for c in (1, 2, 3, 4, 7) for d in range(-x.dim(), x.dim() + 1)]),
    ("chunk 0", lambda L, x: x.chunk(0)), ("chunk neg", lambda L, x: x.chunk(-2)),
    ("unbind", lambda L, x: [L.T.unbind(x, d) for d in range(-x.dim() - 1, x.dim() + 1)]),
    ("unbind method", lambda L, x: x.unbind()),
    ("tril", lambda L, x: [L.T.tril(x, k) for k in (-5, -1, 0, 1, 2, 9)]),
    ("triu", lambda L, x: [x.triu(k) for k in (-5, -1, 0, 1, 2, 9)]),
    ("flip", lambda L, x: [L.T.flip(x, (d,)) for d in range(-x.dim() - 1, x.dim() + 1)]),
    ("flip all", lambda L, x: L.T.flip(x, list(range(x.dim())))),
    ("flip method", lambda L, x: x.flip(0, -1)), ("flip method tuple", lambda L, x: x.flip((0, -1))),
    ("flip dup", lambda L, x: x.flip(0, -x.dim())), ("flip none", lambda L, x: L.T.flip(x, ())),
    ("roll", lambda L, x: [L.T.roll(x, s, d) for s in (-7, -1, 0, 1, 2, 9) for d in range(-x.dim() - 1, x.dim())]),
    ("roll flat", lambda L, x: [x.roll(s) for s in (-3, 0, 1, 4)]),
    ("roll pair", lambda L, x: x.roll((1, -1), (0, -1))), ("roll lists", lambda L, x: x.roll([1, 2], [0, -1])),
    ("roll same dim", lambda L, x: x.roll((1, 1), (0, 0))),
    ("roll mismatch", lambda L, x: x.roll((1, 2), 0)), ("roll 2 shifts", lambda L, x: x.roll((1, 2))),
    ("roll kw", lambda L, x: x.roll(shifts=1, dims=0)), ("roll no shifts", lambda L, x: x.roll(())),
]


@pytest.mark.parametrize("what, fn", SHAPE_OPS, ids=[c[0] for c in SHAPE_OPS])
@pytest.mark.parametrize("dtype", [tp.float32, tp.int64, tp.bool, tp.bfloat16], ids=str)
def test_shape_ops_match_torch(what, fn, dtype):
    for shape in [(), (0,), (4,), (3, 4), (0, 3), (2, 3, 4), (2, 0, 3)]:
        assert_same(fn, [sample(shape, dtype, seed=13)], (what, shape))


@pytest.mark.parametrize("what, fn", [c for c in SHAPE_OPS if c[0] in {"stack", "split", "chunk", "tril",
                                                                          "flip", "roll", "roll flat", "vstack"}])
def test_shape_ops_of_non_contiguous_inputs(what, fn):
    assert_same(fn, [sample((4, 6), tp.float32, seed=14)], what, view=lambda t: t.t())
    assert_same(fn, [sample((4, 6), tp.float32, seed=14)], what, view=lambda t: t[::2, 1::2])


JOIN_ERRORS = [
    ("stack empty", lambda L, x, y: L.T.stack([])),
    ("stack unequal", lambda L, x, y: L.T.stack([x, y])),
    ("stack unequal later", lambda L, x, y: L.T.stack([x, x, y])),
    ("stack out of range", lambda L, x, y: L.T.stack([x, x], 3)),
    ("stack 0d", lambda L, x, y: L.T.stack([x[0, 0], y[0]])),
    ("hstack empty", lambda L, x, y: L.T.hstack([])), ("vstack empty", lambda L, x, y: L.T.vstack([])),
    ("vstack tensor", lambda L, x, y: L.T.vstack(x)),
    ("hstack 0d", lambda L, x, y: L.T.hstack([x[0, 0], y[0]])),
    ("vstack mixed", lambda L, x, y: L.T.vstack([y, x[:, :1].t().long()])),
    ("hstack bad", lambda L, x, y: L.T.hstack([x, y.unsqueeze(0)])),
]


@pytest.mark.parametrize("what, fn", JOIN_ERRORS, ids=[c[0] for c in JOIN_ERRORS])
def test_joining_matches_torch(what, fn):
    assert_same(fn, [sample((2, 3), tp.float32, 1), sample((3,), tp.float32, 2)], what)


# -- isclose, allclose ---------------------------------------------------------------------------
CLOSE_VALUES = [
    ([1.0, 1000.0, nan, inf, -inf, inf, 1.0, 0.0, 1e-9, 1.0],
     [1.0 + 1e-6, 1001.0, nan, inf, -inf, -inf, inf, 1e-9, 0.0, nan]),
]
CLOSE_ARGS = [{}, {"rtol": 1e-3}, {"atol": 1e-3}, {"rtol": 0, "atol": 0}, {"equal_nan": True},
              {"rtol": 0, "atol": 0, "equal_nan": True}, {"rtol": 0.1, "atol": 2}]


@pytest.mark.parametrize("kwargs", CLOSE_ARGS, ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_isclose_matches_torch(kwargs, dtype):
    for a, b in CLOSE_VALUES:
        with np.errstate(invalid="ignore"):
            xa, xb = np.array(a).astype(dtype.np), np.array(b).astype(dtype.np)
        assert_same(lambda L, x, y: L.T.isclose(x, y, **kwargs), [xa, xb], (dtype, kwargs))
        assert_same(lambda L, x, y: x.isclose(y, **kwargs), [xa, xb[:1]], (dtype, kwargs))
        assert_same(lambda L, x, y: L.T.allclose(x[:2], y[:2], **kwargs), [xa, xb], (dtype, kwargs))
    ints = [np.array([0, 5, 100, 2 ** 62, -2 ** 62]), np.array([5, 0, 101, 2 ** 62 + 1, 2 ** 62])]
    if not dtype.is_floating_point and dtype is not tp.bool:
        ints = [a.astype(dtype.np) for a in ints]
        assert_same(lambda L, x, y: L.T.isclose(x, y, **kwargs), ints, (dtype, kwargs))


CLOSE_ERRORS = [
    ("dtype", lambda L, x, y: L.T.isclose(x, y.double())),
    ("allclose dtype", lambda L, x, y: L.T.allclose(x, y.double())),
    ("rtol", lambda L, x, y: L.T.isclose(x, y, rtol=-1)), ("atol", lambda L, x, y: L.T.isclose(x, y, atol=-1.5)),
    ("both", lambda L, x, y: L.T.isclose(x, y, rtol=-1e-5, atol=-1)),
    ("shape", lambda L, x, y: L.T.isclose(x, y[:2])), ("broadcast", lambda L, x, y: L.T.isclose(x, y[:1])),
    ("allclose broadcast", lambda L, x, y: L.T.allclose(x, y[:1])), ("0d", lambda L, x, y: L.T.allclose(x[0], y[0])),
    ("empty", lambda L, x, y: L.T.allclose(x[:0], y[:0])), ("same", lambda L, x, y: L.T.isclose(x, x)),
]


@pytest.mark.parametrize("what, fn", CLOSE_ERRORS, ids=[c[0] for c in CLOSE_ERRORS])
def test_isclose_arguments_match_torch(what, fn):
    assert_same(fn, [np.array([1.0, nan, 3.0], np.float32), np.array([1.0, nan, 2.0], np.float32)], what)


# -- errors for bad arguments -------------------------------------------------------------------
ERRORS = [
    ("mean int", lambda L, x: x.long().mean()), ("mean bool", lambda L, x: L.T.mean(x.bool())),
    ("mean dtype int", lambda L, x: x.mean(dtype=L.T.int64)), ("mean dup", lambda L, x: x.mean((0, 0))),
    ("mean oob", lambda L, x: x.mean(2)), ("var int", lambda L, x: x.long().var()),
    ("std bool", lambda L, x: x.bool().std()), ("var oob", lambda L, x: x.var(-3)),
    ("lse oob", lambda L, x: x.logsumexp(5)), ("lse dup", lambda L, x: x.logsumexp((1, -1))),
    ("softmax oob", lambda L, x: x.softmax(2)), ("softmax int", lambda L, x: x.long().softmax(1)),
    ("softmax int dim0", lambda L, x: L.T.softmax(x.long(), 0)),
    ("softmax 0d int", lambda L, x: L.T.softmax(x[0, 0].long(), 0)),
    ("log_softmax int", lambda L, x: x.long().log_softmax(-1)),
    ("log_softmax bool dim0", lambda L, x: x.bool().log_softmax(0)),
    ("softmax dtype int", lambda L, x: L.T.softmax(x, 1, dtype=L.T.int64)),
    ("relu bool", lambda L, x: x.bool().relu()), ("relu_ bool", lambda L, x: L.T.relu_(x.bool())),
    ("gelu approximate", lambda L, x: L.F.gelu(x, approximate="foo")),
    ("gelu approximate int", lambda L, x: L.F.gelu(x.long(), approximate="foo")),
    ("hardtanh bounds", lambda L, x: L.F.hardtanh(x, 2.0, 1.0)),
    ("hardtanh uint8", lambda L, x: L.F.hardtanh(x.abs().byte())),
    ("relu6 uint8", lambda L, x: L.F.relu6(x.abs().byte())), ("relu6 bool", lambda L, x: L.F.relu6(x.bool())),
    ("split 0d", lambda L, x: L.T.split(x[0, 0], 1)), ("split sizes 0d", lambda L, x: L.T.split(x[0, 0], [1])),
    ("split oob", lambda L, x: x.split(1, 2)), ("split sizes oob", lambda L, x: x.split([1, 1], 2)),
    ("split sizes sum", lambda L, x: x.split([1, 1], 1)), ("chunk 0d", lambda L, x: L.T.chunk(x[0, 0], 1)),
    ("chunk oob", lambda L, x: x.chunk(2, 2)), ("unbind 0d", lambda L, x: L.T.unbind(x[0, 0])),
    ("unbind 0d -1", lambda L, x: L.T.unbind(x[0, 0], -1)), ("unbind 0d 1", lambda L, x: L.T.unbind(x[0, 0], 1)),
    ("tril 1d", lambda L, x: L.T.tril(x[0])), ("triu 0d", lambda L, x: x[0, 0].triu()),
    ("flip int", lambda L, x: L.T.flip(x, 0)), ("flip no dims", lambda L, x: x.flip()),
    ("flip oob", lambda L, x: x.flip(2)), ("flip dup", lambda L, x: L.T.flip(x, (0, -2))),
    ("roll 0d dim", lambda L, x: L.T.roll(x[0, 0], 1, 0)), ("roll 0d -1", lambda L, x: L.T.roll(x[0, 0], 1, -1)),
    ("roll 0d", lambda L, x: L.T.roll(x[0, 0], 1)), ("roll oob", lambda L, x: x.roll(1, 2)),
    ("roll empty bad dim", lambda L, x: x[:0].roll(1, 5)),
    ("norm int", lambda L, x: x.long().norm()), ("norm bool p1", lambda L, x: x.bool().norm(1)),
    ("norm dtype narrowing", lambda L, x: x.norm(dtype=L.T.float16)),
    ("norm dtype int", lambda L, x: x.norm(dtype=L.T.int64)),
    ("norm inf empty", lambda L, x: x[:0].norm(inf)), ("norm -1 empty dim", lambda L, x: x[:0].norm(-1, 0)),
    ("norm inf empty dim -2", lambda L, x: x[:0].norm(inf, -2)),
    ("norm -inf empty dims", lambda L, x: x[:0].norm(-inf, (1, 0))),
    ("norm -0.5 empty", lambda L, x: x[:0].norm(-0.5)), ("norm 0 empty", lambda L, x: x[:0].norm(0)),
    ("norm inf empty other dim", lambda L, x: x[:0].norm(inf, 1, True)),
    ("norm fro 3 dims", lambda L, x: x.unsqueeze(0).norm("fro", (0, 1, 2))),
    ("norm foo", lambda L, x: x.norm("foo")), ("norm nuc dim", lambda L, x: x.norm("nuc", 0)),
    ("norm dim dup", lambda L, x: x.norm(2, (0, 0))), ("norm dim oob", lambda L, x: x.norm(dim=2)),
    ("one_hot float", lambda L, x: L.F.one_hot(x)), ("leaky int", lambda L, x: L.F.leaky_relu(x.long())),
    ("logaddexp int", lambda L, x: L.T.logaddexp(x.long(), x.long())),
    ("logaddexp shape", lambda L, x: L.T.logaddexp(x, x[:, :2])),
]


@pytest.mark.parametrize("what, fn", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_match_torch(what, fn):
    assert_same(fn, [sample((2, 3), tp.float32, seed=21)], what)


def test_var_warns_like_torch_when_degrees_of_freedom_run_out():
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        tp.tensor([1.0]).var()
    with pytest.warns(UserWarning, match=r"std\(\): degrees of freedom is <= 0"):
        tp.ones(2, 3).std(0, correction=2)


def test_invalid_statistic_arguments_raise_type_errors_like_torch():
    x = tp.ones(2, 3)
    for call in (lambda m, t: t.var(0, 1), lambda m, t: t.std(0, unbiased=True, correction=1)):
        with pytest.raises(TypeError, match=r"received an invalid combination of arguments"):
            call(tp, x)
        with pytest.raises(TypeError, match=r"received an invalid combination of arguments"):
            call(torch, torch.ones(2, 3))


# -- gradients ------------------------------------------------------------------------------
def grads(L, fn, a):
    x = (tp.from_numpy(a.copy()) if L is TP else torch.from_numpy(a.copy())).requires_grad_()
    out = fn(L, x)
    (out.sum() if out.dim() else out).backward()
    return x.grad


GRAD_CASES = {name: ACTIVATIONS[name] for name in ("relu", "leaky_relu_0.2", "gelu", "gelu_tanh", "silu", "elu_0.5",
                                                   "softplus", "softplus_beta", "mish", "hardtanh",
                                                   "hardtanh_frac", "relu6")}
GRAD_CASES.update({
    "softmax": lambda L, x: L.T.softmax(x.reshape(2, -1), 1)[:, 0], "log_softmax": lambda L, x: x.log_softmax(0),
    "logsumexp": lambda L, x: x.logsumexp(0), "mean": lambda L, x: x.mean(), "var": lambda L, x: x.var(),
    "std": lambda L, x: x.std(), "norm": lambda L, x: x.norm(), "norm_inf": lambda L, x: x.norm(inf),
    "norm3": lambda L, x: x.norm(3), "norm1": lambda L, x: x.norm(1),
})
GRAD_POINTS = np.array([0.0, 1.0, -1.0, 6.0, 0.5, -0.5, 2.5, 20.0, 25.0, -30.0, 1000.0, -1000.0, 3.0, 3.0])


@pytest.mark.parametrize("name", GRAD_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_match_torch(name, dtype):
    fn = GRAD_CASES[name]
    for a in (GRAD_POINTS.astype(dtype), np.zeros(4, dtype), np.full(4, 2.0, dtype)):
        ours, theirs = grads(TP, fn, a), grads(TORCH, fn, a)
        # the decompositions round differently from PyTorch's fused kernels, and denormal tails flush to 0
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-30, err_msg=name)
