"""Gradients of elementwise ops against PyTorch's, where conventions matter.

Each case runs one function in both frameworks (it receives the module, ``tp``
or ``torch``, and the leaves) at the points where the op is not differentiable
or not finite: ties of maximum and minimum, clamp bounds, abs and sign at 0,
powers of 0, roots and logarithms at 0, NaN and saturation. The gradients of
every leaf must agree, NaN and infinities included. Skipped without torch.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorplug as tp  # noqa: E402

INF, NAN = math.inf, math.nan
ZERO_BASE_EXPONENTS = [0.0, 1.0, 2.0, 0.5, -1.0, -0.5, 3.0, -2.0]

CASES = [
    # id, function of (module, *leaves), leaf values
    ("maximum_ties_and_nan", lambda m, a, b: m.maximum(a, b),
     [[1.0, 2.0, NAN, 3.0, -0.0, INF], [1.0, 3.0, 1.0, NAN, 0.0, INF]]),
    ("minimum_ties_and_nan", lambda m, a, b: m.minimum(a, b),
     [[1.0, 2.0, NAN, 3.0, -0.0, -INF], [1.0, 3.0, 1.0, NAN, 0.0, -INF]]),
    ("maximum_broadcast_ties", lambda m, a, b: m.maximum(a, b), [[[1.0], [2.0]], [[1.0, 2.0, 3.0]]]),
    ("clamp_scalar_bounds", lambda m, x: x.clamp(-1.0, 1.0), [[-2.0, -1.0, 0.0, 1.0, 2.0, NAN, INF]]),
    ("clamp_min_only", lambda m, x: x.clamp(min=0.0), [[-1.0, -0.0, 0.0, 1.0]]),
    ("clamp_max_only", lambda m, x: x.clamp(max=0.0), [[-1.0, -0.0, 0.0, 1.0]]),
    ("clamp_min_above_max", lambda m, x: x.clamp(2.0, 1.0), [[0.0, 1.0, 1.5, 2.0, 3.0]]),
    ("clamp_tensor_bounds", lambda m, x, lo, hi: m.clamp(x, lo, hi),
     [[0.0, 1.0, 1.5, 2.0, 3.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 1.0]]),
    ("clamp_tensor_min_only", lambda m, x, lo: m.clamp(x, min=lo), [[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]),
    ("clamp_tensor_max_only", lambda m, x, hi: m.clamp(x, max=hi), [[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]),
    ("clamp_tensor_bounds_broadcast", lambda m, x, lo, hi: m.clamp(x, lo, hi),
     [[[0.0], [1.5], [3.0]], [[1.0, 2.0]], [[2.0, 1.0]]]),
    ("abs_sign_at_0", lambda m, x: x.abs() + x.sign(), [[-1.0, -0.0, 0.0, 2.0]]),
    ("rounding_ops", lambda m, x: x.floor() + x.ceil() + x.round() + x.trunc() + x.round(decimals=1) + x.frac(),
     [[-1.5, -0.5, 0.0, 0.5, 1.25, 2.0]]),
    ("pow_zero_base", lambda m, b, e: b ** e, [[0.0] * len(ZERO_BASE_EXPONENTS), ZERO_BASE_EXPONENTS]),
    ("pow_negative_zero_base", lambda m, b, e: b ** e, [[-0.0] * len(ZERO_BASE_EXPONENTS), ZERO_BASE_EXPONENTS]),
    ("pow_negative_base", lambda m, b, e: b ** e, [[-2.0, -2.0, -0.5, -1.0], [2.0, 3.0, -1.0, 0.5]]),
    ("pow_scalar_exponents_at_0", lambda m, x: x ** 2 + x ** 1 + x ** 3 + x ** 0 + x ** -1, [[0.0, 1.0, -2.0]]),
    ("pow_scalar_fractional_at_0", lambda m, x: x ** 0.5 + x ** -0.5 + x ** 1.5, [[0.0, 4.0]]),
    ("pow_scalar_base", lambda m, e: 0.0 ** e + 2.0 ** e, [[0.0, 1.0, -1.0, 0.5]]),
    ("pow_inf_and_nan", lambda m, b, e: b ** e, [[INF, NAN, 2.0, 1.0], [2.0, 2.0, NAN, INF]]),
    ("roots_and_logs_at_0", lambda m, x: x.sqrt() + x.rsqrt() + x.log() + x.log2() + x.log10(),
     [[0.0, 1.0, 4.0]]),
    ("log1p_at_minus_1", lambda m, x: x.log1p(), [[-1.0, 0.0]]),
    ("reciprocal_at_0", lambda m, x: x.reciprocal(), [[0.0, -0.0, 2.0]]),
    ("asin_acos_at_1", lambda m, x: x.asin() + x.acos(), [[-1.0, 1.0, 0.0]]),
    ("saturation", lambda m, x: x.sigmoid() + x.tanh() + x.erf() + x.exp() + x.expm1() + x.exp2(),
     [[-800.0, -40.0, 40.0, 800.0]]),
    ("atan2_at_origin", lambda m, y, x: m.atan2(y, x),  # 0 where y^2 + x^2 is 0, even by underflow
     [[0.0, 0.0, 1.0, -0.0, 1e-200, 1e-160], [0.0, -1.0, 0.0, -0.0, 0.0, 0.0]]),
    ("div_by_zero", lambda m, a, b: a / b, [[1.0, 0.0, -1.0], [0.0, 0.0, -0.0]]),
    ("div_rounding_modes", lambda m, a, b: m.div(a, b, rounding_mode="floor") + m.div(a, b, rounding_mode="trunc"),
     [[1.5, -1.5, 3.0], [1.0, 1.0, 0.0]]),
    ("remainder_fmod_signs", lambda m, a, b: m.remainder(a, b) + m.fmod(a, b),
     [[5.5, -5.5, 5.5, -5.5], [2.0, 2.0, -2.0, -2.0]]),
    ("where_broadcast", lambda m, a, b: m.where(m.tensor([[True], [False]]), a, b), [[[1.0, 2.0]], [[3.0], [4.0]]]),
    ("where_python_scalar", lambda m, a: m.where(a > 0, a, 0.0) + m.where(a > 1, 2.0, a), [[-1.0, 0.5, 2.0]]),
    ("alpha", lambda m, a, b: m.add(a, b, alpha=-2) + m.sub(a, b, alpha=0.5) + m.rsub(a, b, alpha=3),
     [[1.0, 2.0], [3.0, 4.0]]),
    ("in_place_chain", lambda m, a, b: (a * 1).mul_(b).add_(a, alpha=2).clamp_(-1.0, 1.0).abs_().div_(b),
     [[0.5, -0.1, 2.0, 0.0], [1.0, 3.0, -1.0, 2.0]]),
    # ops that keep their result (exp_) come last: a later in-place op would invalidate it
    ("in_place_unary_chain", lambda m, a: (a * 1).sin_().abs_().neg_().atan_().exp_(), [[0.5, -1.0, 0.0]]),
]


def _run(module, fn, values, grad_seed=0):
    dt = tp.float64 if module is tp else torch.float64
    leaves = [module.tensor(v, dtype=dt, requires_grad=True) for v in values]
    out = fn(module, *leaves)
    g = np.random.default_rng(grad_seed).uniform(0.5, 1.5, tuple(out.shape))
    out.backward(module.tensor(g, dtype=dt))
    return [None if t.grad is None else t.grad.detach().numpy() for t in leaves]


@pytest.mark.parametrize("fn,values", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradients_match_pytorch_at_special_points(fn, values):
    with np.errstate(all="ignore"):
        expected = _run(torch, fn, values)
        got = _run(tp, fn, values)
    for i, (e, g) in enumerate(zip(expected, got)):
        assert (e is None) == (g is None), f"leaf {i}: torch {e}, tensorplug {g}"
        if e is not None:
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=0, equal_nan=True, err_msg=f"leaf {i}")


@pytest.mark.parametrize("name", ["float16", "float32", "bfloat16"])
def test_gradient_dtypes_of_mixed_precision_inputs_match_pytorch(name):
    def run(m):
        low = m.tensor([0.5, -1.25, 2.0], dtype=getattr(m, name), requires_grad=True)
        high = m.tensor([1.5, 0.25, -3.0], dtype=m.float64, requires_grad=True)
        out = (low * high + low.exp() - m.maximum(low, high)) / high
        out.backward(m.ones_like(out))
        return out.dtype, low.grad, high.grad

    (td, tl, th), (pd, pl, ph) = run(torch), run(tp)
    assert str(pd).split(".")[-1] == str(td).split(".")[-1]
    assert str(pl.dtype).split(".")[-1] == name and str(ph.dtype).split(".")[-1] == "float64"
    np.testing.assert_allclose(pl.float().numpy(), tl.float().numpy(), rtol=1e-2)
    np.testing.assert_allclose(ph.numpy(), th.numpy(), rtol=1e-6)
