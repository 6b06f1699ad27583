"""Every native openreg kernel against numpy, in float32, float64 and int64, on dense, transposed,
step-sliced, broadcast (stride 0) and reversed (negative stride) inputs; and the conformance suite."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp
from tensorplug.plugin_api import functionality_key, lookup_op, wrap_view as make_view
from tensorplug.testing import run_conformance
from tensorplug_openreg import _C, kernels

pytestmark = pytest.mark.filterwarnings("ignore:.*falling back to the CPU:UserWarning")
DTYPES = [tp.float32, tp.float64, tp.int64]
LAYOUTS = ["dense", "transposed", "step", "broadcast", "reversed"]
SHAPE = (3, 4)


def device_tensor(values, dtype, layout):
    """A (3, 4) openreg tensor holding ``values`` in the given memory layout."""
    v = np.asarray(values, dtype=dtype.np)
    if layout == "dense":
        return tp.tensor(v).to("openreg")
    if layout == "transposed":
        return tp.tensor(np.ascontiguousarray(v.T)).to("openreg").t()
    if layout == "step":  # every other column of a wider tensor
        return tp.tensor(np.repeat(v, 2, axis=1)).to("openreg")[:, ::2]
    if layout == "broadcast":  # one row repeated with stride 0
        return tp.tensor(v[:1]).to("openreg").expand(*v.shape)
    base = tp.tensor(np.ascontiguousarray(v[:, ::-1])).to("openreg")  # reversed: built on the raw Array
    a = base._data
    rev = _C.Array(a.root, v.shape, (a.strides[0], -1), a.offset + v.shape[1] - 1, a.dtype, a.itemsize)
    return make_view(base, rev)


def reference(values, layout):
    """What ``device_tensor`` holds, as numpy sees it."""
    return np.broadcast_to(values[:1], values.shape) if layout == "broadcast" else values


def sample(dtype, seed, positive=False, nonzero=False):
    rng = np.random.default_rng(seed)
    if dtype.is_floating_point:
        v = rng.normal(size=SHAPE) * 3
        v[0, 0] = 0.0
        if positive:
            v = np.abs(v) + 0.5
    else:
        v = rng.integers(-9, 10, size=SHAPE)
        if positive:
            v = np.abs(v) + 1
    if nonzero:
        v[v == 0] = 1
    return v.astype(dtype.np)


def _tdiv(a, b):
    if a.dtype.kind == "f":
        return np.trunc(a / b)
    return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(a.dtype)


# (name, tensorplug call, numpy reference, argument kinds); kinds: "x" any, "p" positive, "nz" nonzero
BINARY = [
    ("add", lambda a, b: a + b, np.add),
    ("add_alpha", lambda a, b: tp.add(a, b, alpha=3), lambda a, b: a + 3 * b),
    ("sub", lambda a, b: a - b, np.subtract),
    ("sub_alpha", lambda a, b: tp.sub(a, b, alpha=2), lambda a, b: a - 2 * b),
    ("mul", lambda a, b: a * b, np.multiply),
    ("maximum", tp.maximum, np.maximum),
    ("eq", lambda a, b: a == b, np.equal), ("ne", lambda a, b: a != b, np.not_equal),
    ("lt", lambda a, b: a < b, np.less), ("le", lambda a, b: a <= b, np.less_equal),
    ("gt", lambda a, b: a > b, np.greater), ("ge", lambda a, b: a >= b, np.greater_equal),
]
DIVISION = [
    ("div", lambda a, b: a / b, lambda a, b: a / b),
    ("div_floor", lambda a, b: tp.div(a, b, rounding_mode="floor"), np.floor_divide),
    ("div_trunc", lambda a, b: tp.div(a, b, rounding_mode="trunc"), _tdiv),
]
UNARY = [
    ("neg", lambda a: -a, np.negative, False),
    ("exp", tp.exp, np.exp, False),
    ("log", tp.log, np.log, True),
    ("relu", tp.relu, lambda a: np.maximum(a, 0), False),
    ("sum_all", lambda a: a.sum(), lambda a: a.sum(), False),
    ("sum_0", lambda a: a.sum(0), lambda a: a.sum(0), False),
    ("sum_1_keepdim", lambda a: a.sum(1, keepdim=True), lambda a: a.sum(1, keepdims=True), False),
    ("sum_01", lambda a: a.sum((0, 1)), lambda a: a.sum((0, 1)), False),
    ("amax_0", lambda a: a.amax(0), lambda a: a.max(0), False),
    ("amax_1_keepdim", lambda a: a.amax(-1, keepdim=True), lambda a: a.max(-1, keepdims=True), False),
    ("clone", lambda a: a.clone(), lambda a: a.copy(), False),
    ("index_select_1", lambda a: a.index_select(1, tp.tensor([3, 0, 3], device="openreg")),
     lambda a: a[:, [3, 0, 3]], False),
    ("index_select_0", lambda a: a.index_select(0, tp.tensor([2, 1], device="openreg")),
     lambda a: a[[2, 1]], False),
    ("gather_1", lambda a: a.gather(1, tp.tensor([[0, 3], [1, 1], [2, 0]], device="openreg")),
     lambda a: np.take_along_axis(a, np.array([[0, 3], [1, 1], [2, 0]]), 1), False),
    ("matmul", lambda a: a @ _dev(_W, a), lambda a: a @ _W, False),
    ("matmul_right", lambda a: _dev(_W[:3].T, a) @ a, lambda a: _W[:3].T @ a, False),
    ("matmul_vector", lambda a: a @ _dev(_W[:, 0], a), lambda a: a @ _W[:, 0], False),
    ("vector_matmul", lambda a: _dev(_W[:3, 0], a) @ a, lambda a: _W[:3, 0] @ a, False),
    ("bmm_broadcast", lambda a: _dev(_B, a) @ a, lambda a: _B @ a, False),
]


_W = np.arange(8).reshape(4, 2) - 3
_B = np.stack([_W[:3, :].T, -_W[1:, :].T])  # (2, 2, 3): a batch that broadcasts against a (3, 4) matrix


def _dev(values, like):
    return tp.tensor(values, dtype=like.dtype, device="openreg")


def _check(out, expected, dtype):
    expected = np.asarray(expected)
    assert out.device.type == "openreg"
    got = np.asarray(out.tolist())
    assert got.shape == expected.shape
    if expected.dtype.kind == "f" or dtype.is_floating_point:
        tol = 1e-5 if dtype is tp.float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, expected)


def _native_only():
    """Fail if a call falls back to the CPU: these are the kernels openreg runs in C++."""
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.filterwarnings("error", message=".*falling back to the CPU")
    return ctx


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name, fn, ref", BINARY + DIVISION, ids=[c[0] for c in BINARY + DIVISION])
def test_binary_kernels_match_numpy(name, fn, ref, dtype, layout):
    a = sample(dtype, 1, nonzero=name.startswith("div"))
    b = sample(dtype, 2, nonzero=name.startswith("div"))
    ctx = _native_only()
    try:
        out = fn(device_tensor(a, dtype, layout), device_tensor(b, dtype, "dense"))
        out_rev = fn(device_tensor(b, dtype, "dense"), device_tensor(a, dtype, layout))
    finally:
        ctx.__exit__(None, None, None)
    ra = reference(a, layout)
    with np.errstate(all="ignore"):
        if name == "div" and not dtype.is_floating_point:
            ra, b = ra.astype(np.float32), b.astype(np.float32)
        _check(out, ref(ra, b), dtype)
        _check(out_rev, ref(b, ra), dtype)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name, fn, ref, positive", UNARY, ids=[c[0] for c in UNARY])
def test_unary_reduction_matmul_and_indexing_kernels_match_numpy(name, fn, ref, positive, dtype, layout):
    a = sample(dtype, 3, positive=positive)
    ctx = _native_only()
    try:
        out = fn(device_tensor(a, dtype, layout))
    finally:
        ctx.__exit__(None, None, None)
    ra = reference(a, layout)
    if name in ("exp", "log") and not dtype.is_floating_point:
        ra = ra.astype(np.float32)  # integer inputs give the default float dtype
    _check(out, ref(ra), dtype if dtype.is_floating_point or name not in ("exp", "log") else tp.float32)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_where_broadcasts_and_promotes(dtype, layout):
    a, b = sample(dtype, 4), sample(tp.int64, 5)
    cond = sample(tp.float64, 6) > 0
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*falling back to the CPU")
        out = tp.where(tp.tensor(cond).to("openreg"), device_tensor(a, dtype, layout),
                       tp.tensor(b[0]).to("openreg"))
    assert out.dtype is dtype
    _check(out, np.where(cond, reference(a, layout), b[0]).astype(dtype.np), dtype)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("src_dtype", DTYPES + [tp.bool, tp.int32], ids=str)
@pytest.mark.parametrize("dst_dtype", DTYPES + [tp.bool, tp.float16], ids=str)
def test_copy_and_cast_into_a_strided_destination(src_dtype, dst_dtype, layout):
    a = sample(src_dtype, 7) if src_dtype is not tp.bool else sample(tp.int64, 7) > 0
    dst = device_tensor(np.zeros(SHAPE), dst_dtype, "transposed")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dst.copy_(device_tensor(a, src_dtype, layout))
    expected = reference(a, layout).astype(dst_dtype.np)
    np.testing.assert_array_equal(np.asarray(dst.tolist(), dtype=dst_dtype.np), expected)


@pytest.mark.parametrize("dtype", DTYPES + [tp.bool, tp.bfloat16, tp.int8], ids=str)
@pytest.mark.parametrize("value", [0, 3, -2.5, True])
def test_fill_through_a_view(dtype, value):
    if dtype is tp.bool or (not dtype.is_floating_point and isinstance(value, float)):
        value = bool(value) if dtype is tp.bool else int(value)
    x = tp.zeros(4, 3, dtype=dtype, device="openreg")
    x.t()[1].fill_(value)
    expected = np.zeros((4, 3), dtype.np)
    expected[:, 1] = value
    assert x.tolist() == expected.tolist()


def test_bfloat16_results_of_the_cpu_fallback_come_back():
    """A bfloat16 result computed on the host (no C++ loop) uploads: its numpy dtype is found by value."""
    x = tp.ones(3, dtype=tp.bfloat16, device="openreg")
    assert x.add_(1).tolist() == [2.0, 2.0, 2.0]
    assert (x * 2).dtype is tp.bfloat16


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64], ids=str)
def test_nan_and_signed_zero_follow_the_cpu(dtype):
    vals = [float("nan"), 1.0, -0.0, 2.0]
    other = [0.0, float("nan"), 0.0, -1.0]
    x, y = tp.tensor(vals, dtype=dtype), tp.tensor(other, dtype=dtype)
    for fn in (tp.maximum, lambda a, b: tp.amax(tp.stack([a, b]), 0), lambda a, b: tp.relu(a),
               lambda a, b: a.amax(), lambda a, b: tp.div(a, b, rounding_mode="floor")):
        cpu = fn(x, y).tolist()
        dev = fn(x.to("openreg"), y.to("openreg")).cpu().tolist()
        np.testing.assert_array_equal(np.asarray(dev), np.asarray(cpu))
        assert np.array_equal(np.signbit(dev), np.signbit(cpu))


def test_integer_arithmetic_wraps_around():
    big = tp.tensor([2 ** 62, -2 ** 63], device="openreg")
    assert (big * 4).tolist() == (tp.tensor([2 ** 62, -2 ** 63]) * 4).tolist()
    assert (-big).tolist() == [-2 ** 62, -2 ** 63]
    assert tp.div(big, tp.tensor([-1, -1], device="openreg"), rounding_mode="trunc").tolist() == [-2 ** 62, -2 ** 63]


@pytest.mark.parametrize("call, exc, message", [
    (lambda x: x.index_select(1, tp.tensor([0, 5], device=x.device)), RuntimeError,
     r"INDICES element is out of DATA bounds, id=5 axis_dim=4"),
    (lambda x: x.index_select(0, tp.tensor([3], device=x.device)), IndexError, r"index out of range in self"),
    (lambda x: x.gather(1, tp.tensor([[0], [4], [0]], device=x.device)), RuntimeError,
     r"index 4 is out of bounds for dimension 1 with size 4"),
])
def test_index_errors_match_the_cpu(call, exc, message):
    x = tp.zeros(3, 4)
    with pytest.raises(exc, match=message):
        call(x)
    with pytest.raises(exc, match=message):
        call(x.to("openreg"))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 11), st.integers(1, 9), st.integers(1, 21), st.sampled_from([(), (3,), (2, 1)]),
       st.sampled_from(DTYPES), st.booleans())
def test_matmul_matches_numpy_for_any_row_count(m, k, n, batch, dtype, transposed_b):
    # rows of out go four at a time, then one by one: every M mod 4, batched and with a transposed b
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a = rng.integers(-5, 6, size=batch + (m, k)).astype(dtype.np)
    b = rng.integers(-5, 6, size=(n, k) if transposed_b else (k, n)).astype(dtype.np)
    bd = tp.tensor(b, device="openreg")
    got = tp.tensor(a, device="openreg") @ (bd.t() if transposed_b else bd)
    expected = a @ (b.T if transposed_b else b)
    assert got.device.type == "openreg" and got.dtype is dtype
    np.testing.assert_array_equal(np.asarray(got.tolist()), expected)  # small integers: exact in every dtype


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_broadcast_add_and_sum_over_random_shapes(shape, data):
    other = tuple(data.draw(st.sampled_from([s, 1])) for s in shape[data.draw(st.integers(0, len(shape) - 1)):])
    rng = np.random.default_rng(len(shape))
    a, b = rng.normal(size=shape), rng.normal(size=other)
    dims = tuple(sorted(set(data.draw(st.lists(st.integers(0, len(shape) - 1), max_size=3)))))
    out = (tp.tensor(a, device="openreg") + tp.tensor(b, device="openreg")).sum(dims)
    expected = (a + b).sum(dims if dims else None)
    np.testing.assert_allclose(np.asarray(out.tolist()), expected, rtol=1e-12, atol=1e-12)


# -- conformance -----------------------------------------------------------------------------------
NATIVE = {"add", "sub", "mul", "div", "neg", "exp", "log", "maximum", "relu", "eq", "lt", "where", "sum", "amax",
          "matmul", "index_select", "gather", "fill_", "copy_", "uniform_", "normal_", "t", "clone"}
FALLBACK = {"sqrt", "sort", "cumsum", "scatter_add", "argmax", "cat"}


def test_conformance_native_ops_pass_natively_and_the_rest_by_fallback():
    report = run_conformance("openreg", ops=",".join(sorted(NATIVE | FALLBACK)), dtypes=DTYPES)
    by_status = {}
    for case, outcome in report.results:
        by_status.setdefault(outcome.status, set()).add(case.opinfo.name)
    assert report.ok and "failed" not in by_status
    assert by_status["passed"] == NATIVE and by_status["fallback"] == FALLBACK


@pytest.mark.filterwarnings("ignore:.*falling back to the CPU:UserWarning")
def test_conformance_reports_dtypes_without_a_cpp_loop_as_fallback():
    # add has a C++ loop for float32/float64/int64 only: float16 and int32 calls go to the CPU
    # through op.call_fallback, and the report must say so dtype by dtype
    report = run_conformance("openreg", ops="add", dtypes=[tp.float32, tp.int64, tp.float16, tp.int32])
    status = {}
    for case, outcome in report.results:
        status.setdefault(case.dtype, set()).add(outcome.status)
    assert report.ok
    assert status[tp.float32] == status[tp.int64] == {"passed"}
    assert status[tp.float16] == status[tp.int32] == {"fallback"}


def test_call_fallback_needs_a_registered_fallback():
    with pytest.raises(RuntimeError, match="no boxed fallback is registered for backend key 'CPU'"):
        lookup_op("tensorplug::add.Tensor").call_fallback("CPU", tp.ones(1), tp.ones(1))


def test_native_kernels_are_registered_on_the_privateuse1_key():
    for name in kernels.KERNELS:
        assert lookup_op(f"tensorplug::{name}").lookup(functionality_key("Dense"), "PrivateUse1")[1] == "kernel"


def test_conformance_command_line():
    proc = subprocess.run([sys.executable, "-m", "tensorplug", "conformance", "openreg", "--ops", "add,exp,cumsum",
                           "--dtypes", "float32", "int64", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    ops = {o["op"]: o for o in data["ops"]}
    assert data["summary"]["failed"] == 0 and data["summary"]["passed"] > 0
    assert ops["cumsum"]["fallback_ops"] == ["cumsum"] and ops["cumsum"]["passed"] == []
    assert ops["add"]["fallback_ops"] == [] and ops["exp"]["fallback_ops"] == []
