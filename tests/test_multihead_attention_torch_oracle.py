"""``nn.MultiheadAttention`` against ``torch.nn.MultiheadAttention``: the same weights (through
``state_dict``) give the same outputs, attention weights and gradients, with masks, batch_first,
unbatched inputs, other key/value sizes, add_bias_kv and add_zero_attn."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn

torch = pytest.importorskip("torch")


def rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def pair(seed=0, **kw):
    tp.manual_seed(seed)
    ours = nn.MultiheadAttention(**kw)
    theirs = torch.nn.MultiheadAttention(**kw)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    with torch.no_grad():
        for name, t in theirs.state_dict().items():
            t.copy_(torch.tensor(ours.state_dict()[name].numpy()))
    return ours, theirs


CASES = [
    ("plain", {"embed_dim": 8, "num_heads": 2}, (5, 3), (6, 3), {}),
    ("batch_first", {"embed_dim": 8, "num_heads": 4, "batch_first": True}, (3, 5), (3, 6), {}),
    ("unbatched", {"embed_dim": 8, "num_heads": 2}, (5,), (6,), {}),
    ("per_head_weights", {"embed_dim": 8, "num_heads": 2}, (5, 3), (6, 3), {"average_attn_weights": False}),
    ("no_weights", {"embed_dim": 8, "num_heads": 2}, (5, 3), (6, 3), {"need_weights": False}),
    ("bool_attn_mask", {"embed_dim": 8, "num_heads": 2}, (5, 3), (6, 3), {"attn_mask": "bool"}),
    ("float_attn_mask", {"embed_dim": 8, "num_heads": 2}, (5, 3), (6, 3), {"attn_mask": "float"}),
    ("per_head_mask", {"embed_dim": 8, "num_heads": 2}, (5, 3), (6, 3), {"attn_mask": "heads"}),
    ("key_padding", {"embed_dim": 8, "num_heads": 2}, (5, 3), (6, 3), {"key_padding_mask": True}),
    ("both_masks_no_weights", {"embed_dim": 8, "num_heads": 2}, (5, 3), (6, 3),
     {"key_padding_mask": True, "attn_mask": "bool", "need_weights": False}),
    ("kdim_vdim", {"embed_dim": 8, "num_heads": 2, "kdim": 5, "vdim": 3}, (5, 3), (6, 3), {}),
    ("bias_kv_zero_attn", {"embed_dim": 8, "num_heads": 2, "add_bias_kv": True, "add_zero_attn": True},
     (5, 3), (6, 3), {"attn_mask": "bool", "key_padding_mask": True}),
    ("no_bias", {"embed_dim": 8, "num_heads": 2, "bias": False}, (5, 3), (6, 3), {}),
]


@pytest.mark.parametrize("name, kw, qs, ks, call", CASES, ids=[c[0] for c in CASES])
def test_outputs_weights_and_gradients_match_torch(name, kw, qs, ks, call):
    ours, theirs = pair(**kw)
    E, kd, vd = kw["embed_dim"], kw.get("kdim") or kw["embed_dim"], kw.get("vdim") or kw["embed_dim"]
    arrays = [rand(qs + (E,), 1), rand(ks + (kd,), 2), rand(ks + (vd,), 3)]
    L, S = (qs[1], ks[1]) if kw.get("batch_first") else (qs[0], ks[0])
    N = None if len(qs) == 1 else (qs[0] if kw.get("batch_first") else qs[1])
    call = dict(call)
    masks = {}
    rng = np.random.default_rng(4)
    if call.get("attn_mask") in ("bool", "float", "heads"):
        kind = call.pop("attn_mask")
        if kind == "bool":
            m = rng.random((L, S)) > 0.6
            m[:, 0] = False  # every query keeps one key
        elif kind == "float":
            m = rng.standard_normal((L, S)).astype(np.float32)
        else:
            m = rng.standard_normal((N * kw["num_heads"], L, S)).astype(np.float32)
        masks["attn_mask"] = m
    if call.pop("key_padding_mask", False):
        m = np.zeros((N, S), bool)
        m[0, -2:] = True
        masks["key_padding_mask"] = m
    xs = [tp.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, w = ours(*xs, **{k: tp.tensor(v) for k, v in masks.items()}, **call)
    ref, rw = theirs(*ts, **{k: torch.tensor(v) for k, v in masks.items()}, **call)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5)
    if rw is None:
        assert w is None
    else:
        np.testing.assert_allclose(w.detach().numpy(), rw.detach().numpy(), rtol=1e-4, atol=1e-5)
    g = rand(tuple(ref.shape), 5)
    out.backward(tp.tensor(g))
    ref.backward(torch.tensor(g))
    for a, b in zip(xs, ts):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    grads = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[pname].grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=pname)


def test_repr_init_and_errors_match_torch():
    ours, theirs = pair(embed_dim=8, num_heads=2)
    assert repr(ours) == repr(theirs)
    assert np.all(ours.in_proj_bias.detach().numpy() == 0) and np.all(ours.out_proj.bias.detach().numpy() == 0)
    bound = np.sqrt(6 / (8 + 24))  # xavier_uniform_ of the (24, 8) in_proj_weight
    w = ours.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 2)
    x = tp.randn(4, 2, 8)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        ours(x, x, x, is_causal=True)


def test_dropout_applies_in_training_only():
    m = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = tp.randn(6, 2, 8)
    m.eval()
    a, wa = m(x, x, x)
    b, wb = m(x, x, x)
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    tp.manual_seed(0)
    c, _ = m(x, x, x)
    assert not np.allclose(c.detach().numpy(), a.detach().numpy())
    # the returned weights are the dropped ones, as in PyTorch: zeros, and the rest scaled by 1 / (1 - p)
    _, w_eval = m.eval()(x, x, x, average_attn_weights=False)
    tp.manual_seed(0)
    _, w_train = m.train()(x, x, x, average_attn_weights=False)
    w_eval, w_train = w_eval.detach().numpy(), w_train.detach().numpy()
    kept = w_train != 0
    assert 0.3 < kept.mean() < 0.7
    np.testing.assert_allclose(w_train[kept], w_eval[kept] * 2, rtol=1e-5)
