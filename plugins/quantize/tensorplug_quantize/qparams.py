"""Choosing scales and zero points from observed ranges, as PyTorch does.

- :func:`choose_qparams`: the dynamic path's choice for one tensor (what ``quantize_dynamic``'s
  Linear does on each call, and ``quantize_per_tensor_dynamic``): the range widened to hold 0, the
  scale in float64 and the zero point taken from whichever end loses less, rounded half to even;
- :func:`calculate_qparams`: the observers' choice (``MinMaxObserver`` and friends), in float32,
  affine or symmetric, per tensor or per channel.
"""

from __future__ import annotations

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)
_SMALL_SCALE = 6.1e-5


def choose_qparams(mn, mx, qmin, qmax):
    """``(scale, zero_point)`` for values in ``[mn, mx]`` mapped onto ``[qmin, qmax]`` (Python numbers)."""
    mn, mx = min(float(np.float32(mn)), 0.0), max(float(np.float32(mx)), 0.0)
    scale = (mx - mn) / (qmax - qmin)
    if np.float32(scale) == 0 or not np.isfinite(np.float32(1.0) / np.float32(scale)):
        scale = 0.1
    if scale < _SMALL_SCALE:
        # tiny ranges: widen them so the scale is representable (and its inverse finite)
        scale = _SMALL_SCALE
        if mn == 0:
            mx = scale * (qmax - qmin)
        elif mx == 0:
            mn = -scale * (qmax - qmin)
        else:
            amplifier = _SMALL_SCALE / ((mx - mn) / (qmax - qmin))
            mn, mx = mn * amplifier, mx * amplifier
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
        zp = int(np.rint(initial))
    return float(np.float32(scale)), int(zp)


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
