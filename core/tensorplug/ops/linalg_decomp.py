"""Matrix decompositions and solves: the primitives behind :mod:`tensorplug.linalg`.

Each is an operator with a kernel per backend (the CPU's calls numpy.linalg) and a backward formula
(PyTorch's): ``linalg_inv_ex``, ``linalg_solve_ex``, ``linalg_det``, ``linalg_slogdet``,
``_linalg_svd``, ``linalg_eigh``, ``linalg_qr``, ``linalg_cholesky_ex``, ``linalg_solve_triangular``
and ``linalg_matrix_exp``. All take batches of matrices (any leading dims). The ``*_ex`` forms return
LAPACK's ``info`` per matrix instead of raising; :mod:`tensorplug.linalg` reads it and raises
:class:`LinAlgError` with PyTorch's messages, so kernels never raise for singular input.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from ._common import document
from ._lib import defop
from .factories import eye as _eye
from .linalg import matmul
from .joining import cat
from .promotion import _pt_name, broadcast_shapes


class LinAlgError(RuntimeError):  # noqa: N818 (PyTorch's name)
    """A linear algebra routine failed on its input (singular, not positive-definite): PyTorch's
    ``torch.linalg.LinAlgError``, a RuntimeError."""

    __module__ = "tensorplug.linalg"


_LOW = (_dt.float16, _dt.bfloat16)


def check_float(name, A, what="A"):
    """PyTorch's dtype checks of a linalg function: floating point, and not a half type."""
    d = A._dtype
    if not d.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_pt_name(d)}")
    if d in _LOW:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_pt_name(d)}")


def check_matrix(name, A, what="A"):
    if len(A._shape) < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


def check_square(name, A, what="A"):
    check_matrix(name, A, what)
    m, n = A._shape[-2:]
    if m != n:
        raise RuntimeError(f"{name}: {what} must be batches of square matrices, but they are {m} by {n} matrices")


def _square_float(name):
    def check(A, *args, **kwargs):
        check_square(name, A)
        check_float(name, A)
    return check


def _eye_like(n, like):
    return _eye(n, dtype=like._dtype, device=like._device)


def _diag(v):
    """The diagonal matrices of the vectors ``v`` (..., k)."""
    k = v._shape[-1]
    return _eye_like(k, v) * v.unsqueeze(-2)


def _is_zero(g):
    """Whether a gradient is zero everywhere: autograd passes zeros for an output that got none, and
    PyTorch's formulas drop such a term (where it would divide 0 by 0 on repeated eigenvalues)."""
    return not bool((g != 0).any())


# -- inverse ------------------------------------------------------------------------------------
inv_ex = document(defop("linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)",
               check=_square_float("linalg.inv")),
         "``(inverse, info)`` of each square matrix; ``info`` is LAPACK's (the first zero pivot, 1-based; 0 "
         "when invertible).")


def _inv_backward(g, inv):
    return -matmul(inv.mT, matmul(g, inv.mT))


@derivative("linalg_inv_ex", nondiff_outputs=(1,))
def _(grads, result):
    return _inv_backward(grads[0], result)


_SINGULAR = "The diagonal element {} is zero, the inversion could not be completed because the input matrix is " \
            "singular."


def _inv(A):
    res, info = inv_ex(A)
    raise_for_info("linalg.inv", info, _SINGULAR.format)
    return res


# The checked forms are ops of their own (with the primitive's formula and batching rule) so that the
# info check runs below vmap, on the whole batch, as PyTorch's kernels do.
inv = document(defop("linalg_inv(Tensor A) -> Tensor", check=_square_float("linalg.inv"), composite=_inv),
         "The inverse of each square matrix; LinAlgError for a singular one.")


@derivative("linalg_inv")
def _(grad, result):
    return _inv_backward(grad, result)


# -- solve --------------------------------------------------------------------------------------
def _check_solve(A, B):
    check_float("linalg.solve", A)
    check_square("linalg.solve", A)
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_pt_name(A._dtype)} and B of type {_pt_name(B._dtype)} instead")
    n = A._shape[-1]
    if len(B._shape) < 2 or B._shape[-2] != n:
        rows, cols = (B._shape[0], 1) if len(B._shape) == 1 else B._shape[-2:]
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {rows}x{cols})")
    broadcast_shapes(A._shape[:-2], B._shape[:-2])


solve_ex = document(defop("linalg_solve_ex(Tensor A, Tensor B) -> (Tensor result, Tensor info)", check=_check_solve),
         "``(X, info)`` with ``A X = B`` for matrices ``B``; batch dims broadcast; ``info`` per matrix as for "
         "inv_ex.")


def _solve_backward(g, A, B, X, needs_input_grad):
    gB = solve(A.mT, g)
    gA = -matmul(gB, X.mT) if needs_input_grad[0] else None
    return (sum_to(gA, A._shape) if gA is not None else None,
            sum_to(gB, B._shape) if needs_input_grad[1] else None)


@derivative("linalg_solve_ex", nondiff_outputs=(1,))
def _(grads, A, B, result, needs_input_grad):
    return _solve_backward(grads[0], A, B, result, needs_input_grad)


def _solve(A, B):
    X, info = solve_ex(A, B)
    raise_for_info("torch.linalg.solve", info, lambda i: "The solver failed because the input matrix is singular.")
    return X


solve = document(defop("linalg_solve(Tensor A, Tensor B) -> Tensor", check=_check_solve, composite=_solve),
         "``X`` with ``A X = B`` for matrices ``B`` (batch dims broadcast); LinAlgError for a singular A.")


@derivative("linalg_solve")
def _(grad, A, B, result, needs_input_grad):
    return _solve_backward(grad, A, B, result, needs_input_grad)


def raise_for_info(name, info, message):
    """Raise :class:`LinAlgError` with PyTorch's text for the first matrix whose ``info`` is nonzero."""
    if not info._shape:
        i = int(info.item())
        if i:
            raise LinAlgError(f"{name}: {message(i)}")
        return
    for b, i in enumerate(info.reshape((-1,)).tolist()):
        if i:
            raise LinAlgError(f"{name}: (Batch element {b}): {message(i)}")


# -- determinants -------------------------------------------------------------------------------
det = document(defop("linalg_det(Tensor A) -> Tensor", check=_square_float("linalg.det")),
         "The determinant of each square matrix (its gradient, the cofactor matrix, is defined for singular "
         "ones too).")


def _cofactor(A):
    """The cofactor matrices of ``A`` from its SVD, defined for singular matrices too:
    ``det(U) det(V) U diag(prod_{j != i} s_j) V^T``."""
    U, S, Vh = svd(A, False, True)
    n = S._shape[-1]
    if n == 0:
        return A
    eye = _eye(n, dtype=_dt.bool, device=A._device)
    others = S.unsqueeze(-2).expand(S._shape[:-1] + (n, n)).masked_fill(eye, 1).prod(-1)
    sign = det(U) * det(Vh)
    return matmul(U * (others * sign.unsqueeze(-1)).unsqueeze(-2), Vh)


@derivative("linalg_det")
def _(grad, A):
    return grad.unsqueeze(-1).unsqueeze(-1) * _cofactor(A)


slogdet = document(defop("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)",
                         check=_square_float("linalg.slogdet")),
         "``(sign, logabsdet)`` of each square matrix's determinant.")


@derivative("linalg_slogdet", nondiff_outputs=(0,))
def _(grads, A):
    g = grads[1]
    return g.unsqueeze(-1).unsqueeze(-1) * inv(A).mT




# -- svd ----------------------------------------------------------------------------------------
def _check_svd(A, full_matrices=False, compute_uv=True):
    check_matrix("linalg.svd", A)
    check_float("linalg.svd", A)


svd = document(defop("_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True) -> (Tensor U, Tensor S, "
            "Tensor Vh)", check=_check_svd),
         "``(U, S, Vh)`` with ``A = U diag(S) Vh``; without ``compute_uv``, U and Vh are empty.")


def _skew(X):
    return X - X.mT


@derivative("_linalg_svd")
def _(grads, full_matrices, compute_uv, result, result1, result2):
    # PyTorch's svd_backward for real inputs; with full_matrices only the first k columns take part
    gU, gS, gVh = grads
    U, S, Vh = result, result1, result2
    k = S._shape[-1]
    if not compute_uv:
        raise RuntimeError("linalg.svd: the derivative needs U and Vh; compute them with compute_uv=True")
    m, n = U._shape[-2], Vh._shape[-1]
    if full_matrices:
        U, Vh, gU, gVh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k), gU.narrow(-1, 0, k), gVh.narrow(-2, 0, k)
    use_u, use_v = not _is_zero(gU), not _is_zero(gVh)
    if not use_u and not use_v:
        return matmul(U, gS.unsqueeze(-1) * Vh) if m >= n else matmul(U * gS.unsqueeze(-2), Vh)
    V, gV = Vh.mT, gVh.mT
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E = E + _eye_like(k, E)  # the diagonal divides zeros: any nonzero will do
    if use_u and use_v:
        gA = (_skew(matmul(U.mT, gU)) * S.unsqueeze(-2) + S.unsqueeze(-1) * _skew(matmul(Vh, gV))) / E
    elif use_u:
        gA = (_skew(matmul(U.mT, gU)) / E) * S.unsqueeze(-2)
    else:
        gA = S.unsqueeze(-1) * (_skew(matmul(Vh, gV)) / E)
    gA = gA + _diag(gS)
    if m > n and use_u:
        gA = matmul(U, gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - matmul(U, matmul(U.mT, gUSinv))
        return matmul(gA, Vh)
    if m < n and use_v:
        gA = matmul(gA, Vh)
        gVSinv = gV / S.unsqueeze(-2)
        gA = gA + gVSinv.mT - matmul(matmul(gVSinv.mT, V), Vh)
        return matmul(U, gA)
    return matmul(U, matmul(gA, Vh)) if m >= n else matmul(matmul(U, gA), Vh)


# -- eigh ---------------------------------------------------------------------------------------
def _check_eigh(A, UPLO="L"):
    check_square("linalg.eigh", A)
    d = A._dtype
    if not d.is_floating_point or d in _LOW:
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{_pt_name(d)}'")
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


eigh = document(defop("linalg_eigh(Tensor A, str UPLO=\"L\") -> (Tensor eigenvalues, Tensor eigenvectors)",
             check=_check_eigh),
         '``(eigenvalues, eigenvectors)`` of each symmetric matrix, read from its lower (UPLO="L") or upper '
         "triangle.")


@derivative("linalg_eigh")
def _(grads, result, result1):
    gL, gV = grads
    L, V = result, result1
    if _is_zero(gV):
        return matmul(V, gL.unsqueeze(-1) * V.mT)
    n = L._shape[-1]
    E = L.unsqueeze(-2) - L.unsqueeze(-1)
    E = E + _eye_like(n, E)
    inner = matmul(V.mT, gV)
    inner = (inner - inner.mT) * 0.5 / E
    return matmul(V, matmul(inner + _diag(gL), V.mT))


# -- qr -----------------------------------------------------------------------------------------
def _check_qr(A, mode="reduced"):
    check_matrix("linalg.qr", A)
    check_float("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")


qr = document(defop("linalg_qr(Tensor A, str mode=\"reduced\") -> (Tensor Q, Tensor R)", check=_check_qr),
         '``(Q, R)`` with ``A = QR``; ``mode`` "reduced", "complete" or "r" (Q empty).')


def _copyltu(M):
    lower = M.tril(-1)
    return lower + lower.mT + _diag(M.diagonal(0, -2, -1))


def _qr_square_backward(gQ, gR, Q, R):
    """``A = QR`` with ``A`` m x n, m >= n, Q m x n: ``(gQ + Q copyltu(M)) R^{-T}``, M = R gR^T - gQ^T Q."""
    M = matmul(R, gR.mT) - matmul(gQ.mT, Q)
    b = gQ + matmul(Q, _copyltu(M))
    return solve_triangular(R.mT, b, upper=False, left=False)


@derivative("linalg_qr")
def _(grads, mode, result, result1):
    gQ, gR = grads
    Q, R = result, result1
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = Q._shape[-2], R._shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if m >= n:
        return _qr_square_backward(gQ, gR, Q, R)
    # A = Q [X | Y] with X square: Y's part reaches Q through Y = Q R[:, m:]
    Y = matmul(Q, R.narrow(-1, m, n - m))
    gY = gR.narrow(-1, m, n - m)
    gX = _qr_square_backward(gQ + matmul(Y, gY.mT), gR.narrow(-1, 0, m), Q, R.narrow(-1, 0, m))
    return cat([gX, matmul(Q, gY)], -1)


# -- cholesky -----------------------------------------------------------------------------------
cholesky_ex = document(defop("linalg_cholesky_ex(Tensor A, *, bool upper=False, bool check_errors=False) -> (Tensor L, "
                    "Tensor info)", check=_square_float("linalg.cholesky")),
         "``(L, info)``: the Cholesky factor and the order of the first leading minor that is not positive-"
         "definite (0: none).")


@derivative("linalg_cholesky_ex", nondiff_outputs=(1,))
def _(grads, upper, result):
    return _cholesky_backward(grads[0], result, upper)


_NOT_PD = "The factorization could not be completed because the input is not positive-definite (the leading " \
          "minor of order {} is not positive-definite)."


def _cholesky(name):
    def impl(A, upper=False):
        L, info = cholesky_ex(A, upper=upper)
        raise_for_info(name, info, _NOT_PD.format)
        return L
    return impl


cholesky = document(defop("linalg_cholesky(Tensor A, *, bool upper=False) -> Tensor",
                          check=_square_float("linalg.cholesky"), composite=_cholesky("linalg.cholesky")),
         "The lower (``upper=True``: upper) Cholesky factor of each symmetric positive-definite matrix; "
         "LinAlgError otherwise.")
cholesky_legacy = document(defop("cholesky(Tensor self, bool upper=False) -> Tensor", check=_square_float("cholesky"),
                        composite=_cholesky("cholesky")),
         "``torch.cholesky``: the lower (or upper) Cholesky factor; LinAlgError for a matrix that is not "
         "positive-definite.")


@derivative("linalg_cholesky")
def _(grad, upper, result):
    return _cholesky_backward(grad, result, upper)


@derivative("cholesky")
def _(grad, upper, result):
    return _cholesky_backward(grad, result, upper)


def _cholesky_backward(gL, L, upper):
    if upper:
        gL, L = gL.mT, L.mT
    phi = matmul(L.mT, gL).tril()
    phi = phi - _diag(phi.diagonal(0, -2, -1)) * 0.5
    # L^{-T} phi L^{-1}
    gA = solve_triangular(L.mT, solve_triangular(L, phi, upper=False, left=False), upper=True)
    return (gA + gA.mT) * 0.5


# -- triangular solve ---------------------------------------------------------------------------
def _check_solve_triangular(A, B, upper, left=True, unitriangular=False):
    name = "linalg.solve_triangular"
    check_float(name, A)
    check_matrix(name, A)
    check_matrix(name, B, "B")
    check_square(name, A)
    if A._dtype is not B._dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of type "
                           f"{_pt_name(A._dtype)} and B of type {_pt_name(B._dtype)} instead")
    n = A._shape[-1]
    rows, cols = B._shape[-2:]
    if (rows if left else cols) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{rows}x{cols})")
    broadcast_shapes(A._shape[:-2], B._shape[:-2])


solve_triangular = document(defop("linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, "
                         "bool unitriangular=False) -> Tensor", check=_check_solve_triangular),
         "``X`` with ``A X = B`` (``X A = B`` with ``left=False``) for triangular ``A`` (only its ``upper`` or"
         " lower triangle is read; ``unitriangular``: its diagonal is taken as ones).")


@derivative("linalg_solve_triangular")
def _(grad, self, B, upper, left, unitriangular, result, needs_input_grad):
    gB = solve_triangular(self.mT, grad, upper=not upper, left=left, unitriangular=unitriangular)
    gA = None
    if needs_input_grad[0]:
        gA = -matmul(gB, result.mT) if left else -matmul(result.mT, gB)
        gA = gA.triu(1 if unitriangular else 0) if upper else gA.tril(-1 if unitriangular else 0)
        gA = sum_to(gA, self._shape)
    return gA, (sum_to(gB, B._shape) if needs_input_grad[1] else None)


# -- matrix exponential -------------------------------------------------------------------------
matrix_exp = document(defop("linalg_matrix_exp(Tensor self) -> Tensor", check=_square_float("linalg.matrix_exp")),
         "The matrix exponential of each square matrix (scaling and squaring with a Pade approximant).")


@derivative("linalg_matrix_exp")
def _(grad, self):
    # the upper right block of exp([[A^T, G], [0, A^T]])
    n = self._shape[-1]
    At = self.mT
    zero = At * 0
    big = cat([cat([At, grad], -1), cat([zero, At], -1)], -2)
    return matrix_exp(big).narrow(-2, 0, n).narrow(-1, n, n)
