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
    tp.testing.assert_close(dev.cpu(), host, atol=TOL[dtype], rtol=TOL[dtype], equal_nan=True)


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


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_log_softmax_over_the_last_dim_is_one_row_kernel_and_matches_the_cpu(dtype):
    tp.manual_seed(0)
    x = tp.randn(5, 7, 300).to(dtype)
    x[0, 0, 3] = float("inf")     # an infinite max gives NaN, as PyTorch's
    x[1, 2, 0] = float("nan")
    before = fused.SOFTMAX.launches
    dev = F.log_softmax(x.cuda(), -1)
    assert fused.SOFTMAX.launches == before + 1
    _close(dev, F.log_softmax(x, -1), dtype)
    y = tp.tensor([1, 2, 3, 0, 4])
    logits = tp.randn(5, 9).to(dtype)
    _close(F.cross_entropy(logits.cuda(), y.cuda()), F.cross_entropy(logits, y), dtype)
    assert fused.SOFTMAX.launches == before + 2


def test_log_softmax_elsewhere_takes_the_library_path():
    x = tp.randn(4, 6)
    before = fused.SOFTMAX.launches
    for dev in (F.log_softmax(x.cuda(), 0), F.log_softmax(x.cuda().t(), -1),
                F.log_softmax(x.cuda(), -1, dtype=tp.float64)):
        assert dev.device.type == "cuda"
    assert fused.SOFTMAX.launches == before
    tp.testing.assert_close(F.log_softmax(x.cuda(), 0).cpu(), F.log_softmax(x, 0))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_forward_is_one_row_kernel_and_matches_the_cpu(dtype, affine):
    tp.manual_seed(0)
    x = tp.randn(3, 4, 50).to(dtype)
    norm = tp.nn.LayerNorm(50, elementwise_affine=affine).to(dtype)
    if affine:
        with tp.no_grad():
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-1, 1)
    before = fused.LAYER_NORM.launches
    out, mean, rstd = tp.ops.tensorplug.native_layer_norm(x.cuda(), [50], *(
        (norm.weight.cuda(), norm.bias.cuda()) if affine else (None, None)), 1e-5)
    assert fused.LAYER_NORM.launches == before + 1
    ref = tp.ops.tensorplug.native_layer_norm(x, [50], *((norm.weight, norm.bias) if affine else (None, None)),
                                              1e-5)
    for a, b in zip((out, mean, rstd), ref):
        assert a.shape == b.shape
        _close(a, b, dtype)
    xd = x.cuda().requires_grad_(True)
    norm_d = norm.to("cuda")
    norm_d(xd).pow(2).sum().backward()
    xc = x.clone().requires_grad_(True)
    norm.to("cpu")(xc).pow(2).sum().backward()
    _close(xd.grad, xc.grad, dtype)


@pytest.mark.parametrize("kw", [{"momentum": 0.9}, {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1},
                                {"momentum": 0.5, "dampening": 0.3, "maximize": True}, {}], ids=str)
def test_fused_sgd_updates_match_the_cpu(kw):
    kw = dict(kw, lr=0.05)
    before = fused.SGD.launches
    dev = _train(tp.optim.SGD, "cuda", **kw)
    assert fused.SGD.launches > before, "the fused update was not used"
    for a, b in zip(dev, _train(tp.optim.SGD, "cpu", **kw)):
        tp.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax], ids=["softmax", "log_softmax"])
def test_softmax_forward_and_backward_are_row_kernels_and_match_the_cpu(fn, dtype):
    tp.manual_seed(0)
    x = tp.randn(6, 33, 70).to(dtype)
    before = fused.SOFTMAX.launches
    dev = _grad(lambda t: fn(t, -1), x, "cuda")
    assert fused.SOFTMAX.launches == before + 2  # the forward and the backward
    _close(dev, _grad(lambda t: fn(t, -1), x, "cpu"), dtype)


def test_double_backward_through_softmax_on_cuda_decomposes():
    x = tp.randn(3, 5, dtype=tp.float64, device="cuda", requires_grad=True)
    assert tp.autograd.gradgradcheck(lambda t: F.softmax(t, -1), (x,))
    assert tp.autograd.gradgradcheck(lambda t: F.log_softmax(t, -1), (x,))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_layer_norm_backward_is_a_row_kernel_and_matches_the_cpu(dtype):
    tp.manual_seed(0)
    norm = tp.nn.LayerNorm(40).to(dtype)
    with tp.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-1, 1)
    x = tp.randn(5, 3, 40).to(dtype)
    grads = {}
    for device in ("cpu", "cuda"):
        norm.to(device).zero_grad()
        before = fused.LAYER_NORM.launches
        dev_x = _grad(norm, x, device)
        if device == "cuda":
            assert fused.LAYER_NORM.launches == before + 2
        grads[device] = [dev_x] + [p.grad.clone() for p in norm.parameters()]  # (to() moves .grad too)
    for a, b in zip(grads["cuda"], grads["cpu"]):
        _close(a, b, dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_nll_loss_forward_and_backward_are_fused_and_match_the_cpu(dtype, reduction, weighted):
    tp.manual_seed(0)
    logits = tp.randn(9, 7).to(dtype)
    target = tp.tensor([0, 3, 6, -100, 2, 2, 5, -100, 1])
    weight = tp.rand(7).to(dtype) + 0.5 if weighted else None
    results = {}
    for device in ("cpu", "cuda"):
        before = (fused.NLL_PICK.launches, fused.NLL_GRAD.launches)
        x = logits.detach().to(device).requires_grad_(True)
        loss = F.cross_entropy(x, target.to(device), weight=None if weight is None else weight.to(device),
                               reduction=reduction, ignore_index=-100)
        (loss.sum() if reduction == "none" else loss).backward()
        if device == "cuda":
            assert (fused.NLL_PICK.launches, fused.NLL_GRAD.launches) == (before[0] + 1, before[1] + 1)
        results[device] = (loss.detach(), x.grad)
    for a, b in zip(results["cuda"], results["cpu"]):
        _close(a, b, dtype)


def test_an_out_of_range_target_raises_pytorchs_error_on_the_fused_path():
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.nll_loss(tp.randn(2, 7, device="cuda"), tp.tensor([1, 7], device="cuda"))
