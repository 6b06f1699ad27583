"""Gradients against PyTorch where finite differences cannot judge: ties (amax, max, sort with equal keys;
not topk, whose choice among ties PyTorch leaves unspecified), products with zeros (first and second
derivatives), and duplicate indices (index_put with and without accumulate, index, index_select, gather,
scatter)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

TIES = [[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 0.0], [2.0, 2.0, 2.0, 2.0]]
ZEROS = [[2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 1.0, 2.0], [1.5, 2.0, -3.0, 4.0]]


def both(data):
    """The same float64 leaf in tensorplug and in torch."""
    a = np.asarray(data, dtype=np.float64)
    return (tp.tensor(a, dtype=tp.float64, requires_grad=True),
            torch.tensor(a, dtype=torch.float64, requires_grad=True))


def first_output(out):
    return out[0] if isinstance(out, tuple) else out


def upstream(shape, seed):
    return np.random.default_rng(seed).uniform(-2, 2, shape)


def assert_same_gradients(fn, data, *extra):
    """d(sum(fn(x, ...) * u))/d(every input) in both frameworks, for a random upstream gradient u."""
    ours = both(data), *(both(e) for e in extra)
    ins = [p[0] for p in ours]
    refs = [p[1] for p in ours]
    out, ref = first_output(fn(tp, *ins)), first_output(fn(torch, *refs))
    assert tuple(out.shape) == tuple(ref.shape)
    u = upstream(tuple(ref.shape), len(ref.shape))
    got = tp.autograd.grad([out], ins, [tp.tensor(u, dtype=tp.float64)], allow_unused=True)
    want = torch.autograd.grad([ref], refs, [torch.tensor(u)], allow_unused=True)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g._host(), w.numpy(), rtol=1e-12, atol=1e-12)


TIE_CASES = [
    ("amax dim", lambda m, x: x.amax(1)),
    ("amax dim 0 keepdim", lambda m, x: x.amax(0, keepdim=True)),
    ("amax all", lambda m, x: x.amax()),
    ("amax dims", lambda m, x: x.amax((0, 1))),
    ("amin dim", lambda m, x: x.amin(-1)),
    ("max full", lambda m, x: x.max()),
    ("min full", lambda m, x: m.min(x)),
    ("max dim", lambda m, x: x.max(1).values),
    ("min dim keepdim", lambda m, x: x.min(0, keepdim=True).values),
    ("sort", lambda m, x: m.sort(x, dim=1, stable=True).values),
    ("sort descending", lambda m, x: m.sort(x, dim=1, descending=True, stable=True).values),
    ("sort dim 0", lambda m, x: m.sort(x, dim=0, stable=True).values),
    ("sort default", lambda m, x: x.sort().values),
    ("logsumexp", lambda m, x: x.logsumexp(1)),
]


@pytest.mark.parametrize("fn", [c[1] for c in TIE_CASES], ids=[c[0] for c in TIE_CASES])
def test_ties(fn):
    assert_same_gradients(fn, TIES)


PROD_CASES = [
    ("dim 1", lambda m, x: x.prod(1)),
    ("dim 0 keepdim", lambda m, x: x.prod(0, keepdim=True)),
    ("all", lambda m, x: x.prod()),
]


@pytest.mark.parametrize("fn", [c[1] for c in PROD_CASES], ids=[c[0] for c in PROD_CASES])
def test_prod_with_zeros(fn):
    assert_same_gradients(fn, ZEROS)


@pytest.mark.parametrize("dim", [0, 1])
def test_prod_with_zeros_second_derivative(dim):
    (x, tx) = both(ZEROS)
    u = upstream((3, 4), 7)
    # the gradient of <grad prod, u>: a Hessian-vector product
    (g,) = tp.autograd.grad([x.prod(dim).sum()], [x], create_graph=True)
    (h,) = tp.autograd.grad([(g * tp.tensor(u, dtype=tp.float64)).sum()], [x])
    (tg,) = torch.autograd.grad([tx.prod(dim).sum()], [tx], create_graph=True)
    (th,) = torch.autograd.grad([(tg * torch.tensor(u)).sum()], [tx])
    np.testing.assert_allclose(h._host(), th.numpy(), rtol=1e-12)


def _index_put(accumulate, *index):
    def fn(m, x, v):
        return m.index_put(x, tuple(m.tensor(i) for i in index), v, accumulate)
    return fn


DUPLICATES = [
    ("index_put accumulate", _index_put(True, [1, 1, 0, 1]), (4, 4)),
    ("index_put accumulate broadcast", _index_put(True, [2, 2, 0]), (4,)),
    ("index_put accumulate two indices", _index_put(True, [0, 2, 0], [3, 1, 3]), (3,)),
    ("index_put accumulate 0-dim values", _index_put(True, [0, 0], [1, 1]), ()),
    ("index_put overwrite", _index_put(False, [1, 2, 0]), (3, 4)),
    ("index_put overwrite two indices", _index_put(False, [0, 2], [3, 1]), (2,)),
]


@pytest.mark.parametrize("fn,value_shape", [c[1:] for c in DUPLICATES], ids=[c[0] for c in DUPLICATES])
def test_index_put(fn, value_shape):
    assert_same_gradients(fn, ZEROS, upstream(value_shape, 3))


def test_index_put_overwrite_with_duplicates():
    """Which duplicate wins is unspecified, but both frameworks give every duplicate the position's
    gradient and zero the overwritten input."""
    assert_same_gradients(_index_put(False, [1, 1, 0]), ZEROS, upstream((3, 4), 3))


INDEX_CASES = [
    ("index duplicates", lambda m, x: x[m.tensor([2, 0, 2, 2])]),
    ("index two duplicates", lambda m, x: x[m.tensor([0, 0, 1]), m.tensor([3, 3, 3])]),
    ("index mask", lambda m, x: x[x > 1.5]),
    ("index_select duplicates", lambda m, x: x.index_select(1, m.tensor([1, 1, 3, 1]))),
    ("gather duplicates", lambda m, x: x.gather(1, m.tensor([[0, 0], [3, 3], [1, 0]]))),
    ("scatter_add duplicates", lambda m, x: m.zeros(2, 4, dtype=m.float64).scatter_add(
        0, m.tensor([[1, 1, 0, 1], [1, 0, 0, 1]]), x[:2])),
    ("cumsum", lambda m, x: x.cumsum(1)),
    ("cat", lambda m, x: m.cat([x, x[1:], x[:1]], 0)),
    ("masked_fill", lambda m, x: x.masked_fill(x > 1.5, -1.0)),
]


@pytest.mark.parametrize("fn", [c[1] for c in INDEX_CASES], ids=[c[0] for c in INDEX_CASES])
def test_indexing(fn):
    assert_same_gradients(fn, ZEROS)


def test_masked_fill_tensor_value():
    assert_same_gradients(lambda m, x, w: x.masked_fill(x > 1.5, w), ZEROS, 0.5)


def test_scatter_overwrites():
    # (PyTorch rejects the gradient of a src larger than the index; tensorplug pads it with zeros)
    assert_same_gradients(lambda m, x, s: x.scatter(1, m.tensor([[0, 3], [2, 2]]), s), ZEROS, [[1.0, 2.0],
                                                                                             [4.0, 5.0]])
