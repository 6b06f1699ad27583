"""Op database entries of the LU, Householder, eigen and LDL factorizations and the linalg composites
(:mod:`tensorplug.ops.linalg_factor`, :mod:`tensorplug.ops.linalg_composites`).

Imported at the end of :mod:`.op_db`. References are numpy (a plain partial-pivoting LU and Householder
products written out here). Results defined up to a gauge are tested through wrappers: eig's eigenvectors
by their magnitudes, the LDL factors by the solves they give, the randomized low-rank SVD by the matrix
it reconstructs. cholesky_solve and cholesky_inverse differentiate through the whole factor (PyTorch's
formula), so their gradient samples pass the factor through ``tril``/``triu``.
"""

from __future__ import annotations

import numpy as np

import tensorplug as tp

from . import samples as S
from .samples import small_when_grad as _small_when_grad
from .opinfo import OP_DB, OpInfo, SampleInput
from .samples import error_input as _err, errors_of as _errors

L = tp.linalg
FL = (tp.float32, tp.float64)
_TOL = {"atol": 1e-4, "rtol": 1e-4}


def _add(name, op, ref, samples, dtypes=FL, **kw):
    kw = {**_TOL, **kw}
    OP_DB.append(OpInfo(name=name, op=op, ref=ref, dtypes=tuple(dtypes), sample_inputs=_small_when_grad(samples),
                        **kw))


def _m(shape, dtype, seed=0, rg=False, boost=None, values=None):
    rng = np.random.default_rng(seed)
    v = rng.uniform(-1, 1, shape) if values is None else np.asarray(values, np.float64)
    if values is None and len(shape) >= 2 and shape[-1] == shape[-2]:
        v = v + (shape[-1] if boost is None else boost) * np.eye(shape[-1])
    return S.make_tensor(shape, dtype, values=v, seed=seed, requires_grad=rg)


def _c(x, like_dtype):
    return S.cast(np.asarray(x), like_dtype)


def _dt_of(a):
    return np.float32 if np.asarray(a).dtype == np.float32 else np.float64


# -- LU -----------------------------------------------------------------------------------------
def _np_lu(a):
    """Partial-pivoting LU of each matrix (LAPACK getrf's pivots), in float64: ``(LU, pivots)``."""
    a = np.asarray(a, np.float64)
    m, n = a.shape[-2:]
    k = min(m, n)
    flat = a.reshape((int(np.prod(a.shape[:-2])), m, n)).copy()
    pivs = np.zeros((flat.shape[0], k), np.int32)
    for b, u in enumerate(flat):
        for j in range(k):
            p = j + int(np.argmax(np.abs(u[j:, j])))
            pivs[b, j] = p + 1
            u[[j, p]] = u[[p, j]]
            if u[j, j] != 0:
                u[j + 1:, j] /= u[j, j]
                u[j + 1:, j + 1:] -= np.outer(u[j + 1:, j], u[j, j + 1:])
    return flat.reshape(a.shape), pivs.reshape(a.shape[:-2] + (k,))


def _np_unpack(lu, piv):
    m, n = lu.shape[-2:]
    k = min(m, n)
    Lm = np.tril(lu[..., :, :k], -1) + np.eye(m, k)
    U = np.triu(lu[..., :k, :])
    flat = piv.reshape((int(np.prod(piv.shape[:-1])), k))
    Ps = []
    for p in flat:
        perm = list(range(m))
        for i, j in enumerate(p):
            perm[i], perm[j - 1] = perm[j - 1], perm[i]
        P = np.zeros((m, m))
        P[perm, range(m)] = 1
        Ps.append(P)
    P = np.array(Ps).reshape(lu.shape[:-2] + (m, m))
    return P, Lm, U


def _lu_samples(device, dtype, requires_grad):
    for k, shape in enumerate(((3, 3), (2, 3, 3), (4, 2), (2, 4), (0, 0))):
        yield SampleInput(_m(shape, dtype, seed=k, rg=requires_grad, boost=0.5), name=str(shape))


def _lu_factor_ref(a, pivot=True):
    lu, piv = _np_lu(a)
    return _c(lu, _dt_of(a)), piv


def _zero_pivot():
    return S.make_tensor((2, 2), tp.float32, values=np.zeros((2, 2)))


_LU_ERRORS = (
    lambda: _err(RuntimeError, r"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: \[3\] instead",
                 _m((3,), tp.float32)),
    lambda: _err(NotImplementedError, "\"lu_cpu\" not implemented for 'Long'", _m((2, 2), tp.int64)),
    lambda: _err(RuntimeError, "LU without pivoting is not implemented on the CPU", _m((2, 2), tp.float32),
                 pivot=False))
_add("linalg.lu_factor", L.lu_factor, _lu_factor_ref, _lu_samples, aten=("linalg_lu_factor_ex",),
     error_inputs=_errors(*_LU_ERRORS, lambda: _err(RuntimeError, r"U\[1,1\] is zero", _zero_pivot())))
_add("linalg.lu_factor_ex", L.lu_factor_ex,
     lambda a, pivot=True: _lu_factor_ref(a) + (np.zeros(a.shape[:-2], np.int32),), _lu_samples,
     aten=("linalg_lu_factor_ex",), error_inputs=_errors(*_LU_ERRORS))


def _lu_ref(a, pivot=True):
    P, Lm, U = _np_unpack(*_np_lu(a))
    d = _dt_of(a)
    return _c(P, d), _c(Lm, d), _c(U, d)


_add("linalg.lu", L.lu, _lu_ref, _lu_samples, aten=("linalg_lu_factor_ex",))
_add("lu", tp.lu, lambda a, pivot=True, get_infos=False: _lu_factor_ref(a) + (
    (np.zeros(a.shape[:-2], np.int32),) if get_infos else ()),
    lambda d, dt, rg: (SampleInput(s.input, (), kw) for s in _lu_samples(d, dt, rg)
                       for kw in ({}, {"get_infos": True})), aten=("linalg_lu_factor_ex",))


def lu_unpack_of(A, pivots=None):
    """:func:`tensorplug.lu_unpack` of A's LU factors (so the gradient reaches A); of ``(A, pivots)`` when given."""
    return tp.lu_unpack(*L.lu_factor(A)) if pivots is None else tp.lu_unpack(A, pivots)


_add("lu_unpack", lu_unpack_of, _lu_ref, _lu_samples, aten=("linalg_lu_factor_ex",),
     error_inputs=_errors(lambda: _err(RuntimeError, "LU_pivots is expected to be a contiguous tensor of torch.int32",
                                       _m((2, 2), tp.float32), _m((2,), tp.int64))))


def _lu_solve_samples(device, dtype, requires_grad):
    rg = requires_grad
    for k, (n, bshape, kw) in enumerate(((3, (3, 2), {}), (3, (2, 3), {"left": False}),
                                        (3, (3, 2), {"adjoint": True}), (3, (2, 3), {"left": False, "adjoint": True}),
                                        (2, (2, 2, 1), {}))):
        batch = bshape[:-2]
        yield SampleInput(_m(batch + (n, n), dtype, seed=k, rg=rg, boost=0.5),
                          (_m(bshape, dtype, seed=10 + k, rg=rg),), kw, name=str(kw))


def lu_solve_of(A, B, left=True, adjoint=False):
    """:func:`tensorplug.linalg.lu_solve` from A's LU factors."""
    return L.lu_solve(*L.lu_factor(A), B, left=left, adjoint=adjoint)


def _solve_ref(a, b, left=True, adjoint=False):
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if adjoint:
        a64 = np.swapaxes(a64, -1, -2)
    x = np.linalg.solve(a64, b64) if left else np.swapaxes(
        np.linalg.solve(np.swapaxes(a64, -1, -2), np.swapaxes(b64, -1, -2)), -1, -2)
    return _c(x, _dt_of(a))


_add("linalg.lu_solve", lu_solve_of, _solve_ref, _lu_solve_samples, aten=("linalg_lu_factor_ex",
                                                                           "linalg_solve_triangular"),
     error_inputs=_errors(lambda: _err(RuntimeError, r"linalg.lu_solve: Incompatible shapes of A and B for the "
                                                     r"equation AX = B \(3x3 and 2x2\)",
                                       _m((3, 3), tp.float32), _m((2, 2), tp.float32))))


def lu_solve_legacy_of(B, A):
    return tp.lu_solve(B, *L.lu_factor(A))


_add("lu_solve", lu_solve_legacy_of, lambda b, a: _solve_ref(a, b),
     lambda d, dt, rg: (SampleInput(s.args[0], (s.input,)) for s in _lu_solve_samples(d, dt, rg) if not s.kwargs),
     aten=("linalg_lu_factor_ex", "linalg_solve_triangular"))


# -- triangular_solve, cholesky_solve, cholesky_inverse -------------------------------------------
def _tri_samples(device, dtype, requires_grad):
    rg = requires_grad
    for k, (ashape, bshape, kw) in enumerate((((3, 3), (3, 2), {}), ((3, 3), (3, 1), {"upper": False}),
                                             ((3, 3), (3, 2), {"transpose": True}),
                                             ((2, 2, 2), (2, 1), {"unitriangular": True}))):
        yield SampleInput(_m(bshape, dtype, seed=k, rg=rg), (_m(ashape, dtype, seed=10 + k, rg=rg),), kw,
                          name=str(kw))


def _tri_ref(b, a, upper=True, transpose=False, unitriangular=False):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        t = t - np.eye(t.shape[-1]) * np.diagonal(t, 0, -2, -1)[..., None, :] + np.eye(t.shape[-1])
    if transpose:
        t = np.swapaxes(t, -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x = np.linalg.solve(np.broadcast_to(t, batch + t.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:]))
    return _c(x, _dt_of(a)), np.broadcast_to(a, batch + a.shape[-2:]).copy()


_add("triangular_solve", tp.triangular_solve, _tri_ref, _tri_samples, aten=("linalg_solve_triangular",),
     error_inputs=_errors(lambda: _err(RuntimeError, "Incompatible matrix sizes for triangular_solve: each A matrix "
                                                     "is 3 by 3 but each b matrix is 2 by 2",
                                       _m((2, 2), tp.float32), _m((3, 3), tp.float32))))


def _factor(shape, dtype, seed, rg, upper):
    v = np.random.default_rng(seed).uniform(-0.5, 0.5, shape) + 2 * np.eye(shape[-1])
    v = np.triu(v) if upper else np.tril(v)
    return S.make_tensor(shape, dtype, values=v, seed=seed, requires_grad=rg)


def cholesky_solve_tri(B, L_, upper=False):
    """:func:`tensorplug.cholesky_solve` of the triangle of ``L_`` (its formula differentiates through the whole
    factor, so the gradient samples keep to the triangle)."""
    return tp.cholesky_solve(B, L_.triu() if upper else L_.tril(), upper)


def _chol_solve_samples(device, dtype, requires_grad):
    rg = requires_grad
    for k, (bshape, lshape, kw) in enumerate((((3, 2), (3, 3), {}), ((3, 2), (3, 3), {"upper": True}),
                                             ((2, 2, 1), (2, 2), {}))):
        yield SampleInput(_m(bshape, dtype, seed=k, rg=rg), (_factor(lshape, dtype, 10 + k, rg, bool(kw)),), kw,
                          name=str(kw))


def _chol_A(l, upper):
    l = np.triu(l) if upper else np.tril(l)
    lt = np.swapaxes(l, -1, -2)
    return lt @ l if upper else l @ lt


def _chol_solve_ref(b, l, upper=False):
    A = _chol_A(np.asarray(l, np.float64), upper)
    batch = np.broadcast_shapes(A.shape[:-2], b.shape[:-2])
    return _c(np.linalg.solve(np.broadcast_to(A, batch + A.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])),
              _dt_of(b))


_add("cholesky_solve", cholesky_solve_tri, _chol_solve_ref, _chol_solve_samples, aten=("cholesky_solve",),
     error_inputs=_errors(lambda: _err(RuntimeError, "Incompatible matrix sizes for cholesky_solve: each A matrix is "
                                                     "3 by 3 but each b matrix is 2 by 2",
                                       _m((2, 2), tp.float32), _m((3, 3), tp.float32))))


def cholesky_inverse_tri(L_, upper=False):
    """:func:`tensorplug.cholesky_inverse` of the triangle of ``L_``."""
    return tp.cholesky_inverse(L_.triu() if upper else L_.tril(), upper)


_add("cholesky_inverse", cholesky_inverse_tri,
     lambda l, upper=False: _c(np.linalg.inv(_chol_A(np.asarray(l, np.float64), upper)), _dt_of(l)),
     lambda d, dt, rg: (SampleInput(_factor(sh, dt, k, rg, up), (), {"upper": up}, name=str(sh))
                        for k, (sh, up) in enumerate((((3, 3), False), ((3, 3), True), ((2, 2, 2), False)))),
     aten=("cholesky_inverse",),
     error_inputs=_errors(lambda: _err(RuntimeError, "cholesky_inverse: A must be batches of square matrices, but "
                                                     "they are 2 by 3 matrices", _m((2, 3), tp.float32))))


# -- Householder --------------------------------------------------------------------------------
def _np_reflect(a, tau, c, left=True, transpose=False):
    m = a.shape[-2]
    k = tau.shape[-1]
    V = np.tril(a[..., :, :k], -1) + np.eye(m, k)
    order = range(k) if left == transpose else range(k - 1, -1, -1)
    for i in order:
        v = V[..., :, i:i + 1]
        t = tau[..., i, None, None]
        H = np.eye(m) - t * (v @ np.swapaxes(v, -1, -2))
        c = H @ c if left else c @ H
    return c


def _hh_ref(a, tau):
    m, n = a.shape[-2:]
    return _c(_np_reflect(np.asarray(a, np.float64), np.asarray(tau, np.float64),
                          np.broadcast_to(np.eye(m, n), a.shape)), _dt_of(a))


def _hh_samples(device, dtype, requires_grad):
    rg = requires_grad
    for k, (ashape, tshape) in enumerate((((3, 3), (3,)), ((4, 2), (2,)), ((2, 3, 2), (2, 1)))):
        yield SampleInput(_m(ashape, dtype, seed=k, rg=rg), (_m(tshape, dtype, seed=10 + k, rg=rg),), name=str(ashape))


_add("linalg.householder_product", L.householder_product, _hh_ref, _hh_samples, aten=("matmul",),
     error_inputs=_errors(lambda: _err(RuntimeError, r"input.shape\[-2\] must be greater than or equal to "
                                                     r"input.shape\[-1\]", _m((2, 3), tp.float32),
                                       _m((2,), tp.float32))))


def _geqrf_ref(a):
    m, n = a.shape[-2:]
    flat = np.asarray(a, np.float64).reshape((-1, m, n))
    hs, ts = zip(*[np.linalg.qr(x, mode="raw") for x in flat])
    d = _dt_of(a)
    return (_c(np.array([h.T for h in hs]).reshape(a.shape), d),
            _c(np.array(ts).reshape(a.shape[:-2] + (min(m, n),)), d))


_add("geqrf", tp.geqrf, _geqrf_ref,
     lambda d, dt, rg: (SampleInput(_m(sh, dt, seed=k), name=str(sh)) for k, sh in enumerate(((3, 3), (4, 2),
                                                                                               (2, 2, 3)))),
     aten=("geqrf",), supports_autograd=False,
     error_inputs=_errors(lambda: _err(RuntimeError, "torch.geqrf: input must have at least 2 dimensions.",
                                       _m((3,), tp.float32))))


def _ormqr_samples(device, dtype, requires_grad):
    rg = requires_grad
    for k, (ashape, tshape, cshape, kw) in enumerate((
            ((3, 2), (2,), (3, 2), {}), ((3, 2), (2,), (3, 2), {"transpose": True}),
            ((3, 2), (2,), (2, 3), {"left": False}), ((3, 3), (3,), (2, 3), {"left": False, "transpose": True}))):
        yield SampleInput(_m(ashape, dtype, seed=k, rg=rg), (_m(tshape, dtype, seed=10 + k, rg=rg),
                                                              _m(cshape, dtype, seed=20 + k, rg=rg)), kw, name=str(kw))


_add("ormqr", tp.ormqr,
     lambda a, tau, c, left=True, transpose=False: _c(_np_reflect(np.asarray(a, np.float64),
                                                                  np.asarray(tau, np.float64),
                                                                  np.asarray(c, np.float64), left, transpose),
                                                      _dt_of(a)),
     _ormqr_samples, aten=("matmul",),
     error_inputs=_errors(lambda: _err(RuntimeError, "torch.ormqr: input must have at least 2 dimensions.",
                                       _m((), tp.float32), _m((), tp.float32), _m((), tp.float32))))


# -- eig ----------------------------------------------------------------------------------------
def eig_abs(A):
    """``(eigenvalues, |eigenvectors|)``: the eigenvectors' magnitudes do not depend on their phase."""
    w, v = L.eig(A)
    return w, v.abs()


def _eig_ref(a):
    w, v = np.linalg.eig(np.asarray(a, np.float64))
    d = _dt_of(a)
    c = np.complex64 if d is np.float32 else np.complex128
    return w.astype(c), _c(np.abs(v), d)


def _eig_samples(device, dtype, requires_grad):
    rg = requires_grad
    # well separated real eigenvalues (the eigenvectors' magnitudes are smooth there), then a rotation block
    yield SampleInput(_m((3, 3), dtype, values=[[3.0, 0.5, 0.1], [0.2, 1.0, 0.3], [0.1, 0.4, -1.5]], rg=rg),
                      name="real")
    yield SampleInput(_m((2, 2, 2), dtype, values=[[[1.0, 2.0], [-2.0, 1.0]], [[2.0, 0.3], [0.1, -1.0]]], rg=rg),
                      name="batch")


_add("linalg.eig", eig_abs, _eig_ref, _eig_samples, aten=("linalg_eig",),
     error_inputs=_errors(lambda: _err(RuntimeError, "linalg.eig: A must be batches of square matrices, but they "
                                                     "are 3 by 2 matrices", _m((3, 2), tp.float32))))
_add("linalg.eigvals", L.eigvals, lambda a: _eig_ref(a)[0], _eig_samples, aten=("linalg_eig",),
     error_inputs=_errors(lambda: _err(RuntimeError, "Unknown Complex ScalarType for Long", _m((2, 2), tp.int64))))


# -- LDL ----------------------------------------------------------------------------------------
def _sym_samples(device, dtype, requires_grad):
    # an indefinite matrix that needs a 2 x 2 pivot, a definite one, and a batch
    yield SampleInput(_m((3, 3), dtype, values=[[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 1.0]]), name="2x2")
    yield SampleInput(_m((3, 3), dtype, values=[[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]), name="spd")
    yield SampleInput(_m((2, 2, 2), dtype, values=[[[1.0, 3.0], [3.0, 2.0]], [[0.0, 1.0], [1.0, 0.0]]]),
                      name="batch")


def ldl_inverse(A, hermitian=False):
    """The inverse of A through its LDL factors (:func:`ldl_factor` then :func:`ldl_solve`)."""
    LD, piv = L.ldl_factor(A, hermitian=hermitian)
    n = A.shape[-1]
    return L.ldl_solve(LD, piv, tp.eye(n, dtype=A.dtype).expand(A.shape), hermitian=hermitian)


def ldl_ex_inverse(A, hermitian=False):
    LD, piv, info = L.ldl_factor_ex(A, hermitian=hermitian)
    n = A.shape[-1]
    return L.ldl_solve(LD, piv, tp.eye(n, dtype=A.dtype).expand(A.shape), hermitian=hermitian), info


def _ldl_inv_ref(a, hermitian=False):
    return _c(np.linalg.inv(np.asarray(a, np.float64)), _dt_of(a))


_add("linalg.ldl_factor", ldl_inverse, _ldl_inv_ref, _sym_samples, aten=("linalg_ldl_factor_ex", "linalg_ldl_solve"),
     supports_autograd=False,
     error_inputs=_errors(lambda: _err(RuntimeError, "torch.linalg.ldl_factor_ex: A must be batches of square "
                                                     "matrices, but they are 3 by 2 matrices", _m((3, 2), tp.float32))))
_add("linalg.ldl_factor_ex", ldl_ex_inverse,
     lambda a, hermitian=False: (_ldl_inv_ref(a), np.zeros(a.shape[:-2], np.int32)), _sym_samples,
     aten=("linalg_ldl_factor_ex", "linalg_ldl_solve"), supports_autograd=False)


def ldl_solve_of(A, B, hermitian=False):
    """:func:`tensorplug.linalg.ldl_solve` from A's LDL factors."""
    return L.ldl_solve(*L.ldl_factor(A, hermitian=hermitian), B, hermitian=hermitian)


_add("linalg.ldl_solve", ldl_solve_of,
     lambda a, b, hermitian=False: _c(np.linalg.solve(np.asarray(a, np.float64), b), _dt_of(a)),
     lambda d, dt, rg: (SampleInput(s.input, (_m(s.input.shape[:-1] + (2,), dt, seed=k),), name=s.name)
                        for k, s in enumerate(_sym_samples(d, dt, rg))),
     aten=("linalg_ldl_factor_ex", "linalg_ldl_solve"), supports_autograd=False,
     error_inputs=_errors(lambda: _err(RuntimeError, "Incompatible matrix sizes for torch.linalg.ldl_solve: each A "
                                                     "matrix is 3 by 3 but each b matrix is 2 by 2",
                                       _m((3, 3), tp.float32), _m((2, 2), tp.float32))))


# -- composites ---------------------------------------------------------------------------------
def _cond_ref(a, p=None):
    a64 = np.asarray(a, np.float64)
    return _c(np.linalg.cond(a64, p), _dt_of(a))


_add("linalg.cond", L.cond, _cond_ref,
     lambda d, dt, rg: (SampleInput(_m(sh, dt, seed=k, rg=rg), (), kw, name=str(kw))
                        for k, (sh, kw) in enumerate((((3, 3), {}), ((2, 3, 3), {"p": "fro"}), ((3, 3), {"p": 1}),
                                                     ((3, 2), {"p": -2})))),
     aten=("_linalg_svd", "linalg_inv_ex"),
     error_inputs=_errors(lambda: _err(RuntimeError, "linalg.cond: The input tensor must have at least 2 dimensions.",
                                       _m((3,), tp.float32))))
_add("linalg.diagonal", L.diagonal, lambda a, offset=0, dim1=-2, dim2=-1: np.diagonal(a, offset, dim1, dim2),
     lambda d, dt, rg: (SampleInput(_m(sh, dt, seed=k, rg=rg), (), kw, name=str(kw))
                        for k, (sh, kw) in enumerate((((3, 3), {}), ((2, 3, 4), {"offset": 1, "dim1": 0, "dim2": 2})))),
     dtypes=FL + (tp.int64,), aten=("diagonal",), is_view=True)
_add("linalg.vander", L.vander, lambda x, N=None: np.stack(
    [np.vander(r, N, increasing=True) for r in x.reshape((-1, x.shape[-1]))]).reshape(
        x.shape + (x.shape[-1] if N is None else N,)).astype(x.dtype),
     lambda d, dt, rg: (SampleInput(_m(sh, dt, seed=k, rg=rg), (), kw, name=str(kw))
                        for k, (sh, kw) in enumerate((((3,), {}), ((2, 3), {"N": 4})))),
     dtypes=FL + (tp.int64,), aten=("cumprod",),
     error_inputs=_errors(lambda: _err(RuntimeError, "N must be greater than 1.", _m((2,), tp.float32), N=1)))


def _tensorinv_ref(a, ind=2):
    return _c(np.linalg.tensorinv(np.asarray(a, np.float64), ind), _dt_of(a))


_add("linalg.tensorinv", L.tensorinv, _tensorinv_ref,
     lambda d, dt, rg: (SampleInput(_m(sh, dt, seed=k, rg=rg, values=np.eye(4).reshape(sh) * 2 +
                                       np.random.default_rng(k).uniform(-0.3, 0.3, sh)), (), kw, name=str(sh))
                        for k, (sh, kw) in enumerate((((2, 2, 4), {"ind": 2}), ((4, 2, 2), {"ind": 1})))),
     aten=("linalg_inv",),
     error_inputs=_errors(lambda: _err(RuntimeError, "Expected a strictly positive integer for 'ind', but got 0",
                                       _m((2, 2), tp.float32), ind=0)))


def _tensorsolve_ref(a, b, dims=None):
    return _c(np.linalg.tensorsolve(np.asarray(a, np.float64), np.asarray(b, np.float64), dims), _dt_of(a))


_add("linalg.tensorsolve", L.tensorsolve, _tensorsolve_ref,
     lambda d, dt, rg: (SampleInput(_m(sh, dt, seed=k, rg=rg, values=np.eye(4).reshape(sh) * 2 +
                                       np.random.default_rng(k).uniform(-0.3, 0.3, sh)),
                                    (_m(bs, dt, seed=10 + k, rg=rg),), kw, name=str(kw))
                        for k, (sh, bs, kw) in enumerate((((2, 2, 4), (2, 2), {}),
                                                         ((2, 4, 2), (2, 2), {"dims": (1,)})))),
     aten=("linalg_solve",))


# -- randomized low rank ------------------------------------------------------------------------
def svd_lowrank_product(A, q=None, niter=2):
    """``U diag(S) V^T`` of :func:`tensorplug.svd_lowrank` with ``q`` the full rank: A itself, whatever the
    random projection (the factors' signs follow it)."""
    U, S_, V = tp.svd_lowrank(A, q=min(A.shape[-2:]) if q is None else q, niter=niter)
    return (U * S_.unsqueeze(-2)) @ V.mT


def pca_lowrank_product(A, q=None, center=True):
    U, S_, V = tp.pca_lowrank(A, q=min(A.shape[-2:]) if q is None else q, center=center)
    return (U * S_.unsqueeze(-2)) @ V.mT


def _lowrank_samples(device, dtype, requires_grad):
    for k, sh in enumerate(((4, 3), (3, 4), (2, 4, 2))):
        yield SampleInput(_m(sh, dtype, seed=k, rg=requires_grad), name=str(sh))


# random entries have no reference (the suite checks shapes, dtypes and reproducibility from a seed); the
# reconstruction's values are checked in tests/test_linalg_factor_torch_oracle.py
_add("svd_lowrank", svd_lowrank_product, None, _lowrank_samples, random=True,
     aten=("linalg_qr", "_linalg_svd", "normal_"))
_add("pca_lowrank", pca_lowrank_product, None, _lowrank_samples,
     random=True, aten=("linalg_qr", "_linalg_svd", "normal_"),
     error_inputs=_errors(lambda: _err(ValueError, r"q\(=5\) must be non-negative integer and not greater than "
                                                   r"min\(m, n\)=3", _m((3, 4), tp.float32), q=5)))
