"""Autocast benchmarks: ratios in one run (1 thread; run with OPENBLAS_NUM_THREADS=1, as ``make bench``).

Usage: ``python benchmarks/autocast.py [--quick]``

* the cost of the plugin outside any region: ``x + y`` float32[4] and the MLP step with the plugin
  enabled, against the same with it disabled;
* the 784-256-256-10 MLP SGD step under bfloat16 autocast against tensorplug's float32 step, at batch
  32 and 512, with PyTorch's bfloat16-autocast and float32 steps beside it;
* the per-op overhead of a cast op: ``mm`` on [4, 4] under autocast, against PyTorch's under
  ``torch.autocast``;
* the bytes a forward pass keeps for backward (activations and the saved input, not the weights'
  casts, which a region makes once), bfloat16 against float32 (tracemalloc sees numpy's memory).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tracemalloc

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402

import tensorplug as tp  # noqa: E402
from run import best_time  # noqa: E402
import training as T  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
    T.torch = torch  # training.py imports PyTorch only in its own main
except ImportError:  # PyTorch is an optional peer
    torch = None


def _step(model, opt, x, y, amp):
    F = tp.nn.functional
    if amp:
        with tp.autocast("cpu", dtype=tp.bfloat16):
            loss = F.cross_entropy(model(x), y)
    else:
        loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()


def _torch_step(model, opt, x, y, amp):
    F = torch.nn.functional
    if amp:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
    else:
        loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()


def _activation_bytes(model, xn, amp):
    """Bytes a forward pass keeps alive for backward: the input is made inside the window and
    dropped after the forward, so what stays is what the graph saved (the float32 input itself,
    or its bfloat16 copy). Weight casts are made by a first forward in the same region, before."""
    region = tp.autocast("cpu", dtype=tp.bfloat16) if amp else contextlib.nullcontext()
    with region:
        model(tp.from_numpy(xn.copy()))            # warm: the weights' casts are cached now
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        x = tp.from_numpy(xn.copy())
        out = model(x)
        del x
        kept = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
    del out
    return kept


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    rows = []
    a, b = tp.randn(4), tp.randn(4)
    ws = T.init_weights()
    x32, y32 = (tp.from_numpy(v) for v in T.batch(32))
    model, opt = T.tp_model(ws)
    on_add = best_time(lambda: a + b)
    on_mlp = best_time(lambda: _step(model, opt, x32, y32, False))
    tp.plugins.disable("autocast")
    try:
        off_add = best_time(lambda: a + b)
        off_mlp = best_time(lambda: _step(model, opt, x32, y32, False))
    finally:
        tp.plugins.enable("autocast")
    rows.append(("x + y float32[4], plugin enabled / disabled", on_add, off_add, "≤1.05"))
    rows.append(("MLP step b=32, plugin enabled / disabled", on_mlp, off_mlp, "≤1.05"))
    for n in (32,) + (() if args.quick else (512,)):
        xn, yn = T.batch(n)
        x, y = tp.from_numpy(xn), tp.from_numpy(yn)
        model, opt = T.tp_model(ws)
        t32 = best_time(lambda: _step(model, opt, x, y, False))
        t16 = best_time(lambda: _step(model, opt, x, y, True))
        rows.append((f"MLP step b={n}: bf16 autocast / float32", t16, t32, "≤1.3"))
        if torch is not None:
            tm, topt = T.torch_model(ws)
            tx, ty = torch.from_numpy(xn), torch.from_numpy(yn)
            th32 = best_time(lambda: _torch_step(tm, topt, tx, ty, False))
            th16 = best_time(lambda: _torch_step(tm, topt, tx, ty, True))
            rows.append((f"MLP step b={n}: PyTorch bf16 autocast / its float32", th16, th32, "-"))
            rows.append((f"MLP step b={n}: bf16 autocast, tensorplug / PyTorch", t16, th16, "-"))
    m = tp.randn(4, 4)
    with tp.autocast("cpu"):
        t_mm = best_time(lambda: tp.mm(m, m))
    if torch is not None:
        tmm = torch.randn(4, 4)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            th_mm = best_time(lambda: torch.mm(tmm, tmm))
        rows.append(("mm [4,4] under autocast, tensorplug / PyTorch", t_mm, th_mm, "≤1.5"))
    model, _ = T.tp_model(ws)
    xb = T.batch(512)[0]
    b16, b32 = _activation_bytes(model, xb, True), _activation_bytes(model, xb, False)
    print(f"{'case':<58} {'time a':>10} {'time b':>10} {'a/b':>6}  target")
    for name, ta, tb, target in rows:
        print(f"{name:<58} {ta * 1e6:>8.1f}us {tb * 1e6:>8.1f}us {ta / tb:>6.2f}  {target}")
    print(f"{'activations kept for backward, b=512: bf16 / float32':<58} {b16 / 1024:>8.0f}KB {b32 / 1024:>8.0f}KB "
          f"{b16 / b32:>6.2f}  ≤0.6")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
