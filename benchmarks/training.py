"""Autograd and training workloads: tensorplug vs hand-written numpy vs PyTorch eager, in one run.

- a chain of 100 small ops, forward + backward (time per op);
- one SGD step of a 784-256-256-10 ReLU MLP with cross-entropy, at batch 32 and 512;
- peak resident memory of 20 such steps at batch 512 (each framework in a fresh process).

Usage: ``python benchmarks/training.py [--quick]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np

torch = None  # imported in main(): the memory measurements run this module without it


def best_time(fn):
    sys.path.insert(0, os.path.dirname(__file__))
    from run import best_time as bt
    return bt(fn)

SIZES = (784, 256, 256, 10)


def init_weights(seed=0):
    rng = np.random.default_rng(seed)
    ws = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        ws.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        ws.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return ws


def batch(n, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, SIZES[0])).astype(np.float32), rng.integers(0, 10, n)


# -- hand-written numpy ---------------------------------------------------------------------
def numpy_step(ws, x, y, lr=0.01):
    w1, b1, w2, b2, w3, b3 = ws
    z1 = x @ w1.T + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2.T + b2
    h2 = np.maximum(z2, 0)
    logits = h2 @ w3.T + b3
    m = logits.max(1, keepdims=True)
    e = np.exp(logits - m)
    p = e / e.sum(1, keepdims=True)
    n = len(y)
    loss = -np.log(p[np.arange(n), y]).mean()
    g = p
    g[np.arange(n), y] -= 1
    g /= n
    gw3, gb3 = g.T @ h2, g.sum(0)
    g = (g @ w3) * (z2 > 0)
    gw2, gb2 = g.T @ h1, g.sum(0)
    g = (g @ w2) * (z1 > 0)
    gw1, gb1 = g.T @ x, g.sum(0)
    for w, gw in zip(ws, (gw1, gb1, gw2, gb2, gw3, gb3)):
        w -= lr * gw
    return loss


# -- tensorplug ---------------------------------------------------------------------------------
def tp_model(ws):
    import tensorplug as tp
    from tensorplug import nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    with tp.no_grad():
        for p, w in zip(model.parameters(), ws):
            p.copy_(tp.from_numpy(w.copy()))
    return model, tp.optim.SGD(model.parameters(), lr=0.01)


def tp_step(model, opt, x, y):
    from tensorplug.nn import functional as F
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def torch_model(ws):
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                torch.nn.ReLU(), torch.nn.Linear(256, 10))
    with torch.no_grad():
        for p, w in zip(model.parameters(), ws):
            p.copy_(torch.from_numpy(w.copy()))
    return model, torch.optim.SGD(model.parameters(), lr=0.01)


def torch_step(model, opt, x, y):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


# -- a chain of small ops ----------------------------------------------------------------------
def chain_tp():
    import tensorplug as tp
    x = tp.ones(16, requires_grad=True)
    w = tp.full((16,), 0.5)

    def run():
        y = x
        for _ in range(25):
            y = ((y * w + 1.0).tanh() - 0.5).exp()
        y.sum().backward()
    return run


def chain_torch():
    x = torch.ones(16, requires_grad=True)
    w = torch.full((16,), 0.5)

    def run():
        y = x
        for _ in range(25):
            y = ((y * w + 1.0).tanh() - 0.5).exp()
        y.sum().backward()
    return run


def chain_numpy():
    x = np.ones(16, np.float32)
    w = np.full(16, 0.5, np.float32)

    def run():
        ys = [x]
        y = x
        for _ in range(25):
            a = y * w
            b = np.tanh(a + 1.0)
            y = np.exp(b - 0.5)
            ys.append((b, y))
        g = np.ones_like(x)
        for b, y in reversed(ys[1:]):
            g = g * y
            g = g * (1 - b * b)
            g = g * w
    return run


PEAK_CODE = r"""
import sys, numpy as np
sys.path.insert(0, {here!r})
import training as T
which = {which!r}
ws = T.init_weights()
x, y = T.batch(512)
if which == "numpy":
    for _ in range(20): T.numpy_step(ws, x, y)
elif which == "tensorplug":
    import tensorplug as tp
    m, o = T.tp_model(ws); xt, yt = tp.from_numpy(x), tp.from_numpy(y)
    for _ in range(20): T.tp_step(m, o, xt, yt)
else:
    import torch; torch.set_num_threads(1); T.torch = torch
    m, o = T.torch_model(ws); xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    for _ in range(20): T.torch_step(m, o, xt, yt)
print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])
"""


def peak_mib(which):
    code = PEAK_CODE.format(here=os.path.dirname(os.path.abspath(__file__)), which=which)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1]) / 1024


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    global torch
    try:
        import torch
        torch.set_num_threads(1)  # numpy runs with OPENBLAS_NUM_THREADS=1 too (see the Makefile)
    except ImportError:
        torch = None
    import tensorplug as tp
    print(f"{'workload':<34}{'numpy':>10}{'tplug':>10}{'torch':>10}{'tp/np':>8}{'tp/torch':>9}")
    rows = [("chain of 100 ops, us per op", chain_numpy(), chain_tp(), chain_torch() if torch else None, 1e6 / 100)]
    ws = init_weights()
    for n in (32,) + (() if args.quick else (512,)):
        x, y = batch(n)
        wn = [w.copy() for w in ws]
        m, o = tp_model(ws)
        xt, yt = tp.from_numpy(x), tp.from_numpy(y)
        t_fn = None
        if torch:
            tm, to = torch_model(ws)
            xq, yq = torch.from_numpy(x), torch.from_numpy(y)
            t_fn = (lambda tm=tm, to=to, xq=xq, yq=yq: torch_step(tm, to, xq, yq))
        rows.append((f"MLP SGD step, batch {n}, ms", lambda wn=wn, x=x, y=y: numpy_step(wn, x, y),
                     lambda m=m, o=o, xt=xt, yt=yt: tp_step(m, o, xt, yt), t_fn, 1e3))
    for name, fn_np, fn_tp, fn_t, scale in rows:
        a, b = best_time(fn_np) * scale, best_time(fn_tp) * scale
        c = best_time(fn_t) * scale if fn_t else None
        cs = f"{c:10.2f}" if c else f"{'-':>10}"
        rt = f"{b / c:9.2f}" if c else f"{'-':>9}"
        print(f"{name:<34}{a:10.2f}{b:10.2f}{cs}{b / a:8.2f}{rt}")
    if not args.quick:
        mems = {k: peak_mib(k) for k in ("numpy", "tensorplug") + (("torch",) if torch else ())}
        print("peak RSS of 20 MLP steps at batch 512 (MiB): " + ", ".join(f"{k} {v:.0f}" for k, v in mems.items()))


if __name__ == "__main__":
    main()
