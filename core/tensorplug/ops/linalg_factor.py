"""LU, Householder QR, eigen and LDL factorizations and the solves built on them.

Primitives (a kernel per backend; the CPU's in tensorplug_cpu.linalg_factor): ``linalg_lu_factor_ex``
(with PyTorch's LU backward), ``geqrf``, ``linalg_eig`` (complex results, PyTorch's backward),
``linalg_ldl_factor_ex`` and ``linalg_ldl_solve`` (not differentiable, as in PyTorch).
``cholesky_solve`` and ``cholesky_inverse`` are CompositeExplicitAutograd (triangular solves on every
backend) with PyTorch's formulas, which differentiate through the whole factor, not its triangle.
The rest are composites: ``lu_unpack``, ``linalg.lu``, ``linalg.lu_solve``, ``triangular_solve``,
``linalg.householder_product``, ``ormqr``, ``linalg.eigvals``.
"""

from __future__ import annotations

from collections import namedtuple

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from ._common import document
from ._lib import attach, defop, public
from .complex_ops import complex as _complex
from .factories import arange as _arange, eye as _eye, zeros as _zeros
from .joining import cat
from .linalg import matmul
from .linalg_decomp import (check_float, check_matrix, check_square, solve_triangular, solve as _solve, _LOW,
                            raise_for_info)
from .promotion import _pt_name, broadcast_shapes

lu_factor_ex_result = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_factor_result = namedtuple("linalg_lu_factor", ["LU", "pivots"])
lu_result = namedtuple("linalg_lu", ["P", "L", "U"])
lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])
lu_with_info_result = namedtuple("_lu_with_info", ["LU", "pivots", "info"])
triangular_solve_result = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
geqrf_result = namedtuple("geqrf", ["a", "tau"])
eig_result = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
ldl_factor_ex_result = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
ldl_factor_result = namedtuple("linalg_ldl_factor", ["LD", "pivots"])


def _eye_like(m, n, like):
    return _eye(m, n, dtype=like._dtype, device=like._device)


def _not_impl(kernel, d):
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{_pt_name(d)}'")


# -- LU -----------------------------------------------------------------------------------------
def _check_lu(A, pivot=True, check_errors=False):
    if len(A._shape) < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._shape)} instead")
    d = A._dtype
    if not d.is_floating_point or d in _LOW:
        _not_impl("lu_cpu", d)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


_lu_factor_ex = document(defop("linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> "
                               "(Tensor LU, Tensor pivots, Tensor info)", check=_check_lu),
         "``(LU, pivots, info)``: partial-pivoting LU ``A = P L U`` packed in one matrix (L's unit diagonal "
         "implied), LAPACK's 1-based row interchanges (int32) and info (the first zero pivot, 1-based).")


def _lu_backward(gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward (real inputs): the gradient of ``A = P L U`` from those of L and U."""
    m, n = L._shape[-2], U._shape[-1]
    k = min(m, n)
    if m == n:
        gA = matmul(L.mT, gL).tril(-1) + matmul(gU, U.mT).triu()
        gA = solve_triangular(U.mT, gA, upper=False, left=False)
        gA = solve_triangular(L.mT, gA, upper=True, unitriangular=True)
    elif m < n:  # wide: U = [U1 | U2]
        U1 = U.narrow(-1, 0, k)
        gA = matmul(L.mT, gL) - matmul(gU.triu(), U.mT)
        gA = solve_triangular(U1.mT, gA.tril(-1), upper=False, left=False)
        gA = cat([gA + gU.narrow(-1, 0, k).triu(), gU.narrow(-1, k, n - k)], -1)
        gA = solve_triangular(L.mT, gA, upper=True, unitriangular=True)
    else:  # tall: L = [L1; L2]
        L1 = L.narrow(-2, 0, k)
        gA = matmul(gU, U.mT) - matmul(L.mT, gL.tril(-1))
        gA = solve_triangular(L1.mT, gA.triu(), upper=True, unitriangular=True)
        gA = cat([gA + gL.narrow(-2, 0, k).tril(-1), gL.narrow(-2, k, m - k)], -2)
        gA = solve_triangular(U.mT, gA, upper=False, left=False)
    return matmul(P, gA)


@derivative("linalg_lu_factor_ex", nondiff_outputs=(1, 2))
def _(grads, pivot, result, result1):
    P, L, U = lu_unpack(result, result1)
    g = grads[0]
    return _lu_backward(g.narrow(-1, 0, L._shape[-1]), g.narrow(-2, 0, U._shape[-2]), P, L, U)


def _permutation(pivots, m):
    """The row order ``perm`` of LAPACK's interchanges: ``(P^T A)[i] = A[perm[i]]``."""
    k = pivots._shape[-1]
    perm = _arange(m, dtype=_dt.int64, device=pivots._device).expand(pivots._shape[:-1] + (m,))
    piv = pivots.long() - 1
    for i in range(k):
        j = piv.narrow(-1, i, 1)
        a = perm.narrow(-1, i, 1)
        b = perm.gather(-1, j)
        perm = perm.scatter(-1, j, a)
        perm = perm.scatter(-1, _arange(i, i + 1, dtype=_dt.int64, device=pivots._device).expand(j._shape), b)
    return perm


def _check_unpack(LU_data, LU_pivots):
    if len(LU_data._shape) < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU_data._shape)} instead")
    if LU_pivots._dtype is not _dt.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype."
                           f"\nNote: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` of a packed LU factorization (:func:`tensorplug.linalg.lu_factor`): L (m x k) with a unit
    diagonal, U (k x n), the permutation matrix P (m x m); an empty tensor for a part not unpacked."""
    _check_unpack(LU_data, LU_pivots)
    m, n = LU_data._shape[-2:]
    k = min(m, n)
    empty = _zeros((0,), dtype=LU_data._dtype, device=LU_data._device)
    if unpack_data:
        L = LU_data.narrow(-1, 0, k).tril(-1) + _eye_like(m, k, LU_data)
        U = LU_data.narrow(-2, 0, k).triu()
    else:
        L, U = empty, empty
    if unpack_pivots:
        perm = _permutation(LU_pivots, m)
        rows = _arange(m, dtype=_dt.int64, device=LU_data._device).unsqueeze(-1)
        P = (rows == perm.unsqueeze(-2)).to(LU_data._dtype)
    else:
        P = empty
    return lu_unpack_result(P, L, U)


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """``(LU, pivots, info)`` of the partial-pivoting LU of each matrix (see :func:`lu_factor`); info is
    nonzero for a matrix with a zero pivot (which then has no inverse)."""
    LU, piv, info = _lu_factor_ex(A, pivot=pivot)
    if check_errors:
        raise_for_info("torch.linalg.lu_factor_ex", info, _ZERO_U.format)
    return lu_factor_ex_result(LU, piv, info)


_ZERO_U = "U[{0},{0}] is zero and using it on lu_solve would result in a division by zero. If you still want " \
          "to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"


def _raise_zero_u(name, info):
    if not info._shape:
        i = int(info.item())
        if i:
            raise RuntimeError(f"{name}: {_ZERO_U.format(i)}")
        return
    for b, i in enumerate(info.reshape((-1,)).tolist()):
        if i:
            raise RuntimeError(f"{name}: (Batch element {b}): {_ZERO_U.format(i)}")


def _lu_factor_checked(A, pivot=True):
    LU, piv, info = _lu_factor_ex(A, pivot=pivot)
    _raise_zero_u("torch.linalg.lu_factor", info)
    return LU, piv


# the checked form is an op of its own so that the info check runs below vmap, on the whole batch
_lu_factor = document(defop("linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)",
                            check=_check_lu, composite=_lu_factor_checked),
         "``(LU, pivots)`` of linalg_lu_factor_ex; raises for a matrix with a zero pivot.")


def lu_factor(A, *, pivot=True):
    """``(LU, pivots)``: ``A = P L U`` with L unit lower triangular (m x k) and U upper triangular (k x n),
    packed in one m x n matrix; ``pivots`` LAPACK's 1-based row interchanges (int32). Raises for a matrix
    with a zero pivot."""
    return lu_factor_result(*_lu_factor(A, pivot=pivot))


def lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P L U``: P a permutation matrix, L unit lower triangular, U upper triangular."""
    LU, piv, _ = _lu_factor_ex(A, pivot=pivot)
    return lu_result(*lu_unpack(LU, piv))


def lu_legacy(A, pivot=True, get_infos=False, out=None):
    """``torch.lu``: ``(LU, pivots)``, with ``get_infos=True`` ``(LU, pivots, infos)``."""
    LU, piv, info = _lu_factor_ex(A, pivot=pivot)
    return lu_with_info_result(LU, piv, info) if get_infos else (LU, piv)


def _check_lu_solve(LU, pivots, B, left, adjoint):
    name = "linalg.lu_solve"
    check_matrix("torch.linalg.lu_solve", LU, "LU")
    check_matrix("torch.linalg.lu_solve", B, "B")
    n = LU._shape[-1]
    if LU._shape[-2] != n:
        raise RuntimeError(f"linalg.lu_solve: LU must be batches of square matrices, but they are "
                           f"{LU._shape[-2]} by {n} matrices")
    rows, cols = B._shape[-2:]
    if (rows if left else cols) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{rows}x{cols})")
    if pivots._dtype is not _dt.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type Int")
    if LU._dtype is not B._dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_pt_name(LU._dtype)} and B of type {_pt_name(B._dtype)} instead")
    if tuple(pivots._shape[:-1]) != tuple(LU._shape[:-2]) or pivots._shape[-1:] != (n,):
        raise RuntimeError(f"{name}: Incompatible shapes of LU and pivots")
    broadcast_shapes(LU._shape[:-2], B._shape[:-2])


def _times(A, B):
    """``A @ B`` for a permutation matrix: as a sum of products, so that it stays in the operands' dtype under
    autocast (which runs matmul in a lower precision)."""
    return (A.unsqueeze(-1) * B.unsqueeze(-3)).sum(-2)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """``X`` with ``A X = B`` (``X A = B`` with ``left=False``; A's transpose with ``adjoint=True``) for A given
    by its LU factorization (:func:`lu_factor`)."""
    _check_lu_solve(LU, pivots, B, left, adjoint)
    P, L, U = lu_unpack(LU, pivots)
    if left and not adjoint:   # X = U^-1 L^-1 P^T B
        Y = solve_triangular(L, _times(P.mT, B), upper=False, unitriangular=True)
        return solve_triangular(U, Y, upper=True)
    if left:                   # A^T X = B: X = P L^-T U^-T B
        Y = solve_triangular(U.mT, B, upper=False)
        return _times(P, solve_triangular(L.mT, Y, upper=True, unitriangular=True))
    if not adjoint:            # X = B U^-1 L^-1 P^T
        Y = solve_triangular(U, B, upper=True, left=False)
        return _times(solve_triangular(L, Y, upper=False, left=False, unitriangular=True), P.mT)
    # X A^T = B: X = B P L^-T U^-T
    Y = solve_triangular(L.mT, _times(B, P), upper=True, left=False, unitriangular=True)
    return solve_triangular(U.mT, Y, upper=False, left=False)


def lu_solve_legacy(b, LU_data, LU_pivots):
    """``torch.lu_solve(b, LU_data, LU_pivots)``: :func:`lu_solve` with the right-hand side first."""
    return lu_solve(LU_data, LU_pivots, b)


# -- triangular_solve ---------------------------------------------------------------------------
def _check_tri(b, A, name):
    for t, what in ((b, "b"), (A, "A")):
        if len(t._shape) < 2:
            raise RuntimeError(f"{t is b and 'b' or 'A'} should have at least 2 dimensions, but has "
                               f"{len(t._shape)} dimensions instead")
    if A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A._shape[-2]} by "
                           f"{A._shape[-1]} matrices")
    if A._shape[-1] != b._shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {A._shape[-2]} by "
                           f"{A._shape[-1]} but each b matrix is {b._shape[-2]} by {b._shape[-1]}")
    if A._dtype is not b._dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_pt_name(b._dtype)} "
                           f"and A of type {_pt_name(A._dtype)} instead.")


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``(X, A)`` with ``A X = b`` (``A^T X = b`` with ``transpose=True``) for triangular A (its ``upper`` or
    lower triangle is read); the second result is a copy of A, broadcast with b's batch dims."""
    _check_tri(b, A, "triangular_solve")
    d = A._dtype
    if not d.is_floating_point or d in _LOW:
        _not_impl("triangular_solve_cpu", d)
    M = A.mT if transpose else A
    X = solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    batch = broadcast_shapes(A._shape[:-2], b._shape[:-2])
    return triangular_solve_result(X, A.expand(batch + A._shape[-2:]).clone())


# -- cholesky_solve, cholesky_inverse -----------------------------------------------------------
def _check_cholesky_solve(self, input2, upper=False):
    for t, what in ((self, "b"), (input2, "A")):
        if len(t._shape) < 2:
            raise RuntimeError(f"{what} should have at least 2 dimensions, but has {len(t._shape)} dimensions "
                               "instead")
    if self._dtype is not input2._dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_pt_name(self._dtype)} "
                           f"and A of type {_pt_name(input2._dtype)} instead.")
    n = input2._shape[-1]
    if input2._shape[-2] != n:
        raise RuntimeError(f"A must be batches of square matrices, but they are {input2._shape[-2]} by {n} "
                           "matrices")
    if self._shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {n} by {n} but each b "
                           f"matrix is {self._shape[-2]} by {self._shape[-1]}")
    d = self._dtype
    if not d.is_floating_point or d in _LOW:
        _not_impl("cholesky_solve_cpu", d)
    broadcast_shapes(self._shape[:-2], input2._shape[:-2])


def _cholesky_solve_impl(self, input2, upper=False):
    if upper:
        Y = solve_triangular(input2.mT, self, upper=False)
        return solve_triangular(input2, Y, upper=True)
    Y = solve_triangular(input2, self, upper=False)
    return solve_triangular(input2.mT, Y, upper=True)


cholesky_solve = document(defop("cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor",
                                check=_check_cholesky_solve, explicit=_cholesky_solve_impl),
         "``X`` with ``A X = B`` for ``A = L L^T`` (``U^T U`` with ``upper=True``) given its Cholesky factor "
         "``input2``; batch dims broadcast.")


@derivative("cholesky_solve")
def _(grad, self, input2, upper, result, needs_input_grad):
    gB = cholesky_solve(grad, input2, upper)
    gL = None
    if needs_input_grad[1]:
        common = matmul(gB, result.mT)
        common = common + common.mT
        gL = sum_to(-matmul(input2, common) if upper else -matmul(common, input2), input2._shape)
    return (sum_to(gB, self._shape) if needs_input_grad[0] else None), gL


def _check_cholesky_inverse(self, upper=False):
    check_matrix("cholesky_inverse", self)
    check_square("cholesky_inverse", self)
    d = self._dtype
    if not d.is_floating_point or d in _LOW:
        _not_impl("cholesky_inverse_out_cpu", d)


def _cholesky_inverse_impl(self, upper=False):
    n = self._shape[-1]
    return _cholesky_solve_impl(_eye_like(n, n, self).expand(self._shape), self, upper)


cholesky_inverse = document(defop("cholesky_inverse(Tensor self, bool upper=False) -> Tensor",
                                  check=_check_cholesky_inverse, explicit=_cholesky_inverse_impl),
         "The inverse of ``A = L L^T`` (``U^T U`` with ``upper=True``) from its Cholesky factor.")


@derivative("cholesky_inverse")
def _(grad, self, upper, result):
    common = matmul(result, matmul(grad + grad.mT, result))
    return -matmul(self, common) if upper else -matmul(common, self)


# -- Householder: geqrf, householder_product, ormqr ---------------------------------------------
def _check_geqrf(self):
    if len(self._shape) < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    d = self._dtype
    if not d.is_floating_point or d in _LOW:
        _not_impl("geqrf_cpu", d)


_geqrf = document(defop("geqrf(Tensor self) -> (Tensor a, Tensor tau)", check=_check_geqrf),
         "LAPACK's geqrf: R in the upper triangle, the Householder vectors below it, and their scales ``tau``.")


def geqrf(input):
    """``(a, tau)``: the QR decomposition in LAPACK's compact form (R above the diagonal, the Householder
    reflectors ``H_i = I - tau_i v_i v_i^T`` below it, ``v_i``'s leading 1 implied)."""
    return geqrf_result(*_geqrf(input))


def _reflectors(A, k):
    """The Householder vectors (columns, m x k) stored below A's diagonal, each with its implied 1."""
    m = A._shape[-2]
    return A.narrow(-1, 0, k).tril(-1) + _eye_like(m, k, A)


def _check_householder(A, tau, name="torch.linalg.householder_product"):
    if len(A._shape) < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A._shape[-2] < A._shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if A._shape[-1] < tau._shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if len(A._shape) - len(tau._shape) != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{len(tau._shape)} and input.ndim is equal to {len(A._shape)}")
    if len(A._shape) > 2 and tuple(tau._shape[:-1]) != tuple(A._shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau._shape[:-1])}")
    if A._dtype is not tau._dtype:
        raise RuntimeError(f"{name}: tau dtype {_pt_name(tau._dtype)} does not match input dtype "
                           f"{_pt_name(A._dtype)}")
    d = A._dtype
    if not d.is_floating_point or d in _LOW:
        _not_impl("orgqr_cpu", d)


def householder_product(A, tau):
    """The first n columns of ``H_1 ... H_k`` (``H_i = I - tau_i v_i v_i^T``, ``v_i`` the i-th column of A
    below the diagonal with a leading 1): Q from :func:`tensorplug.geqrf`'s output."""
    _check_householder(A, tau)
    m, n = A._shape[-2:]
    k = tau._shape[-1]
    V = _reflectors(A, k)
    Q = _eye_like(m, n, A).expand(A._shape)
    for i in range(k - 1, -1, -1):
        v = V.narrow(-1, i, 1)
        t = tau.narrow(-1, i, 1).unsqueeze(-1)
        Q = Q - matmul(v * t, matmul(v.mT, Q))
    return Q


def _check_ormqr(input, tau, other, left, transpose):
    if len(input._shape) < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if len(other._shape) < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    side = -2 if left else -1
    k = tau._shape[-1] if tau._shape else 1
    if k != min(other._shape[side], input._shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    if input._shape[-2] != other._shape[side]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if len(input._shape) - len(tau._shape) != 1:
        raise RuntimeError(f"torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim "
                           f"equal to {len(tau._shape)} and input.ndim is equal to {len(input._shape)}")
    if len(input._shape) != len(other._shape):
        raise RuntimeError(f"torch.ormqr: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {len(other._shape)} and input.ndim is equal to {len(input._shape)}")
    for t, what in ((tau, "tau"), (other, "other")):
        if t._dtype is not input._dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {what} to have the same dtype, but input has dtype "
                               f"{_pt_name(input._dtype)} and {what} has dtype {_pt_name(t._dtype)}")
    d = input._dtype
    if not d.is_floating_point or d in _LOW:
        _not_impl("ormqr_cpu", d)


def ormqr(input, tau, other, left=True, transpose=False):
    """``other`` multiplied by ``Q = H_1 ... H_k`` (m x m, the reflectors of :func:`geqrf`'s output): ``Q C``,
    ``Q^T C`` with ``transpose=True``, ``C Q`` / ``C Q^T`` with ``left=False``."""
    _check_ormqr(input, tau, other, left, transpose)
    k = tau._shape[-1]
    V = _reflectors(input, k)
    C = other
    order = range(k) if left == transpose else range(k - 1, -1, -1)
    for i in order:
        v = V.narrow(-1, i, 1)
        t = tau.narrow(-1, i, 1).unsqueeze(-1)
        C = C - matmul(v * t, matmul(v.mT, C)) if left else C - matmul(matmul(C, v), v.mT * t)
    return C


# -- eig ----------------------------------------------------------------------------------------
def _check_eig(A):
    check_matrix("linalg.eig", A)
    check_square("linalg.eig", A)
    d = A._dtype
    if d.category < _dt.FLOATING:
        raise RuntimeError(f"Unknown Complex ScalarType for {_pt_name(d)}")
    if d in _LOW:
        _not_impl("linalg_eig_out_cpu", d)


_eig = document(defop("linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)", check=_check_eig),
         "``(eigenvalues, eigenvectors)`` of each square matrix, complex (complex64 for float32): LAPACK geev's, "
         "each eigenvector of unit norm with its largest component real.")


def _complex_solve(A, B):
    """``A X = B`` for complex A and B through the real system ``[[Ar, -Ai], [Ai, Ar]] [Xr; Xi] = [Br; Bi]``
    (the real solve is the backends' primitive)."""
    A, B = A.contiguous(), B.contiguous()
    Ar, Ai, Br, Bi = A.real, A.imag, B.real, B.imag
    M = cat([cat([Ar, -Ai], -1), cat([Ai, Ar], -1)], -2)
    X = _solve(M, cat([Br, Bi], -2))
    n = A._shape[-1]
    return _complex(X.narrow(-2, 0, n), X.narrow(-2, n, n))


def _eig_backward(gL, gV, L, V, real_input):
    """PyTorch's linalg_eig_backward: ``V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / conj(E)) V^H``,
    ``E_ij = L_j - L_i``."""
    n = L._shape[-1]
    Vh = V.mT.conj()
    VhgV = matmul(Vh, gV)
    re_diag = VhgV.diagonal(0, -2, -1).contiguous().real
    gA = VhgV - matmul(Vh, V * re_diag.unsqueeze(-2).to(V._dtype))
    Lc = L.conj()
    eye = _eye(n, dtype=_dt.bool, device=L._device)
    E = (Lc.unsqueeze(-2) - Lc.unsqueeze(-1)).masked_fill(eye, 1)
    gA = (gA / E).masked_fill(eye, 0) + _eye(n, dtype=V._dtype, device=V._device) * gL.unsqueeze(-2)
    gA = _complex_solve(Vh, matmul(gA, Vh))
    return gA.real if real_input else gA


@derivative("linalg_eig")
def _(grads, self, result, result1):
    gL, gV = grads
    if not self.numel():
        return _zeros(self._shape, dtype=self._dtype, device=self._device)
    return _eig_backward(gL, gV, result, result1, not self._dtype.is_complex)


def eig(A):
    """``(eigenvalues, eigenvectors)`` with ``A V = V diag(L)``, complex; eigenvectors of unit norm (defined up to
    a complex phase: a loss on them is differentiable when it does not depend on the phase)."""
    return eig_result(*_eig(A))


def eigvals(A):
    """The (complex) eigenvalues of each square matrix."""
    return _eig(A)[0]


# -- LDL ----------------------------------------------------------------------------------------
def _check_ldl(A, hermitian=False, check_errors=False):
    name = "torch.linalg.ldl_factor_ex"
    check_matrix(name, A)
    check_square(name, A)
    check_float(name, A)


_ldl_factor_ex = document(defop("linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False)"
                                " -> (Tensor LD, Tensor pivots, Tensor info)", check=_check_ldl),
         "``(LD, pivots, info)``: LAPACK sytrf's Bunch-Kaufman LDL factorization of each symmetric matrix (its "
         "lower triangle read) and its pivots; not differentiable.")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """``(LD, pivots, info)``: the LDL factorization of each symmetric matrix, from its lower triangle
    (Bunch-Kaufman pivoting: 1 x 1 and 2 x 2 blocks of D, a negative pivot marking a 2 x 2 one); info is
    the first zero pivot (1-based), 0 when there is none."""
    LD, piv, info = _ldl_factor_ex(A, hermitian=hermitian)
    if check_errors:
        raise_for_info("torch.linalg.ldl_factor_ex", info,
                       lambda i: f"The factorization could not be completed because the input is singular "
                                 f"(D[{i},{i}] is zero).")
    return ldl_factor_ex_result(LD, piv, info)


def _ldl_factor_checked(self, hermitian=False):
    LD, piv, info = _ldl_factor_ex(self, hermitian=hermitian)
    raise_for_info("torch.linalg.ldl_factor", info,
                   lambda i: f"The factorization could not be completed because the input is singular "
                             f"(D[{i},{i}] is zero).")
    return LD, piv


_ldl_factor = document(defop("linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)",
                             check=_check_ldl, composite=_ldl_factor_checked),
         "``(LD, pivots)`` of linalg_ldl_factor_ex; raises for a singular block of D.")


def ldl_factor(A, *, hermitian=False):
    """``(LD, pivots)`` of :func:`ldl_factor_ex`; raises for a singular block of D."""
    return ldl_factor_result(*_ldl_factor(A, hermitian=hermitian))


def _check_ldl_solve(LD, pivots, B, hermitian=False):
    name = "torch.linalg.ldl_solve"
    check_matrix(name, LD, "LD")
    check_square(name, LD, "LD")
    check_matrix(name, B, "B")
    if pivots._dtype is not _dt.int32:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {_pt_name(pivots._dtype)}")
    if LD._dtype is not B._dtype:
        raise RuntimeError(f"{name}: LD dtype {_pt_name(LD._dtype)} does not match b dtype {_pt_name(B._dtype)}")
    n = LD._shape[-1]
    if B._shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b matrix is "
                           f"{B._shape[-2]} by {B._shape[-1]}")
    check_float(name, LD)
    broadcast_shapes(LD._shape[:-2], B._shape[:-2])


ldl_solve = document(defop("linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor",
                           check=_check_ldl_solve),
         "``X`` with ``A X = B`` for A given by :func:`ldl_factor`'s ``(LD, pivots)``; not differentiable.")


# -- exports ------------------------------------------------------------------------------------
for _name, _fn in {"lu": lu_legacy, "lu_solve": lu_solve_legacy, "triangular_solve": triangular_solve,
                   "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse, "geqrf": geqrf,
                   "ormqr": ormqr}.items():
    attach(_name, _fn)
    public(_name, _fn)
public("lu_unpack", lu_unpack)
