"""Per-layer accuracy of a quantized model against its float original (``tensorplug.quantization.report``).

Both models run on the same sample with a forward hook on every submodule; outputs are matched by
module name, quantized ones dequantized, and each row gives the signal-to-quantization-noise ratio
``10 * log10(sum(ref^2) / sum((ref - q)^2))`` in dB (``inf`` where the outputs are identical) and the
largest absolute difference. The last row, ``(output)``, compares the models' outputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import tensorplug
from tensorplug import Tensor


@dataclass(frozen=True)
class ReportRow:
    """One layer: its name, the quantized model's module type there, the output shape, the SQNR (dB)
    and the largest absolute error."""

    name: str
    module: str
    shape: tuple
    sqnr_db: float
    max_abs_err: float


def _array(t):
    if getattr(t, "is_quantized", False):
        t = t.dequantize()
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    return np.asarray(t.numpy(), np.float64)


def sqnr(ref, q):
    """``10 * log10(sum(ref^2) / sum((ref - q)^2))`` in dB for arrays of the same shape (``inf`` when equal)."""
    ref = np.asarray(ref, np.float64)
    noise = float(((ref - np.asarray(q, np.float64)) ** 2).sum())
    signal = float((ref ** 2).sum())
    if noise == 0:
        return math.inf
    if signal == 0:
        return -math.inf
    return 10.0 * math.log10(signal / noise)


def _capture(model, sample):
    outputs, handles = {}, []
    for name, mod in model.named_modules():
        if not name:
            continue

        def hook(m, args, out, name=name):
            if isinstance(out, Tensor) and name not in outputs:
                outputs[name] = (type(m).__name__ if not hasattr(m, "_get_name") else m._get_name(), _array(out))
        handles.append(mod.register_forward_hook(hook))
    try:
        with tensorplug.no_grad():
            out = model(sample)
    finally:
        for h in handles:
            h.remove()
    return outputs, out


class QuantizationReport:
    """The rows of :func:`report` (``rows``, iterable, indexable by layer name); ``str()`` / ``table()``
    give an aligned table."""

    def __init__(self, rows):
        self.rows = list(rows)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, key):
        if isinstance(key, str):
            for r in self.rows:
                if r.name == key:
                    return r
            raise KeyError(key)
        return self.rows[key]

    def names(self):
        """The layer names, in execution order."""
        return [r.name for r in self.rows]

    def table(self):
        """An aligned text table: layer, module, shape, SQNR (dB), max abs error."""
        head = ("layer", "module", "shape", "SQNR (dB)", "max abs err")
        body = [(r.name, r.module, "x".join(str(s) for s in r.shape) or "scalar",
                 "inf" if r.sqnr_db == math.inf else f"{r.sqnr_db:.2f}", f"{r.max_abs_err:.4g}") for r in self.rows]
        widths = [max(len(row[i]) for row in [head] + body) for i in range(len(head))]
        right = (False, False, False, True, True)

        def fmt(row):
            return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right)).rstrip()
        lines = [fmt(head), "  ".join("-" * w for w in widths)] + [fmt(b) for b in body]
        return "\n".join(lines)

    def __str__(self):
        return self.table()

    def __repr__(self):
        return f"QuantizationReport({len(self.rows)} rows)"


def report(model_fp32, model_q, sample):
    """Run ``model_fp32`` and ``model_q`` on ``sample`` and compare, layer by layer (submodules of the
    same name whose outputs have the same shape), and the final outputs. A fused quantized layer
    (``LinearReLU``, ``ConvReLU2d``) compared with an unfused float layer is compared with the ReLU of
    its output. Works for the results of
    ``quantize_dynamic``, ``quantize_`` and ``convert``: quantized outputs are dequantized."""
    ref, ref_out = _capture(model_fp32, sample)
    got, got_out = _capture(model_q, sample)
    rows = []
    for name, (kind, q) in got.items():
        if name not in ref:
            continue
        r = ref[name][1]
        if r.shape != q.shape:
            continue
        if "ReLU" in kind and "ReLU" not in ref[name][0]:
            r = np.maximum(r, 0)  # a fused Linear/Conv + ReLU against the float model's unfused layer
        err = float(np.abs(r - q).max()) if r.size else 0.0
        rows.append(ReportRow(name, kind, tuple(r.shape), sqnr(r, q), err))
    if isinstance(ref_out, Tensor) and isinstance(got_out, Tensor):
        r, q = _array(ref_out), _array(got_out)
        if r.shape == q.shape:
            err = float(np.abs(r - q).max()) if r.size else 0.0
            rows.append(ReportRow("(output)", type(model_q).__name__, tuple(r.shape), sqnr(r, q), err))
    return QuantizationReport(rows)


__all__ = ["report", "QuantizationReport", "ReportRow", "sqnr"]
