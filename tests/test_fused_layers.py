"""The CPU's fused primitives of the transformer layers (``_fused_sdpa``, ``native_layer_norm``,
``gelu`` and their backward ops) against the decompositions other backends run: the same values,
gradients that pass float64 gradcheck, second derivatives through the decomposition, and the
dispatch that picks them (the fused kernel on CPU, the decomposition for a transform's tensors)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F
from tensorplug.autograd import gradcheck, gradgradcheck
from tensorplug.ops import activations as A
from tensorplug.ops import nn_ops as N

OPS = tp.ops.tensorplug


def rand(shape, seed, dtype=np.float64):
    return tp.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def close(a, b, tol):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


MASKS = ["none", "causal", "bool", "bool_empty_row", "float", "float_neg_inf_row"]


def _mask(kind, L, S, seed):
    rng = np.random.default_rng(seed)
    if kind in ("none", "causal"):
        return None
    if kind.startswith("bool"):
        m = rng.random((L, S)) > 0.4
        m[:, 0] = True
        if kind == "bool_empty_row":
            m[1] = False
        return tp.from_numpy(m)
    m = rng.standard_normal((L, S))
    if kind == "float_neg_inf_row":
        m[2] = -math.inf
    return tp.from_numpy(m)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", MASKS)
def test_fused_sdpa_matches_its_decomposition(kind, dtype):
    q, k, v = rand((2, 3, 5, 4), 0, dtype), rand((2, 3, 6, 4), 1, dtype), rand((2, 3, 6, 3), 2, dtype)
    mask = _mask(kind, 5, 6, 3)
    if mask is not None and mask.dtype is not tp.bool:
        mask = mask.to(q.dtype)
    causal = kind == "causal"
    out, w = OPS._fused_sdpa(q, k, v, mask, causal, 0.7)
    ref_out, ref_w = N._fused_sdpa_composite(q, k, v, mask, causal, 0.7)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    close(out, ref_out, tol)
    close(w, ref_w, tol)
    g = rand(out.shape, 4, dtype)
    for got, want in zip(OPS._fused_sdpa_backward(g, q, k, v, w, 0.7),
                         N._fused_sdpa_backward_composite(g, q, k, v, ref_w, 0.7)):
        close(got, want, tol)
    if kind.endswith("row"):
        assert not w[..., 1 if kind.startswith("bool") else 2, :].numpy().any()  # a row with nothing: zeros


@pytest.mark.parametrize("kind", MASKS)
def test_sdpa_gradients_pass_gradcheck(kind):
    q, k, v = (rand(s, i).requires_grad_() for i, s in enumerate([(2, 4, 3), (2, 5, 3), (2, 5, 2)]))
    mask = _mask(kind, 4, 5, 7)
    inputs = [q, k, v]
    if mask is not None and mask.dtype is not tp.bool and kind == "float":
        mask.requires_grad_()
        inputs.append(mask)

    def f(q, k, v, *m):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m[0] if m else mask, is_causal=kind == "causal")
    assert gradcheck(f, tuple(inputs))
    assert gradgradcheck(f, tuple(inputs))


def test_sdpa_broadcast_batch_gradients():
    # a key and value shared by every head: their gradients sum over the broadcast dim
    q = rand((2, 3, 4, 5), 0).requires_grad_()
    k, v = rand((2, 1, 6, 5), 1).requires_grad_(), rand((2, 1, 6, 2), 2).requires_grad_()
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), (q, k, v))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [True, False])
def test_native_layer_norm_matches_its_decomposition(affine, dtype):
    x = rand((3, 4, 5, 6), 0, dtype)
    w, b = (rand((5, 6), 1, dtype), rand((5, 6), 2, dtype)) if affine else (None, None)
    got = OPS.native_layer_norm(x, [5, 6], w, b, 1e-5)
    want = N._native_layer_norm(x, [5, 6], w, b, 1e-5)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, e in zip(got, want):
        close(a, e, tol)
    g = rand(x.shape, 3, dtype)
    mask = [True, affine, affine]
    for a, e in zip(OPS.native_layer_norm_backward(g, x, [5, 6], got[1], got[2], w, b, mask),
                    N._native_layer_norm_backward(g, x, [5, 6], want[1], want[2], w, b, mask)):
        assert (a is None) == (e is None)
        if a is not None:
            close(a, e, tol)


def test_layer_norm_gradients_pass_gradcheck():
    x, w, b = rand((3, 4), 0).requires_grad_(), rand(4, 1).requires_grad_(), rand(4, 2).requires_grad_()

    def f(x, w, b):
        return F.layer_norm(x, (4,), w, b)
    assert gradcheck(f, (x, w, b))
    assert gradgradcheck(f, (x, w, b))
    assert gradcheck(lambda x: F.layer_norm(x, (3, 4)), (x,))


def test_layer_norm_of_empty_rows():
    x = tp.zeros((0, 4), requires_grad=True)
    y = F.layer_norm(x, (4,))
    y.sum().backward()
    assert y.shape == (0, 4) and x.grad.shape == (0, 4)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_kernel_matches_its_decomposition(approximate, dtype):
    x = tp.from_numpy(np.concatenate([np.linspace(-10, 10, 2001), [0.0, -0.0, 1e-30, -1e-30]]).astype(dtype))
    # against the float64 decomposition (math.erf): float32 is within a few float32 ulps, relative where
    # the value is not in the deep negative tail, where it underflows
    x64 = x.double()
    rtol, atol = (4e-6, 1e-7) if dtype == np.float32 else (1e-12, 1e-300)
    np.testing.assert_allclose(F.gelu(x, approximate=approximate).double().numpy(),
                               A._gelu(x64, approximate).numpy(), rtol=rtol, atol=atol)
    g = tp.ones_like(x)
    np.testing.assert_allclose(OPS.gelu_backward(g, x, approximate=approximate).double().numpy(),
                               A._gelu_backward(g.double(), x64, approximate).numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradients_pass_gradcheck(approximate):
    x = rand((7,), 0).requires_grad_()
    assert gradcheck(lambda x: F.gelu(x, approximate=approximate), (x,))
    assert gradgradcheck(lambda x: F.gelu(x, approximate=approximate), (x,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_training_gelu_keeps_the_cdf_and_matches_its_decomposition(dtype):
    x = tp.from_numpy(np.concatenate([np.linspace(-10, 10, 2001), [0.0, -0.0, 1e-30]]).astype(dtype))
    xg = x.clone().requires_grad_()
    y = F.gelu(xg)
    assert type(y.grad_fn).__name__ == "FusedGeluBackward0"
    assert np.array_equal(y.detach().numpy(), F.gelu(x).numpy())  # the forward is gelu's kernel's, bit for bit
    out, cdf = OPS._fused_gelu(x)
    want_out, want_cdf = A._fused_gelu_composite(x.double())
    rtol, atol = (4e-6, 1e-7) if dtype == np.float32 else (1e-12, 1e-300)
    np.testing.assert_allclose(cdf.double().numpy(), want_cdf.numpy(), rtol=rtol, atol=atol)
    g = tp.from_numpy(np.linspace(-2, 3, x.numel()).astype(dtype))
    got, = tp.autograd.grad(y, xg, g)
    np.testing.assert_allclose(got.double().numpy(), A._gelu_backward(g.double(), x.double()).numpy(),
                               rtol=rtol, atol=atol)
    np.testing.assert_allclose(OPS._fused_gelu_backward(g, x, cdf).double().numpy(),
                               A._fused_gelu_backward_composite(g.double(), x.double(), want_cdf).numpy(),
                               rtol=rtol, atol=atol)


def test_gelu_takes_the_operator_where_nothing_needs_the_cdf():
    x = tp.randn(5)
    with tp.no_grad():
        assert F.gelu(x.requires_grad_()).grad_fn is None
    assert type(F.gelu(x, approximate="tanh").grad_fn).__name__ == "GeluBackward0"
    assert type(F.gelu(x.detach().bfloat16().requires_grad_()).grad_fn).__name__ == "GeluBackward0"


def test_zero_dim_gelu():
    x = tp.tensor(0.5, requires_grad=True)
    y = F.gelu(x)
    y.backward()
    assert y.shape == () and x.grad.shape == ()


@pytest.mark.parametrize("name", ["_fused_sdpa", "_fused_sdpa_backward", "native_layer_norm",
                                  "native_layer_norm_backward", "gelu", "gelu_backward", "_fused_gelu",
                                  "_fused_gelu_backward"])
def test_the_cpu_owns_the_fused_primitives(name):
    table = {key: (prov, owner) for key, prov, owner in getattr(OPS, name).default.dispatch_table()}
    assert table["CPU"] == ("kernel", "cpu")


def test_the_plain_check_sends_wrappers_to_the_decomposition():
    class Wrapper(tp.Tensor):
        pass
    x = tp.ones(2)
    assert N._plain(x, None, x)
    assert not N._plain(x, object.__new__(Wrapper))
