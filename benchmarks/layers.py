"""Transformer layers: tensorplug vs PyTorch eager (and hand-written numpy for attention), in one run.

- ``scaled_dot_product_attention`` at GPT sizes (B=8, H=4, T=64, D=16, causal), forward + backward;
- ``layer_norm`` over (16, 64, 64) with weight and bias, forward + backward;
- one training step of a GPT-style model (2 layers, 4 heads, 64 embedding, block 64, vocab 65,
  batch 16: token + position embeddings, pre-norm blocks with causal attention and a 4x GELU MLP,
  cross-entropy, AdamW).

Run with one BLAS thread (``OPENBLAS_NUM_THREADS=1``, as ``make bench`` does); PyTorch gets one
thread too. Usage: ``python benchmarks/layers.py [--quick]``
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import best_time  # noqa: E402

import tensorplug as tp  # noqa: E402

B, H, T, D = 8, 4, 64, 16
GPT = dict(n_layer=2, n_head=4, n_embd=64, block=64, vocab=65, batch=16)


# -- attention ---------------------------------------------------------------------------------------
def qkv(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((B, H, T, D)).astype(np.float32) for _ in range(3)] + [
        rng.standard_normal((B, H, T, D)).astype(np.float32)]


def sdpa_numpy(q, k, v, g):
    """Causal attention forward and backward, by hand: the floor."""
    scale = 1 / math.sqrt(q.shape[-1])
    s = (q @ k.swapaxes(-1, -2)) * scale
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = p @ v
    dv = p.swapaxes(-1, -2) @ g
    dp = g @ v.swapaxes(-1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scale
    return out, ds @ k, ds.swapaxes(-1, -2) @ q, dv


def sdpa_case(lib, arrays):
    q, k, v, g = arrays
    F = lib.nn.functional
    conv = tp.from_numpy if lib is tp else lib.from_numpy
    qt, kt, vt = (conv(a.copy()).requires_grad_(True) for a in (q, k, v))
    gt = conv(g.copy())

    def run():
        out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True)
        out.backward(gt)
    return run


def layer_norm_case(lib, seed=0):
    rng = np.random.default_rng(seed)
    conv = tp.from_numpy if lib is tp else lib.from_numpy
    x = conv(rng.standard_normal((16, 64, 64)).astype(np.float32)).requires_grad_(True)
    w = conv(rng.standard_normal(64).astype(np.float32)).requires_grad_(True)
    b = conv(rng.standard_normal(64).astype(np.float32)).requires_grad_(True)
    g = conv(rng.standard_normal((16, 64, 64)).astype(np.float32))
    F = lib.nn.functional

    def run():
        F.layer_norm(x, (64,), w, b).backward(g)
    return run


# -- a GPT-style model, written once for both libraries -------------------------------------------------
def gpt(lib):
    nn, F = lib.nn, lib.nn.functional
    c = GPT

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            e = c["n_embd"]
            self.ln1, self.ln2 = nn.LayerNorm(e), nn.LayerNorm(e)
            self.qkv, self.proj = nn.Linear(e, 3 * e), nn.Linear(e, e)
            self.fc, self.out = nn.Linear(e, 4 * e), nn.Linear(4 * e, e)

        def forward(self, x):
            b, t, e = x.shape
            h = c["n_head"]
            q, k, v = self.qkv(self.ln1(x)).split(e, dim=2)
            q, k, v = (z.view(b, t, h, e // h).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, e))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(c["vocab"], c["n_embd"])
            self.pos = nn.Embedding(c["block"], c["n_embd"])
            self.blocks = nn.ModuleList([Block() for _ in range(c["n_layer"])])
            self.ln = nn.LayerNorm(c["n_embd"])
            self.head = nn.Linear(c["n_embd"], c["vocab"])

        def forward(self, idx, pos):
            x = self.tok(idx) + self.pos(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return Model()


def gpt_case(lib, seed=0):
    lib.manual_seed(seed)
    model = gpt(lib)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    conv = tp.from_numpy if lib is tp else lib.from_numpy
    idx = conv(rng.integers(0, GPT["vocab"], (GPT["batch"], GPT["block"])))
    tgt = conv(rng.integers(0, GPT["vocab"], (GPT["batch"], GPT["block"])))
    pos = lib.arange(GPT["block"])
    F = lib.nn.functional

    def run():
        logits = model(idx, pos)
        loss = F.cross_entropy(logits.view(-1, GPT["vocab"]), tgt.view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    args = ap.parse_args(argv)
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    repeat = 3 if args.quick else 5
    arrays = qkv()
    rows = [
        ("sdpa fwd+bwd B8 H4 T64 D16 causal", lambda: sdpa_numpy(*arrays), sdpa_case(tp, arrays),
         sdpa_case(torch, arrays) if torch else None),
        ("layer_norm fwd+bwd (16,64,64)", None, layer_norm_case(tp), layer_norm_case(torch) if torch else None),
        ("GPT step 2x4x64, batch 16, AdamW", None, gpt_case(tp), gpt_case(torch) if torch else None),
    ]
    print(f"{'workload (ms)':<36}{'numpy':>9}{'tplug':>9}{'torch':>9}{'tp/np':>8}{'tp/torch':>9}")
    for name, np_fn, tp_fn, torch_fn in rows:
        tn = best_time(np_fn, repeat=repeat) * 1e3 if np_fn else None
        tt = best_time(tp_fn, repeat=repeat) * 1e3
        to = best_time(torch_fn, repeat=repeat) * 1e3 if torch_fn else None
        cells = [f"{tn:9.3f}" if tn else f"{'-':>9}", f"{tt:9.3f}", f"{to:9.3f}" if to else f"{'-':>9}",
                 f"{tt / tn:8.2f}" if tn else f"{'-':>8}", f"{tt / to:9.2f}" if to else f"{'-':>9}"]
        print(f"{name:<36}" + "".join(cells))


if __name__ == "__main__":
    main()
