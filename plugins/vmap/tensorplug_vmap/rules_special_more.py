"""Batching rules of the primitives of ``ops/special_more.py`` that their pointwise tag does not cover:
``frexp`` (two results, each batched like its input) and the histogram kernel (one call per example:
each example has its own bins)."""

from __future__ import annotations

from .rules import RULES, _entry

_select = _entry("select.int")
_stack = _entry("stack")


def frexp_rule(ctx, op, vals, bdims, args):
    """frexp acts per element: both results keep the input's batch dim."""
    return op.positional(*vals), (bdims[0], bdims[0])


def _example(v, bd, i):
    return v if bd is None else _select(v, bd, i)


def histogramdd_rule(ctx, op, vals, bdims, args):
    """_histogramdd_from_bin_tensors: each example's histogram with its own data, bins and weights."""
    self, bins, weight, density = vals
    bself, bbins, bweight, _ = bdims
    bbins = bbins if isinstance(bbins, (list, tuple)) else [None] * len(bins)
    out = []
    for i in range(ctx.size):
        out.append(op.positional(_example(self, bself, i), [_example(b, bd, i) for b, bd in zip(bins, bbins)],
                                 None if weight is None else _example(weight, bweight, i), density))
    return _stack(out, 0), 0


RULES.update({"frexp.Tensor": frexp_rule, "_histogramdd_from_bin_tensors": histogramdd_rule})
