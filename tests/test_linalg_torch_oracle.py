"""tensorplug.linalg, its legacy names and the matrix products against PyTorch: values, float64 gradients
(with a random weighting of every output, so each output's gradient counts) and error types and messages."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

L, TL = tp.linalg, torch.linalg
INF = math.inf


def _arrays(shapes, seed, prep=None):
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s) for s in shapes]
    return prep(arrs) if prep else arrs


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    return [out]


def _spd(arrs):
    a = arrs[0]
    n = a.shape[-1]
    return [a @ np.swapaxes(a, -1, -2) + n * np.eye(n)] + arrs[1:]


def _sym(arrs):
    return [arrs[0] + np.swapaxes(arrs[0], -1, -2)] + arrs[1:]


def _wellcond(arrs):
    a = arrs[0]
    return [a + a.shape[-1] * np.eye(a.shape[-1])] + arrs[1:]


def check(f_tp, f_torch, shapes, seed=0, prep=None, grad=True, atol=1e-8, symmetric_grad=False):
    """Same values (float64), then the same gradient of sum(w * out) for every float output
    (``symmetric_grad``: the same symmetric part, for functions of symmetric matrices)."""
    arrs = _arrays(shapes, seed, prep)
    xs = [tp.tensor(a, requires_grad=grad) for a in arrs]
    ts = [torch.tensor(a, requires_grad=grad) for a in arrs]
    outs, touts = _flat(f_tp(*xs)), _flat(f_torch(*ts))
    assert len(outs) == len(touts)
    for o, t in zip(outs, touts):
        assert o.shape == tuple(t.shape)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-7)
    if not grad:
        return
    rng = np.random.default_rng(seed + 100)
    loss, tloss = 0, 0
    for o, t in zip(outs, touts):
        if t.dtype.is_floating_point and t.requires_grad:
            w = rng.standard_normal(tuple(t.shape))
            loss = loss + (o * tp.tensor(w)).sum()
            tloss = tloss + (t * torch.tensor(w)).sum()
    loss.backward()
    tloss.backward()
    for x, t in zip(xs, ts):
        g, h = x.grad.numpy(), t.grad.numpy()
        if symmetric_grad:
            g, h = g + np.swapaxes(g, -1, -2), h + np.swapaxes(h, -1, -2)
        np.testing.assert_allclose(g, h, atol=1e-6, rtol=1e-6)


CASES = {
    "inv": (L.inv, TL.inv, [(2, 3, 3)], _wellcond),
    "inv_ex": (lambda a: L.inv_ex(a).inverse, lambda a: TL.inv_ex(a).inverse, [(3, 3)], _wellcond),
    "det": (L.det, TL.det, [(2, 3, 3)], None),
    "slogdet": (L.slogdet, TL.slogdet, [(2, 3, 3)], None),
    "logdet": (tp.logdet, torch.logdet, [(3, 3)], _spd),
    "solve": (L.solve, TL.solve, [(2, 3, 3), (2, 3, 2)], _wellcond),
    "solve_vector": (L.solve, TL.solve, [(3, 3), (3,)], _wellcond),
    "solve_batch_vector": (L.solve, TL.solve, [(2, 3, 3), (2, 3)], _wellcond),
    "solve_broadcast": (L.solve, TL.solve, [(2, 1, 3, 3), (4, 3, 2)], _wellcond),
    "solve_left_false": (lambda a, b: L.solve(a, b, left=False), lambda a, b: TL.solve(a, b, left=False),
                         [(3, 3), (2, 3)], _wellcond),
    "cholesky": (L.cholesky, TL.cholesky, [(2, 3, 3)], _spd),
    "cholesky_upper": (lambda a: L.cholesky(a, upper=True), lambda a: TL.cholesky(a, upper=True), [(3, 3)], _spd),
    "cholesky_ex": (lambda a: L.cholesky_ex(a).L, lambda a: TL.cholesky_ex(a).L, [(3, 3)], _spd),
    "legacy_cholesky": (lambda a: tp.cholesky(a, True), lambda a: torch.linalg.cholesky(a).mH, [(3, 3)], _spd),
    "eigvalsh": (L.eigvalsh, TL.eigvalsh, [(2, 3, 3)], _sym),
    "eigvalsh_upper": (lambda a: L.eigvalsh(a, "U"), lambda a: TL.eigvalsh(a, "U"), [(3, 3)], None),
    "eigh_gauge_invariant": (lambda a: (lambda r: (r[0], r[1] * r[1]))(L.eigh(a)),
                             lambda a: (lambda r: (r[0], r[1] * r[1]))(TL.eigh(a)), [(2, 3, 3)], _sym),
    "matrix_exp": (L.matrix_exp, TL.matrix_exp, [(2, 3, 3)], None),
    "matrix_exp_scaled": (L.matrix_exp, TL.matrix_exp, [(4, 4)], lambda a: [a[0] * 4]),
    "matrix_power_3": (lambda a: L.matrix_power(a, 3), lambda a: TL.matrix_power(a, 3), [(2, 3, 3)], None),
    "matrix_power_neg": (lambda a: L.matrix_power(a, -2), lambda a: TL.matrix_power(a, -2), [(3, 3)], _wellcond),
    "matrix_power_0": (lambda a: L.matrix_power(a, 0), lambda a: TL.matrix_power(a, 0), [(2, 3, 3)], None),
    "multi_dot": (lambda a, b, c: L.multi_dot([a, b, c]), lambda a, b, c: TL.multi_dot([a, b, c]),
                  [(3,), (3, 5), (5, 2)], None),
    "multi_dot_4": (lambda *m: L.multi_dot(m), lambda *m: TL.multi_dot(m), [(2, 6), (6, 1), (1, 5), (5, 3)], None),
    "cross": (L.cross, TL.cross, [(2, 3), (1, 3)], None),
    "cross_dim": (lambda a, b: L.cross(a, b, dim=0), lambda a, b: TL.cross(a, b, dim=0), [(3, 2), (3, 2)], None),
    "legacy_cross_dim": (lambda a, b: tp.cross(a, b, 1), lambda a, b: torch.cross(a, b, 1), [(2, 3), (2, 3)], None),
    "vecdot": (L.vecdot, TL.vecdot, [(2, 3), (3,)], None),
    "vecdot_dim": (lambda a, b: L.vecdot(a, b, dim=0), lambda a, b: TL.vecdot(a, b, dim=0), [(3, 2), (3, 2)], None),
    "vector_norm": (lambda a: L.vector_norm(a, 3, (0, 2)), lambda a: TL.vector_norm(a, 3, (0, 2)), [(2, 3, 4)], None),
    "norm_default": (L.norm, TL.norm, [(2, 3, 4)], None),
    "norm_dim": (lambda a: L.norm(a, 1, -1), lambda a: TL.norm(a, 1, -1), [(2, 3, 4)], None),
    "norm_matrix_dims": (lambda a: L.norm(a, None, (0, 2)), lambda a: TL.norm(a, None, (0, 2)), [(2, 3, 4)], None),
    "norm_2d_ord": (lambda a: L.norm(a, -2), lambda a: TL.norm(a, -2), [(3, 4)], None),
    "norm_1d_ord": (lambda a: L.norm(a, 0.5), lambda a: TL.norm(a, 0.5), [(5,)], None),
    "legacy_norm_nuc": (lambda a: tp.norm(a, "nuc"), lambda a: torch.norm(a, "nuc"), [(3, 4)], None),
    "legacy_norm_fro_dims": (lambda a: tp.norm(a, "fro", (0, 1)), lambda a: torch.norm(a, "fro", (0, 1)),
                             [(3, 4, 2)], None),
    "pinv_hermitian": (lambda a: L.pinv(a, hermitian=True), lambda a: TL.pinv(a, hermitian=True), [(3, 3)], _sym),
    "baddbmm": (lambda x, a, b: tp.baddbmm(x, a, b, beta=0.5, alpha=2),
                lambda x, a, b: torch.baddbmm(x, a, b, beta=0.5, alpha=2), [(5,), (2, 3, 4), (2, 4, 5)], None),
    "addbmm": (lambda x, a, b: tp.addbmm(x, a, b, alpha=-1), lambda x, a, b: torch.addbmm(x, a, b, alpha=-1),
               [(3, 5), (2, 3, 4), (2, 4, 5)], None),
    "addmv": (lambda x, a, b: tp.addmv(x, a, b, beta=2), lambda x, a, b: torch.addmv(x, a, b, beta=2),
              [(3,), (3, 4), (4,)], None),
    "addr": (lambda x, a, b: tp.addr(x, a, b, alpha=3), lambda x, a, b: torch.addr(x, a, b, alpha=3),
             [(3, 1), (3,), (4,)], None),
    "ger": (tp.ger, torch.ger, [(3,), (4,)], None),
    "kron": (tp.kron, torch.kron, [(2, 1, 3), (2, 2, 2)], None),
    "kron_ranks": (tp.kron, torch.kron, [(2, 3), (4,)], None),
    "tensordot": (tp.tensordot, torch.tensordot, [(2, 3, 4), (3, 4, 5)], None),
    "tensordot_lists": (lambda a, b: tp.tensordot(a, b, dims=([1, 2], [1, 0])),
                        lambda a, b: torch.tensordot(a, b, dims=([1, 2], [1, 0])), [(2, 3, 4), (4, 3, 5)], None),
    "tensordot_0": (lambda a, b: tp.tensordot(a, b, dims=0), lambda a, b: torch.tensordot(a, b, dims=0),
                    [(2, 3), (4,)], None),
}
for _m, _n in ((4, 3), (3, 3), (3, 5)):
    CASES.update({
        f"qr_{_m}x{_n}": (L.qr, TL.qr, [(2, _m, _n)], None),
        f"qr_complete_{_m}x{_n}": (lambda a: L.qr(a, "complete"), lambda a: TL.qr(a, "complete"), [(_m, _n)], None),
        f"legacy_qr_{_m}x{_n}": (tp.qr, torch.qr, [(_m, _n)], None),
        f"svdvals_{_m}x{_n}": (L.svdvals, TL.svdvals, [(2, _m, _n)], None),
        f"pinv_{_m}x{_n}": (L.pinv, TL.pinv, [(_m, _n)], None),
        f"lstsq_{_m}x{_n}": (lambda a, b: L.lstsq(a, b).solution, lambda a, b: TL.lstsq(a, b).solution,
                             [(_m, _n), (_m, 2)], None),
        f"matrix_norm_nuc_{_m}x{_n}": (lambda a: L.matrix_norm(a, "nuc"), lambda a: TL.matrix_norm(a, "nuc"),
                                       [(_m, _n)], None),
    })
    for _ord in (2, -2, 1, -1, INF, -INF, "fro"):
        CASES[f"matrix_norm_{_ord}_{_m}x{_n}"] = (lambda a, o=_ord: L.matrix_norm(a, o, keepdim=True),
                                                  lambda a, o=_ord: TL.matrix_norm(a, o, keepdim=True),
                                                  [(2, _m, _n)], None)
for _up in (True, False):
    for _left in (True, False):
        for _unit in (True, False):
            CASES[f"solve_triangular_{_up}_{_left}_{_unit}"] = (
                lambda a, b, u=_up, lf=_left, un=_unit: L.solve_triangular(a, b, upper=u, left=lf, unitriangular=un),
                lambda a, b, u=_up, lf=_left, un=_unit: TL.solve_triangular(a, b, upper=u, left=lf, unitriangular=un),
                [(2, 3, 3), (2, 3, 3)], _wellcond)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_pytorch(name):
    f_tp, f_torch, shapes, prep = CASES[name]
    # pinv(hermitian=True) differentiates through eigh, PyTorch through its general pinv formula: they agree
    # on every symmetric direction
    check(f_tp, f_torch, shapes, prep=prep, grad=name not in ("matrix_power_0", "qr_complete_4x3"), symmetric_grad=name == "pinv_hermitian")


def test_qr_complete_tall_is_not_differentiable_as_in_pytorch():
    a = np.random.default_rng(5).standard_normal((4, 3))
    msgs = []
    for lib in (tp, torch):
        x = lib.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            lib.linalg.qr(x, "complete").Q.sum().backward()
        msgs.append(str(e.value).splitlines()[0])
    assert msgs[0] == msgs[1]


def _svd_invariants(lib):
    """Gauge-invariant functions of an SVD: U U^T, V V^T and the first rank-one term, weighted."""
    def f(a):
        r = lib.linalg.svd(a, full_matrices=False)
        m, n = a.shape[-2:]
        wm = lib.arange(float(m * m), dtype=a.dtype).reshape(m, m)
        wn = lib.arange(float(n * n), dtype=a.dtype).reshape(n, n)
        return (r.U @ r.U.mT * wm, r.Vh.mT @ r.Vh * wn, r.U[..., :1] @ r.Vh[..., :1, :], r.S)
    return f


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 3)], ids=str)
def test_svd_gradient_of_gauge_invariant_functions(shape):
    check(_svd_invariants(tp), _svd_invariants(torch), [shape])


def test_legacy_svd_returns_v():
    a = np.random.default_rng(3).standard_normal((4, 3))
    U, S, V = tp.svd(tp.tensor(a))
    tU, tS, tV = torch.svd(torch.tensor(a))
    np.testing.assert_allclose(S.numpy(), tS.numpy())
    np.testing.assert_allclose(((U * S) @ V.mT).numpy(), a, atol=1e-12)
    assert V.shape == tuple(tV.shape) and U.shape == tuple(tU.shape)
    U0, S0, V0 = tp.svd(tp.tensor(a), compute_uv=False)
    tU0, _, tV0 = torch.svd(torch.tensor(a), compute_uv=False)
    assert U0.shape == tuple(tU0.shape) and V0.shape == tuple(tV0.shape) and not U0.numpy().any()


def test_lstsq_fields_match_pytorch_for_each_driver():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    for driver in (None, "gels", "gelsy", "gelsd", "gelss"):
        r = L.lstsq(tp.tensor(a), tp.tensor(b), driver=driver)
        t = TL.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        for name in ("solution", "residuals", "rank", "singular_values"):
            x, y = getattr(r, name), getattr(t, name)
            assert x.shape == tuple(y.shape), (driver, name)
            assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1], (driver, name)
            np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-10)


def test_info_outputs_match_pytorch():
    sing = [[1.0, 2.0], [2.0, 4.0]]
    not_pd = [[1.0, 2.0], [2.0, 1.0]]
    for a in (sing, [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]]):
        assert L.inv_ex(tp.tensor(a)).info.item() == TL.inv_ex(torch.tensor(a)).info.item()
        assert L.solve_ex(tp.tensor(a), tp.ones(len(a))).info.item() == \
            TL.solve_ex(torch.tensor(a), torch.ones(len(a))).info.item()
    for a in (not_pd, [[-1.0, 0.0], [0.0, 1.0]], [[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]):
        assert L.cholesky_ex(tp.tensor(a)).info.item() == TL.cholesky_ex(torch.tensor(a)).info.item()
    assert L.inv_ex(tp.tensor(sing)).info.dtype is tp.int32


def test_singular_triangular_solve_gives_inf_like_pytorch():
    a = [[1.0, 0.0], [1.0, 0.0]]
    b = [[1.0], [1.0]]
    x = L.solve_triangular(tp.tensor(a), tp.tensor(b), upper=False).numpy()
    y = TL.solve_triangular(torch.tensor(a), torch.tensor(b), upper=False).numpy()
    np.testing.assert_array_equal(np.isfinite(x), np.isfinite(y))


EINSUM = [
    ("ij,jk", [(2, 3), (3, 4)]), ("ij,jk->ki", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("i,i", [(3,), (3,)]), ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk", [(5, 2, 3), (3, 4)]), ("...ij->...", [(5, 2, 3)]), ("...ij->ij", [(5, 2, 3)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]), ("bii->bi", [(2, 3, 3)]), ("ijk,kl,lm->im", [(2, 3, 4), (4, 5), (5, 2)]),
    ("iij->j", [(3, 3, 4)]), ("Ab,ba->Aa", [(2, 3), (3, 4)]), ("ij,kl->ijkl", [(2, 3), (4, 1)]),
    ("i j , j k -> i k", [(2, 3), (3, 4)]), ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]),
    ("...,...->...", [(2, 3), (3,)]), ("i,i,i->", [(3,), (3,), (3,)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ba,ab", [(2, 3), (3, 2)]), ("zA,Az->", [(2, 3), (3, 2)]), ("i...->...", [(3, 2, 2)]), ("...i,...i", [(2, 3), (3,)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_matches_pytorch(eq, shapes):
    check(lambda *a: tp.einsum(eq, *a), lambda *a: torch.einsum(eq, *a), shapes)
    check(lambda *a: tp.einsum(eq, list(a)), lambda *a: torch.einsum(eq, list(a)), shapes, grad=False)


def test_einsum_sublist_form_matches_pytorch():
    E = Ellipsis
    cases = [([0, 1], [1, 2], [0, 2]), ([0, 1], [1, 2]), ([E, 0, 1], [1, 2], [E, 0, 2])]
    shapes = [[(2, 3), (3, 4)], [(2, 3), (3, 4)], [(5, 2, 3), (3, 4)]]
    for subs, sh in zip(cases, shapes):
        def call(lib, *ops, subs=subs):
            args = [x for pair in zip(ops, subs) for x in pair] + list(subs[len(ops):])
            return lib.einsum(*args)
        check(lambda *a: call(tp, *a), lambda *a: call(torch, *a), sh)


# -- errors --------------------------------------------------------------------------------------
def _both(fn):
    """Run ``fn(lib)`` with tensorplug and with PyTorch; return the two exceptions."""
    out = []
    for lib in (tp, torch):
        try:
            fn(lib)
        except Exception as e:  # noqa: BLE001 - the test compares whatever each library raises
            out.append(e)
        else:
            out.append(None)
    return out


def _t(lib, v, dtype="float32"):
    return lib.tensor(np.asarray(v, dtype=dtype))


R = np.random.default_rng(0)
SING, NOT_PD = [[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [2.0, 1.0]]
ERRORS = {
    "inv_rect": lambda lib: lib.linalg.inv(_t(lib, R.standard_normal((2, 3)))),
    "inv_int": lambda lib: lib.linalg.inv(_t(lib, [[1, 2], [3, 4]], "int64")),
    "inv_half": lambda lib: lib.linalg.inv(_t(lib, [[1, 2], [3, 4]], "float16")),
    "inv_vector": lambda lib: lib.linalg.inv(_t(lib, [1.0, 2.0])),
    "inv_singular": lambda lib: lib.linalg.inv(_t(lib, SING)),
    "inv_singular_3": lambda lib: lib.linalg.inv(_t(lib, [[1.0, 2, 3], [2, 4, 6], [1, 0, 0]])),
    "inv_batch_singular": lambda lib: lib.linalg.inv(_t(lib, [np.eye(2), SING])),
    "inverse_rect": lambda lib: lib.inverse(_t(lib, R.standard_normal((2, 3)))),
    "solve_singular": lambda lib: lib.linalg.solve(_t(lib, SING), _t(lib, [1.0, 2.0])),
    "solve_batch_singular": lambda lib: lib.linalg.solve(_t(lib, [np.eye(2), SING]), _t(lib, np.ones((2, 2)))),
    "solve_shapes": lambda lib: lib.linalg.solve(_t(lib, np.eye(2)), _t(lib, np.ones(3))),
    "solve_dtypes": lambda lib: lib.linalg.solve(_t(lib, np.eye(2)), _t(lib, np.ones(2), "float64")),
    "solve_rect": lambda lib: lib.linalg.solve(_t(lib, np.ones((2, 3))), _t(lib, np.ones(2))),
    "det_rect": lambda lib: lib.linalg.det(_t(lib, np.ones((2, 3)))),
    "det_int": lambda lib: lib.linalg.det(_t(lib, [[1, 2], [3, 4]], "int64")),
    "det_vector": lambda lib: lib.linalg.det(_t(lib, [1.0, 2.0])),
    "slogdet_rect": lambda lib: lib.linalg.slogdet(_t(lib, np.ones((2, 3)))),
    "logdet_int": lambda lib: lib.logdet(_t(lib, [[1, 2], [3, 4]], "int64")),
    "cholesky_not_pd": lambda lib: lib.linalg.cholesky(_t(lib, NOT_PD)),
    "cholesky_batch_not_pd": lambda lib: lib.linalg.cholesky(_t(lib, [np.eye(2), NOT_PD])),
    "cholesky_rect": lambda lib: lib.linalg.cholesky(_t(lib, np.ones((2, 3)))),
    "cholesky_int": lambda lib: lib.linalg.cholesky(_t(lib, [[1, 2], [3, 4]], "int64")),
    "legacy_cholesky_not_pd": lambda lib: lib.cholesky(_t(lib, NOT_PD)),
    "legacy_cholesky_rect": lambda lib: lib.cholesky(_t(lib, np.ones((2, 3)))),
    "cholesky_ex_check": lambda lib: lib.linalg.cholesky_ex(_t(lib, NOT_PD), check_errors=True),
    "inv_ex_check": lambda lib: lib.linalg.inv_ex(_t(lib, SING), check_errors=True),
    "eigh_rect": lambda lib: lib.linalg.eigh(_t(lib, np.ones((2, 3)))),
    "eigh_uplo": lambda lib: lib.linalg.eigh(_t(lib, np.eye(2)), UPLO="X"),
    "eigh_int": lambda lib: lib.linalg.eigh(_t(lib, [[1, 2], [3, 4]], "int64")),
    "eigvalsh_rect": lambda lib: lib.linalg.eigvalsh(_t(lib, np.ones((2, 3)))),
    "svd_vector": lambda lib: lib.linalg.svd(_t(lib, [1.0, 2.0])),
    "svd_int": lambda lib: lib.linalg.svd(_t(lib, [[1, 2], [3, 4]], "int64")),
    "svdvals_int": lambda lib: lib.linalg.svdvals(_t(lib, [[1, 2], [3, 4]], "int64")),
    "legacy_svd_int": lambda lib: lib.svd(_t(lib, [[1, 2], [3, 4]], "int64")),
    "qr_mode": lambda lib: lib.linalg.qr(_t(lib, np.ones((2, 3))), mode="x"),
    "qr_vector": lambda lib: lib.linalg.qr(_t(lib, [1.0, 2.0])),
    "qr_int": lambda lib: lib.linalg.qr(_t(lib, [[1, 2], [3, 4]], "int64")),
    "solve_triangular_shapes": lambda lib: lib.linalg.solve_triangular(_t(lib, np.eye(2)), _t(lib, np.ones((3, 1))),
                                                                       upper=True),
    "solve_triangular_rect": lambda lib: lib.linalg.solve_triangular(_t(lib, np.ones((2, 3))),
                                                                     _t(lib, np.ones((2, 1))), upper=True),
    "solve_triangular_vector": lambda lib: lib.linalg.solve_triangular(_t(lib, np.eye(2)), _t(lib, np.ones(2)),
                                                                       upper=True),
    "matrix_power_rect": lambda lib: lib.linalg.matrix_power(_t(lib, np.ones((2, 3))), 2),
    "matrix_power_singular": lambda lib: lib.linalg.matrix_power(_t(lib, SING), -1),
    "matrix_power_int_negative": lambda lib: lib.linalg.matrix_power(_t(lib, [[1, 2], [3, 4]], "int64"), -1),
    "matrix_power_vector": lambda lib: lib.linalg.matrix_power(_t(lib, [1.0, 2.0]), 2),
    "multi_dot_one": lambda lib: lib.linalg.multi_dot([_t(lib, [1.0, 2.0])]),
    "multi_dot_shapes": lambda lib: lib.linalg.multi_dot([_t(lib, np.ones((2, 3))), _t(lib, np.ones((2, 3)))]),
    "multi_dot_3d": lambda lib: lib.linalg.multi_dot([_t(lib, np.ones((2, 3, 3))), _t(lib, np.ones((3, 3)))]),
    "multi_dot_dtypes": lambda lib: lib.linalg.multi_dot([_t(lib, np.ones((2, 3))),
                                                          _t(lib, np.ones((3, 3)), "float64")]),
    "cross_length": lambda lib: lib.linalg.cross(_t(lib, np.ones((2, 4))), _t(lib, np.ones((2, 4)))),
    "cross_broadcast": lambda lib: lib.linalg.cross(_t(lib, np.ones((2, 3))), _t(lib, np.ones((3, 3)))),
    "cross_dtypes": lambda lib: lib.linalg.cross(_t(lib, np.ones(3)), _t(lib, np.ones(3), "float64")),
    "vecdot_sizes": lambda lib: lib.linalg.vecdot(_t(lib, np.ones(3)), _t(lib, np.ones(4))),
    "vecdot_dtypes": lambda lib: lib.linalg.vecdot(_t(lib, np.ones(3)), _t(lib, np.ones(3), "float64")),
    "vecdot_int": lambda lib: lib.linalg.vecdot(_t(lib, [1, 2], "int64"), _t(lib, [1, 2], "int64")),
    "matrix_norm_ord": lambda lib: lib.linalg.matrix_norm(_t(lib, np.ones((2, 3))), ord=3),
    "matrix_norm_vector": lambda lib: lib.linalg.matrix_norm(_t(lib, np.ones(3))),
    "matrix_norm_int": lambda lib: lib.linalg.matrix_norm(_t(lib, [[1, 2], [3, 4]], "int64")),
    "matrix_norm_same_dims": lambda lib: lib.linalg.matrix_norm(_t(lib, np.ones((2, 3))), dim=(0, 0)),
    "norm_3d_ord": lambda lib: lib.linalg.norm(_t(lib, np.ones((2, 3, 4))), ord=2),
    "norm_vector_fro": lambda lib: lib.linalg.norm(_t(lib, np.ones(3)), ord="fro"),
    "pinv_int": lambda lib: lib.linalg.pinv(_t(lib, [[1, 2], [3, 4]], "int64")),
    "pinv_vector": lambda lib: lib.linalg.pinv(_t(lib, [1.0, 2.0])),
    "pinverse_int": lambda lib: lib.pinverse(_t(lib, [[1, 2], [3, 4]], "int64")),
    "matrix_exp_rect": lambda lib: lib.linalg.matrix_exp(_t(lib, np.ones((2, 3)))),
    "matrix_exp_int": lambda lib: lib.linalg.matrix_exp(_t(lib, [[1, 2], [3, 4]], "int64")),
    "matrix_rank_int": lambda lib: lib.linalg.matrix_rank(_t(lib, [[1, 2], [3, 4]], "int64")),
    "matrix_rank_vector": lambda lib: lib.linalg.matrix_rank(_t(lib, [1.0, 2.0])),
    "lstsq_rows": lambda lib: lib.linalg.lstsq(_t(lib, np.ones((2, 3))), _t(lib, np.ones((3, 1)))),
    "lstsq_driver": lambda lib: lib.linalg.lstsq(_t(lib, np.ones((2, 3))), _t(lib, np.ones((2, 1))), driver="x"),
    "baddbmm_input": lambda lib: lib.baddbmm(_t(lib, np.ones((4, 5))), _t(lib, np.ones((2, 3, 4))),
                                             _t(lib, np.ones((2, 4, 5)))),
    "baddbmm_2d": lambda lib: lib.baddbmm(_t(lib, np.ones((2, 3, 5))), _t(lib, np.ones((3, 4))),
                                          _t(lib, np.ones((2, 4, 5)))),
    "baddbmm_2d_input_ok": lambda lib: lib.baddbmm(_t(lib, np.ones(5)), _t(lib, np.ones((3, 4))),
                                                   _t(lib, np.ones((2, 4, 5)))),
    "legacy_norm_nuc_vector": lambda lib: lib.norm(_t(lib, np.ones(3)), "nuc"),
    "legacy_norm_nuc_dim": lambda lib: lib.norm(_t(lib, np.ones((2, 3))), "nuc", 0),
    "baddbmm_batch": lambda lib: lib.baddbmm(_t(lib, np.ones((2, 3, 5))), _t(lib, np.ones((2, 3, 4))),
                                             _t(lib, np.ones((3, 4, 5)))),
    "baddbmm_dtypes": lambda lib: lib.baddbmm(_t(lib, np.ones((2, 3, 5))), _t(lib, np.ones((2, 3, 4))),
                                              _t(lib, np.ones((2, 4, 5)), "float64")),
    "addbmm_batches": lambda lib: lib.addbmm(_t(lib, np.ones((3, 5))), _t(lib, np.ones((2, 3, 4))),
                                             _t(lib, np.ones((3, 4, 5)))),
    "addbmm_inner": lambda lib: lib.addbmm(_t(lib, np.ones((3, 5))), _t(lib, np.ones((2, 3, 4))),
                                           _t(lib, np.ones((2, 3, 5)))),
    "addmv_input": lambda lib: lib.addmv(_t(lib, np.ones(2)), _t(lib, np.ones((3, 4))), _t(lib, np.ones(4))),
    "addmv_vec": lambda lib: lib.addmv(_t(lib, np.ones(3)), _t(lib, np.ones((3, 4))), _t(lib, np.ones(5))),
    "addmv_ranks": lambda lib: lib.addmv(_t(lib, np.ones(3)), _t(lib, np.ones(4)), _t(lib, np.ones(4))),
    "addmv_dtypes": lambda lib: lib.addmv(_t(lib, np.ones(3)), _t(lib, np.ones((3, 4))), _t(lib, np.ones(4), "float64")),
    "addr_input": lambda lib: lib.addr(_t(lib, np.ones((2, 4))), _t(lib, np.ones(3)), _t(lib, np.ones(4))),
    "addr_2d": lambda lib: lib.addr(_t(lib, np.ones((3, 4))), _t(lib, np.ones((3, 1))), _t(lib, np.ones(4))),
    "addr_int_beta": lambda lib: lib.addr(_t(lib, np.ones((3, 4)), "int64"), _t(lib, np.ones(3), "int64"),
                                          _t(lib, np.ones(4), "int64"), beta=1.5),
    "ger_2d": lambda lib: lib.ger(_t(lib, np.ones((3, 1))), _t(lib, np.ones(4))),
    "tensordot_sizes": lambda lib: lib.tensordot(_t(lib, np.ones((2, 3, 4))), _t(lib, np.ones((2, 4, 5))),
                                                 dims=([1], [0])),
    "tensordot_negative": lambda lib: lib.tensordot(_t(lib, np.ones((2, 3))), _t(lib, np.ones((3, 2))), dims=-1),
    "tensordot_lengths": lambda lib: lib.tensordot(_t(lib, np.ones((2, 3, 4))), _t(lib, np.ones((2, 4, 5))),
                                                   dims=([1, 2], [0])),
    "tensordot_dtypes": lambda lib: lib.tensordot(_t(lib, np.ones((2, 3))), _t(lib, np.ones((3, 2)), "float64"),
                                                  dims=1),
    "einsum_more": lambda lib: lib.einsum("ij,jk", _t(lib, np.ones((2, 3))), _t(lib, np.ones((3, 4))),
                                          _t(lib, np.ones(2))),
    "einsum_fewer": lambda lib: lib.einsum("ij,jk,k", _t(lib, np.ones((2, 3))), _t(lib, np.ones((3, 4)))),
    "einsum_subscripts": lambda lib: lib.einsum("ij", _t(lib, np.ones((2, 3, 4)))),
    "einsum_sizes": lambda lib: lib.einsum("ij,jk", _t(lib, np.ones((2, 3))), _t(lib, np.ones((4, 4)))),
    "einsum_output": lambda lib: lib.einsum("ij->k", _t(lib, np.ones((2, 3)))),
    "einsum_output_twice": lambda lib: lib.einsum("ij->ii", _t(lib, np.ones((2, 3)))),
    "einsum_char": lambda lib: lib.einsum("i1", _t(lib, np.ones((2, 3)))),
    "einsum_two_arrows": lambda lib: lib.einsum("ij->j->i", _t(lib, np.ones((2, 3)))),
    "einsum_diagonal_sizes": lambda lib: lib.einsum("ii->i", _t(lib, np.ones((3, 4)))),
    "einsum_ellipsis_twice": lambda lib: lib.einsum("......", _t(lib, np.ones((2, 3)))),
    "einsum_sublist_range": lambda lib: lib.einsum(_t(lib, np.ones((2, 3))), [0, 60]),
    "orthogonal_vector": lambda lib: lib.nn.init.orthogonal_(lib.empty(3)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name):
    mine, theirs = _both(ERRORS[name])
    assert theirs is not None and mine is not None, (mine, theirs)
    # torch.linalg.LinAlgError is a RuntimeError, as tensorplug.linalg.LinAlgError is
    expected = RuntimeError if isinstance(theirs, RuntimeError) else type(theirs)
    assert isinstance(mine, expected), (mine, theirs)
    assert (type(theirs).__name__.endswith("LinAlgError")) == isinstance(mine, L.LinAlgError), (mine, theirs)
    assert str(mine).splitlines()[0] == str(theirs).splitlines()[0]


def test_orthogonal_init_matches_pytorch_properties():
    for shape in ((3, 5), (5, 3), (2, 3, 4)):
        w = tp.empty(shape)
        tp.nn.init.orthogonal_(w, gain=2.0)
        flat = w.reshape(shape[0], -1).numpy().astype(np.float64)
        rows, cols = flat.shape
        gram = flat @ flat.T if rows <= cols else flat.T @ flat
        np.testing.assert_allclose(gram, 4 * np.eye(min(rows, cols)), atol=1e-5)
        t = torch.empty(shape)
        torch.nn.init.orthogonal_(t, gain=2.0)
        assert t.shape == tuple(w.shape)
