"""Exact integer matrix products on float BLAS.

numpy has no fast integer GEMM (an int32 product of 512^3 takes about 50x a float32 one), but a
float32 product of integer-valued operands is exact while every partial sum stays below 2^24:
``K * max|a| * max|b| <= 2^24``. :func:`int_matmul` splits the reduction dimension into blocks that
satisfy that bound, multiplies each block in float32 and sums the (exact, integer) block results in
int32, as an integer GEMM would. For full-range int8 x int8 a block is 1024 wide; for the 7-bit
activations of PyTorch's dynamic linear times int8 weights, 1032; for uint8 x int8, 514.

Zero points are applied afterwards from row and column sums (:func:`affine_matmul`), so the
operands stay in their narrow ranges and the blocks stay wide.
"""

from __future__ import annotations

import numpy as np

EXACT = 1 << 24  # float32 represents every integer up to this exactly


def block_size(amax, bmax):
    """The widest reduction block whose float32 partial sums are exact for operands bounded by
    ``amax`` and ``bmax`` in absolute value."""
    return max(1, EXACT // max(1, int(amax) * int(bmax)))


def bound(arr):
    """The largest absolute value ``arr``'s integer dtype can hold (the block size is chosen from it)."""
    info = np.iinfo(arr.dtype)
    return max(abs(int(info.min)), int(info.max))


def matmul(a, b):
    """``a @ b`` of float32 matrices, as ``(b.T @ a.T).T`` (made row-major) when ``a`` has few rows and ``b`` is a
    transposed (column-major) matrix: OpenBLAS is slow on that shape, as the CPU backend's linear knows."""
    if a.ndim == 2 and 1 < a.shape[0] <= 64 and b.flags.f_contiguous and not b.flags.c_contiguous:
        return np.ascontiguousarray((b.T @ a.T).T)
    return a @ b


def int_matmul(a, b, amax=None, bmax=None, out_float=False):
    """``a @ b`` of integer arrays (``(..., M, K) @ (K, N)``), exact, as int32 (or as float32 holding
    the exact integers when ``out_float`` and one block suffices, which saves a conversion).

    ``amax`` / ``bmax`` bound the operands' absolute values (default: their dtypes' ranges). Either
    operand may already be float32 holding integers (then its bound must be given), which saves a
    conversion.
    """
    amax = bound(a) if amax is None else amax
    bmax = (bound(b) if b.dtype.kind in "iu" else 1 << 31) if bmax is None else bmax
    k = a.shape[-1]
    kb = block_size(amax, bmax)
    bf = b if b.dtype == np.float32 else b.astype(np.float32)
    if kb >= k:
        r = matmul(np.asarray(a, np.float32), bf)
        return r if out_float else r.astype(np.int32)
    acc = None
    for start in range(0, k, kb):
        part = matmul(a[..., start:start + kb].astype(np.float32), bf[start:start + kb]).astype(np.int32)
        if acc is None:
            acc = part
        else:
            acc += part
    return acc.astype(np.float32) if out_float else acc


def affine_matmul(a, za, b, zb, amax=None, bmax=None):
    """``(a - za) @ (b - zb)`` exactly, as int64, for integer arrays ``a`` (..., M, K) and ``b`` (K, N);
    ``za`` is an int, ``zb`` an int or an int array of shape (N,) (per output channel)."""
    acc = int_matmul(a, b, amax, bmax).astype(np.int64)
    k = a.shape[-1]
    if za:
        acc -= int(za) * b.sum(axis=0, dtype=np.int64)
    zb = np.asarray(zb, np.int64)
    if zb.any():
        acc -= a.sum(axis=-1, dtype=np.int64)[..., None] * zb
        if za:
            acc += k * int(za) * zb
    return acc
