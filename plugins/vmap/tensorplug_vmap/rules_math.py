"""Batching rules of the scans and order statistics (cumprod, cummax/cummin, logcumsumexp, median,
nanmedian, mode, kthvalue): each names one per-example dim, shifted past the batch dim; the global
median and nanmedian reduce each flattened example. The pointwise special functions get their
rules from their tag, but for the in-place ones PyTorch does not tag."""

from __future__ import annotations

from .rules import RULES, dim_shift, front, wrap_dim, broadcasting, _entry

_reshape = _entry("reshape")
_unsqueeze = _entry("unsqueeze")
_squeeze_dims = _entry("squeeze.dims")


def _order_statistic(dim_pos, keepdim_pos):
    """median.dim, mode, kthvalue...: the dim shifted past the batch dim; a 0-dim example becomes a
    1-element one reduced with keepdim, then that dim is dropped again."""
    def rule(ctx, op, vals, bdims, args):
        v = front(vals[0], bdims[0])
        n = len(v._shape) - 1
        out = list(vals)
        out[dim_pos] = wrap_dim(vals[dim_pos], n) + 1
        if n:
            out[0] = v
            return op.positional(*out), (0, 0)
        out[0], out[keepdim_pos] = _unsqueeze(v, 1), True
        return tuple(_squeeze_dims(r, (1,)) for r in op.positional(*out)), (0, 0)
    return rule


def _flat_order_statistic(by_dim):
    """median()/nanmedian(): each example flattened, then the ``dim`` form over it."""
    op_by_dim = _entry(by_dim)

    def rule(ctx, op, vals, bdims, args):
        v = front(vals[0], bdims[0])
        return op_by_dim(_reshape(v, (v._shape[0], -1)), 1, False)[0], 0
    return rule


RULES.update({
    # elementwise in-place ops PyTorch does not tag pointwise
    "copysign_.Tensor": broadcasting((0, 1), inplace=True),
    "gcd_": broadcasting((0, 1), inplace=True),
    "lcm_": broadcasting((0, 1), inplace=True),
    "cumprod": dim_shift(1),
    "logcumsumexp": dim_shift(1),
    "cummax": dim_shift(1, nout=2),
    "cummin": dim_shift(1, nout=2),
    "median": _flat_order_statistic("median.dim"),
    "nanmedian": _flat_order_statistic("nanmedian.dim"),
    "median.dim": _order_statistic(1, 2),
    "nanmedian.dim": _order_statistic(1, 2),
    "mode": _order_statistic(1, 2),
    "kthvalue": _order_statistic(2, 3),
})
