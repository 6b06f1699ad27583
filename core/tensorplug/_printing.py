"""``repr`` of tensors, close to PyTorch's ``tensor([...])`` format."""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt

_OPTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, sci_mode=None):
    """Set how tensors print (same keywords as PyTorch)."""
    for k, v in dict(precision=precision, threshold=threshold, edgeitems=edgeitems,
                     linewidth=linewidth).items():
        if v is not None:
            _OPTS[k] = v
    _OPTS["sci_mode"] = sci_mode


def _fmt_floats(flat):
    finite = flat[np.isfinite(flat)]
    p = _OPTS["precision"]
    if finite.size and np.all(finite == np.round(finite)) and np.max(np.abs(finite), initial=0) < 1e8:
        return lambda v: ("nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")) if not np.isfinite(v) \
            else f"{v:.0f}."
    amax = np.max(np.abs(finite), initial=0) if finite.size else 0
    amin = np.min(np.abs(finite[finite != 0]), initial=amax) if finite.size else 0
    sci = _OPTS["sci_mode"]
    if sci is None:
        sci = amax >= 1e8 or (amin != 0 and amin < 1e-4) or (amin != 0 and amax / amin > 1000)
    if sci:
        return lambda v: f"{v:.{p}e}"
    return lambda v: f"{v:.{p}f}"


def _format(arr, dtype):
    if arr.size == 0:
        return "[]"
    if dtype.is_floating_point:
        a64 = arr.astype(np.float64)
        fmt = _fmt_floats(a64.reshape(-1))
        strs = np.vectorize(fmt, otypes=[object])(a64) if a64.ndim else np.array(fmt(float(a64)), dtype=object)
    elif dtype is _dt.bool:
        strs = np.vectorize(lambda v: "True" if v else "False", otypes=[object])(arr)
    else:
        strs = np.vectorize(str, otypes=[object])(arr)
    if arr.ndim == 0:
        return str(strs.item() if hasattr(strs, "item") else strs)
    width = max(len(s) for s in strs.reshape(-1))
    summarize = arr.size > _OPTS["threshold"]
    return _nest(strs, width, 1, summarize)


def _nest(strs, width, depth, summarize):
    e = _OPTS["edgeitems"]
    n = strs.shape[0]
    idx = list(range(n)) if not summarize or n <= 2 * e else list(range(e)) + [None] + list(range(n - e, n))
    if strs.ndim == 1:
        items = ["..." if i is None else strs[i].rjust(width) for i in idx]
        per_line = max(1, (_OPTS["linewidth"] - 8) // (width + 2))
        lines = [", ".join(items[k:k + per_line]) for k in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (7 + depth)).join(lines) + "]"
    parts = ["..." if i is None else _nest(strs[i], width, depth + 1, summarize) for i in idx]
    sep = "," + "\n" * (strs.ndim - 1) + " " * (7 + depth)
    return "[" + sep.join(parts) + "]"


def tensor_repr(t):
    arr = t._host()
    body = _format(arr, t._dtype)
    extras = []
    if t._device.type != "cpu":
        extras.append(f"device='{t._device}'")
    default_for_kind = _dt.get_default_dtype() if t._dtype.is_floating_point else (
        _dt.int64 if t._dtype.category == _dt.INTEGRAL else _dt.bool)
    if t._dtype is not default_for_kind or arr.size == 0 and t._dtype is not _dt.get_default_dtype():
        extras.append(f"dtype={t._dtype!r}")
    if arr.size == 0 and arr.ndim != 1:
        extras.insert(0, f"size={tuple(t._shape)}")
    if t._grad_fn is not None:
        extras.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + x for x in extras) + ")"
