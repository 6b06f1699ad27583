"""CPU kernels of the LU, Householder QR (geqrf), eigen (eig) and LDL factorizations, on numpy.

numpy has no LU or LDL: partial-pivoting LU (LAPACK getrf's pivots: the first largest magnitude in
the column) and Bunch-Kaufman LDL (sytrf's pivoting) run here vectorized over the batch; geqrf is
numpy.linalg.qr's "raw" mode and eig numpy.linalg.eig, both LAPACK's.
"""

from __future__ import annotations

import numpy as np

import tensorplug

from .elementwise import quiet
from .kernels import wrap
from .xp import xp

_int32 = tensorplug.int32


def _i32(a):
    return wrap(xp.array(a, dtype=xp.int32, order="C"), _int32)


def lu_factor_ex(A, pivot=True, check_errors=False):
    a, d = A._data, A._dtype
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    u = xp.array(a.reshape((int(xp.prod(batch)), m, n)), dtype=d.np, copy=True)
    b = u.shape[0]
    piv = xp.tile(xp.arange(1, k + 1, dtype=xp.int32), (b, 1))
    info = xp.zeros(b, xp.int32)
    rows = xp.arange(b)
    for j in range(k):
        p = j + xp.argmax(xp.abs(u[:, j:, j]), axis=1)
        piv[:, j] = p + 1
        u[rows, j], u[rows, p] = u[rows, p].copy(), u[rows, j].copy()
        pv = u[:, j, j]
        zero = pv == 0
        info[(info == 0) & zero] = j + 1
        f = u[:, j + 1:, j] / xp.where(zero, 1, pv)[:, None]
        f[zero] = 0  # getrf leaves the column of a zero pivot as it is
        u[:, j + 1:, j] = xp.where(zero[:, None], u[:, j + 1:, j], f)
        u[:, j + 1:, j + 1:] -= f[:, :, None] * u[:, j, None, j + 1:]
    return (wrap(u.reshape(a.shape), d), _i32(piv.reshape(batch + (k,))), _i32(info.reshape(batch)))


def geqrf(A):
    a, d = A._data, A._dtype
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        return wrap(xp.array(a, copy=True), d), wrap(xp.zeros(batch + (k,), d.np), d)
    flat = a.reshape((int(xp.prod(batch)), m, n))
    hs, taus = [], []
    for x in flat:
        h, tau = xp.linalg.qr(x, mode="raw")
        hs.append(h.T)
        taus.append(tau)
    h = xp.stack(hs).reshape(a.shape)
    tau = xp.stack(taus).reshape(batch + (k,))
    return wrap(xp.ascontiguousarray(h, d.np), d), wrap(xp.ascontiguousarray(tau, d.np), d)


def eig(A):
    a, d = A._data, A._dtype
    c = d.to_complex() if not d.is_complex else d
    n = a.shape[-1]
    if a.size == 0:
        return (wrap(xp.zeros(a.shape[:-1], c.np), c), wrap(xp.zeros(a.shape, c.np), c))
    w, v = xp.linalg.eig(a)
    return wrap(xp.ascontiguousarray(w, c.np), c), wrap(xp.ascontiguousarray(v, c.np), c)


def _ldl_one(a, hermitian):
    """Bunch-Kaufman LDL of one symmetric matrix read from its lower triangle, as LAPACK's sytf2: the
    factors packed in the lower triangle (``A = P_1 L_1 P_2 L_2 ... D (...)^T``, each interchange applied to
    the trailing matrix only), the pivots 1-based (negative for a 2 x 2 block), and info."""
    n = a.shape[0]
    low = xp.tril(a)
    a = low + (xp.tril(a, -1).conj().T if hermitian else xp.tril(a, -1).T)
    if hermitian:
        a[range(n), range(n)] = a[range(n), range(n)].real
    piv = xp.zeros(n, xp.int32)
    info = 0
    alpha = (1 + xp.sqrt(17.0)) / 8
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k])
        if k < n - 1:
            imax = k + 1 + int(xp.argmax(xp.abs(a[k + 1:, k])))
            colmax = abs(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or xp.isnan(absakk):
            if info == 0:
                info = k + 1
            piv[k] = k + 1
            k += 1
            continue
        if absakk >= alpha * colmax:
            kp = k
        else:
            rowmax = xp.abs(a[imax, k:imax]).max()
            if imax < n - 1:
                rowmax = max(rowmax, xp.abs(a[imax + 1:, imax]).max())
            if absakk >= alpha * colmax * (colmax / rowmax):
                kp = k
            elif abs(a[imax, imax]) >= alpha * rowmax:
                kp = imax
            else:
                kp = imax
                kstep = 2
        kk = k + kstep - 1
        if kp != kk:  # interchange rows and columns kk and kp of the trailing matrix
            t = a[k:, k:]
            t[[kk - k, kp - k], :] = t[[kp - k, kk - k], :]
            t[:, [kk - k, kp - k]] = t[:, [kp - k, kk - k]]
        if kstep == 1:
            x = a[k + 1:, k].copy()
            l = x / a[k, k]
            a[k + 1:, k + 1:] -= xp.outer(l, x.conj() if hermitian else x)
            a[k + 1:, k] = l
            a[k, k + 1:] = l.conj() if hermitian else l
            piv[k] = kp + 1
        else:
            D = a[k:k + 2, k:k + 2].copy()
            W = a[k + 2:, k:k + 2].copy()
            L = W @ xp.linalg.inv(D)
            a[k + 2:, k + 2:] -= L @ (W.conj().T if hermitian else W.T)
            a[k + 2:, k:k + 2] = L
            a[k:k + 2, k + 2:] = L.conj().T if hermitian else L.T
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return xp.tril(a), piv, info


def ldl_factor_ex(A, hermitian=False, check_errors=False):
    a, d = A._data, A._dtype
    batch, n = a.shape[:-2], a.shape[-1]
    flat = a.reshape((int(xp.prod(batch)), n, n))
    out = xp.zeros(flat.shape, d.np)
    piv = xp.zeros((flat.shape[0], n), xp.int32)
    info = xp.zeros(flat.shape[0], xp.int32)
    for i, x in enumerate(flat):
        out[i], piv[i], info[i] = _ldl_one(xp.array(x, dtype=x.dtype), hermitian)
    return (wrap(xp.ascontiguousarray(out.reshape(a.shape)), d), _i32(piv.reshape(batch + (n,))),
            _i32(info.reshape(batch)))


def _ldl_solve_one(a, piv, b, hermitian):
    """LAPACK sytrs (lower): ``A X = B`` from sytrf's packed factors, by substitution through the pivots."""
    n = a.shape[0]
    b = b.copy()
    cj = xp.conj if hermitian else (lambda x: x)
    k = 0
    while k < n:  # L D Y = B
        if piv[k] > 0:
            kp = piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= xp.outer(a[k + 1:, k], b[k])
            b[k] /= a[k, k]
            k += 1
        else:
            kp = -piv[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= xp.outer(a[k + 2:, k], b[k]) + xp.outer(a[k + 2:, k + 1], b[k + 1])
            D = xp.array([[a[k, k], cj(a[k + 1, k])], [a[k + 1, k], a[k + 1, k + 1]]])
            b[k:k + 2] = xp.linalg.solve(D, b[k:k + 2])
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y
        if piv[k] > 0:
            b[k] -= cj(a[k + 1:, k]) @ b[k + 1:]
            kp = piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= cj(a[k + 1:, k]) @ b[k + 1:]
            b[k - 1] -= cj(a[k + 1:, k - 1]) @ b[k + 1:]
            kp = -piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def ldl_solve(LD, pivots, B, hermitian=False):
    ld, piv, b, d = LD._data, pivots._data, B._data, LD._dtype
    n = ld.shape[-1]
    batch = xp.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    bb = xp.broadcast_to(b, batch + b.shape[-2:])
    if not bb.size:
        return wrap(xp.zeros(bb.shape, d.np), d)
    ld = xp.broadcast_to(ld, batch + ld.shape[-2:]).reshape((-1, n, n))
    piv = xp.broadcast_to(piv, batch + piv.shape[-1:]).reshape((-1, n))
    bf = bb.reshape((-1,) + b.shape[-2:])
    out = xp.zeros(bf.shape, d.np)
    with np.errstate(all="ignore"):
        for i in range(ld.shape[0]):
            if n and bf.shape[-1]:
                try:
                    out[i] = _ldl_solve_one(ld[i], piv[i], bf[i].astype(d.np), hermitian)
                except xp.linalg.LinAlgError:
                    out[i] = xp.nan
    return wrap(xp.ascontiguousarray(out.reshape(bb.shape)), d)


KERNELS = {
    "linalg_lu_factor_ex": quiet(lu_factor_ex), "geqrf": quiet(geqrf), "linalg_eig": quiet(eig),
    "linalg_ldl_factor_ex": quiet(ldl_factor_ex), "linalg_ldl_solve": quiet(ldl_solve),
}
