"""Shape, indexing and set-like tensor ops against PyTorch: values, dtypes, shapes, gradients, error types
and messages, views, warnings and vmap's refusals (skipped without torch)."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)
A = _RNG.standard_normal((3, 4)).astype(np.float32)
I3 = _RNG.integers(0, 5, (3, 4))
SEQ = np.array([1.0, 2, 3, 5, 8])
IDX2 = np.array([[0, 1, 2, 0], [0, 0, 2, 2]])
SRC = _RNG.standard_normal((2, 4)).astype(np.float32)


def _conv(x, lib):
    if isinstance(x, np.ndarray):
        return torch.tensor(x) if lib is torch else tp.tensor(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_conv(v, lib) for v in x)
    return x


def _out(r):
    if isinstance(r, (tuple, list)):
        return [_out(v) for v in r]
    if isinstance(r, torch.Tensor):
        return r.detach().numpy(), str(r.dtype).split(".")[-1]
    if isinstance(r, tp.Tensor):
        return r.detach().numpy(), r.dtype.name
    return r


def _assert_same(ours, theirs, what):
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), f"{what}: {ours} vs {theirs}"
        for k, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same(a, b, f"{what}[{k}]")
    elif isinstance(theirs, tuple):
        (a, ad), (b, bd) = ours, theirs
        assert ad == bd, f"{what}: dtype {ad}, PyTorch {bd}"
        assert a.shape == b.shape, f"{what}: shape {a.shape}, PyTorch {b.shape}"
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-5, atol=1e-5,
                                   err_msg=what)
    else:
        assert ours == theirs and type(ours) is type(theirs), f"{what}: {ours!r} vs {theirs!r}"


def _fn(name):
    return getattr(torch, name), getattr(tp, name)


def _meth(name):
    f = (lambda x, *a, **k: getattr(x, name)(*a, **k))
    return f, f


def _varargs(name):
    return (lambda *t, **k: getattr(torch, name)(*t, **k)), (lambda *t, **k: getattr(tp, name)(*t, **k))


CASES = [
    ("repeat", _meth("repeat"), (A, 2, 1, 3), {}),
    ("repeat_same", _meth("repeat"), (A, 1, 1), {}),
    ("tile", _fn("tile"), (A, (2,)), {}),
    ("tile_long", _fn("tile"), (A, (2, 1, 2)), {}),
    ("repeat_interleave", _fn("repeat_interleave"), (A, 2), {}),
    ("repeat_interleave_dim", _fn("repeat_interleave"), (A, 2), {"dim": 1}),
    ("repeat_interleave_tensor", _fn("repeat_interleave"), (A, np.array([1, 0, 2])), {"dim": 0}),
    ("repeat_interleave_0d", _fn("repeat_interleave"), (A, np.array(2)), {"dim": 1}),
    ("repeat_interleave_only", _fn("repeat_interleave"), (np.array([1, 3, 0, 2]),), {}),
    ("repeat_interleave_int32", _fn("repeat_interleave"), (np.array([1, 3], np.int32),), {}),
    ("broadcast_to", _fn("broadcast_to"), (np.ones((3, 1), np.float32), (2, 3, 4)), {}),
    ("broadcast_tensors", _varargs("broadcast_tensors"), (np.ones((3, 1)), np.ones((4,))), {}),
    ("nonzero", _fn("nonzero"), (I3,), {}),
    ("nonzero_tuple", _fn("nonzero"), (I3,), {"as_tuple": True}),
    ("nonzero_0d", _fn("nonzero"), (np.array(2.0),), {}),
    ("nonzero_0d_tuple", _fn("nonzero"), (np.array(2.0),), {"as_tuple": True}),
    ("argwhere", _fn("argwhere"), (I3,), {}),
    ("masked_select", _fn("masked_select"), (A, A > 0), {}),
    ("masked_select_broadcast", _fn("masked_select"), (A, np.array([True, False, True, True])), {}),
    ("unique", _fn("unique"), (I3,), {}),
    ("unique_flags", _fn("unique"), (I3,), {"return_inverse": True, "return_counts": True}),
    ("unique_dim0", _fn("unique"), (np.array([[1, 2], [1, 2], [0, 3]]),),
     {"dim": 0, "return_inverse": True, "return_counts": True}),
    ("unique_dim1", _fn("unique"), (np.array([[1, 2, 1], [1, 2, 1], [0, 3, 0]]),),
     {"dim": 1, "return_inverse": True, "return_counts": True}),
    ("unique_nan", _fn("unique"), (np.array([np.nan, 1.0, np.nan, 1.0]),), {"return_counts": True}),
    ("unique_empty_dim", _fn("unique"), (np.ones((0, 3), np.float32),), {"dim": 0, "return_counts": True}),
    ("unique_consecutive", _fn("unique_consecutive"), (np.array([1, 1, 2, 2, 3, 1, 1, 2]),),
     {"return_inverse": True, "return_counts": True}),
    ("unique_consecutive_dim", _fn("unique_consecutive"), (np.array([[1, 1, 2], [1, 1, 2]]),),
     {"dim": 1, "return_inverse": True, "return_counts": True}),
    ("diff", _fn("diff"), (A,), {}),
    ("diff_n2_dim0", _fn("diff"), (A,), {"n": 2, "dim": 0}),
    ("diff_prepend_append", _fn("diff"), (A,),
     {"prepend": np.ones((3, 1), np.float32), "append": np.zeros((3, 2), np.float32)}),
    ("diff_bool", _fn("diff"), (A > 0,), {}),
    ("diff_n_large", _fn("diff"), (A,), {"n": 6}),
    ("diag_vector", _fn("diag"), (np.arange(3.0), 1), {}),
    ("diag_vector_neg", _fn("diag"), (np.arange(3.0), -2), {}),
    ("diag_matrix", _fn("diag"), (A, 1), {}),
    ("diag_embed", _fn("diag_embed"), (A,), {}),
    ("diag_embed_offset", _fn("diag_embed"), (A, 1, 0, 2), {}),
    ("diag_embed_neg", _fn("diag_embed"), (A, -1, 2, 0), {}),
    ("diagonal", _fn("diagonal"), (A, 1), {}),
    ("trace", _fn("trace"), (A,), {}),
    ("trace_int", _fn("trace"), (I3,), {}),
    ("trace_int8", _fn("trace"), (I3.astype(np.int8),), {}),
    ("take_along_dim", _fn("take_along_dim"), (A, np.array([[0], [2], [1]]), 1), {}),
    ("take_along_dim_broadcast", _fn("take_along_dim"), (A, np.array([[0, 3]]), 1), {}),
    ("take_along_dim_flat", _fn("take_along_dim"), (A, np.array([0, 11])), {}),
    ("tensor_split_sections", _fn("tensor_split"), (np.arange(7.0), 3), {}),
    ("tensor_split_indices", _fn("tensor_split"), (np.arange(7.0), [1, 5]), {}),
    ("tensor_split_unordered", _fn("tensor_split"), (np.arange(7.0), [5, 1, 9, -2]), {}),
    ("tensor_split_tensor", _fn("tensor_split"), (A, np.array([1, 3]), 1), {}),
    ("tensor_split_tensor0", _fn("tensor_split"), (A, np.array(2), 1), {}),
    ("hsplit", _fn("hsplit"), (A, 2), {}),
    ("hsplit_list", _fn("hsplit"), (A, [1, 2]), {}),
    ("hsplit_vector", _fn("hsplit"), (np.arange(6.0), 3), {}),
    ("vsplit", _fn("vsplit"), (A, [1]), {}),
    ("dsplit", _fn("dsplit"), (np.ones((2, 2, 4)), 2), {}),
    ("ravel", _fn("ravel"), (A,), {}),
    ("movedim", _fn("movedim"), (np.ones((2, 3, 4)), (0, 1), (2, 0)), {}),
    ("moveaxis", _fn("moveaxis"), (np.ones((2, 3, 4)), 0, -1), {}),
    ("index_add", _fn("index_add"), (A, 0, np.array([0, 2, 0]), np.ones((3, 4), np.float32)), {"alpha": 2}),
    ("index_add_dim1", _fn("index_add"), (A, 1, np.array([3]), np.ones((3, 1), np.float32)), {}),
    ("index_add_0d", _fn("index_add"), (np.array(1.0), 0, np.array([0]), np.array(3.0)), {}),
    ("index_add_int", _fn("index_add"), (I3, 1, np.array([0, 0]), I3[:, :2]), {"alpha": 3}),
    ("index_copy", _fn("index_copy"), (A, 1, np.array([3, 0]), np.ones((3, 2), np.float32)), {}),
    ("index_fill", _fn("index_fill"), (A, 1, np.array([3, 0, -1]), -1.5), {}),
    ("index_fill_tensor", _fn("index_fill"), (A, 0, np.array([1]), np.array(7.0, np.float32)), {}),
    ("index_fill_int", _fn("index_fill"), (I3, 0, np.array([1]), 7), {}),
    ("scatter_add", _fn("scatter"), (A, 0, IDX2, SRC), {"reduce": "add"}),
    ("scatter_multiply_value", _fn("scatter"), (A, 0, IDX2, 2.0), {"reduce": "multiply"}),
    ("scatter_multiply_int", _fn("scatter"), (I3, 0, IDX2, I3[:2]), {"reduce": "multiply"}),
    *[(f"scatter_reduce_{r}_{inc}", _fn("scatter_reduce"), (A, 0, IDX2, SRC, r), {"include_self": inc})
      for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)],
    ("scatter_reduce_int_mean", _fn("scatter_reduce"), (I3, 0, IDX2, I3[:2], "mean"), {"include_self": False}),
    ("scatter_reduce_alias_max", _fn("scatter_reduce"), (A, 0, IDX2, SRC, "max"), {}),
    ("scatter_reduce_bool_sum", _fn("scatter_reduce"), (A > 0, 0, IDX2, SRC > 0, "sum"), {}),
    ("searchsorted", _fn("searchsorted"), (SEQ, np.array([0.0, 2, 4, 9])), {}),
    ("searchsorted_right", _fn("searchsorted"), (SEQ, np.array([0.0, 2, 4, 9])), {"right": True}),
    ("searchsorted_side", _fn("searchsorted"), (SEQ, np.array([0.0, 2, 4, 9])), {"side": "right", "out_int32": True}),
    ("searchsorted_2d", _fn("searchsorted"), (np.array([[1.0, 3, 5], [2, 4, 6]]), np.array([[2.0, 6], [1, 5]])), {}),
    ("searchsorted_sorter", _fn("searchsorted"), (np.array([3.0, 1, 2]), np.array([2.5])),
     {"sorter": np.array([1, 2, 0])}),
    ("searchsorted_scalar", _fn("searchsorted"), (SEQ, 4), {}),
    ("searchsorted_mixed", _fn("searchsorted"), (np.array([1, 3, 5]), np.array([2.5, 3.0])), {}),
    ("bucketize", _fn("bucketize"), (np.array([[0.0, 2], [4, 9]]), SEQ), {}),
    ("bucketize_right", _fn("bucketize"), (np.array([[0.0, 2], [4, 9]]), SEQ), {"right": True}),
    ("bincount", _fn("bincount"), (np.array([0, 3, 3, 1]),), {}),
    ("bincount_weights_f32", _fn("bincount"), (np.array([0, 3, 3, 1]), np.array([0.5, 1, 1, 2], np.float32)),
     {"minlength": 6}),
    ("bincount_weights_int", _fn("bincount"), (np.array([0, 3, 3, 1]), np.array([1, 1, 1, 2])), {}),
    ("bincount_weights_f16", _fn("bincount"), (np.array([0, 1]), np.array([1, 2], np.float16)), {}),
    ("bincount_empty", _fn("bincount"), (np.zeros(0, np.int64),), {}),
    ("histc", _fn("histc"), (A,), {"bins": 5}),
    ("histc_range", _fn("histc"), (A,), {"bins": 4, "min": -1, "max": 1}),
    ("histc_constant", _fn("histc"), (np.ones(3, np.float32),), {"bins": 4}),
    ("meshgrid_ij", _varargs("meshgrid"), (np.arange(3.0), np.arange(2.0), np.arange(4.0)), {"indexing": "ij"}),
    ("meshgrid_xy", _varargs("meshgrid"), (np.arange(3.0), np.arange(2.0), np.arange(4.0)), {"indexing": "xy"}),
    *[(f"tril_indices_{o}", _fn("tril_indices"), (3, 4, o), {}) for o in (-4, -1, 0, 1, 2, 5)],
    *[(f"triu_indices_{o}", _fn("triu_indices"), (4, 3, o), {}) for o in (-4, -1, 0, 1, 2, 5)],
    ("tril_indices_int32", _fn("tril_indices"), (3, 3), {"dtype": "int32"}),
    *[(f"rot90_{k}", _fn("rot90"), (np.ones((2, 3, 4)) * np.arange(4), k, [2, 0]), {}) for k in (-1, 0, 1, 2, 3, 5)],
    ("fliplr", _fn("fliplr"), (A,), {}),
    ("flipud", _fn("flipud"), (A,), {}),
    ("fill_tensor", _fn("fill"), (A, np.array(2.0)), {}),
    ("fill_scalar", _fn("fill"), (I3, 2), {}),
    ("fill_method_tensor", _meth("fill_"), (A.copy(), np.array(3.0)), {}),
    ("zero_", _fn("zero_"), (A.copy(),), {}),
    ("equal_promoted", _fn("equal"), (A, A.astype(np.float64)), {}),
    ("equal_shape", _fn("equal"), (A, A[:2]), {}),
    ("equal_values", _fn("equal"), (I3, I3 + 1), {}),
    ("isin", _fn("isin"), (I3, np.array([1, 3])), {}),
    ("isin_invert", _fn("isin"), (I3, np.array([1.0, 3.0])), {"invert": True}),
    ("isin_scalar_test", _fn("isin"), (I3, 3), {}),
    ("isin_scalar_elements", _fn("isin"), (3, I3), {}),
    ("new_zeros", _meth("new_zeros"), (I3, (2, 3)), {}),
    ("new_ones", _meth("new_ones"), (I3, 2, 3), {}),
    ("new_full", _meth("new_full"), (I3, (2,), 5), {}),
    ("new_full_float", _meth("new_full"), (A, (2,), 5), {}),
    ("new_tensor", _meth("new_tensor"), (A, [1, 2]), {}),
    ("new_zeros_dtype", _meth("new_zeros"), (A, (2,)), {"dtype": "int16"}),
]


def _kwargs(kw, lib):
    out = {}
    for k, v in kw.items():
        if k == "dtype":
            v = getattr(lib, v)
        out[k] = _conv(v, lib)
    return out


@pytest.mark.parametrize("name, fns, args, kwargs", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch(name, fns, args, kwargs):
    ft, fp = fns
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _out(ft(*_conv(args, torch), **_kwargs(kwargs, torch)))
        ours = _out(fp(*_conv(args, tp), **_kwargs(kwargs, tp)))
    _assert_same(ours, theirs, name)


def test_unique_unsorted_has_pytorchs_elements():
    x = np.array([3, 1, 3, 2, 1])
    theirs = torch.unique(torch.tensor(x), sorted=False)
    ours = tp.unique(tp.tensor(x), sorted=False)
    assert sorted(ours.tolist()) == sorted(theirs.tolist())


ERRORS = [
    ("repeat_short", lambda m, x: x.repeat(2)),
    ("repeat_negative", lambda m, x: x.repeat(-1, 2)),
    ("tile_negative", lambda m, x: x.tile(-1, 2)),
    ("repeat_interleave_negative", lambda m, x: m.repeat_interleave(x, -1)),
    ("repeat_interleave_size", lambda m, x: m.repeat_interleave(x, m.tensor([1, 2]), dim=0)),
    ("repeat_interleave_2d", lambda m, x: m.repeat_interleave(x, m.tensor([[1, 2]]), dim=0)),
    ("repeat_interleave_neg_tensor", lambda m, x: m.repeat_interleave(x, m.tensor([1, -2, 1]), dim=0)),
    ("repeat_interleave_float", lambda m, x: m.repeat_interleave(x, m.tensor([1.0, 2, 1]), dim=0)),
    ("repeat_interleave_only_2d", lambda m, x: m.repeat_interleave(m.tensor([[1, 2]]))),
    ("repeat_interleave_output_size", lambda m, x: m.repeat_interleave(x, 2, dim=0, output_size=5)),
    ("repeat_interleave_output_size_tensor",
     lambda m, x: m.repeat_interleave(x, m.tensor([1, 2, 1]), dim=0, output_size=5)),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, (2,))),
    ("broadcast_tensors", lambda m, x: m.broadcast_tensors(x, m.ones(2))),
    ("diff_order", lambda m, x: m.diff(x, n=-1)),
    ("diff_0d", lambda m, x: m.diff(m.tensor(1.0))),
    ("diff_prepend", lambda m, x: m.diff(x, prepend=m.ones(2, 2))),
    ("diag_3d", lambda m, x: m.diag(m.ones(2, 2, 2))),
    ("diag_embed_dims", lambda m, x: m.diag_embed(x, dim1=0, dim2=0)),
    ("diag_embed_range", lambda m, x: m.diag_embed(x, dim1=0, dim2=3)),
    ("trace_3d", lambda m, x: m.trace(m.ones(2, 2, 2))),
    ("trace_bool", lambda m, x: m.trace(m.ones(2, 3, dtype=m.bool))),
    ("take_along_dim_dtype", lambda m, x: m.take_along_dim(x, m.tensor([[0.0]]), 1)),
    ("take_along_dim_ndim", lambda m, x: m.take_along_dim(x, m.tensor([0]), 1)),
    ("take_along_dim_dim", lambda m, x: m.take_along_dim(x, m.tensor([[0]]), 5)),
    ("tensor_split_zero", lambda m, x: m.tensor_split(x, 0)),
    ("tensor_split_0d", lambda m, x: m.tensor_split(m.tensor(1.0), 2)),
    ("tensor_split_2d_indices", lambda m, x: m.tensor_split(x, m.tensor([[1]]))),
    ("tensor_split_float_indices", lambda m, x: m.tensor_split(x, m.tensor([1.0]))),
    ("hsplit_0d", lambda m, x: m.hsplit(m.tensor(1.0), 2)),
    ("hsplit_divisible", lambda m, x: m.hsplit(x, 3)),
    ("vsplit_1d", lambda m, x: m.vsplit(m.ones(3), 3)),
    ("dsplit_2d", lambda m, x: m.dsplit(x, 2)),
    ("index_add_dtype", lambda m, x: m.index_add(x, 0, m.tensor([0]), m.ones(1, 4, dtype=m.float64))),
    ("index_add_index_dtype", lambda m, x: m.index_add(x, 0, m.tensor([0.0]), m.ones(1, 4))),
    ("index_add_index_2d", lambda m, x: m.index_add(x, 0, m.tensor([[0]]), m.ones(1, 4))),
    ("index_add_count", lambda m, x: m.index_add(x, 0, m.tensor([0]), m.ones(2, 4))),
    ("index_add_count_1d", lambda m, x: m.index_add(x, 0, m.tensor([0]), m.ones(4))),
    ("index_add_slice", lambda m, x: m.index_add(x, 0, m.tensor([0]), m.ones(1, 5))),
    ("index_add_bounds", lambda m, x: m.index_add(x, 0, m.tensor([5]), m.ones(1, 4))),
    ("index_add_negative", lambda m, x: m.index_add(x, 0, m.tensor([-1]), m.ones(1, 4))),
    ("index_copy_dtype", lambda m, x: m.index_copy(x, 0, m.tensor([0]), m.ones(1, 4, dtype=m.float64))),
    ("index_copy_index_dtype", lambda m, x: m.index_copy(x, 0, m.tensor([0.0]), m.ones(1, 4))),
    ("index_copy_bounds", lambda m, x: m.index_copy(x, 0, m.tensor([5]), m.ones(1, 4))),
    ("index_copy_count", lambda m, x: m.index_copy(x, 0, m.tensor([0]), m.ones(2, 4))),
    ("index_copy_slice", lambda m, x: m.index_copy(x, 0, m.tensor([0]), m.ones(1, 5))),
    ("index_copy_slice_3d", lambda m, x: m.index_copy(m.zeros(3, 4, 5), 1, m.tensor([0]), m.ones(3, 1, 6))),
    ("index_copy_ndim", lambda m, x: m.index_copy(m.zeros(3, 4, 5), 1, m.tensor([0]), m.ones(3, 1))),
    ("index_fill_bounds", lambda m, x: m.index_fill(x, 0, m.tensor([5]), 1.0)),
    ("index_fill_index_dtype", lambda m, x: m.index_fill(x, 0, m.tensor([0.0]), 1.0)),
    ("index_fill_value_dim", lambda m, x: m.index_fill(x, 0, m.tensor([0]), m.ones(2))),
    ("index_fill_index_2d", lambda m, x: m.index_fill(x, 0, m.tensor([[0]]), 1)),
    ("scatter_reduce_arg", lambda m, x: x.scatter(0, m.tensor([[0]]), m.ones(1, 1), reduce="max")),
    ("scatter_reduce_bad", lambda m, x: x.scatter_reduce(0, m.tensor([[0]]), m.ones(1, 1), reduce="bad")),
    ("scatter_reduce_dtype", lambda m, x: x.scatter_reduce(0, m.tensor([[0]]), m.ones(1, 1, dtype=m.float64), "sum")),
    ("scatter_reduce_bool_mean",
     lambda m, x: m.tensor([True]).scatter_reduce(0, m.tensor([0]), m.tensor([True]), "mean")),
    ("searchsorted_side_right", lambda m, x: m.searchsorted(m.tensor([3, 1.0]), m.tensor([2.0]), side="left",
                                                            right=True)),
    ("searchsorted_side", lambda m, x: m.searchsorted(m.tensor([1, 3.0]), m.tensor([2.0]), side="bad")),
    ("searchsorted_dims", lambda m, x: m.searchsorted(m.ones(2, 3), m.ones(3, 3))),
    ("searchsorted_sorter_size", lambda m, x: m.searchsorted(m.ones(3), m.ones(3, 3), sorter=m.tensor([0, 1]))),
    ("searchsorted_sorter_range", lambda m, x: m.searchsorted(m.ones(3), m.ones(3, 3), sorter=m.tensor([0, 1, 5]))),
    ("searchsorted_sorter_dtype", lambda m, x: m.searchsorted(m.ones(3), m.ones(3, 3), sorter=m.tensor([0.0, 1, 2]))),
    ("bucketize_dims", lambda m, x: m.bucketize(m.ones(3), m.ones(3, 3))),
    ("bincount_negative", lambda m, x: m.bincount(m.tensor([-1, 2]))),
    ("bincount_2d", lambda m, x: m.bincount(m.tensor([[1, 2]]))),
    ("bincount_float", lambda m, x: m.bincount(m.tensor([1.0, 2]))),
    ("bincount_minlength", lambda m, x: m.bincount(m.tensor([1, 2]), minlength=-1)),
    ("bincount_weights", lambda m, x: m.bincount(m.tensor([1, 2]), weights=m.ones(3))),
    ("histc_int", lambda m, x: m.histc(m.tensor([1, 2]), bins=3)),
    ("histc_bins", lambda m, x: m.histc(m.tensor([1.0, 2]), bins=0)),
    ("histc_range", lambda m, x: m.histc(m.tensor([1.0, 2]), bins=3, min=3, max=1)),
    ("meshgrid_2d", lambda m, x: m.meshgrid(m.ones(2, 2), m.ones(2), indexing="ij")),
    ("meshgrid_indexing", lambda m, x: m.meshgrid(m.ones(2), m.ones(2), indexing="bad")),
    ("meshgrid_dtype", lambda m, x: m.meshgrid(m.ones(2), m.ones(2, dtype=m.int64), indexing="ij")),
    ("meshgrid_empty", lambda m, x: m.meshgrid(indexing="ij")),
    ("tril_indices_row", lambda m, x: m.tril_indices(-1, 3)),
    ("tril_indices_col", lambda m, x: m.tril_indices(3, -1)),
    ("tril_indices_dtype", lambda m, x: m.tril_indices(3, 3, dtype=m.float32)),
    ("rot90_dims", lambda m, x: m.rot90(x, 1, [0])),
    ("rot90_same", lambda m, x: m.rot90(x, 1, [0, 0])),
    ("rot90_1d", lambda m, x: m.rot90(m.ones(3), 1, [0, 1])),
    ("rot90_range", lambda m, x: m.rot90(x, 1, [0, 5])),
    ("fliplr_1d", lambda m, x: m.fliplr(m.ones(3))),
    ("flipud_0d", lambda m, x: m.flipud(m.tensor(1.0))),
    ("fill_value_dim", lambda m, x: m.fill(x, m.ones(2))),
    ("isin_bool", lambda m, x: m.isin(m.ones(2, dtype=m.bool), m.ones(2))),
    ("isin_numbers", lambda m, x: m.isin(1, 2)),
    ("masked_select_dtype", lambda m, x: m.masked_select(x, m.ones(3, 4))),
    ("masked_select_shape", lambda m, x: m.masked_select(x, m.ones(2, 4, dtype=m.bool))),
    ("unique_dim_range", lambda m, x: m.unique(x, dim=5)),
    ("unique_consecutive_dim_range", lambda m, x: m.unique_consecutive(x, dim=5)),
    ("unique_zero_sized", lambda m, x: m.unique(m.ones(3, 0), dim=0)),
    ("diagonal_range", lambda m, x: m.diagonal(x, 0, 0, 5)),
    ("movedim_range", lambda m, x: m.movedim(x, 0, 5)),
]


def _normalize(msg):
    """PyTorch's message with our names: tensorplug for torch, and only its first line."""
    return msg.split("\n")[0].replace("torch.", "").replace("tensorplug.", "").strip()


@pytest.mark.parametrize("name, call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_pytorch(name, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            call(torch, torch.tensor(A))
        with pytest.raises(Exception) as ours:
            call(tp, tp.tensor(A))
    assert ours.type is theirs.type, f"{name}: {ours.type.__name__}: {ours.value} / PyTorch " \
                                     f"{theirs.type.__name__}: {theirs.value}"
    t, o = _normalize(str(theirs.value)), _normalize(str(ours.value))
    # PyTorch prints tensors and type names in a few messages: compare the words before them
    if name in ("meshgrid_2d", "histc_int"):
        t, o = t[:40], o[:40]
    if name == "broadcast_to":  # the tensor's type name differs: FloatTensor / float32
        t, o = t.split("): ", 1)[1], o.split("): ", 1)[1]
    if name in ("isin_numbers",):
        t, o = t.split(" - ")[0], o.split(" - ")[0]
    assert o == t, f"{name}: {o!r} / PyTorch {t!r}"




def _grads(m, fn, arrays):
    ts = [m.tensor(a, requires_grad=True) for a in arrays]
    out = fn(m, *ts)
    w = np.random.default_rng(5).standard_normal(tuple(out.shape))
    return [g.detach().numpy() for g in m.autograd.grad((out * m.tensor(w)).sum(), ts)]


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("zeros", [False, True])
def test_scatter_reduce_gradients_match_pytorch(reduce, include_self, zeros):
    x = np.random.default_rng(1).standard_normal((3, 4))
    src = np.random.default_rng(2).standard_normal((2, 4))
    src[0, 0] = x[0, 0]  # a tie between self and src
    if zeros:
        x[0, 0] = 0
        src[1, 0] = src[0, 2] = 0

    def fn(m, a, b):
        return a.scatter_reduce(0, m.tensor(IDX2), b, reduce, include_self=include_self)
    for ours, theirs in zip(_grads(tp, fn, (x, src)), _grads(torch, fn, (x, src))):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


GRAD_FNS = {
    "masked_select": lambda m, a: m.masked_select(a, a > 0),
    "masked_select_broadcast": lambda m, a: m.masked_select(a[0], m.tensor([[True], [False], [True]])),
    "index_add": lambda m, a: a.index_add(0, m.tensor([0, 2, 0]), a * 3, alpha=2),
    "index_copy": lambda m, a: a.index_copy(1, m.tensor([3, 0]), a[:, :2] ** 2),
    "index_fill": lambda m, a: a.index_fill(1, m.tensor([3, 0]), 2.0),
    "repeat": lambda m, a: a.repeat(2, 1, 3),
    "repeat_interleave": lambda m, a: a.repeat_interleave(m.tensor([1, 0, 3]), dim=0),
    "diag_embed": lambda m, a: m.diag_embed(a, -1, 0, 2),
    "diff": lambda m, a: m.diff(a, 2, 0, append=a[:1]),
    "trace": lambda m, a: m.trace(a).reshape(1),
    "take_along_dim": lambda m, a: m.take_along_dim(a, m.tensor([[0, 3]]), 1),
    "rot90": lambda m, a: m.rot90(a, 3),
    "diag": lambda m, a: m.diag(a, 1),
    "fill": lambda m, a: m.fill(a, a[0, 0]),
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
def test_gradients_match_pytorch(name):
    x = np.random.default_rng(7).standard_normal((3, 4))
    for ours, theirs in zip(_grads(tp, GRAD_FNS[name], (x,)), _grads(torch, GRAD_FNS[name], (x,))):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


@pytest.mark.parametrize("name, make", [
    ("diagonal", lambda m, x: x.diagonal(1)), ("movedim", lambda m, x: x.movedim(0, 1)),
    ("ravel", lambda m, x: x.ravel()), ("ravel_transposed", lambda m, x: x.t().ravel()),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 3, 4))), ("tensor_split", lambda m, x: m.tensor_split(x, 2)[1]),
    ("repeat", lambda m, x: x.repeat(1, 1)), ("fliplr", lambda m, x: m.fliplr(x)),
])
def test_aliasing_matches_pytorch(name, make):
    xt, xp = torch.zeros(3, 4), tp.zeros(3, 4)
    vt, vp = make(torch, xt), make(tp, xp)
    shares_t = vt.untyped_storage().data_ptr() == xt.untyped_storage().data_ptr()
    shares_p = vp.untyped_storage() is xp.untyped_storage()
    assert shares_p == shares_t
    assert tuple(vp.shape) == tuple(vt.shape) and tuple(vp.stride()) == tuple(vt.stride())


def test_meshgrid_warning_matches_pytorch():
    with pytest.warns(UserWarning) as theirs:
        torch.meshgrid(torch.arange(2), torch.arange(3))
    with pytest.warns(UserWarning) as ours:
        tp.meshgrid(tp.arange(2), tp.arange(3))
    assert str(ours[0].message).split(".")[1:2] == str(theirs[0].message).split(".")[1:2]
    assert re.search("upcoming release", str(theirs[0].message)) and re.search("upcoming release", str(ours[0].message))


@pytest.mark.parametrize("fn", ["nonzero", "unique"])
def test_vmap_refusal_matches_pytorch(fn):
    with pytest.raises(RuntimeError) as theirs:
        torch.vmap(getattr(torch, fn))(torch.ones(2, 3))
    with pytest.raises(RuntimeError) as ours:
        tp.vmap(getattr(tp, fn))(tp.ones(2, 3))
    prefix = "vmap: We do not support batching operators that can output dynamic shape."
    assert str(theirs.value).startswith(prefix) and str(ours.value).startswith(prefix)
