"""The CPU's fused attention, layer norm and GELU against PyTorch: values and gradients in float32,
and second derivatives in float64 (create_graph through the decompositions)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def pair(shape, seed, dtype=np.float32, scale=1.0):
    a = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)
    return tp.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()


def check(a, t, rtol=1.3e-6, atol=1e-5):
    torch.testing.assert_close(torch.from_numpy(a.detach().numpy().copy()), t.detach(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_float32_values_and_gradients(approximate):
    x, tx = pair((4096,), 0, scale=4.0)
    y, ty = F.gelu(x, approximate=approximate), TF.gelu(tx, approximate=approximate)
    check(y, ty)
    # and to a few float32 ulps of PyTorch's float64 result (PyTorch's own float32 is less precise
    # in the negative tail)
    t64 = TF.gelu(tx.detach().double(), approximate=approximate)
    check(y.double(), t64, rtol=4e-6, atol=1e-7)
    g, tg = pair((4096,), 1)
    y.backward(g.detach())
    ty.backward(tg.detach())
    check(x.grad, tx.grad)
    x64 = tx.detach().double().requires_grad_()
    TF.gelu(x64, approximate=approximate).backward(tg.detach().double())
    check(x.grad.double(), x64.grad, rtol=4e-6, atol=1e-7)


@pytest.mark.parametrize("shape,normalized,affine", [((8, 16), (16,), True), ((2, 3, 4, 5), (4, 5), True),
                                                     ((3, 7), (7,), False), ((2, 5, 6), (2, 5, 6), True)])
def test_layer_norm_float32(shape, normalized, affine):
    x, tx = pair(shape, 0, scale=3.0)
    w, tw = pair(normalized, 1) if affine else (None, None)
    b, tb = pair(normalized, 2) if affine else (None, None)
    y, ty = F.layer_norm(x, normalized, w, b, eps=1e-5), TF.layer_norm(tx, normalized, tw, tb, eps=1e-5)
    check(y, ty)
    g, tg = pair(shape, 3)
    y.backward(g.detach())
    ty.backward(tg.detach())
    for a, t in ((x, tx), (w, tw), (b, tb)):
        if a is not None:
            check(a.grad, t.grad, rtol=1e-4, atol=1e-4)


def _second(f_tp, f_torch, shapes):
    """d/d inputs of <grad f(inputs), v> under create_graph, in float64, against PyTorch."""
    ins = [pair(s, i, np.float64) for i, s in enumerate(shapes)]
    a, t = [p[0] for p in ins], [p[1] for p in ins]
    out, tout = f_tp(*a), f_torch(*t)
    v, tv = pair(tuple(out.shape), 99, np.float64)
    gs = tp.autograd.grad(out, a, v.detach(), create_graph=True)
    tgs = torch.autograd.grad(tout, t, tv.detach(), create_graph=True)
    s = sum((g * g).sum() for g in gs)
    ts = sum((g * g).sum() for g in tgs)
    gg, tgg = tp.autograd.grad(s, a, allow_unused=True), torch.autograd.grad(ts, t, allow_unused=True)
    for x, y, inp in zip(gg, tgg, a):
        assert (x is None) == (y is None)
        if x is not None:
            check(x, y, rtol=1e-7, atol=1e-9)


def test_sdpa_double_backward():
    _second(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
            lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, is_causal=True),
            [(2, 2, 4, 3), (2, 2, 4, 3), (2, 2, 4, 2)])


def test_layer_norm_double_backward():
    _second(lambda x, w, b: F.layer_norm(x, (5,), w, b), lambda x, w, b: TF.layer_norm(x, (5,), w, b),
            [(3, 5), (5,), (5,)])


def test_gelu_double_backward():
    _second(F.gelu, TF.gelu, [(6,)])
