"""The functions of :mod:`tensorplug.linalg` and their legacy top-level names and Tensor methods.

They decompose into the primitives of :mod:`.linalg_decomp` (whose formulas give their gradients) and
ordinary ops: the norms into reductions and singular values, ``pinv``, ``matrix_rank`` and ``lstsq``
into the SVD, ``matrix_power`` and ``multi_dot`` into matrix products, ``cross`` and ``vecdot`` into
elementwise ops. The checked forms (``inv``, ``solve``, ``cholesky``) read the primitives' ``info`` and
raise :class:`~.linalg_decomp.LinAlgError` with PyTorch's messages.
"""

from __future__ import annotations

import math
from collections import namedtuple

from .. import dtypes as _dt
from .._warn import warn_user
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor, _wrap_dim
from ._lib import attach, public
from .comparison import where_fn as _where, with_zero_grad
from .factories import eye as _eye, zeros as _zeros
from .joining import stack
from .linalg import matmul, vector_norm, norm as _vector_norm_legacy
from .linalg_decomp import (LinAlgError, inv_ex as _inv_ex, solve_ex as _solve_ex, det, slogdet as _slogdet,
                            svd as _svd, eigh as _eigh, qr as _qr, cholesky_ex as _cholesky_ex, solve_triangular,
                            matrix_exp, inv, solve as _solve_op, cholesky, cholesky_legacy, raise_for_info,
                            check_float, check_matrix, check_square, _SINGULAR, _NOT_PD)
from .promotion import broadcast_shapes, _pt_name
from .reductions import amax, amin, sum as _sum
from .views import movedim

__all__ = ["vector_norm", "matrix_norm", "norm", "inv", "inv_ex", "solve", "solve_ex", "det", "slogdet", "svd",
           "svdvals", "qr", "eigh", "eigvalsh", "cholesky", "cholesky_ex", "pinv", "lstsq", "multi_dot", "vecdot",
           "matrix_power", "cross", "solve_triangular", "matrix_rank", "matrix_exp", "LinAlgError"]

inv_ex_result = namedtuple("linalg_inv_ex", ["inverse", "info"])
solve_ex_result = namedtuple("linalg_solve_ex", ["result", "info"])
cholesky_ex_result = namedtuple("linalg_cholesky_ex", ["L", "info"])
slogdet_result = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
legacy_slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])
svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
legacy_svd_result = namedtuple("svd", ["U", "S", "V"])
qr_result = namedtuple("linalg_qr", ["Q", "R"])
legacy_qr_result = namedtuple("qr", ["Q", "R"])
eigh_result = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
lstsq_result = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


# -- inverses and solves ------------------------------------------------------------------------

def inv_ex(A, *, check_errors=False):
    """``(inverse, info)``: ``info`` is LAPACK's per matrix (the first zero pivot, 1-based; 0 when
    invertible); ``check_errors=True`` raises as :func:`inv` does."""
    res, info = _inv_ex(A)
    if check_errors:
        raise_for_info("linalg.inv_ex", info, _SINGULAR.format)
    return inv_ex_result(res, info)


def _vector_rhs(A, B):
    """PyTorch's rule: B is a batch of vectors if it is 1-D or has A's shape without the last dim."""
    return len(B._shape) == 1 or (len(B._shape) == len(A._shape) - 1 and B._shape == A._shape[:-1])


def _solve(A, B, left, name, op):
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg_solve(): argument 'B' (position 2) must be Tensor, not {type(B).__name__}")
    check_float("linalg.solve", A)
    check_square("linalg.solve", A)
    vector = _vector_rhs(A, B)
    b = B.unsqueeze(-1) if vector else B
    if not left:
        A, b = A.mT, (b if vector else b.mT)
    X = op(A, b)
    X, info = (X, None) if isinstance(X, Tensor) else X
    if not left and not vector:
        X = X.mT
    return (X.squeeze(-1) if vector else X), info


def solve(A, B, *, left=True):
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``); ``B`` a batch of matrices,
    or of vectors (1-D, or A's shape without its last dim). Batch dims broadcast; :class:`LinAlgError`
    for a singular matrix."""
    return _solve(A, B, left, "linalg.solve", _solve_op)[0]


def solve_ex(A, B, *, left=True, check_errors=False):
    """:func:`solve` returning ``(result, info)`` instead of raising for a singular matrix."""
    X, info = _solve(A, B, left, "linalg.solve_ex", _solve_ex)
    if check_errors:
        raise_for_info("torch.linalg.solve_ex", info,
                       lambda i: "The solver failed because the input matrix is singular.")
    return solve_ex_result(X, info)


def cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: ``info`` the order of the first leading minor that is not positive-definite (0 when
    none is)."""
    L, info = _cholesky_ex(A, upper=upper)
    if check_errors:
        raise_for_info("linalg.cholesky_ex", info, _NOT_PD.format)
    return cholesky_ex_result(L, info)


# -- determinants -------------------------------------------------------------------------------
def slogdet(A):
    """``(sign, logabsdet)`` of each square matrix: ``det = sign * exp(logabsdet)``."""
    sign, logabs = _slogdet(A)
    # PyTorch marks the sign a differentiable result (whose gradient is zero)
    return slogdet_result(with_zero_grad(sign, A), logabs)


# -- decompositions -----------------------------------------------------------------------------
def svd(A, full_matrices=True, *, driver=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values in descending order; U and Vh are square
    with ``full_matrices=True`` (gradients use their first min(m, n) columns, as in PyTorch)."""
    return svd_result(*_svd(A, full_matrices, True))


def _needs_grad(A):
    return A._requires_grad and is_grad_enabled()


def svdvals(A, *, driver=None):
    """The singular values of each matrix, in descending order."""
    return _svd(A, False, _needs_grad(A))[1]


def qr(A, mode="reduced"):
    """``(Q, R)`` with ``A = QR``: ``mode`` "reduced" (Q m x k), "complete" (Q m x m) or "r" (Q empty)."""
    return qr_result(*_qr(A, mode))


def eigh(A, UPLO="L"):
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix, from its lower (or, ``UPLO="U"``, upper)
    triangle; eigenvalues ascending."""
    return eigh_result(*_eigh(A, UPLO))


def eigvalsh(A, UPLO="L"):
    """The eigenvalues of each symmetric matrix, ascending."""
    return _eigh(A, UPLO)[0]


# -- pseudo-inverse, rank, least squares ---------------------------------------------------------
def _pinv_check(A, name="linalg.pinv"):
    d = A._dtype
    if len(A._shape) < 2 or d not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"{name}({_pt_name(d)}{{{list(A._shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")


_EPS = {_dt.float32: 1.1920928955078125e-07, _dt.float64: 2.220446049250313e-16}


def _tolerance(A, S, atol, rtol):
    """PyTorch's cut-off for "nonzero" singular values: max(atol, rtol * largest)."""
    m, n = A._shape[-2:]
    if rtol is None:
        rtol = 0.0 if atol is not None and (isinstance(atol, Tensor) or atol > 0) else _EPS[A._dtype] * max(m, n)
    if atol is None:
        atol = 0.0
    largest = amax(S, (-1,), True) if S._shape[-1] else S.sum((-1,), True)
    tol = largest * (rtol.unsqueeze(-1) if isinstance(rtol, Tensor) else rtol)
    if isinstance(atol, Tensor):
        return _where(tol > atol.unsqueeze(-1), tol, atol.unsqueeze(-1))
    return tol.clamp(min=atol) if atol else tol


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The Moore-Penrose pseudo-inverse of each matrix, from its SVD (its eigendecomposition with
    ``hermitian=True``); singular values at most ``max(atol, rtol * largest)`` count as zero (default
    rtol: eps * max(m, n)). ``rcond`` (PyTorch's older, positional form) is ``rtol``."""
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_pinv() received an invalid combination of arguments - got rcond together "
                            "with atol or rtol: rcond is the older name of rtol")
        rtol = rcond
    _pinv_check(A)
    if hermitian:
        w, V = _eigh(A)
        S = w.abs()
        tol = _tolerance(A, S, atol, rtol)
        keep = S > tol
        winv = _where(keep, 1 / _where(keep, w, 1.0), 0.0)
        return matmul(V * winv.unsqueeze(-2), V.mT)
    U, S, Vh = _svd(A, False, True)
    tol = _tolerance(A, S, atol, rtol)
    keep = S > tol
    sinv = _where(keep, 1 / _where(keep, S, 1.0), 0.0)
    return matmul(Vh.mT * sinv.unsqueeze(-2), U.mT)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values above ``max(atol, rtol * largest)`` per matrix (int64)."""
    if len(A._shape) < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A._dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError("This function doesn't handle types other than float and double")
    S = _eigh(A)[0].abs() if hermitian else _svd(A, False, False)[1]
    tol = _tolerance(A, S, atol, rtol)
    return _sum(S > tol, (-1,), dtype=_dt.int64)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B`` as ``(solution, residuals, rank, singular_values)``, as
    PyTorch's CPU drivers return them: the minimum-norm solution (singular values below ``rcond`` times
    the largest count as zero; default eps * max(m, n)); ``residuals`` the squared residual norms of
    each column when m > n, for gels, and for gelsd and gelss when every matrix has full rank (else
    empty; gelsy, the default, gives none); ``rank`` for every driver but gels; ``singular_values`` for
    gelsd and gelss."""
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    check_matrix("torch.linalg.lstsq", A, "input")
    check_float("torch.linalg.lstsq", A)
    if A._dtype is not B._dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"input's dtype {_pt_name(A._dtype)} and other's dtype {_pt_name(B._dtype)}")
    vector = len(B._shape) == len(A._shape) - 1
    b = B.unsqueeze(-1) if vector else B
    if len(b._shape) < 2 or b._shape[-2] != A._shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A._shape[-2:]
    U, S, Vh = _svd(A, False, True)
    tol = _tolerance(A, S, None, rcond if rcond is not None and rcond >= 0 else None)
    keep = S > tol
    sinv = _where(keep, 1 / _where(keep, S, 1.0), 0.0)
    X = matmul(Vh.mT * sinv.unsqueeze(-2), matmul(U.mT, b))
    rank = _sum(keep, (-1,), dtype=_dt.int64)
    # as LAPACK's drivers: gelsy never gives residuals, gels whenever m > n, gelsd and gelss at full rank
    full = m > n and driver != "gelsy" and (driver == "gels" or bool((rank == n).all()))
    if full:
        r = matmul(A, X) - b
        residuals = _sum(r * r, (-2,))
    else:
        # empty, but a differentiable result as PyTorch's (it requires grad when the inputs do)
        residuals = X.reshape((-1,))[:0] * 0
    if vector:
        X = X.squeeze(-1)
    if driver == "gels":
        rank = _zeros((0,), dtype=_dt.int64, device=A._device)
    sv = S if driver in ("gelsd", "gelss") else _zeros((0,), dtype=A._dtype, device=A._device)
    return lstsq_result(X, residuals, rank, sv)


# -- products -----------------------------------------------------------------------------------
def _chain_order(dims):
    """The cheapest parenthesization of a matrix chain with sizes ``dims`` (classic dynamic programming):
    ``split[i][j]`` the position where the product of matrices i..j is cut."""
    k = len(dims) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def multi_dot(tensors):
    """The product of a chain of matrices in the cheapest order; the first may be a row vector and the
    last a column vector (1-D), as for ``matmul``."""
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0].dim(), tensors[-1].dim()
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    d0 = tensors[0]._dtype
    for i, t in enumerate(tensors[1:], 1):
        if t._dtype is not d0:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_dt.c_type_name(d0)} and tensor {i} {_dt.c_type_name(t._dtype)}")
    mats = list(tensors)
    if first == 1:
        mats[0] = mats[0].unsqueeze(0)
    if last == 1:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(n - 1):
        if mats[i]._shape[1] != mats[i + 1]._shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(mats[i]._shape)} and "
                               f"{list(mats[i + 1]._shape)} cannot be multiplied")
    if n == 2:
        out = matmul(mats[0], mats[1])
    else:
        split = _chain_order([mats[0]._shape[0]] + [m._shape[1] for m in mats])

        def product(i, j):
            if i == j:
                return mats[i]
            s = split[i][j]
            return matmul(product(i, s), product(s + 1, j))
        out = product(0, n - 1)
    if first == 1 and last == 1:
        return out.reshape(())
    if first == 1:
        return out.squeeze(0)
    if last == 1:
        return out.squeeze(-1)
    return out


def vecdot(x, y, *, dim=-1):
    """The dot product of vectors along ``dim``, batch dims broadcast: ``sum(x * y, dim)``."""
    if not x._dtype.is_floating_point:
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                           f"{_pt_name(x._dtype)}")
    if x._dtype is not y._dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_pt_name(x._dtype)} and y of type {_pt_name(y._dtype)} instead")
    if len(x._shape) == 1 and len(y._shape) == 1 and x._shape != y._shape:
        a, b = x._shape[0], y._shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a}] and src [{b}] to have the same number "
                           f"of elements, but got {a} and {b} elements respectively")
    return _sum(x * y, (dim,))


def matrix_power(A, n):
    """``A`` multiplied by itself ``n`` times (the identity for 0; powers of the inverse for n < 0), by
    repeated squaring."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    check_square("linalg.matrix_power", A)
    size = A._shape[-1]
    if n == 0:
        eye = _eye(size, dtype=A._dtype, device=A._device)
        if _needs_grad(A):  # a differentiable result in PyTorch (zero gradient)
            return with_zero_grad(eye.expand(A._shape), A)
        return eye.expand(A._shape).clone()
    if n < 0:
        A = inv(A)
        n = -n
    result = None
    base = A
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result if result is not A else A.clone()


def _check_cross(name, input, other):
    if input._dtype is not other._dtype:
        raise RuntimeError(f"expected scalar type {_pt_name(input._dtype)} but found {_pt_name(other._dtype)}")
    if len(input._shape) != len(other._shape):
        raise RuntimeError(f"{name}: inputs must have the same number of dimensions.")
    return broadcast_shapes(input._shape, other._shape)


def _cross(input, other, dim):
    a = [input.select(dim, i) for i in range(3)]
    b = [other.select(dim, i) for i in range(3)]
    return stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]], dim)


def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (batch dims broadcast)."""
    shape = _check_cross("linalg.cross", input, other)
    d = _wrap_dim(dim, len(shape))
    if input._shape[d] != 3 or other._shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input._shape[d]} and "
                           f"{other._shape[d]}")
    return _cross(input, other, d)


def cross_legacy(input, other, dim=None):
    """``torch.cross``: :func:`cross` along ``dim``; without it, along the first dim of size 3 (with
    PyTorch's deprecation warning)."""
    if dim is None:
        shape = _check_cross("cross", input, other)
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        warn_user("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                  "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree with "
                  "that of linalg.cross in a future release.")
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return cross(input, other, dim=dim)


# -- norms --------------------------------------------------------------------------------------
_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """A matrix norm over the two dims ``dim``: "fro", "nuc" (the sum of singular values), inf / -inf
    (largest / smallest absolute row sum), 1 / -1 (column sums), 2 / -2 (largest / smallest singular
    value)."""
    check_matrix("linalg.matrix_norm", A)
    d = A._dtype
    if not d.is_floating_point:
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_pt_name(d)}")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    nd = len(A._shape)
    d0, d1 = _wrap_dim(dim[0], nd), _wrap_dim(dim[1], nd)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord not in _MATRIX_ORDS or isinstance(ord, bool):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        check_float("linalg.matrix_norm", A)
        S = svdvals(movedim(A, (d0, d1), (-2, -1)))
        r = S.sum((-1,)) if ord == "nuc" else (amax if ord == 2 else amin)(S, (-1,))
        if keepdim:
            for k in sorted((d0, d1)):
                r = r.unsqueeze(k)
        return r
    # inf: the largest row sum (sum over the columns, d1); 1: the largest column sum
    inner, outer = (d1, d0) if abs(ord) == math.inf else (d0, d1)
    sums = A.abs().sum((inner,), True)
    r = (amax if ord > 0 else amin)(sums, (outer,), True)
    return r if keepdim else r.squeeze((d0, d1))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm (``dim`` an int or 1-tuple, or a 1-D input) or a matrix norm (``dim`` a 2-tuple, or a
    2-D input with ``ord`` given); with neither ``dim`` nor ``ord``, the 2-norm of all elements."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        dim = tuple(dim)
        if len(dim) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    nd = len(A._shape)
    if nd not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {nd}D.")
    if nd == 2 or isinstance(ord, str):
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    return vector_norm(A, ord, None, keepdim, dtype=dtype)


def norm_legacy(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector ``p``-norm over ``dim`` (all dims by default): p a number (inf, -inf and 0 included),
    "fro" or None for 2; ``p="nuc"`` the nuclear norm over two dims (both of a 2-D input).
    Floating point inputs only; ``dtype`` computes in a wider dtype."""
    if p == "nuc":
        dims = (-2, -1) if dim is None else (tuple(dim) if not isinstance(dim, int) else (dim,))
        if len(dims) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
        return matrix_norm(input, "nuc", dims, keepdim, dtype=dtype)
    return _vector_norm_legacy(input, p, dim, keepdim, dtype)


# -- legacy top-level names ---------------------------------------------------------------------
def svd_legacy(input, some=True, compute_uv=True):
    """``torch.svd``: ``(U, S, V)`` (V, not its transpose), reduced unless ``some=False``; with
    ``compute_uv=False``, U and V are square zero matrices."""
    if compute_uv:
        U, S, Vh = _svd(input, not some, True)
        return legacy_svd_result(U, S, Vh.mT)
    S = _svd(input, False, _needs_grad(input))[1]
    m, n = input._shape[-2:]
    batch = input._shape[:-2]
    U = _zeros(batch + (m, m), dtype=input._dtype, device=input._device)
    V = _zeros(batch + (n, n), dtype=input._dtype, device=input._device)
    return legacy_svd_result(U, S, V)


def qr_legacy(input, some=True):
    """``torch.qr``: ``(Q, R)``, reduced unless ``some=False``."""
    return legacy_qr_result(*_qr(input, "reduced" if some else "complete"))


def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: :func:`pinv` with relative tolerance ``rcond``."""
    return pinv(input, rtol=rcond)


def logdet(input):
    """The log of each matrix's determinant: NaN for a negative determinant, -inf for zero."""
    check_square("logdet", input)
    check_float("logdet", input)
    sign, logabs = _slogdet(input)
    return _where(sign < 0, math.nan, logabs)


def slogdet_legacy(input):
    return legacy_slogdet_result(*_slogdet(input))


def inverse(input):
    """``torch.inverse``: :func:`inv`."""
    return inv(input)


for _name, _fn in {"svd": svd_legacy, "qr": qr_legacy, "cholesky": cholesky_legacy, "pinverse": pinverse,
                   "logdet": logdet, "det": det, "slogdet": slogdet_legacy, "inverse": inverse,
                   "matrix_power": matrix_power, "cross": cross_legacy, "matrix_exp": matrix_exp,
                   "norm": norm_legacy}.items():
    attach(_name, _fn)
    public(_name, _fn)
