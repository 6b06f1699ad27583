"""Calls that used to compute a wrong result, or fail, where PyTorch raises or computes (the values and
messages written out; the torch-oracle twin is test_no_silent_wrong_results_torch_oracle.py)."""

from __future__ import annotations

import math

import pytest

import tensorplug as tp
import tensorplug.nn.functional as F

INF, NAN = math.inf, math.nan


def _grad(fn, values):
    x = tp.tensor(values, dtype=tp.float64, requires_grad=True)
    (g,) = tp.autograd.grad(fn(x).sum(), x)
    return g.tolist()


def _same(a, b):
    return all((math.isnan(p) and math.isnan(q)) or p == q for p, q in zip(a, b)) and len(a) == len(b)


# -- activations -------------------------------------------------------------------------------------------
def test_logsigmoid_of_infinities():
    assert F.logsigmoid(tp.tensor([INF, -INF, 0.0])).tolist() == [0.0, -INF, pytest.approx(-math.log(2))]
    assert _grad(F.logsigmoid, [INF, -INF, 0.0]) == [0.0, 1.0, 0.5]


def test_softplus_backward_propagates_nan():
    assert _same(_grad(F.softplus, [NAN, 0.0, 30.0]), [NAN, 0.5, 1.0])
    assert _same(_grad(lambda x: F.softplus(x, beta=2.0, threshold=5.0), [NAN, 3.0]), [NAN, 1.0])


def test_elu_backward_at_nan_is_the_linear_slope():
    assert _same(_grad(F.elu, [NAN, -INF, 1.0]), [1.0, 0.0, 1.0])


# -- losses --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x,t,name", [([0.5], [2.0], "target"), ([0.5], [-0.5], "target"), ([0.5], [NAN], "target"),
                                      ([NAN], [0.5], "input"), ([0.5, 1.5], [2.0, 0.5], "target")])
def test_binary_cross_entropy_needs_values_in_0_1(x, t, name):
    with pytest.raises(RuntimeError, match=f"^all elements of {name} should be between 0 and 1$"):
        F.binary_cross_entropy(tp.tensor(x), tp.tensor(t))


def test_binary_cross_entropy_dtypes():
    with pytest.raises(RuntimeError, match="^Found dtype Double but expected Float$"):
        F.binary_cross_entropy(tp.tensor([0.5]), tp.tensor([1.0], dtype=tp.float64))
    with pytest.raises(NotImplementedError, match="\"binary_cross_entropy\" not implemented for 'Long'"):
        F.binary_cross_entropy(tp.tensor([1]), tp.tensor([1]))
    out = F.binary_cross_entropy(tp.tensor([0.25]), tp.tensor([1.0]), weight=tp.tensor([2.0], dtype=tp.float64))
    assert out.dtype is tp.float32


@pytest.mark.parametrize("delta", [0.0, -1.0, NAN])
def test_huber_loss_needs_a_positive_delta(delta):
    with pytest.raises(RuntimeError, match=r"^huber_loss does not support non-positive values for delta\.$"):
        F.huber_loss(tp.tensor([0.5]), tp.tensor([2.0]), delta=delta)


def test_kl_div_of_a_negative_target_is_nan_and_integers_are_refused():
    out = F.kl_div(tp.tensor([-1.0, -1.0, -1.0]), tp.tensor([-2.0, 0.0, 0.5]), reduction="none").tolist()
    assert math.isnan(out[0]) and out[1] == 0.0 and out[2] == pytest.approx(0.5 * math.log(0.5) + 0.5)
    with pytest.raises(RuntimeError, match=r"^kl_div: Integral inputs not supported\.$"):
        F.kl_div(tp.tensor([-1.0]), tp.tensor([1]), reduction="sum")


def test_cross_entropy_negative_label_smoothing_means_none():
    x, t = tp.tensor([[1.0, 2.0, 3.0]]), tp.tensor([0])
    assert F.cross_entropy(x, t, label_smoothing=-0.1).item() == F.cross_entropy(x, t).item()


@pytest.mark.parametrize("name,kernel", [("mse_loss", "mse"), ("huber_loss", "huber"), ("smooth_l1_loss", "smooth_l1")])
def test_pointwise_losses_of_integers_are_not_implemented(name, kernel):
    with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Long'"):
        getattr(F, name)(tp.tensor([1]), tp.tensor([2]))
