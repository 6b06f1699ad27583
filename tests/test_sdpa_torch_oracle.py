"""``F.scaled_dot_product_attention`` against PyTorch: values and gradients of query, key, value (and of a
float mask) with no mask, bool and float masks, causal, a custom scale and grouped-query attention; the
errors; and dropout's statistics."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


CASES = [
    # (name, q shape, k shape, v shape, kwargs); masks are built per case from ``mask``
    ("plain_4d", (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5), {}),
    ("plain_3d", (2, 4, 8), (2, 6, 8), (2, 6, 5), {}),
    ("plain_2d", (4, 8), (6, 8), (6, 5), {}),
    ("scale", (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5), {"scale": 0.25}),
    ("causal_square", (2, 3, 5, 8), (2, 3, 5, 8), (2, 3, 5, 4), {"is_causal": True}),
    ("causal_wide", (2, 2, 3, 8), (2, 2, 6, 8), (2, 2, 6, 4), {"is_causal": True}),
    ("causal_tall", (2, 2, 6, 8), (2, 2, 3, 8), (2, 2, 3, 4), {"is_causal": True, "scale": 2.0}),
    ("bool_mask", (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5), {"mask": "bool"}),
    ("bool_mask_empty_row", (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5), {"mask": "bool_empty"}),
    ("float_mask", (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5), {"mask": "float"}),
    ("float_mask_broadcast", (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5), {"mask": "float_heads"}),
    ("gqa", (2, 6, 4, 8), (2, 2, 5, 8), (2, 2, 5, 3), {"enable_gqa": True}),
    ("gqa_causal_mask", (1, 4, 4, 8), (1, 1, 4, 8), (1, 1, 4, 3), {"enable_gqa": True, "mask": "bool"}),
]


def _mask(kind, L, S, seed):
    rng = np.random.default_rng(seed)
    if kind in ("bool", "bool_empty"):
        m = rng.random((L, S)) > 0.4
        m[:, 0] = True
        if kind == "bool_empty":
            m[1] = False
        return m
    if kind == "float":
        return rng.standard_normal((L, S)).astype(np.float32)
    return rng.standard_normal((3, 1, S)).astype(np.float32)  # float_heads: per head, every query row


@pytest.mark.parametrize("name, qs, ks, vs, kwargs", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(name, qs, ks, vs, kwargs):
    kwargs = dict(kwargs)
    kind = kwargs.pop("mask", None)
    arrays = [rand(qs, 0), rand(ks, 1), rand(vs, 2)]
    mask = None if kind is None else _mask(kind, qs[-2], ks[-2], 3)
    ours = [tp.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    m_ours = m_theirs = None
    if mask is not None:
        floating = mask.dtype != np.bool_
        m_ours = tp.tensor(mask, requires_grad=floating)
        m_theirs = torch.tensor(mask, requires_grad=floating)
    out = F.scaled_dot_product_attention(*ours, attn_mask=m_ours, **kwargs)
    ref = TF.scaled_dot_product_attention(*theirs, attn_mask=m_theirs, **kwargs)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5)
    g = rand(tuple(ref.shape), 4)
    out.backward(tp.tensor(g))
    ref.backward(torch.tensor(g))
    for a, b, what in zip(ours, theirs, ("query", "key", "value")):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=what)
    if m_ours is not None and m_ours.requires_grad:
        np.testing.assert_allclose(m_ours.grad.numpy(), m_theirs.grad.numpy(), rtol=1e-4, atol=1e-5)
    if kind == "bool_empty":
        assert np.all(out.detach().numpy()[:, :, 1] == 0.0)  # a row in which nothing takes part gives zeros


def _both(fn, *shapes, **kwargs):
    """The exception (type, message) that ``fn`` raises in tensorplug and in torch."""
    got = []
    for lib, mod in ((tp, F), (torch, TF)):
        tensors = [lib.tensor(rand(s, i)) if not isinstance(s, np.ndarray) else lib.tensor(s)
                   for i, s in enumerate(shapes)]
        with pytest.raises(Exception) as e:
            fn(mod)(*tensors, **kwargs)
        got.append((type(e.value), str(e.value).splitlines()[0]))
    return got


@pytest.mark.parametrize("shapes, kwargs", [
    (((2, 3, 4), (2, 5, 4), (2, 5, 3), np.ones((3, 5), bool)), {"is_causal": True}),
    (((2, 3, 4), (2, 5, 4), (2, 5, 3), np.zeros((3, 5), np.int64)), {}),
    (((4,), (4,), (4,)), {}),
    (((2, 3, 4), (2, 5, 4), (2, 5, 3)), {"dropout_p": 1.5}),
    (((1, 4, 3, 4), (1, 3, 5, 4), (1, 3, 5, 3)), {"enable_gqa": True}),
])
def test_errors_match_torch(shapes, kwargs):
    ours, theirs = _both(lambda m: m.scaled_dot_product_attention, *shapes, **kwargs)
    assert ours[0] is theirs[0] and ours[1] == theirs[1]


def test_dtype_mismatch_message_matches_torch():
    q, k, v = rand((2, 3, 4), 0), rand((2, 5, 4), 1).astype(np.float64), rand((2, 5, 3), 2)
    with pytest.raises(RuntimeError) as ours:
        F.scaled_dot_product_attention(tp.tensor(q), tp.tensor(k), tp.tensor(v))
    with pytest.raises(RuntimeError) as theirs:
        TF.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v))
    assert str(ours.value) == str(theirs.value)


def test_scale_and_enable_gqa_are_keyword_only_as_in_torch():
    q = tp.ones(2, 3)
    with pytest.raises(TypeError):
        F.scaled_dot_product_attention(q, q, q, None, 0.0, False, 0.5)
    with pytest.raises(TypeError):
        TF.scaled_dot_product_attention(torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 3), None, 0.0, False, 0.5)


def test_dropout_zeroes_weights_with_probability_p_and_rescales_the_rest():
    # with value = identity, the output is the (dropped-out) attention weights themselves
    L = S = 64
    q, k = tp.zeros(8, L, 4), tp.zeros(8, S, 4)  # uniform weights 1 / S
    v = tp.eye(S).expand(8, S, S)
    tp.manual_seed(0)
    w = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25).numpy()
    kept = w != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(w[kept], 1 / S / 0.75, rtol=1e-5)
    tp.manual_seed(0)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25).numpy()
    assert np.array_equal(w, again)  # the mask comes from tensorplug's RNG
    assert np.all(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy() == 0.0)
    # as in PyTorch, dropout_p <= 0 drops nothing
    assert np.array_equal(F.scaled_dot_product_attention(q, k, v, dropout_p=-0.5).numpy(),
                          TF.scaled_dot_product_attention(torch.zeros(8, L, 4), torch.zeros(8, S, 4),
                                                          torch.eye(S).expand(8, S, S), dropout_p=-0.5).numpy())
    no_drop = F.scaled_dot_product_attention(q, k, v).numpy()
    np.testing.assert_allclose(no_drop, np.full((8, L, S), 1 / S), rtol=1e-6)
