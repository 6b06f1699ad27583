"""The Tensor object: metadata, conversions to Python and numpy, DLPack, pickling, Python protocols."""

from __future__ import annotations

import copy
import operator
import pickle
import re

import numpy as np
import pytest

import tensorplug as tp

ALL_DTYPES = [tp.bool, tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32,
              tp.float64]


def test_metadata():
    x = tp.zeros(2, 3, 4, dtype=tp.float64)
    assert x.shape == x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert x.dim() == x.ndim == x.ndimension() == 3
    assert x.numel() == x.nelement() == 24 and x.element_size() == 8
    assert x.dtype is tp.float64 and x.device == tp.device("cpu") and x.is_cpu and not x.is_cuda
    assert x.is_floating_point() and not x.is_complex() and not tp.zeros(1, dtype=tp.int8).is_floating_point()
    assert x.stride() == (12, 4, 1) and x.stride(0) == 12 and x.storage_offset() == 0
    assert x.is_leaf and not x.requires_grad and x.grad is None and x.grad_fn is None
    assert not x.is_view and x._version >= 0
    assert tp.is_tensor(x) and not tp.is_tensor(np.zeros(1))
    with pytest.raises(IndexError, match=re.escape("Dimension out of range (expected to be in range of [-3, 2], "
                                                   "but got 3)")):
        x.size(3)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_numpy_is_zero_copy_and_tolist_item_are_python_values(dtype):
    x = tp.tensor([[0, 1, 0], [1, 1, 0]], dtype=dtype)
    a = x.numpy()
    assert a.dtype == dtype.np and a.shape == (2, 3)
    a[0, 0] = 1
    assert x[0, 0].item() == 1  # shared memory
    lst = x.tolist()
    assert lst == [[1, 1, 0], [1, 1, 0]]
    py = bool if dtype is tp.bool else (float if dtype.is_floating_point else int)
    assert all(type(v) is py for row in lst for v in row)
    assert type(x[1, 0].item()) is py


def test_item_and_scalar_conversions():
    assert tp.tensor([2]).item() == 2 and tp.tensor([[2.5]]).item() == 2.5 and tp.tensor(True).item() is True
    assert tp.tensor(2.5).tolist() == 2.5
    assert int(tp.tensor([2.7])) == 2 and float(tp.tensor(3)) == 3.0 and int(tp.tensor(-2.7)) == -2
    assert bool(tp.tensor([0])) is False and bool(tp.tensor(0.5)) is True
    assert operator.index(tp.tensor(3)) == 3 and operator.index(tp.tensor([5])) == 5
    assert operator.index(tp.tensor(True)) == 1
    assert [10, 20, 30][tp.tensor(1)] == 20 and list(range(5))[tp.tensor(1):tp.tensor(3)] == [1, 2]
    assert f"{tp.tensor(2.5):.2f}" == "2.50" and f"{tp.tensor(7):>3}" == "  7"
    assert f"{tp.tensor([1., 2.])}" == "tensor([1., 2.])"


def _err(exc, msg):
    return exc, "^" + re.escape(msg) + "$"


ERRORS = [
    (lambda: tp.ones(2, 3).item(), _err(RuntimeError, "a Tensor with 6 elements cannot be converted to Scalar")),
    (lambda: int(tp.ones(2)), _err(ValueError, "only one element tensors can be converted to Python scalars")),
    (lambda: float(tp.ones(2)), _err(ValueError, "only one element tensors can be converted to Python scalars")),
    (lambda: bool(tp.ones(2)), _err(RuntimeError, "Boolean value of Tensor with more than one value is ambiguous")),
    (lambda: bool(tp.ones(0)), _err(RuntimeError, "Boolean value of Tensor with no values is ambiguous")),
    (lambda: [1][tp.tensor(1.)], _err(TypeError, "only integer tensors of a single element can be converted to "
                                                 "an index")),
    (lambda: [1][tp.tensor([0, 0])], _err(TypeError, "only integer tensors of a single element can be converted "
                                                     "to an index")),
    (lambda: len(tp.tensor(1)), _err(TypeError, "len() of a 0-d tensor")),
    (lambda: iter(tp.tensor(1)), _err(TypeError, "iteration over a 0-d tensor")),
    (lambda: "{:.2f}".format(tp.tensor([1., 2.])), _err(TypeError, "unsupported format string passed to "
                                                                   "Tensor.__format__")),
    (lambda: tp.ones(2, requires_grad=True).numpy(), _err(
        RuntimeError, "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")),
    (lambda: tp.ones(2, requires_grad=True).__dlpack__(), _err(
        RuntimeError, "Can't export tensors that require gradient, use tensor.detach()")),
]


@pytest.mark.parametrize("call,err", ERRORS, ids=range(len(ERRORS)))
def test_conversion_errors(call, err):
    with pytest.raises(err[0], match=err[1]):
        call()


def test_len_and_iteration():
    x = tp.arange(6).reshape(3, 2)
    assert len(x) == 3 and len(tp.zeros(0, 4)) == 0
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    assert [v.item() for v in tp.tensor([7, 8])] == [7, 8]


@pytest.mark.parametrize("method,dtype", [("float", tp.float32), ("double", tp.float64), ("half", tp.float16),
                                          ("bfloat16", tp.bfloat16), ("long", tp.int64), ("int", tp.int32),
                                          ("short", tp.int16), ("char", tp.int8), ("byte", tp.uint8),
                                          ("bool", tp.bool)])
def test_dtype_conversion_methods(method, dtype):
    x = tp.tensor([0.0, 1.7, -2.2, 3.0])
    y = getattr(x, method)()
    assert y.dtype is dtype
    np.testing.assert_array_equal(y.numpy(), x.numpy().astype(dtype.np))
    assert getattr(y, method)() is y  # no-op when already there


def test_to():
    x = tp.tensor([1.5, 2.5])
    assert x.to(tp.float32) is x and x.to("cpu") is x
    assert x.to(tp.int64).tolist() == [1, 2]
    y = x.to("cpu", tp.float64)
    assert y.dtype is tp.float64 and y.device == tp.device("cpu")
    assert x.to(tp.ones(1, dtype=tp.float16)).dtype is tp.float16
    assert x.to(device=tp.device("cpu"), dtype=tp.int32).dtype is tp.int32
    c = x.to(tp.float32, copy=True)
    assert c is not x and not np.shares_memory(c.numpy(), x.numpy())
    assert x.cpu() is x and x.type_as(tp.zeros(1, dtype=tp.int8)).dtype is tp.int8


def test_array_protocol():
    x = tp.arange(4).reshape(2, 2)
    a = np.asarray(x)
    assert a.dtype == np.int64 and np.shares_memory(a, x.numpy())
    np.testing.assert_array_equal(np.array(x, dtype=np.float32), [[0., 1.], [2., 3.]])


def test_dlpack_shares_memory_both_ways():
    a = np.arange(6.).reshape(2, 3)
    t = tp.from_dlpack(a)
    assert t.dtype is tp.float64 and t.shape == (2, 3)
    t[0, 1] = -1.
    assert a[0, 1] == -1.
    x = tp.arange(4, dtype=tp.float32)
    assert x.__dlpack_device__() == (1, 0)
    n = np.from_dlpack(x)
    n[0] = 9.
    assert x.tolist() == [9., 1., 2., 3.]
    back = tp.from_dlpack(x[1:])
    back[0] = 7.
    assert x.tolist() == [9., 7., 2., 3.]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_pickle_round_trip(dtype):
    x = tp.tensor([[1, 0, 1], [0, 1, 1]], dtype=dtype)
    for proto in range(2, pickle.HIGHEST_PROTOCOL + 1):
        y = pickle.loads(pickle.dumps(x, protocol=proto))
        assert y.dtype is dtype and y.shape == x.shape and y.device == x.device
        np.testing.assert_array_equal(y.numpy(), x.numpy())
        assert not np.shares_memory(y.numpy(), x.numpy())
    v = pickle.loads(pickle.dumps(tp.arange(10)[::3]))
    assert v.tolist() == [0, 3, 6, 9]
    g = pickle.loads(pickle.dumps(tp.tensor([1., 2.], requires_grad=True)))
    assert g.requires_grad and g.tolist() == [1., 2.]
    d = copy.deepcopy(tp.tensor([3, 4]))
    assert d.tolist() == [3, 4]


def test_hash_is_identity():
    a, b = tp.tensor(1), tp.tensor(1)
    assert hash(a) == id(a) and len({a, b, a}) == 2
