"""Special functions and the new pointwise math against PyTorch: float64 accuracy over wide ranges and at
the special values (inf, NaN, 0, poles), result dtypes for every input dtype, gradients, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

ALL_DTYPES = [tp.bool, tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32,
              tp.float64]
SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 2.0, -2.0, -3.0, 0.5, -0.5, 1e-300, -1e-300,
           1e300, -1e300, 5e-324]


def _wide(seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(-10, 10, 4000), rng.uniform(-60, 60, 1000),
                           10.0 ** rng.uniform(-300, 3, 1000), -(10.0 ** rng.uniform(-300, 3, 1000)), SPECIAL])


def _unit(seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(-1, 1, 4000), 1 - 10.0 ** rng.uniform(-16, 0, 500),
                           -1 + 10.0 ** rng.uniform(-16, 0, 500), 10.0 ** rng.uniform(-300, 0, 500),
                           [1.0, -1.0, 0.0, -0.0, 1.5, -2.0, math.nan, math.inf]])


def _prob(seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(0, 1, 4000), 10.0 ** rng.uniform(-300, 0, 1000),
                           1 - 10.0 ** rng.uniform(-16, 0, 500), [0.0, 1.0, -0.5, 1.5, math.nan, 0.5]])


def _bessel(seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(-30, 30, 3000), rng.uniform(-800, 800, 1000),
                           [0.0, -0.0, 20.0, -20.0, 709.0, 711.0, math.inf, -math.inf, math.nan]])


UNARY = [
    # (tensorplug function, torch function, inputs, rtol)
    ("erfc", tp.erfc, torch.erfc, _wide, 1e-13),
    ("erfinv", tp.erfinv, torch.erfinv, _unit, 1e-13),
    ("lgamma", tp.lgamma, torch.lgamma, _wide, 1e-11),
    ("digamma", tp.digamma, torch.digamma, _wide, 1e-10),
    ("asinh", tp.asinh, torch.asinh, _wide, 1e-14),
    ("acosh", tp.acosh, torch.acosh, _wide, 1e-14),
    ("atanh", tp.atanh, torch.atanh, _unit, 1e-14),
    ("i0", tp.i0, torch.i0, _bessel, 1e-13),
    ("sinc", tp.sinc, torch.sinc, _wide, 1e-13),
    ("deg2rad", tp.deg2rad, torch.deg2rad, _wide, 1e-15),
    ("rad2deg", tp.rad2deg, torch.rad2deg, _wide, 1e-15),
    ("special.erfcx", tp.special.erfcx, torch.special.erfcx, _wide, 1e-13),
    ("special.i0e", tp.special.i0e, torch.special.i0e, _bessel, 1e-13),
    ("special.i1", tp.special.i1, torch.special.i1, _bessel, 1e-13),
    ("special.i1e", tp.special.i1e, torch.special.i1e, _bessel, 1e-13),
    ("special.ndtr", tp.special.ndtr, torch.special.ndtr, _wide, 1e-13),  # absolute accuracy, as PyTorch's
    ("special.ndtri", tp.special.ndtri, torch.special.ndtri, _prob, 1e-12),
    ("special.log_ndtr", tp.special.log_ndtr, torch.special.log_ndtr, _wide, 1e-12),
    ("special.entr", tp.special.entr, torch.special.entr, _wide, 1e-14),
    ("special.expit", tp.special.expit, torch.special.expit, _wide, 1e-14),
    ("special.gammaln", tp.special.gammaln, torch.special.gammaln, _wide, 1e-11),
    ("special.psi", tp.special.psi, torch.special.psi, _wide, 1e-10),
    ("special.erf", tp.special.erf, torch.special.erf, _wide, 1e-14),
    ("logit", tp.logit, torch.logit, _unit, 1e-13),
    ("nan_to_num", tp.nan_to_num, torch.nan_to_num, _wide, 0),
    ("signbit", tp.signbit, torch.signbit, _wide, 0),
    ("sgn", tp.sgn, torch.sgn, _wide, 0),
]


def _check_close(got, want, rtol, what, atol=1e-300):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True) | (got == want)
    # exact zeros and signs of infinities must agree too
    assert ok.all(), f"{what}: {np.count_nonzero(~ok)} differ, e.g. x index {np.argwhere(~ok)[:3].ravel()}: " \
                     f"{got[~ok][:3]} vs {want[~ok][:3]}"


@pytest.mark.parametrize("name,fn,tfn,values,rtol", UNARY, ids=[u[0] for u in UNARY])
def test_float64_accuracy(name, fn, tfn, values, rtol):
    x = values()
    got = fn(tp.tensor(x, dtype=tp.float64)).numpy()
    want = tfn(torch.tensor(x, dtype=torch.float64)).numpy()
    assert got.dtype == want.dtype
    # ndtr is (1 + erf(x / sqrt 2)) / 2 in both: accurate to about 1e-16 absolute, not relative
    _check_close(got, want, rtol, name, atol=1e-15 if name == "special.ndtr" else 1e-300)


@pytest.mark.parametrize("name,fn,tfn,values,rtol", UNARY, ids=[u[0] for u in UNARY])
def test_float32_close(name, fn, tfn, values, rtol):
    """float32 computes in float64 and rounds once; PyTorch computes in float32, a few ulps off (more
    where an argument is scaled first: sin(pi x)), and overflows early (exp(x) before the i0 factor)."""
    with np.errstate(over="ignore"):
        x = values(1).astype(np.float32)  # beyond float32's range: +-inf
    got = fn(tp.tensor(x, dtype=tp.float32)).numpy().astype(np.float64)
    want = tfn(torch.tensor(x, dtype=torch.float32)).numpy().astype(np.float64)
    both_huge = (np.abs(got) > 1e37) & (np.abs(want) > 1e37) & (np.sign(got) == np.sign(want))
    _check_close(np.where(both_huge, want, got), want, 1e-5, name, atol=1e-6)


@pytest.mark.parametrize("name,fn,tfn,values,rtol", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_result_dtype_or_error(name, fn, tfn, values, rtol, dtype):
    x = np.array([0, 1, 2, 1, 0, 3])
    tx = torch.tensor(x).to(getattr(torch, dtype.name))
    try:
        want = tfn(tx)
    except Exception as e:  # noqa: BLE001 - the same exception type and message must come back
        with pytest.raises(type(e)) as got:
            fn(tp.tensor(x).to(dtype))
        assert str(got.value) == str(e)
        return
    got = fn(tp.tensor(x).to(dtype))
    assert got.dtype.name == str(want.dtype).split(".")[1]
    _check_close(got.to(tp.float64).numpy(), want.to(torch.float64).numpy(), 1e-2 if dtype.itemsize == 2 else 1e-6,
                 name, atol=1e-6)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7])
def test_polygamma(n):
    x = _wide(n)
    got = tp.polygamma(n, tp.tensor(x)).numpy()
    want = torch.polygamma(n, torch.tensor(x)).numpy()
    # PyTorch's trigamma (n = 1) is accurate to about 1e-9; at the poles it gives a large finite value
    poles = (x <= 0) & (x == np.floor(x))
    _check_close(got[~poles], want[~poles], 1e-8 if n == 1 else 1e-11, f"polygamma({n})")
    assert np.all(np.isinf(got[poles]) | np.isnan(got[poles]))


def test_zeta_accuracy_and_domain():
    rng = np.random.default_rng(0)
    s = np.concatenate([rng.uniform(0.5, 30, 3000), np.round(rng.uniform(1, 12, 500)), [1.0, math.inf, math.nan]])
    q = np.concatenate([rng.uniform(-20, 40, 3000), rng.uniform(-6, 6, 500), [2.0, 0.5, 1.0]])
    got = tp.special.zeta(tp.tensor(s), tp.tensor(q)).numpy()
    want = torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy()
    _check_close(got, want, 1e-11, "zeta")
    assert tp.special.zeta(2.0, tp.tensor([1.0], dtype=tp.float64)).item() == pytest.approx(math.pi ** 2 / 6,
                                                                                         rel=1e-15)
    assert tp.special.zeta(tp.tensor([3.0]), 1).item() == pytest.approx(
        torch.special.zeta(torch.tensor([3.0]), 1).item(), rel=1e-7)


BINARY = [
    ("hypot", tp.hypot, torch.hypot), ("fmax", tp.fmax, torch.fmax), ("fmin", tp.fmin, torch.fmin),
    ("copysign", tp.copysign, torch.copysign), ("xlogy", tp.xlogy, torch.xlogy),
    ("xlog1py", tp.special.xlog1py, torch.special.xlog1py), ("float_power", tp.float_power, torch.float_power),
    ("logaddexp2", tp.logaddexp2, torch.logaddexp2),
]


@pytest.mark.parametrize("name,fn,tfn", BINARY, ids=[b[0] for b in BINARY])
def test_binary_special_values(name, fn, tfn):
    v = np.array([0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 2.5, -3.0, 0.1])
    a, b = v.reshape(-1, 1), v
    got = fn(tp.tensor(a), tp.tensor(b)).numpy()
    want = tfn(torch.tensor(a), torch.tensor(b)).numpy()
    _check_close(got, want, 1e-14, name, atol=1e-15)
    # the sign of a zero is part of the result; a NaN's sign bit is not (numpy 2.4's pow and PyTorch's differ)
    real = ~np.isnan(want)
    assert np.array_equal(np.signbit(got)[real], np.signbit(want)[real]) or name in ("xlogy", "xlog1py", "logaddexp2")


@pytest.mark.parametrize("name,fn,tfn", BINARY + [("gcd", tp.gcd, torch.gcd), ("lcm", tp.lcm, torch.lcm)],
                         ids=[b[0] for b in BINARY] + ["gcd", "lcm"])
@pytest.mark.parametrize("da,db", [(tp.int64, tp.int64), (tp.int32, tp.float32), (tp.bool, tp.uint8),
                                   (tp.float16, tp.bfloat16), (tp.float32, tp.float64), (tp.int8, tp.int16)])
def test_binary_dtypes(name, fn, tfn, da, db):
    a, b = np.array([[0, 4, 6], [9, 2, 1]]), np.array([6, 3, 2])
    ta = torch.tensor(a).to(getattr(torch, da.name))
    tb = torch.tensor(b).to(getattr(torch, db.name))
    try:
        want = tfn(ta, tb)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as got:
            fn(tp.tensor(a).to(da), tp.tensor(b).to(db))
        assert str(got.value) == str(e)
        return
    got = fn(tp.tensor(a).to(da), tp.tensor(b).to(db))
    assert got.dtype.name == str(want.dtype).split(".")[1]
    _check_close(got.to(tp.float64).numpy(), want.to(torch.float64).numpy(), 1e-2, name)


@pytest.mark.parametrize("call", [
    lambda m, x: m.xlogy(2, x), lambda m, x: m.xlogy(x, 3.5), lambda m, x: m.copysign(x, -1),
    lambda m, x: m.float_power(x, 2), lambda m, x: m.float_power(2, x), lambda m, x: m.special.xlog1py(x, 2),
    lambda m, x: m.special.xlog1py(3, x), lambda m, x: m.special.zeta(x + 2, 1.5),
    lambda m, x: m.logit(x / 10, eps=0.2), lambda m, x: m.special.logit(x / 10, 0.05),
    lambda m, x: m.nan_to_num(x.log(), nan=0.5, posinf=7.0, neginf=-7.0),
    lambda m, x: m.special.multigammaln(x + 3, 3), lambda m, x: m.special.softmax(x, 0),
    lambda m, x: m.special.log_softmax(x, 0), lambda m, x: m.special.logsumexp(x, 0),
    lambda m, x: m.special.round(x * 1.37, decimals=1), lambda m, x: m.special.exp2(x),
    lambda m, x: m.special.expm1(x), lambda m, x: m.special.log1p(x), lambda m, x: m.special.sinc(x),
    lambda m, x: m.special.i0(x), lambda m, x: m.special.polygamma(2, x + 1), lambda m, x: m.special.erfinv(x / 9),
    lambda m, x: m.special.digamma(x), lambda m, x: m.special.erfc(x),
])
def test_overloads_and_namespace(call):
    x = np.array([-2.0, 0.0, 0.5, 3.0, 7.25])
    got = call(tp, tp.tensor(x))
    want = call(torch, torch.tensor(x))
    assert got.dtype.name == str(want.dtype).split(".")[1]
    _check_close(got.numpy(), want.numpy(), 1e-12, "overload")


INPLACE = ["erfc_", "erfinv_", "lgamma_", "digamma_", "asinh_", "acosh_", "atanh_", "i0_", "sinc_", "deg2rad_",
           "rad2deg_", "logit_", "sgn_", "nan_to_num_", "arcsinh_", "arccosh_", "arctanh_"]


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_methods(name):
    x = np.array([0.25, -0.5, 0.75, 1.5, 2.0])
    a, t = tp.tensor(x), torch.tensor(x)
    assert getattr(a, name)() is a
    getattr(t, name)()
    _check_close(a.numpy(), t.numpy(), 1e-13, name)
    # an integer self cannot hold a floating result
    if name not in ("sgn_", "nan_to_num_"):
        with pytest.raises(RuntimeError) as e:
            getattr(torch.tensor([1, 2]), name)()
        with pytest.raises(RuntimeError, match=str(e.value).split(" can't")[0]):
            getattr(tp.tensor([1, 2]), name)()


def test_inplace_binary_and_polygamma():
    x = np.array([0.5, 1.5, 2.5])
    for name, arg in (("hypot_", [3.0, 4.0, 0.5]), ("copysign_", [-1.0, 1.0, -0.0]), ("xlogy_", [2.0, 3.0, 4.0]),
                      ("float_power_", [2.0, 0.5, 3.0])):
        a, t = tp.tensor(x), torch.tensor(x)
        getattr(a, name)(tp.tensor(arg))
        getattr(t, name)(torch.tensor(arg))
        _check_close(a.numpy(), t.numpy(), 1e-14, name)
    a, t = tp.tensor(x), torch.tensor(x)
    a.polygamma_(2)
    t.polygamma_(2)
    _check_close(a.numpy(), t.numpy(), 1e-12, "polygamma_")
    a, t = tp.tensor([4, 6, 9]), torch.tensor([4, 6, 9])
    a.gcd_(tp.tensor([6, 4, 3]))
    t.gcd_(torch.tensor([6, 4, 3]))
    assert a.tolist() == t.tolist()
    a.lcm_(tp.tensor([3, 5, 2]))
    t.lcm_(torch.tensor([3, 5, 2]))
    assert a.tolist() == t.tolist()


ERRORS = [
    lambda m: m.polygamma(-1, m.ones(2)),
    lambda m: m.hypot(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
    lambda m: m.gcd(m.ones(2), m.ones(2)),
    lambda m: m.logaddexp2(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
    lambda m: m.special.erfcx(m.ones(2, dtype=m.float16)),
    lambda m: m.special.ndtri(m.ones(2, dtype=m.bfloat16)),
    lambda m: m.special.log_ndtr(m.ones(2, dtype=m.float16)),
    lambda m: m.special.zeta(m.ones(2, dtype=m.float16), m.ones(2, dtype=m.float16)),
    lambda m: m.special.multigammaln(m.ones(2), 0),
    lambda m: m.ones(2).float_power_(2),
    lambda m: m.hypot(m.ones(2), m.ones(3)),
    lambda m: m.ones(2, dtype=m.int64).erfinv_(),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_match(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(tp)
    assert str(got.value) == str(want.value)


GRADS = [
    lambda m, x: m.erfc(x), lambda m, x: m.erfinv(x / 10), lambda m, x: m.lgamma(x), lambda m, x: m.digamma(x),
    lambda m, x: m.polygamma(2, x), lambda m, x: m.asinh(x), lambda m, x: m.acosh(x + 1),
    lambda m, x: m.atanh(x / 10), lambda m, x: m.i0(x), lambda m, x: m.sinc(x), lambda m, x: m.logit(x / 10),
    lambda m, x: m.logit(x / 10, eps=0.2), lambda m, x: m.special.i0e(x), lambda m, x: m.special.i1(x),
    lambda m, x: m.special.i1e(x), lambda m, x: m.special.ndtri(x / 10), lambda m, x: m.special.log_ndtr(x),
    lambda m, x: m.special.erfcx(x), lambda m, x: m.special.entr(x), lambda m, x: m.special.ndtr(x),
    lambda m, x: m.special.xlog1py(x, x), lambda m, x: m.xlogy(x, x), lambda m, x: m.hypot(x, x.flip(0)),
    lambda m, x: m.fmax(x, x.flip(0)), lambda m, x: m.copysign(x, x.flip(0) - 2),
    lambda m, x: m.special.zeta(3.0, x), lambda m, x: m.nan_to_num(x), lambda m, x: m.float_power(x, 2.5),
    lambda m, x: m.logaddexp2(x, x.flip(0)), lambda m, x: m.special.multigammaln(x + 1, 2),
    lambda m, x: m.deg2rad(x),
]


@pytest.mark.parametrize("call", GRADS)
def test_gradients_match(call):
    x = np.array([0.3, 0.9, 1.7, 2.2, 4.5, 6.1])
    a = tp.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    ga, = tp.autograd.grad(call(tp, a).sum(), a)
    gt, = torch.autograd.grad(call(torch, t).sum(), t)
    _check_close(ga.numpy(), gt.numpy(), 1e-8, "gradient")


def test_two_python_numbers():
    for name in ("add", "sub", "mul", "div", "multiply", "subtract", "divide", "true_divide", "floor_divide"):
        for a, b in ((2.0, 3.0), (2, 3), (7, -2), (True, False), (2, 3.5)):
            try:
                want = getattr(torch, name)(a, b)
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    getattr(tp, name)(a, b)
                continue
            got = getattr(tp, name)(a, b)
            assert got.shape == () and got.dtype.name == str(want.dtype).split(".")[1], (name, a, b)
            assert got.item() == want.item()
    assert tp.div(7, 2, rounding_mode="floor").item() == torch.div(7, 2, rounding_mode="floor").item()
    for name in ("fmod", "copysign", "atan2", "maximum"):
        with pytest.raises(TypeError):
            getattr(torch, name)(2.0, 3.0)
        with pytest.raises(TypeError):
            getattr(tp, name)(2.0, 3.0)


def test_trunc_normal_matches_pytorch_draws_statistically():
    x = tp.empty(20000)
    tp.manual_seed(0)
    tp.nn.init.trunc_normal_(x, mean=0.5, std=2.0, a=-1.0, b=3.0)
    t = torch.empty(20000)
    torch.manual_seed(0)
    torch.nn.init.trunc_normal_(t, mean=0.5, std=2.0, a=-1.0, b=3.0)
    assert x.min().item() >= -1.0 and x.max().item() <= 3.0
    assert abs(x.mean().item() - t.mean().item()) < 0.05
    assert abs(x.std().item() - t.std().item()) < 0.05
