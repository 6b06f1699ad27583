"""The CUDA backend on the GPU: tensorplug against raw cupy and PyTorch (torch.cuda), in one process.

Usage: ``python benchmarks/cuda.py [--quick] [--json PATH]``

What is measured (each figure the median of several repeats; every repeat
synchronizes the device before starting and before stopping the clock, after
a warm-up that compiles kernels and fills the memory pools):

- ``matmul`` 4096x4096, float32 and float16: throughput in TFLOP/s
  (``2 n^3 / time``); tensorplug/cupy is the ratio with a target (>= 0.9),
  tensorplug/torch is shown beside it;
- ``x + y`` on 1e8 float32: achieved bandwidth in GB/s (two arrays read, one
  written: ``3 * 4 bytes * n / time``); target tensorplug/cupy >= 0.9;
- one training step of a 784-256-256-10 ReLU MLP (cross-entropy, SGD with
  momentum 0.9) at batch 512: ms per step; target tensorplug/torch <= 1.5;
- the per-op overhead of a tiny op (``a + b`` on 1-element tensors, many
  calls in a row, one synchronize at the end): us per op; target
  tensorplug/torch <= 2;
- the peak device memory of one MLP step: ``max_memory_allocated()`` after
  ``reset_peak_memory_stats()`` (parameters, optimizer state and the batch are
  resident before the reset, in both frameworks); target tensorplug/torch <= 1.2.

A peer that cannot run (cupy not installed, PyTorch without a CUDA device)
shows as ``n/a (reason)`` and its ratios are left out. TF32 stays off for
float32 matmuls in every framework (the default of cupy and of PyTorch).

Without a CUDA device this prints why and exits 0. ``--quick`` runs small
sizes with few repeats (matmul 256, add 1e5, a few MLP steps) so that the
script can be smoke-run on a CPU with ``TENSORPLUG_CUDA_SIMULATE=1``, where
numpy stands in for cupy: those figures are a simulation, not GPU figures,
and the GPU peers are skipped.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

import numpy as np

import tensorplug as tp

sys.path.insert(0, os.path.dirname(__file__))
import training as T  # noqa: E402  (the MLP's weights and batches, as training.py measures them)

DEVICE = "cuda"


def simulated():
    """Whether the cuda backend runs in its simulated mode (numpy on the CPU standing in for cupy)."""
    return os.environ.get("TENSORPLUG_CUDA_SIMULATE", "") not in ("", "0")


def cuda_unavailable_reason():
    """None when tensorplug can use a CUDA device, else a one-line reason."""
    try:
        if tp.cuda.is_available():
            return None
    except Exception as e:  # a broken backend is a reason too
        return f"tensorplug.cuda.is_available() raised {type(e).__name__}: {e}"
    try:
        tp.zeros(1, device=DEVICE)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return "tensorplug.cuda.is_available() is False"


# -- the frameworks ---------------------------------------------------------------------------
class Framework:
    """One column of the table: how to make operands, run the ops and synchronize."""

    name = ""

    def sync(self):
        raise NotImplementedError


class Tensorplug(Framework):
    name = "tensorplug"

    def __init__(self):
        self.np = np

    def sync(self):
        tp.cuda.synchronize()

    def dtype(self, name):
        return getattr(tp, name)

    def randn(self, shape, dtype):
        x = tp.randn(*shape, device=DEVICE)
        return x if dtype == "float32" else x.to(self.dtype(dtype))

    def ones(self, n):
        return tp.ones(n, device=DEVICE)

    def matmul(self, a, b):
        return a @ b

    def from_numpy(self, a):
        return tp.from_numpy(a).to(DEVICE)

    def mlp(self, ws):
        from tensorplug import nn
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
        with tp.no_grad():
            for p, w in zip(model.parameters(), ws):
                p.copy_(tp.from_numpy(w.copy()))
        model = model.to(DEVICE)
        return model, tp.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step(self, model, opt, x, y):
        from tensorplug.nn import functional as F
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def reset_peak(self):
        tp.cuda.reset_peak_memory_stats()

    def max_memory(self):
        return tp.cuda.max_memory_allocated()

    def release(self):
        tp.cuda.empty_cache()


class Cupy(Framework):
    name = "cupy"

    def __init__(self, cupy):
        self.cp = cupy

    def sync(self):
        self.cp.cuda.Device().synchronize()

    def randn(self, shape, dtype):
        return self.cp.random.standard_normal(shape, dtype=np.float32).astype(dtype)

    def ones(self, n):
        return self.cp.ones(n, dtype=np.float32)

    def matmul(self, a, b):
        return self.cp.matmul(a, b)

    def release(self):
        self.cp.get_default_memory_pool().free_all_blocks()


class Torch(Framework):
    name = "torch"

    def __init__(self, torch, device="cuda"):
        self.torch = torch
        self.device = device

    def sync(self):
        self.torch.cuda.synchronize()

    def randn(self, shape, dtype):
        return self.torch.randn(*shape, device=self.device, dtype=getattr(self.torch, dtype))

    def ones(self, n):
        return self.torch.ones(n, device=self.device)

    def matmul(self, a, b):
        return a @ b

    def from_numpy(self, a):
        return self.torch.from_numpy(a).to(self.device)

    def mlp(self, ws):
        nn = self.torch.nn
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
        with self.torch.no_grad():
            for p, w in zip(model.parameters(), ws):
                p.copy_(self.torch.from_numpy(w.copy()))
        model = model.to(self.device)
        return model, self.torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step(self, model, opt, x, y):
        loss = self.torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def reset_peak(self):
        self.torch.cuda.reset_peak_memory_stats()

    def max_memory(self):
        return self.torch.cuda.max_memory_allocated()

    def release(self):
        self.torch.cuda.empty_cache()


def load_cupy():
    """``(Cupy, None)`` or ``(None, reason)``; cupy is imported here, not at module import."""
    if simulated():
        return None, "simulated mode: needs a real GPU"
    try:
        import cupy
    except Exception as e:
        return None, f"cupy not importable: {type(e).__name__}: {e}"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, f"cupy {cupy.__version__} sees no CUDA device"
    except Exception as e:
        return None, f"cupy {cupy.__version__}: {type(e).__name__}: {e}"
    return Cupy(cupy), None


def load_torch():
    """``(Torch, None)`` or ``(None, reason)``; torch is imported here, not at module import."""
    if simulated():
        return None, "simulated mode: needs a real GPU"
    try:
        import torch
    except Exception as e:
        return None, f"torch not importable: {type(e).__name__}: {e}"
    if not torch.cuda.is_available():
        return None, f"torch {torch.__version__} has no CUDA device"
    return Torch(torch), None


# -- timing -----------------------------------------------------------------------------------
def gpu_time(fn, sync, number, repeat, warmup=2):
    """Seconds per call of ``fn``: median over ``repeat`` runs of ``number`` calls, each run synchronized."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


# -- the cases --------------------------------------------------------------------------------
def matmul_tflops(fw, n, dtype, cfg):
    a, b = fw.randn((n, n), dtype), fw.randn((n, n), dtype)
    t = gpu_time(lambda: fw.matmul(a, b), fw.sync, cfg["mm_number"], cfg["repeat"])
    del a, b
    fw.release()
    return 2 * n ** 3 / t / 1e12


def add_gbps(fw, n, cfg):
    x, y = fw.randn((n,), "float32"), fw.randn((n,), "float32")
    t = gpu_time(lambda: x + y, fw.sync, cfg["add_number"], cfg["repeat"])
    del x, y
    fw.release()
    return 3 * 4 * n / t / 1e9


def mlp_ms(fw, cfg):
    model, opt = fw.mlp(T.init_weights())
    xn, yn = T.batch(cfg["batch"])
    x, y = fw.from_numpy(xn), fw.from_numpy(yn)
    t = gpu_time(lambda: fw.step(model, opt, x, y), fw.sync, cfg["mlp_steps"], cfg["repeat"])
    return t * 1e3


def mlp_peak_mib(fw, cfg):
    gc.collect()  # nothing left over from the earlier cases (graphs, peers' arrays) may count
    fw.release()
    model, opt = fw.mlp(T.init_weights())
    xn, yn = T.batch(cfg["batch"])
    x, y = fw.from_numpy(xn), fw.from_numpy(yn)
    for _ in range(2):  # the first steps allocate the gradients and the momentum buffers
        fw.step(model, opt, x, y)
    fw.sync()
    fw.reset_peak()
    fw.step(model, opt, x, y)
    fw.sync()
    peak = fw.max_memory() / 2 ** 20
    del model, opt, x, y
    fw.release()
    return peak


def overhead_us(fw, cfg):
    a, b = fw.ones(1), fw.ones(1)
    t = gpu_time(lambda: a + b, fw.sync, cfg["tiny_number"], cfg["repeat"], warmup=100)
    return t * 1e6


CONFIGS = {
    "full": {"mm": 4096, "add": 10 ** 8, "batch": 512, "repeat": 5, "mm_number": 10, "add_number": 20,
             "mlp_steps": 20, "tiny_number": 10000},
    "quick": {"mm": 256, "add": 10 ** 5, "batch": 512, "repeat": 3, "mm_number": 2, "add_number": 5,
              "mlp_steps": 3, "tiny_number": 200},
}


def cases(cfg):
    """``(name, unit, higher_is_better, {framework: measure}, target_peer, target)`` for each case."""
    mm, n = cfg["mm"], cfg["add"]
    out = []
    for dtype in ("float32", "float16"):
        out.append((f"matmul {mm}x{mm} {dtype}", "TFLOP/s", True,
                    {f: (lambda fw, dtype=dtype: matmul_tflops(fw, mm, dtype, cfg)) for f in ("tensorplug", "cupy",
                                                                                             "torch")},
                    "cupy", 0.9))
    out.append((f"x + y float32[{n:.0e}]", "GB/s", True,
                {f: (lambda fw: add_gbps(fw, n, cfg)) for f in ("tensorplug", "cupy", "torch")}, "cupy", 0.9))
    out.append((f"MLP SGD step, batch {cfg['batch']}", "ms", False,
                {f: (lambda fw: mlp_ms(fw, cfg)) for f in ("tensorplug", "torch")}, "torch", 1.5))
    out.append(("a + b float32[1] (overhead)", "us/op", False,
                {f: (lambda fw: overhead_us(fw, cfg)) for f in ("tensorplug", "cupy", "torch")}, "torch", 2.0))
    out.append((f"MLP step peak memory, b{cfg['batch']}", "MiB", False,
                {f: (lambda fw: mlp_peak_mib(fw, cfg)) for f in ("tensorplug", "torch")}, "torch", 1.2))
    return out


def fmt(v, width):
    if v is None:
        return f"{'-':>{width}}"
    if isinstance(v, str):
        return f"{v:>{width}}"
    return f"{v:>{width}.3g}" if abs(v) < 1000 else f"{v:>{width}.0f}"


def versions(peers):
    parts = [f"tensorplug {tp.__version__}", f"numpy {np.__version__}"]
    if "cupy" in peers:
        parts.append(f"cupy {peers['cupy'].cp.__version__}")
    if "torch" in peers:
        parts.append(f"torch {peers['torch'].torch.__version__}")
    return "; ".join(parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few repeats (a smoke run)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)

    reason = cuda_unavailable_reason()
    if reason is not None:
        print(f"tensorplug CUDA benchmark skipped: no CUDA device for tensorplug ({reason})")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"available": False, "reason": reason}, f, indent=2)
        return 0

    sim = simulated()
    if sim:
        print("=" * 78)
        print("SIMULATED: TENSORPLUG_CUDA_SIMULATE is set, numpy on the CPU stands in for cupy.")
        print("These figures are a simulation on numpy, NOT GPU figures; GPU peers are skipped.")
        print("=" * 78)
    cfg = CONFIGS["quick" if args.quick else "full"]
    frameworks = {"tensorplug": Tensorplug()}
    missing = {}
    for name, load in (("cupy", load_cupy), ("torch", load_torch)):
        fw, why = load()
        if fw is None:
            missing[name] = why
        else:
            frameworks[name] = fw
    print(versions(frameworks))
    try:
        print(f"tensorplug.cuda: {tp.cuda.device_count()} device(s), {tp.cuda.get_device_name()}")
    except Exception as e:
        print(f"tensorplug.cuda: {tp.cuda.device_count()} device(s) (name: {type(e).__name__}: {e})")
    for name, why in missing.items():
        print(f"{name}: n/a ({why})")

    hdr = (f"{'case':<34}{'unit':>8}{'tplug':>10}{'cupy':>10}{'torch':>10}"
           f"{'tp/cupy':>9}{'tp/torch':>9}{'target':>14}{'':>6}")
    print(hdr)
    print("-" * len(hdr))
    rows = []
    failed = False
    for name, unit, higher, measures, peer, target in cases(cfg):
        vals, errors = {}, {}
        for fname in ("tensorplug", "cupy", "torch"):
            if fname not in measures:
                continue
            if fname not in frameworks:
                errors[fname] = missing[fname]
                continue
            try:
                vals[fname] = measures[fname](frameworks[fname])
            except Exception as e:
                errors[fname] = f"{type(e).__name__}: {e}"
                if fname == "tensorplug":
                    failed = True
        tpv = vals.get("tensorplug")
        ratios = {p: (tpv / vals[p] if tpv is not None and vals.get(p) else None) for p in ("cupy", "torch")}
        r = ratios[peer]
        verdict = None if r is None else (r >= target if higher else r <= target)
        target_s = f"{peer}{'>=' if higher else '<='}{target:g}"
        cells = [fmt(vals.get(f), 10) if f in measures else fmt(None, 10) for f in ("tensorplug", "cupy", "torch")]
        mark = "" if verdict is None else ("ok" if verdict else "MISS")
        print(f"{name:<34}{unit:>8}{''.join(cells)}{fmt(ratios['cupy'], 9)}{fmt(ratios['torch'], 9)}"
              f"{target_s:>14}{mark:>6}")
        for fname, why in errors.items():
            if fname not in missing:
                print(f"    {fname}: n/a ({why})")
        rows.append({"case": name, "unit": unit, "higher_is_better": higher, "values": vals,
                     "errors": errors, "ratio_cupy": ratios["cupy"], "ratio_torch": ratios["torch"],
                     "target": {"peer": peer, "op": ">=" if higher else "<=", "value": target},
                     "meets_target": verdict})
    if sim:
        print("(simulated on numpy: NOT GPU figures)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"available": True, "simulated": sim, "quick": args.quick, "config": cfg,
                       "versions": versions(frameworks), "peers_missing": missing, "cases": rows}, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
