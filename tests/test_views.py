"""View ops: values against numpy, shared storage and version counter, PyTorch's errors."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp


def base():
    return tp.arange(24).reshape(2, 3, 4)


def ref():
    return np.arange(24).reshape(2, 3, 4)


def sliding(a, size, step, axis):
    w = np.lib.stride_tricks.sliding_window_view(a, size, axis=axis)
    return np.take(w, np.arange(0, w.shape[axis], step), axis=axis)


# (name, tensorplug view of base(), numpy equivalent of ref())
VIEW_CASES = [
    ("view", lambda x: x.view(4, 6), lambda a: a.reshape(4, 6)),
    ("view -1", lambda x: x.view(-1, 8), lambda a: a.reshape(-1, 8)),
    ("view tuple", lambda x: x.view((3, 8)), lambda a: a.reshape(3, 8)),
    ("reshape", lambda x: x.reshape(6, 4), lambda a: a.reshape(6, 4)),
    ("tp.reshape", lambda x: tp.reshape(x, (-1,)), lambda a: a.reshape(-1)),
    ("permute", lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("permute neg", lambda x: x.permute((-1, -3, -2)), lambda a: a.transpose(2, 0, 1)),
    ("transpose", lambda x: x.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("swapaxes", lambda x: x.swapaxes(-1, 1), lambda a: a.swapaxes(2, 1)),
    ("t", lambda x: x[0].t(), lambda a: a[0].T),
    ("T", lambda x: x.T, lambda a: a.transpose(2, 1, 0)),
    ("mT", lambda x: x.mT, lambda a: a.swapaxes(-1, -2)),
    ("expand", lambda x: x[:, :1].expand(2, 5, 4), lambda a: np.broadcast_to(a[:, :1], (2, 5, 4))),
    ("expand -1", lambda x: x[:, :1].expand(-1, 3, -1), lambda a: np.broadcast_to(a[:, :1], (2, 3, 4))),
    ("expand new dims", lambda x: x.expand(3, 2, 3, 4), lambda a: np.broadcast_to(a, (3, 2, 3, 4))),
    ("expand_as", lambda x: x[0, 0].expand_as(x), lambda a: np.broadcast_to(a[0, 0], (2, 3, 4))),
    ("unsqueeze 0", lambda x: x.unsqueeze(0), lambda a: a[None]),
    ("unsqueeze -1", lambda x: x.unsqueeze(-1), lambda a: a[..., None]),
    ("unsqueeze mid", lambda x: x.unsqueeze(2), lambda a: a[:, :, None]),
    ("squeeze", lambda x: x[:, :1, None].squeeze(), lambda a: a[:, 0, :]),
    ("squeeze dim", lambda x: x[:, :1].squeeze(1), lambda a: a[:, 0]),
    ("squeeze dims", lambda x: x[:1, :1].squeeze((0, 1)), lambda a: a[0, 0]),
    ("squeeze non-1", lambda x: x.squeeze(0), lambda a: a),
    ("flatten", lambda x: x.flatten(), lambda a: a.reshape(-1)),
    ("flatten 1", lambda x: x.flatten(1), lambda a: a.reshape(2, 12)),
    ("flatten 0 1", lambda x: x.flatten(0, 1), lambda a: a.reshape(6, 4)),
    ("unflatten", lambda x: x.unflatten(2, (2, 2)), lambda a: a.reshape(2, 3, 2, 2)),
    ("unflatten -1", lambda x: x.unflatten(-1, (-1, 2)), lambda a: a.reshape(2, 3, 2, 2)),
    ("narrow", lambda x: x.narrow(2, 1, 2), lambda a: a[:, :, 1:3]),
    ("narrow neg start", lambda x: x.narrow(1, -2, 2), lambda a: a[:, 1:3]),
    ("narrow empty", lambda x: x.narrow(2, 4, 0), lambda a: a[:, :, 4:4]),
    ("select", lambda x: x.select(1, -1), lambda a: a[:, -1]),
    ("slice op", lambda x: tp.ops.tensorplug.slice.Tensor(x, 2, 1, None, 2), lambda a: a[:, :, 1::2]),
    ("slice op clamps", lambda x: tp.ops.tensorplug.slice.Tensor(x, 0, -10, 10), lambda a: a),
    ("diagonal", lambda x: x.diagonal(), lambda a: np.diagonal(a)),
    ("diagonal dims", lambda x: x.diagonal(0, 1, 2), lambda a: np.diagonal(a, 0, 1, 2)),
    ("diagonal +1", lambda x: x.diagonal(1, 1, 2), lambda a: np.diagonal(a, 1, 1, 2)),
    ("diagonal -1", lambda x: x.diagonal(-1, -2, -1), lambda a: np.diagonal(a, -1, 1, 2)),
    ("diagonal past end", lambda x: x.diagonal(5, 1, 2), lambda a: np.diagonal(a, 5, 1, 2)),
    ("diagonal swapped", lambda x: x.diagonal(1, 2, 1), lambda a: np.diagonal(a, 1, 2, 1)),
    ("unfold", lambda x: x.unfold(2, 2, 1), lambda a: sliding(a, 2, 1, 2)),
    ("unfold step", lambda x: x.unfold(2, 2, 2), lambda a: sliding(a, 2, 2, 2)),
    ("unfold dim0", lambda x: x.unfold(0, 1, 1), lambda a: sliding(a, 1, 1, 0)),
    ("movedim", lambda x: x.movedim(0, -1), lambda a: np.moveaxis(a, 0, -1)),
    ("movedim multi", lambda x: x.movedim((0, 1), (2, 0)), lambda a: np.moveaxis(a, (0, 1), (2, 0))),
    ("moveaxis", lambda x: tp.moveaxis(x, 1, 0), lambda a: np.moveaxis(a, 1, 0)),
    ("as_strided", lambda x: x.as_strided((3, 3), (4, 1)), lambda a: a.reshape(-1)[[[0, 1, 2], [4, 5, 6], [8, 9, 10]]]),
    ("as_strided offset", lambda x: x.as_strided((2, 2), (1, 2), 3), lambda a: np.array([[3, 5], [4, 6]])),
    ("as_strided of view", lambda x: x[1].as_strided((2,), (5,)), lambda a: np.array([12, 17])),
    ("view_as", lambda x: x.view_as(tp.zeros(4, 6)), lambda a: a.reshape(4, 6)),
    ("alias (x[...])", lambda x: x[...], lambda a: a),
    ("chained", lambda x: x.transpose(0, 1)[1:].unsqueeze(0).select(3, 2), lambda a: a.swapaxes(0, 1)[None, 1:, :, 2]),
]


@pytest.mark.parametrize("name,op,np_op", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_values_and_aliasing(name, op, np_op):
    x = base()
    v = op(x)
    expected = np_op(ref())
    assert v.shape == expected.shape
    np.testing.assert_array_equal(v.numpy(), expected)
    assert v.is_view and v._base is x._base
    if v.numel():
        assert np.shares_memory(v.numpy(), x.numpy())
    # the strides reported are the ones the values are laid out with
    assert v.stride() == tuple(s // 8 for s in v.numpy().strides)


WRITABLE_CASES = [c for c in VIEW_CASES if not c[0].startswith("expand")]  # expanded views overlap themselves


@pytest.mark.parametrize("name,op,np_op", WRITABLE_CASES, ids=[c[0] for c in WRITABLE_CASES])
def test_write_through_view_reaches_base_and_bumps_shared_version(name, op, np_op):
    x = tp.zeros(2, 3, 4, dtype=tp.int64)
    v = op(x)
    before = x._version
    v.fill_(7)
    expected = np.zeros(24, dtype=np.int64)
    expected[np_op(ref()).reshape(-1)] = 7  # ref() holds each element's flat position
    np.testing.assert_array_equal(x.numpy().reshape(-1), expected)
    assert x._version == v._version == before + 1


def test_views_of_views_keep_the_root_base_and_storage():
    x = tp.arange(12.)
    v = x.view(3, 4)
    w = v.t()[1:]
    assert v._base is x and w._base is x
    assert w.untyped_storage() is x.untyped_storage()
    w.zero_()
    np.testing.assert_array_equal(x.numpy(), np.where(np.arange(12) % 4 == 0, np.arange(12.), 0.))


def test_reshape_views_when_possible_and_copies_otherwise():
    x = base()
    v = x.reshape(4, 6)
    assert v.is_view and np.shares_memory(v.numpy(), x.numpy())
    t = x.transpose(0, 1)
    c = t.reshape(-1)
    np.testing.assert_array_equal(c.numpy(), ref().swapaxes(0, 1).reshape(-1))
    assert not c.is_view and c._base is None
    assert not np.shares_memory(c.numpy(), x.numpy())
    assert c.is_contiguous()


def test_shape_methods_take_pytorchs_keyword():
    x = tp.arange(6)
    assert x.view(size=(2, 3)).shape == (2, 3) and x.view(size=[3, -1]).shape == (3, 2)
    assert x.reshape(shape=(3, 2)).shape == (3, 2)
    assert x.view(2, 3).permute(dims=(1, 0)).shape == (3, 2)
    assert x.expand(size=(2, 6)).shape == (2, 6)
    for call, message in [(lambda: x.reshape(2, shape=(2, 3)), "reshape() got multiple values for argument 'shape'"),
                          (lambda: x.expand(6, size=(6,)), "expand() got multiple values for argument 'size'"),
                          (lambda: x.permute(0, dims=(0,)), "permute() got multiple values for argument 'dims'"),
                          (lambda: x.reshape(shape=6), "reshape(): argument 'shape' must be tuple of ints, not int")]:
        with pytest.raises(TypeError, match=re.escape(message)):
            call()


def test_contiguous_storage_offset_and_strides():
    x = base()
    assert x.is_contiguous() and x.stride() == (12, 4, 1) and x.stride(-1) == 1
    t = x.transpose(1, 2)
    assert not t.is_contiguous() and t.stride() == (12, 1, 4)
    c = t.contiguous()
    assert c.is_contiguous() and c.stride() == (12, 3, 1) and not c.is_view
    np.testing.assert_array_equal(c.numpy(), ref().swapaxes(1, 2))
    assert x.contiguous() is x
    assert x[1].storage_offset() == 12
    assert x[1, 2, 1:].storage_offset() == 21
    assert x.narrow(2, 3, 1).storage_offset() == 3
    assert x.diagonal(1, 1, 2).storage_offset() == 1
    assert x.diagonal(-1, 1, 2).storage_offset() == 4
    # a size-1 dim does not break contiguity, whatever its stride
    assert x[:, :1].is_contiguous() is False and x[:1].is_contiguous()
    assert x.expand(2, 2, 3, 4).stride() == (0, 12, 4, 1)


def test_zero_dim_and_empty_views():
    s = tp.tensor(3.)
    assert s.view(1).shape == (1,) and s.view(()).shape == ()
    assert s.reshape(1, 1).shape == (1, 1)
    assert s.flatten().shape == (1,)
    assert s.unsqueeze(-1).shape == (1,)
    assert s.t().shape == () and s.transpose(0, -1).shape == ()
    assert s.squeeze(0).shape == ()
    assert s.expand(2, 3).stride() == (0, 0)
    assert s.unfold(0, 1, 1).tolist() == [3.]
    e = tp.zeros(0, 3)
    assert e.view(3, 0).shape == (3, 0) and e.reshape(1, 0, 3).shape == (1, 0, 3)
    assert e.transpose(0, 1).shape == (3, 0)
    assert tp.zeros(2, 0).unflatten(1, (2, -1)).shape == (2, 2, 0)


def _raises(exc, msg):
    return exc, "^" + re.escape(msg) + "$"


ERROR_CASES = [
    ("view incompatible", lambda x: x.transpose(0, 1).view(-1), _raises(
        RuntimeError, "view size is not compatible with input tensor's size and stride (at least one dimension "
        "spans across two contiguous subspaces). Use .reshape(...) instead.")),
    ("view bad numel", lambda x: x.view(5, -1), _raises(
        RuntimeError, "shape '[5, -1]' is invalid for input of size 24")),
    ("view bad numel 2", lambda x: x.view(5, 5), _raises(
        RuntimeError, "shape '[5, 5]' is invalid for input of size 24")),
    ("view two -1", lambda x: x.view(-1, -1), _raises(RuntimeError, "only one dimension can be inferred")),
    ("view -2", lambda x: x.view(-2, 12), _raises(
        RuntimeError, "invalid shape dimension -2 at index 0 of shape [-2, 12]")),
    ("reshape -1 with 0", lambda x: x.reshape(-1, 0), _raises(
        RuntimeError, "shape '[-1, 0]' is invalid for input of size 24")),
    ("reshape ambiguous", lambda x: tp.zeros(0, 3).reshape(-1, 0), _raises(
        RuntimeError, "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size "
        "-1 can be any value and is ambiguous")),
    ("permute len", lambda x: x.permute(2, 0), _raises(
        RuntimeError, "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
        "the desired ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 2")),
    ("permute dup", lambda x: x.permute(2, 0, 0), _raises(RuntimeError, "permute(): duplicate dims are not allowed.")),
    ("permute range", lambda x: x.permute(2, 0, 5), _raises(
        IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 5)")),
    ("t 3d", lambda x: x.t(), _raises(RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is 3D")),
    ("transpose range", lambda x: x.transpose(0, 5), _raises(
        IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 5)")),
    ("expand mismatch", lambda x: x.expand(3, 3, 4), _raises(
        RuntimeError, "The expanded size of the tensor (3) must match the existing size (2) at non-singleton "
        "dimension 0.  Target sizes: [3, 3, 4].  Tensor sizes: [2, 3, 4]")),
    ("expand too few", lambda x: x.expand(2, 3), _raises(
        RuntimeError, "expand(tensorplug.int64{[2, 3, 4]}, size=[2, 3]): the number of sizes provided (2) must be "
        "greater or equal to the number of dimensions in the tensor (3)")),
    ("expand -1 leading", lambda x: x.expand(-1, 2, 3, 4), _raises(
        RuntimeError, "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0")),
    ("unsqueeze range", lambda x: x.unsqueeze(4), _raises(
        IndexError, "Dimension out of range (expected to be in range of [-4, 3], but got 4)")),
    ("squeeze range", lambda x: x.squeeze(5), _raises(
        IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 5)")),
    ("narrow past end", lambda x: x.narrow(2, 1, 4), _raises(
        RuntimeError, "start (1) + length (4) exceeds dimension size (4).")),
    ("narrow start", lambda x: x.narrow(2, 5, 0), _raises(
        IndexError, "start out of range (expected to be in range of [-4, 4], but got 5)")),
    ("narrow length", lambda x: x.narrow(2, 1, -1), _raises(RuntimeError, "narrow(): length must be non-negative.")),
    ("narrow 0-dim", lambda x: tp.tensor(3.).narrow(0, 0, 1), _raises(
        RuntimeError, "narrow() cannot be applied to a 0-dim tensor.")),
    ("select range", lambda x: x.select(1, 3), _raises(
        IndexError, "select(): index 3 out of range for tensor of size [2, 3, 4] at dimension 1")),
    ("select 0-dim", lambda x: tp.tensor(3.).select(0, 0), _raises(
        IndexError, "select() cannot be applied to a 0-dim tensor.")),
    ("diagonal same dims", lambda x: x.diagonal(0, 1, 1), _raises(
        RuntimeError, "diagonal dimensions cannot be identical 1, 1")),
    ("unfold too big", lambda x: x.unfold(2, 5, 1), _raises(
        RuntimeError, "maximum size for tensor at dimension 2 is 4 but size is 5")),
    ("unfold step", lambda x: x.unfold(2, 2, 0), _raises(RuntimeError, "step is 0 but must be > 0")),
    ("movedim lengths", lambda x: x.movedim((0, 1), (1,)), _raises(
        RuntimeError, "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the same "
        "number of dims as destination ([1] dims)")),
    ("movedim repeated", lambda x: x.movedim((0, 0), (1, 2)), _raises(
        RuntimeError, "movedim: repeated dim in `source` ([0, 0])")),
    ("as_strided offset", lambda x: x.as_strided((2, 2), (1, 2), -1), _raises(
        RuntimeError, "Tensor: invalid storage offset -1")),
    ("as_strided neg stride", lambda x: x.as_strided((2, 2), (-1, 2)), _raises(
        RuntimeError, "as_strided: Negative strides are not supported at the moment, got strides: [-1, 2]")),
    ("as_strided lengths", lambda x: x.as_strided((2,), (1, 2)), _raises(
        RuntimeError, "mismatch in length of strides and shape")),
    ("flatten order", lambda x: x.flatten(1, 0), _raises(
        RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim")),
    ("unflatten product", lambda x: x.unflatten(2, (3, -1)), _raises(
        RuntimeError, "unflatten: Provided sizes [3, -1] don't multiply up to the size of dim 2 (4) in the input "
        "tensor")),
    ("unflatten empty", lambda x: x.unflatten(2, ()), _raises(RuntimeError, "unflatten: sizes must be non-empty")),
]


@pytest.mark.parametrize("name,op,err", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_view_errors(name, op, err):
    exc, match = err
    with pytest.raises(exc, match=match):
        op(base())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4).flatmap(
    lambda shape: st.tuples(st.just(shape), st.permutations(range(len(shape))))))
def test_permute_then_reshape_matches_numpy(case):
    shape, perm = case
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = tp.from_numpy(a.copy())
    p = x.permute(perm)
    np.testing.assert_array_equal(p.numpy(), a.transpose(perm))
    r = p.reshape(-1)
    np.testing.assert_array_equal(r.numpy(), a.transpose(perm).reshape(-1))
    # reshape returned a view exactly when numpy could reshape without copying
    assert r.is_view == np.shares_memory(a.transpose(perm).reshape(-1), a)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_view_of_sliced_tensor_agrees_with_numpy_when_it_can(shape, data):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    d = data.draw(st.integers(0, len(shape) - 1))
    start = data.draw(st.integers(0, shape[d] - 1))
    x = tp.from_numpy(a.copy()).narrow(d, start, shape[d] - start)
    sub = a[(slice(None),) * d + (slice(start, None),)]
    try:
        flat = np.reshape(sub, -1, copy=False)  # numpy's own "is a view possible" answer
    except ValueError:
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            x.view(-1)
    else:
        np.testing.assert_array_equal(x.view(-1).numpy(), flat)
