"""Tensor factories: dtype inference, memory sharing with numpy, shapes, values against numpy, errors."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp

INFERENCE = [
    (1, tp.int64), (2.5, tp.float32), (True, tp.bool), ([1, 2], tp.int64), ([1.0, 2], tp.float32),
    ([True, False], tp.bool), ([True, 1], tp.int64), ([[1, 2], [3, 4]], tp.int64), ([[1.5], [2]], tp.float32),
    ((1, 2.5), tp.float32), ([[1, 2], (3, 4)], tp.int64), ([], tp.float32), ([[]], tp.float32),
    (np.array([1, 2], dtype=np.int32), tp.int32), (np.array([1.0, 2.0]), tp.float64),
    (np.array([1, 2], dtype=np.uint8), tp.uint8), (np.array([1.5], dtype=np.float16), tp.float16),
    (np.array([1.5], dtype=ml_dtypes.bfloat16), tp.bfloat16), (np.array([True]), tp.bool),
    (np.float64(1.5), tp.float64), (np.float32(1.5), tp.float32), (np.int16(3), tp.int16),
    ([np.float64(1.5), 2.0], tp.float64), ([np.float32(1.5)], tp.float32), ([np.int32(1)], tp.int32),
    ([1, np.int32(2)], tp.int64), ([tp.tensor(1.), tp.tensor(2.)], tp.float32),
    ([1.5, 2 ** 63], tp.float32), ([[2 ** 64], [np.float64(1)]], tp.float64),
]


@pytest.mark.parametrize("data,dtype", INFERENCE, ids=[repr(d[0])[:40] for d in INFERENCE])
def test_tensor_infers_dtype_and_copies_values(data, dtype):
    t = tp.tensor(data)
    assert t.dtype is dtype
    if isinstance(data, list) and data and isinstance(data[0], tp.Tensor):
        expected = np.array([x.item() for x in data])
    else:
        expected = np.array(data)
    assert t.shape == expected.shape
    np.testing.assert_array_equal(t.numpy().astype(np.float64), expected.astype(np.float64))
    if isinstance(data, np.ndarray):
        assert not np.shares_memory(t.numpy(), data)


def test_default_dtype_drives_float_inference():
    old = tp.get_default_dtype()
    try:
        tp.set_default_dtype(tp.float64)
        assert tp.tensor([1.5]).dtype is tp.float64 and tp.zeros(2).dtype is tp.float64
        assert tp.arange(0., 2.).dtype is tp.float64 and tp.tensor([1, 2]).dtype is tp.int64
        assert tp.tensor(np.array([1.5], dtype=np.float32)).dtype is tp.float32
    finally:
        tp.set_default_dtype(old)


def test_tensor_dtype_device_requires_grad_arguments():
    t = tp.tensor([1.7, -1.7], dtype=tp.int64)
    assert t.tolist() == [1, -1]
    assert tp.tensor([-1], dtype=tp.uint8).tolist() == [255]
    assert tp.tensor([[1, 2], [3, 4]], dtype=tp.float16).dtype is tp.float16
    assert tp.tensor([1.], device="cpu").device == tp.device("cpu")
    assert tp.tensor([1.], device=tp.device("cpu", 0)).device == tp.device("cpu")
    r = tp.tensor([1., 2.], requires_grad=True)
    assert r.requires_grad and r.is_leaf
    src = tp.tensor([1., 2.])
    c = tp.tensor(src)
    c[0] = 5.
    assert src.tolist() == [1., 2.] and tp.tensor(src, dtype=tp.int32).dtype is tp.int32


def test_as_tensor_shares_memory_when_it_can():
    a = np.arange(6.).reshape(2, 3)
    t = tp.as_tensor(a)
    assert t.dtype is tp.float64 and np.shares_memory(t.numpy(), a)
    t[0, 0] = 100.
    assert a[0, 0] == 100.
    c = tp.as_tensor(a, dtype=tp.float32)
    assert c.dtype is tp.float32 and not np.shares_memory(c.numpy(), a)
    assert tp.as_tensor(t) is t and tp.as_tensor(t, dtype=tp.float64) is t
    assert tp.as_tensor(t, dtype=tp.float32).dtype is tp.float32
    assert tp.as_tensor([1, 2]).dtype is tp.int64
    r = np.arange(5)[::-1]
    np.testing.assert_array_equal(tp.as_tensor(r).numpy(), r)  # negative strides: copied


def test_from_numpy_is_zero_copy_both_ways():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    t = tp.from_numpy(a)
    assert t.dtype is tp.int32 and t.shape == (3, 4) and t.stride() == (4, 1)
    t[1, 2] = -7
    assert a[1, 2] == -7
    a[0, 0] = 99
    assert t[0, 0].item() == 99
    s = tp.from_numpy(a[:, ::2])
    assert s.stride() == (4, 2) and not s.is_contiguous()
    s.t()[1].fill_(0)
    np.testing.assert_array_equal(a[:, 2], [0, 0, 0])
    z = tp.from_numpy(np.array(3.5))
    assert z.shape == () and z.item() == 3.5


def _err(exc, msg):
    return exc, "^" + re.escape(msg) + "$"


ERRORS = [
    (lambda: tp.tensor([[1, 2], [3]]), _err(ValueError, "expected sequence of length 2 at dim 1 (got 1)")),
    (lambda: tp.tensor([[[1], [2]], [[3], [4, 5]]]), _err(
        ValueError, "expected sequence of length 1 at dim 2 (got 2)")),
    (lambda: tp.tensor([[1, 2], 3]), _err(TypeError, "not a sequence")),
    (lambda: tp.tensor([[1, 2], [3, [4]]]), _err(TypeError, "'list' object cannot be interpreted as an integer")),
    (lambda: tp.tensor("a"), _err(TypeError, "new(): invalid data type 'str'")),
    (lambda: tp.tensor([1, "a"]), _err(TypeError, "new(): invalid data type 'str'")),
    (lambda: tp.tensor([1, None]), _err(RuntimeError, "Could not infer dtype of NoneType")),
    (lambda: tp.tensor({1: 2}), _err(RuntimeError, "Could not infer dtype of dict")),
    (lambda: tp.tensor([2 ** 63]), _err(ValueError, "Overflow when unpacking long long")),
    (lambda: tp.tensor([-2 ** 63 - 1]), _err(ValueError, "Overflow when unpacking long long")),
    (lambda: tp.tensor([1, 2 ** 63]), _err(ValueError, "Overflow when unpacking long long")),
    (lambda: tp.tensor([[1, 2], (-2 ** 63 - 1, True)]), _err(ValueError, "Overflow when unpacking long long")),
    (lambda: tp.tensor(1, requires_grad=True), _err(
        RuntimeError, "Only Tensors of floating point and complex dtype can require gradients")),
    (lambda: tp.ones(2, dtype=tp.int64, requires_grad=True), _err(
        RuntimeError, "Only Tensors of floating point and complex dtype can require gradients")),
    (lambda: tp.from_numpy(np.arange(5)[::-1]), _err(
        ValueError, "At least one stride in the given numpy array is negative, and tensors with negative strides "
        "are not currently supported. (You can probably work around this by making a copy of your array  with "
        "array.copy().) ")),
    (lambda: tp.from_numpy([1, 2]), _err(TypeError, "expected np.ndarray (got list)")),
    (lambda: tp.from_numpy(np.array([1], dtype=np.uint16)), (TypeError, "can't convert np.ndarray of type uint16")),
    (lambda: tp.zeros(-1), _err(RuntimeError, "Trying to create tensor with negative dimension -1: [-1]")),
    (lambda: tp.zeros(2.5), _err(TypeError, "size must be a tuple of ints, but got float")),
    (lambda: tp.arange(1, 5, -1), _err(RuntimeError, "upper bound and lower bound inconsistent with step sign")),
    (lambda: tp.arange(0, 5, 0), _err(RuntimeError, "step must be nonzero")),
    (lambda: tp.arange(), _err(TypeError, 'arange() missing 1 required positional arguments: "end"')),
    (lambda: tp.arange(step=2), _err(TypeError, 'arange() missing 1 required positional arguments: "end"')),
    (lambda: tp.linspace(0, 1, -1), _err(RuntimeError, "number of steps must be non-negative")),
    (lambda: tp.eye(-1), _err(RuntimeError, "n must be greater or equal to 0, got -1")),
    (lambda: tp.eye(2, -1), _err(RuntimeError, "m must be greater or equal to 0, got -1")),
]


@pytest.mark.parametrize("call,err", ERRORS, ids=range(len(ERRORS)))
def test_factory_errors(call, err):
    with pytest.raises(err[0], match=err[1]):
        call()


SIZED = [
    (lambda: tp.zeros(2, 3), np.zeros((2, 3), np.float32)),
    (lambda: tp.zeros((2, 3)), np.zeros((2, 3), np.float32)),
    (lambda: tp.zeros([2, 3], dtype=tp.int32), np.zeros((2, 3), np.int32)),
    (lambda: tp.zeros(()), np.zeros((), np.float32)),
    (lambda: tp.zeros(0, 3), np.zeros((0, 3), np.float32)),
    (lambda: tp.ones(3, dtype=tp.bool), np.ones(3, bool)),
    (lambda: tp.ones((2, 1), dtype=tp.float64), np.ones((2, 1))),
    (lambda: tp.full((2,), 3), np.full(2, 3, np.int64)),
    (lambda: tp.full((2,), 3.5), np.full(2, 3.5, np.float32)),
    (lambda: tp.full([2, 2], True), np.full((2, 2), True)),
    (lambda: tp.full((3,), 7, dtype=tp.float16), np.full(3, 7, np.float16)),
    (lambda: tp.zeros_like(tp.ones(2, dtype=tp.int64)), np.zeros(2, np.int64)),
    (lambda: tp.ones_like(tp.zeros(2, 2), dtype=tp.int8), np.ones((2, 2), np.int8)),
    (lambda: tp.full_like(tp.ones(2, dtype=tp.int64), 2.7), np.full(2, 2, np.int64)),
    (lambda: tp.arange(5), np.arange(5)),
    (lambda: tp.arange(2, 11, 3), np.arange(2, 11, 3)),
    (lambda: tp.arange(5, 0, -1), np.arange(5, 0, -1)),
    (lambda: tp.arange(5, -6, -2), np.arange(5, -6, -2)),
    (lambda: tp.arange(0, 1, 0.25), np.arange(0, 1, 0.25, dtype=np.float32)),
    (lambda: tp.arange(0., 5), np.arange(5, dtype=np.float32)),
    (lambda: tp.arange(1, 2.5, 0.5), np.arange(1, 2.5, 0.5, dtype=np.float32)),
    (lambda: tp.arange(1.0, -1.0, -0.5), np.array([1.0, 0.5, 0.0, -0.5], np.float32)),
    (lambda: tp.arange(5, dtype=tp.float64), np.arange(5.)),
    (lambda: tp.arange(10, dtype=tp.uint8), np.arange(10, dtype=np.uint8)),
    (lambda: tp.arange(0.5, 3, dtype=tp.int64), np.array([0, 1, 2])),
    (lambda: tp.arange(tp.tensor(3)), np.arange(3)),
    (lambda: tp.arange(3, 3), np.arange(3, 3)),
    (lambda: tp.arange(end=4), np.arange(4)),
    (lambda: tp.arange(end=5.), np.arange(5, dtype=np.float32)),
    (lambda: tp.arange(start=1, end=4), np.arange(1, 4)),
    (lambda: tp.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32)),
    (lambda: tp.linspace(-2, 2, 1), np.array([-2.], np.float32)),
    (lambda: tp.linspace(0, 1, 0), np.zeros(0, np.float32)),
    (lambda: tp.linspace(0, 10, 5, dtype=tp.int64), np.array([0, 2, 5, 7, 10])),
    (lambda: tp.linspace(-1, 1, 4, dtype=tp.int64), np.array([-1, 0, 0, 1])),
    (lambda: tp.eye(3), np.eye(3, dtype=np.float32)),
    (lambda: tp.eye(2, 3), np.eye(2, 3, dtype=np.float32)),
    (lambda: tp.eye(3, 2, dtype=tp.int64), np.eye(3, 2, dtype=np.int64)),
    (lambda: tp.eye(0), np.eye(0, dtype=np.float32)),
]


@pytest.mark.parametrize("call,expected", SIZED, ids=range(len(SIZED)))
def test_factories_match_numpy(call, expected):
    t = call()
    assert isinstance(t, tp.Tensor)
    assert t.dtype.np == expected.dtype and t.shape == expected.shape
    np.testing.assert_allclose(t.numpy().astype(np.float64), expected.astype(np.float64), rtol=1e-6)
    assert t.is_contiguous() and not t.requires_grad


SIZE_KEYWORD = [
    (lambda: tp.empty(size=(2, 3)), (2, 3), tp.float32),
    (lambda: tp.empty(size=[2], dtype=tp.int16, memory_format=None), (2,), tp.int16),
    (lambda: tp.zeros(size=[2, 3], dtype=tp.int64), (2, 3), tp.int64),
    (lambda: tp.zeros(size=()), (), tp.float32),
    (lambda: tp.ones(size=(2,)), (2,), tp.float32),
    (lambda: tp.full(size=(2,), fill_value=3), (2,), tp.int64),
    (lambda: tp.rand(size=(2, 3)), (2, 3), tp.float32),
    (lambda: tp.randn(size=(4,), generator=tp.Generator(), dtype=tp.float64), (4,), tp.float64),
    (lambda: tp.normal(0., 1., size=(2,)), (2,), tp.float32),
    (lambda: tp.randint(10, size=(3,)), (3,), tp.int64),
    (lambda: tp.randint(10, size=()), (), tp.int64),
    (lambda: tp.randint(high=10, size=(3,)), (3,), tp.int64),
    (lambda: tp.randint(size=(3,), high=10, dtype=tp.int32), (3,), tp.int32),
    (lambda: tp.randint(10, (3,), generator=tp.Generator()), (3,), tp.int64),
]


@pytest.mark.parametrize("call,shape,dtype", SIZE_KEYWORD, ids=range(len(SIZE_KEYWORD)))
def test_factories_take_size_as_a_keyword(call, shape, dtype):
    t = call()
    assert t.shape == shape and t.dtype is dtype


def test_randint_reads_one_bound_as_high_and_two_as_low_high():
    for call, lo, hi in [(lambda n: tp.randint(3, size=(n,)), 0, 3), (lambda n: tp.randint(3, (n,)), 0, 3),
                         (lambda n: tp.randint(high=3, size=(n,)), 0, 3),
                         (lambda n: tp.randint(5, 8, size=(n,)), 5, 8), (lambda n: tp.randint(5, 8, (n,)), 5, 8),
                         (lambda n: tp.randint(5, high=8, size=(n,)), 5, 8),
                         (lambda n: tp.randint(low=5, high=8, size=(n,)), 5, 8),
                         (lambda n: tp.randint(-2, 8, size=[n]), -2, 8)]:
        values = set(call(2000).tolist())
        assert values == set(range(lo, hi))


SIZE_KEYWORD_ERRORS = [
    (lambda: tp.zeros(), _err(TypeError, 'zeros() missing 1 required positional arguments: "size"')),
    (lambda: tp.empty(dtype=tp.int64), _err(TypeError, 'empty() missing 1 required positional arguments: "size"')),
    (lambda: tp.ones(), _err(TypeError, 'ones() missing 1 required positional arguments: "size"')),
    (lambda: tp.rand(), _err(TypeError, 'rand() missing 1 required positional arguments: "size"')),
    (lambda: tp.randn(), _err(TypeError, 'randn() missing 1 required positional arguments: "size"')),
    (lambda: tp.zeros(2, size=(2,)), _err(TypeError, "zeros() got multiple values for argument 'size'")),
    (lambda: tp.randn((2,), size=(2,)), _err(TypeError, "randn() got multiple values for argument 'size'")),
    (lambda: tp.zeros(size=2), _err(TypeError, "zeros(): argument 'size' must be tuple of ints, not int")),
    (lambda: tp.rand(size=None), _err(TypeError, 'rand() missing 1 required positional arguments: "size"')),
    (lambda: tp.randint(10), _err(TypeError, "randint() missing required argument 'size'")),
    (lambda: tp.randint(size=(2,)), _err(TypeError, "randint() missing required argument 'high'")),
    (lambda: tp.randint(low=2, size=(3,)), _err(TypeError, "randint() missing required argument 'high'")),
    (lambda: tp.randint(10, size=3), _err(TypeError, "randint(): argument 'size' must be tuple of ints, not int")),
    (lambda: tp.randint(3, 10), _err(TypeError, "randint(): argument 'size' (position 2) must be tuple of ints, "
                                                "not int")),
    (lambda: tp.randint(0, 10, (2,), size=(2,)), _err(TypeError, "randint() got multiple values for argument "
                                                                 "'size'")),
    (lambda: tp.randint(2, 3, high=10, size=(2,)), _err(TypeError, "randint() got multiple values for argument "
                                                                   "'high'")),
    (lambda: tp.randint(1, 2, (2,), 4), _err(TypeError, "randint() takes from 1 to 3 positional arguments but 4 "
                                                        "were given")),
    (lambda: tp.randint(5.5, (2,)), _err(TypeError, "randint(): argument 'high' (position 1) must be int, not "
                                                    "float")),
    (lambda: tp.randint(high=3.5, size=(2,)), _err(TypeError, "randint(): argument 'high' must be int, not float")),
    (lambda: tp.randint(1.5, 3, (2,)), _err(TypeError, "randint(): argument 'low' (position 1) must be int, not "
                                                       "float")),
    (lambda: tp.randint(True, (2,)), _err(TypeError, "randint(): argument 'high' (position 1) must be int, not "
                                                     "bool")),
]


@pytest.mark.parametrize("call,err", SIZE_KEYWORD_ERRORS, ids=range(len(SIZE_KEYWORD_ERRORS)))
def test_size_argument_errors(call, err):
    with pytest.raises(err[0], match=err[1]):
        call()


def test_empty_and_like_factories_keep_shape_dtype_device():
    e = tp.empty(2, 3, dtype=tp.int16)
    assert e.shape == (2, 3) and e.dtype is tp.int16 and e.device == tp.device("cpu")
    base = tp.zeros(4, 2, dtype=tp.float64)
    for f in (tp.empty_like, tp.zeros_like, tp.ones_like):
        t = f(base)
        assert t.shape == (4, 2) and t.dtype is tp.float64 and t.device == base.device
    assert tp.zeros(2, device="cpu").device == tp.device("cpu")
    assert tp.ones(2, requires_grad=True).requires_grad
    assert tp.zeros_like(base, requires_grad=True).requires_grad


@settings(max_examples=80, deadline=None)
@given(st.integers(-20, 20), st.integers(-20, 20), st.integers(-5, 5).filter(bool))
def test_integer_arange_property(start, end, step):
    expected = np.arange(start, end, step)
    if (end - start) * step < 0:
        with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
            tp.arange(start, end, step)
        return
    t = tp.arange(start, end, step)
    assert t.dtype is tp.int64
    np.testing.assert_array_equal(t.numpy(), expected)


@settings(max_examples=80, deadline=None)
@given(st.floats(-10, 10), st.floats(-10, 10), st.integers(0, 40))
def test_linspace_property(start, end, steps):
    t = tp.linspace(start, end, steps, dtype=tp.float64)
    expected = np.linspace(start, end, steps)
    np.testing.assert_allclose(t.numpy(), expected, rtol=1e-12, atol=1e-12)
    if steps:
        assert t[0].item() == start and t[-1].item() == (end if steps > 1 else start)


# -- lengths, steps and overflow as PyTorch has them ------------------------------------------------------
def test_integer_arange_truncates_the_bounds_and_step_first():
    """int64 counts the length from the truncated bounds and step; narrower integer types count it in
    double from the bounds as given, and step by the truncated step (PyTorch's arithmetic)."""
    assert tp.arange(3.1, dtype=tp.int64).tolist() == [0, 1, 2]
    assert tp.arange(-2.5, 3.7, 1.5, dtype=tp.int64).tolist() == [-2, -1, 0, 1, 2]
    assert tp.arange(0, 5, 1.5, dtype=tp.int64).tolist() == [0, 1, 2, 3, 4]
    assert tp.arange(0, 0.5, dtype=tp.int64).tolist() == []
    assert tp.arange(0, 5, 1.5, dtype=tp.int32).tolist() == [0, 1, 2, 3]
    assert tp.arange(0.5, 3.7, 0.9, dtype=tp.int16).tolist() == [0, 0, 0, 0]
    assert tp.arange(-2.5, 3.7, 1.5, dtype=tp.uint8).tolist() == [254, 255, 0, 1, 2]
    with pytest.raises(ValueError, match="^step must be nonzero$"):
        tp.arange(0, 3, 0.5, dtype=tp.int64)


@pytest.mark.parametrize("call,exc,message", [
    (lambda: tp.arange(0, float("inf")), RuntimeError, "unsupported range: 0 -> inf"),
    (lambda: tp.arange(0.0, float("nan")), RuntimeError, "unsupported range: 0 -> nan"),
    (lambda: tp.arange(0, 3, float("nan")), RuntimeError, "step must be nonzero"),
    (lambda: tp.arange(0.0, 1e300), RuntimeError, "invalid size, possible overflow?"),
    (lambda: tp.arange(2 ** 63), RuntimeError, "value cannot be converted to type int64_t without overflow"),
    (lambda: tp.arange(3, dtype=tp.bool), NotImplementedError, "\"arange\" not implemented for 'Bool'"),
    (lambda: tp.linspace(0, 1, 2.5), TypeError, "linspace() received an invalid combination of arguments - got "
                                                "(int, int, float), but expected one of:"),
    (lambda: tp.linspace(0, 1, True), TypeError, "linspace() received an invalid combination of arguments - got "
                                                 "(int, int, bool), but expected one of:"),
    (lambda: tp.tensor([300], dtype=tp.int8), RuntimeError, "value cannot be converted to type int8 without overflow"),
    (lambda: tp.tensor([[1, 256]], dtype=tp.uint8), RuntimeError,
     "value cannot be converted to type uint8 without overflow"),
    (lambda: tp.tensor([float("nan")], dtype=tp.int32), RuntimeError,
     "value cannot be converted to type int32 without overflow"),
    (lambda: tp.tensor([70000.0], dtype=tp.int16), RuntimeError,
     "value cannot be converted to type int16 without overflow"),
])
def test_factories_raise_instead_of_computing_something_else(call, exc, message):
    with pytest.raises(exc) as info:
        call()
    assert str(info.value).splitlines()[0] == message


def test_python_numbers_that_fit_or_wrap_as_in_pytorch():
    assert tp.tensor([-1, -255], dtype=tp.uint8).tolist() == [255, 1]  # negative ints wrap into uint8
    assert tp.tensor([70000.0], dtype=tp.int32).tolist() == [70000]
    assert tp.tensor(np.array([300]), dtype=tp.int8).tolist() == [44]  # an array is cast, as in PyTorch
    assert tp.linspace(0, 1, np.int64(3)).tolist() == [0.0, 0.5, 1.0]
