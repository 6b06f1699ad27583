"""Quantized inference: tensorplug-quantize vs tensorplug float32 vs PyTorch (float32 and quantize_dynamic).

A 784-256-256-10 ReLU MLP is trained in float32 on scikit-learn's digits, upsampled to 28x28 (784
pixels), then quantized four ways. For each: weight bytes (the safetensors file of the weights)
against float32's, held-out accuracy, the largest output error against float32 on the held-out
set, and the forward time at batch 32 and 512, as ratios against tensorplug's float32 forward;
PyTorch's ``quantize_dynamic`` and float32 forward on the same weights are printed beside.

Usage: ``python benchmarks/quantize.py [--quick]`` (one thread: OPENBLAS_NUM_THREADS=1, as ``make bench``).
"""

from __future__ import annotations

import argparse
import copy
import io
import os
import sys
import warnings

import numpy as np

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn import functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import best_time  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None


def data(seed=0):
    from sklearn.datasets import load_digits
    d = load_digits()
    x = tp.tensor(d.images, dtype=tp.float32).unsqueeze(1) / 16.0
    x = F.interpolate(x, size=(28, 28), mode="bilinear", align_corners=False).reshape(-1, 784)
    y = tp.tensor(d.target, dtype=tp.int64)
    order = tp.randperm(len(y), generator=tp.Generator().manual_seed(seed))
    test, train = order[:360], order[360:]
    return x[train], y[train], x[test], y[test]


def trained_mlp(x, y, epochs):
    tp.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = tp.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        perm = tp.randperm(len(y))
        for i in range(0, len(y), 32):
            idx = perm[i:i + 32]
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


def weight_bytes(model):
    buf = io.BytesIO()
    tp.save({k: v for k, v in model.state_dict().items() if k.endswith("weight")}, buf)
    return buf.tell()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    xtr, ytr, xte, yte = data()
    model = trained_mlp(xtr, ytr, 2 if args.quick else 8)
    with tp.no_grad():
        ref = model(xte).numpy()
    acc_f = float((ref.argmax(1) == yte.numpy()).mean())
    variants = {"float32": model, "quantize_dynamic": tp.ao.quantization.quantize_dynamic(model)}
    for name, cfg in (("int8 per-token", tp.quantization.Int8DynamicActivationInt8Weight()),
                      ("  group 128", tp.quantization.Int8DynamicActivationInt8Weight(group_size=128)),
                      ("int8 weight-only", tp.quantization.Int8WeightOnly()),
                      ("int4 weight-only", tp.quantization.Int4WeightOnly(group_size=128))):
        m = copy.deepcopy(model)
        tp.quantization.quantize_(m, cfg)
        variants[name] = m
    tmodel = tq = None
    if torch is not None:
        tmodel = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                     torch.nn.ReLU(), torch.nn.Linear(256, 10)).eval()
        with torch.no_grad():
            for p, q in zip(tmodel.parameters(), model.parameters()):
                p.copy_(torch.from_numpy(q.detach().numpy().copy()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tq = torch.ao.quantization.quantize_dynamic(tmodel, {torch.nn.Linear}, dtype=torch.qint8)
    xt = torch.from_numpy(xte.numpy()) if torch is not None else None
    err_torch = None
    if tq is not None:
        with torch.no_grad():
            err_torch = float(np.abs(tq(xt).numpy() - ref).max())
    base = weight_bytes(model)
    batches = (32,) if args.quick else (32, 512)
    xs = {b: tp.from_numpy(np.resize(xte.numpy(), (b, 784)).astype(np.float32)) for b in batches}
    times = {}
    with tp.no_grad():
        for b in batches:
            times["float32", b] = best_time(lambda m=model, x=xs[b]: m(x))
    print(f"digits 28x28, MLP 784-256-256-10, float32 held-out accuracy {acc_f:.2%}")
    head = f"{'variant':<18}{'bytes':>7}{'acc drop':>9}{'max err':>9}{'err/torch':>10}"
    head += "".join(f"{'b=' + str(b) + ' ms':>11}{'/fp32':>7}" for b in batches)
    print(head)
    for name, m in variants.items():
        with tp.no_grad():
            out = m(xte).numpy()
            row = f"{name:<18}{weight_bytes(m) / base:7.3f}"
            row += f"{(acc_f - float((out.argmax(1) == yte.numpy()).mean())) * 100:9.2f}"
            err = float(np.abs(out - ref).max())
            row += f"{err:9.4f}" + (f"{err / err_torch:10.2f}" if err_torch else f"{'-':>10}")
            for b in batches:
                t = times.get((name, b)) or best_time(lambda m=m, x=xs[b]: m(x))
                row += f"{t * 1e3:11.3f}{t / times['float32', b]:7.2f}"
        print(row)
    if torch is not None:
        for name, m in (("torch float32", tmodel), ("torch dynamic", tq)):
            with torch.no_grad():
                out = m(xt).numpy()
                row = f"{name:<18}{'':>7}{(acc_f - float((out.argmax(1) == yte.numpy()).mean())) * 100:9.2f}"
                row += f"{float(np.abs(out - ref).max()):9.4f}{'':>10}"
                for b in batches:
                    xb = torch.from_numpy(xs[b].numpy())
                    t = best_time(lambda m=m, x=xb: m(x))
                    row += f"{t * 1e3:11.3f}{t / times['float32', b]:7.2f}"
            print(row)


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        main()
