"""Op database entries of ``tensorplug.linalg``, its legacy top-level names and the matrix products.

Imported at the end of :mod:`.op_db`. Decompositions whose results are defined up to signs (SVD,
eigh) are tested through wrappers that fix each singular or eigen vector's sign (its largest entry
positive), so results compare across backends and against numpy; ops that need symmetric or
positive-definite input (eigh, cholesky) are tested through wrappers that build one from any matrix,
so gradients (and vmap's permuted examples) stay in the op's domain.
"""

from __future__ import annotations

import math

import numpy as np

import tensorplug as tp
from tensorplug import Tensor

from . import samples as S
from .samples import small_when_grad as _small_when_grad
from .opinfo import OP_DB, OpInfo, SampleInput
from .samples import error_input as _err, errors_of as _errors

ALIASES: dict = {}
"""Public names that are another name of an entry's op here (merged into :data:`.op_db.ALIASES`)."""



def _add(name, op, ref, dtypes, samples, **kw):
    info = OpInfo(name=name, op=op, ref=ref, dtypes=tuple(dtypes), sample_inputs=_small_when_grad(samples), **kw)
    OP_DB.append(info)
    return info


def _alias(entry_name, *names):
    for n in names:
        ALIASES[n] = entry_name


def _t(shape, dtype=tp.float32, seed=0, **kw):
    return S.make_tensor(shape, dtype, seed=seed, **kw)


def _not_impl(kernel, dtype_name):
    return f'"{kernel}(_vml)?(_cpu)?" not implemented for \'{dtype_name}\''

L = tp.linalg
FL = (tp.float32, tp.float64)
_TOL = {"atol": 1e-4, "rtol": 1e-4}  # float32 LAPACK against a float64 reference
_LINALG_ERR = L.LinAlgError


def _mat(shape, dtype, seed=0, rg=False, boost=None, noncontiguous=False):
    """A random matrix batch (uniform on [-1, 1)) plus ``boost`` times the identity (default: n, which
    keeps it well conditioned)."""
    rng = np.random.default_rng(seed)
    v = rng.uniform(-1, 1, shape)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        n = shape[-1]
        v = v + (n if boost is None else boost) * np.eye(n)
    return S.make_tensor(shape, dtype, values=v, seed=seed, requires_grad=rg, noncontiguous=noncontiguous)


def _f(a):
    return S.f64(a)


def _cast(x, like):
    return S.cast(np.asarray(x), like.dtype)


# -- sign fixing ---------------------------------------------------------------------------------
def _fix_signs(U, Vh):
    """Flip each column of U (and the matching row of Vh) so that its largest-magnitude entry is positive."""
    if U.shape[-1] == 0 or U.shape[-2] == 0:
        return U, Vh
    idx = U.abs().argmax(-2, keepdim=True)
    s = U.gather(-2, idx).sign()
    s = tp.where(s == 0, 1.0, s)
    return U * s, (Vh * s.mT if Vh is not None else None)


def _np_fix_signs(U, Vh):
    if U.shape[-1] == 0 or U.shape[-2] == 0:
        return U, Vh
    idx = np.abs(U).argmax(-2)[..., None, :]
    s = np.sign(np.take_along_axis(U, idx, -2))
    s = np.where(s == 0, 1, s)
    return U * s, (Vh * np.swapaxes(s, -1, -2) if Vh is not None else None)


def svd_fixed(A, full_matrices=True):
    """``linalg.svd`` with each singular vector pair's sign fixed."""
    U, S_, Vh = L.svd(A, full_matrices=full_matrices)
    k = S_.shape[-1]
    Uk, Vk = _fix_signs(U[..., :k], Vh[..., :k, :])
    if U.shape[-1] > k or Vh.shape[-2] > k:  # full_matrices: the extra columns as they come
        return tp.cat([Uk, U[..., k:]], -1), S_, tp.cat([Vk, Vh[..., k:, :]], -2)
    return Uk, S_, Vk


def _svd_ref(a, full_matrices=True):
    u, s, vh = np.linalg.svd(_f(a), full_matrices=full_matrices)
    k = s.shape[-1]
    uk, vk = _np_fix_signs(u[..., :k], vh[..., :k, :])
    if full_matrices:
        # the extra columns are a basis of a null space: any one is right, so the test takes the op's
        uk, vk = np.concatenate([uk, u[..., k:]], -1), np.concatenate([vk, vh[..., k:, :]], -2)
    return _cast(uk, a), _cast(s, a), _cast(vk, a)


def _sym(A):
    return (A + A.mT) * 0.5


def eigh_fixed(A, UPLO="L", symmetrize=False):
    """``linalg.eigh`` (of ``(A + A^T) / 2`` with ``symmetrize``) with each eigenvector's sign fixed."""
    w, V = L.eigh(_sym(A) if symmetrize else A, UPLO)
    return w, _fix_signs(V, None)[0]


def _eigh_ref(a, UPLO="L", symmetrize=False):
    x = _f(a)
    if symmetrize:
        x = (x + np.swapaxes(x, -1, -2)) / 2
    w, v = np.linalg.eigh(x, UPLO=UPLO)
    return _cast(w, a), _cast(_np_fix_signs(v, None)[0], a)


def eigvalsh_sym(A, UPLO="L", symmetrize=False):
    """``linalg.eigvalsh`` (of ``(A + A^T) / 2`` with ``symmetrize``)."""
    return L.eigvalsh(_sym(A) if symmetrize else A, UPLO)


def _spd(A):
    n = A.shape[-1]
    return A @ A.mT + tp.eye(n, dtype=A.dtype, device=A.device) * n


def _np_spd(a):
    n = a.shape[-1]
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _on_spd(fn, doc):
    def op(A, *args, raw=False, **kwargs):
        return fn(A if raw else _spd(A), *args, **kwargs)
    op.__name__ = op.__qualname__ = fn.__name__
    op.__doc__ = doc
    return op


cholesky_spd = _on_spd(L.cholesky, "``linalg.cholesky`` of ``A A^T + n I`` (of ``A`` itself with raw=True).")
cholesky_ex_spd = _on_spd(L.cholesky_ex, "``linalg.cholesky_ex`` of ``A A^T + n I`` (of ``A`` with raw=True).")
cholesky_legacy_spd = _on_spd(tp.cholesky, "``tensorplug.cholesky`` of ``A A^T + n I`` (of ``A`` with raw=True).")


def _cholesky_ref(a, upper=False, raw=False):
    x = _f(a) if raw else _np_spd(_f(a))
    low = np.linalg.cholesky(x)
    return _cast(np.swapaxes(low, -1, -2) if upper else low, a)


# -- samples -------------------------------------------------------------------------------------
_SQUARE = (("3x3", (3, 3)), ("batch", (2, 3, 3)), ("batch2", (2, 1, 2, 2)), ("1x1", (1, 1)))
_EMPTY_SQUARE = (("0x0", (0, 0)), ("empty_batch", (0, 3, 3)))


def _square_samples(empty=True, large=True, boost=None, **kw):
    def gen(device, dtype, requires_grad):
        for i, (name, shape) in enumerate(_SQUARE):
            yield SampleInput(_mat(shape, dtype, i, requires_grad, boost), (), dict(kw), name=name)
        yield SampleInput(_mat((3, 3), dtype, 9, requires_grad, boost, noncontiguous=True), (), dict(kw),
                          name="noncontiguous")
        if not requires_grad:
            if large:
                yield SampleInput(_mat((24, 24), dtype, 11, boost=boost), (), dict(kw), name="large")
            if empty:
                for name, shape in _EMPTY_SQUARE:
                    yield SampleInput(_mat(shape, dtype, 12), (), dict(kw), name=name)
    return gen


_RECT = (("4x3", (4, 3)), ("3x3", (3, 3)), ("2x4", (2, 4)), ("batch", (2, 4, 3)), ("batch_wide", (2, 2, 3)))


def _rect_samples(kwargs_list=({},), empty=True, grad_kwargs=None):
    def gen(device, dtype, requires_grad):
        kws = kwargs_list if not requires_grad or grad_kwargs is None else grad_kwargs
        for j, kw in enumerate(kws):
            for i, (name, shape) in enumerate(_RECT):
                yield SampleInput(_mat(shape, dtype, 10 * j + i, requires_grad, boost=1.0), (), dict(kw),
                                  name=f"{name}_{kw}")
        if not requires_grad and empty:
            for shape in ((0, 3), (3, 0), (2, 0, 0)):
                yield SampleInput(_mat(shape, dtype, 3), (), dict(kws[0]), name=f"empty_{shape}")
    return gen


_SQUARE_ERRORS = ("rect", "int", "vector")


def _square_errors(name, *extra, checks=_SQUARE_ERRORS, low_precision=True):
    makers = []
    if "rect" in checks:
        makers.append(lambda: _err(RuntimeError, rf"{name}: A must be batches of square matrices, but they are 2 by 3 "
                                                 r"matrices", _t((2, 3))))
    if "int" in checks:
        makers.append(lambda: _err(RuntimeError, rf"{name}: Expected a floating point or complex tensor as input. "
                                                 r"Got Long", _t((3, 3), tp.int64)))
    if "vector" in checks:
        makers.append(lambda: _err(RuntimeError, rf"{name}: The input tensor A must have at least 2 dimensions.",
                                   _t((3,))))
    if low_precision:
        makers.append(lambda: _err(RuntimeError, rf"{name}: Low precision dtypes not supported. Got Half",
                                   _t((3, 3), tp.float16)))
    return _errors(*makers, *extra)


def _singular():
    return S.make_tensor((2, 2), tp.float32, values=np.array([[1.0, 2.0], [2.0, 4.0]]))


def _singular_batch():
    return S.make_tensor((2, 2, 2), tp.float32, values=np.array([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]]))


_SING = r"The diagonal element 2 is zero, the inversion could not be completed because the input matrix is singular\."
_NOT_PD = (r"The factorization could not be completed because the input is not positive-definite \(the leading minor "
           r"of order 2 is not positive-definite\)\.")


# -- inverse, determinants ------------------------------------------------------------------------
def _inv_ref(a):
    return _cast(np.linalg.inv(_f(a)) if a.size else np.zeros(a.shape), a)


_add("linalg.inv", L.inv, _inv_ref, FL, _square_samples(), aten=("linalg_inv",), **_TOL,
     error_inputs=_square_errors("linalg.inv",
                                 lambda: _err(_LINALG_ERR, rf"linalg.inv: {_SING}", _singular()),
                                 lambda: _err(_LINALG_ERR, rf"linalg.inv: \(Batch element 1\): {_SING}",
                                              _singular_batch())))
_alias("linalg.inv", "inverse")
_add("linalg.inv_ex", L.inv_ex, lambda a, check_errors=False: (_inv_ref(a), np.zeros(a.shape[:-2], np.int32)), FL,
     _square_samples(), aten=("linalg_inv_ex",), **_TOL,
     error_inputs=_errors(lambda: _err(_LINALG_ERR, rf"linalg.inv_ex: {_SING}", _singular(), check_errors=True)))


def _det_ref(a):
    return _cast(np.linalg.det(_f(a)) if a.size else np.ones(a.shape[:-2]), a)


def _slogdet_ref(a):
    if not a.size:
        return _cast(np.ones(a.shape[:-2]), a), _cast(np.zeros(a.shape[:-2]), a)
    s, l = np.linalg.slogdet(_f(a))
    return _cast(s, a), _cast(l, a)


def _singular_det_samples(device, dtype, requires_grad):
    yield from _square_samples(boost=0.0)(device, dtype, requires_grad)
    if not requires_grad:
        yield SampleInput(_singular().to(dtype), name="singular")


_add("linalg.det", L.det, _det_ref, FL, _square_samples(), aten=("linalg_det",), **_TOL,
     error_inputs=_square_errors("linalg.det"))
_alias("linalg.det", "det")
_add("linalg.det.unboosted", L.det, _det_ref, FL, _singular_det_samples, aten=("linalg_det",), **_TOL)
_add("linalg.slogdet", L.slogdet, _slogdet_ref, FL, _square_samples(), aten=("linalg_slogdet",), **_TOL,
     error_inputs=_square_errors("linalg.slogdet"))
_alias("linalg.slogdet", "slogdet")


def _logdet_ref(a):
    s, l = _slogdet_ref(a)
    return _cast(np.where(s < 0, np.nan, l), a)


def _logdet_samples(device, dtype, requires_grad):
    yield from _square_samples()(device, dtype, requires_grad)
    if not requires_grad:
        yield SampleInput(S.make_tensor((2, 2), dtype, values=np.array([[0.0, 1.0], [1.0, 0.0]])), name="negative")
        yield SampleInput(_singular().to(dtype), name="singular")


_add("logdet", tp.logdet, _logdet_ref, FL, _logdet_samples, aten=("linalg_slogdet",), **_TOL,
     error_inputs=_errors(lambda: _err(RuntimeError, "logdet: Expected a floating point or complex tensor as input. "
                                                     "Got Long", _t((3, 3), tp.int64))))


# -- solves -------------------------------------------------------------------------------------
def _solve_ref(a, b, left=True):
    x, y = _f(a), _f(b)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if not left:
        x = np.swapaxes(x, -1, -2)
        if not vector:
            y = np.swapaxes(y, -1, -2)
    if vector:
        y = y[..., None]
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    r = np.linalg.solve(np.broadcast_to(x, batch + x.shape[-2:]), np.broadcast_to(y, batch + y.shape[-2:]))
    if vector:
        r = r[..., 0]
    elif not left:
        r = np.swapaxes(r, -1, -2)
    return _cast(r, a)


def _solve_samples(device, dtype, requires_grad):
    rg = requires_grad
    cases = (("matrix", (3, 3), (3, 2), {}), ("vector", (3, 3), (3,), {}), ("batch", (2, 3, 3), (2, 3, 4), {}),
             ("batch_vector", (2, 3, 3), (2, 3), {}), ("broadcast", (2, 1, 3, 3), (4, 3, 1), {}),
             ("broadcast_b", (3, 3), (2, 3, 2), {}), ("left_false", (3, 3), (2, 3), {"left": False}),
             ("left_false_vector", (3, 3), (3,), {"left": False}))
    for i, (name, sa, sb, kw) in enumerate(cases):
        yield SampleInput(_mat(sa, dtype, i, rg), (S.make_tensor(sb, dtype, -2, 2, seed=50 + i, requires_grad=rg),),
                          kw, name=name)


def _solve_errors(name, prefix):
    return (lambda: _err(RuntimeError, rf"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                                       r"\(2x2 and 3x1\)", _t((2, 2)), _t((3,))),
            lambda: _err(RuntimeError, r"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                                       r"Float and B of type Double instead", _t((2, 2)), _t((2,), tp.float64)),
            lambda: _err(RuntimeError, r"linalg.solve: A must be batches of square matrices, but they are 2 by 3 "
                                       r"matrices", _t((2, 3)), _t((2,))),
            lambda: _err(_LINALG_ERR, rf"{prefix}: The solver failed because the input matrix is singular\.",
                         _singular(), _t((2,)), **({} if name == "solve" else {"check_errors": True})),
            lambda: _err(_LINALG_ERR, rf"{prefix}: \(Batch element 1\): The solver failed because the input matrix is "
                                      r"singular\.", _singular_batch(), _t((2, 2)),
                         **({} if name == "solve" else {"check_errors": True})))


_add("linalg.solve", L.solve, _solve_ref, FL, _solve_samples, aten=("linalg_solve",), **_TOL,
     error_inputs=_errors(*_solve_errors("solve", "torch.linalg.solve")))
def _solve_ex_ref(a, b, left=True, check_errors=False):
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bb = b.shape[:-1] if vector else b.shape[:-2]
    return _solve_ref(a, b, left), np.zeros(np.broadcast_shapes(a.shape[:-2], bb), np.int32)


_add("linalg.solve_ex", L.solve_ex, _solve_ex_ref,
     FL, _solve_samples, aten=("linalg_solve_ex",), **_TOL,
     error_inputs=_errors(*_solve_errors("solve_ex", "torch.linalg.solve_ex")))


def _tri_ref(a, b, upper, left=True, unitriangular=False):
    x = np.triu(_f(a)) if upper else np.tril(_f(a))
    if unitriangular:
        n = x.shape[-1]
        x = x.copy()
        x[..., range(n), range(n)] = 1
    y = _f(b)
    if not left:
        x, y = np.swapaxes(x, -1, -2), np.swapaxes(y, -1, -2)
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    r = np.linalg.solve(np.broadcast_to(x, batch + x.shape[-2:]), np.broadcast_to(y, batch + y.shape[-2:]))
    return _cast(np.swapaxes(r, -1, -2) if not left else r, a)


def _tri_samples(device, dtype, requires_grad):
    rg = requires_grad
    i = 0
    for upper in (True, False):
        for left in (True, False):
            for unit in (False, True):
                sb = (3, 2) if left else (2, 3)
                yield SampleInput(_mat((3, 3), dtype, i, rg), (S.make_tensor(sb, dtype, -2, 2, seed=60 + i,
                                                                              requires_grad=rg),),
                                  {"upper": upper, "left": left, "unitriangular": unit},
                                  name=f"upper_{upper}_left_{left}_unit_{unit}")
                i += 1
    yield SampleInput(_mat((2, 3, 3), dtype, 30, rg), (S.make_tensor((3, 4), dtype, -2, 2, seed=31, requires_grad=rg),),
                      {"upper": True}, name="broadcast")


_add("linalg.solve_triangular", L.solve_triangular, _tri_ref, FL, _tri_samples, aten=("linalg_solve_triangular",),
     **_TOL,
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
                                    r"\(2x2 and 3x1\)", _t((2, 2)), _t((3, 1)), upper=True),
         lambda: _err(RuntimeError, r"linalg.solve_triangular: The input tensor B must have at least 2 dimensions\.",
                      _t((2, 2)), _t((2,)), upper=True),
         lambda: _err(RuntimeError, r"linalg.solve_triangular: A must be batches of square matrices, but they are 2 by "
                                    r"3 matrices", _t((2, 3)), _t((2, 1)), upper=True)))


# -- cholesky -----------------------------------------------------------------------------------
def _chol_samples(device, dtype, requires_grad):
    for s in _square_samples(boost=0.0)(device, dtype, requires_grad):
        yield s
        if s.input.dim() == 2 and s.input.numel() > 1:
            yield SampleInput(s.input, (), {"upper": True}, name=s.name + "_upper")


def _not_pd():
    return S.make_tensor((2, 2), tp.float32, values=np.array([[1.0, 2.0], [2.0, 1.0]]))


def _not_pd_batch():
    return S.make_tensor((2, 2, 2), tp.float32, values=np.array([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]]))


_add("linalg.cholesky", cholesky_spd, _cholesky_ref, FL, _chol_samples, aten=("linalg_cholesky",), **_TOL,
     error_inputs=_errors(
         lambda: _err(_LINALG_ERR, rf"linalg.cholesky: {_NOT_PD}", _not_pd(), raw=True),
         lambda: _err(_LINALG_ERR, rf"linalg.cholesky: \(Batch element 1\): {_NOT_PD}", _not_pd_batch(), raw=True),
         lambda: _err(RuntimeError, r"linalg.cholesky: A must be batches of square matrices, but they are 2 by 3 "
                                    r"matrices", _t((2, 3)), raw=True),
         lambda: _err(RuntimeError, r"linalg.cholesky: Expected a floating point or complex tensor as input. Got Long",
                      _t((2, 2), tp.int64), raw=True)))
_add("linalg.cholesky_ex", cholesky_ex_spd,
     lambda a, upper=False, check_errors=False, raw=False: (_cholesky_ref(a, upper),
                                                             np.zeros(a.shape[:-2], np.int32)),
     FL, _chol_samples, aten=("linalg_cholesky_ex",), **_TOL,
     error_inputs=_errors(lambda: _err(_LINALG_ERR, rf"linalg.cholesky_ex: {_NOT_PD}", _not_pd(), raw=True,
                                       check_errors=True)))
_add("cholesky", cholesky_legacy_spd, _cholesky_ref, FL, _chol_samples, aten=("cholesky",), **_TOL,
     error_inputs=_errors(
         lambda: _err(_LINALG_ERR, rf"cholesky: {_NOT_PD}", _not_pd(), raw=True),
         lambda: _err(RuntimeError, r"cholesky: A must be batches of square matrices, but they are 2 by 3 matrices",
                      _t((2, 3)), raw=True)))


# -- svd, eigh, qr ------------------------------------------------------------------------------
_add("linalg.svd", svd_fixed, _svd_ref, FL,
     _rect_samples(({"full_matrices": False}, {"full_matrices": True}), grad_kwargs=({"full_matrices": False},)),
     aten=("_linalg_svd",), **_TOL,
     error_inputs=_square_errors("linalg.svd", checks=("int", "vector")))
_add("linalg.svdvals", L.svdvals, lambda a: _cast(np.linalg.svd(_f(a), compute_uv=False) if a.size else
                                                   np.zeros(a.shape[:-2] + (min(a.shape[-2:]),)), a), FL,
     _rect_samples(), aten=("_linalg_svd",), **_TOL,
     error_inputs=_square_errors("linalg.svd", checks=("int", "vector")))


def svd_legacy_fixed(A, some=True, compute_uv=True):
    """``tensorplug.svd`` with each singular vector pair's sign fixed."""
    U, S_, V = tp.svd(A, some=some, compute_uv=compute_uv)
    if not compute_uv:
        return U, S_, V
    k = S_.shape[-1]
    Uk, Vk = _fix_signs(U[..., :k], V[..., :k].mT)
    if U.shape[-1] > k or V.shape[-1] > k:
        return tp.cat([Uk, U[..., k:]], -1), S_, tp.cat([Vk.mT, V[..., k:]], -1)
    return Uk, S_, Vk.mT


def _svd_legacy_ref(a, some=True, compute_uv=True):
    if not compute_uv:
        m, n = a.shape[-2:]
        s = np.linalg.svd(_f(a), compute_uv=False)
        return (np.zeros(a.shape[:-2] + (m, m), a.dtype), _cast(s, a), np.zeros(a.shape[:-2] + (n, n), a.dtype))
    u, s, vh = _svd_ref(a, not some)
    return u, s, np.swapaxes(vh, -1, -2)


_add("svd", svd_legacy_fixed, _svd_legacy_ref, FL,
     _rect_samples(({"some": True}, {"some": False}, {"compute_uv": False}), empty=False,
                   grad_kwargs=({"some": True},)), aten=("_linalg_svd",), **_TOL)


def _eigh_samples(device, dtype, requires_grad):
    for i, (name, shape) in enumerate(_SQUARE + (("4x4", (4, 4)),)):
        if requires_grad:
            yield SampleInput(_mat(shape, dtype, i, True), (), {"symmetrize": True}, name=name)
        else:
            for uplo in ("L", "U"):
                yield SampleInput(_mat(shape, dtype, i), (uplo,), name=f"{name}_{uplo}")
    if not requires_grad:
        yield SampleInput(_mat((0, 0), dtype), name="empty")


_EIGH_ERRORS = _errors(
    lambda: _err(RuntimeError, r"linalg.eigh: A must be batches of square matrices, but they are 2 by 3 matrices",
                 _t((2, 3))),
    lambda: _err(RuntimeError, r"Expected UPLO argument to be 'L' or 'U', but got X", _t((2, 2)), "X"),
    lambda: _err(NotImplementedError, _not_impl("linalg_eigh", "Long"), _t((2, 2), tp.int64)))
_add("linalg.eigh", eigh_fixed, _eigh_ref, FL, _eigh_samples, aten=("linalg_eigh",), **_TOL,
     error_inputs=_EIGH_ERRORS)
_add("linalg.eigvalsh", eigvalsh_sym, lambda a, UPLO="L", symmetrize=False: _eigh_ref(a, UPLO, symmetrize)[0], FL,
     _eigh_samples, aten=("linalg_eigh",), **_TOL, error_inputs=_EIGH_ERRORS)


def _qr_ref(a, mode="reduced"):
    if not a.size:
        m, n = a.shape[-2:]
        k = m if mode == "complete" else min(m, n)
        r = np.zeros(a.shape[:-2] + (k, n), a.dtype)
        if mode == "r":
            return np.zeros((0,), a.dtype), r
        return np.broadcast_to(np.eye(m, k, dtype=a.dtype), a.shape[:-2] + (m, k)).copy(), r
    if mode == "r":
        return np.zeros((0,), a.dtype), _cast(np.linalg.qr(_f(a), mode="r"), a)
    q, r = np.linalg.qr(_f(a), mode=mode)
    return _cast(q, a), _cast(r, a)


def _qr_samples(device, dtype, requires_grad):
    if requires_grad:
        for i, (name, shape) in enumerate(_RECT):
            yield SampleInput(_mat(shape, dtype, i, True, boost=1.0), (), {}, name=name)
        yield SampleInput(_mat((2, 4), dtype, 9, True, boost=1.0), ("complete",), name="complete_wide")
        return
    yield from _rect_samples(({"mode": "reduced"}, {"mode": "complete"}, {"mode": "r"}))(device, dtype, False)


_add("linalg.qr", L.qr, _qr_ref, FL, _qr_samples, aten=("linalg_qr",), **_TOL,
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"qr received unrecognized mode 'x' but expected one of 'reduced' \(default\), 'r', "
                                    r"or 'complete'", _t((2, 3)), "x"),
         lambda: _err(RuntimeError, r"linalg.qr: The input tensor A must have at least 2 dimensions\.", _t((3,))),
         lambda: _err(RuntimeError, r"linalg.qr: Expected a floating point or complex tensor as input. Got Long",
                      _t((3, 3), tp.int64))))


def _qr_legacy_ref(a, some=True):
    return _qr_ref(a, "reduced" if some else "complete")


_add("qr", tp.qr, _qr_legacy_ref, FL, _rect_samples(({"some": True}, {"some": False}), empty=False,
                                                     grad_kwargs=({"some": True},)), aten=("linalg_qr",), **_TOL)


# -- matrix functions ---------------------------------------------------------------------------
def _expm_ref(a):
    x = _f(a)
    if not x.size:
        return a.copy()
    # Taylor series after scaling by 2^s until the norm is below 1/2, then squaring
    norm = np.abs(x).sum(-2).max()
    s = max(0, int(np.ceil(np.log2(norm / 0.5)))) if norm > 0 else 0
    y = x / 2.0 ** s
    term = np.broadcast_to(np.eye(x.shape[-1]), x.shape).copy()
    total = term.copy()
    for k in range(1, 30):
        term = term @ y / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return _cast(total, a)


def _expm_samples(device, dtype, requires_grad):
    for i, (name, shape) in enumerate(_SQUARE):
        yield SampleInput(_mat(shape, dtype, i, requires_grad, boost=0.0), name=name)
    yield SampleInput(_mat((3, 3), dtype, 7, requires_grad, boost=0.0) * 3 if not requires_grad else
                      S.make_tensor((3, 3), dtype, -3, 3, seed=7, requires_grad=True), name="scaled")
    if not requires_grad:
        yield SampleInput(_mat((0, 0), dtype), name="empty")
        yield SampleInput(_mat((12, 12), dtype, 8, boost=0.0), name="large")


_add("linalg.matrix_exp", L.matrix_exp, _expm_ref, FL, _expm_samples, aten=("linalg_matrix_exp",), **_TOL,
     error_inputs=_square_errors("linalg.matrix_exp", checks=("rect", "int")))
_alias("linalg.matrix_exp", "matrix_exp")


def _mpow_ref(a, n):
    x = _f(a)
    if n < 0:
        x, n = np.linalg.inv(x), -n
    return _cast(np.linalg.matrix_power(x, n) if a.size else np.zeros(a.shape), a)


def _mpow_samples(device, dtype, requires_grad):
    for i, n in enumerate((1, 2, 3, 5, -1, -2) + (() if requires_grad else (0,))):
        yield SampleInput(_mat((3, 3), dtype, i, requires_grad, boost=1.0), (n,), name=f"n_{n}")
    yield SampleInput(_mat((2, 3, 3), dtype, 9, requires_grad, boost=1.0), (3,), name="batch")
    if not requires_grad:
        yield SampleInput(_mat((0, 3, 3), dtype, 9), (2,), name="empty")


_add("linalg.matrix_power", L.matrix_power, _mpow_ref, FL, _mpow_samples, aten=("matmul", "linalg_inv"), **_TOL,
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 "
                                    r"matrices", _t((2, 3)), 2),
         lambda: _err(RuntimeError, r"linalg.matrix_power: The input tensor A must have at least 2 dimensions\.",
                      _t((3,)), 2),
         lambda: _err(_LINALG_ERR, rf"linalg.inv: {_SING}", _singular(), -1)))
_alias("linalg.matrix_power", "matrix_power")


# -- pinv, rank, lstsq --------------------------------------------------------------------------
def _np_tol(s, m, n, dtype, atol, rtol):
    eps = np.finfo(dtype).eps
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else eps * max(m, n)
    atol = 0.0 if atol is None else atol
    top = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    return np.maximum(atol, rtol * top)


def _pinv_ref(a, atol=None, rtol=None, hermitian=False):
    x = _f(a)
    m, n = a.shape[-2:]
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    tol = _np_tol(s, m, n, a.dtype, atol, rtol)
    sinv = np.where(s > tol, 1 / np.where(s > tol, s, 1), 0)
    return _cast(np.swapaxes(vh, -1, -2) @ (sinv[..., None] * np.swapaxes(u, -1, -2)), a)


def _rank_deficient(dtype):
    v = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    return S.make_tensor((4, 3), dtype, values=v)


def _pinv_samples(device, dtype, requires_grad):
    yield from _rect_samples(empty=False)(device, dtype, requires_grad)
    if not requires_grad:
        yield SampleInput(_rank_deficient(dtype), name="rank_deficient")
        yield SampleInput(_mat((4, 3), dtype, 5), (), {"atol": 0.5}, name="atol")
        yield SampleInput(_mat((4, 3), dtype, 6), (), {"rtol": 0.6}, name="rtol")


_add("linalg.pinv", L.pinv, _pinv_ref, FL, _pinv_samples, aten=("_linalg_svd",), **_TOL,
     error_inputs=_errors(lambda: _err(RuntimeError, r"linalg.pinv\(Long\{\[2, 2\]\}\): expected a tensor with 2 or "
                                                     r"more dimensions of float, double, cfloat or cdouble types",
                                       _t((2, 2), tp.int64))))


def _pinv_herm(a, atol=None, rtol=None, hermitian=False):
    return L.pinv(_sym(a), atol=atol, rtol=rtol, hermitian=True)


def _pinv_herm_ref(a, atol=None, rtol=None, hermitian=False):
    x = _f(a)
    return _pinv_ref(S.cast((x + np.swapaxes(x, -1, -2)) / 2, a.dtype), atol, rtol)


_pinv_herm.__doc__ = "``linalg.pinv(hermitian=True)`` of ``(A + A^T) / 2``."
_add("linalg.pinv.hermitian", _pinv_herm, _pinv_herm_ref, FL, _square_samples(empty=False, large=False, boost=1.0),
     aten=("linalg_eigh",), **_TOL)


def _pinverse_ref(a, rcond=1e-15):
    return _pinv_ref(a, rtol=rcond)


def _rank_ref(a, atol=None, rtol=None, hermitian=False):
    m, n = a.shape[-2:]
    s = np.linalg.svd(_f(a), compute_uv=False)
    tol = _np_tol(s, m, n, a.dtype, atol, rtol)
    return (s > tol).sum(-1).astype(np.int64)


def _rank_samples(device, dtype, requires_grad):
    yield from _pinv_samples(device, dtype, False)


_add("linalg.matrix_rank", L.matrix_rank, _rank_ref, FL, _rank_samples, aten=("_linalg_svd",), supports_autograd=False,
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"torch.linalg.matrix_rank: The input tensor input must have at least 2 "
                                    r"dimensions\.", _t((3,)))))


def _lstsq_ref(a, b, rcond=None, driver=None):
    x, y = _f(a), _f(b)
    vector = b.ndim == a.ndim - 1
    if vector:
        y = y[..., None]
    m, n = a.shape[-2:]
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    tol = _np_tol(s, m, n, a.dtype, None, rcond)
    keep = s > tol
    sinv = np.where(keep, 1 / np.where(keep, s, 1), 0)
    sol = np.swapaxes(vh, -1, -2) @ (sinv[..., None] * (np.swapaxes(u, -1, -2) @ y))
    rank = keep.sum(-1).astype(np.int64)
    driver = driver or "gelsy"
    full = m > n and driver != "gelsy" and (driver == "gels" or (rank == n).all())
    res = ((x @ sol - y) ** 2).sum(-2) if full else np.zeros((0,))
    if vector:
        sol = sol[..., 0]
    rank_out = np.zeros((0,), np.int64) if driver == "gels" else rank
    sv = s if driver in ("gelsd", "gelss") else np.zeros((0,))
    return _cast(sol, a), _cast(res, a), rank_out, _cast(sv, a)


def _lstsq_samples(device, dtype, requires_grad):
    rg = requires_grad
    cases = (("tall", (5, 3), (5, 2), {}), ("square", (3, 3), (3, 1), {}), ("wide", (2, 4), (2, 2), {}),
             ("batch", (2, 5, 3), (2, 5, 2), {}), ("vector", (5, 3), (5,), {}))
    for i, (name, sa, sb, kw) in enumerate(cases):
        yield SampleInput(_mat(sa, dtype, i, rg, boost=1.0), (S.make_tensor(sb, dtype, -2, 2, seed=40 + i,
                                                                              requires_grad=rg),), kw, name=name)
    if not rg:
        for driver in ("gels", "gelsy", "gelsd", "gelss"):
            yield SampleInput(_mat((5, 3), dtype, 7), (S.make_tensor((5, 2), dtype, -2, 2, seed=47),),
                              {"driver": driver}, name=f"driver_{driver}")
        yield SampleInput(_rank_deficient(dtype), (S.make_tensor((4, 2), dtype, -2, 2, seed=48),), name="rank_deficient")


_add("linalg.lstsq", L.lstsq, _lstsq_ref, FL, _lstsq_samples, aten=("_linalg_svd",), **_TOL,
     xfails={"vmap": "gelsd and gelss return residuals only when every matrix has full rank: the check reads "
                     "the ranks (.item()), a data-dependent output shape"},
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"torch.linalg.lstsq: input.size\(-2\) should match other.size\(-2\)",
                      _t((2, 3)), _t((3, 1))),
         lambda: _err(RuntimeError, r"torch.linalg.lstsq: parameter `driver` should be one of \(gels, gelsy, gelsd, "
                                    r"gelss\)", _t((2, 3)), _t((2, 1)), driver="x")))


# -- norms --------------------------------------------------------------------------------------
def _matrix_norm_ref(a, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    x = _f(a)
    out_dtype = a.dtype if dtype is None else S.np_dtype(dtype)
    d0, d1 = (d % a.ndim for d in dim)
    moved = np.moveaxis(x, (d0, d1), (-2, -1))
    if ord == "fro":
        r = np.sqrt((moved ** 2).sum((-2, -1)))
    elif ord in ("nuc", 2, -2):
        s = np.linalg.svd(moved, compute_uv=False)
        r = s.sum(-1) if ord == "nuc" else (s.max(-1) if ord == 2 else s.min(-1))
    elif ord in (math.inf, -math.inf):
        sums = np.abs(moved).sum(-1)
        r = sums.max(-1) if ord > 0 else sums.min(-1)
    else:
        sums = np.abs(moved).sum(-2)
        r = sums.max(-1) if ord > 0 else sums.min(-1)
    if keepdim:
        for k in sorted((d0, d1)):
            r = np.expand_dims(r, k)
    return S.cast(np.asarray(r), out_dtype)


_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def _matrix_norm_samples(device, dtype, requires_grad):
    rg = requires_grad
    for i, ord in enumerate(_ORDS):
        yield SampleInput(_mat((3, 4), dtype, i, rg), (ord,), name=f"ord_{ord}")
        yield SampleInput(_mat((2, 3, 4), dtype, 20 + i, rg), (ord, (0, 2), True), name=f"ord_{ord}_dims_keepdim")
        yield SampleInput(_mat((3, 2, 4), dtype, 40 + i, rg), (ord, (-1, 0)), name=f"ord_{ord}_dims_swapped")
    if not rg:
        yield SampleInput(_mat((3, 3), dtype, 60), (), {"dtype": tp.float64}, name="dtype")


_add("linalg.matrix_norm", L.matrix_norm, _matrix_norm_ref, FL, _matrix_norm_samples, aten=("linalg_vector_norm",),
     **_TOL,
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"linalg.matrix_norm: Order 3 not supported\.", _t((2, 3)), 3),
         lambda: _err(RuntimeError, r"linalg.matrix_norm: The input tensor A must have at least 2 dimensions\.",
                      _t((3,))),
         lambda: _err(RuntimeError, r"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                                    r"Long", _t((2, 2), tp.int64)),
         lambda: _err(RuntimeError, r"linalg.matrix_norm: dims must be different. Got \(0, 0\)", _t((2, 3)), "fro",
                      (0, 0))))


def _linalg_norm_ref(a, ord=None, dim=None, keepdim=False, dtype=None):
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2:
        return _matrix_norm_ref(a, "fro" if ord is None else ord, dim, keepdim, dtype)
    if dim is None and ord is not None and a.ndim == 2:
        return _matrix_norm_ref(a, ord, (-2, -1), keepdim, dtype)
    return _vec_norm_np(a, 2 if ord is None else ord, None if dim is None else tuple(dim), keepdim, dtype)


def _vec_norm_np(a, p, axis, keepdim, dtype):
    x = np.abs(_f(a))
    if p == math.inf:
        r = x.max(axis=axis, keepdims=keepdim)
    elif p == -math.inf:
        r = x.min(axis=axis, keepdims=keepdim)
    elif p == 0:
        r = (x != 0).sum(axis=axis, keepdims=keepdim).astype(np.float64)
    else:
        r = (x ** p).sum(axis=axis, keepdims=keepdim) ** (1.0 / p)
    return S.cast(np.asarray(r), a.dtype if dtype is None else S.np_dtype(dtype))


def _linalg_norm_samples(device, dtype, requires_grad):
    rg = requires_grad
    cases = (((3, 4), (), {}), ((2, 3, 4), (), {}), ((5,), (3,), {}), ((5,), (1,), {}), ((3, 4), ("nuc",), {}),
             ((3, 4), (-1,), {}), ((2, 3, 4), (None, (0, 2)), {}), ((2, 3, 4), (2, (1, 2)), {"keepdim": True}),
             ((2, 3, 4), (1, 1), {}), ((2, 3, 4), (3, (2,)), {"keepdim": True}), ((4,), (math.inf,), {}))
    for i, (shape, args, kw) in enumerate(cases):
        yield SampleInput(_mat(shape, dtype, i, rg), args, kw, name=f"{shape}_{args}_{kw}")


_add("linalg.norm", L.norm, _linalg_norm_ref, FL, _linalg_norm_samples, aten=("linalg_vector_norm",), **_TOL,
     error_inputs=_errors(lambda: _err(RuntimeError, r"linalg.norm: If dim is not specified but ord is, the input "
                                                     r"must be 1D or 2D. Got 3D\.", _t((2, 3, 4)), 2)))


def _vector_norm_ref(a, ord=2, dim=None, keepdim=False, dtype=None):
    return _vec_norm_np(a, ord, None if dim is None else tuple(dim), keepdim, dtype)


def _vector_norm_samples(device, dtype, requires_grad):
    rg = requires_grad
    for i, (shape, args, kw) in enumerate((((3, 4), (), {}), ((3, 4), (1, (1,)), {}), ((2, 3, 4), (3, (0, 2)), {}),
                                          ((5,), (math.inf,), {}), ((3, 4), (0.5, (0,), True), {}))):
        yield SampleInput(_mat(shape, dtype, i, rg), args, kw, name=f"{shape}_{args}")


_add("linalg.vector_norm", L.vector_norm, _vector_norm_ref, FL, _vector_norm_samples, aten=("linalg_vector_norm",),
     **_TOL)


def _nuc_ref(a, p="fro", dim=None, keepdim=False, dtype=None):
    return _matrix_norm_ref(a, "nuc", (-2, -1) if dim is None else dim, keepdim)


def _nuc_samples(device, dtype, requires_grad):
    yield SampleInput(_mat((3, 4), dtype, 1, requires_grad), ("nuc",), name="2d")
    yield SampleInput(_mat((2, 3, 4), dtype, 2, requires_grad), ("nuc", (0, 2), True), name="dims")


_add("norm.nuc", tp.norm, _nuc_ref, FL, _nuc_samples, aten=("_linalg_svd",), **_TOL)


# -- vector and chain products --------------------------------------------------------------------
def _multi_dot_ref(tensors):
    return _cast(np.linalg.multi_dot([_f(t) for t in tensors]), tensors[0])


def _multi_dot_samples(device, dtype, requires_grad):
    rg = requires_grad
    chains = (((2, 3), (3, 4)), ((3,), (3, 4), (4, 2)), ((2, 3), (3, 4), (4,)), ((3,), (3, 4), (4,)),
              ((2, 5), (5, 1), (1, 6), (6, 3)), ((4, 3), (3, 2), (2, 5), (5, 2), (2, 3)))
    for i, shapes in enumerate(chains):
        ts = [S.make_tensor(s, dtype, -2, 2, seed=10 * i + j, requires_grad=rg) for j, s in enumerate(shapes)]
        yield SampleInput(ts, name="x".join(str(s) for s in shapes))


def _multi_dot(tensors):
    return L.multi_dot(tensors)


_add("linalg.multi_dot", L.multi_dot, _multi_dot_ref, FL, _multi_dot_samples, aten=("matmul",), **_TOL,
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"multi_dot\(\): expected at least 2 tensors but got 1", [_t((2,))]),
         lambda: _err(RuntimeError, r"multi_dot\(\): tensors 0 and 1 with shapes \[2, 3\] and \[2, 3\] cannot be "
                                    r"multiplied", [_t((2, 3)), _t((2, 3))]),
         lambda: _err(RuntimeError, r"multi_dot\(\): the first tensor must be 1D or 2D but got 3D",
                      [_t((2, 3, 3)), _t((3, 3))]),
         lambda: _err(RuntimeError, r"multi_dot\(\): all tensors must have be the same dtype but tensor 0 is float and "
                                    r"tensor 1 double", [_t((2, 3)), _t((3, 3), tp.float64)])))


def _vecdot_ref(x, y, dim=-1):
    return _cast((_f(x) * _f(y)).sum(dim), x)


def _vecdot_samples(device, dtype, requires_grad):
    rg = requires_grad
    for i, (sa, sb, kw) in enumerate((((3,), (3,), {}), ((2, 3), (2, 3), {}), ((2, 3), (3,), {}),
                                      ((4, 1, 3), (2, 3), {}), ((3, 2), (3, 2), {"dim": 0}))):
        yield SampleInput(S.make_tensor(sa, dtype, -2, 2, seed=i, requires_grad=rg),
                          (S.make_tensor(sb, dtype, -2, 2, seed=20 + i, requires_grad=rg),), kw, name=f"{sa}_{sb}")


_add("linalg.vecdot", L.vecdot, _vecdot_ref, FL, _vecdot_samples, aten=("mul.Tensor", "sum.dim_IntList"), **_TOL,
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"linalg.vecdot: Expected x and y to have the same dtype, but found x of type Float "
                                    r"and y of type Double instead", _t((3,)), _t((3,), tp.float64)),
         lambda: _err(RuntimeError, r"inconsistent tensor size, expected tensor \[3\] and src \[4\] to have the same "
                                    r"number of elements", _t((3,)), _t((4,)))))


def _cross_ref(a, b, dim=-1):
    return _cast(np.cross(_f(a), _f(b), axis=dim), a)


_CROSS_DTYPES = S.SIGNED + FL


def _cross_samples(device, dtype, requires_grad):
    rg = requires_grad
    for i, (sa, sb, kw) in enumerate((((3,), (3,), {}), ((2, 3), (2, 3), {}), ((2, 3), (1, 3), {}),
                                      ((3, 2), (3, 2), {"dim": 0}), ((2, 3, 4), (2, 3, 4), {"dim": 1}))):
        yield SampleInput(S.make_tensor(sa, dtype, -3, 3, seed=i, requires_grad=rg),
                          (S.make_tensor(sb, dtype, -3, 3, seed=20 + i, requires_grad=rg),), kw, name=f"{sa}_{kw}")


_add("linalg.cross", L.cross, _cross_ref, _CROSS_DTYPES, _cross_samples, aten=("mul.Tensor", "sub.Tensor"),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4", _t((2, 4)),
                      _t((2, 4))),
         lambda: _err(RuntimeError, r"expected scalar type Float but found Double", _t((3,)), _t((3,), tp.float64))))


def _legacy_cross_samples(device, dtype, requires_grad):
    for s in _cross_samples(device, dtype, requires_grad):
        if s.kwargs:
            yield s


_add("cross", tp.cross, _cross_ref, _CROSS_DTYPES, _legacy_cross_samples, aten=("mul.Tensor", "sub.Tensor"))


# -- legacy names with their own entries -----------------------------------------------------------
def _pinverse_samples(device, dtype, requires_grad):
    yield from _rect_samples(empty=False)(device, dtype, requires_grad)
    if not requires_grad:
        yield SampleInput(_mat((4, 3), dtype, 6), (0.6,), name="rcond")


_add("pinverse", tp.pinverse, _pinverse_ref, FL, _pinverse_samples, aten=("_linalg_svd",), **_TOL,
     error_inputs=_errors(lambda: _err(RuntimeError, r"linalg.pinv\(Long\{\[2, 2\]\}\): expected a tensor with 2 or "
                                                     r"more dimensions", _t((2, 2), tp.int64))))


# -- products ----------------------------------------------------------------------------------
_PROD_DTYPES = S.INTEGRAL + S.FLOATING


def _addlike_ref(kind):
    def ref(x, a, b, beta=1, alpha=1):
        out = x.dtype
        fl = S.is_float(out)
        conv = _f if fl else (lambda v: v.astype(np.int64))
        if kind == "baddbmm":
            prod = np.matmul(conv(a), conv(b))
        elif kind == "addbmm":
            prod = np.matmul(conv(a), conv(b)).sum(0)
        elif kind == "addmv":
            prod = np.matmul(conv(a), conv(b))
        else:
            prod = np.outer(conv(a), conv(b))
        if not fl:
            beta, alpha = int(beta), int(alpha)
        base = np.zeros_like(prod) if beta == 0 else beta * conv(x)
        return S.cast(base + alpha * prod, out)
    return ref


def _addlike_samples(shapes):
    def gen(device, dtype, requires_grad):
        rg = requires_grad
        for i, (name, sx, sa, sb, kw) in enumerate(shapes):
            yield SampleInput(S.make_tensor(sx, dtype, -3, 3, seed=i, requires_grad=rg),
                              (S.make_tensor(sa, dtype, -3, 3, seed=20 + i, requires_grad=rg),
                               S.make_tensor(sb, dtype, -3, 3, seed=40 + i, requires_grad=rg)), dict(kw), name=name)
        if dtype.is_floating_point and not rg:
            name, sx, sa, sb, _ = shapes[0]
            x = S.make_tensor(sx, dtype, values=np.full(sx, np.nan))
            yield SampleInput(x, (S.make_tensor(sa, dtype, -3, 3, seed=90), S.make_tensor(sb, dtype, -3, 3, seed=91)),
                              {"beta": 0}, name="beta_zero_ignores_nan")
    return gen


_SCALE = {"beta": 2, "alpha": 3}
_add("baddbmm", tp.baddbmm, _addlike_ref("baddbmm"), _PROD_DTYPES,
     _addlike_samples((("plain", (2, 3, 5), (2, 3, 4), (2, 4, 5), {}), ("broadcast", (5,), (2, 3, 4), (2, 4, 5), _SCALE),
                       ("zero_inner", (2, 3, 5), (2, 3, 0), (2, 0, 5), {}),
                       ("alpha_zero", (1, 3, 1), (2, 3, 4), (2, 4, 5), {"alpha": 0}))),
     aten=("matmul",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"batch1 must be a 3D tensor", _t((5,)), _t((3, 4)), _t((2, 4, 5))),
         lambda: _err(RuntimeError, r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but got: "
                                    r"\[3, 4\].", _t((2, 3, 5)), _t((2, 3, 4)), _t((3, 4, 5))),
         lambda: _err(RuntimeError, r"expected scalar type Float but found Double", _t((2, 3, 5)), _t((2, 3, 4)),
                      _t((2, 4, 5), tp.float64)),
         lambda: _err(RuntimeError, r"The expanded size of the tensor \(3\) must match the existing size \(4\) at "
                                    r"non-singleton dimension 1", _t((4, 5)), _t((2, 3, 4)), _t((2, 4, 5)))))
_add("addbmm", tp.addbmm, _addlike_ref("addbmm"), _PROD_DTYPES,
     _addlike_samples((("plain", (3, 5), (2, 3, 4), (2, 4, 5), {}), ("broadcast", (5,), (2, 3, 4), (2, 4, 5), _SCALE),
                       ("zero_batch", (3, 5), (0, 3, 4), (0, 4, 5), {}))),
     aten=("matmul",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"batch1 and batch2 must have same number of batches, got 2 and 3", _t((3, 5)),
                      _t((2, 3, 4)), _t((3, 4, 5))),
         lambda: _err(RuntimeError, r"Incompatible matrix sizes for bmm \(3x4 and 3x5\)", _t((3, 5)), _t((2, 3, 4)),
                      _t((2, 3, 5)))))
_add("addmv", tp.addmv, _addlike_ref("addmv"), _PROD_DTYPES,
     _addlike_samples((("plain", (3,), (3, 4), (4,), {}), ("broadcast", (1,), (3, 4), (4,), _SCALE),
                       ("scalar_input", (), (3, 4), (4,), {}), ("zero_inner", (3,), (3, 0), (0,), {}))),
     aten=("matmul",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"size mismatch, got input \(3\), mat \(3x4\), vec \(5\)", _t((3,)), _t((3, 4)),
                      _t((5,))),
         lambda: _err(RuntimeError, r"vector \+ matrix @ vector expected, got 1, 1, 1", _t((3,)), _t((4,)), _t((4,))),
         lambda: _err(RuntimeError, r"addmv input tensors must have the same dtype, but got Float, Float, and Double",
                      _t((3,)), _t((3, 4)), _t((4,), tp.float64))))
_add("addr", tp.addr, _addlike_ref("addr"), _PROD_DTYPES,
     _addlike_samples((("plain", (3, 4), (3,), (4,), {}), ("broadcast", (4,), (3,), (4,), _SCALE),
                       ("column", (3, 1), (3,), (4,), {"beta": 0}))),
     aten=("mul.Tensor",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"addr: Expected 1-D argument vec1, but got 2-D", _t((3, 4)), _t((3, 1)), _t((4,))),
         lambda: _err(RuntimeError, r"For integral input tensors, argument beta must not be a floating point number\.",
                      _t((3, 4), tp.int64), _t((3,), tp.int64), _t((4,), tp.int64), beta=1.5)))
_alias("outer", "ger")


def _kron_ref(a, b):
    out = S.result_dtype(a, b)
    if S.is_float(out):
        return S.cast(np.kron(_f(a), _f(b)), out)
    return S.cast(np.kron(a.astype(np.int64), b.astype(np.int64)), out)


def _kron_samples(device, dtype, requires_grad):
    rg = requires_grad
    for i, (sa, sb) in enumerate((((2, 3), (4,)), ((2,), (3,)), ((2, 1, 3), (2, 2, 2)), ((), (3,)), ((2, 2), (0, 3)))):
        if rg and 0 in sb:
            continue
        yield SampleInput(S.make_tensor(sa, dtype, -3, 3, seed=i, requires_grad=rg),
                          (S.make_tensor(sb, dtype, -3, 3, seed=20 + i, requires_grad=rg),), name=f"{sa}_{sb}")


_add("kron", tp.kron, _kron_ref, S.NO_BOOL, _kron_samples, aten=("mul.Tensor",))


def _tensordot_ref(a, b, dims=2):
    out = a.dtype
    conv = _f if S.is_float(out) else (lambda v: v.astype(np.int64))
    return S.cast(np.tensordot(conv(a), conv(b), axes=dims), out)


def _tensordot_samples(device, dtype, requires_grad):
    rg = requires_grad
    for i, (sa, sb, dims) in enumerate((((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 2), 1), ((2, 3), (4,), 0),
                                        ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])), ((3, 4), (4, 3), ([0], [1])))):
        yield SampleInput(S.make_tensor(sa, dtype, -3, 3, seed=i, requires_grad=rg),
                          (S.make_tensor(sb, dtype, -3, 3, seed=20 + i, requires_grad=rg),), {"dims": dims},
                          name=f"{sa}_{sb}_{dims}")


_add("tensordot", tp.tensordot, _tensordot_ref, _PROD_DTYPES, _tensordot_samples, aten=("matmul",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"contracted dimensions need to match, but first has size 3 in dim 1 and second has "
                                    r"size 2 in dim 0", _t((2, 3, 4)), _t((2, 4, 5)), dims=([1], [0])),
         lambda: _err(RuntimeError, r"tensordot expects dims >= 0, but got dims=-1", _t((2, 3)), _t((3, 2)), dims=-1),
         lambda: _err(RuntimeError, r"both dimension lists should have same length", _t((2, 3, 4)), _t((2, 4, 5)),
                      dims=([1, 2], [0]))))


def einsum_eq(*operands, equation):
    """``einsum(equation, *operands)`` with the operands first, as the op database calls ops."""
    return tp.einsum(equation, *operands)


def _einsum_ref(*operands, equation):
    out = operands[0].dtype
    conv = _f if S.is_float(out) else (lambda v: v.astype(np.int64))
    return S.cast(np.asarray(np.einsum(equation, *[conv(o) for o in operands])), out)


_EINSUM_CASES = (
    ("matmul", "ij,jk->ik", ((2, 3), (3, 4))), ("implicit", "ij,jk", ((2, 3), (3, 4))),
    ("transpose_out", "ij,jk->ki", ((2, 3), (3, 4))), ("bmm", "bij,bjk->bik", ((2, 2, 3), (2, 3, 4))),
    ("diagonal", "ii->i", ((3, 3),)), ("trace", "ii", ((3, 3),)), ("sum_all", "ij->", ((2, 3),)),
    ("dot", "i,i", ((3,), (3,))), ("outer", "i,j->ij", ((3,), (4,))),
    ("ellipsis", "...ij,...jk", ((2, 2, 3), (3, 4))), ("ellipsis_sum", "...ij->...", ((2, 2, 3),)),
    ("broadcast_one", "ij,ij->ij", ((1, 3), (2, 3))), ("batch_diagonal", "bii->bi", ((2, 3, 3),)),
    ("chain", "ijk,kl,lm->im", ((2, 3, 4), (4, 2), (2, 2))), ("capitals", "Ab,ba->Aa", ((2, 3), (3, 4))),
    ("spaces", "i j , j k -> i k", ((2, 3), (3, 4))), ("three_way", "bn,anm,bm->ba", ((2, 3), (2, 3, 2), (2, 2))),
    ("permute", "ijk->kji", ((2, 3, 4),)),
)


def _einsum_samples(device, dtype, requires_grad):
    rg = requires_grad
    for i, (name, eq, shapes) in enumerate(_EINSUM_CASES):
        ts = [S.make_tensor(s, dtype, -3, 3, seed=10 * i + j, requires_grad=rg) for j, s in enumerate(shapes)]
        yield SampleInput(ts[0], tuple(ts[1:]), {"equation": eq}, name=name)


_add("einsum", einsum_eq, _einsum_ref, (tp.int64,) + S.FLOATING, _einsum_samples, aten=("matmul",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"einsum\(\): more operands were provided than specified in the equation",
                      _t((2, 3)), _t((3, 4)), _t((2,)), equation="ij,jk"),
         lambda: _err(RuntimeError, r"einsum\(\): fewer operands were provided than specified in the equation",
                      _t((2, 3)), _t((3, 4)), equation="ij,jk,k"),
         lambda: _err(RuntimeError, r"einsum\(\): the number of subscripts in the equation \(2\) does not match the "
                                    r"number of dimensions \(3\) for operand 0 and no ellipsis was given",
                      _t((2, 3, 4)), equation="ij"),
         lambda: _err(RuntimeError, r"einsum\(\): subscript j has size 4 for operand 1 which does not broadcast with "
                                    r"previously seen size 3", _t((2, 3)), _t((4, 4)), equation="ij,jk"),
         lambda: _err(RuntimeError, r"einsum\(\): output subscript k does not appear in the equation for any input "
                                    r"operand", _t((2, 3)), equation="ij->k"),
         lambda: _err(RuntimeError, r"einsum\(\): output subscript i appears more than once in the output",
                      _t((2, 3)), equation="ij->ii"),
         lambda: _err(RuntimeError, r"einsum\(\): invalid subscript given at index 1 in the equation string, "
                                    r"subscripts must be in \[a-zA-Z\]", _t((2, 3)), equation="i1"),
         lambda: _err(RuntimeError, r"einsum\(\): subscript i is repeated for operand 0 but the sizes don't match, "
                                    r"4 != 3", _t((3, 4)), equation="ii->i")))


def einsum_sublist(*operands, sublists):
    """``einsum`` in its sublist form: ``einsum(op0, sub0, op1, sub1, ..., [out])``."""
    args = []
    for t, sub in zip(operands, sublists):
        args += [t, sub]
    if len(sublists) > len(operands):
        args.append(sublists[-1])
    return tp.einsum(*args)


def _letters(sub):
    return "".join("..." if s is Ellipsis else "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[s] for s in sub)


def _einsum_sublist_ref(*operands, sublists):
    eq = ",".join(_letters(s) for s in sublists[:len(operands)])
    if len(sublists) > len(operands):
        eq += "->" + _letters(sublists[-1])
    return _einsum_ref(*operands, equation=eq)


def _einsum_sublist_samples(device, dtype, requires_grad):
    rg = requires_grad
    for i, (name, shapes, subs) in enumerate((
            ("matmul", ((2, 3), (3, 4)), ([0, 1], [1, 2], [0, 2])), ("implicit", ((2, 3), (3, 4)), ([0, 1], [1, 2])),
            ("ellipsis", ((2, 2, 3), (3, 4)), ([Ellipsis, 0, 1], [1, 2], [Ellipsis, 0, 2])),
            ("capitals", ((2, 3),), ([30, 3], [3, 30])))):
        ts = [S.make_tensor(s, dtype, -3, 3, seed=10 * i + j, requires_grad=rg) for j, s in enumerate(shapes)]
        yield SampleInput(ts[0], tuple(ts[1:]), {"sublists": subs}, name=name)


_add("einsum.sublist", einsum_sublist, _einsum_sublist_ref, (tp.int64,) + S.FLOATING, _einsum_sublist_samples,
     aten=("matmul",),
     error_inputs=_errors(lambda: _err(ValueError, r"einsum\(\): subscript in subscript list is not within the valid "
                                                   r"range \[0, 52\)", _t((2, 3)), sublists=([0, 60],))))
