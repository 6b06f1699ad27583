"""Batching rules of the scans and order statistics (cumprod, cummax/cummin, logcumsumexp, median,
nanmedian, mode, kthvalue): each names one per-example dim, shifted past the batch dim.
The pointwise special functions get theirs from their tag; the global median/nanmedian use the
slow loop."""

from __future__ import annotations

from .rules import RULES, dim_shift

RULES.update({
    "cumprod": dim_shift(1),
    "logcumsumexp": dim_shift(1),
    "cummax": dim_shift(1, nout=2),
    "cummin": dim_shift(1, nout=2),
    "median.dim": dim_shift(1, nout=2),
    "nanmedian.dim": dim_shift(1, nout=2),
    "mode": dim_shift(1, nout=2),
    "kthvalue": dim_shift(2, nout=2),
})
