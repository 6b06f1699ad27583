"""Fused elementwise loops (numba, optional): one pass computing a chain of lowered ops, within float
tolerance of the kernels (the arithmetic bit for bit), and off without numba or with
TENSORPLUG_COMPILE_NUMBA=0."""

import numpy as np
import pytest

import tensorplug as tp
from tensorplug_cpu import fusion

numba = pytest.importorskip("numba", reason="fusion needs numba (pip install 'tensorplug-cpu[numba]')")

N = fusion.MIN_ELEMENTS


def arrays(k, n=N, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(n) * 2).astype(dtype) for _ in range(k)]


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64], ids=["f32", "f64"])
def test_arithmetic_chains_give_numpys_bits(dtype):
    a, b, c, d = arrays(4, dtype=dtype.np)
    steps = [("tensorplug::mul.Tensor", (("input", 0), ("input", 1))),
             ("tensorplug::add.Tensor", (("step", 0), ("input", 2), 1)),
             ("tensorplug::maximum", (("scalar", 3), ("step", 1))),
             ("tensorplug::threshold_backward", (("input", 2), ("step", 2), 0.5)),
             ("tensorplug::tanh_backward", (("step", 3), ("input", 1)))]
    fn = fusion.fuse(steps, (N,), dtype, [2, 4])
    zero = np.zeros(1, dtype.np)
    y2, y4 = np.empty(N, dtype.np), np.empty(N, dtype.np)
    fn(a, b, c, zero, outs=(y2, y4))
    r = np.maximum(zero[0], a * b + c)
    assert y2.tobytes() == r.tobytes()
    t = np.where(r <= dtype.np.type(0.5), dtype.np.type(0), c)
    assert y4.tobytes() == (t * (1 - b * b)).tobytes()


def test_transcendental_functions_are_close():
    (a,) = arrays(1)
    fn = fusion.fuse([("tensorplug::tanh", (("input", 0),)), ("tensorplug::exp", (("step", 0),))], (N,),
                     tp.float32, [1])
    y = np.empty(N, np.float32)
    fn(a, outs=(y,))
    np.testing.assert_allclose(y, np.exp(np.tanh(a)), rtol=1.3e-6)  # a few ulps: another math library


def test_an_output_that_is_not_contiguous_is_written_through():
    a, b = arrays(2, n=N)
    out = np.zeros((256, N // 256), np.float32).T  # a transposed view
    fn = fusion.fuse([("tensorplug::mul.Tensor", (("input", 0), ("input", 1)))], out.shape, tp.float32, [0])
    fn(a.reshape(out.shape), b.reshape(out.shape), outs=(out,))
    assert np.array_equal(out, a.reshape(out.shape) * b.reshape(out.shape))


def test_small_results_and_the_switch_turn_it_off(monkeypatch):
    steps = [("tensorplug::neg", (("input", 0),))]
    assert fusion.fuse(steps, (N - 1,), tp.float32, [0]) is None
    monkeypatch.setenv("TENSORPLUG_COMPILE_NUMBA", "0")
    assert fusion.fuse(steps, (N,), tp.float32, [0]) is None and not fusion.available()


def test_a_compiled_training_chain_fuses_and_matches_eager():
    rng = np.random.default_rng(1)
    a, b, c, d = (tp.from_numpy(rng.standard_normal(N).astype(np.float32)) for _ in range(4))
    a.requires_grad_()
    b.requires_grad_()
    w = tp.from_numpy(rng.standard_normal((256, N // 256)).astype(np.float32)).t().requires_grad_()

    def step():
        y = ((a * b + c).relu() * d).tanh()
        (y.sum() + (w * w).sum()).backward()
    cf = tp.compile(step)
    for _ in range(4):
        cf()
    assert cf.graphs and "outs=" in cf.code
    got = [t.grad.clone() for t in (a, b, w)]
    for t in (a, b, w):
        t.grad = None
    for _ in range(4):
        step()
    for g, t in zip(got, (a, b, w)):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
