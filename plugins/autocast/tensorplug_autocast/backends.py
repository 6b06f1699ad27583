"""What a backend says about autocast on its device, read from its backend record.

A backend record may set (all optional; see docs/autocast.md):

``autocast_dtypes``
    the lower-precision dtypes the device computes in (default: float16 and bfloat16);
``autocast_dtype``
    the default dtype of a region (default: bfloat16 on the CPU, float16 elsewhere, as PyTorch);
``autocast_lists``
    ``"cpu"`` or ``"cuda"``: which of PyTorch's lists the device starts from (default: the CPU's
    for the device type ``cpu``, CUDA's for every other device, the lists PyTorch uses for
    accelerators);
``autocast_policy``
    ``{op name: category or None}``: entries that replace (or, with None, remove) list entries,
    e.g. ``{"exp": "lower_precision_fp"}`` for a device with a native half-precision exp.
"""

from __future__ import annotations

import tensorplug
from tensorplug.plugin_api import backend

from . import policy as _policy


def _record(device_type):
    try:
        return backend(device_type)
    except RuntimeError:
        return None


def backend_available(device_type):
    """Whether some enabled backend serves ``device_type``."""
    rec = _record(device_type)
    return rec is not None and bool(rec.is_available())


def supported_dtypes(device_type):
    rec = _record(device_type)
    declared = getattr(rec, "autocast_dtypes", None) if rec is not None else None
    return tuple(declared) if declared else (tensorplug.float16, tensorplug.bfloat16)


def backend_default_dtype(device_type):
    rec = _record(device_type)
    declared = getattr(rec, "autocast_dtype", None) if rec is not None else None
    if declared is not None:
        return declared
    return tensorplug.bfloat16 if device_type == "cpu" else tensorplug.float16


def default_lists(device_type):
    """``{category: names}`` a device type starts from: PyTorch's lists plus its backend's overrides."""
    rec = _record(device_type)
    base = getattr(rec, "autocast_lists", None) if rec is not None else None
    base = base or ("cpu" if device_type == "cpu" else "cuda")
    if base not in _policy.DEFAULTS:
        raise ValueError(f"backend {device_type!r}: autocast_lists must be 'cpu' or 'cuda', not {base!r}")
    table = {c: set(names) for c, names in _policy.DEFAULTS[base].items()}
    for name, cat in (getattr(rec, "autocast_policy", None) or {}).items():
        for names in table.values():
            names.discard(name)
        if cat is not None:
            if cat not in _policy.CATEGORIES:
                raise ValueError(f"backend {device_type!r}: unknown autocast category {cat!r} for {name!r}")
            table[cat].add(name)
    return {c: frozenset(n) for c, n in table.items()}
