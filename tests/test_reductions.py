"""Reductions (sum, prod, amax, amin, argmax, argmin, any, all, cumsum, max, min) against numpy."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp

ALL_DTYPES = [tp.bool, tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32,
              tp.float64]
HALF = (tp.float16, tp.bfloat16)
F32 = np.dtype(np.float32)

# (shape, dims) where dims is what the op gets: None (all), an int, or a tuple
SHAPE_DIMS = [
    ((), None), ((), 0), ((), -1),
    ((5,), None), ((5,), 0), ((5,), -1),
    ((3, 4), None), ((3, 4), 0), ((3, 4), 1), ((3, 4), -1), ((3, 4), (0, 1)), ((3, 4), (-1, 0)),
    ((2, 3, 4), None), ((2, 3, 4), 1), ((2, 3, 4), (0, 2)), ((2, 3, 4), (-1,)), ((2, 3, 4), (2, 0, 1)),
]


def sample(shape, dtype, seed=0, low=-3, high=4):
    """Values exactly representable in every dtype (small integers, quarters for floats)."""
    rng = np.random.default_rng(seed)
    if dtype is tp.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype is tp.uint8:
        low = 0
    vals = rng.integers(low, high, size=shape)
    if dtype.is_floating_point:
        vals = vals + rng.integers(0, 4, size=shape) / 4
    return np.asarray(vals).astype(dtype.np)


def layouts(a):
    """``(name, tensor)`` with the values of ``a`` in several memory layouts."""
    yield "contiguous", tp.from_numpy(a.copy())
    if a.ndim >= 2:
        yield "transposed", tp.from_numpy(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
    if a.ndim >= 1:
        wide = tp.from_numpy(np.repeat(a, 2, axis=-1))
        yield "stepped", tp.ops.tensorplug.slice.Tensor(wide, -1, 0, None, 2)


def assert_values(out, ref, dtype, what=""):
    assert out.dtype is dtype, what
    assert out.shape == ref.shape, what
    np.testing.assert_array_equal(np.asarray(out.numpy(), dtype=np.float64),
                                  np.asarray(ref, dtype=np.float64), err_msg=what)


def axes(a, dims):
    if dims is None or a.ndim == 0:
        return None
    return dims if isinstance(dims, tuple) else (dims,)


def acc_dtype(dtype):
    return tp.int64 if not dtype.is_floating_point else dtype


def np_acc(fn):
    """Reference sum/prod: integers in int64, half types through float32."""
    def ref(a, dims, keepdim, dtype):
        out = acc_dtype(dtype)
        work = F32 if out in HALF else out.np
        return fn(a.astype(work), axis=axes(a, dims), keepdims=keepdim).astype(out.np), out
    return ref


def np_extreme(fn):
    def ref(a, dims, keepdim, dtype):
        work = a.astype(F32) if dtype in HALF else a
        return fn(work, axis=axes(a, dims), keepdims=keepdim).astype(dtype.np), dtype
    return ref


def np_logical(fn):
    def ref(a, dims, keepdim, dtype):
        out = tp.uint8 if dtype is tp.uint8 else tp.bool
        return fn(a, axis=axes(a, dims), keepdims=keepdim).astype(out.np), out
    return ref


REDUCTIONS = {
    "sum": (lambda t, d, k: t.sum(d, k), np_acc(np.sum)),
    "amax": (lambda t, d, k: t.amax(() if d is None else d, k), np_extreme(np.amax)),
    "amin": (lambda t, d, k: tp.amin(t, () if d is None else d, keepdim=k), np_extreme(np.amin)),
    "any": (lambda t, d, k: t.any(d, keepdim=k), np_logical(np.any)),
    "all": (lambda t, d, k: tp.all(t, dim=d, keepdim=k), np_logical(np.all)),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_multi_dim_reductions_match_numpy(name, dtype):
    fn, ref = REDUCTIONS[name]
    for shape, dims in SHAPE_DIMS:
        a = sample(shape, dtype)
        for keepdim in (False, True):
            expected, out_dtype = ref(a, dims, keepdim, dtype)
            for layout, t in layouts(a):
                assert_values(fn(t, dims, keepdim), expected, out_dtype, f"{shape} {dims} {keepdim} {layout}")


ONE_DIM = {
    "prod": (lambda t, d, k: t.prod(d, keepdim=k), np_acc(np.prod)),
    "argmax": (lambda t, d, k: t.argmax(d, keepdim=k),
               lambda a, d, k, dt: (np.argmax(a, axis=d if a.ndim else None, keepdims=k), tp.int64)),
    "argmin": (lambda t, d, k: tp.argmin(t, dim=d, keepdim=k),
               lambda a, d, k, dt: (np.argmin(a, axis=d if a.ndim else None, keepdims=k), tp.int64)),
    "cumsum": (lambda t, d, k: t.cumsum(d if d is not None else 0),
               lambda a, d, k, dt: (np.cumsum(a.astype(F32 if dt in HALF else acc_dtype(dt).np),
                                              axis=d if d is not None else 0).reshape(a.shape)
                                    .astype(acc_dtype(dt).np), acc_dtype(dt))),
}


@pytest.mark.parametrize("name,dtype", [(n, d) for n in sorted(ONE_DIM) for d in ALL_DTYPES
                                        if not (n.startswith("arg") and d is tp.bool)], ids=str)
def test_single_dim_reductions_match_numpy(name, dtype):
    fn, ref = ONE_DIM[name]
    for shape, dims in SHAPE_DIMS:
        if isinstance(dims, tuple) or (dims is None and name == "cumsum" and shape):
            continue
        a = sample(shape, dtype, low=-1, high=3)
        for keepdim in (False, True) if dims is not None or name != "prod" else (False,):
            expected, out_dtype = ref(a, dims, keepdim, dtype)
            for layout, t in layouts(a):
                assert_values(fn(t, dims, keepdim), expected, out_dtype, f"{shape} {dims} {keepdim} {layout}")


@pytest.mark.parametrize("dtype", [tp.uint8, tp.int32, tp.float16, tp.bfloat16, tp.float64], ids=str)
def test_max_min_over_dim_return_values_and_indices(dtype):
    a = sample((3, 4, 5), dtype)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            for layout, t in layouts(a):
                for name, np_val, np_idx in (("max", np.amax, np.argmax), ("min", np.amin, np.argmin)):
                    res = getattr(t, name)(dim, keepdim=keepdim)
                    assert type(res).__name__ == name and res.values is res[0] and res.indices is res[1]
                    what = f"{name} {dim} {keepdim} {layout}"
                    assert_values(res.values, np_val(a, axis=dim, keepdims=keepdim), dtype, what)
                    assert_values(res.indices, np_idx(a, axis=dim, keepdims=keepdim), tp.int64, what)


def test_max_min_full_and_elementwise_forms():
    a = sample((3, 4), tp.float32)
    b = sample((3, 4), tp.float32, seed=1)
    ta, tb = tp.from_numpy(a), tp.from_numpy(b)
    assert_values(ta.max(), np.array(a.max()), tp.float32)
    assert_values(tp.min(ta), np.array(a.min()), tp.float32)
    assert_values(tp.max(ta, tb), np.maximum(a, b), tp.float32)
    assert_values(ta.min(tb), np.minimum(a, b), tp.float32)
    assert_values(tp.ops.tensorplug.max.other(ta, tb), np.maximum(a, b), tp.float32)


def test_max_dim_on_bool_and_zero_dim():
    t = tp.tensor([[False, True, True], [False, False, False]])
    res = t.max(1)
    assert res.values.tolist() == [True, False] and res.indices.tolist() == [1, 0]
    res = tp.tensor(2.5).min(0)
    assert res.values.shape == () and res.values.item() == 2.5 and res.indices.item() == 0


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16, tp.float32, tp.float64], ids=str)
def test_nan_propagates_through_extremes(dtype):
    nan = math.nan
    t = tp.tensor([[1.0, nan, 3.0, nan], [4.0, 0.5, 2.0, -1.0]], dtype=dtype)
    assert math.isnan(t.amax().item()) and math.isnan(t.amin().item())
    assert math.isnan(t.max().item()) and math.isnan(tp.min(t).item())
    assert t.amax(1).numpy().astype(np.float64).tolist()[1] == 4.0
    assert math.isnan(float(t.amax(1).numpy()[0]))
    res = t.max(1)
    assert math.isnan(float(res.values.numpy()[0])) and res.indices.tolist() == [1, 0]
    res = t.min(1)
    assert math.isnan(float(res.values.numpy()[0])) and res.indices.tolist() == [1, 3]
    assert t.argmax().item() == 1 and t.argmin().item() == 1
    assert t.argmax(1).tolist() == [1, 0] and t.argmin(1).tolist() == [1, 3]


def test_ties_pick_the_first_occurrence():
    t = tp.tensor([[1, 3, 3, 2], [0, 0, 5, 5]])
    assert t.argmax(1).tolist() == [1, 2]
    assert t.argmin(1).tolist() == [0, 0]
    assert t.argmax().item() == 6
    assert t.max(1).indices.tolist() == [1, 2]
    assert tp.tensor([2.0, -0.0, 0.0]).argmin().item() == 1


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_half_precision_accumulates_in_float32(dtype):
    # 4096 ones: an accumulator of the narrow type would get stuck at 2048 (float16) or 256 (bfloat16)
    t = tp.ones(4096, dtype=dtype)
    assert t.sum().item() == 4096.0 and t.sum().dtype is dtype
    assert t.cumsum(0).numpy().astype(np.float64)[-1] == 4096.0
    # the product is rounded once (3326 / 3328), where rounding every step would give 3324 / 3312
    assert tp.full((20,), 1.5, dtype=dtype).prod().item() == float(np.float32(1.5 ** 20).astype(dtype.np))


def test_dtype_argument_and_integer_accumulation():
    u8 = tp.tensor([200, 100], dtype=tp.uint8)
    assert u8.sum().item() == 300 and u8.sum().dtype is tp.int64
    assert u8.sum(dtype=tp.uint8).item() == 44  # wraps, as the requested dtype does
    assert tp.tensor([True, True, False]).sum().item() == 2
    assert tp.tensor([True, True]).prod().dtype is tp.int64
    assert tp.tensor([1.5, 2.5]).sum(dtype=tp.int32).item() == 3  # converted first, then summed
    assert tp.tensor([1, 2, 3]).cumsum(0, dtype=tp.float32).dtype is tp.float32
    assert tp.tensor([[1.0, 2.0], [3.0, 4.0]]).prod(1, dtype=tp.float64).tolist() == [2.0, 12.0]
    assert tp.tensor([0, 2], dtype=tp.uint8).any().dtype is tp.uint8
    assert tp.tensor([0.0, 2.0]).all().dtype is tp.bool


def test_empty_inputs_reduce_to_identities():
    e = tp.zeros(0, 3)
    assert e.sum().item() == 0 and e.sum(0).tolist() == [0.0, 0.0, 0.0]
    assert e.prod().item() == 1 and e.prod(0).tolist() == [1.0, 1.0, 1.0]
    assert e.any().item() is False and e.all().item() is True
    assert e.amax(1).shape == (0,) and e.argmax(1).shape == (0,) and e.max(1).values.shape == (0,)
    assert e.cumsum(0).shape == (0, 3)


E = tp.zeros(0, 3)
X = tp.ones(2, 3)
ERRORS = [
    (lambda: E.amax(), RuntimeError, r"amax\(\): Expected reduction dim to be specified for input.numel\(\) == 0. "
                                     r"Specify the reduction dim with the 'dim' argument."),
    (lambda: E.amin(0), IndexError, r"amin\(\): Expected reduction dim 0 to have non-zero size."),
    (lambda: E.amax((1, 0)), IndexError, r"amax\(\): Expected reduction dim 0 to have non-zero size."),
    (lambda: E.max(), RuntimeError, r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0."),
    (lambda: E.min(0), IndexError, r"min\(\): Expected reduction dim 0 to have non-zero size."),
    (lambda: E.argmax(), IndexError, r"argmax\(\): Expected reduction dim to be specified for input.numel\(\) "
                                     r"== 0.$"),
    (lambda: E.argmin(0), IndexError, r"argmin\(\): Expected reduction dim 0 to have non-zero size."),
    (lambda: tp.tensor([True]).argmax(), RuntimeError, r"argmax\(\): does not support bool input"),
    (lambda: X.sum(2), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    (lambda: X.sum((0, -2)), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    (lambda: X.amax((1, 1)), RuntimeError, "dim 1 appears multiple times in the list of dims"),
    (lambda: X.cumsum(-3), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\]"),
    (lambda: X.argmax(5), IndexError, r"Dimension out of range"),
    (lambda: X.prod(2), IndexError, r"Dimension out of range"),
    (lambda: X.any(3), IndexError, r"Dimension out of range"),
    (lambda: tp.tensor(1.0).sum(1), IndexError, r"range of \[-1, 0\], but got 1"),
    (lambda: X.sum(1.5), TypeError, r"argument 'dim'"),
    (lambda: X.prod(keepdim=True), TypeError, "keepdim needs dim"),
    (lambda: tp.max(X, keepdim=True), TypeError, "keepdim needs dim"),
]


@pytest.mark.parametrize("call,exc,match", ERRORS)
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 3), max_size=3).map(tuple), data=st.data(), keepdim=st.booleans())
def test_sum_and_amax_agree_with_numpy_on_any_shape(shape, data, keepdim):
    ndim = len(shape)
    dims = tuple(data.draw(st.sets(st.integers(-max(ndim, 1), max(ndim, 1) - 1)
                                   .map(lambda d: d % max(ndim, 1)), max_size=ndim))) or None
    a = sample(shape, tp.float32, seed=len(shape))
    t = tp.from_numpy(a)
    axis = dims if ndim else None
    assert_values(t.sum(dims, keepdim), np.sum(a, axis=axis, keepdims=keepdim), tp.float32)
    reduced = range(ndim) if dims is None else dims
    if a.size == 0 and dims is None:
        with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
            t.amax((), keepdim)
    elif any(shape[d] == 0 for d in reduced):
        with pytest.raises(IndexError, match="to have non-zero size"):
            t.amax(dims or (), keepdim)
    else:
        assert_values(t.amax(dims or (), keepdim), np.amax(a, axis=axis, keepdims=keepdim), tp.float32)


def test_public_functions_and_methods_are_documented():
    for name in ("sum", "prod", "cumsum", "amax", "amin", "argmax", "argmin", "any", "all", "max", "min"):
        fn = getattr(tp, name)
        assert fn.__doc__ and getattr(tp.Tensor, name).__doc__, name


def test_bfloat16_values_pass_through_unchanged():
    a = np.array([[1.5, -2.25], [3.0, 0.125]], dtype=ml_dtypes.bfloat16)
    t = tp.from_numpy(a)
    assert t.amax().dtype is tp.bfloat16 and float(t.amax().item()) == 3.0
    assert t.cumsum(1).numpy().astype(np.float64).tolist() == [[1.5, -0.75], [3.0, 3.125]]
