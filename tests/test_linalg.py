"""tensorplug.linalg without PyTorch: numpy references, float64 gradcheck of every primitive, the info
outputs and errors per batch element, vmap against a loop, the legacy names and the matrix products."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.autograd import gradcheck

L = tp.linalg


def _m(shape, seed=0, boost=None, rg=False):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, shape)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        a = a + (shape[-1] if boost is None else boost) * np.eye(shape[-1])
    return tp.tensor(a, requires_grad=rg)


def _spd(a):
    return a @ a.mT + tp.eye(a.shape[-1], dtype=a.dtype) * a.shape[-1]


def _sym(a):
    return (a + a.mT) * 0.5


GRADCHECK = {
    "inv": (L.inv, [(2, 3, 3)]),
    "inv_ex": (lambda a: L.inv_ex(a).inverse, [(3, 3)]),
    "det": (L.det, [(2, 3, 3)]),
    "slogdet": (lambda a: L.slogdet(a).logabsdet, [(3, 3)]),
    "solve": (L.solve, [(2, 3, 3), (3, 2)]),
    "solve_ex": (lambda a, b: L.solve_ex(a, b).result, [(3, 3), (3,)]),
    "svd": (lambda a: (lambda r: (r.U @ r.U.mT, r.S, r.Vh.mT @ r.Vh))(L.svd(a, full_matrices=False)), [(4, 3)]),
    "svd_wide": (lambda a: (lambda r: (r.U[..., :1] @ r.Vh[..., :1, :], r.S))(L.svd(a, full_matrices=False)),
                 [(2, 4)]),
    "svdvals": (L.svdvals, [(2, 3, 4)]),
    "eigh": (lambda a: (lambda r: (r.eigenvalues, r.eigenvectors * r.eigenvectors))(L.eigh(_sym(a))), [(3, 3)]),
    "eigvalsh": (lambda a: L.eigvalsh(_sym(a)), [(2, 3, 3)]),
    "qr": (L.qr, [(4, 3)]),
    "qr_wide": (L.qr, [(2, 4)]),
    "qr_complete_wide": (lambda a: L.qr(a, "complete"), [(2, 4)]),
    "cholesky": (lambda a: L.cholesky(_spd(a)), [(3, 3)]),
    "cholesky_upper": (lambda a: L.cholesky(_spd(a), upper=True), [(2, 3, 3)]),
    "cholesky_ex": (lambda a: L.cholesky_ex(_spd(a)).L, [(3, 3)]),
    "legacy_cholesky": (lambda a: tp.cholesky(_spd(a)), [(3, 3)]),
    "solve_triangular": (lambda a, b: L.solve_triangular(a, b, upper=True), [(3, 3), (3, 2)]),
    "solve_triangular_right_unit": (lambda a, b: L.solve_triangular(a, b, upper=False, left=False,
                                                                    unitriangular=True), [(3, 3), (2, 3)]),
    "matrix_exp": (L.matrix_exp, [(3, 3)]),
    "pinv": (L.pinv, [(4, 3)]),
    "lstsq": (lambda a, b: L.lstsq(a, b).solution, [(4, 3), (4, 2)]),
    "matrix_norm_nuc": (lambda a: L.matrix_norm(a, "nuc"), [(3, 4)]),
    "matrix_norm_2": (lambda a: L.matrix_norm(a, 2), [(3, 4)]),
    "matrix_power": (lambda a: L.matrix_power(a, -3), [(3, 3)]),
    "multi_dot": (lambda a, b, c: L.multi_dot([a, b, c]), [(2, 3), (3, 4), (4,)]),
    "cross": (L.cross, [(2, 3), (2, 3)]),
    "einsum": (lambda a, b: tp.einsum("bij,jk->bk", a, b), [(2, 3, 4), (4, 2)]),
    "tensordot": (lambda a, b: tp.tensordot(a, b, dims=([0], [1])), [(3, 2), (4, 3)]),
    "kron": (tp.kron, [(2, 2), (3,)]),
    "baddbmm": (lambda x, a, b: tp.baddbmm(x, a, b, beta=0.5, alpha=2.0), [(1, 3), (2, 3, 4), (2, 4, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck_float64(name):
    fn, shapes = GRADCHECK[name]
    args = [_m(s, seed=i, rg=True) for i, s in enumerate(shapes)]
    assert gradcheck(fn, tuple(args))


def test_second_order_gradient_of_det():
    a = _m((3, 3), rg=True)
    g, = tp.autograd.grad(L.det(a), a, create_graph=True)
    gg, = tp.autograd.grad(g.sum(), a)
    # d/dA sum(cofactor(A)): finite differences of the first gradient
    eps, x = 1e-6, a.detach().numpy()
    num = np.zeros_like(x)
    for i in range(3):
        for j in range(3):
            d = np.zeros_like(x)
            d[i, j] = eps
            up = tp.tensor(x + d, requires_grad=True)
            dn = tp.tensor(x - d, requires_grad=True)
            gu, = tp.autograd.grad(L.det(up), up)
            gd, = tp.autograd.grad(L.det(dn), dn)
            num[i, j] = (gu.sum().item() - gd.sum().item()) / (2 * eps)
    np.testing.assert_allclose(gg.numpy(), num, atol=1e-5)


def test_det_gradient_of_a_singular_matrix_is_its_cofactor_matrix():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    x = tp.tensor(a, requires_grad=True)
    L.det(x).backward()
    cof = np.array([[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j) for j in range(3)]
                    for i in range(3)])
    np.testing.assert_allclose(x.grad.numpy(), cof, atol=1e-10)


def test_values_match_numpy():
    a, b = _m((2, 4, 4), 1), _m((2, 4, 3), 2)
    x, y = a.numpy(), b.numpy()
    np.testing.assert_allclose(L.inv(a).numpy(), np.linalg.inv(x))
    np.testing.assert_allclose(L.solve(a, b).numpy(), np.linalg.solve(x, y))
    np.testing.assert_allclose(L.det(a).numpy(), np.linalg.det(x))
    np.testing.assert_allclose(L.svdvals(b).numpy(), np.linalg.svd(y, compute_uv=False))
    np.testing.assert_allclose(L.pinv(b).numpy(), np.linalg.pinv(y), atol=1e-12)
    np.testing.assert_allclose(L.matrix_rank(b).numpy(), np.linalg.matrix_rank(y))
    np.testing.assert_allclose(L.eigvalsh(a).numpy(), np.linalg.eigvalsh(x))
    q, r = L.qr(b)
    np.testing.assert_allclose((q @ r).numpy(), y, atol=1e-12)
    u, s, vh = L.svd(b)
    assert u.shape == (2, 4, 4) and vh.shape == (2, 3, 3)
    np.testing.assert_allclose(((u[..., :3] * s.unsqueeze(-2)) @ vh).numpy(), y, atol=1e-12)
    np.testing.assert_allclose(L.matrix_power(a, 5).numpy(), np.linalg.matrix_power(x, 5))
    np.testing.assert_allclose(L.matrix_norm(b, "nuc").numpy(), np.linalg.norm(y, "nuc", axis=(-2, -1)))
    np.testing.assert_allclose(L.matrix_norm(b, -1).numpy(), np.linalg.norm(y, -1, axis=(-2, -1)))
    np.testing.assert_allclose(L.cross(a[..., :3], a[..., 1:]).numpy(), np.cross(x[..., :3], x[..., 1:]))
    np.testing.assert_allclose(tp.kron(a[0], b[0]).numpy(), np.kron(x[0], y[0]))
    np.testing.assert_allclose(tp.tensordot(a, b, dims=([0, 1], [0, 1])).numpy(),
                               np.tensordot(x, y, axes=([0, 1], [0, 1])))


def test_matrix_exp_matches_its_series_and_exp_of_diagonal():
    d = tp.tensor([[1.0, 0.0], [0.0, -2.0]], dtype=tp.float64)
    np.testing.assert_allclose(L.matrix_exp(d).numpy(), np.diag(np.exp([1.0, -2.0])))
    a = _m((3, 3), 4, boost=0.0) * 6  # needs scaling and squaring
    x = a.numpy()
    # exp(A) exp(-A) = I
    np.testing.assert_allclose((L.matrix_exp(a) @ L.matrix_exp(-a)).numpy(), np.eye(3), atol=1e-9)
    nilpotent = tp.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]], dtype=tp.float64)
    n = nilpotent.numpy()
    np.testing.assert_allclose(L.matrix_exp(nilpotent).numpy(), np.eye(3) + n + n @ n / 2)
    assert x.shape == (3, 3)


def test_info_per_batch_element_and_linalg_error():
    a = tp.tensor(np.array([np.eye(2), [[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 1.0]]]))
    inv, info = L.inv_ex(a)
    assert info.tolist() == [0, 2, 1] and info.dtype is tp.int32
    np.testing.assert_allclose(inv[0].numpy(), np.eye(2))
    with pytest.raises(L.LinAlgError, match=r"\(Batch element 1\): The diagonal element 2 is zero"):
        L.inv(a)
    assert issubclass(L.LinAlgError, RuntimeError)
    p = tp.tensor(np.array([np.eye(2), [[1.0, 2.0], [2.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]]))
    assert L.cholesky_ex(p).info.tolist() == [0, 2, 1]
    with pytest.raises(L.LinAlgError, match="leading minor of order 2"):
        L.cholesky(p)
    x, sinfo = L.solve_ex(a, tp.ones(3, 2, dtype=tp.float64))
    assert sinfo.tolist() == [0, 2, 1]
    np.testing.assert_allclose(x[0].numpy(), np.ones(2))


def test_triangular_solve_with_a_zero_pivot_gives_inf_not_an_error():
    a = tp.tensor([[1.0, 0.0], [1.0, 0.0]])
    x = L.solve_triangular(a, tp.tensor([[1.0], [2.0]]), upper=False)
    assert np.isinf(x.numpy()[1, 0])


def test_svd_backward_without_u_and_v_is_an_error():
    a = _m((3, 3), rg=True)
    U, S, Vh = tp.ops.tensorplug._linalg_svd.default(a, False, False)
    with pytest.raises(RuntimeError, match="compute_uv=True"):
        S.sum().backward()


def test_qr_r_mode_has_no_gradient():
    a = _m((3, 3), rg=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        L.qr(a, "r").R.sum().backward()


VMAP = {
    "inv": (L.inv, [(3, 3)]), "det": (L.det, [(3, 3)]), "slogdet": (L.slogdet, [(3, 3)]),
    "solve": (L.solve, [(3, 3), (3,)]), "svdvals": (L.svdvals, [(3, 4)]), "eigvalsh": (L.eigvalsh, [(3, 3)]),
    "qr": (L.qr, [(4, 3)]), "qr_r": (lambda a: L.qr(a, "r").R, [(4, 3)]),
    "cholesky": (lambda a: L.cholesky(_spd(a)), [(3, 3)]),
    "solve_triangular": (lambda a, b: L.solve_triangular(a, b, upper=True), [(3, 3), (3, 2)]),
    "matrix_exp": (L.matrix_exp, [(3, 3)]), "pinv": (L.pinv, [(4, 3)]), "matrix_rank": (L.matrix_rank, [(4, 3)]),
    "einsum": (lambda a, b: tp.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)]),
}


VMAP_CASES = [(n, "all0") for n in sorted(VMAP)] + [(n, "first_unbatched") for n in sorted(VMAP) if len(VMAP[n][1]) > 1]


@pytest.mark.parametrize("name,in_dims", VMAP_CASES)
def test_vmap_matches_a_loop(name, in_dims):
    fn, shapes = VMAP[name]
    n = 3
    args = [_m((n,) + s, seed=i) for i, s in enumerate(shapes)]
    dims = tuple(0 for _ in args)
    if in_dims == "first_unbatched":
        args[0] = args[0][0]
        dims = (None,) + dims[1:]
    out = tp.vmap(fn, in_dims=dims)(*args)
    per = [fn(*[a if d is None else a[k] for a, d in zip(args, dims)]) for k in range(n)]
    outs = out if isinstance(out, tuple) else (out,)
    for j, o in enumerate(outs):
        want = np.stack([(p[j] if isinstance(out, tuple) else p).numpy() for p in per])
        np.testing.assert_allclose(o.numpy(), want, atol=1e-10)


def test_vmap_raises_for_a_singular_example():
    a = tp.tensor(np.array([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]]))
    with pytest.raises(L.LinAlgError, match="Batch element 1"):
        tp.vmap(L.inv)(a)


def test_legacy_names_and_methods():
    a = _m((3, 3), 5)
    np.testing.assert_allclose(a.inverse().numpy(), L.inv(a).numpy())
    np.testing.assert_allclose(tp.det(a).numpy(), a.det().numpy())
    assert tp.slogdet(a).sign.item() == a.slogdet()[0].item()
    np.testing.assert_allclose(a.logdet().numpy(), np.log(np.linalg.det(a.numpy())))
    np.testing.assert_allclose(a.matrix_power(2).numpy(), (a @ a).numpy())
    np.testing.assert_allclose(a.pinverse().numpy(), np.linalg.inv(a.numpy()), atol=1e-12)
    U, S, V = a.svd()
    np.testing.assert_allclose(((U * S) @ V.mT).numpy(), a.numpy(), atol=1e-12)
    Q, R = a.qr()
    np.testing.assert_allclose((Q @ R).numpy(), a.numpy(), atol=1e-12)
    c = _spd(a).cholesky()
    np.testing.assert_allclose((c @ c.mT).numpy(), _spd(a).numpy(), atol=1e-12)
    np.testing.assert_allclose(a.matrix_exp().numpy(), L.matrix_exp(a).numpy())
    assert tp.logdet(tp.tensor([[0.0, 1.0], [1.0, 0.0]])).isnan().item()
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        out = tp.cross(a, a.flip((0,)))
    np.testing.assert_allclose(out.numpy(), np.cross(a.numpy(), a.flip((0,)).numpy(), axis=0))
    np.testing.assert_allclose(tp.norm(a, "nuc").numpy(), np.linalg.norm(a.numpy(), "nuc"))


def test_products_against_numpy():
    rng = np.random.default_rng(7)
    x, b1, b2 = rng.standard_normal((3, 5)), rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    T = tp.tensor
    np.testing.assert_allclose(tp.addbmm(T(x), T(b1), T(b2), beta=2, alpha=0.5).numpy(),
                               2 * x + 0.5 * (b1 @ b2).sum(0))
    np.testing.assert_allclose(tp.baddbmm(T(x), T(b1), T(b2)).numpy(), x + b1 @ b2)
    v = rng.standard_normal(4)
    np.testing.assert_allclose(tp.addmv(T(x[:, 0]), T(b1[0]), T(v)).numpy(), x[:, 0] + b1[0] @ v)
    np.testing.assert_allclose(tp.addr(T(x[:, :4]), T(x[:, 0]), T(v)).numpy(), x[:, :4] + np.outer(x[:, 0], v))
    nan = T(np.full((3, 5), np.nan))
    assert not tp.baddbmm(nan, T(b1), T(b2), beta=0).isnan().any().item()
    ints = tp.ones(2, 2, 2, dtype=tp.int64)
    assert tp.baddbmm(ints, ints, ints, beta=2, alpha=3).tolist() == [[[8, 8], [8, 8]]] * 2
    np.testing.assert_allclose(tp.ger(T(v), T(v)).numpy(), np.outer(v, v))


EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ii", [(3, 3)]), ("...ij,...jk", [(5, 2, 3), (3, 4)]),
          ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("i,j", [(2,), (3,)]), ("ijk->kji", [(2, 3, 4)]),
          ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 2)]), ("ij,ij->", [(1, 3), (2, 3)])]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_matches_numpy(eq, shapes):
    rng = np.random.default_rng(8)
    arrs = [rng.standard_normal(s) for s in shapes]
    want = np.einsum(eq, *[np.broadcast_to(a, np.broadcast_shapes(*shapes)) if eq == "ij,ij->" else a
                           for a in arrs])
    np.testing.assert_allclose(tp.einsum(eq, *[tp.tensor(a) for a in arrs]).numpy(), want)


def test_einsum_contracts_with_matmul_not_elementwise_loops():
    from tensorplug.ops import products
    calls = []
    orig = products.matmul
    products.matmul = lambda a, b: calls.append((a.shape, b.shape)) or orig(a, b)
    try:
        tp.einsum("bij,bjk->bik", tp.ones(4, 2, 3), tp.ones(4, 3, 5))
    finally:
        products.matmul = orig
    assert calls == [((4, 2, 3), (4, 3, 5))]


def test_einsum_sublist_form():
    a, b = tp.ones(2, 3), tp.ones(3, 4)
    np.testing.assert_allclose(tp.einsum(a, [0, 1], b, [1, 2], [0, 2]).numpy(), np.full((2, 4), 3.0))
    np.testing.assert_allclose(tp.einsum(a, [..., 1], [...]).numpy(), np.full((2,), 3.0))


def test_orthogonal_init():
    for shape in ((4, 4), (3, 6), (6, 3), (2, 3, 2)):
        w = tp.empty(shape)
        assert tp.nn.init.orthogonal_(w, gain=0.5) is w
        flat = w.reshape(shape[0], -1).numpy().astype(np.float64)
        gram = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
        np.testing.assert_allclose(gram, 0.25 * np.eye(min(flat.shape)), atol=1e-5)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        tp.nn.init.orthogonal_(tp.empty(3))


def test_linalg_namespace_is_complete_and_lazy():
    import importlib
    import subprocess
    import sys
    mod = importlib.import_module("tensorplug.linalg")
    for name in mod.__all__:
        assert callable(getattr(L, name)), name
    code = "import sys, tensorplug; print('tensorplug.linalg' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
