"""tensorplug.compile against eager tensorplug, hand-written numpy and PyTorch eager, in one run.

- one SGD training step (forward, backward, update) of a 784-256-256-10 ReLU MLP at batch 32 and 512
  (the step of benchmarks/training.py), compiled as a whole;
- a chain of 100 small ops forward + backward, per op;
- the elementwise chain ``relu(a*b+c)*d`` at 1e6 float32 elements with gradients;
- time and peak allocation of that chain's forward (memory planning: compiled intermediates share
  buffers the program keeps);
- compile latency of the MLP step (the calls until the program replays) and the cost of a compiled
  call that runs nothing (guards plus the call), per call.

``--torch-compile`` adds torch.compile (its compile takes seconds to minutes here).

Usage: ``python benchmarks/compile.py [--quick] [--torch-compile]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import training as T  # noqa: E402  (the MLP's weights, batches and numpy step)
from run import best_time  # noqa: E402

torch = None


def tp_mlp_step(ws):
    import tensorplug as tp
    m, o = T.tp_model(ws)
    step = tp.compile(lambda x, y: T.tp_step(m, o, x, y))
    return step


def chain_tp_compiled():
    import tensorplug as tp
    return tp.compile(T.chain_tp())


def elementwise_tp(n):
    import tensorplug as tp
    rng = np.random.default_rng(0)
    a, b, c, d = (tp.from_numpy(rng.standard_normal(n).astype(np.float32)) for _ in range(4))
    a.requires_grad_()
    b.requires_grad_()

    def run():
        (((a * b + c).relu()) * d).sum().backward()
    return run


def elementwise_numpy(n):
    rng = np.random.default_rng(0)
    a, b, c, d = (rng.standard_normal(n).astype(np.float32) for _ in range(4))
    ga, gb = np.zeros_like(a), np.zeros_like(b)

    def run():
        z = a * b + c
        r = np.maximum(z, 0)
        _ = (r * d).sum()
        g = d * (z > 0)
        ga[...] += g * b
        gb[...] += g * a
    return run


def elementwise_torch(n):
    rng = np.random.default_rng(0)
    a, b, c, d = (torch.from_numpy(rng.standard_normal(n).astype(np.float32)) for _ in range(4))
    a.requires_grad_()
    b.requires_grad_()

    def run():
        (((a * b + c).relu()) * d).sum().backward()
    return run


def forward_chain_memory(n=10 ** 6):
    """Time (ms) and peak traced allocation (MB) of ``relu(a*b+c)*d`` forward at ``n`` float32: numpy
    with temporaries, numpy into one preallocated buffer, eager tensorplug, compiled tensorplug."""
    import tracemalloc
    import tensorplug as tp
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal(n).astype(np.float32) for _ in range(4)]
    a, b, c, d = arrs
    buf = np.empty(n, np.float32)

    def into():
        np.multiply(a, b, out=buf)
        np.add(buf, c, out=buf)
        np.maximum(buf, 0, out=buf)
        np.multiply(buf, d, out=buf)
    ts = [tp.from_numpy(x) for x in arrs]

    def chain(a, b, c, d):
        return (a * b + c).relu() * d
    compiled = tp.compile(chain)
    rows = {"numpy, temporaries": lambda: np.maximum(a * b + c, 0) * d, "numpy, one buffer": into,
            "tensorplug eager": lambda: chain(*ts), "tensorplug compiled": lambda: compiled(*ts)}
    out = {}
    for name, fn in rows.items():
        fn()
        fn()
        tracemalloc.start()
        fn()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        out[name] = (best_time(fn) * 1e3, peak / 2 ** 20)
    return out


def compile_latency(ws, x, y):
    """Seconds of the calls until the compiled MLP step replays, and of eager steps for scale."""
    import tensorplug as tp
    m, o = T.tp_model(ws)
    step = tp.compile(lambda x, y: T.tp_step(m, o, x, y))
    t0 = time.perf_counter()
    calls = 0
    while not step.graphs:
        step(x, y)
        calls += 1
    total = time.perf_counter() - t0
    m2, o2 = T.tp_model(ws)
    eager = best_time(lambda: T.tp_step(m2, o2, x, y))
    return total, calls, eager, step.compile_seconds


def call_overhead():
    import tensorplug as tp
    x = tp.ones(2)
    f = tp.compile(lambda x: x)
    for _ in range(3):
        f(x)
    assert f.graphs
    return best_time(lambda: f(x))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--torch-compile", action="store_true")
    args = ap.parse_args(argv)
    global torch
    try:
        import torch
        torch.set_num_threads(1)
        T.torch = torch
    except ImportError:
        torch = None
    import tensorplug as tp
    head = f"{'workload':<36}{'numpy':>9}{'eager':>9}{'compiled':>9}{'torch':>9}{'c/np':>7}{'c/eager':>8}{'c/torch':>8}"
    if args.torch_compile:
        head += f"{'t.compile':>10}{'c/tc':>7}"
    print(head)
    rows = [("chain of 100 ops, us per op", T.chain_numpy(), T.chain_tp(), chain_tp_compiled(),
             T.chain_torch() if torch else None, None, 1e6 / 100)]
    ws = T.init_weights()
    for n in (32,) + (() if args.quick else (512,)):
        x, y = T.batch(n)
        wn = [w.copy() for w in ws]
        m, o = T.tp_model(ws)
        xt, yt = tp.from_numpy(x), tp.from_numpy(y)
        step = tp_mlp_step(ws)
        t_fn = tc_fn = None
        if torch:
            tm, to = T.torch_model(ws)
            xq, yq = torch.from_numpy(x), torch.from_numpy(y)
            t_fn = (lambda tm=tm, to=to, xq=xq, yq=yq: T.torch_step(tm, to, xq, yq))
            if args.torch_compile:
                tm2, to2 = T.torch_model(ws)
                cstep = torch.compile(lambda x, y: T.torch_step(tm2, to2, x, y))
                tc_fn = (lambda xq=xq, yq=yq: cstep(xq, yq))
        rows.append((f"MLP SGD step, batch {n}, ms", lambda wn=wn, x=x, y=y: T.numpy_step(wn, x, y),
                     lambda m=m, o=o, xt=xt, yt=yt: T.tp_step(m, o, xt, yt),
                     lambda step=step, xt=xt, yt=yt: step(xt, yt), t_fn, tc_fn, 1e3))
    n = 10 ** 6
    rows.append(("relu(a*b+c)*d 1e6 + grads, ms", elementwise_numpy(n), elementwise_tp(n),
                 tp.compile(elementwise_tp(n)), elementwise_torch(n) if torch else None, None, 1e3))
    for name, f_np, f_eager, f_comp, f_t, f_tc, scale in rows:
        a, b, c = (best_time(f) * scale for f in (f_np, f_eager, f_comp))
        d = best_time(f_t) * scale if f_t else None
        line = (f"{name:<36}{a:9.2f}{b:9.2f}{c:9.2f}" + (f"{d:9.2f}" if d else f"{'-':>9}")
                + f"{c / a:7.2f}{c / b:8.2f}" + (f"{c / d:8.2f}" if d else f"{'-':>8}"))
        if args.torch_compile:
            e = best_time(f_tc) * scale if f_tc else None
            line += (f"{e:10.2f}{c / e:7.2f}" if e else f"{'-':>10}{'-':>7}")
        print(line)
    mem = forward_chain_memory()
    print("relu(a*b+c)*d 1e6 forward: " + ", ".join(f"{k} {t:.2f} ms / {m:.1f} MB peak" for k, (t, m) in mem.items()))
    x, y = T.batch(32)
    total, calls, eager, gen = compile_latency(ws, tp.from_numpy(x), tp.from_numpy(y))
    print(f"compile latency, MLP step b32: {total:.3f} s over {calls} calls until it replays "
          f"({total / eager:.0f}x one eager step; tracing and code generation {gen:.3f} s)")
    print(f"a compiled call that runs no kernel (guards + call): {call_overhead() * 1e6:.2f} us")


if __name__ == "__main__":
    main()
