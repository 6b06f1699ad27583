"""``repr`` of tensors in PyTorch's ``tensor([...])`` format.

The layout follows PyTorch's ``_tensor_str``: one formatter per tensor picks
integer mode (``1.``), fixed point (``1.0000``) or scientific notation
(``1.0000e-05``) from the nonzero finite values and pads every element to a
common width; rows wrap at ``linewidth``; tensors with more than
``threshold`` elements print only ``edgeitems`` at each edge with ``...``.
As in PyTorch, a summarised tensor is cut down to the elements shown (views
of its edges) before anything reaches the host, and the formatter decides
from those alone, so printing a huge tensor costs what printing a small one does.
"""

from __future__ import annotations

import math

import numpy as np

from . import _state
from . import dtypes as _dt

_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
_PROFILES = {"default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
             "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
             "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80}}
_OPTS = dict(_DEFAULTS)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """Set how tensors print (PyTorch's keywords).

    ``profile`` is ``"default"``, ``"short"`` or ``"full"`` (never summarise);
    the other keywords override it. ``sci_mode`` True/False forces or forbids
    scientific notation; None (the default, reset by every call) chooses
    automatically.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"unknown print profile {profile!r}; expected one of {sorted(_PROFILES)}")
        _OPTS.update(_PROFILES[profile])
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            _OPTS[k] = v
    _OPTS["sci_mode"] = sci_mode


def get_printoptions():
    """The current print options as a dict."""
    return dict(_OPTS)


class _Formatter:
    """Chooses one notation and width for all elements of a tensor (PyTorch's ``_Formatter``)."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = _OPTS["precision"]
        if not floating:
            flat = values.reshape(-1)
            if flat.size:
                if values.dtype == np.bool_:
                    self.max_width = 5 if not flat.all() else 4
                else:
                    self.max_width = max(len(str(flat.min())), len(str(flat.max())))
        else:
            flat = values.reshape(-1)
            vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
            if vals.size:
                absv = np.abs(vals)
                vmin, vmax = float(absv.min()), float(absv.max())
                self.int_mode = bool(np.all(vals == np.ceil(vals)))
                sci = _OPTS["sci_mode"]
                self.sci_mode = (vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4) if sci is None else sci
                if self.sci_mode:
                    widths = (len(f"{v:.{p}e}") for v in vals)
                elif self.int_mode:
                    widths = (len(f"{v:.0f}") + 1 for v in vals)  # + 1 for the trailing "."
                else:
                    widths = (len(f"{v:.{p}f}") for v in vals)
                self.max_width = max(self.max_width, max(widths))

    def format(self, value):
        if self.floating:
            p = _OPTS["precision"]
            if self.sci_mode:
                s = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{value:.0f}"
                if math.isfinite(value):
                    s += "."
            else:
                s = f"{value:.{p}f}"
        elif isinstance(value, bool):
            s = "True" if value else "False"
        else:
            s = str(value)
        return " " * (self.max_width - len(s)) + s


class _ComplexFormatter:
    """Complex values as PyTorch prints them: one formatter for the real parts, one for the imaginary."""

    def __init__(self, values):
        self.real = _Formatter(values.real, True)
        self.imag = _Formatter(values.imag, True)
        self.max_width = self.real.max_width + self.imag.max_width + 1  # + 1 for the "j"

    def format(self, value):
        re = self.real.format(value.real)
        im = (self.imag.format(value.imag) + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im


def _shown(t):
    """A host copy of just the elements a summarised print shows (PyTorch's ``get_summarized_data``).

    Every dim longer than ``2 * edgeitems`` is cut to its first and last ``edgeitems`` with
    ``narrow`` (views, nothing copied) before the pieces reach the host, so the cost does not
    grow with the tensor.
    """
    e = _OPTS["edgeitems"]

    def edges(x, d):
        if d == len(x._shape):
            return x._host("printing a tensor")
        n = x._shape[d]
        if n <= 2 * e:
            return edges(x, d + 1)
        return np.concatenate([edges(x.narrow(d, 0, e), d + 1), edges(x.narrow(d, n - e, e), d + 1)], axis=d)

    return edges(t.detach(), 0)


def _vector(arr, n, indent, summarize, fmt):
    """One row: ``arr`` holds its ``n`` elements, or only the edges when ``summarize`` cut it."""
    e = _OPTS["edgeitems"]
    width = fmt.max_width + 2
    per_line = max(1, int(math.floor((_OPTS["linewidth"] - indent) / width)))
    vals = arr.tolist()
    if summarize and n > 2 * e:
        data = [fmt.format(v) for v in vals[:e]] + [" ..."] + [fmt.format(v) for v in vals[e:]]
    else:
        data = [fmt.format(v) for v in vals]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(arr, shape, indent, summarize, fmt):
    """The bracketed text of a tensor of ``shape`` whose shown elements are ``arr``."""
    if not shape:
        return fmt.format(arr.item())
    if len(shape) == 1:
        return _vector(arr, shape[0], indent, summarize, fmt)
    e = _OPTS["edgeitems"]
    n = shape[0]
    if summarize and n > 2 * e:
        parts = ([_nested(arr[i], shape[1:], indent + 1, summarize, fmt) for i in range(e)] + ["..."]
                 + [_nested(arr[i], shape[1:], indent + 1, summarize, fmt) for i in range(e, 2 * e)])
    else:
        parts = [_nested(arr[i], shape[1:], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (len(shape) - 1) + " " * (indent + 1)).join(parts) + "]"


def _host_values(arr, dtype):
    """Values to format: half types widen to float32 (their Python floats print the same)."""
    if dtype.is_floating_point and dtype.itemsize < 4:
        return arr.astype(np.float32)
    return arr


def tensor_str(t, indent):
    """The bracketed body of ``repr(t)`` (what ``str`` of a tensor's values looks like)."""
    if t.numel() == 0:
        return "[]"
    summarize = t.numel() > _OPTS["threshold"]
    if summarize and not _OPTS["edgeitems"]:
        return "[...]"
    shown = _host_values(_shown(t) if summarize else t._host("printing a tensor"), t._dtype)
    if t._dtype.is_complex:
        fmt = _ComplexFormatter(shown)
    else:
        fmt = _Formatter(shown, t._dtype.is_floating_point)
    return _nested(shown, tuple(t._shape), indent, summarize, fmt)


def _add_suffixes(body, suffixes, indent):
    out = [body]
    last_line_len = len(body) - body.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _OPTS["linewidth"]:
            out.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last_line_len += len(suffix) + 2
    out.append(")")
    return "".join(out)


def _uninitialized(t):
    """Whether ``t`` lacks the fields every tensor has (made by ``object.__new__``, or a subclass whose
    ``__init__`` failed): its repr must still not raise."""
    try:
        t._shape, t._dtype, t._device  # set together with the data, by every constructor
    except AttributeError:
        return True
    return False


def tensor_repr(t):
    """``repr(t)``: ``tensor([...])`` with PyTorch's suffixes (device, dtype, size, grad)."""
    if _uninitialized(t):
        cls = type(t)
        name = "tensorplug.Tensor" if cls.__name__ == "Tensor" and cls.__module__ == "tensorplug.tensor" else \
            f"{cls.__module__}.{cls.__qualname__}"
        return f"<{name} object at {id(t):#x} (uninitialized)>"
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t._device.type != _state.default_device.type or t._device.index not in (None, 0):
        suffixes.append(f"device='{t._device}'")
    if t.numel() == 0:
        if len(t._shape) != 1:
            suffixes.append(f"size={tuple(t._shape)}")
        if t._dtype is not _dt.get_default_dtype():
            suffixes.append(f"dtype={t._dtype!r}")
        body = "[]"
    else:
        if not _OPTS["edgeitems"]:
            suffixes.append(f"size={tuple(t._shape)}")
        if t._dtype not in (_dt.get_default_dtype(), _dt.get_default_complex_dtype(), _dt.int64, _dt.bool):
            suffixes.append(f"dtype={t._dtype!r}")
        body = tensor_str(t, indent)
    grad_fn = t._grad_fn
    if grad_fn is not None:
        name = grad_fn.name() if callable(getattr(grad_fn, "name", None)) else type(grad_fn).__name__
        suffixes.append(f"grad_fn=<{name}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)


def text_table(header, rows, indent=""):
    """Rows as left-aligned columns under ``header``."""
    rows = [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows])
