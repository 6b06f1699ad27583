"""Sums over leading or trailing dims go through a product with ones (reductions._sum_by_gemv)."""

import numpy as np
import pytest

import tensorplug as tp
from tensorplug_cpu import reductions as R

DIMS = [(0,), (2,), (-1,), (1, 2), (0, 1), (1,), (0, 2)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dims", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_matches_numpy(dtype, dims, keepdim):
    a = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(dtype)
    out = tp.from_numpy(a).sum(dims, keepdim=keepdim)
    ref = a.sum(dims, keepdims=keepdim)
    assert out.shape == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6 if dtype is np.float32 else 1e-13)


def test_the_product_path_is_taken_for_leading_and_trailing_dims_only():
    a = np.ones((3, 4, 5), np.float32)
    assert R._sum_by_gemv(a, (0,), False).shape == (4, 5)
    assert R._sum_by_gemv(a, (1, 2), True).shape == (3, 1, 1)
    assert R._sum_by_gemv(a, (1,), False) is None               # a middle dim
    assert R._sum_by_gemv(a, (0, 2), False) is None             # not one block
    assert R._sum_by_gemv(a.transpose(1, 0, 2), (0,), False) is None   # not C-contiguous
    assert R._sum_by_gemv(np.ones((2, 5000), np.float32), (1,), False) is None  # long rows: pairwise
    assert R._sum_by_gemv(np.ones((3, 4), np.int64), (0,), False) is None


def test_nan_and_inf_propagate():
    a = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, -np.inf], [np.inf, 1.0, 1.0]], np.float32)
    t = tp.from_numpy(a)
    np.testing.assert_array_equal(t.sum(1).numpy(), a.sum(1))
    np.testing.assert_array_equal(t.sum(0).numpy(), a.sum(0))
