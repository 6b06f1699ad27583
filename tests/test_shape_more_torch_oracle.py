"""The tensor and shape ops of ops/shape_more.py against PyTorch on inputs its OpInfo samples do not
cover: complex inputs, non-contiguous layouts, weighted statistics, gradients of the scatter family."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorplug as tp  # noqa: E402


def _pair(shape, seed=0, dtype=np.float64, complex_=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    a = a.astype(np.complex128 if complex_ else dtype)
    return tp.tensor(a), torch.tensor(a)


def _close(a, b, **kw):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=1e-7, atol=1e-9, **kw)


def test_complex_properties_and_products():
    a, ta = _pair((3, 4), complex_=True)
    b, tb = _pair((5, 4), 1, complex_=True)
    _close(a.H, ta.H.resolve_conj())
    _close(a.mH, ta.mH.resolve_conj())
    _close(tp.inner(a, b), torch.inner(ta, tb))
    _close(tp.vdot(a[0], b[0]), torch.vdot(ta[0], tb[0]))
    _close(tp.cov(a), torch.cov(ta))
    _close(tp.corrcoef(a), torch.corrcoef(ta))
    _close(tp.renorm(a, 2, 0, 1.0), torch.renorm(ta, 2, 0, 1.0))


def test_weighted_cov():
    a, ta = _pair((3, 6))
    fw = [1, 0, 2, 3, 1, 1]
    aw = np.array([0.5, 1.0, 2.0, 0.1, 1.0, 3.0])
    for kw in ({"correction": 0}, {"correction": 2, "fweights": fw}, {"aweights": aw},
               {"fweights": fw, "aweights": aw}):
        mine = {k: tp.tensor(v) for k, v in kw.items() if k != "correction"}
        theirs = {k: torch.tensor(v) for k, v in kw.items() if k != "correction"}
        c = kw.get("correction", 1)
        _close(tp.cov(a, correction=c, **mine), torch.cov(ta, correction=c, **theirs))


def test_flat_indexing_of_non_contiguous_inputs():
    a, ta = _pair((4, 5))
    idx = [[0, 19], [-1, 7]]
    _close(tp.take(a.t(), tp.tensor(idx)), torch.take(ta.t(), torch.tensor(idx)))
    src, tsrc = _pair((4,), 2)
    pidx = [3, -2, 3, 0]
    _close(a.t().put(tp.tensor(pidx), src, accumulate=True), ta.t().put(torch.tensor(pidx), tsrc, accumulate=True))
    got = tp.unravel_index(tp.tensor([[3, -7], [11, 100]]), (3, 4))
    want = torch.unravel_index(torch.tensor([[3, -7], [11, 100]]), (3, 4))
    assert [g.tolist() for g in got] == [w.tolist() for w in want]


@pytest.mark.parametrize("case", ["diagonal", "select", "slice", "index_reduce"])
@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta:UserWarning")
def test_scatter_family_gradients(case):
    x, tx = _pair((4, 5))
    calls = {
        "diagonal": ((2,), lambda m, a, s: m.diagonal_scatter(a, s, 2, 1, 0)),
        "select": ((4,), lambda m, a, s: m.select_scatter(a, s, 1, -2)),
        "slice": ((4, 2), lambda m, a, s: m.slice_scatter(a, s, 1, -4, None, 2)),
        "index_reduce": ((4, 3), lambda m, a, s: m.index_reduce(a, 1, m.tensor([4, 0, 4]), s, "amax")),
    }
    shape, call = calls[case]
    s, ts = _pair(shape, 3)
    x.requires_grad_()
    tx.requires_grad_()
    s.requires_grad_()
    ts.requires_grad_()
    out, tout = call(tp, x, s), call(torch, tx, ts)
    _close(out, tout)
    cot = np.random.default_rng(9).standard_normal(tuple(out.shape))
    g = tp.autograd.grad(out, [x, s], tp.tensor(cot))
    tg = torch.autograd.grad(tout, [tx, ts], torch.tensor(cot))
    for a, b in zip(g, tg):
        _close(a, b)


def test_as_strided_scatter_of_a_transposed_input():
    x, tx = _pair((4, 3))
    s, ts = _pair((2, 2), 1)
    _close(tp.as_strided_scatter(x.t(), s, (2, 2), (1, 4), 1), torch.as_strided_scatter(tx.t(), ts, (2, 2), (1, 4), 1))


def test_strided_factories_layouts():
    assert tp.empty_strided((2, 3), (1, 2)).stride() == torch.empty_strided((2, 3), (1, 2)).stride()
    assert tp.empty_permuted((2, 3, 4), (1, 2, 0)).stride() == torch.empty_permuted((2, 3, 4), (1, 2, 0)).stride()
    x, tx = tp.arange(6.0), torch.arange(6.0)
    assert x.resize_(2, 2).tolist() == tx.resize_(2, 2).tolist()
