"""Training on cuda: the same program, moved with ``.to("cuda")``, gives the CPU's numbers."""

from __future__ import annotations

import tensorplug as tp
import tensorplug.nn.functional as F

from tensorplug_cuda.testing import needs_cuda

pytestmark = needs_cuda


def _run(device, opt_name, steps=30):
    tp.manual_seed(0)
    x = tp.randn(64, 20)
    y = (x[:, :3].sum(1) > 0).long()
    model = tp.nn.Sequential(tp.nn.Linear(20, 32), tp.nn.ReLU(), tp.nn.Dropout(0.1), tp.nn.Linear(32, 2))
    model.to(device)
    x, y = x.to(device), y.to(device)
    opt = (tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if opt_name == "sgd"
           else tp.optim.Adam(model.parameters(), lr=0.01))
    tp.manual_seed(1)  # dropout draws from the device's generator: seed it the same on both
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu() for p in model.parameters()]


def test_an_mlp_trains_on_cuda_and_matches_the_cpu_run():
    for opt in ("sgd", "adam"):
        dev_losses, dev_params = _run("cuda", opt)
        cpu_losses, cpu_params = _run("cpu", opt)
        assert dev_losses[-1] < 0.5 * dev_losses[0]
        tp.testing.assert_close(tp.tensor(dev_losses), tp.tensor(cpu_losses), atol=1e-4, rtol=1e-4)
        for a, b in zip(dev_params, cpu_params):
            tp.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_a_conv_net_with_layer_norm_and_attention_runs_forward_and_backward():
    tp.manual_seed(0)
    conv = tp.nn.Conv2d(3, 4, 3, padding=1)
    attn = tp.nn.MultiheadAttention(8, 2, batch_first=True)
    norm = tp.nn.LayerNorm(8)
    emb = tp.nn.Embedding(10, 8)
    x = tp.randn(2, 3, 6, 6)
    tokens = tp.tensor([[1, 2, 3], [4, 5, 1]])

    def run(device):
        for m in (conv, attn, norm, emb):
            m.to(device)
            m.zero_grad()
        h = emb(tokens.to(device))
        a, _ = attn(h, h, h)
        loss = norm(a).pow(2).mean() + conv(x.to(device)).relu().mean()
        loss.backward()
        return [loss.detach().cpu()] + [p.grad.cpu() for m in (conv, attn, norm, emb) for p in m.parameters()]

    on_device, on_cpu = run("cuda"), run("cpu")
    for a, b in zip(on_device, on_cpu):
        tp.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
