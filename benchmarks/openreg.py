"""openreg (the C++ device) against the numpy floor: ``add`` on 1e6 float32, ``matmul`` 256x256 float32,
and the per-call overhead of a small op (``x + y`` on float32[4]), next to the CPU backend.

Usage: ``python benchmarks/openreg.py`` (``make bench`` runs it with one BLAS thread).

Each figure is the best of several ``timeit`` repeats; the ratio is tensorplug's time over numpy's.
openreg's loops are single-threaded C++ (the matmul a cache-blocked loop, not a BLAS), so large
matmuls cost several times numpy's; elementwise ops should stay near numpy's time.
"""

from __future__ import annotations

import timeit

import numpy as np

import tensorplug as tp


def best_time(fn, number, repeat=5):
    """Seconds per call: best of ``repeat`` runs of ``number`` calls."""
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


CASES = [  # name, numpy operands, the op, calls per timing
    ("add 1e6 float32", lambda r: (r.random(10 ** 6, np.float32), r.random(10 ** 6, np.float32)),
     lambda a, b: a + b, 50),
    ("matmul 256 float32", lambda r: (r.random((256, 256), np.float32), r.random((256, 256), np.float32)),
     lambda a, b: a @ b, 10),
    ("add float32[4] (overhead)", lambda r: (r.random(4, np.float32), r.random(4, np.float32)),
     lambda a, b: a + b, 20000),
]


def main():
    """Time each case with numpy, the CPU backend and openreg; print the table."""
    rng = np.random.default_rng(0)
    print(f"{'case':<28}{'numpy':>12}{'cpu':>12}{'openreg':>12}{'cpu/np':>9}{'openreg/np':>12}")
    for name, make, op, number in CASES:
        a, b = make(rng)
        t_np = best_time(lambda: op(a, b), number)
        xa, xb = tp.tensor(a), tp.tensor(b)
        t_cpu = best_time(lambda: op(xa, xb), number)
        oa, ob = xa.to("openreg"), xb.to("openreg")
        t_or = best_time(lambda: op(oa, ob), number)
        print(f"{name:<28}{t_np * 1e6:>10.1f}us{t_cpu * 1e6:>10.1f}us{t_or * 1e6:>10.1f}us"
              f"{t_cpu / t_np:>9.2f}{t_or / t_np:>12.2f}")


if __name__ == "__main__":
    main()
