"""tensorplug.distributions against torch.distributions: densities, entropies, moments, KL, errors, and
reparameterized sampling (shapes, gradients, statistics)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import distributions as D

torch = pytest.importorskip("torch")
td = torch.distributions

needs_linalg = pytest.mark.skipif(not hasattr(tp, "linalg"), reason="needs tensorplug.linalg")

RNG = np.random.default_rng(0)
LOC = RNG.normal(size=(2, 3))
SCALE = RNG.uniform(0.5, 2.0, size=(2, 3))
PROBS = RNG.uniform(0.05, 0.95, size=(4,))
CAT = RNG.uniform(0.1, 1.0, size=(2, 5))
VALUE = RNG.normal(size=(2, 3))


def _t(mod, a):
    return mod.tensor(np.asarray(a, dtype=np.float64))


def _close(ours, theirs, tol=1e-12):
    np.testing.assert_allclose(np.asarray(ours.detach().numpy(), dtype=np.float64),
                               theirs.detach().numpy().astype(np.float64), rtol=tol, atol=tol)


def _builders():
    return {
        "normal": (lambda m, d: d.Normal(_t(m, LOC), _t(m, SCALE)), VALUE),
        "normal_scalar": (lambda m, d: d.Normal(0.5, 2.0), np.array(0.3)),
        "bernoulli_probs": (lambda m, d: d.Bernoulli(probs=_t(m, PROBS)), np.array([0.0, 1.0, 1.0, 0.0])),
        "bernoulli_logits": (lambda m, d: d.Bernoulli(logits=_t(m, LOC[0])), np.array([1.0, 0.0, 1.0])),
        "categorical_probs": (lambda m, d: d.Categorical(probs=_t(m, CAT)), np.array([[0, 4], [3, 1]])),
        "categorical_logits": (lambda m, d: d.Categorical(logits=_t(m, LOC)), np.array([2, 0])),
        "uniform": (lambda m, d: d.Uniform(_t(m, LOC), _t(m, LOC + SCALE)), LOC + 0.3 * SCALE),
        "independent": (lambda m, d: d.Independent(d.Normal(_t(m, LOC), _t(m, SCALE)), 1), VALUE),
    }


CASES = sorted(_builders())


def _value(m, v, name):
    if name.startswith("categorical"):
        return m.tensor(np.asarray(v, dtype=np.int64))
    return _t(m, v)


@pytest.mark.parametrize("name", CASES)
def test_density_entropy_and_moments_match_torch(name):
    build, value = _builders()[name]
    ours, theirs = build(tp, D), build(torch, td)
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    _close(ours.log_prob(_value(tp, value, name)), theirs.log_prob(_value(torch, value, name)))
    _close(ours.entropy(), theirs.entropy())
    for attr in ("mean", "variance", "stddev"):
        a, b = getattr(ours, attr), getattr(theirs, attr)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12, equal_nan=True)
    if name in ("normal", "uniform"):
        _close(ours.cdf(_t(tp, value)), theirs.cdf(_t(torch, value)))


@pytest.mark.parametrize("name", CASES)
def test_sample_shapes_and_dtypes_match_torch(name):
    build, _ = _builders()[name]
    ours, theirs = build(tp, D), build(torch, td)
    for shape in [(), (5,), (2, 3)]:
        a, b = ours.sample(shape), theirs.sample(shape)
        assert tuple(a.shape) == tuple(b.shape)
        assert a.dtype.name == str(b.dtype).replace("torch.", "")
        assert not a.requires_grad
    assert ours.has_rsample == theirs.has_rsample


def test_rsample_is_reparameterized_and_differentiable():
    loc = tp.tensor([0.5, -1.0], dtype=tp.float64, requires_grad=True)
    scale = tp.tensor([2.0, 0.5], dtype=tp.float64, requires_grad=True)
    tp.manual_seed(0)
    d = D.Normal(loc, scale)
    x = d.rsample((1000,))
    assert x.shape == (1000, 2) and x.requires_grad
    x.sum().backward()
    assert loc.grad.tolist() == [1000.0, 1000.0]
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-10)
    low = tp.tensor(1.0, requires_grad=True)
    high = tp.tensor(3.0, requires_grad=True)
    u = D.Uniform(low, high).rsample((10,))
    u.sum().backward()
    assert low.grad.item() + high.grad.item() == pytest.approx(10.0)


def test_sample_statistics():
    tp.manual_seed(1)
    n = 20000
    x = D.Normal(tp.tensor([1.0, -2.0], dtype=tp.float64), tp.tensor([0.5, 3.0], dtype=tp.float64)).sample((n,))
    np.testing.assert_allclose(x.mean(0).numpy(), [1.0, -2.0], atol=0.08)
    np.testing.assert_allclose(x.std(0).numpy(), [0.5, 3.0], rtol=0.05)
    b = D.Bernoulli(probs=tp.tensor([0.2, 0.9])).sample((n,))
    np.testing.assert_allclose(b.mean(0).numpy(), [0.2, 0.9], atol=0.02)
    c = D.Categorical(probs=tp.tensor([0.1, 0.6, 0.3])).sample((n,))
    counts = np.bincount(c.numpy(), minlength=3) / n
    np.testing.assert_allclose(counts, [0.1, 0.6, 0.3], atol=0.02)
    u = D.Uniform(-1.0, 3.0).sample((n,))
    assert u.min().item() >= -1.0 and u.max().item() < 3.0


@pytest.mark.parametrize("pair", [
    lambda m, d: (d.Normal(_t(m, LOC), _t(m, SCALE)), d.Normal(_t(m, LOC[::-1].copy()), _t(m, SCALE * 1.5))),
    lambda m, d: (d.Categorical(probs=_t(m, CAT)), d.Categorical(logits=_t(m, LOC[:, :1] + CAT))),
    lambda m, d: (d.Categorical(probs=_t(m, [0.5, 0.5, 0.0])), d.Categorical(probs=_t(m, [0.2, 0.3, 0.5]))),
    lambda m, d: (d.Categorical(probs=_t(m, [0.5, 0.5])), d.Categorical(probs=_t(m, [1.0, 0.0]))),
    lambda m, d: (d.Bernoulli(probs=_t(m, PROBS)), d.Bernoulli(probs=_t(m, PROBS[::-1].copy()))),
    lambda m, d: (d.Uniform(_t(m, [0.0, 0.0]), _t(m, [1.0, 2.0])), d.Uniform(_t(m, [-1.0, 0.5]), _t(m, [2.0, 3.0]))),
    lambda m, d: (d.Independent(d.Normal(_t(m, LOC), _t(m, SCALE)), 1),
                  d.Independent(d.Normal(_t(m, SCALE), _t(m, SCALE + 1)), 1)),
])
def test_kl_divergence_matches_torch(pair):
    p, q = pair(tp, D)
    tp_, tq = pair(torch, td)
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), td.kl_divergence(tp_, tq).numpy(), rtol=1e-12)


def test_kl_not_implemented_and_register_kl():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type "
                                                  "Bernoulli"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5))

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Bernoulli)
    def _kl(p, q):
        return tp.tensor(42.0)
    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Bernoulli(0.5)).item() == 42.0
    # subclasses use the closest registered pair
    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 0.0


def _fix(msg):
    """torch's message with shapes written as tuples, as tensorplug writes them."""
    def shape(m):
        dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
    return re.sub(r"torch\.Size\(\[([^\]]*)\]\)", shape, msg)


@pytest.mark.parametrize("build", [
    lambda m, d: d.Normal(m.tensor([float("nan"), 0.0]), 1.0),
    lambda m, d: d.Normal(0.0, -1.0),
    lambda m, d: d.Normal(m.zeros(2), m.ones(2)).log_prob(m.zeros(3)),
    lambda m, d: d.Normal(m.zeros(2), m.ones(2)).log_prob([0.0]),
    lambda m, d: d.Bernoulli(probs=m.tensor([0.3, 0.5])).log_prob(m.tensor([0.5, 1.0])),
    lambda m, d: d.Bernoulli(probs=0.3, logits=0.1),
    lambda m, d: d.Bernoulli(),
    lambda m, d: d.Bernoulli(probs=1.5),
    lambda m, d: d.Categorical(probs=m.tensor([0.3, -0.5])),
    lambda m, d: d.Categorical(m.tensor([0.3, 0.5])).log_prob(m.tensor(3)),
    lambda m, d: d.Uniform(1.0, 0.0),
    lambda m, d: d.Uniform(0.0, 1.0).log_prob(m.tensor(2.0)),
    lambda m, d: d.Independent(d.Normal(m.zeros(2), m.ones(2)), 2),
    lambda m, d: d.MultivariateNormal(m.zeros(2)),
    lambda m, d: d.MultivariateNormal(m.zeros(2), m.eye(2), scale_tril=m.eye(2)),
    lambda m, d: d.MultivariateNormal(m.tensor(0.0), m.eye(2)),
    lambda m, d: d.MultivariateNormal(m.zeros(2), m.ones(2)),
])
def test_errors_match_torch(build):
    with pytest.raises(Exception) as theirs:
        build(torch, td)
    with pytest.raises(type(theirs.value)) as ours:
        build(tp, D)
    assert str(ours.value) == _fix(str(theirs.value))


def test_validate_args_false_skips_checks():
    d = D.Normal(0.0, -1.0, validate_args=False)
    assert d.scale.item() == -1.0
    assert D.Bernoulli(probs=tp.tensor([0.5]), validate_args=False).log_prob(tp.tensor([0.5])).shape == (1,)


# -- MultivariateNormal (on tensorplug.linalg) ----------------------------------------------------------------

COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
MVN_LOC = np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0]])


@needs_linalg
@pytest.mark.parametrize("param", ["covariance_matrix", "scale_tril", "precision_matrix"])
def test_multivariate_normal_matches_torch(param):
    mats = {"covariance_matrix": COV, "scale_tril": np.linalg.cholesky(COV), "precision_matrix": np.linalg.inv(COV)}
    ours = D.MultivariateNormal(_t(tp, MVN_LOC), **{param: _t(tp, mats[param])})
    theirs = td.MultivariateNormal(_t(torch, MVN_LOC), **{param: _t(torch, mats[param])})
    assert ours.batch_shape == (2,) and ours.event_shape == (3,)
    value = RNG.normal(size=(4, 2, 3))
    _close(ours.log_prob(_t(tp, value)), theirs.log_prob(_t(torch, value)), 1e-10)
    _close(ours.entropy(), theirs.entropy(), 1e-10)
    for attr in ("mean", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        _close(getattr(ours, attr), getattr(theirs, attr), 1e-10)
    p2 = D.MultivariateNormal(_t(tp, MVN_LOC), covariance_matrix=_t(tp, COV))
    assert ours.rsample((5,)).shape == (5, 2, 3) and p2.sample().shape == (2, 3)


@needs_linalg
def test_multivariate_normal_rsample_gradients_and_validation():
    loc = tp.tensor([1.0, -1.0], dtype=tp.float64, requires_grad=True)
    L = tp.tensor([[1.0, 0.0], [0.5, 2.0]], dtype=tp.float64, requires_grad=True)
    x = D.MultivariateNormal(loc, scale_tril=L).rsample((7,))
    x.sum().backward()
    assert loc.grad.tolist() == [7.0, 7.0] and L.grad is not None
    for bad in (lambda m, d: d.MultivariateNormal(m.zeros(2), -m.eye(2)),
                lambda m, d: d.MultivariateNormal(m.zeros(2), scale_tril=m.tensor([[1.0, 1.0], [0.0, 1.0]]))):
        with pytest.raises(ValueError) as theirs:
            bad(torch, td)
        with pytest.raises(ValueError) as ours:
            bad(tp, D)
        assert str(ours.value) == _fix(str(theirs.value))
