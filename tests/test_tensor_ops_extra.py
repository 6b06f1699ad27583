"""Shape, indexing and set-like tensor ops (ops/shape_extra.py, ops/index_extra.py) without PyTorch:
views, version counters, gradients, vmap, warnings, tags and errors. The op database checks the
values against numpy on every backend; tests/test_tensor_ops_extra_torch_oracle.py against PyTorch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import Tag
from tensorplug.autograd import gradcheck


def _f64(*shape, seed=0):
    return tp.tensor(np.random.default_rng(seed).standard_normal(shape))


# -- views ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda x: x.diagonal(1), lambda x: x.movedim(0, 1), lambda x: x.ravel(),
    lambda x: tp.broadcast_to(x[:1], (5, 3, 4)), lambda x: tp.tensor_split(x, 2, 1)[1],
    lambda x: tp.hsplit(x, 2)[0], lambda x: tp.meshgrid(x[0], x[1], indexing="ij")[0],
    lambda x: tp.broadcast_tensors(x, tp.zeros(2, 1, 4))[0],
], ids=["diagonal", "movedim", "ravel", "broadcast_to", "tensor_split", "hsplit", "meshgrid", "broadcast_tensors"])
def test_views_share_memory_and_history(make):
    x = tp.zeros(3, 4)
    v = make(x)
    assert v._base is x or v._base is x._base or v._base is not None
    assert v.untyped_storage() is x.untyped_storage()
    before = x._version
    x.add_(1)
    assert v._version == before + 1
    assert float(v.sum()) == float(v.numel())


def test_ravel_copies_a_non_contiguous_tensor():
    x = tp.zeros(3, 4)
    r = x.t().ravel()
    assert r._base is None
    r.add_(1)
    assert float(x.sum()) == 0.0


def test_a_write_through_a_diagonal_view_reaches_the_base_and_its_gradient():
    x = _f64(3, 3).requires_grad_()
    y = x * 1
    y.diagonal().mul_(2)
    y.sum().backward()
    assert x.grad.tolist() == [[2.0, 1.0, 1.0], [1.0, 2.0, 1.0], [1.0, 1.0, 2.0]]


def test_copies_do_not_alias():
    x = tp.arange(6.0).reshape(2, 3)
    for out in (x.repeat(1, 1), tp.tile(x, (1,)), tp.rot90(x, 0), tp.fliplr(x), tp.diag_embed(x[0]),
                tp.diff(x, n=0), tp.fill(x, 1)):
        assert out.untyped_storage() is not x.untyped_storage() or out.data_ptr() != x.data_ptr()


# -- in-place variants --------------------------------------------------------------------------------
def test_in_place_index_ops_return_self_and_bump_the_version_once():
    for call in (lambda t: t.index_add_(0, tp.tensor([0, 0]), tp.ones(2, 3), alpha=2),
                 lambda t: t.index_copy_(1, tp.tensor([2]), tp.ones(2, 1)),
                 lambda t: t.index_fill_(1, tp.tensor([0, -1]), 5),
                 lambda t: t.index_fill_(0, tp.tensor([1]), tp.tensor(3.0)),
                 lambda t: t.scatter_reduce_(0, tp.tensor([[1, 0, 1]]), tp.ones(1, 3), "amax", include_self=False),
                 lambda t: t.scatter_(0, tp.tensor([[1, 0, 1]]), tp.ones(1, 3), reduce="add"),
                 lambda t: t.scatter_(0, tp.tensor([[1, 0, 1]]), 2.0, reduce="multiply")):
        t = tp.zeros(2, 3)
        v = t._version
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert call(t) is t
        assert t._version == v + 1


def test_index_add_accumulates_duplicates_with_alpha():
    out = tp.zeros(3).index_add(0, tp.tensor([0, 2, 0]), tp.tensor([1.0, 2.0, 3.0]), alpha=10)
    assert out.tolist() == [40.0, 0.0, 20.0]


def test_zero_and_fill():
    x = tp.ones(2, 2)
    assert tp.zero_(x) is x and x.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    v = tp.tensor(3.0, requires_grad=True)
    y = tp.fill(tp.zeros(2, 3), v)
    assert y.tolist() == [[3.0] * 3] * 2
    y.sum().backward()
    assert float(v.grad) == 6.0
    assert tp.fill(tp.zeros(2, dtype=tp.int64), 7).dtype is tp.int64


# -- gradients --------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradcheck(reduce, include_self):
    x = _f64(3, 2, seed=1).requires_grad_()
    src = _f64(2, 2, seed=2).requires_grad_()
    index = tp.tensor([[0, 1], [0, 0]])
    assert gradcheck(lambda a, b: a.scatter_reduce(0, index, b, reduce, include_self=include_self), (x, src))


def test_scatter_reduce_prod_gradient_with_zeros():
    # the product's gradient is the product of the other members: exact also where members are zero
    x = tp.tensor([0.0, 2.0], dtype=tp.float64, requires_grad=True)
    src = tp.tensor([3.0, 0.0, 5.0], dtype=tp.float64, requires_grad=True)
    out = x.scatter_reduce(0, tp.tensor([0, 1, 1]), src, "prod")
    out.sum().backward()
    assert x.grad.tolist() == [3.0, 0.0]
    assert src.grad.tolist() == [0.0, 10.0, 0.0]


@pytest.mark.parametrize("fn", [
    lambda x: x.repeat(2, 1, 2), lambda x: tp.tile(x, (2,)), lambda x: tp.repeat_interleave(x, 2, dim=1),
    lambda x: tp.repeat_interleave(x, tp.tensor([2, 0, 1]), dim=0), lambda x: tp.diff(x, 2, 1),
    lambda x: tp.diag_embed(x, 1, 0, 2), lambda x: tp.diag(x[0], -1), lambda x: tp.trace(x[:, :3]),
    lambda x: tp.take_along_dim(x, tp.tensor([[0, 3]]), 1), lambda x: tp.rot90(x, 1),
    lambda x: tp.masked_select(x, x > 0), lambda x: tp.index_add(x, 1, tp.tensor([3, 3]), x[:, :2] * 2),
    lambda x: tp.index_copy(x, 0, tp.tensor([2, 0]), x[:2] ** 2), lambda x: tp.index_fill(x, 1, tp.tensor([1]), 2.0),
    lambda x: tp.tensor_split(x, [1, 3], 1)[1], lambda x: tp.broadcast_to(x[:1], (2, 3, 4)),
], ids=["repeat", "tile", "repeat_interleave", "repeat_interleave_tensor", "diff", "diag_embed", "diag", "trace",
        "take_along_dim", "rot90", "masked_select", "index_add", "index_copy", "index_fill", "tensor_split",
        "broadcast_to"])
def test_gradcheck(fn):
    assert gradcheck(fn, (_f64(3, 4, seed=3).requires_grad_(),))


def test_ops_without_a_derivative_raise_in_backward():
    x = _f64(5).requires_grad_()
    for out in (tp.histc(x, 3), tp.unique(x * 1)):
        with pytest.raises(NotImplementedError, match="the derivative for"):
            out.sum().backward()


# -- vmap ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [tp.nonzero, tp.argwhere, lambda x: tp.masked_select(x, x > 0), tp.unique,
                                lambda x: tp.unique(x, dim=0), tp.unique_consecutive,
                                lambda x: tp.bincount(x.long().abs())],
                         ids=["nonzero", "argwhere", "masked_select", "unique", "unique_dim", "unique_consecutive",
                              "bincount"])
def test_vmap_refuses_dynamic_shape_ops(fn):
    with pytest.raises(RuntimeError, match="vmap: We do not support batching operators that can output dynamic "
                                           "shape. Attempted to vmap over tensorplug::"):
        tp.vmap(fn)(_f64(3, 4))


def test_dynamic_shape_ops_are_tagged():
    from tensorplug.plugin_api import lookup_op
    for name in ("nonzero", "masked_select", "_unique2", "unique_dim", "unique_consecutive", "bincount",
                 "repeat_interleave.Tensor"):
        assert Tag.dynamic_output_shape in lookup_op(f"tensorplug::{name}").tags, name


def test_vmap_of_searchsorted_and_scatter_reduce_use_rules():
    seq = tp.sort(_f64(3, 5))[0]
    values = _f64(3, 4, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no slow-fallback warning: these have batching rules
        got = tp.vmap(tp.searchsorted)(seq, values)
        got_shared = tp.vmap(lambda v: tp.searchsorted(seq[0], v))(values)
        idx = tp.tensor([[0, 1, 0, 1]]).expand(3, 4)
        red = tp.vmap(lambda s, i: tp.zeros(2, dtype=tp.float64).scatter_reduce(0, i, s, "amax"))(values, idx)
    assert tp.equal(got, tp.stack([tp.searchsorted(seq[i], values[i]) for i in range(3)]))
    assert tp.equal(got_shared, tp.searchsorted(seq[0], values))
    assert tp.allclose(red, tp.stack([tp.zeros(2, dtype=tp.float64).scatter_reduce(0, idx[i], values[i], "amax")
                                      for i in range(3)]))


def test_vmap_of_composites():
    x = _f64(3, 2, 4)
    assert tp.allclose(tp.vmap(lambda t: tp.diag_embed(t, 1))(x), tp.stack([tp.diag_embed(t, 1) for t in x]))
    assert tp.allclose(tp.vmap(lambda t: t.repeat(2, 1))(x), tp.stack([t.repeat(2, 1) for t in x]))
    src = _f64(3, 1, 4, seed=1)
    got = tp.vmap(lambda t, s: tp.index_add(t, 0, tp.tensor([1]), s))(x, src)
    assert tp.allclose(got, tp.stack([tp.index_add(t, 0, tp.tensor([1]), s) for t, s in zip(x, src)]))


# -- behaviours -------------------------------------------------------------------------------------------
def test_meshgrid_warns_without_indexing():
    a, b = tp.arange(3), tp.arange(2)
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        x, y = tp.meshgrid(a, b)
    assert x.shape == (3, 2) and y.shape == (3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, y = tp.meshgrid(a, b, indexing="xy")
    assert x.shape == (2, 3) and x.tolist() == [[0, 1, 2], [0, 1, 2]]


def test_scatter_with_tensor_src_and_reduce_warns_about_deprecation():
    from tensorplug.ops import index_extra
    index_extra._REDUCE_WARNED[0] = False
    with pytest.warns(UserWarning, match="The reduce argument of torch.scatter with Tensor src is deprecated"):
        tp.zeros(3).scatter(0, tp.tensor([0]), tp.ones(1), reduce="add")


def test_nonzero_as_tuple_and_unique_outputs():
    x = tp.tensor([[0, 2], [3, 0]])
    rows, cols = tp.nonzero(x, as_tuple=True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    vals, inv, counts = tp.unique(tp.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    assert vals.tolist() == [1, 2, 3] and inv.tolist() == [2, 0, 2, 1] and counts.tolist() == [1, 1, 2]
    assert isinstance(tp.unique(tp.tensor([1])), tp.Tensor)
    v, c = tp.unique_consecutive(tp.tensor([1, 1, 2, 1]), return_counts=True)
    assert v.tolist() == [1, 2, 1] and c.tolist() == [2, 1, 1]


def test_new_factories_inherit_dtype_and_device():
    x = tp.zeros(2, dtype=tp.int16)
    for t in (x.new_zeros(3), x.new_ones((2, 2)), x.new_empty(1), x.new_full((2,), 4), x.new_tensor([1, 2])):
        assert t.dtype is tp.int16 and t.device == x.device
    assert x.new_zeros(2, dtype=tp.float32).dtype is tp.float32
    assert x.new_ones(2, requires_grad=False).requires_grad is False


def test_search_and_count():
    seq = tp.tensor([1.0, 2.0, 4.0])
    assert tp.searchsorted(seq, tp.tensor([2.0, 3.0])).tolist() == [1, 2]
    assert tp.searchsorted(seq, 2.0, right=True).item() == 2
    assert tp.searchsorted(seq, tp.tensor([2.0]), out_int32=True).dtype is tp.int32
    assert tp.bucketize(tp.tensor([2.0, 5.0]), seq).tolist() == [1, 3]
    assert tp.bincount(tp.tensor([0, 2, 2]), minlength=4).tolist() == [1, 0, 2, 0]
    assert tp.histc(tp.tensor([1.0, 2.0, 2.0, 3.0]), bins=3).tolist() == [1.0, 2.0, 1.0]
    assert tp.equal(tp.ones(2), tp.ones(2, dtype=tp.int64)) is True
    assert tp.equal(tp.ones(2), tp.ones(3)) is False
    assert tp.isin(tp.tensor([1, 2, 3]), tp.tensor([2, 5]), invert=True).tolist() == [True, False, True]


def test_tri_indices():
    assert tp.tril_indices(3, 3).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert tp.triu_indices(2, 3, 1).tolist() == [[0, 0, 1], [1, 2, 2]]
    assert tp.triu_indices(2, 2, 5).shape == (2, 0)


@pytest.mark.parametrize("call, exc, msg", [
    (lambda: tp.ones(3, 4).repeat(2), RuntimeError, "Number of dimensions of repeat dims"),
    (lambda: tp.diff(tp.ones(3), n=-1), RuntimeError, "order must be non-negative but got -1"),
    (lambda: tp.trace(tp.ones(2, dtype=tp.bool).reshape(1, 2)), NotImplementedError, "\"trace\" not implemented"),
    (lambda: tp.rot90(tp.ones(3, 4), 1, [0, 0]), RuntimeError, "expected rotation dims to be different"),
    (lambda: tp.bincount(tp.tensor([-1])), RuntimeError, "bincount only supports 1-d non-negative integral"),
    (lambda: tp.histc(tp.tensor([1.0, float("nan")])), RuntimeError, r"histc: range of \[nan, nan\] is not finite"),
    (lambda: tp.isin(1, 2), TypeError, "isin"),
    (lambda: tp.index_fill(tp.ones(2, dtype=tp.int8), 0, tp.tensor([0]), 300), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    (lambda: tp.zeros(3).scatter(0, tp.tensor([0]), 1.0, reduce="max"), RuntimeError,
     "reduce argument must be either add or multiply"),
    (lambda: tp.meshgrid(), RuntimeError, "meshgrid expects a non-empty TensorList"),
    (lambda: tp.searchsorted(tp.tensor([1, 2]), tp.tensor([1]), sorter=tp.tensor([0, 1, 2])), RuntimeError,
     "boundary and sorter must have the same size"),
], ids=["repeat", "diff", "trace_bool", "rot90", "bincount", "histc_nan", "isin", "index_fill_overflow",
        "scatter_reduce_arg", "meshgrid_empty", "sorter_size"])
def test_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_public_functions_and_methods_exist_where_pytorch_has_them():
    functions = ["tile", "repeat_interleave", "broadcast_to", "broadcast_tensors", "nonzero", "argwhere",
                 "masked_select", "unique", "unique_consecutive", "diff", "diag", "diag_embed", "diagonal", "trace",
                 "take_along_dim", "tensor_split", "hsplit", "vsplit", "dsplit", "ravel", "movedim", "moveaxis",
                 "index_add", "index_copy", "index_fill", "scatter", "scatter_reduce", "searchsorted", "bucketize",
                 "bincount", "histc", "meshgrid", "tril_indices", "triu_indices", "rot90", "fliplr", "flipud", "fill",
                 "zero_", "equal", "isin"]
    methods = ["repeat", "tile", "repeat_interleave", "broadcast_to", "nonzero", "argwhere", "masked_select", "unique",
               "unique_consecutive", "diff", "diag", "diag_embed", "diagonal", "trace", "take_along_dim",
               "tensor_split", "hsplit", "vsplit", "dsplit", "ravel", "movedim", "moveaxis", "new_zeros", "new_ones",
               "new_full", "new_empty", "new_tensor", "index_add", "index_add_", "index_copy", "index_copy_",
               "index_fill", "index_fill_", "scatter_reduce", "scatter_reduce_", "bincount", "histc", "rot90",
               "fliplr", "flipud", "fill_", "zero_", "equal"]
    assert [n for n in functions if not hasattr(tp, n)] == []
    assert [n for n in methods if not hasattr(tp.Tensor, n)] == []
    for n in ("repeat", "new_zeros", "searchsorted", "isin"):  # as in PyTorch: method or function only
        assert hasattr(tp, n) == (n in ("searchsorted", "isin"))
