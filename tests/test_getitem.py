"""``Tensor.__getitem__`` / ``__setitem__`` and ``index.Tensor`` against numpy, with PyTorch's errors."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp

A = np.arange(24).reshape(2, 3, 4)


def fresh():
    a = A.copy()
    return a, tp.from_numpy(a)


def as_tensors(key):
    """The same key with numpy arrays replaced by tensors."""
    conv = (lambda k: tp.tensor(k) if isinstance(k, np.ndarray) else k)
    return tuple(conv(k) for k in key) if isinstance(key, tuple) else conv(key)


B = np.array
BASIC_KEYS = [
    0, -1, 1, (1, 2), (0, -1, 3), slice(None), slice(1, None), slice(None, 1), slice(0, 2, 2), slice(-10, 10),
    slice(5, 9), (slice(None), 1), (slice(None), slice(1, 3), slice(None, None, 3)), None, (None, 0), (0, None, 2),
    Ellipsis, (Ellipsis, 1), (1, Ellipsis), (0, Ellipsis, None), (slice(None), None, Ellipsis, None),
    (0, 0, 0), (0, 0, 0, None), (slice(1, -1, 2),), np.int64(1), (np.int32(1), slice(None, 2)),
]

ADVANCED_KEYS = [
    [0, 1], [1], [], [-1, 0, 1], B([1, 0]), B([[0, 1], [1, 0]]), (slice(None), [2, 0]),
    (slice(None), [2, 0], slice(1, 3)), ([1, 0], slice(None), [3, 0]), (slice(None), [0, 1], [[0], [1]]),
    ([0], Ellipsis, [0]), ([[0, 1]], slice(None), [[0], [1]]),
    B([True, False]), (slice(None), B([True, False, True])), (A > 5,), A % 3 == 0,
    (slice(None), A[0] > 5), True, False, (None, [0, 1]), ([0, 1], None), (Ellipsis, B([0, 3, 3])),
    (slice(None), slice(None), B([-1, -4])), (B([1]), B([2]), B([3])), (Ellipsis, A[0] % 5 == 0),
    (Ellipsis, (A[0] % 5 == 0).tolist()), ((A[:, :, 0] > 4).tolist(), 1),
    range(2), range(0), range(1, -1, -1), (slice(None), range(1, 3)), (range(2), range(2)),
    (range(2), slice(None), [3, 0]), ((1, 0), slice(None), (3, 0)), B([1, 0], dtype=np.int32),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_basic_indexing_is_a_view_matching_numpy(key):
    a, x = fresh()
    v = x[key]
    expected = a[key]
    np.testing.assert_array_equal(v.numpy(), expected)
    assert v.shape == np.shape(expected)
    assert v.is_view and v._base is x
    assert np.shares_memory(v.numpy(), a) or v.numel() == 0


@pytest.mark.parametrize("key", ADVANCED_KEYS, ids=repr)
def test_advanced_indexing_copies_and_matches_numpy(key):
    a, x = fresh()
    expected = a[key]
    for k in (key, as_tensors(key)):
        out = x[k]
        np.testing.assert_array_equal(out.numpy(), expected)
        assert out.dtype is tp.int64 and not out.is_view
        assert not np.shares_memory(out.numpy(), a)


# PyTorch applies ints as select() before the advanced indices, so an int never makes
# advanced indices non-adjacent (numpy would move the broadcast dims to the front).
INT_THEN_ADVANCED = [
    ((0, slice(None), [0, 1]), lambda a: a[0][:, [0, 1]]),
    ((1, Ellipsis, [0, 1, 2]), lambda a: a[1][..., [0, 1, 2]]),
    (([0, 1], 1), lambda a: a[:, 1][[0, 1]]),
    (([0, 1], slice(None), 1), lambda a: a[:, :, 1][[0, 1]]),
    ((0, B([True, False, True])), lambda a: a[0][[0, 2]]),
    (([True, False], 1), lambda a: a[:, 1][[0]]),
    ((0, False), lambda a: a[0][None][[]]),
    (([0, 1], True), lambda a: a[[0, 1]]),
]


@pytest.mark.parametrize("key,reference", INT_THEN_ADVANCED, ids=[repr(c[0]) for c in INT_THEN_ADVANCED])
def test_ints_are_selected_before_advanced_indexing(key, reference):
    a, x = fresh()
    np.testing.assert_array_equal(x[key].numpy(), reference(a))


def test_zero_dim_tensor_indices():
    a, x = fresh()
    np.testing.assert_array_equal(x[tp.tensor(1)].numpy(), a[1])
    np.testing.assert_array_equal(x[tp.tensor(True)].numpy(), a[None])
    assert x[tp.tensor(False)].shape == (0, 2, 3, 4)
    assert x[tp.tensor(1):].shape == (1, 3, 4)
    assert x[0:3:tp.tensor(2)].shape == (1, 3, 4)
    s = tp.tensor(5.)
    assert s[None].shape == (1,) and s[True].shape == (1,) and s[...].is_view
    assert s[()].item() == 5.


def test_zero_dim_integer_indices_select_a_view():
    # a 0-dim integer tensor or numpy array counts as an int, as in PyTorch: select(), so writes reach the base
    for key in (tp.tensor(1), tp.tensor(-1, dtype=tp.int32), tp.tensor(1, dtype=tp.int16), np.array(1),
                (0, tp.tensor(2, dtype=tp.int8)), (tp.tensor(1), slice(None), np.array(3))):
        a, x = fresh()
        v = x[key]
        np.testing.assert_array_equal(v.numpy(), a[key if not isinstance(key, tuple) else
                                                      tuple(int(k) if not isinstance(k, slice) else k for k in key)])
        assert v.is_view and v._base is x
        v.fill_(-7)
        assert (a == -7).sum() == v.numel()
    a, x = fresh()
    x[tp.tensor(1), 2] = 100
    assert a[1, 2].tolist() == [100] * 4
    # a 0-dim uint8 tensor is a mask, as a bool one is
    with pytest.warns(UserWarning, match="indexing with dtype tensorplug.uint8 is now deprecated"):
        assert x[tp.tensor(1, dtype=tp.uint8)].shape == (1, 2, 3, 4)
    with pytest.raises(IndexError, match=re.escape("too many indices for tensor of dimension 0")):
        tp.tensor(5)[tp.tensor(0)]
    with pytest.raises(IndexError, match=re.escape("too many indices for tensor of dimension 0")):
        tp.tensor(5)[range(1)]


class _Index:
    """Not an int, but has ``__index__``."""

    def __index__(self):
        return 1


class _Rows:
    """A sequence that is neither a list nor a tuple."""

    def __len__(self):
        return 2

    def __getitem__(self, i):
        if i >= 2:
            raise IndexError(i)
        return 1 - i


def test_ranges_sequences_and_index_objects_as_indices():
    a, x = fresh()
    np.testing.assert_array_equal(x[range(2), :, range(1, 3)].numpy(), a[[0, 1], :, [1, 2]])
    np.testing.assert_array_equal(x[_Rows()].numpy(), a[[1, 0]])
    np.testing.assert_array_equal(x[_Index(), _Index()].numpy(), a[1, 1])
    assert x[_Index()].is_view and x[np.int64(1)].is_view
    # float values truncate toward zero and numpy uint8 values make a mask, as in PyTorch
    np.testing.assert_array_equal(x[:, [1.7, 0.2]].numpy(), a[:, [1, 0]])
    np.testing.assert_array_equal(x[:, B([2.5])].numpy(), a[:, [2]])
    with pytest.warns(UserWarning, match="indexing with dtype tensorplug.uint8 is now deprecated"):
        np.testing.assert_array_equal(x[B([0, 1], dtype=np.uint8)].numpy(), a[[False, True]])
    x = tp.zeros(4, 3, dtype=tp.int64)
    x[range(4), tp.tensor([2, 0, 1, 2])] = tp.tensor([1, 2, 3, 4])
    x[range(2)] += 10
    assert x.tolist() == [[10, 10, 11], [12, 10, 10], [0, 3, 0], [0, 0, 4]]


def test_short_non_tuple_sequences_holding_indices_read_as_tuples():
    # PyTorch (and numpy before 1.23) read x[[a, b]] as x[a, b] when a or b is itself a sequence, a tensor,
    # a slice, None or ...; with a warning. A list of plain ints (or 32 items or more) is one index.
    a, x = fresh()
    cases = [([[0, 1], [1, 0]], a[[0, 1], [1, 0]]), ([0, slice(None), 1], a[0, :, 1]), ([1, None], a[1, None]),
             ([Ellipsis, 0], a[..., 0]), ([tp.tensor(1), tp.tensor(2)], a[1, 2]), ([range(2)], a[[0, 1]])]
    for key, expected in cases:
        with pytest.warns(UserWarning, match=re.escape("Using a non-tuple sequence for multidimensional indexing "
                                                       "is deprecated")):
            out = x[key]
        np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(x[[1, 0, 1]].numpy(), a[[1, 0, 1]])
    np.testing.assert_array_equal(x[[0] * 40].numpy(), a[[0] * 40])
    np.testing.assert_array_equal(x[B([[0, 1], [1, 0]])].numpy(), a[[[0, 1], [1, 0]]])
    Key = __import__("collections").namedtuple("Key", "i j")
    np.testing.assert_array_equal(x[Key(1, 2)].numpy(), a[1, 2])


def test_index_dtypes_and_mask_kinds():
    a, x = fresh()
    np.testing.assert_array_equal(x[tp.tensor([1, 0], dtype=tp.int32)].numpy(), a[[1, 0]])
    with pytest.warns(UserWarning, match="indexing with dtype tensorplug.uint8 is now deprecated"):
        out = x[tp.tensor([1, 0], dtype=tp.uint8)]
    np.testing.assert_array_equal(out.numpy(), a[[True, False]])
    for dt in (tp.float32, tp.bfloat16, tp.int64, tp.bool):
        y = tp.arange(6).to(dt)
        np.testing.assert_array_equal(y[[4, 1]].numpy(), np.arange(6).astype(dt.np)[[4, 1]])
        assert y[[4, 1]].dtype is dt


def test_iteration_yields_views():
    a, x = fresh()
    rows = list(x)
    assert len(rows) == 2 and all(r.is_view for r in rows)
    np.testing.assert_array_equal(rows[1].numpy(), a[1])


def _err(exc, msg):
    return exc, "^" + re.escape(msg) + "$"


GETITEM_ERRORS = [
    (5, _err(IndexError, "index 5 is out of bounds for dimension 0 with size 2")),
    (-3, _err(IndexError, "index -3 is out of bounds for dimension 0 with size 2")),
    ((0, 5), _err(IndexError, "index 5 is out of bounds for dimension 1 with size 3")),
    ((0, slice(None), 7), _err(IndexError, "index 7 is out of bounds for dimension 2 with size 4")),
    ((None, 0, 7), _err(IndexError, "index 7 is out of bounds for dimension 2 with size 3")),
    ((Ellipsis, 7), _err(IndexError, "index 7 is out of bounds for dimension 1 with size 4")),
    (slice(None, None, -1), _err(ValueError, "step must be greater than zero")),
    (slice(None, None, 0), _err(ValueError, "slice step cannot be zero")),
    (slice(0, 1.5), _err(TypeError, "slice indices must be integers or None or have an __index__ method")),
    ((0, 0, 0, 0), _err(IndexError, "too many indices for tensor of dimension 3")),
    ((Ellipsis, Ellipsis), _err(IndexError, "an index can only have a single ellipsis ('...')")),
    (1.0, _err(IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                           "valid indices (got float)")),
    ((0, "a"), _err(TypeError, "new(): invalid data type 'str'")),
    ((0, [1, "a"]), _err(TypeError, "new(): invalid data type 'str'")),
    (np.True_, _err(IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                                "are valid indices (got numpy.bool)")),
    ((0, np.float64(1)), _err(IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                                          "Variables are valid indices (got numpy.float64)")),
    ({0: 1}, _err(IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                              "valid indices (got dict)")),
    ((slice(None), [[0, 1], [2]]), _err(ValueError, "expected sequence of length 2 at dim 1 (got 1)")),
    (range(3), _err(IndexError, "index 2 is out of bounds for dimension 0 with size 2")),
    (tp.tensor(2), _err(IndexError, "index 2 is out of bounds for dimension 0 with size 2")),
    (tp.tensor([5]), _err(IndexError, "index 5 is out of bounds for dimension 0 with size 2")),
    ((slice(None), tp.tensor([0, 3])), _err(IndexError, "index 3 is out of bounds for dimension 1 with size 3")),
    ([-3], _err(IndexError, "index -3 is out of bounds for dimension 0 with size 2")),
    (tp.tensor([0.5]), _err(IndexError, "tensors used as indices must be long, int, byte or bool tensors")),
    (tp.tensor([1], dtype=tp.int16), _err(IndexError, "tensors used as indices must be long, int, byte or bool "
                                                      "tensors")),
    (tp.tensor([True, False, True]), _err(IndexError, "The shape of the mask [3] at index 0 does not match the "
                                                      "shape of the indexed tensor [2, 3, 4] at index 0")),
    ((slice(None), tp.tensor([[True, False, True, True]])), _err(
        IndexError, "The shape of the mask [1, 4] at index 0 does not match the shape of the indexed tensor "
                    "[2, 3, 4] at index 1")),
    (([0, 1], [0, 1, 2]), _err(IndexError, "shape mismatch: indexing tensors could not be broadcast together "
                                           "with shapes [2], [3]")),
]


@pytest.mark.parametrize("key,err", GETITEM_ERRORS, ids=[repr(c[0]) for c in GETITEM_ERRORS])
def test_getitem_errors(key, err):
    _, x = fresh()
    with pytest.raises(err[0], match=err[1]):
        x[key]


def test_zero_dim_errors():
    s = tp.tensor(3)
    with pytest.raises(IndexError, match=re.escape("invalid index of a 0-dim tensor. Use `tensor.item()` in "
                                                   "Python or `tensor.item<T>()` in C++ to convert a 0-dim "
                                                   "tensor to a number")):
        s[0]
    with pytest.raises(IndexError, match=re.escape("slice() cannot be applied to a 0-dim tensor.")):
        s[0:1]


def test_index_op_errors():
    x = tp.zeros(2, 3)
    with pytest.raises(IndexError, match=re.escape("too many indices for tensor of dimension 2 (got 3)")):
        tp.ops.tensorplug.index.Tensor(x, [None, None, tp.tensor([0])])
    with pytest.raises(IndexError, match="expected at least one index tensor"):
        tp.ops.tensorplug.index.Tensor(x, [None])
    out = tp.ops.tensorplug.index.Tensor(x, [None, tp.tensor([2, 0])])
    assert out.shape == (2, 2)


# -- assignment ----------------------------------------------------------------------------
SETITEM_CASES = [
    (0, 7), (-1, 7), ((1, 2), 7.9), (slice(1, None), 1), ((slice(None), slice(0, 4, 3)), -2), (Ellipsis, 5),
    (None, 5), ((0, None, 1), 3), (0, B(np.arange(12).reshape(3, 4) * 10)), ((slice(None), 0), B([[5], [6]])),
    ((slice(None), 1), B([100, 200, 300, 400])), ((1, slice(None)), B(np.ones((1, 3, 4), dtype=np.int64))),
    ([1, 0], 9), ([1, 0], B(np.array([[[1]], [[2]]]))), ((slice(None), [2, 0]), B([[1, 2, 3, 4]])),
    (A > 20, -1), (A % 2 == 0, B(np.arange(12))), ((0, B([True, False, True])), B([8, 9, 10, 11])),
    ((slice(None), [0, 1], [[1], [2]]), 0), (True, 4), (False, 4), ((0, [1, 2], 3), B([50, 60])),
    (range(1, 2), 3), ((range(2), 1, range(1, 3)), B([8, 9])), ((1, range(3)), B([[7], [8], [9]])),
]


@pytest.mark.parametrize("key,value", SETITEM_CASES, ids=[f"{c[0]!r}={c[1]!r}"[:60] for c in SETITEM_CASES])
def test_setitem_matches_numpy_in_place(key, value):
    a, x = fresh()
    before = x._version
    tv = tp.tensor(value) if isinstance(value, np.ndarray) else value
    x[as_tensors(key)] = tv
    expected = A.copy()
    expected[key] = value
    np.testing.assert_array_equal(a, expected)  # written in place: the numpy array x wraps changed
    assert x._version == before + 1


def test_setitem_casts_values_and_writes_through_views():
    x = tp.zeros(4)
    x[1] = tp.tensor(3, dtype=tp.int64)
    x[[2, 3]] = tp.tensor([1.5, 2.5], dtype=tp.float64)
    assert x.tolist() == [0., 3., 1.5, 2.5] and x.dtype is tp.float32
    y = tp.zeros(3, dtype=tp.int32)
    y[:] = 2.7
    y[[0]] = 9.9
    assert y.tolist() == [9, 2, 2]
    base = tp.zeros(3, 4)
    view = base[1:]
    before = base._version
    view[:, 1] = 5.
    view[0, [0, 3]] = tp.tensor([1., 2.])
    assert base._version == view._version == before + 2
    np.testing.assert_array_equal(base.numpy(), [[0, 0, 0, 0], [1, 5, 0, 2], [0, 5, 0, 0]])


SETITEM_ERRORS = [
    (0, tp.ones(2), _err(RuntimeError, "The expanded size of the tensor (4) must match the existing size (2) at "
                                        "non-singleton dimension 0.  Target sizes: [4].  Tensor sizes: [2]")),
    (slice(None), tp.ones(2, 4), _err(
        RuntimeError, "The expanded size of the tensor (3) must match the existing size (2) at non-singleton "
                      "dimension 0.  Target sizes: [3, 4].  Tensor sizes: [2, 4]")),
    (tp.tensor([True, False, True]), tp.ones(3), _err(
        RuntimeError, "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of "
                      "shape [2, 4]")),
    (0, [1, 2], _err(TypeError, "can't assign a list to a tensorplug.float32 tensor")),
    (0, None, _err(TypeError, "can't assign a NoneType to a tensorplug.float32 tensor")),
    (7, 1., _err(IndexError, "index 7 is out of bounds for dimension 0 with size 3")),
    ([0, 7], 1., _err(IndexError, "index 7 is out of bounds for dimension 0 with size 3")),
]


@pytest.mark.parametrize("key,value,err", SETITEM_ERRORS, ids=[repr(c[0])[:30] for c in SETITEM_ERRORS])
def test_setitem_errors(key, value, err):
    x = tp.zeros(3, 4)
    with pytest.raises(err[0], match=err[1]):
        x[key] = value
    assert x.tolist() == [[0.] * 4] * 3


# -- properties ----------------------------------------------------------------------------------------
@st.composite
def basic_keys(draw):
    shape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=4))
    items, dims = [], 0
    for _ in range(draw(st.integers(0, len(shape) + 1))):
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis"]))
        if kind == "ellipsis" and Ellipsis not in items:
            items.append(Ellipsis)
        elif kind == "none":
            items.append(None)
        elif dims < len(shape):
            n = shape[dims] if Ellipsis not in items else shape[len(shape) - 1]
            if kind == "int" and n and Ellipsis not in items:
                items.append(draw(st.integers(-n, n - 1)))
                dims += 1
            elif kind == "slice":
                lo = draw(st.none() | st.integers(-6, 6))
                hi = draw(st.none() | st.integers(-6, 6))
                items.append(slice(lo, hi, draw(st.none() | st.integers(1, 3))))
                dims += 1
    return shape, tuple(items)


@settings(max_examples=150, deadline=None)
@given(basic_keys())
def test_basic_indexing_property(case):
    shape, key = case
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = tp.from_numpy(a)
    try:
        expected = a[key]
    except IndexError:
        return
    v = x[key]
    np.testing.assert_array_equal(v.numpy(), expected)
    if v.numel():
        v.fill_(-1)
        assert (a[key] == -1).all()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_integer_array_indexing_property(shape, data):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    x = tp.from_numpy(a)
    key = []
    for n in shape:
        choice = data.draw(st.sampled_from(["full", "array", "mask"]))
        if choice == "array":
            key.append(np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=3)), dtype=np.int64))
        elif choice == "mask":
            key.append(np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        else:
            key.append(slice(None))
    key = tuple(key)
    try:
        expected = a[key]
    except IndexError:
        with pytest.raises(IndexError):
            x[as_tensors(key)]
        return
    np.testing.assert_array_equal(x[as_tensors(key)].numpy(), expected)
