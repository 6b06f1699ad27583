"""The fused kernels against the unfused library kernels on the CPU.

On a GPU this checks the CUDA sources; in the simulated mode the numpy twins of the same formulas
(the Python path to them, the argument handling and the dtype rules), never the CUDA sources.
"""

from __future__ import annotations

import pytest

import tensorplug as tp
import tensorplug.nn.functional as F

from tensorplug_cuda import fused
from tensorplug_cuda.testing import needs_cuda

pytestmark = needs_cuda

FLOATS = (tp.float16, tp.float32, tp.float64)
TOL = {tp.float16: 2e-3, tp.float32: 1e-5, tp.float64: 1e-10}


def _close(dev, host, dtype):
    assert dev.device.type == "cuda" and dev.dtype is dtype
    tp.testing.assert_close(dev.cpu(), host, atol=TOL[dtype], rtol=TOL[dtype])


def _grad(fn, x, device):
    x = x.detach().to(device).requires_grad_(True)
    g = tp.linspace(-1.0, 1.0, x.numel()).reshape(x.shape).to(device, x.dtype)
    (fn(x) * g).sum().backward()
    return x.grad


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name, fn, kernel", [
    ("tanh", tp.tanh, [fused.TANH_BACKWARD]), ("sigmoid", tp.sigmoid, [fused.SIGMOID_BACKWARD]),
    ("relu", F.relu, [fused.THRESHOLD_BACKWARD]), ("gelu", F.gelu, [fused.GELU_BACKWARD, fused.GELU_BACKWARD_CDF]),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), [fused.GELU_BACKWARD])])
def test_elementwise_backward_is_fused_and_matches_the_cpu(name, fn, kernel, dtype):
    tp.manual_seed(0)
    x = tp.randn(7, 33).to(dtype)
    before = sum(k.launches for k in kernel)
    dev = _grad(fn, x, "cuda")
    assert sum(k.launches for k in kernel) > before, "the fused kernel was not used"
    _close(dev, _grad(fn, x, "cpu"), dtype)


def test_integer_and_mixed_inputs_take_the_library_path():
    g = tp.ones(4, dtype=tp.int64, device="cuda")
    before = fused.THRESHOLD_BACKWARD.launches
    out = tp.ops.tensorplug.threshold_backward(g, tp.tensor([-1, 0, 1, 2], device="cuda"), 0)
    assert fused.THRESHOLD_BACKWARD.launches == before
    assert out.cpu().tolist() == [0, 0, 1, 1]


def _train(opt_cls, device, steps=4, **kw):
    tp.manual_seed(1)
    model = tp.nn.Sequential(tp.nn.Linear(6, 5), tp.nn.Tanh(), tp.nn.Linear(5, 2)).to(device)
    opt = opt_cls(model.parameters(), **kw)
    x = tp.randn(8, 6).to(device)
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    return [p.detach().cpu() for p in model.parameters()]


@pytest.mark.parametrize("opt_cls, kw", [
    (tp.optim.Adam, {"lr": 0.01}), (tp.optim.Adam, {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    (tp.optim.AdamW, {"lr": 0.01, "weight_decay": 0.1}), (tp.optim.Adam, {"lr": 0.01, "maximize": True})],
    ids=["adam", "adam_wd_amsgrad", "adamw", "adam_maximize"])
def test_fused_adam_updates_match_the_cpu(opt_cls, kw):
    kw = dict(kw, fused=True)
    before = fused.ADAM.launches
    dev = _train(opt_cls, "cuda", **kw)
    assert fused.ADAM.launches > before, "the fused update was not used"
    for a, b in zip(dev, _train(opt_cls, "cpu", **kw)):
        tp.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
