"""ops/special_more.py and tensorplug.signal.windows against PyTorch: every one of PyTorch's OpInfo
samples of these ops (not only the first few the whole-database run takes), and random inputs for the
polynomials, whose float32 values follow PyTorch's kernels step by step."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import tensorplug as tp  # noqa: E402
from tensorplug.testing import torch_opinfo as T  # noqa: E402
from tensorplug.ops.special_more import POLYNOMIALS  # noqa: E402

KEYS = (["special." + n for n in POLYNOMIALS]
        + ["signal.windows." + n for n in tp.signal.windows.__all__]
        + "isneginf isposinf isreal heaviside frexp ldexp nextafter bitwise_left_shift bitwise_right_shift trapezoid "
          "trapz cumulative_trapezoid gradient histogram histogramdd mvlgamma.mvlgamma_p_1 mvlgamma.mvlgamma_p_3 "
          "mvlgamma.mvlgamma_p_5".split())
OPS = {T.key(op): op for op in T.user_facing_ops() if T.key(op) in KEYS}


@pytest.mark.parametrize("key", KEYS)
def test_every_opinfo_sample(key, monkeypatch):
    monkeypatch.setattr(T, "MAX_SAMPLES", 10_000)
    monkeypatch.setattr(T, "MAX_GRAD_SAMPLES", 50)
    monkeypatch.setattr(T, "MAX_ERROR_INPUTS", 100)
    res = T.run_op(OPS[key])
    assert res.samples > 0
    assert not res.failures, res.failures


@pytest.mark.parametrize("name", POLYNOMIALS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polynomials_on_random_inputs(name, dtype):
    rng = np.random.default_rng(len(name))
    lo = -0.2 if name.startswith("shifted") else -1.6
    x = rng.uniform(lo, 1.6, 4000).astype(dtype)
    x[:20] = [1, -1, 0, 0.5, 1, -1, 0, 1, 1, -1] * 2
    n = rng.integers(-2, 16, 4000).astype(dtype)
    want = getattr(torch.special, name)(torch.from_numpy(x), torch.from_numpy(n)).numpy()
    got = getattr(tp.special, name)(tp.tensor(x), tp.tensor(n)).numpy()
    # near a root the float32 closed forms differ in the last bits of sin/cos: compare with the scale of the values
    scale = np.maximum(np.abs(want), 1.0)
    tol = 2e-5 if dtype == "float32" else 1e-12
    assert np.all((np.abs(got - want) <= tol * scale) | (np.isnan(got) & np.isnan(want)))
    if dtype == "float32" and "chebyshev" not in name:
        # the recurrences round as PyTorch's do (one fused multiply-add a step): the same bits
        np.testing.assert_array_equal(got, want)
