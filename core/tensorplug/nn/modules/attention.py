"""``MultiheadAttention``: PyTorch's layer over ``F.scaled_dot_product_attention``."""

from __future__ import annotations

import math

import tensorplug as _tp

from ... import dtypes as _dt
from ...ops.factories import empty
from .. import functional as F, init
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of :class:`MultiheadAttention`: a ``Linear`` under PyTorch's name."""


def _additive(mask, dtype, name):
    """A bool mask (True: not allowed, PyTorch's convention for this layer) as a float mask of ``dtype``."""
    if mask is None:
        return None
    if mask._dtype is _dt.bool:
        return _tp.zeros(mask._shape, dtype=dtype, device=mask._device).masked_fill(mask, -math.inf)
    if not mask._dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of ``embed_dim // num_heads`` channels each, as ``torch.nn``'s.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(output, weights)``: inputs are
    (L, N, E) (``batch_first``: (N, L, E)) or unbatched (L, E); bool masks mark the positions that
    do *not* take part (True), float masks are added to the scores. ``weights`` are the attention
    weights averaged over the heads (per head with ``average_attn_weights=False``), or None unless
    ``need_weights``. ``is_causal`` is a hint: ``attn_mask`` must then hold the causal mask.
    The input projections start as xavier_uniform_, their biases and the output bias as 0.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        kw = {"dtype": dtype, "device": device}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty((3 * embed_dim,), **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """Attention of ``query`` over ``key``/``value``: ``(output, weights or None)``."""
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                               "method `generate_square_subsequent_mask` to create this mask.")
        batched = query.dim() == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(1, 0) for t in (query, key, value))
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        L, N, E = query._shape
        H, hd = self.num_heads, self.head_dim
        if E != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but got {E}")
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E:2 * E], b[2 * E:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            wq, wk, wv = w[:E], w[E:2 * E], w[2 * E:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        q, k, v = F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)
        mask = _additive(attn_mask, q._dtype, "attn_mask")  # (L, S) or (N * H, L, S)
        kpm = _additive(key_padding_mask, q._dtype, "key_padding_mask")  # (N, S)
        if self.bias_k is not None:
            k = _tp.cat([k, self.bias_k.expand(1, N, E)])
            v = _tp.cat([v, self.bias_v.expand(1, N, E)])
            mask = None if mask is None else F.pad(mask, (0, 1))
            kpm = None if kpm is None else F.pad(kpm, (0, 1))
        # (seq, N, E) -> (N, H, seq, hd)
        q, k, v = (t.reshape(t._shape[0], N, H, hd).permute(1, 2, 0, 3) for t in (q, k, v))
        if self.add_zero_attn:
            k = _tp.cat([k, _tp.zeros((N, H, 1, hd), dtype=k._dtype, device=k._device)], 2)
            v = _tp.cat([v, _tp.zeros((N, H, 1, hd), dtype=v._dtype, device=v._device)], 2)
            mask = None if mask is None else F.pad(mask, (0, 1))
            kpm = None if kpm is None else F.pad(kpm, (0, 1))
        S = k._shape[2]
        if mask is not None:
            mask = mask.view(1, 1, L, S) if mask.dim() == 2 else mask.view(N, H, L, S)
        if kpm is not None:
            kpm = kpm.view(N, 1, 1, S)
            mask = kpm if mask is None else mask + kpm
        p = self.dropout if self.training else 0.0
        if not need_weights:
            out = F.scaled_dot_product_attention(q, k, v, mask, p)
            weights = None
        else:
            scores = q.matmul(k.transpose(-2, -1)) * (1 / math.sqrt(hd))
            if mask is not None:
                scores = scores + mask
            weights = scores.softmax(-1)
            if p > 0.0:
                weights = F.dropout(weights, p)  # the weights returned are the dropped ones, as in PyTorch
            out = weights.matmul(v)
        out = self.out_proj(out.permute(2, 0, 1, 3).reshape(L, N, E))
        if weights is not None and average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out = out.squeeze(1)
            weights = None if weights is None else weights.squeeze(0)
        elif self.batch_first:
            out = out.transpose(1, 0)
        return out, weights

