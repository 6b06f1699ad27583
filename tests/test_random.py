"""Random numbers: seeding and generators, distributions (loose moments, large n), PyTorch's errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.backend import BACKENDS

N = 200_000

# (name, draw with a generator) -- every random entry point of the API
DRAWS = [
    ("rand", lambda g: tp.rand(5, 3, generator=g)),
    ("randn", lambda g: tp.randn(4, generator=g, dtype=tp.float64)),
    ("randint", lambda g: tp.randint(0, 1000, (6,), generator=g)),
    ("randperm", lambda g: tp.randperm(20, generator=g)),
    ("uniform_", lambda g: tp.empty(5).uniform_(-2, 2, generator=g)),
    ("normal_", lambda g: tp.empty(5).normal_(1, 3, generator=g)),
    ("bernoulli_", lambda g: tp.empty(40).bernoulli_(0.5, generator=g)),
    ("bernoulli", lambda g: tp.bernoulli(tp.full((40,), 0.5), generator=g)),
    ("random_", lambda g: tp.empty(6, dtype=tp.int64).random_(generator=g)),
    ("multinomial", lambda g: tp.multinomial(tp.ones(3, 10), 4, generator=g)),
    ("normal", lambda g: tp.normal(tp.zeros(5), tp.ones(5), generator=g)),
    ("rand_like", lambda g: tp.rand_like(tp.zeros(2, 2), generator=g)),
    ("randn_like", lambda g: tp.randn_like(tp.zeros(2, 2), generator=g)),
    ("randint_like", lambda g: tp.randint_like(tp.zeros(6, dtype=tp.int32), 100, generator=g)),
]


@pytest.mark.parametrize("name,draw", DRAWS, ids=[d[0] for d in DRAWS])
def test_same_seed_same_values_different_seed_different_values(name, draw):
    a = draw(tp.Generator().manual_seed(123)).numpy()
    b = draw(tp.Generator().manual_seed(123)).numpy()
    c = draw(tp.Generator().manual_seed(124)).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("name,draw", DRAWS, ids=[d[0] for d in DRAWS])
def test_global_seed_reproduces_default_generator_draws(name, draw):
    tp.manual_seed(7)
    a = draw(None).numpy()
    tp.manual_seed(7)
    b = draw(None).numpy()
    np.testing.assert_array_equal(a, b)
    tp.manual_seed(8)
    assert not np.array_equal(draw(None).numpy(), a)


def test_explicit_generator_does_not_touch_the_global_stream():
    tp.manual_seed(0)
    expected = tp.rand(4).numpy()
    tp.manual_seed(0)
    tp.rand(100, generator=tp.Generator().manual_seed(5))
    np.testing.assert_array_equal(tp.rand(4).numpy(), expected)


def test_manual_seed_seeds_every_backend_and_returns_the_default_generator(monkeypatch):
    calls = []
    for b in BACKENDS.values():
        monkeypatch.setattr(b, "manual_seed", lambda s, name=b.name: calls.append((name, s)))
    g = tp.manual_seed(42)
    assert g is tp.default_generator and isinstance(g, tp.Generator)
    assert sorted(calls) == sorted((name, 42) for name in BACKENDS)
    assert tp.initial_seed() == 42 and g.initial_seed() == 42
    assert tp.manual_seed(7.9).initial_seed() == 7  # int() first, as torch.manual_seed does


def test_generator_api():
    g = tp.Generator()
    assert g.device == tp.device("cpu") and g.initial_seed() == 67280421310721
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    assert tp.Generator(device="cpu").manual_seed(-1).initial_seed() == 2 ** 64 - 1
    s = g.seed()
    assert isinstance(s, int) and 0 <= s < 2 ** 64 and g.initial_seed() == s
    a = tp.rand(3, generator=tp.Generator().manual_seed(s)).numpy()
    np.testing.assert_array_equal(tp.rand(3, generator=g).numpy(), a)


def test_generator_state_round_trip():
    g = tp.Generator().manual_seed(11)
    tp.rand(7, generator=g)
    state = g.get_state()
    assert state.dtype is tp.uint8 and state.dim() == 1
    first = tp.randn(5, generator=g).numpy()
    g.manual_seed(99)
    assert g.set_state(state) is g
    np.testing.assert_array_equal(tp.randn(5, generator=g).numpy(), first)
    assert g.initial_seed() == 11
    # a state survives a copy into another generator
    h = tp.Generator().set_state(state)
    np.testing.assert_array_equal(tp.randn(5, generator=h).numpy(), first)


def test_global_rng_state_round_trip():
    tp.manual_seed(5)
    state = tp.get_rng_state()
    a = tp.randint(0, 100, (10,)).numpy()
    tp.rand(3)
    tp.set_rng_state(state)
    np.testing.assert_array_equal(tp.randint(0, 100, (10,)).numpy(), a)
    tp.seed()
    assert tp.initial_seed() != 5


def _moments(x):
    a = x.numpy().astype(np.float64)
    return a.mean(), a.std()


MOMENT_CASES = [
    ("rand", lambda: tp.rand(N), 0.5, math.sqrt(1 / 12)),
    ("uniform_(-2, 6)", lambda: tp.empty(N).uniform_(-2, 6), 2.0, 8 / math.sqrt(12)),
    ("rand float64", lambda: tp.rand(N, dtype=tp.float64), 0.5, math.sqrt(1 / 12)),
    ("rand float16", lambda: tp.rand(N, dtype=tp.float16), 0.5, math.sqrt(1 / 12)),
    ("rand bfloat16", lambda: tp.rand(N, dtype=tp.bfloat16), 0.5, math.sqrt(1 / 12)),
    ("randn", lambda: tp.randn(N), 0.0, 1.0),
    ("normal_(3, 0.5)", lambda: tp.empty(N, dtype=tp.float64).normal_(3, 0.5), 3.0, 0.5),
    ("normal floats", lambda: tp.normal(-1.0, 2.0, (N,)), -1.0, 2.0),
    ("normal tensors", lambda: tp.normal(tp.full((N,), 4.0), tp.full((N,), 0.25)), 4.0, 0.25),
    ("bernoulli_(0.3)", lambda: tp.empty(N).bernoulli_(0.3), 0.3, math.sqrt(0.21)),
    ("bernoulli(p)", lambda: tp.bernoulli(tp.full((N,), 0.8)), 0.8, 0.4),
    ("randint(-5, 5)", lambda: tp.randint(-5, 5, (N,)), -0.5, math.sqrt((10 ** 2 - 1) / 12)),
    ("random_(10) float", lambda: tp.empty(N).random_(10), 4.5, math.sqrt((10 ** 2 - 1) / 12)),
    ("randn_like", lambda: tp.randn_like(tp.zeros(N, dtype=tp.float64)), 0.0, 1.0),
]


@pytest.mark.parametrize("name,draw,mean,std", MOMENT_CASES, ids=[c[0] for c in MOMENT_CASES])
def test_distribution_moments(name, draw, mean, std):
    tp.manual_seed(2024)
    m, s = _moments(draw())
    assert abs(m - mean) < 5 * std / math.sqrt(N) + 1e-3
    assert abs(s - std) < 0.02 * std


RANGE_CASES = [
    ("rand", lambda: tp.rand(N), 0, 1, False),
    ("uniform_", lambda: tp.empty(N, dtype=tp.float64).uniform_(2, 3), 2, 3, False),
    ("randint", lambda: tp.randint(3, 7, (N,)), 3, 6, True),
    ("randint int8", lambda: tp.randint(-128, 128, (N,), dtype=tp.int8), -128, 127, True),
    ("randint uint8", lambda: tp.randint(0, 256, (N,), dtype=tp.uint8), 0, 255, True),
    ("randint_like", lambda: tp.randint_like(tp.zeros(N), 2, 5), 2, 4, True),
    ("random_ bool", lambda: tp.empty(N, dtype=tp.bool).random_(), 0, 1, True),
    ("random_ uint8", lambda: tp.empty(N, dtype=tp.uint8).random_(), 0, 255, True),
    ("random_ int8", lambda: tp.empty(N, dtype=tp.int8).random_(), 0, 127, True),
    ("random_ from", lambda: tp.empty(N, dtype=tp.int16).random_(-5, None), -5, 2 ** 15 - 1, False),
    ("random_ float16", lambda: tp.empty(N, dtype=tp.float16).random_(), 0, 2 ** 11, False),
    ("random_ bfloat16", lambda: tp.empty(N, dtype=tp.bfloat16).random_(), 0, 2 ** 8, False),
    ("random_ float32", lambda: tp.empty(N).random_(), 0, 2 ** 24, False),
]


@pytest.mark.parametrize("name,draw,lo,hi,hits_ends", RANGE_CASES, ids=[c[0] for c in RANGE_CASES])
def test_values_stay_in_range(name, draw, lo, hi, hits_ends):
    tp.manual_seed(1)
    a = draw().numpy().astype(np.float64)
    assert a.min() >= lo and (a.max() < hi if name in ("rand", "uniform_") else a.max() <= hi)
    if hits_ends:
        assert a.min() == lo and a.max() == hi
        assert np.array_equal(np.unique(a), np.arange(lo, hi + 1))
    else:
        assert a.max() - a.min() > 0.9 * (hi - lo) if hi - lo < 1e4 else a.max() > lo


def test_dtypes_shapes_and_factories():
    assert tp.rand(2, 3).dtype is tp.float32 and tp.rand((2, 3)).shape == (2, 3)
    assert tp.rand([]).shape == () and tp.randn(0, 4).shape == (0, 4)
    assert tp.rand(3, dtype=tp.float16).dtype is tp.float16
    assert tp.randint(5, (2,)).dtype is tp.int64
    assert tp.randint(5, (2,), dtype=tp.float32).dtype is tp.float32
    assert tp.randint(low=2, high=4, size=(3,)).shape == (3,)
    assert tp.randint_like(tp.zeros(3), 5).dtype is tp.float32
    assert tp.rand_like(tp.zeros(2, dtype=tp.float64)).dtype is tp.float64
    assert tp.randperm(3, dtype=tp.int32).dtype is tp.int32 and tp.randperm(0).shape == (0,)
    assert tp.normal(tp.zeros(3), 1.0).shape == (3,) and tp.normal(2.0, tp.ones(2, 3)).shape == (2, 3)
    assert tp.normal(tp.zeros(2, 1), tp.ones(3)).shape == (2, 3)
    assert tp.normal(tp.zeros(2, dtype=tp.float64), tp.ones(2)).dtype is tp.float64
    assert tp.bernoulli(tp.zeros(3, dtype=tp.float64)).dtype is tp.float64
    x = tp.rand(4, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    t = tp.empty(3)
    assert t.uniform_() is t and t.normal_() is t and t.bernoulli_() is t and t.random_(4) is t


def test_in_place_random_ops_write_through_views_and_bump_versions():
    x = tp.zeros(4, 5)
    before = x._version
    x[1:3].uniform_(5, 6)
    a = x.numpy()
    assert (a[1:3] >= 5).all() and (a[0] == 0).all() and (a[3] == 0).all()
    x[:, 0].normal_()
    x.t()[2].bernoulli_(1.0)
    assert (x.numpy()[:, 2] == 1).all()
    assert x._version == before + 3


def test_randperm_is_a_permutation():
    tp.manual_seed(3)
    for n in (1, 2, 17, 1000):
        p = tp.randperm(n).numpy()
        assert sorted(p.tolist()) == list(range(n))
    assert not np.array_equal(tp.randperm(1000).numpy(), np.arange(1000))


def test_bernoulli_edges_and_elementwise_probabilities():
    p = tp.tensor([0.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(tp.bernoulli(p).numpy(), p.numpy())
    assert tp.empty(10).bernoulli_(0.0).sum().item() == 0
    assert tp.empty(10, dtype=tp.int64).bernoulli_(1.0).tolist() == [1] * 10
    tp.manual_seed(0)
    probs = tp.tensor([[0.1, 0.5, 0.9]]).expand(N // 3, 3).contiguous()
    freq = tp.bernoulli(probs).numpy().mean(axis=0)
    np.testing.assert_allclose(freq, [0.1, 0.5, 0.9], atol=0.01)


def test_multinomial_frequencies_and_no_replacement():
    tp.manual_seed(9)
    probs = tp.tensor([[1., 0., 3.], [0., 2., 2.]])
    s = tp.multinomial(probs, N // 10, replacement=True).numpy()
    assert s.shape == (2, N // 10) and s.dtype == np.int64
    np.testing.assert_allclose(np.bincount(s[0], minlength=3) / s.shape[1], [0.25, 0, 0.75], atol=0.01)
    np.testing.assert_allclose(np.bincount(s[1], minlength=3) / s.shape[1], [0, 0.5, 0.5], atol=0.01)
    w = tp.multinomial(tp.tensor([1., 2., 3., 4.]), 4).numpy()
    assert sorted(w.tolist()) == [0, 1, 2, 3]
    # without replacement, zero-probability categories come last
    assert tp.multinomial(tp.tensor([0., 1.]), 2).tolist() == [1, 0]
    first = np.array([tp.multinomial(tp.tensor([1., 1., 2.]), 1).item() for _ in range(4000)])
    np.testing.assert_allclose(np.bincount(first, minlength=3) / 4000, [0.25, 0.25, 0.5], atol=0.03)


def _err(exc, msg):
    return exc, "^" + re.escape(msg) + "$"


ERRORS = [
    (lambda: tp.empty(3).uniform_(2, 1), _err(
        RuntimeError, "uniform_ expects to return a [from, to) range, but found from=2 > to=1")),
    (lambda: tp.empty(3, dtype=tp.int64).uniform_(), _err(
        NotImplementedError, "\"uniform_\" not implemented for 'Long'")),
    (lambda: tp.rand(3, dtype=tp.bool), _err(NotImplementedError, "\"uniform_\" not implemented for 'Bool'")),
    (lambda: tp.empty(3).uniform_(0, float("inf")), _err(RuntimeError, "to is out of bounds for float")),
    (lambda: tp.empty(3).uniform_(-3e38, 3e38), _err(
        RuntimeError, "uniform_ expects to-from <= std::numeric_limits<Float>::max(), but found to=3e+38 and "
        "from=-3e+38 which result in to-from to exceed the limit")),
    (lambda: tp.empty(3).normal_(0, -1), _err(RuntimeError, "normal expects std >= 0.0, but found std -1")),
    (lambda: tp.randn(3, dtype=tp.int32), _err(NotImplementedError, "\"normal_\" not implemented for 'Int'")),
    (lambda: tp.empty(3).bernoulli_(2), _err(RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=2")),
    (lambda: tp.empty(3).bernoulli_(float("nan")), _err(
        RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=nan")),
    (lambda: tp.bernoulli(tp.tensor([0.5, 2.0])), _err(
        RuntimeError, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.")),
    (lambda: tp.bernoulli(tp.tensor([1, 0])), _err(NotImplementedError, "\"bernoulli\" not implemented for 'Long'")),
    (lambda: tp.empty(3, dtype=tp.int64).random_(5, 3), _err(
        RuntimeError, "random_ expects 'from' to be less than 'to', but got from=5 >= to=3")),
    (lambda: tp.empty(3, dtype=tp.uint8).random_(-1, 5), _err(RuntimeError, "from is out of bounds for unsigned char")),
    (lambda: tp.empty(3, dtype=tp.uint8).random_(0, 300), _err(
        RuntimeError, "to - 1 is out of bounds for unsigned char")),
    (lambda: tp.empty(3, dtype=tp.bool).random_(0, 3), _err(RuntimeError, "to - 1 is out of bounds for bool")),
    (lambda: tp.empty(3, dtype=tp.int16).random_(0, 2 ** 20), _err(
        RuntimeError, "to - 1 is out of bounds for short int")),
    (lambda: tp.empty(3, dtype=tp.int64).random_(0, 2 ** 63), _err(ValueError, "Overflow when unpacking long long")),
    (lambda: tp.randint(5, 3, (2,)), _err(
        RuntimeError, "random_ expects 'from' to be less than 'to', but got from=5 >= to=3")),
    (lambda: tp.randint(3), _err(TypeError, "randint() missing required argument 'size'")),
    (lambda: tp.randint(5.5, (2,)), _err(TypeError, "randint(): argument 'high' (position 1) must be int, not float")),
    (lambda: tp.randperm(-1), _err(RuntimeError, "Trying to create tensor with negative dimension -1: [-1]")),
    (lambda: tp.rand(2, 3, generator=5), _err(
        TypeError, "uniform_(): argument 'generator' must be tensorplug.Generator, not int")),
    (lambda: tp.randperm(3, generator="g"), _err(
        TypeError, "randperm(): argument 'generator' must be tensorplug.Generator, not str")),
    (lambda: tp.Generator().manual_seed(2 ** 64), _err(ValueError, "Overflow when unpacking long long")),
    (lambda: tp.Generator().manual_seed(1.5), _err(RuntimeError, "manual_seed expected a long, but got float")),
    (lambda: tp.Generator().set_state(tp.zeros(3, dtype=tp.uint8)), _err(
        RuntimeError, "Expected a generator state of size 45 but found the input RNG state size to be 3")),
    (lambda: tp.Generator().set_state(tp.zeros(45)), _err(TypeError, "RNG state must be a tensorplug.uint8 tensor")),
    (lambda: tp.Generator("nosuchdevice"), (RuntimeError, "no backend is registered for device type 'nosuchdevice'")),
    (lambda: tp.multinomial(tp.tensor([0., 1.]), 3), _err(
        RuntimeError, "cannot sample n_sample > prob_dist.size(-1) samples without replacement")),
    (lambda: tp.multinomial(tp.tensor([-1., 1.]), 1), _err(
        RuntimeError, "probability tensor contains either `inf`, `nan` or element < 0")),
    (lambda: tp.multinomial(tp.tensor([1., float("nan")]), 1), _err(
        RuntimeError, "probability tensor contains either `inf`, `nan` or element < 0")),
    (lambda: tp.multinomial(tp.tensor([[1., 1.], [0., 0.]]), 1), _err(
        RuntimeError, "invalid multinomial distribution (sum of probabilities <= 0)")),
    (lambda: tp.multinomial(tp.ones(2, 2, 2), 1), _err(RuntimeError, "prob_dist must be 1 or 2 dim")),
    (lambda: tp.multinomial(tp.ones(2), 0), _err(RuntimeError, "cannot sample n_sample <= 0 samples")),
    (lambda: tp.multinomial(tp.ones(2, dtype=tp.int64), 1), _err(
        RuntimeError, "multinomial only supports floating-point dtypes for input, got: Long")),
    (lambda: tp.normal(tp.zeros(3), tp.ones(2)), _err(
        RuntimeError, "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0")),
    (lambda: tp.normal(tp.zeros(3), -1.), _err(RuntimeError, "normal expects std >= 0.0, but found std -1")),
    (lambda: tp.normal(tp.zeros(3), -tp.ones(3)), _err(RuntimeError, "normal expects all elements of std >= 0.0")),
    (lambda: tp.normal(tp.zeros(3, dtype=tp.int64), tp.ones(3)), _err(
        NotImplementedError, "\"normal_\" not implemented for 'Long'")),
    (lambda: tp.normal(0., 1.), _err(TypeError, "normal(): with float mean and std, the argument 'size' is required")),
    (lambda: tp.randint(5, (2,), requires_grad=True), _err(
        RuntimeError, "Only Tensors of floating point and complex dtype can require gradients")),
]


@pytest.mark.parametrize("call,err", ERRORS, ids=range(len(ERRORS)))
def test_errors(call, err):
    with pytest.raises(err[0], match=err[1]):
        call()


def test_generator_for_another_device_type_is_refused():
    g = tp.Generator()
    g.device = tp.device("meta")
    with pytest.raises(RuntimeError, match="^Expected a 'cpu' device type for generator but found 'meta'$"):
        tp.rand(2, generator=g)


def test_float_random_past_exact_integers_warns():
    with pytest.warns(UserWarning, match=re.escape("to - 1 is out of bounds [-(2^11), 2^11]. Due to precision "
                                                   "limitations c10::Half can support discrete uniform "
                                                   "distribution only within this range.")):
        tp.empty(3, dtype=tp.float16).random_(0, 5000)


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str)
def test_random_ops_keep_float_dtypes(dtype):
    tp.manual_seed(0)
    draws = {"uniform": tp.empty(4000, dtype=dtype).uniform_(-1, 1),
             "normal": tp.empty(4000, dtype=dtype).normal_(),
             "bernoulli": tp.empty(4000, dtype=dtype).bernoulli_(0.25),
             "random": tp.empty(4000, dtype=dtype).random_(7)}
    assert all(t.dtype is dtype for t in draws.values())
    u, n, b, r = (t.to(tp.float64).numpy() for t in draws.values())
    assert u.min() >= -1 and u.max() <= 1 and abs(u.mean()) < 0.05
    assert abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.05
    assert set(np.unique(b)) == {0., 1.} and abs(b.mean() - 0.25) < 0.03
    assert set(np.unique(r)) == set(range(7))
