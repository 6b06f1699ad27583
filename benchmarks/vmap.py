"""vmap workloads: a 64-64-10 tanh MLP over 64 examples, tensorplug vs PyTorch's torch.func vs numpy.

- forward: ``vmap(model)(x)`` against a Python loop of ``model`` per example;
- per-sample gradients: ``vmap(grad(loss), in_dims=(None, .., 0, 0))`` against 64 backward passes, and
  against ``torch.func.vmap(torch.func.grad(...))`` where PyTorch is installed;
- the numpy floor: the batched forward written by hand.

Run with one BLAS thread (``OPENBLAS_NUM_THREADS=1``; the script also sets PyTorch to one thread).
Usage: ``python benchmarks/vmap.py``
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from run import best_time  # noqa: E402

import tensorplug as tp  # noqa: E402
from tensorplug.func import grad  # noqa: E402

N, D, H, O = 64, 64, 64, 10


def data():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) * 0.1 for s in ((H, D), (H,), (O, H), (O,), (N, D), (N, O))]


def model(w1, b1, w2, b2, x):
    return (x @ w1.t() + b1).tanh() @ w2.t() + b2


def loss(w1, b1, w2, b2, x, t):
    return ((model(w1, b1, w2, b2, x) - t) ** 2).sum()


def main():
    arrays = data()
    w1, b1, w2, b2, x, t = [tp.from_numpy(a) for a in arrays]
    rows = []

    fwd_vmap = best_time(lambda: tp.vmap(model, in_dims=(None, None, None, None, 0))(w1, b1, w2, b2, x))
    fwd_loop = best_time(lambda: tp.stack([model(w1, b1, w2, b2, x[i]) for i in range(N)]))
    psg = grad(loss, argnums=(0, 1, 2, 3))
    psg_vmap = best_time(lambda: tp.vmap(psg, in_dims=(None, None, None, None, 0, 0))(w1, b1, w2, b2, x, t))

    def loop_backward():
        for i in range(N):
            ps = [p.detach().requires_grad_() for p in (w1, b1, w2, b2)]
            loss(*ps, x[i], t[i]).backward()
    psg_loop = best_time(loop_backward)
    nw1, nb1, nw2, nb2, nx, _ = arrays
    numpy_fwd = best_time(lambda: np.tanh(nx @ nw1.T + nb1) @ nw2.T + nb2)
    rows += [("forward: vmap", fwd_vmap), ("forward: Python loop", fwd_loop), ("forward: numpy floor", numpy_fwd),
             ("per-sample grads: vmap(grad)", psg_vmap), ("per-sample grads: 64 backward passes", psg_loop)]

    torch_psg = None
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        tw = [torch.from_numpy(a) for a in arrays]
        tf = torch.func

        def tloss(w1, b1, w2, b2, x, t):
            return (((x @ w1.t() + b1).tanh() @ w2.t() + b2 - t) ** 2).sum()
        tpsg = tf.vmap(tf.grad(tloss, argnums=(0, 1, 2, 3)), in_dims=(None, None, None, None, 0, 0))
        torch_psg = best_time(lambda: tpsg(*tw))
        tfwd = tf.vmap(lambda w1, b1, w2, b2, x: (x @ w1.t() + b1).tanh() @ w2.t() + b2,
                       in_dims=(None, None, None, None, 0))
        rows += [("torch.func forward: vmap", best_time(lambda: tfwd(*tw[:5]))),
                 ("torch.func per-sample grads: vmap(grad)", torch_psg)]

    print(f"{'case':45s} {'time':>10s}")
    for name, s in rows:
        print(f"{name:45s} {s * 1e3:8.3f}ms")
    print()
    print(f"vmap forward speed-up over the loop:        {fwd_loop / fwd_vmap:6.1f}x (target >= 10x)")
    print(f"vmap(grad) speed-up over 64 backward passes: {psg_loop / psg_vmap:6.1f}x (target >= 5x)")
    if torch_psg is not None:
        print(f"vmap(grad) time / torch.func's:              {psg_vmap / torch_psg:6.2f} (target <= 2)")
    else:
        print("torch.func: PyTorch is not installed, no peer measured")


if __name__ == "__main__":
    main()
