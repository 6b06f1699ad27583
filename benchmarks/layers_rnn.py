"""Recurrent layers against PyTorch eager: forward + backward of LSTM, GRU and RNN (2 layers, hidden
128, input 128, T=35, B=20, float32), the same weights in both.

Usage: ``OPENBLAS_NUM_THREADS=1 python benchmarks/layers_rnn.py`` (``make bench`` sets one BLAS thread).
PyTorch runs with ``torch.set_num_threads(1)``. Each figure is the best of several repeats; the ratio
is tensorplug's time over PyTorch's, measured in the same run. Without torch installed it prints
tensorplug's times only.
"""

from __future__ import annotations

import timeit

import numpy as np

import tensorplug as tp

T, B, I, H, L = 35, 20, 128, 128, 2


def best_time(fn, number=3, repeat=5):
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def _step(model, x, backend):
    def run():
        for p in model.parameters():
            p.grad = None
        out = model(x)[0]
        out.sum().backward()
    return run


def main():
    try:
        import torch  # lazy: the comparison is optional
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    x = np.random.default_rng(0).standard_normal((T, B, I)).astype(np.float32)
    print(f"{'layer (fwd+bwd)':<22}{'tensorplug':>12}{'torch':>12}{'ratio':>8}")
    for cls in ("LSTM", "GRU", "RNN"):
        ours = getattr(tp.nn, cls)(I, H, L)
        t_ours = best_time(_step(ours, tp.tensor(x), "tp"))
        line = f"{cls:<22}{t_ours * 1e3:>10.2f}ms"
        if torch is not None:
            theirs = getattr(torch.nn, cls)(I, H, L)
            theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
            t_theirs = best_time(_step(theirs, torch.from_numpy(x), "torch"))
            line += f"{t_theirs * 1e3:>10.2f}ms{t_ours / t_theirs:>8.2f}"
        print(line)


if __name__ == "__main__":
    main()
