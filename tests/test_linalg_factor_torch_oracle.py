"""LU, LDL, eig, Householder, the Cholesky solves and the randomized low-rank SVD against PyTorch: values
and gradients, including the cases PyTorch's OpInfo samples leave out (2 x 2 LDL pivots, gauge-invariant
losses on eig's eigenvectors, the low-rank factors up to sign)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorplug as tp  # noqa: E402


def _pair(a, rg=False):
    t = torch.tensor(a, dtype=torch.float64, requires_grad=rg)
    x = tp.tensor(np.asarray(a, np.float64))
    return t, (x.requires_grad_(True) if rg else x)


def _close(x, t, tol=1e-8):
    np.testing.assert_allclose(x.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3)])
def test_lu_values_and_gradient(shape):
    a = np.random.default_rng(0).uniform(-1, 1, shape)
    t, x = _pair(a, True)
    P, L, U = torch.linalg.lu(t)
    p, l, u = tp.linalg.lu(x)
    for mine, theirs in ((p, P), (l, L), (u, U)):
        _close(mine, theirs)
    gl, gu = np.random.default_rng(1).normal(size=L.shape), np.random.default_rng(2).normal(size=U.shape)
    (g,) = torch.autograd.grad([L, U], [t], [torch.tensor(gl), torch.tensor(gu)])
    (h,) = tp.autograd.grad([l, u], [x], [tp.tensor(gl), tp.tensor(gu)])
    _close(h, g)


def test_lu_factor_pivots_and_lu_solve_adjoint():
    a = np.random.default_rng(3).uniform(-1, 1, (4, 4))
    b = np.random.default_rng(4).uniform(-1, 1, (4, 2))
    t, x = _pair(a)
    LU, piv = torch.linalg.lu_factor(t)
    lu, pv = tp.linalg.lu_factor(x)
    assert pv.dtype is tp.int32 and pv.tolist() == piv.tolist()
    _close(lu, LU)
    for left, adjoint in ((True, True), (False, False), (False, True)):
        bb = b if left else b.T
        want = torch.linalg.lu_solve(LU, piv, torch.tensor(bb), left=left, adjoint=adjoint)
        _close(tp.linalg.lu_solve(lu, pv, tp.tensor(bb), left=left, adjoint=adjoint), want)


def test_ldl_factor_with_two_by_two_pivots():
    a = np.array([[0.0, 1.0, 2.0, 0.5], [1.0, 0.0, 3.0, 1.0], [2.0, 3.0, 1.0, 0.0], [0.5, 1.0, 0.0, -2.0]])
    t, x = _pair(a)
    LD, piv = torch.linalg.ldl_factor(t)
    ld, pv = tp.linalg.ldl_factor(x)
    assert pv.tolist() == piv.tolist() and min(piv.tolist()) < 0
    _close(ld, LD)
    b = np.random.default_rng(5).uniform(-1, 1, (4, 3))
    _close(tp.linalg.ldl_solve(ld, pv, tp.tensor(b)), torch.linalg.ldl_solve(LD, piv, torch.tensor(b)))


def test_eig_gradient_of_a_phase_invariant_loss():
    a = np.array([[2.0, 1.0, 0.0], [-1.0, 1.0, 0.5], [0.3, 0.2, -1.0]])
    t, x = _pair(a, True)
    w, v = torch.linalg.eig(t)
    (g,) = torch.autograd.grad((w.real * w.imag).sum() + v.abs().pow(3).sum(), t)
    mw, mv = tp.linalg.eig(x)
    (h,) = tp.autograd.grad((mw.real * mw.imag).sum() + mv.abs().pow(3).sum(), x)
    _close(h, g, 1e-7)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_gradients_reach_the_whole_factor(upper):
    rng = np.random.default_rng(6)
    fac = rng.uniform(-0.5, 0.5, (3, 3)) + 2 * np.eye(3)
    fac = np.triu(fac) if upper else np.tril(fac)
    fac = fac + 0.1 * rng.uniform(size=(3, 3))   # the other triangle is not read, but is differentiated
    b = rng.uniform(-1, 1, (3, 2))
    (tl, xl), (tb, xb) = _pair(fac, True), _pair(b, True)
    want = torch.cholesky_solve(tb, tl, upper)
    got = tp.cholesky_solve(xb, xl, upper)
    _close(got, want)
    gt = torch.autograd.grad(want.pow(2).sum(), [tb, tl])
    gx = tp.autograd.grad(got.pow(2).sum(), [xb, xl])
    for h, g in zip(gx, gt):
        _close(h, g)
    want = torch.cholesky_inverse(tl, upper)
    got = tp.cholesky_inverse(xl, upper)
    _close(got, want)
    _close(tp.autograd.grad(got.sin().sum(), xl)[0], torch.autograd.grad(want.sin().sum(), tl)[0])


def test_geqrf_householder_product_and_ormqr():
    a = np.random.default_rng(7).uniform(-1, 1, (4, 3))
    c = np.random.default_rng(8).uniform(-1, 1, (4, 2))
    t, x = _pair(a)
    A, tau = torch.geqrf(t)
    h, ta = tp.geqrf(x)
    _close(h, A)
    _close(ta, tau)
    _close(tp.linalg.householder_product(h, ta), torch.linalg.householder_product(A, tau))
    for transpose in (False, True):
        _close(tp.ormqr(h, ta, tp.tensor(c), True, transpose), torch.ormqr(A, tau, torch.tensor(c), True, transpose))


def test_svd_lowrank_matches_up_to_signs():
    a = np.random.default_rng(9).uniform(-1, 1, (6, 2)) @ np.random.default_rng(10).uniform(-1, 1, (2, 5))
    t, x = _pair(a)
    U, S, V = torch.svd_lowrank(t, q=2)
    u, s, v = tp.svd_lowrank(x, q=2)
    _close(s, S)
    _close(u.abs(), U.abs(), 1e-7)
    _close(v.abs(), V.abs(), 1e-7)
    _, s2, _ = tp.pca_lowrank(x, q=2)
    _close(s2, torch.pca_lowrank(t, q=2)[1])


def test_cond_vander_tensorsolve():
    a = np.random.default_rng(11).uniform(-1, 1, (2, 3, 3))
    t, x = _pair(a)
    for p in (None, 2, -2, "fro", "nuc", 1, -1, float("inf")):
        _close(tp.linalg.cond(x, p), torch.linalg.cond(t, p), 1e-7)
    v = tp.linalg.vander(tp.tensor([1, 2, 3]), N=4)
    assert v.dtype is tp.int64 and v.tolist() == torch.linalg.vander(torch.tensor([1, 2, 3]), N=4).tolist()
    A = np.random.default_rng(12).uniform(-1, 1, (2, 3, 6)) + np.eye(6).reshape(2, 3, 6) * 3
    B = np.random.default_rng(13).uniform(-1, 1, (2, 3))
    _close(tp.linalg.tensorsolve(tp.tensor(A), tp.tensor(B)),
           torch.linalg.tensorsolve(torch.tensor(A), torch.tensor(B)))
