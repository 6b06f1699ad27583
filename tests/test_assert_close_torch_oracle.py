"""tensorplug.testing.assert_close raises what torch.testing.assert_close raises, with the same message."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")

CASES = [
    lambda m: m.testing.assert_close(m.tensor([1., 2, 3]), m.tensor([1., 2.5, 3])),
    lambda m: m.testing.assert_close(m.tensor([1, 2, 3]), m.tensor([1, 4, 3])),
    lambda m: m.testing.assert_close(1.0, 1.5),
    lambda m: m.testing.assert_close(3, 4),
    lambda m: m.testing.assert_close(1 + 2j, 1 + 3j),
    lambda m: m.testing.assert_close([m.tensor([1.]), m.tensor(2.)], [m.tensor([1.]), m.tensor(3.)]),
    lambda m: m.testing.assert_close(m.ones(2), m.ones(2, dtype=m.float64)),
    lambda m: m.testing.assert_close(m.ones(2), m.ones(2, dtype=m.float64) * 1.1, check_dtype=False),
    lambda m: m.testing.assert_close(m.ones(2), m.ones(2), atol=1),
    lambda m: m.testing.assert_close(m.tensor(NAN), m.tensor(NAN)),
    lambda m: m.testing.assert_close(m.tensor([NAN, 1]), m.tensor([NAN, 1.]), equal_nan=True),
    lambda m: m.testing.assert_close({'a': 1}, {'b': 1}),
    lambda m: m.testing.assert_close({'a': [m.tensor(1.)]}, {'a': [m.tensor(0.)]}),
    lambda m: m.testing.assert_close(True, False),
    lambda m: m.testing.assert_close(m.tensor([True, False]), m.tensor([False, False])),
    lambda m: m.testing.assert_close(m.ones(2, 3), m.zeros(2, 3), msg=lambda s: "X" + s),
    lambda m: m.testing.assert_close(np.ones(2), np.zeros(2)),
    lambda m: m.testing.assert_close(m.ones(2, dtype=m.float16), m.ones(2, dtype=m.float16) * 1.01),
    lambda m: m.testing.assert_close(m.ones(2, dtype=m.bfloat16), m.ones(2, dtype=m.bfloat16) * 1.1),
    lambda m: m.testing.assert_close(m.tensor([1., INF]), m.tensor([1., INF])),
    lambda m: m.testing.assert_close(m.tensor([1., INF]), m.tensor([1., -INF])),
    lambda m: m.testing.assert_close(m.tensor([1., NAN, 3]), m.tensor([1., 2, 5])),
    lambda m: m.testing.assert_close(m.tensor([1, 2]), m.tensor([1., 2.5]), check_dtype=False),
    lambda m: m.testing.assert_close(m.tensor([[1., 2], [3, 4]]), m.tensor([[1., 2], [3, 4.1]]), rtol=0, atol=0.01),
    lambda m: m.testing.assert_close(m.ones(2), m.ones(3)),
    lambda m: m.testing.assert_close([1, 2], (1, 3)),
    lambda m: m.testing.assert_close(m.tensor([1e-6, 0.0]), m.tensor([0.0, 1e-6])),
    lambda m: m.testing.assert_close(m.tensor([250, 3], dtype=m.uint8), m.tensor([4, 3], dtype=m.uint8)),
    lambda m: m.testing.assert_close(m.tensor([-5, 3], dtype=m.int8), m.tensor([4, 3], dtype=m.int8)),
    lambda m: m.testing.assert_close(m.zeros(0), m.zeros(0)),
    lambda m: m.testing.assert_close(m.arange(12.).reshape(3, 4), m.arange(12.).reshape(3, 4) * 1.01),
    lambda m: m.testing.assert_close(None, None),
    lambda m: m.testing.assert_close(None, 0),
    lambda m: m.testing.assert_close(np.float64(1.0), 1.5),
]


def _outcome(fn, mod):
    try:
        fn(mod)
    except Exception as e:  # noqa: BLE001 - the outcome is compared, whatever it is
        msg = re.sub(r"torch\.Size\(\[(\d+)\]\)", r"(\1,)", str(e)).replace("torch.", "tensorplug.")
        return type(e).__name__, msg
    return None


@pytest.mark.parametrize("i", range(len(CASES)))
def test_same_outcome_as_torch(i):
    assert _outcome(CASES[i], tp) == _outcome(CASES[i], torch)
