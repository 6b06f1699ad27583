"""``index_put_(..., accumulate=True)`` with one integer index over rows (embedding's backward) sums
repeated rows by sorting; it gives ``numpy.add.at``'s sums, in every case the short path takes and in
those it leaves to ``add.at``."""

import numpy as np
import pytest

import tensorplug as tp
from tensorplug_cpu import indexing as I


def _reference(a, idx, values):
    out = a.copy()
    np.add.at(out, (idx,), values)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8])
@pytest.mark.parametrize("shape, index_shape", [((65, 64), (16, 64)), ((5, 8), (40,)), ((3, 4, 4), (7,)),
                                                ((4, 16), ()), ((6, 3), (20,)), ((4, 16), (0,))])
def test_rows_sum_like_add_at(dtype, shape, index_shape):
    rng = np.random.default_rng(len(shape) * 10 + len(index_shape))
    a = (rng.standard_normal(shape) * 4).astype(dtype)
    idx = rng.integers(-shape[0], shape[0], index_shape)  # negative indices too: -1 and n-1 are one row
    values = (rng.standard_normal(index_shape + shape[1:]) * 4).astype(dtype)
    t = tp.from_numpy(a.copy())
    I.index_put_(t, [tp.from_numpy(idx)], tp.from_numpy(values), True)
    expected = _reference(a, idx, values)
    if np.issubdtype(dtype, np.floating):
        np.testing.assert_allclose(t.numpy(), expected, rtol=1e-6, atol=1e-5)
    else:
        assert np.array_equal(t.numpy(), expected)  # integers wrap alike (int8 included)


def test_the_short_path_is_taken_for_embedding_rows():
    a = np.zeros((10, 16), np.float32)
    idx = np.array([3, -7, 9, 3])
    assert I._add_rows(a, idx, np.ones((4, 16), np.float32))
    assert a[3].tolist() == [3.0] * 16 and a[9].tolist() == [1.0] * 16 and a.sum() == 64
    # short rows, broadcast values and empty indices go to add.at
    assert not I._add_rows(np.zeros((10, 4), np.float32), idx, np.ones((4, 4), np.float32))
    assert not I._add_rows(a, idx, np.ones(16, np.float32))
    assert not I._add_rows(a, np.array([], np.int64), np.ones((0, 16), np.float32))


def test_embedding_gradient_sums_repeated_tokens():
    w = tp.zeros(6, 8, requires_grad=True)
    tokens = tp.tensor([[1, 2, 1], [5, 1, 2]])
    tp.nn.functional.embedding(tokens, w).sum().backward()
    counts = np.bincount(tokens.numpy().ravel(), minlength=6).astype(np.float32)
    assert np.array_equal(w.grad.numpy(), np.repeat(counts[:, None], 8, 1))
