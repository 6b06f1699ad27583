"""Packing unsigned 4-bit values two to a byte (``quint4x2``), low nibble first."""

from __future__ import annotations

import numpy as np

# a byte's two 4-bit values (low nibble first) as float32, for unpacking with one gather
_NIBBLES = np.stack([np.arange(256) & 15, np.arange(256) >> 4], axis=1).astype(np.float32)


def pack_int4(values):
    """uint8 array ``(N, K)`` of values in [0, 15] -> ``(N, ceil(K / 2))`` bytes, low nibble first."""
    n, k = values.shape
    if k % 2:
        values = np.concatenate([values, np.zeros((n, 1), values.dtype)], axis=1)
    v = values.astype(np.uint8)
    return (v[:, 0::2] | (v[:, 1::2] << 4)).astype(np.uint8)


def unpack_int4(packed, k):
    """The inverse of :func:`pack_int4`, as float32 ``(N, k)``."""
    return _NIBBLES[packed].reshape(packed.shape[0], -1)[:, :k]
