"""More of :mod:`tensorplug.linalg` as compositions of existing ops: ``cond``, ``diagonal``, ``vander``,
``tensorinv``, ``tensorsolve``, and the randomized ``svd_lowrank`` and ``pca_lowrank`` (numpy-free: random
projections, QR and a small SVD, so autograd and vmap apply to the pieces)."""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..tensor import Tensor
from ._lib import public
from .factories import ones as _ones
from .joining import cat
from .linalg import matmul
from .linalg_decomp import check_float, check_matrix, _LOW, inv_ex as _inv_ex, svd as _svd, qr as _qr, \
    solve as _solve, inv as _inv
from .linalg_functions import matrix_norm, svdvals
from .promotion import _pt_name
from .random import randn
from .views import movedim


def _prod(sizes):
    out = 1
    for s in sizes:
        out *= s
    return out


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal (``offset`` above it, below for a negative one) of each matrix over ``dim1`` and ``dim2``."""
    return A.diagonal(offset, dim1, dim2)


def vander(x, *, N=None):
    """The Vandermonde matrix of ``x`` (batches over its leading dims): columns ``x ** 0, ..., x ** (N - 1)``
    (default N: the size of x's last dim)."""
    d = x._dtype
    if d is _dt.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    if not x._shape:
        x = x.reshape((1,))
    n = x._shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    first = _ones(x._shape + (1,), dtype=d, device=x._device)
    rest = x.unsqueeze(-1).expand(x._shape + (n - 1,))
    return cat([first, rest], -1).cumprod(-1)


def tensorinv(A, ind=2):
    """The inverse of A as a tensor product: ``tensordot(tensorinv(A), A, ind)`` is the identity; A's first
    ``ind`` dims make up as many elements as its other dims."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape = A._shape[ind:] + A._shape[:ind]
    rows, cols = _prod(A._shape[:ind]), _prod(A._shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return _inv(A.reshape((rows, cols))).reshape(out_shape)


def tensorsolve(A, B, dims=None):
    """``X`` with ``tensordot(A, X, X.ndim) = B``; ``dims``: dims of A moved to its end first."""
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        A = movedim(A, dims, list(range(len(A._shape) - len(dims), len(A._shape))))
    nb = len(B._shape)
    rest = A._shape[nb:]
    rows, cols = _prod(B._shape), _prod(rest)
    if _prod(A._shape[:nb]) != rows or rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {cols} != {_prod(A._shape[:nb])}")
    return _solve(A.reshape((rows, cols)), B.reshape((rows, 1))).reshape(rest)


def cond(A, p=None):
    """The condition number of each matrix in the ``p`` norm: ``sigma_max / sigma_min`` for p None or 2
    (its inverse for -2, any shape), else ``norm(A, p) * norm(inv(A), p)`` (square matrices; inf when
    singular)."""
    if len(A._shape) < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        S = svdvals(A)
        if not S._shape[-1]:
            return S.sum(-1)
        big, small = S.narrow(-1, 0, 1).squeeze(-1), S.narrow(-1, S._shape[-1] - 1, 1).squeeze(-1)
        return small / big if p == -2 else big / small
    m, n = A._shape[-2:]
    if m != n:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are {m} by {n} "
                           "matrices")
    check_float("linalg.cond", A)
    if not A.numel():
        return A.sum((-2, -1)) * 0
    inverse, info = _inv_ex(A)
    out = matrix_norm(A, p) * matrix_norm(inverse, p)
    return out.masked_fill(info > 0, math.inf)


# -- randomized low-rank SVD and PCA --------------------------------------------------------------
def _range_finder(A, q, niter, M):
    """An orthonormal basis (m x q) of A's (or ``A - M``'s) range: random projection and ``niter`` power
    iterations (Halko, Martinsson and Tropp, Algorithm 4.4)."""
    n = A._shape[-1]
    R = randn(A._shape[:-2] + (n, q), dtype=A._dtype, device=A._device)

    def times(X):
        return matmul(A, X) if M is None else matmul(A, X) - matmul(M, X)

    def times_t(X):
        return matmul(A.mT, X) if M is None else matmul(A.mT, X) - matmul(M.mT, X)
    Q = _qr(times(R), "reduced")[0]
    for _ in range(niter):
        Q = _qr(times_t(Q), "reduced")[0]
        Q = _qr(times(Q), "reduced")[0]
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)``: an approximate rank-``q`` SVD of A (or of ``A - M``) by random projection, ``A ~ U
    diag(S) V^T``."""
    if not isinstance(A, Tensor):
        raise TypeError(f"svd_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    check_matrix("svd_lowrank", A)
    q = 6 if q is None else q
    m, n = A._shape[-2:]
    if M is not None:
        M = M.expand(A._shape)
    if m < n:  # work on the transpose: the projection is on the smaller side
        U, S, V = svd_lowrank(A.mT, q, niter, None if M is None else M.mT)
        return V, S, U
    Q = _range_finder(A, q, niter, M)
    B = matmul(Q.mT, A) if M is None else matmul(Q.mT, A) - matmul(Q.mT, M)
    Ub, S, Vh = _svd(B, False, True)
    return matmul(Q, Ub), S, Vh.mT


def pca_lowrank(A, q=None, center=True, niter=2):
    """``(U, S, V)``: the principal components of the rows of A (centred over them unless ``center=False``)
    from :func:`svd_lowrank` with ``q`` (default ``min(6, m, n)``) components."""
    if not isinstance(A, Tensor):
        raise TypeError(f"pca_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    m, n = A._shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    d = A._dtype
    if not d.is_floating_point or d in _LOW:
        raise RuntimeError(f"pca_lowrank: expected a float32 or float64 input, got {_pt_name(d)}")
    if not center:
        return svd_lowrank(A, q, niter, None)
    C = A.mean(-2, True)
    return svd_lowrank(A - C, q, niter, None)


public("svd_lowrank", svd_lowrank)
public("pca_lowrank", pca_lowrank)
