"""The random in-place fills (exponential_, geometric_, cauchy_, log_normal_) and the Bessel, Airy and
incomplete gamma functions of tensorplug.special: values against hand-computed ones and the defining
identities, special values, dtypes, gradients and PyTorch's errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tensorplug as tp

N = 200_000


# -- random fills ------------------------------------------------------------------------------------------
FILLS = [
    ("exponential_", (2.0,)),
    ("geometric_", (0.3,)),
    ("cauchy_", (1.0, 0.5)),
    ("log_normal_", (0.5, 0.25)),
]


@pytest.mark.parametrize("name,args", FILLS, ids=[f[0] for f in FILLS])
def test_fills_are_reproducible_in_place_and_follow_the_generator(name, args):
    x = tp.zeros(6, dtype=tp.float64)
    assert getattr(x, name)(*args) is x
    a = getattr(tp.zeros(50), name)(*args, generator=tp.Generator().manual_seed(5)).numpy()
    b = getattr(tp.zeros(50), name)(*args, generator=tp.Generator().manual_seed(5)).numpy()
    c = getattr(tp.zeros(50), name)(*args, generator=tp.Generator().manual_seed(6)).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    tp.manual_seed(11)
    d = getattr(tp.zeros(50), name)(*args).numpy()
    tp.manual_seed(11)
    np.testing.assert_array_equal(d, getattr(tp.zeros(50), name)(*args).numpy())


def test_fill_distributions():
    g = tp.Generator().manual_seed(0)
    e = tp.empty(N, dtype=tp.float64).exponential_(2.0, generator=g).numpy()
    assert e.min() > 0 and abs(e.mean() - 0.5) < 0.01 and abs(e.std() - 0.5) < 0.01
    k = tp.empty(N, dtype=tp.int64).geometric_(0.25, generator=g).numpy()
    assert k.min() == 1 and abs(k.mean() - 4.0) < 0.05  # trials up to the first success: mean 1/p
    c = tp.empty(N, dtype=tp.float64).cauchy_(1.0, 0.5, generator=g).numpy()
    assert abs(np.median(c) - 1.0) < 0.01
    assert abs(np.quantile(c, 0.75) - 1.5) < 0.02  # the quartiles are median +- sigma
    ln = tp.empty(N, dtype=tp.float64).log_normal_(0.5, 0.25, generator=g).numpy()
    assert ln.min() > 0 and abs(np.log(ln).mean() - 0.5) < 0.01 and abs(np.log(ln).std() - 0.25) < 0.01


def test_fill_defaults_dtypes_and_keywords():
    tp.manual_seed(0)
    ln = tp.empty(N).log_normal_().numpy()  # mean=1, std=2 of the underlying normal
    assert abs(np.median(np.log(ln)) - 1.0) < 0.03
    assert tp.empty(3, dtype=tp.float16).exponential_().dtype is tp.float16
    assert tp.empty(3, dtype=tp.bfloat16).cauchy_(median=2.0, sigma=3.0).dtype is tp.bfloat16
    for d in (tp.int8, tp.uint8, tp.int32, tp.float32):
        v = tp.empty(100, dtype=d).geometric_(p=0.5)
        assert v.dtype is d and (v.numpy() >= 1).all()
    assert (tp.empty(4).exponential_(lambd=float("inf")).numpy() == 0).all()


def _err(exc, msg):
    return exc, re.escape(msg)


ERRORS = [
    (lambda: tp.zeros(3).exponential_(0), _err(RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=0")),
    (lambda: tp.zeros(3).exponential_(float("nan")),
     _err(RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=nan")),
    (lambda: tp.zeros(3, dtype=tp.int64).exponential_(),
     _err(RuntimeError, "Exponential distribution is a continuous probability distribution. dtype must be a "
                        "floating point but you specified Long")),
    (lambda: tp.zeros(3).geometric_(0), _err(RuntimeError, "geometric_ expects p to be in (0, 1), but got p=0")),
    (lambda: tp.zeros(3).geometric_(1.5), _err(RuntimeError, "geometric_ expects p to be in (0, 1), but got p=1.5")),
    (lambda: tp.zeros(3, dtype=tp.bool).geometric_(0.5),
     _err(NotImplementedError, "\"geometric_cpu\" not implemented for 'Bool'")),
    (lambda: tp.zeros(3).cauchy_(0, 0), _err(RuntimeError, "cauchy_ expects sigma > 0.0, but found sigma=0")),
    (lambda: tp.zeros(3, dtype=tp.int8).cauchy_(),
     _err(RuntimeError, "Cauchy distribution is a continuous probability distribution. dtype must be a floating "
                        "point but you specified signed char")),
    (lambda: tp.zeros(3).log_normal_(0, -1), _err(RuntimeError, "log_normal_ expects std > 0.0, but found std=-1")),
    (lambda: tp.zeros(3, dtype=tp.int32).log_normal_(),
     _err(NotImplementedError, "\"log_normal_cpu\" not implemented for 'Int'")),
    (lambda: tp.zeros(3).exponential_(generator=3),
     _err(TypeError, "exponential_(): argument 'generator' must be tensorplug.Generator, not int")),
    (lambda: tp.zeros(3).expand(2, 3).cauchy_(), (RuntimeError, "more than one element of the written-to tensor")),
]


@pytest.mark.parametrize("call,err", ERRORS)
def test_fill_errors(call, err):
    exc, msg = err
    with pytest.raises(exc, match=msg):
        call()


def test_fills_give_zero_gradients_and_batch_under_vmap():
    from tensorplug.func import vmap

    x = tp.ones(4, requires_grad=True)
    y = x * 1.0
    y.exponential_()
    (g,) = tp.autograd.grad(y.sum(), x)
    assert (g.numpy() == 0).all()
    out = vmap(lambda t: t.clone().geometric_(0.5), randomness="different")(tp.zeros(3, 40))
    assert out.shape == (3, 40) and not np.array_equal(out[0].numpy(), out[1].numpy())
    same = vmap(lambda t: t.clone().log_normal_(), randomness="same")(tp.zeros(3, 5))
    np.testing.assert_array_equal(same[0].numpy(), same[2].numpy())


# -- Bessel, Airy, incomplete gamma ------------------------------------------------------------------------
SP = tp.special


def _f64(values):
    return tp.tensor(np.asarray(values, np.float64), dtype=tp.float64)


def _np(fn, values):
    return fn(_f64(values)).numpy()


# values to 16 digits from the tables of Abramowitz & Stegun (9.1, 9.8, 10.4) and DLMF
KNOWN = [
    (SP.bessel_j0, [1.0, 5.0, 10.0], [0.7651976865579666, -0.1775967713143383, -0.2459357644513483]),
    (SP.bessel_j1, [1.0, 5.0, 10.0], [0.4400505857449335, -0.3275791375914652, 0.04347274616886144]),
    (SP.bessel_y0, [1.0, 5.0, 10.0], [0.08825696421567696, -0.3085176252490338, 0.05567116728359939]),
    (SP.bessel_y1, [1.0, 5.0, 10.0], [-0.7812128213002887, 0.1478631433912268, 0.2490154242069539]),
    (SP.modified_bessel_i0, [1.0, 5.0], [1.266065877752008, 27.23987182360445]),
    (SP.modified_bessel_i1, [1.0, 5.0], [0.5651591039924851, 24.33564214245053]),
    (SP.modified_bessel_k0, [1.0, 5.0], [0.4210244382407084, 0.003691098334042594]),
    (SP.modified_bessel_k1, [1.0, 5.0], [0.6019072301972346, 0.004044613445452164]),
    (SP.airy_ai, [-5.0, -1.0, 1.0, 5.0], [0.3507610090241142, 0.5355608832923521, 0.1352924163128814,
                                          1.083444281360744e-4]),
]


@pytest.mark.parametrize("fn,x,want", KNOWN, ids=[k[0].__name__ for k in KNOWN])
def test_known_values(fn, x, want):
    np.testing.assert_allclose(_np(fn, x), want, rtol=1e-13)


def test_wronskians_and_identities_over_a_wide_range():
    x = np.concatenate([np.linspace(0.01, 60, 3001), np.logspace(-8, 3, 200)])
    j0, j1, y0, y1 = (_np(f, x) for f in (SP.bessel_j0, SP.bessel_j1, SP.bessel_y0, SP.bessel_y1))
    # J1 Y0 - J0 Y1 = 2 / (pi x)
    np.testing.assert_allclose((j1 * y0 - j0 * y1) * (np.pi * x / 2), 1.0, rtol=0, atol=1e-12)
    x = x[x < 600]  # I overflows beyond
    i0, i1, k0, k1 = (_np(f, x) for f in (SP.modified_bessel_i0, SP.modified_bessel_i1, SP.modified_bessel_k0,
                                          SP.modified_bessel_k1))
    # I0 K1 + I1 K0 = 1 / x
    np.testing.assert_allclose((i0 * k1 + i1 * k0) * x, 1.0, rtol=1e-12)
    np.testing.assert_allclose(_np(SP.scaled_modified_bessel_k0, x), k0 * np.exp(x), rtol=1e-12)
    np.testing.assert_allclose(_np(SP.scaled_modified_bessel_k1, x), k1 * np.exp(x), rtol=1e-12)
    np.testing.assert_allclose(_np(SP.modified_bessel_i0, x[:50]), _np(tp.i0, x[:50]), rtol=1e-15)
    np.testing.assert_allclose(_np(SP.spherical_bessel_j0, x), np.sin(x) / x, rtol=1e-15)


def test_airy_solves_its_equation():
    # Ai'' = x Ai: second differences on a fine grid, across every branch of the kernel
    h = 1e-3
    x = np.concatenate([np.linspace(-30, -0.5, 700), np.linspace(-0.5, 14, 500)])
    ai = lambda v: _np(SP.airy_ai, v)  # noqa: E731
    second = (ai(x + h) - 2 * ai(x) + ai(x - h)) / h ** 2
    err = np.abs(second - x * ai(x))
    neg = x < 0
    assert err[neg].max() < 1e-4  # the difference's own error there is about h^2 x^2 / 12 times the amplitude
    assert (err[~neg] / (np.abs(x * ai(x)) + np.abs(ai(x)))[~neg]).max() < 1e-5
    # the amplitude on the negative axis is pi^-1/2 |x|^-1/4 (envelope of the oscillation)
    far = np.linspace(-1000, -900, 20001)
    assert abs(np.abs(ai(far)).max() * np.sqrt(np.pi) * 900 ** 0.25 - 1.0) < 2e-3


SPECIAL = [np.inf, -np.inf, np.nan, 0.0, -1.0]
SPECIAL_WANT = {
    "bessel_j0": [np.nan, np.nan, np.nan, 1.0, 0.7651976865579666],
    "bessel_y0": [np.nan, np.nan, np.nan, -np.inf, np.nan],
    "bessel_y1": [np.nan, np.nan, np.nan, -np.inf, np.nan],
    "modified_bessel_i0": [np.nan, np.nan, np.nan, 1.0, 1.266065877752008],
    "modified_bessel_k0": [0.0, np.nan, np.nan, np.inf, np.nan],
    "scaled_modified_bessel_k1": [0.0, np.nan, np.nan, np.inf, np.nan],
    "spherical_bessel_j0": [0.0, 0.0, np.nan, 1.0, 0.8414709848078965],
    "airy_ai": [np.nan, np.nan, np.nan, 0.3550280538878172, 0.5355608832923521],
}


@pytest.mark.parametrize("name", sorted(SPECIAL_WANT))
def test_special_values(name):
    np.testing.assert_allclose(_np(getattr(SP, name), SPECIAL), SPECIAL_WANT[name], rtol=1e-15)


def test_dtypes_errors_and_out():
    assert SP.bessel_j0(tp.tensor([1, 2])).dtype is tp.float32
    assert SP.airy_ai(tp.tensor([True])).dtype is tp.float32
    assert SP.modified_bessel_k1(tp.tensor([1.0], dtype=tp.float64)).dtype is tp.float64
    with pytest.raises(NotImplementedError, match="\"bessel_y0_cpu\" not implemented for 'Half'"):
        SP.bessel_y0(tp.tensor([1.0], dtype=tp.float16))
    out = tp.empty(2)
    assert SP.bessel_j1(tp.tensor([1.0, 2.0]), out=out) is out
    np.testing.assert_allclose(out.numpy(), [0.44005059, 0.57672481], rtol=1e-6)
    x = tp.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        SP.bessel_j0(x).sum().backward()


def test_igamma_values_and_complement():
    a = _f64([0.5, 1.0, 3.0, 10.0, 100.0])
    x = _f64([0.5, 1.0, 2.0, 12.0, 95.0])
    p, q = tp.igamma(a, x).numpy(), tp.igammac(a, x).numpy()
    want_p = [math.erf(math.sqrt(0.5)), 1 - math.exp(-1), 1 - 5 * math.exp(-2)]  # closed forms
    np.testing.assert_allclose(p[:3], want_p, rtol=1e-14)
    np.testing.assert_allclose(p + q, 1.0, rtol=1e-14)
    # Q(a + 1, x) = Q(a, x) + x^a exp(-x) / Gamma(a + 1)
    lhs = tp.igammac(a + 1, x).numpy()
    av, xv = a.numpy(), x.numpy()
    rhs = q + np.exp(av * np.log(xv) - xv - np.array([math.lgamma(v + 1) for v in av]))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)
    # tiny a: Q keeps its relative accuracy (Q ~ a E1(x))
    e1_half = 0.5597735947761608  # E1(0.5)
    np.testing.assert_allclose(tp.igammac(_f64([1e-10]), _f64([0.5])).numpy(), [1e-10 * e1_half], rtol=1e-8)
    assert tp.special.gammainc is not None and tp.special.gammaincc(a, x).numpy() == pytest.approx(q)


def test_igamma_special_values_and_dtypes():
    inf, nan = math.inf, math.nan
    a = _f64([nan, 0.0, 0.5, inf, inf, -1.0, 2.0, 2.0])
    x = _f64([0.0, 1.0, inf, 1.0, inf, 1.0, -1.0, 0.0])
    np.testing.assert_array_equal(tp.igamma(a, x).numpy(), [0.0, 1.0, 1.0, 0.0, nan, nan, nan, 0.0])
    np.testing.assert_array_equal(tp.igammac(a, x).numpy(), [1.0, 0.0, 0.0, 1.0, nan, nan, nan, 1.0])
    assert tp.igamma(tp.tensor([1.0]), tp.tensor([1.0], dtype=tp.float64)).dtype is tp.float64
    assert tp.igamma(tp.tensor([1.0]), tp.tensor([1])).dtype is tp.float32
    assert tp.igamma(tp.tensor([1.0], dtype=tp.float16), tp.tensor([1.0], dtype=tp.float16)).dtype is tp.float16
    y = tp.tensor([1.0, 2.0])
    assert y.igamma_(tp.tensor([1.0, 2.0])) is y
    np.testing.assert_allclose(y.numpy(), [1 - math.exp(-1), 1 - 3 * math.exp(-2)], rtol=1e-6)
    z = tp.tensor([1.0, 2.0], dtype=tp.float64)
    z.igammac_(tp.tensor([1.0, 2.0]))
    np.testing.assert_allclose(z.numpy(), [math.exp(-1), 3 * math.exp(-2)], rtol=1e-14)
    with pytest.raises(NotImplementedError, match="\"igamma_cpu\" not implemented for 'Long'"):
        tp.igamma(tp.tensor([1, 2]), tp.tensor([1, 2]))
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        tp.igamma(tp.tensor([1.0]), 2.0)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tp.tensor([1, 2]).igamma_(tp.tensor([1.0, 2.0]))


def test_igamma_gradient_for_the_second_argument_only():
    from tensorplug.autograd import gradcheck

    a = _f64([[1.5, 2.0, 0.7]])
    x = tp.tensor([[0.5], [3.0]], dtype=tp.float64, requires_grad=True)
    assert gradcheck(lambda v: tp.igamma(a, v), (x,))
    assert gradcheck(lambda v: tp.igammac(a, v), (x,))
    (g,) = tp.autograd.grad(tp.igamma(_f64([1.0]), x).sum(), x)
    np.testing.assert_allclose(g.numpy()[:, 0], np.exp(-x.detach().numpy()[:, 0]), rtol=1e-14)  # a = 1: exp(-x)
    ar = _f64([2.0]).requires_grad_(True)
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not implemented."):
        tp.autograd.grad(tp.igamma(ar, x).sum(), ar)
    with pytest.raises(NotImplementedError, match="the derivative for 'igammac: input' is not implemented."):
        tp.autograd.grad(tp.igammac(ar, x).sum(), ar)


def test_pointwise_ops_batch_under_vmap():
    from tensorplug.func import vmap

    x = tp.rand(3, 4, dtype=tp.float64) * 5 + 0.1
    np.testing.assert_array_equal(vmap(SP.bessel_y1)(x).numpy(), SP.bessel_y1(x).numpy())
    a = tp.rand(4, dtype=tp.float64) + 0.5
    np.testing.assert_array_equal(vmap(tp.igamma, in_dims=(None, 0))(a, x).numpy(), tp.igamma(a, x).numpy())
