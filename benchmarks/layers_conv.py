"""Convolution layers: forward + backward of conv2d and conv_transpose2d against PyTorch eager and a
hand-written numpy im2col (one GEMM each way), in one run.

Usage: ``OPENBLAS_NUM_THREADS=1 python benchmarks/layers_conv.py [--quick] [--json PATH]``

Each case runs the layer forward, then backward with a fixed upstream gradient, with the input and the
weight requiring grad. The numpy column is the floor: the columns of a strided view, one GEMM for the
output and two for the gradients (conv_transpose2d: its forward is conv2d's input gradient).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
from numpy.lib.stride_tricks import as_strided

import tensorplug as tp
import tensorplug.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import best_time  # noqa: E402  (the benchmarks' one timer)

try:
    import torch
    torch.set_num_threads(1)  # numpy runs with OPENBLAS_NUM_THREADS=1 too
except ImportError:  # PyTorch is an optional peer
    torch = None


def _cols(xp, k, s, ho, wo):
    n, c = xp.shape[:2]
    sn, sc, sh, sw = xp.strides
    return as_strided(xp, (c, k, k, n, ho, wo), (sc, sh, sw, sn, sh * s, sw * s)).reshape(c * k * k, n * ho * wo)


def _col2im(cols, shape, k, s, p, hi, wi):
    """Adds the columns (C*k*k, N*hi*wi) back into a zero (N, C, H, W) image padded by ``p``."""
    n, c, h, w = shape
    buf = np.zeros((c, n, h + 2 * p, w + 2 * p), cols.dtype)
    v = cols.reshape(c, k, k, n, hi, wi)
    for i in range(k):
        for j in range(k):
            buf[:, :, i:i + s * (hi - 1) + 1:s, j:j + s * (wi - 1) + 1:s] += v[:, i, j]
    return buf[:, :, p:p + h, p:p + w].transpose(1, 0, 2, 3)


def numpy_conv2d_fwd_bwd(x, w, g, s, p):
    n, c, h, wd = x.shape
    o, _, k, _ = w.shape
    ho, wo = g.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    cols = _cols(xp, k, s, ho, wo)
    y = (w.reshape(o, -1) @ cols).reshape(o, n, ho, wo).transpose(1, 0, 2, 3).copy()
    g2 = g.transpose(1, 0, 2, 3).reshape(o, -1)
    gw = g2 @ cols.T
    gx = _col2im(w.reshape(o, -1).T @ g2, x.shape, k, s, p, ho, wo).copy()
    return y, gw, gx


def numpy_conv_transpose2d_fwd_bwd(x, w, g, s, p):
    n, c, h, wd = x.shape
    _, o, k, _ = w.shape
    ho, wo = g.shape[2:]
    x2 = x.transpose(1, 0, 2, 3).reshape(c, -1)
    y = _col2im(w.reshape(c, -1).T @ x2, (n, o, ho, wo), k, s, p, h, wd).copy()
    cols = _cols(np.pad(g, ((0, 0), (0, 0), (p, p), (p, p))), k, s, h, wd)
    gx = (w.reshape(c, -1) @ cols).reshape(c, n, h, wd).transpose(1, 0, 2, 3).copy()
    gw = x2 @ cols.T
    return y, gw, gx


CASES = [
    # name, transposed, input shape, weight shape, stride, padding
    ("conv2d 32x1x28x28 -> 32, 3x3 p1", False, (32, 1, 28, 28), (32, 1, 3, 3), 1, 1),
    ("conv2d 8x64x16x16 -> 128, 3x3 s2 p1", False, (8, 64, 16, 16), (128, 64, 3, 3), 2, 1),
    ("conv_t2d 16x128x8x8 -> 64, 4x4 s2 p1", True, (16, 128, 8, 8), (128, 64, 4, 4), 2, 1),
    ("conv_t2d 16x64x16x16 -> 3, 4x4 s2 p1", True, (16, 64, 16, 16), (64, 3, 4, 4), 2, 1),
]


def run_case(transposed, xs, ws, s, p):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(xs).astype(np.float32)
    wa = (rng.standard_normal(ws) * 0.1).astype(np.float32)
    x = tp.from_numpy(a.copy()).requires_grad_()
    w = tp.from_numpy(wa.copy()).requires_grad_()
    fn = F.conv_transpose2d if transposed else F.conv2d
    out_shape = fn(x.detach(), w.detach(), None, s, p).shape
    ga = rng.standard_normal(out_shape).astype(np.float32)
    g = tp.from_numpy(ga)

    def tp_step():
        x.grad = w.grad = None
        fn(x, w, None, s, p).backward(g)

    np_fn = numpy_conv_transpose2d_fwd_bwd if transposed else numpy_conv2d_fwd_bwd
    times = {"numpy": best_time(lambda: np_fn(a, wa, ga, s, p)), "tensorplug": best_time(tp_step)}
    # the floor computes what tensorplug does
    ny, ngw, ngx = np_fn(a, wa, ga, s, p)
    tp_step()
    np.testing.assert_allclose(w.grad.numpy(), ngw.reshape(ws), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(x.grad.numpy(), ngx, rtol=1e-3, atol=1e-3)
    if torch is not None:
        tx = torch.from_numpy(a.copy()).requires_grad_()
        tw = torch.from_numpy(wa.copy()).requires_grad_()
        tg = torch.from_numpy(ga)
        tfn = torch.nn.functional.conv_transpose2d if transposed else torch.nn.functional.conv2d

        def torch_step():
            tx.grad = tw.grad = None
            tfn(tx, tw, None, s, p).backward(tg)
        times["torch"] = best_time(torch_step)
    return times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the first case only")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    print(f"numpy {np.__version__}; torch {torch.__version__ if torch else 'not installed'}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '-')}")
    hdr = f"{'forward + backward':<40}{'numpy us':>11}{'tplug us':>11}{'torch us':>11}{'tp/np':>8}{'tp/torch':>9}"
    print(hdr)
    print("-" * len(hdr))
    rows = []
    for name, transposed, xs, ws, s, p in CASES[:1] if args.quick else CASES:
        t = run_case(transposed, xs, ws, s, p)
        tq = t.get("torch")
        rows.append({"case": name, **{k + "_us": v * 1e6 for k, v in t.items()},
                     "ratio_numpy": t["tensorplug"] / t["numpy"], "ratio_torch": t["tensorplug"] / tq if tq else None})
        tq_s = f"{tq * 1e6:11.1f}" if tq else f"{'-':>11}"
        rt = f"{t['tensorplug'] / tq:9.2f}" if tq else f"{'-':>9}"
        print(f"{name:<40}{t['numpy'] * 1e6:11.1f}{t['tensorplug'] * 1e6:11.1f}{tq_s}"
              f"{t['tensorplug'] / t['numpy']:8.2f}{rt}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
