"""Argument helpers shared by layers and ``nn.functional``: ``_single``, ``_pair`` (PyTorch's names)."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")


def _reverse_repeat_tuple(t, n):
    """``(a, b)`` -> ``(b, b, a, a)`` for n=2: per-dim padding in F.pad's last-dim-first order."""
    return tuple(x for x in reversed(t) for _ in range(n))
