"""CPU time per training step of the real programs in examples/programs, tensorplug against PyTorch
eager, in one run (1 thread each; run with OPENBLAS_NUM_THREADS=1, as ``make bench`` does).

Usage: ``python benchmarks/programs.py [--quick] [NAME ...]``

Both frameworks start from the same weights (PyTorch's, loaded into tensorplug) and train on the
same batches; a step is timed as the best of a few repeats of a run of steps, so a shared machine's
noise inflates no figure. A program that tensorplug cannot run yet is reported with its error.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "examples" / "programs"))

import _common  # noqa: E402
import tensorplug as tp  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:  # PyTorch is the peer; without it there is nothing to compare
    torch = None


def step_time(step, batches, repeat):
    """Best seconds per step over ``repeat`` passes through ``batches`` (after one warm-up pass)."""
    for b in batches:
        step(b)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for b in batches:
            step(b)
        best = min(best, (time.perf_counter() - t) / len(batches))
    return best


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer steps and repeats")
    p.add_argument("names", nargs="*", help="programs to run (default: all)")
    args = p.parse_args(argv)
    if torch is None:
        print("PyTorch is not installed: nothing to compare against")
        return 0
    steps, repeat = (2, 2) if args.quick else (4, 3)
    ratios = []
    print(f"{'program':<18} {'tensorplug ms':>14} {'PyTorch ms':>11} {'ratio':>6}")
    for name in args.names or _common.PROGRAMS:
        prog = _common.load(name)
        batches = prog.batches(steps, seed=1)
        torch.manual_seed(0)
        theirs = prog.build(torch)
        try:
            ours = prog.build(tp)
            _common.copy_state(theirs, ours, tp)
            t_tp = step_time(prog.trainer(tp, ours), batches, repeat)
        except Exception as e:  # report what the program touched; the test suite fails on it
            print(f"{name:<18} {'-':>14} {'-':>11} {'-':>6}  {type(e).__name__}: {e}")
            continue
        t_torch = step_time(prog.trainer(torch, theirs), batches, repeat)
        ratios.append(t_tp / t_torch)
        print(f"{name:<18} {t_tp * 1e3:>14.2f} {t_torch * 1e3:>11.2f} {t_tp / t_torch:>5.2f}x")
    if ratios:
        print(f"median ratio {statistics.median(ratios):.2f}x over {len(ratios)} programs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
