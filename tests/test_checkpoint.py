"""tensorplug.utils.checkpoint: the forward runs without a graph, backward recomputes it, gradients match."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.utils.checkpoint import checkpoint, checkpoint_sequential


def _block():
    tp.manual_seed(0)
    return tp.nn.Sequential(tp.nn.Linear(4, 8), tp.nn.Tanh(), tp.nn.Dropout(0.3), tp.nn.Linear(8, 4))


def test_gradients_match_and_forward_recomputes():
    block = _block()
    calls = []

    def fn(x, scale):
        calls.append(1)
        return block(x) * scale

    x = tp.randn(5, 4, requires_grad=True)
    tp.manual_seed(3)
    out = checkpoint(fn, x, 2.0, use_reentrant=False)
    assert len(calls) == 1
    out.pow(2).sum().backward()
    assert len(calls) == 2                                # recomputed once in backward
    got = [x.grad.clone()] + [p.grad.clone() for p in block.parameters()]
    x.grad = None
    block.zero_grad()
    tp.manual_seed(3)                                      # same dropout mask as the checkpointed forward
    fn(x, 2.0).pow(2).sum().backward()
    want = [x.grad] + [p.grad for p in block.parameters()]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-7)


def test_activations_are_not_kept():
    kept = []

    def fn(x):
        h = (x * 3).exp()
        kept.append(weakref.ref(h._data))  # the memory (a numpy array on the CPU), which a graph would keep
        return h.sum(-1)

    x = tp.randn(3, 4, requires_grad=True)
    out = checkpoint(fn, x, use_reentrant=False)
    gc.collect()
    assert kept[0]() is None                  # the intermediate is freed after the forward
    plain = fn(x)
    gc.collect()
    assert kept[1]() is not None              # without checkpointing the graph holds it
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (3 * (x.detach() * 3).exp()).numpy(), rtol=1e-6)
    del plain


def test_multiple_outputs_and_non_tensor_args():
    a = tp.randn(3, requires_grad=True)
    b = tp.randn(3, requires_grad=True)

    def fn(x, y, k):
        return x * y * k, (x + y).sin()

    p, q = checkpoint(fn, a, b, 3, use_reentrant=False)
    (p.sum() + q.sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), (3 * b.detach() + (a.detach() + b.detach()).cos()).numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), (3 * a.detach() + (a.detach() + b.detach()).cos()).numpy(), rtol=1e-6)


def test_use_reentrant_warning_kwargs_and_no_grad():
    x = tp.randn(2, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda t: t * 2, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: k"):
        checkpoint(lambda t, k=1: t * k, x, use_reentrant=True, k=2)
    assert checkpoint(lambda t, k=1: t * k, x, use_reentrant=False, k=2).tolist() == (x * 2).tolist()
    with tp.no_grad():
        assert not checkpoint(lambda t: t * 2, x, use_reentrant=False).requires_grad


def test_checkpoint_sequential_matches():
    block = _block().eval()
    x = tp.randn(6, 4, requires_grad=True)
    out = checkpoint_sequential(block, 2, x, use_reentrant=False)
    out.sum().backward()
    g = x.grad.clone()
    x.grad = None
    block(x).sum().backward()
    np.testing.assert_allclose(g.numpy(), x.grad.numpy(), rtol=1e-6)
