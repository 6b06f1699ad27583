"""The transform plugins on cuda with no cuda-specific code in them: vmap and func, autocast with a
GradScaler, the profiler, quantize."""

from __future__ import annotations

import pytest

import tensorplug as tp
import tensorplug.nn.functional as F

from tensorplug_cuda.testing import needs_cuda

pytestmark = needs_cuda


def test_vmap_and_per_sample_gradients_on_the_device():
    pytest.importorskip("tensorplug_vmap", reason="tensorplug-vmap is not installed")
    tp.manual_seed(0)
    x, w = tp.randn(4, 3), tp.randn(3)
    xd, wd = x.cuda(), w.cuda()
    out = tp.vmap(lambda r: (r * wd).sum())(xd)
    assert out.device.type == "cuda"
    tp.testing.assert_close(out.cpu(), x @ w)
    per = tp.vmap(tp.func.grad(lambda w, xi: (xi @ w) ** 2), in_dims=(None, 0))(wd, xd)
    assert per.device.type == "cuda" and per.shape == (4, 3)
    tp.testing.assert_close(per.cpu(), 2 * (x @ w)[:, None] * x)


def test_autocast_on_cuda_computes_matmul_in_float16_and_a_grad_scaler_trains():
    pytest.importorskip("tensorplug_autocast", reason="tensorplug-autocast is not installed")
    tp.manual_seed(0)
    model = tp.nn.Sequential(tp.nn.Linear(8, 16), tp.nn.ReLU(), tp.nn.Linear(16, 3)).to("cuda")
    opt = tp.optim.SGD(model.parameters(), lr=0.1)
    scaler = tp.amp.GradScaler("cuda")
    x, y = tp.randn(32, 8, device="cuda"), tp.randint(0, 3, (32,), device="cuda")
    losses = []
    for _ in range(15):
        opt.zero_grad()
        with tp.autocast(device_type="cuda"):
            out = model(x)
            assert out.dtype is tp.float16 and out.device.type == "cuda"
            loss = F.cross_entropy(out, y)
        assert loss.dtype is tp.float32  # cross-entropy runs in float32 under autocast
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert all(p.grad.dtype is tp.float32 and p.device.type == "cuda" for p in model.parameters())
    assert losses[-1] < losses[0]


def test_the_profiler_records_ops_on_cuda_tensors():
    profiler = pytest.importorskip("tensorplug_profiler", reason="tensorplug-profiler is not installed")
    del profiler
    x = tp.ones(5, device="cuda")
    with tp.profiler.profile() as prof:
        (x * 2).sum()
    names = [e.name for e in prof.events()]
    assert "tensorplug::mul.Tensor" in names and "tensorplug::sum.dim_IntList" in names


def test_quantized_tensors_and_dynamic_quantization_on_cuda():
    pytest.importorskip("tensorplug_quantize", reason="tensorplug-quantize is not installed")
    tp.manual_seed(0)
    x = tp.randn(6, 3)
    q = tp.quantize_per_tensor(x.cuda(), 0.05, 0, tp.qint8)
    assert q.device.type == "cuda" and q.is_quantized
    tp.testing.assert_close(q.dequantize().cpu(), tp.quantize_per_tensor(x, 0.05, 0, tp.qint8).dequantize())
    model = tp.nn.Sequential(tp.nn.Linear(3, 4), tp.nn.ReLU(), tp.nn.Linear(4, 2))
    qm_cpu = tp.ao.quantization.quantize_dynamic(model, {tp.nn.Linear}, dtype=tp.qint8)
    qm = tp.ao.quantization.quantize_dynamic(model.to("cuda"), {tp.nn.Linear}, dtype=tp.qint8)
    out = qm(x.cuda())
    assert out.device.type == "cuda" and out.dtype is tp.float32
    tp.testing.assert_close(out.cpu(), qm_cpu(x), atol=1e-5, rtol=1e-5)


def test_a_compiled_training_step_on_the_device_matches_eager():
    pytest.importorskip("tensorplug_compile", reason="tensorplug-compile is not installed")
    models = []
    for _ in range(2):
        tp.manual_seed(0)
        models.append(tp.nn.Sequential(tp.nn.Linear(8, 16), tp.nn.ReLU(), tp.nn.Linear(16, 3)).to("cuda"))
    opts = [tp.optim.Adam(m.parameters(), lr=0.01) for m in models]

    def make(model, opt):
        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return step
    eager, compiled = make(models[0], opts[0]), tp.compile(make(models[1], opts[1]))
    x, y = tp.randn(32, 8, device="cuda"), tp.randint(0, 3, (32,), device="cuda")
    for _ in range(6):
        a, b = eager(x, y), compiled(x, y)
        assert b.device.type == "cuda"
        assert tp.equal(a.cpu(), b.cpu())
    assert compiled.graphs
    for p, q in zip(models[0].parameters(), models[1].parameters()):
        assert tp.equal(p.detach().cpu(), q.detach().cpu())
