"""Choosing scales and zero points from observed ranges, as PyTorch does.

- :func:`choose_qparams`: the dynamic path's choice for one tensor (what ``quantize_dynamic``'s
  Linear does on each call, and ``quantize_per_tensor_dynamic``): the range widened to hold 0, the
  scale in float64 and the zero point taken from whichever end loses less, rounded half to even;
- :func:`calculate_qparams`: the observers' choice (``MinMaxObserver`` and friends), in float32,
  affine or symmetric, per tensor or per channel.
"""

from __future__ import annotations

import math
import struct

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)
_SMALL_SCALE = 6.1e-5


_F32 = struct.Struct("f")


def _f32(x):
    """``x`` rounded to float32, as a Python float (cheaper than numpy scalars on this per-call path);
    OverflowError beyond float32's range."""
    return _F32.unpack(_F32.pack(x))[0]


def choose_qparams(mn, mx, qmin, qmax):
    """``(scale, zero_point)`` for values in ``[mn, mx]`` mapped onto ``[qmin, qmax]`` (Python numbers)."""
    mn, mx = min(_f32(mn), 0.0), max(_f32(mx), 0.0)
    scale = (mx - mn) / (qmax - qmin)
    try:
        usable = _f32(scale) != 0 and math.isfinite(_f32(1.0 / _f32(scale)))
    except (OverflowError, ZeroDivisionError):  # beyond float32's range either way
        usable = False
    if not usable:
        scale = 0.1
    if scale < _SMALL_SCALE:
        # tiny ranges: widen them so the scale is representable (and its inverse finite); the range
        # ends are float32 here, as in PyTorch's kernel
        amplifier = _SMALL_SCALE / scale if scale else 0.0
        scale = _f32(_SMALL_SCALE)
        if mn == 0:
            mx = _f32(scale * (qmax - qmin))
        elif mx == 0:
            mn = _f32(-scale * (qmax - qmin))
        else:
            mn, mx = _f32(mn * amplifier), _f32(mx * amplifier)
    from_min = qmin - mn / scale
    from_max = qmax - mx / scale
    err_min = abs(qmin) - abs(mn / scale)
    err_max = abs(qmax) - abs(mx / scale)
    initial = from_min if err_min < err_max else from_max
    if initial < qmin:
        zp = qmin
    elif initial > qmax:
        zp = qmax
    else:
        zp = round(initial)  # Python's round is half to even, as nearbyint
    return _f32(scale), int(zp)


def calculate_qparams(min_val, max_val, qmin, qmax, symmetric=False, unsigned=False, float_qparams=False):
    """Observer parameters for float32 arrays (or scalars) ``min_val`` / ``max_val``: float32 scales and int64
    zero points, as PyTorch's ``UniformQuantizationObserverBase._calculate_qparams``."""
    min_val = np.asarray(min_val, np.float32)
    max_val = np.asarray(max_val, np.float32)
    eps = np.float32(EPS32)
    min_neg = np.minimum(min_val, np.float32(0))
    max_pos = np.maximum(max_val, np.float32(0))
    if float_qparams:
        scale = ((max_val - min_val) / np.float32(qmax - qmin)).astype(np.float32)
        scale = np.where(scale > eps, scale, np.float32(1)).astype(np.float32)
        return scale, (-1 * min_val / scale).astype(np.float32)
    if symmetric:
        max_pos = np.maximum(-min_neg, max_pos)
        scale = np.maximum((max_pos / np.float32((qmax - qmin) / 2)).astype(np.float32), eps)
        zp = np.full(scale.shape, 128 if unsigned and (qmin, qmax) == (0, 255) else
                     ((qmin + qmax) // 2 if unsigned else 0), np.int64)
    else:
        scale = np.maximum(((max_pos - min_neg) / np.float32(qmax - qmin)).astype(np.float32), eps)
        zp = qmin - np.rint(min_neg / scale).astype(np.int64)
        zp = np.clip(zp, qmin, qmax).astype(np.int64)
    return scale.astype(np.float32), zp
