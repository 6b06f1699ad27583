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
