"""nll_loss's common case (a mean over 2-D log-probabilities, no weights, no target ignored) takes a
short path; it gives the general path's bits, forward and backward."""

import numpy as np
import pytest

import tensorplug as tp
from tensorplug_cpu import reductions as R


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, c", [(1, 1), (7, 3), (32, 10), (257, 40)])
def test_the_short_path_gives_the_general_paths_bits(n, c, dtype):
    rng = np.random.default_rng(n * c)
    x = tp.from_numpy((rng.standard_normal((n, c)) * 5).astype(dtype))
    # no target is 0, so ignore_index=0 forces the general path without ignoring anything
    t = tp.from_numpy(rng.integers(1 if c > 1 else 0, c, n))
    ignore = 0 if c > 1 else 5
    g = tp.from_numpy(np.array(rng.standard_normal(), dtype))
    for fast, general in ((R.nll_loss(x, t, None, 1, -100), R.nll_loss(x, t, None, 1, ignore)),
                          (R.nll_loss_backward(g, x, t, None, 1, -100), R.nll_loss_backward(g, x, t, None, 1, ignore))):
        assert fast.numpy().tobytes() == general.numpy().tobytes()


def test_out_of_range_targets_still_raise():
    x = tp.zeros(3, 4)
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        R.nll_loss(x, tp.tensor([0, 4, 1]), None, 1, -100)
