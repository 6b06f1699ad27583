"""CPU kernels of the matrix decompositions and solves, on numpy.linalg.

numpy raises for a singular or non-positive-definite matrix anywhere in a batch; these kernels
return LAPACK's ``info`` per matrix instead (the core turns it into PyTorch's errors): where numpy
fails, a partial-pivoting LU or a Cholesky sweep, vectorized over the batch, finds the first zero
pivot or the first leading minor that is not positive-definite.
"""

from __future__ import annotations

import numpy as np

import tensorplug

from .elementwise import quiet
from .kernels import wrap
from .xp import xp

_int32 = tensorplug.int32
_LinAlgError = xp.linalg.LinAlgError


def _info(arr):
    return wrap(xp.asarray(arr, dtype=xp.int32), _int32)


def _lu_info(a):
    """LAPACK getrf's info per matrix of ``a`` (..., n, n): the 1-based index of the first exactly zero
    pivot of partial-pivoting LU, 0 when there is none."""
    batch = a.shape[:-2]
    n = a.shape[-1]
    u = a.reshape((-1, n, n)).astype(xp.float64 if a.dtype == xp.float64 else a.dtype, copy=True)
    info = xp.zeros(u.shape[0], dtype=xp.int32)
    rows = xp.arange(u.shape[0])
    for j in range(n):
        col = xp.abs(u[:, j:, j])
        p = j + xp.argmax(col, axis=1)
        u[rows, j], u[rows, p] = u[rows, p].copy(), u[rows, j].copy()
        piv = u[:, j, j]
        zero = piv == 0
        info[(info == 0) & zero] = j + 1
        safe = xp.where(zero, 1, piv)
        f = u[:, j + 1:, j] / safe[:, None]
        u[:, j + 1:, j + 1:] -= f[:, :, None] * u[:, j, None, j + 1:]
    return info.reshape(batch)


def _singular(a):
    """Per matrix: LU's info (computed only when numpy says something is singular)."""
    return _lu_info(a)


def inv_ex(A, check_errors=False):
    a = A._data
    d = A._dtype
    try:
        out = xp.linalg.inv(a)
        info = xp.zeros(a.shape[:-2], xp.int32)
    except _LinAlgError:
        info = _singular(a)
        out = xp.full(a.shape, xp.nan, dtype=a.dtype)
        ok = info == 0
        if ok.any():
            out[ok] = xp.linalg.inv(a[ok])
    return wrap(out.astype(d.np, copy=False), d), _info(info)


def solve_ex(A, B):
    a, b = A._data, B._data
    d = A._dtype
    batch = xp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    try:
        out = xp.linalg.solve(a, b)
        info = xp.zeros(batch, xp.int32)
    except _LinAlgError:
        info = _singular(a)
        out = xp.full(b.shape, xp.nan, dtype=b.dtype)
        ok = info == 0
        if ok.any():
            out[ok] = xp.linalg.solve(a[ok], b[ok])
    return wrap(xp.ascontiguousarray(out, dtype=d.np), d), _info(info)


def det(A):
    d = A._dtype
    return wrap(xp.asarray(xp.linalg.det(A._data), dtype=d.np), d)


def slogdet(A):
    d = A._dtype
    sign, logabs = xp.linalg.slogdet(A._data)
    return wrap(xp.asarray(sign, dtype=d.np), d), wrap(xp.asarray(logabs, dtype=d.np), d)


def svd(A, full_matrices=False, compute_uv=True):
    a, d = A._data, A._dtype
    m, n = a.shape[-2:]
    if not compute_uv:
        s = xp.linalg.svd(a, compute_uv=False) if a.size else xp.zeros(a.shape[:-2] + (min(m, n),), a.dtype)
        empty = xp.zeros((0,), d.np)
        return wrap(empty, d), wrap(xp.asarray(s, d.np), d), wrap(empty.copy(), d)
    if a.size:
        u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    else:
        k = min(m, n)
        batch = a.shape[:-2]
        ku, kv = (m, n) if full_matrices else (k, k)
        u = xp.broadcast_to(xp.eye(m, ku, dtype=a.dtype), batch + (m, ku)).copy()
        vh = xp.broadcast_to(xp.eye(kv, n, dtype=a.dtype), batch + (kv, n)).copy()
        s = xp.zeros(batch + (k,), a.dtype)
    return wrap(xp.asarray(u, d.np), d), wrap(xp.asarray(s, d.np), d), wrap(xp.asarray(vh, d.np), d)


def eigh(A, UPLO="L"):
    d = A._dtype
    w, v = xp.linalg.eigh(A._data, UPLO=UPLO.upper())
    return wrap(xp.asarray(w, d.np), d), wrap(xp.asarray(v, d.np), d)


def qr(A, mode="reduced"):
    a, d = A._data, A._dtype
    m, n = a.shape[-2:]
    if a.size == 0:
        k = m if mode == "complete" else min(m, n)
        batch = a.shape[:-2]
        q = xp.broadcast_to(xp.eye(m, k, dtype=a.dtype), batch + (m, k)).copy()
        r = xp.zeros(batch + (k, n), a.dtype)
    elif mode == "r":
        r = xp.linalg.qr(a, mode="r")
        q = None
    else:
        q, r = xp.linalg.qr(a, mode=mode)
    if mode == "r":
        return wrap(xp.zeros((0,), d.np), d), wrap(xp.asarray(r, d.np), d)
    return wrap(xp.asarray(q, d.np), d), wrap(xp.asarray(r, d.np), d)


def _cholesky_info(a):
    """potrf's info per matrix (lower triangle read): the order of the first leading minor that is not
    positive-definite."""
    batch = a.shape[:-2]
    n = a.shape[-1]
    x = a.reshape((-1, n, n))
    lower = xp.zeros_like(x)
    info = xp.zeros(x.shape[0], dtype=xp.int32)
    for j in range(n):
        s = x[:, j, j] - xp.einsum("bk,bk->b", lower[:, j, :j], lower[:, j, :j])
        bad = ~(s > 0)
        info[(info == 0) & bad] = j + 1
        piv = xp.sqrt(xp.where(bad, 1, s))
        lower[:, j, j] = piv
        lower[:, j + 1:, j] = (x[:, j + 1:, j] - xp.einsum("bik,bk->bi", lower[:, j + 1:, :j], lower[:, j, :j])) \
            / piv[:, None]
    return info.reshape(batch)


def cholesky_ex(A, upper=False, check_errors=False):
    a, d = A._data, A._dtype
    x = xp.swapaxes(a, -1, -2) if upper else a  # numpy reads the lower triangle; upper reads A's upper one
    try:
        low = xp.linalg.cholesky(x)
        info = xp.zeros(a.shape[:-2], xp.int32)
    except _LinAlgError:
        info = _cholesky_info(x)
        low = xp.zeros_like(x)
        ok = info == 0
        if ok.any():
            low[ok] = xp.linalg.cholesky(x[ok])
    out = xp.swapaxes(low, -1, -2) if upper else low
    return wrap(xp.ascontiguousarray(out, dtype=d.np), d), _info(info)


def _substitute(a, b, upper):
    """``a x = b`` for triangular ``a`` (..., n, n) by substitution, row by row: inf and NaN where a
    diagonal element is zero, as LAPACK's trsm gives."""
    n = a.shape[-1]
    x = xp.zeros(b.shape, xp.result_type(a, b))
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        rest = b[..., i, :] - xp.einsum("...k,...kj->...j", a[..., i, :], x)
        x[..., i, :] = rest / a[..., i, i, None]
    return x


def solve_triangular(A, B, upper, left=True, unitriangular=False):
    a, b, d = A._data, B._data, A._dtype
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a, b, upper = xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2), not upper
    a = xp.triu(a) if upper else xp.tril(a)
    if unitriangular:
        n = a.shape[-1]
        a = a.copy()
        a[..., range(n), range(n)] = 1
    batch = xp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    if a.size and (xp.diagonal(a, 0, -2, -1) != 0).all():
        x = xp.linalg.solve(a, b)
    else:
        x = _substitute(a, b, upper)
    if not left:
        x = xp.swapaxes(x, -1, -2)
    return wrap(xp.ascontiguousarray(x, dtype=d.np), d)


_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
           10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def matrix_exp(A):
    """Scaling and squaring with the degree-13 Pade approximant (Higham 2005), per matrix of the batch."""
    a, d = A._data, A._dtype
    n = a.shape[-1]
    if a.size == 0:
        return wrap(a.copy(), d)
    x = a.astype(xp.float64)
    norm = xp.abs(x).sum(axis=-2).max(axis=-1)
    with np.errstate(divide="ignore"):
        s = xp.maximum(0, xp.ceil(xp.log2(xp.where(norm > 0, norm, 1) / _THETA13))).astype(xp.int64)
    s = xp.where(xp.isfinite(norm), s, 0)
    x = x / (2.0 ** s)[..., None, None]
    b = _PADE13
    eye = xp.eye(n)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    try:
        r = xp.linalg.solve(v - u, v + u)
    except _LinAlgError:  # only for non-finite input: the result is NaN, as in PyTorch
        r = xp.full(x.shape, xp.nan)
    for k in range(int(s.max()) if s.size else 0):
        sq = r @ r
        r = xp.where((s > k)[..., None, None], sq, r)
    return wrap(r.astype(d.np), d)


KERNELS = {
    "linalg_inv_ex": quiet(inv_ex), "linalg_solve_ex": quiet(solve_ex), "linalg_det": quiet(det),
    "linalg_slogdet": quiet(slogdet), "_linalg_svd": quiet(svd), "linalg_eigh": quiet(eigh),
    "linalg_qr": quiet(qr), "linalg_cholesky_ex": quiet(cholesky_ex),
    "linalg_solve_triangular": quiet(solve_triangular), "linalg_matrix_exp": quiet(matrix_exp),
}
