"""The orthogonal polynomials, signal windows, trapezoid/gradient/histogram and the small pointwise ops of
ops/special_more.py, without PyTorch: values against closed forms, numpy and hand computation, dtypes,
errors, gradients and vmap."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.func import vmap
from tensorplug.signal import windows

S = tp.special


def _np(t):
    return t.detach().numpy()


# -- polynomials -----------------------------------------------------------------------------------------------
X = np.array([-2.0, -1.0, -0.7, -0.2, 0.0, 0.35, 0.9, 1.0, 1.8])
CLOSED = {
    "chebyshev_polynomial_t": lambda x: [np.ones_like(x), x, 2 * x * x - 1, 4 * x ** 3 - 3 * x],
    "chebyshev_polynomial_u": lambda x: [np.ones_like(x), 2 * x, 4 * x * x - 1, 8 * x ** 3 - 4 * x],
    "chebyshev_polynomial_v": lambda x: [np.ones_like(x), 2 * x - 1, 4 * x * x - 2 * x - 1,
                                         8 * x ** 3 - 4 * x * x - 4 * x + 1],
    "chebyshev_polynomial_w": lambda x: [np.ones_like(x), 2 * x + 1, 4 * x * x + 2 * x - 1,
                                         8 * x ** 3 + 4 * x * x - 4 * x - 1],
    "hermite_polynomial_h": lambda x: [np.ones_like(x), 2 * x, 4 * x * x - 2, 8 * x ** 3 - 12 * x],
    "hermite_polynomial_he": lambda x: [np.ones_like(x), x, x * x - 1, x ** 3 - 3 * x],
    "laguerre_polynomial_l": lambda x: [np.ones_like(x), 1 - x, (x * x - 4 * x + 2) / 2,
                                        (-x ** 3 + 9 * x * x - 18 * x + 6) / 6],
    "legendre_polynomial_p": lambda x: [np.ones_like(x), x, (3 * x * x - 1) / 2, (5 * x ** 3 - 3 * x) / 2],
}


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_low_degrees_are_the_closed_forms(name):
    fn = getattr(S, name)
    for n, expected in enumerate(CLOSED[name](X)):
        got = fn(tp.tensor(X), n)
        assert got.dtype is tp.float64
        np.testing.assert_allclose(_np(got), expected, rtol=1e-12, atol=1e-12, err_msg=f"{name} n={n}")


@pytest.mark.parametrize("kind", "tuvw")
def test_shifted_chebyshev_is_chebyshev_at_2x_minus_1(kind):
    x = tp.tensor(np.linspace(-0.3, 1.3, 17))
    for n in range(0, 12):
        np.testing.assert_allclose(_np(getattr(S, f"shifted_chebyshev_polynomial_{kind}")(x, n)),
                                   _np(getattr(S, f"chebyshev_polynomial_{kind}")(2 * x - 1, n)),
                                   rtol=1e-9, atol=1e-9)


def test_high_degree_chebyshev_inside_the_interval_is_the_trigonometric_form():
    x = np.linspace(-0.95, 0.95, 9)
    a = np.arccos(x)
    for n in (7, 12, 30):
        np.testing.assert_allclose(_np(S.chebyshev_polynomial_t(tp.tensor(x), n)), np.cos(n * a), atol=1e-12)
        np.testing.assert_allclose(_np(S.chebyshev_polynomial_u(tp.tensor(x), n)),
                                   np.sin((n + 1) * a) / np.sin(a), atol=1e-10)


def test_degree_conventions():
    x = tp.tensor([0.5, 0.5, 0.5, 0.5, 0.5])
    n = tp.tensor([3.9, -1.0, -0.5, float("nan"), float("inf")])
    # truncated toward zero (3.9 -> 3, -0.5 -> 0); negative, NaN and infinite degrees give 0
    assert S.legendre_polynomial_p(x, n).tolist() == pytest.approx([(5 * 0.125 - 1.5) / 2, 0.0, 1.0, 0.0, 0.0])


def test_edges_at_plus_minus_one():
    x = tp.tensor([1.0, -1.0])
    assert S.chebyshev_polynomial_t(x, 5).tolist() == [1.0, -1.0]
    assert S.chebyshev_polynomial_u(x, 5).tolist() == [6.0, -6.0]
    assert S.chebyshev_polynomial_v(x, 5).tolist() == [1.0, -11.0]
    assert S.chebyshev_polynomial_w(x, 5).tolist() == [11.0, -1.0]
    assert S.legendre_polynomial_p(x, 4).tolist() == [1.0, 1.0]
    assert S.shifted_chebyshev_polynomial_u(tp.tensor([1.0, 0.0]), 3).tolist() == [4.0, -4.0]


def test_polynomial_dtypes_numbers_and_broadcasting():
    assert S.hermite_polynomial_h(tp.tensor([1, 2]), tp.tensor([2, 3])).dtype is tp.float32
    assert S.hermite_polynomial_h(tp.tensor([1, 2]), tp.tensor([2, 3])).tolist() == [2.0, 40.0]
    r = S.hermite_polynomial_he(2.0, tp.tensor([0, 1, 2, 3]))
    assert r.dtype is tp.float32 and r.tolist() == [1.0, 2.0, 3.0, 2.0]
    r = S.laguerre_polynomial_l(tp.tensor([[0.0], [1.0]], dtype=tp.float64), tp.tensor([0, 1, 2]))
    assert r.shape == (2, 3) and r.dtype is tp.float64
    assert r.tolist() == [[1.0, 1.0, 1.0], [1.0, 0.0, -0.5]]


def test_polynomial_errors():
    with pytest.raises(NotImplementedError, match="\"chebyshev_polynomial_t_cpu\" not implemented for 'Half'"):
        S.chebyshev_polynomial_t(tp.tensor([0.5], dtype=tp.float16), 2)
    with pytest.raises(NotImplementedError, match="'BFloat16'"):
        S.legendre_polynomial_p(tp.tensor([0.5], dtype=tp.bfloat16), tp.tensor([2.0], dtype=tp.bfloat16))
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        S.hermite_polynomial_h(0.5, 2)
    with pytest.raises(RuntimeError):
        S.hermite_polynomial_h(tp.ones(3), tp.ones(4))


def test_polynomials_have_out_and_no_gradient():
    out = tp.empty(3)
    r = S.chebyshev_polynomial_t(tp.tensor([0.0, 0.5, 1.0]), 2, out=out)
    assert r is out and out.tolist() == [-1.0, -0.5, 1.0]
    x = tp.tensor([0.5], requires_grad=True)
    y = S.chebyshev_polynomial_t(x, 3).sum()
    with pytest.raises((RuntimeError, NotImplementedError)):
        y.backward()


def test_polynomials_batch_under_vmap():
    x = tp.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], dtype=tp.float64)
    n = tp.tensor([2, 3])
    got = vmap(lambda v: S.legendre_polynomial_p(v, n))(x)
    np.testing.assert_allclose(_np(got), _np(S.legendre_polynomial_p(x, n)), rtol=1e-15)


# -- small pointwise ops -----------------------------------------------------------------------------------------
def test_isposinf_isneginf_isreal():
    x = tp.tensor([-math.inf, -1.0, 0.0, math.inf, math.nan])
    assert tp.isposinf(x).tolist() == [False, False, False, True, False]
    assert x.isneginf().tolist() == [True, False, False, False, False]
    assert tp.isposinf(tp.tensor([1, 2])).tolist() == [False, False]
    assert tp.isreal(x).tolist() == [True] * 5
    assert tp.tensor([1 + 0j, 1j, -0.0 + 0j]).isreal().tolist() == [True, False, True]
    with pytest.raises(RuntimeError, match="isposinf does not support complex inputs."):
        tp.isposinf(tp.tensor([1j]))


def test_heaviside():
    x = tp.tensor([-2.0, 0.0, 3.0, math.nan])
    assert tp.heaviside(x, tp.tensor([0.5])).tolist() == [0.0, 0.5, 1.0, 0.0]
    assert tp.heaviside(tp.tensor([-1, 0, 4]), tp.tensor(7)).tolist() == [0, 7, 1]
    y = x.clone()
    assert y.heaviside_(tp.tensor(2.0)) is y and y.tolist() == [0.0, 2.0, 1.0, 0.0]
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for tensors with different dtypes."):
        tp.heaviside(x, tp.tensor([0.5], dtype=tp.float64))
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for complex tensors."):
        tp.heaviside(tp.tensor([1j]), tp.tensor([1j]))


def test_frexp_values_dtypes_and_gradient():
    x = tp.tensor([8.0, 0.75, -3.0, 0.0, math.inf, 1e-40], dtype=tp.float64, requires_grad=True)
    m, e = tp.frexp(x)
    mant, expo = np.frexp(np.array([8.0, 0.75, -3.0, 0.0, math.inf, 1e-40]))
    assert e.dtype is tp.int32 and e.tolist() == expo.tolist()
    assert m.tolist() == mant.tolist()
    assert tp.frexp(x).mantissa is not None and x.frexp().exponent.dtype is tp.int32
    tp.frexp(x)[0][:3].sum().backward()
    assert x.grad.tolist()[:3] == [1 / 16, 1.0, 1 / 4]
    bf = tp.frexp(tp.tensor([6.0], dtype=tp.bfloat16))
    assert bf.mantissa.dtype is tp.bfloat16 and bf.mantissa.tolist() == [0.75] and bf.exponent.tolist() == [3]
    with pytest.raises(RuntimeError, match=r"torch.frexp\(\) only supports floating-point dtypes"):
        tp.frexp(tp.tensor([1, 2]))


def test_ldexp():
    assert tp.ldexp(tp.tensor([1, 3]), tp.tensor([3, -1])).tolist() == [8.0, 1.5]
    assert tp.ldexp(tp.tensor([1, 3]), tp.tensor([3, -1])).dtype is tp.float32
    assert tp.ldexp(tp.tensor([1.0], dtype=tp.float16), tp.tensor([4])).dtype is tp.float16
    x = tp.tensor([1.5, 2.0], dtype=tp.float64, requires_grad=True)
    tp.ldexp(x, tp.tensor([2, 3])).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]
    y = tp.tensor([1.0, 2.0])
    assert y.ldexp_(tp.tensor([1, 2])) is y and y.tolist() == [2.0, 8.0]
    with pytest.raises(RuntimeError, match="ldexp can't be cast to the desired output type Long"):
        tp.tensor([1, 2]).ldexp_(tp.tensor([1, 2]))


def test_nextafter():
    one = tp.tensor([1.0, 1.0, 0.0, 2.0], dtype=tp.float64)
    r = tp.nextafter(one, tp.tensor([2.0, 0.0, -1.0, 2.0], dtype=tp.float64))
    assert r.tolist() == [np.nextafter(1.0, 2.0), np.nextafter(1.0, 0.0), -5e-324, 2.0]
    bf = tp.nextafter(tp.tensor([1.0, 1.0, 0.0], dtype=tp.bfloat16), tp.tensor([2.0, 0.0, 1.0], dtype=tp.bfloat16))
    assert bf.tolist() == [1.0078125, 0.99609375, 2.0 ** -133]
    with pytest.raises(NotImplementedError, match="\"nextafter_cpu\" not implemented for 'Long'"):
        tp.nextafter(tp.tensor([1]), tp.tensor([2]))
    x = tp.tensor([1.0, 2.0], dtype=tp.float64, requires_grad=True)
    o = tp.tensor([0.0, 3.0], dtype=tp.float64, requires_grad=True)
    gx, go = tp.autograd.grad(tp.nextafter(x, o).sum(), (x, o))
    assert gx.tolist() == [1.0, 1.0] and go.tolist() == [0.0, 0.0]


def test_bit_shifts():
    a = tp.tensor([1, -3, 5, 64], dtype=tp.int8)
    s = tp.tensor([8, -1, 2, 1], dtype=tp.int8)
    assert tp.bitwise_left_shift(a, s).tolist() == [0, 0, 20, -128]
    assert tp.bitwise_right_shift(a, s).tolist() == [0, -1, 1, 32]
    assert (tp.tensor([200], dtype=tp.uint8) >> 1).tolist() == [100]
    assert (tp.tensor([1, 2]) << 3).tolist() == [8, 16] and (2 << tp.tensor([1, 2])).tolist() == [4, 8]
    assert (8 >> tp.tensor([1, 2])).tolist() == [4, 2]
    b = tp.tensor([1, 2], dtype=tp.int32)
    b <<= 2
    assert b.tolist() == [4, 8] and b.dtype is tp.int32
    c = tp.tensor([16, 8])
    assert c.bitwise_right_shift_(tp.tensor([2, 3])) is c and c.tolist() == [4, 1]
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Float'"):
        tp.tensor([1.0]) << 1
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Float'"):
        tp.tensor([1, 2]) << 1.5
    with pytest.raises(NotImplementedError, match="\"rshift_cpu\" not implemented for 'Bool'"):
        tp.bitwise_right_shift(tp.tensor([True]), True)


def test_mvlgamma():
    x = tp.tensor([2.5, 4.0], dtype=tp.float64)
    want = [sum(math.lgamma(v - j / 2) for j in range(3)) + 3 * 2 / 4 * math.log(math.pi) for v in (2.5, 4.0)]
    assert tp.mvlgamma(x, 3).tolist() == pytest.approx(want)
    assert x.mvlgamma(p=3).tolist() == pytest.approx(want)
    y = x.clone()
    assert y.mvlgamma_(3) is y and y.tolist() == pytest.approx(want)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        tp.mvlgamma(x, 0)


# -- trapezoid, gradient, histograms ------------------------------------------------------------------------------
def test_trapezoid_family():
    y = tp.tensor([[1.0, 4.0, 9.0], [2.0, 2.0, 2.0]])
    assert tp.trapezoid(y).tolist() == [9.0, 4.0]
    assert tp.trapezoid(y, dx=2.0).tolist() == [18.0, 8.0]
    x = tp.tensor([0.0, 1.0, 3.0])
    assert tp.trapezoid(y, x).tolist() == [15.5, 6.0]
    assert tp.trapz(y, x).tolist() == [15.5, 6.0] and tp.trapz(y, dx=2.0).tolist() == [18.0, 8.0]
    assert tp.trapezoid(y, dim=0).tolist() == [1.5, 3.0, 5.5]
    assert tp.cumulative_trapezoid(y, x).tolist() == [[2.5, 15.5], [2.0, 6.0]]
    assert tp.trapezoid(tp.tensor([1, 2, 4])).dtype is tp.float32
    assert tp.trapezoid(tp.zeros(2, 0, dtype=tp.int64)).tolist() == [0, 0]
    with pytest.raises(RuntimeError, match="trapezoid: There must be one `x` value for each sample point"):
        tp.trapezoid(y, tp.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="received a bool input"):
        tp.trapezoid(tp.tensor([True, False]))
    with pytest.raises(RuntimeError, match="we only support dx as a real number"):
        tp.trapezoid(y, dx=True)
    for fn in (tp.trapezoid, tp.trapz, tp.cumulative_trapezoid):   # x must be a tensor, dx keyword-only
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            fn(y, 2)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        tp.trapezoid(y, x, dx=2)


def test_trapezoid_gradient_is_the_weights():
    y = tp.tensor([1.0, 4.0, 9.0], dtype=tp.float64, requires_grad=True)
    tp.trapezoid(y, tp.tensor([0.0, 1.0, 3.0], dtype=tp.float64)).backward()
    assert y.grad.tolist() == [0.5, 1.5, 1.0]


def test_gradient_matches_numpy():
    f = np.array([[1.0, 2.0, 4.0, 8.0, 11.0], [2.0, 3.0, 5.0, 9.0, 3.0], [0.0, 1.0, 0.5, 2.0, 7.0]])
    t = tp.tensor(f)
    for got, want in zip(tp.gradient(t), np.gradient(f)):
        np.testing.assert_allclose(_np(got), want)
    (g,) = tp.gradient(t, spacing=2.0, dim=1, edge_order=2)
    np.testing.assert_allclose(_np(g), np.gradient(f, 2.0, axis=1, edge_order=2))
    xs = np.array([0.0, 0.5, 1.7, 2.0, 4.0])
    (g,) = tp.gradient(t, spacing=(tp.tensor(xs),), dim=1)
    np.testing.assert_allclose(_np(g), np.gradient(f, xs, axis=1))
    (g,) = tp.gradient(t, spacing=(tp.tensor(xs),), dim=1, edge_order=2)
    np.testing.assert_allclose(_np(g), np.gradient(f, xs, axis=1, edge_order=2))
    g0, g1 = tp.gradient(t, spacing=[0.5, 3.0])
    np.testing.assert_allclose(_np(g0), np.gradient(f, 0.5, axis=0))
    np.testing.assert_allclose(_np(g1), np.gradient(f, 3.0, axis=1))
    assert tp.gradient(tp.tensor([1, 2, 4]))[0].dtype is tp.float32


def test_gradient_errors():
    with pytest.raises(RuntimeError, match="torch.gradient does not support uint8 input."):
        tp.gradient(tp.tensor([1, 2, 3], dtype=tp.uint8))
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        tp.gradient(tp.ones(4), edge_order=3)
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        tp.gradient(tp.ones(2), edge_order=2)
    with pytest.raises(RuntimeError, match="list of length equal to 'self.dim\\(\\) = 2'"):
        tp.gradient(tp.ones(3, 3), spacing=[1.0])
    with pytest.raises(RuntimeError, match="appears multiple times"):
        tp.gradient(tp.ones(3, 3), dim=[0, 0])


def test_histogram_matches_numpy():
    rng = np.random.default_rng(0)
    v = rng.normal(size=200)
    w = rng.uniform(size=200)
    h, e = tp.histogram(tp.tensor(v), 7, weight=tp.tensor(w), density=True)
    hn, en = np.histogram(v, 7, weights=w, density=True)
    np.testing.assert_allclose(_np(e), en, rtol=1e-12)
    np.testing.assert_allclose(_np(h), hn, rtol=1e-12)
    h, e = tp.histogram(tp.tensor([1.0, 2.0, 2.0, 4.0, 9.0]), tp.tensor([0.0, 2.0, 4.0]))
    assert h.tolist() == [1.0, 3.0] and e.tolist() == [0.0, 2.0, 4.0]   # the last bin includes 4, not 9
    h, e = tp.histogram(tp.tensor([3.0, 3.0]), 2)                        # an empty range widens by 0.5
    assert e.tolist() == [2.5, 3.0, 3.5] and h.tolist() == [0.0, 2.0]
    assert tp.histogram(tp.tensor([1.0, 5.0]), 2, range=(0.0, 2.0)).hist.tolist() == [0.0, 1.0]


def test_histogramdd_matches_numpy():
    rng = np.random.default_rng(1)
    pts = rng.uniform(-1, 1, size=(50, 3))
    h, edges = tp.histogramdd(tp.tensor(pts), [2, 3, 4])
    hn, en = np.histogramdd(pts, [2, 3, 4])
    assert h.shape == (2, 3, 4) and isinstance(edges, tuple) and len(edges) == 3
    np.testing.assert_array_equal(_np(h), hn)
    for a, b in zip(edges, en):
        np.testing.assert_allclose(_np(a), b, rtol=1e-12)
    e0, e1 = tp.tensor([-1.0, 0.0, 1.0], dtype=tp.float64), tp.tensor([-1.0, 1.0], dtype=tp.float64)
    h, _ = tp.histogramdd(tp.tensor(pts[:, :2]), [e0, e1], weight=tp.tensor(pts[:, 2]))
    hn, _ = np.histogramdd(pts[:, :2], [np.array([-1.0, 0.0, 1.0]), np.array([-1.0, 1.0])], weights=pts[:, 2])
    np.testing.assert_allclose(_np(h), hn)


def test_histogram_errors():
    with pytest.raises(NotImplementedError, match="\"histogramdd\" not implemented for 'Long'"):
        tp.histogram(tp.tensor([1, 2]), 3)
    with pytest.raises(RuntimeError, match=r"torch.histogram\(\): bins must be > 0, but got 0 for dimension 0"):
        tp.histogram(tp.tensor([1.0]), 0)
    with pytest.raises(RuntimeError, match="min should not exceed max, but got min 3 max 1"):
        tp.histogram(tp.tensor([1.0]), 2, range=(3.0, 1.0))
    with pytest.raises(RuntimeError, match=r"range \[3, inf\] is not finite"):
        tp.histogram(tp.tensor([1.0]), 2, range=(3.0, math.inf))
    with pytest.raises(RuntimeError, match="should have the same dtype"):
        tp.histogram(tp.tensor([1.0]), tp.tensor([0.0, 1.0], dtype=tp.float64))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tp.histogramdd(tp.tensor([1.0, 2.0]), 3)
    with pytest.raises(RuntimeError, match="The size of bins must be equal to the innermost dimension"):
        tp.histogramdd(tp.ones(3, 2), [2, 2, 2])


def test_histogram_with_a_range_batches_under_vmap():
    x = tp.tensor([[0.1, 0.2, 0.9], [0.5, 0.6, 0.7]])
    got = vmap(lambda v: tp.histogram(v, 2, range=(0.0, 1.0)).hist)(x)
    assert got.tolist() == [[2.0, 1.0], [0.0, 3.0]]
    m, e = vmap(tp.frexp)(tp.tensor([[8.0, 1.0], [0.5, 3.0]]))
    assert m.tolist() == [[0.5, 0.5], [0.5, 0.75]] and e.tolist() == [[4, 1], [0, 2]]


# -- windows ----------------------------------------------------------------------------------------------------
def test_windows_against_their_formulas():
    n = np.arange(5)
    np.testing.assert_allclose(_np(windows.hann(5, dtype=tp.float64)), 0.5 - 0.5 * np.cos(2 * np.pi * n / 4),
                               atol=1e-15)
    np.testing.assert_allclose(_np(windows.hamming(5, dtype=tp.float64)), 0.54 - 0.46 * np.cos(2 * np.pi * n / 4),
                               atol=1e-15)
    np.testing.assert_allclose(_np(windows.hann(4, sym=False, dtype=tp.float64)),
                               0.5 - 0.5 * np.cos(2 * np.pi * np.arange(4) / 4), atol=1e-15)
    np.testing.assert_allclose(_np(windows.bartlett(5, dtype=tp.float64)), [0, 0.5, 1, 0.5, 0], atol=1e-15)
    np.testing.assert_allclose(_np(windows.kaiser(6, beta=8.0, dtype=tp.float64)), np.kaiser(6, 8.0), rtol=1e-12)
    np.testing.assert_allclose(_np(windows.blackman(7, dtype=tp.float64)), np.blackman(7), atol=1e-15)
    np.testing.assert_allclose(_np(windows.gaussian(5, std=2.0, dtype=tp.float64)),
                               np.exp(-((n - 2.0) ** 2) / 8.0), rtol=1e-14)
    np.testing.assert_allclose(_np(windows.exponential(5, tau=2.0, dtype=tp.float64)), np.exp(-np.abs(n - 2) / 2),
                               rtol=1e-14)
    np.testing.assert_allclose(_np(windows.cosine(4, dtype=tp.float64)), np.sin(np.pi * (np.arange(4) + 0.5) / 4),
                               rtol=1e-14)
    assert windows.nuttall(3).dtype is tp.float32
    assert windows.general_cosine(0, a=[1.0]).shape == (0,) and windows.general_cosine(1, a=[1.0]).tolist() == [1.0]
    w = windows.hann(4, requires_grad=True)
    assert w.requires_grad


def test_window_errors():
    with pytest.raises(ValueError, match="bartlett requires non-negative window length, got M=-1"):
        windows.bartlett(-1)
    with pytest.raises(ValueError, match="general_cosine expects float32 or float64 dtypes, got: torch.int64"):
        windows.hann(3, dtype=tp.int64)
    with pytest.raises(ValueError, match="Tau must be positive, got: -1 instead."):
        windows.exponential(3, tau=-1)
    with pytest.raises(ValueError, match="Center must be None for symmetric windows"):
        windows.exponential(3, center=1)
    with pytest.raises(ValueError, match="Standard deviation must be positive"):
        windows.gaussian(3, std=0)
    with pytest.raises(ValueError, match="beta must be non-negative"):
        windows.kaiser(3, beta=-1)
    with pytest.raises(TypeError, match="Coefficients must be a list/tuple"):
        windows.general_cosine(3, a=None)
    with pytest.raises(ValueError, match="Coefficients cannot be empty"):
        windows.general_cosine(3, a=[])
    with pytest.raises(TypeError):
        windows.hann(3, True)   # keyword-only, as in PyTorch
