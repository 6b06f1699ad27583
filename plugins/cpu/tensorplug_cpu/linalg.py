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

_int32 = tensorplug.int32
_LinAlgError = np.linalg.LinAlgError


def _info(arr):
    return wrap(np.asarray(arr, dtype=np.int32), _int32)


def _lu_info(a):
    """LAPACK getrf's info per matrix of ``a`` (..., n, n): the 1-based index of the first exactly zero
    pivot of partial-pivoting LU, 0 when there is none."""
    batch = a.shape[:-2]
    n = a.shape[-1]
    u = a.reshape((-1, n, n)).astype(np.float64 if a.dtype == np.float64 else a.dtype, copy=True)
    info = np.zeros(u.shape[0], dtype=np.int32)
    rows = np.arange(u.shape[0])
    for j in range(n):
        col = np.abs(u[:, j:, j])
        p = j + np.argmax(col, axis=1)
        u[rows, j], u[rows, p] = u[rows, p].copy(), u[rows, j].copy()
        piv = u[:, j, j]
        zero = piv == 0
        info[(info == 0) & zero] = j + 1
        safe = np.where(zero, 1, piv)
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
        out = np.linalg.inv(a)
        info = np.zeros(a.shape[:-2], np.int32)
    except _LinAlgError:
        info = _singular(a)
        out = np.full(a.shape, np.nan, dtype=a.dtype)
        ok = info == 0
        if ok.any():
            out[ok] = np.linalg.inv(a[ok])
    return wrap(out.astype(d.np, copy=False), d), _info(info)


def solve_ex(A, B):
    a, b = A._data, B._data
    d = A._dtype
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    try:
        out = np.linalg.solve(a, b)
        info = np.zeros(batch, np.int32)
    except _LinAlgError:
        info = _singular(a)
        out = np.full(b.shape, np.nan, dtype=b.dtype)
        ok = info == 0
        if ok.any():
            out[ok] = np.linalg.solve(a[ok], b[ok])
    return wrap(np.ascontiguousarray(out, dtype=d.np), d), _info(info)


def det(A):
    d = A._dtype
    return wrap(np.asarray(np.linalg.det(A._data), dtype=d.np), d)


def slogdet(A):
    d = A._dtype
    sign, logabs = np.linalg.slogdet(A._data)
    return wrap(np.asarray(sign, dtype=d.np), d), wrap(np.asarray(logabs, dtype=d.np), d)


def svd(A, full_matrices=False, compute_uv=True):
    a, d = A._data, A._dtype
    m, n = a.shape[-2:]
    if not compute_uv:
        s = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(a.shape[:-2] + (min(m, n),), a.dtype)
        empty = np.zeros((0,), d.np)
        return wrap(empty, d), wrap(np.asarray(s, d.np), d), wrap(empty.copy(), d)
    if a.size:
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    else:
        k = min(m, n)
        batch = a.shape[:-2]
        ku, kv = (m, n) if full_matrices else (k, k)
        u = np.broadcast_to(np.eye(m, ku, dtype=a.dtype), batch + (m, ku)).copy()
        vh = np.broadcast_to(np.eye(kv, n, dtype=a.dtype), batch + (kv, n)).copy()
        s = np.zeros(batch + (k,), a.dtype)
    return wrap(np.asarray(u, d.np), d), wrap(np.asarray(s, d.np), d), wrap(np.asarray(vh, d.np), d)


def eigh(A, UPLO="L"):
    d = A._dtype
    w, v = np.linalg.eigh(A._data, UPLO=UPLO.upper())
    return wrap(np.asarray(w, d.np), d), wrap(np.asarray(v, d.np), d)


def qr(A, mode="reduced"):
    a, d = A._data, A._dtype
    m, n = a.shape[-2:]
    if a.size == 0:
        k = m if mode == "complete" else min(m, n)
        batch = a.shape[:-2]
        q = np.broadcast_to(np.eye(m, k, dtype=a.dtype), batch + (m, k)).copy()
        r = np.zeros(batch + (k, n), a.dtype)
    elif mode == "r":
        r = np.linalg.qr(a, mode="r")
        q = None
    else:
        q, r = np.linalg.qr(a, mode=mode)
    if mode == "r":
        return wrap(np.zeros((0,), d.np), d), wrap(np.asarray(r, d.np), d)
    return wrap(np.asarray(q, d.np), d), wrap(np.asarray(r, d.np), d)


def _cholesky_info(a):
    """potrf's info per matrix (lower triangle read): the order of the first leading minor that is not
    positive-definite."""
    batch = a.shape[:-2]
    n = a.shape[-1]
    x = a.reshape((-1, n, n))
    lower = np.zeros_like(x)
    info = np.zeros(x.shape[0], dtype=np.int32)
    for j in range(n):
        s = x[:, j, j] - np.einsum("bk,bk->b", lower[:, j, :j], lower[:, j, :j])
        bad = ~(s > 0)
        info[(info == 0) & bad] = j + 1
        piv = np.sqrt(np.where(bad, 1, s))
        lower[:, j, j] = piv
        lower[:, j + 1:, j] = (x[:, j + 1:, j] - np.einsum("bik,bk->bi", lower[:, j + 1:, :j], lower[:, j, :j])) \
            / piv[:, None]
    return info.reshape(batch)


def cholesky_ex(A, upper=False, check_errors=False):
    a, d = A._data, A._dtype
    x = np.swapaxes(a, -1, -2) if upper else a  # numpy reads the lower triangle; upper reads A's upper one
    try:
        low = np.linalg.cholesky(x)
        info = np.zeros(a.shape[:-2], np.int32)
    except _LinAlgError:
        info = _cholesky_info(x)
        low = np.zeros_like(x)
        ok = info == 0
        if ok.any():
            low[ok] = np.linalg.cholesky(x[ok])
    out = np.swapaxes(low, -1, -2) if upper else low
    return wrap(np.ascontiguousarray(out, dtype=d.np), d), _info(info)


def _substitute(a, b, upper):
    """``a x = b`` for triangular ``a`` (..., n, n) by substitution, row by row: inf and NaN where a
    diagonal element is zero, as LAPACK's trsm gives."""
    n = a.shape[-1]
    x = np.zeros(b.shape, np.result_type(a, b))
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        rest = b[..., i, :] - np.einsum("...k,...kj->...j", a[..., i, :], x)
        x[..., i, :] = rest / a[..., i, i, None]
    return x


def solve_triangular(A, B, upper, left=True, unitriangular=False):
    a, b, d = A._data, B._data, A._dtype
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a, b, upper = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper
    a = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        n = a.shape[-1]
        a = a.copy()
        a[..., range(n), range(n)] = 1
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    if a.size and (np.diagonal(a, 0, -2, -1) != 0).all():
        x = np.linalg.solve(a, b)
    else:
        x = _substitute(a, b, upper)
    if not left:
        x = np.swapaxes(x, -1, -2)
    return wrap(np.ascontiguousarray(x, dtype=d.np), d)


_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
           10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def matrix_exp(A):
    """Scaling and squaring with the degree-13 Pade approximant (Higham 2005), per matrix of the batch."""
    a, d = A._data, A._dtype
    n = a.shape[-1]
    if a.size == 0:
        return wrap(a.copy(), d)
    x = a.astype(np.float64)
    norm = np.abs(x).sum(axis=-2).max(axis=-1)
    with np.errstate(divide="ignore"):
        s = np.maximum(0, np.ceil(np.log2(np.where(norm > 0, norm, 1) / _THETA13))).astype(np.int64)
    s = np.where(np.isfinite(norm), s, 0)
    x = x / (2.0 ** s)[..., None, None]
    b = _PADE13
    eye = np.eye(n)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    try:
        r = np.linalg.solve(v - u, v + u)
    except _LinAlgError:  # only for non-finite input: the result is NaN, as in PyTorch
        r = np.full(x.shape, np.nan)
    for k in range(int(s.max()) if s.size else 0):
        sq = r @ r
        r = np.where((s > k)[..., None, None], sq, r)
    return wrap(r.astype(d.np), d)


KERNELS = {
    "linalg_inv_ex": quiet(inv_ex), "linalg_solve_ex": quiet(solve_ex), "linalg_det": quiet(det),
    "linalg_slogdet": quiet(slogdet), "_linalg_svd": quiet(svd), "linalg_eigh": quiet(eigh),
    "linalg_qr": quiet(qr), "linalg_cholesky_ex": quiet(cholesky_ex),
    "linalg_solve_triangular": quiet(solve_triangular), "linalg_matrix_exp": quiet(matrix_exp),
}
