"""Special functions, pointwise math and statistics without PyTorch: identities and known values the
implementations must satisfy, special values, dtypes, vmap and autograd plumbing."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.autograd import gradcheck

X = np.linspace(-6.0, 6.0, 241)
POS = np.linspace(0.05, 30.0, 300)


def t64(v):
    return tp.tensor(np.asarray(v, dtype=np.float64))


def close(a, b, rtol=1e-13, atol=0.0):
    a = a.numpy() if isinstance(a, tp.Tensor) else np.asarray(a)
    b = b.numpy() if isinstance(b, tp.Tensor) else np.asarray(b)
    assert np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True), np.max(np.abs(a - b))


def test_error_function_family_matches_math():
    close(tp.erfc(t64(X)), [math.erfc(v) for v in X], 1e-14)
    close(tp.special.erf(t64(X)), [math.erf(v) for v in X], 1e-15)
    close(tp.special.erfcx(t64(X[X < 20])), [math.exp(v * v) * math.erfc(v) for v in X[X < 20]], 1e-13)
    u = np.linspace(-0.999999, 0.999999, 301)
    close(tp.special.erf(tp.erfinv(t64(u))), u, 1e-14)
    assert tp.erfinv(t64([1.0, -1.0, 1.5, 0.0])).tolist()[:2] == [math.inf, -math.inf]
    assert math.isnan(tp.erfinv(t64([1.5])).item())
    # deep in the tail, through erfc: 1 - 1e-15 keeps its digits
    y = tp.erfinv(t64([1 - 1e-15])).item()
    assert math.erfc(y) == pytest.approx(1e-15, rel=1e-9)


def test_gamma_family():
    close(tp.lgamma(t64(POS)), [math.lgamma(v) for v in POS], 1e-12, 1e-15)
    neg = np.array([-0.5, -1.5, -2.25, -7.75])
    close(tp.lgamma(t64(neg)), [math.lgamma(v) for v in neg], 1e-12)
    assert tp.lgamma(t64([0.0, -1.0, -2.0, math.inf, -math.inf])).tolist() == [math.inf] * 5
    assert tp.lgamma(t64([1.0, 2.0])).tolist() == [0.0, 0.0]
    # digamma: psi(x + 1) = psi(x) + 1/x, psi(1) = -Euler's constant, reflection at negative x
    close(tp.digamma(t64(POS + 1)) - tp.digamma(t64(POS)), 1 / POS, 1e-11, 1e-13)
    assert tp.digamma(t64([1.0])).item() == pytest.approx(-0.5772156649015329, rel=1e-15)
    d = tp.digamma(t64([0.0, -0.0, -1.0, -3.0])).tolist()
    assert d[0] == -math.inf and d[1] == math.inf and math.isnan(d[2]) and math.isnan(d[3])
    # polygamma(1, 1) = pi^2 / 6, polygamma(2, 1) = -2 zeta(3)
    assert tp.polygamma(1, t64([1.0])).item() == pytest.approx(math.pi ** 2 / 6, rel=1e-14)
    assert tp.polygamma(2, t64([1.0])).item() == pytest.approx(-2 * 1.2020569031595942, rel=1e-14)
    assert tp.polygamma(0, t64([2.5])).item() == tp.digamma(t64([2.5])).item()
    with pytest.raises(RuntimeError, match="does not support negative n"):
        tp.polygamma(-1, t64([1.0]))


def test_zeta_and_multigammaln():
    assert tp.special.zeta(t64([2.0, 4.0]), 1.0).tolist() == pytest.approx([math.pi ** 2 / 6, math.pi ** 4 / 90],
                                                                          rel=1e-15)
    z = tp.special.zeta(t64([1.0, 0.5, 2.0, 2.0]), t64([1.0, 1.0, 0.0, -1.5])).tolist()
    assert z[0] == math.inf and math.isnan(z[1]) and z[2] == math.inf
    assert z[3] == pytest.approx(sum((k - 1.5) ** -2 for k in range(200000)), rel=1e-5)
    x = t64([2.5, 4.0])
    close(tp.special.multigammaln(x, 2), tp.lgamma(x) + tp.lgamma(x - 0.5) + math.log(math.pi) / 2, 1e-14)


def test_bessel_functions():
    big = np.array([0.0, 0.5, 3.0, 19.9, 20.1, 50.0, 700.0])
    close(tp.i0(t64(big)), np.i0(big), 1e-14)
    close(tp.special.i0e(t64(big)), np.i0(big) * np.exp(-big), 1e-14)
    close(tp.special.i1e(t64(-big)), -tp.special.i1e(t64(big)), 0)  # odd
    # the Wronskian-like recurrence I0' = I1, checked by finite differences
    h = 1e-6
    close((tp.i0(t64(X + h)) - tp.i0(t64(X - h))) / (2 * h), tp.special.i1(t64(X)), 1e-7)
    assert tp.special.i0e(t64([math.inf])).item() == 0.0


def test_normal_distribution():
    p = np.linspace(0.001, 0.999, 199)
    close(tp.special.ndtr(tp.special.ndtri(t64(p))), p, 1e-13)
    tiny = t64([1e-300, 1e-30])
    close(tp.special.log_ndtr(tp.special.ndtri(tiny)), np.log([1e-300, 1e-30]), 1e-12)
    assert tp.special.ndtri(t64([0.0, 1.0, 0.5])).tolist() == [-math.inf, math.inf, 0.0]
    close(tp.special.log_ndtr(t64([-40.0])), -40 ** 2 / 2 - math.log(40) - 0.5 * math.log(2 * math.pi)
          + math.log1p(-1 / 1600 + 3 / 1600 ** 2 - 15 / 1600 ** 3 + 105 / 1600 ** 4), 1e-14)


def test_elementary_and_binary():
    close(tp.sinc(t64([0.0, 0.5, 1.0])), [1.0, 2 / math.pi, 0.0], 1e-15, 1e-16)
    close(tp.special.entr(t64([0.0, 1.0, 0.5, -1.0])), [0.0, -0.0, 0.5 * math.log(2), -math.inf], 1e-15)
    close(tp.hypot(t64([3e200, 5.0]), t64([4e200, 12.0])), [5e200, 13.0], 1e-15)
    close(tp.fmax(t64([math.nan, 1.0, math.nan]), t64([2.0, math.nan, math.nan])), [2.0, 1.0, math.nan])
    assert tp.copysign(t64([2.0, 3.0]), t64([-0.0, 1.0])).tolist() == [-2.0, 3.0]
    assert tp.gcd(tp.tensor([12, 0, -8]), tp.tensor([18, 0, 6])).tolist() == [6, 0, 2]
    assert tp.lcm(tp.tensor([4, 0, -6]), tp.tensor([6, 5, 4])).tolist() == [12, 0, 12]
    assert tp.signbit(t64([-0.0, 0.0, -1.0])).tolist() == [True, False, True]
    assert tp.xlogy(t64([0.0, 0.0, 2.0]), t64([0.0, math.nan, math.e])).tolist()[0] == 0.0
    assert math.isnan(tp.xlogy(t64([0.0]), t64([math.nan])).item())
    assert tp.float_power(tp.tensor([2]), 3).dtype is tp.float64
    close(tp.logaddexp2(t64([1.0, -1000.0]), t64([1.0, -1000.0])), [2.0, -999.0], 1e-15)
    assert tp.nan_to_num(t64([math.nan, math.inf, -math.inf])).tolist() == [0.0, 1.7976931348623157e308,
                                                                             -1.7976931348623157e308]
    assert tp.nan_to_num(tp.tensor([math.inf], dtype=tp.float16)).item() == 65504.0


def test_integer_inputs_promote_to_the_default_float():
    x = tp.tensor([1, 2, 3])
    for fn in (tp.erfinv, tp.erfc, tp.lgamma, tp.digamma, tp.i0, tp.asinh, tp.sinc, tp.deg2rad, tp.logit,
               tp.special.i1e, tp.special.ndtr, tp.special.entr):
        assert fn(x).dtype is tp.float32
    assert tp.polygamma(1, x).dtype is tp.float32
    assert tp.special.zeta(x + 1, x).dtype is tp.float32
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.clone().erfinv_()


def test_two_python_numbers_give_zero_dim_tensors():
    assert tp.add(2.0, 3.0).dtype is tp.float32 and tp.add(2.0, 3.0).shape == ()
    assert tp.add(2, 3).dtype is tp.int64 and tp.add(2, 3).item() == 5
    assert tp.mul(True, True).dtype is tp.bool
    assert tp.div(1, 4).item() == 0.25
    assert tp.sub(2, 0.5).item() == 1.5
    assert tp.floor_divide(7, -2).item() == -4


def test_statistics_known_values():
    x = t64([[3.0, 1.0, 4.0, 1.0], [5.0, 9.0, 2.0, 6.0]])
    v, i = tp.median(x, 1)
    assert v.tolist() == [1.0, 5.0] and i.tolist() in ([1, 0], [3, 0])
    assert tp.median(x).item() == 3.0  # lower median of 8
    assert tp.kthvalue(x, 3, 1).values.tolist() == [3.0, 6.0]
    assert tp.mode(tp.tensor([[1, 2, 2, 1, 3]]), 1).values.tolist() == [1]
    assert tp.mode(tp.tensor([[1, 2, 2, 1, 3]]), 1).indices.tolist() == [3]
    assert tp.quantile(t64([0.0, 10.0]), 0.25).item() == 2.5
    assert tp.quantile(t64([0.0, 10.0, 20.0]), t64([0.5, 0.75]), interpolation="lower").tolist() == [10.0, 10.0]
    assert tp.nanquantile(t64([math.nan, 1.0, 3.0]), 0.5).item() == 2.0
    assert math.isnan(tp.quantile(t64([math.nan, 1.0, 3.0]), 0.5).item())
    assert tp.nansum(t64([math.nan, 1.0, 2.0])).item() == 3.0
    assert tp.nanmean(t64([math.nan, 1.0, 2.0])).item() == 1.5
    assert tp.cumprod(tp.tensor([1, 2, 3, 4]), 0).tolist() == [1, 2, 6, 24]
    assert tp.cummax(t64([1.0, 3.0, 2.0, 3.0]), 0).indices.tolist() == [0, 1, 1, 3]
    close(tp.logcumsumexp(t64([0.0, 0.0, 1000.0]), 0), [0.0, math.log(2), 1000.0], 1e-15)
    assert tp.aminmax(x).min.item() == 1.0 and tp.aminmax(x, dim=0).max.tolist() == [5.0, 9.0, 4.0, 6.0]
    assert tp.count_nonzero(tp.tensor([[0, 1], [2, 0]]), 0).tolist() == [1, 1]
    assert tp.logspace(0, 2, 3).tolist() == [1.0, 10.0, 100.0]
    assert tp.clamp_min(t64([1.0, 5.0]), t64([2.0, 2.0])).tolist() == [2.0, 5.0]
    assert tp.clip(t64([1.0, 5.0]), t64([2.0, 0.0]), t64([3.0, 4.0])).tolist() == [2.0, 4.0]


@pytest.mark.parametrize("fn", [
    lambda x: tp.erfinv(x / 10), lambda x: tp.lgamma(x), lambda x: tp.digamma(x), lambda x: tp.polygamma(1, x),
    lambda x: tp.special.i1(x), lambda x: tp.special.i0e(x), lambda x: tp.special.i1e(x),
    lambda x: tp.special.ndtri(x / 10), lambda x: tp.special.log_ndtr(x), lambda x: tp.special.erfcx(x),
    lambda x: tp.special.zeta(2.5, x), lambda x: tp.cumprod(x - 1, 0), lambda x: tp.logcumsumexp(x, 0),
    lambda x: tp.cummax(x, 0).values, lambda x: tp.median(x, 0).values, lambda x: tp.quantile(x, 0.3),
    lambda x: tp.mode(x, 0).values, lambda x: tp.kthvalue(x, 2).values, lambda x: tp.fmin(x, 2.0 - x),
])
def test_gradcheck(fn):
    x = t64([0.3, 1.1, 2.05, 0.7, 3.4]).requires_grad_(True)
    assert gradcheck(fn, (x,))


def test_zeta_gradient_wrt_self_is_not_implemented():
    s = t64([2.0]).requires_grad_(True)
    with pytest.raises(NotImplementedError, match="derivative for 'self' of special_zeta"):
        tp.special.zeta(s, t64([1.0])).backward()


def test_trunc_normal_stays_in_bounds_and_warns_far_from_them():
    w = tp.empty(5000)
    tp.manual_seed(1)
    assert tp.nn.init.trunc_normal_(w, 1.0, 0.5, 0.0, 1.5) is w
    assert w.min().item() >= 0.0 and w.max().item() <= 1.5
    assert abs(w.mean().item() - 0.8826) < 0.02  # the truncated normal's mean
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        tp.nn.init.trunc_normal_(tp.empty(3), mean=10.0, std=1.0, a=-2.0, b=2.0)


def test_vmap_uses_rules_not_the_slow_loop():
    x = t64(np.arange(12.0).reshape(3, 4) + 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the fallback loop warns
        for f in (lambda r: tp.cumprod(r, 0), lambda r: tp.cummin(r, 0)[0], lambda r: tp.kthvalue(r, 1, 0)[1],
                  lambda r: tp.median(r, 0)[0], lambda r: tp.erfinv(r / 20), lambda r: tp.polygamma(1, r),
                  lambda r: tp.hypot(r, r)):
            assert tp.vmap(f)(x).shape[0] == 3
