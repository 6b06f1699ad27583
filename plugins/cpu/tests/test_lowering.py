"""The CPU's lowering for tensorplug-compile computes each op's kernel's bits, into a buffer or not,
and declines what it does not cover."""

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.plugin_api import TensorSpec, lookup_op
from tensorplug_cpu import BACKEND, LOWERING

CPU = tp.device("cpu")
CASES = [
    ("tensorplug::add.Tensor", 2, (1,)), ("tensorplug::sub.Tensor", 2, (1,)), ("tensorplug::mul.Tensor", 2, ()),
    ("tensorplug::div.Tensor", 2, ()), ("tensorplug::maximum", 2, ()), ("tensorplug::minimum", 2, ()),
    ("tensorplug::neg", 1, ()), ("tensorplug::exp", 1, ()), ("tensorplug::log", 1, ()),
    ("tensorplug::sqrt", 1, ()), ("tensorplug::sin", 1, ()), ("tensorplug::cos", 1, ()),
    ("tensorplug::tanh", 1, ()), ("tensorplug::log1p", 1, ()), ("tensorplug::expm1", 1, ()),
    ("tensorplug::tanh_backward", 2, ()), ("tensorplug::threshold_backward", 2, (0.0,)),
]


def values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 3).astype(dtype.np)
    a.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return a


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name, n, extra", CASES, ids=[c[0].split("::")[1] for c in CASES])
def test_the_lowered_function_gives_the_kernels_bits(name, n, extra, dtype):
    shape = (5, 7)
    arrays = [values(shape, dtype, i) for i in range(n)]
    tensors = [tp.from_numpy(a.copy()) for a in arrays]
    want = lookup_op(name).kernel_for(BACKEND.ks | tp.plugin_api.key_bit("Dense"))(*tensors, *extra)
    spec = TensorSpec(shape, dtype, CPU)
    fn = LOWERING.lower(name, (spec,) * n + extra, spec)
    assert fn is not None
    token = LOWERING.enter()
    try:
        fresh = fn(*arrays)
        buf = LOWERING.empty(shape, dtype)
        into = fn(*arrays, out=buf)
    finally:
        LOWERING.exit(token)
    assert into is buf
    for got in (fresh, into):
        assert got.dtype == want.numpy().dtype and got.tobytes() == want.numpy().tobytes()


@pytest.mark.parametrize("args, out", [
    ((TensorSpec((3,), tp.float32, CPU), TensorSpec((3,), tp.float64, CPU), 1), TensorSpec((3,), tp.float64, CPU)),
    ((TensorSpec((3,), tp.float32, CPU), TensorSpec((3,), tp.float32, CPU), 2), TensorSpec((3,), tp.float32, CPU)),
    ((TensorSpec((3,), tp.float16, CPU), TensorSpec((3,), tp.float16, CPU), 1), TensorSpec((3,), tp.float16, CPU)),
    ((TensorSpec((), tp.float32, CPU), TensorSpec((), tp.float32, CPU), 1), TensorSpec((), tp.float32, CPU)),
], ids=["mixed dtypes", "alpha", "float16", "0-dim"])
def test_what_the_kernel_does_differently_is_declined(args, out):
    assert LOWERING.lower("tensorplug::add.Tensor", args, out) is None


def test_ops_without_a_rule_are_declined():
    spec = TensorSpec((3,), tp.float32, CPU)
    assert LOWERING.lower("tensorplug::matmul", (spec, spec), spec) is None
