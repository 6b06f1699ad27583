"""Behaviour of the LU, LDL and eig functions: errors as PyTorch's, info instead of errors in the *_ex
forms, batches under vmap, the triangular_solve copy."""

from __future__ import annotations

import pytest

import tensorplug as tp


def test_lu_factor_raises_for_a_zero_pivot_and_ex_reports_it():
    A = tp.stack([tp.eye(2), tp.zeros(2, 2)])
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): U\[1,1\] is zero"):
        tp.linalg.lu_factor(A)
    assert tp.linalg.lu_factor_ex(A).info.tolist() == [0, 1]
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        tp.linalg.lu_factor(tp.eye(2), pivot=False)


def test_lu_factor_under_vmap_checks_the_whole_batch():
    A = tp.randn(4, 3, 3, dtype=tp.float64) + 3 * tp.eye(3, dtype=tp.float64)
    LU, piv = tp.vmap(tp.linalg.lu_factor)(A)
    want = tp.linalg.lu_factor(A)
    assert tp.allclose(LU, want.LU) and tp.equal(piv, want.pivots)
    with pytest.raises(RuntimeError, match="is zero"):
        tp.vmap(tp.linalg.lu_factor)(tp.zeros(2, 2, 2))


def test_ldl_factor_ex_info_and_ldl_factor_error():
    A = tp.zeros(3, 3)
    assert tp.linalg.ldl_factor_ex(A).info.item() == 1
    with pytest.raises(RuntimeError, match="ldl_factor"):
        tp.linalg.ldl_factor(A)


def test_eig_of_a_rotation_is_complex():
    w, v = tp.linalg.eig(tp.tensor([[0.0, -1.0], [1.0, 0.0]]))
    assert w.dtype is tp.complex64 and v.dtype is tp.complex64
    assert sorted(w.imag.tolist()) == [-1.0, 1.0]
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        tp.linalg.eig(tp.zeros(2, 3))


def test_triangular_solve_returns_a_broadcast_copy():
    A = tp.tensor([[2.0, 1.0], [0.0, 4.0]])
    b = tp.ones(3, 2, 1)
    X, C = tp.triangular_solve(b, A)
    assert C.shape == (3, 2, 2) and tp.allclose(A @ X, b)
    C[0, 0, 0] = 9
    assert A[0, 0].item() == 2.0


def test_cholesky_inverse_is_the_inverse():
    L = tp.tensor([[2.0, 0.0], [1.0, 3.0]], dtype=tp.float64)
    assert tp.allclose(tp.cholesky_inverse(L), tp.linalg.inv(L @ L.mT))
    assert tp.allclose(tp.cholesky_inverse(L.mT, upper=True), tp.linalg.inv(L @ L.mT))


def test_low_rank_reconstructions():
    A = tp.randn(5, 2, dtype=tp.float64) @ tp.randn(2, 4, dtype=tp.float64)
    U, S, V = tp.svd_lowrank(A, q=2)
    assert tp.allclose((U * S) @ V.mT, A)
    U, S, V = tp.pca_lowrank(A, q=2)
    assert tp.allclose((U * S) @ V.mT, A - A.mean(-2, True))
