"""tensorplug benchmarks: ratios against hand-written numpy and PyTorch eager (CPU), in one run.

Usage: ``python benchmarks/run.py [--quick] [--json PATH]``

Each case is timed with ``timeit`` (best of several repeats, so noise from a
shared machine inflates no figure); a ratio of 1.0 means "as fast as the
numpy floor". PyTorch columns appear when ``torch`` is importable.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import timeit

import numpy as np

import tensorplug as tp

try:
    import torch
    torch.set_num_threads(1)  # numpy runs with OPENBLAS_NUM_THREADS=1 too (see the Makefile)
except ImportError:  # PyTorch is an optional peer
    torch = None


def best_time(fn, min_time=0.2, repeat=5):
    """Seconds per call: best of ``repeat`` runs of an auto-sized loop."""
    fn()
    number = 1
    while True:
        t = timeit.timeit(fn, number=number)
        if t >= min_time / 5 or number >= 1 << 22:
            break
        number *= 4
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def cases(quick):
    rng = np.random.default_rng(0)
    out = []

    def add_case(name, np_fn, tp_fn, torch_fn):
        out.append((name, np_fn, tp_fn, torch_fn))

    for n in (4, 1000) + (() if quick else (1_000_000, 10_000_000)):
        a = rng.standard_normal(n).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        x, y = tp.from_numpy(a), tp.from_numpy(b)
        tx, ty = (torch.from_numpy(a), torch.from_numpy(b)) if torch else (None, None)
        add_case(f"x + y  float32[{n}]", lambda a=a, b=b: a + b, lambda x=x, y=y: x + y,
                 (lambda tx=tx, ty=ty: tx + ty) if torch else None)
    # leaves that require grad: each call records a node (and, as in PyTorch, the leaves' accumulators)
    a = rng.standard_normal(4).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    x, y = tp.from_numpy(a.copy()).requires_grad_(), tp.from_numpy(b.copy()).requires_grad_()
    tx, ty = (torch.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(b.copy()).requires_grad_()) if torch \
        else (None, None)
    add_case("x + y  float32[4] grad", lambda a=a, b=b: a + b, lambda x=x, y=y: x + y,
             (lambda tx=tx, ty=ty: tx + ty) if torch else None)
    a = rng.standard_normal(1000).astype(np.float32)
    x = tp.from_numpy(a)
    ta = torch.from_numpy(a) if torch else None
    # (default arguments bind this case's arrays: a, x and ta are reassigned below)
    add_case("x.relu()  float32[1000]", lambda a=a: np.maximum(a, 0), lambda x=x: x.relu(),
             (lambda ta=ta: ta.relu()) if torch else None)
    add_case("x.sum()  float32[1000]", lambda a=a: a.sum(), lambda x=x: x.sum(),
             (lambda ta=ta: ta.sum()) if torch else None)
    # printing summarises a large tensor (its edges only), so repr costs the same at any size
    for n in (1_000_000,) + (() if quick else (50_000_000,)):
        a = rng.standard_normal(n).astype(np.float32)
        x = tp.from_numpy(a)
        ta = torch.from_numpy(a) if torch else None
        add_case(f"repr(x)  float32[{n}]", lambda a=a: repr(a), lambda x=x: repr(x),
                 (lambda ta=ta: repr(ta)) if torch else None)
    # in-place writes: the version bump and the overlap checks on the written tensor (a plain tensor,
    # and a view, whose layout is checked)
    a = rng.standard_normal(4).astype(np.float32)
    x = tp.from_numpy(a.copy())
    tx = torch.from_numpy(a.copy()) if torch else None
    add_case("x.add_(1)  float32[4]", lambda a=a: np.add(a, 1, out=a), lambda x=x: x.add_(1),
             (lambda tx=tx: tx.add_(1)) if torch else None)
    v = tp.from_numpy(a.copy()).view(2, 2)
    tv = torch.from_numpy(a.copy()).view(2, 2) if torch else None
    av = a.reshape(2, 2)
    add_case("view.add_(1)  float32[2,2]", lambda av=av: np.add(av, 1, out=av), lambda v=v: v.add_(1),
             (lambda tv=tv: tv.add_(1)) if torch else None)
    for n in (64, 256) + (() if quick else (1024,)):
        m1 = rng.standard_normal((n, n)).astype(np.float32)
        m2 = rng.standard_normal((n, n)).astype(np.float32)
        x1, x2 = tp.from_numpy(m1), tp.from_numpy(m2)
        t1, t2 = (torch.from_numpy(m1), torch.from_numpy(m2)) if torch else (None, None)
        add_case(f"matmul {n}x{n}", lambda m1=m1, m2=m2: m1 @ m2, lambda x1=x1, x2=x2: x1 @ x2,
                 (lambda t1=t1, t2=t2: t1 @ t2) if torch else None)
    return out


def hot_path_breakdown():
    """Where the time of a small ``x + y`` goes: creation, key set, lookup, kernel."""
    from tensorplug.tensor import make_tensor
    from tensorplug.dispatch.dispatcher import _tls, _tls_active
    x, y = tp.ones(4), tp.ones(4)
    add = tp.ops.tensorplug.add.Tensor
    arr = x._data
    kernel = add.cache[x._ks | y._ks]
    rows = {
        "numpy a + b": best_time(lambda: arr + arr),
        "tensor creation (make_tensor)": best_time(lambda: make_tensor(arr, x._dtype, x._device, x._ks)),
        "key set (2 tensors + TLS check)": best_time(
            lambda: (x._ks | y._ks) if not _tls_active else ((x._ks | y._ks | _tls.include) & ~_tls.exclude)),
        "table lookup (cache dict)": best_time(lambda: add.cache[x._ks | y._ks]),
        "cpu kernel called directly": best_time(lambda: kernel(x, y, 1)),
        "op entry (check + dispatch + kernel)": best_time(lambda: add.entry(x, y)),
        "x + y (operator)": best_time(lambda: x + y),
    }
    return rows


def import_cost():
    # VmHWM, not getrusage: ru_maxrss of a child started from this (large) process
    # reports the parent's high-water mark on Linux.
    code = ("import time; t=time.perf_counter(); import tensorplug; d=time.perf_counter()-t; "
            "hwm=[l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]; print(d, hwm)")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            for _ in range(3)]
    vals = [tuple(map(float, r.stdout.split())) for r in runs]
    return min(v[0] for v in vals), min(v[1] for v in vals) / 1024


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small cases only")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    print(f"numpy {np.__version__}; torch {torch.__version__ if torch else 'not installed'}; "
          f"tensorplug {tp.__version__}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '-')}")
    results = []
    hdr = f"{'case':<28}{'numpy us':>11}{'tplug us':>11}{'torch us':>11}{'tp/np':>8}{'tp/torch':>9}"
    print(hdr)
    print("-" * len(hdr))
    for name, np_fn, tp_fn, torch_fn in cases(args.quick):
        tn, tt = best_time(np_fn), best_time(tp_fn)
        tq = best_time(torch_fn) if torch_fn else None
        row = {"case": name, "numpy_us": tn * 1e6, "tensorplug_us": tt * 1e6,
               "torch_us": tq * 1e6 if tq else None, "ratio_numpy": tt / tn, "ratio_torch": tt / tq if tq else None}
        results.append(row)
        tq_s = f"{tq * 1e6:11.2f}" if tq else f"{'-':>11}"
        rt = f"{tt / tq:9.2f}" if tq else f"{'-':>9}"
        print(f"{name:<28}{tn * 1e6:11.2f}{tt * 1e6:11.2f}{tq_s}{tt / tn:8.2f}{rt}")
    print("\nhot path of x + y, float32[4] (us per call):")
    bd = hot_path_breakdown()
    for k, v in bd.items():
        print(f"  {k:<40}{v * 1e6:8.3f}")
    secs, mib = import_cost()
    print(f"\nimport tensorplug (with enabled plugins): {secs:.3f} s, {mib:.0f} MiB max RSS")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cases": results, "hot_path_us": {k: v * 1e6 for k, v in bd.items()},
                       "import_s": secs, "import_mib": mib}, f, indent=2)


if __name__ == "__main__":
    main()
