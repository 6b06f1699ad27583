"""The tensor and shape ops of ops/shape_more.py and the matrix properties T/H/mT/mH, without PyTorch:
values against numpy or hand-computed results, gradients (gradcheck and hand-computed), vmap, memory
layout and errors. The op database checks every sample against numpy; tests/test_shape_more_torch_oracle.py
compares with PyTorch."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.autograd import gradcheck


def _f64(*shape, seed=0):
    return tp.tensor(np.random.default_rng(seed).standard_normal(shape))


# -- properties and conversions -------------------------------------------------------------------------------
def test_h_and_mh_conjugate_complex_matrices():
    z = tp.tensor([[1 + 2j, 3 - 1j], [0.5j, 2.0 + 0j]])
    assert np.array_equal(z.H.numpy(), z.numpy().T.conj())
    b = tp.stack([z, z * 2])
    assert np.array_equal(b.mH.numpy(), np.swapaxes(b.numpy(), -1, -2).conj())
    assert np.array_equal(b.mT.numpy(), np.swapaxes(b.numpy(), -1, -2))
    x = tp.arange(6.0).reshape(2, 3)
    assert x.H.tolist() == x.T.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert x.H.untyped_storage() is x.untyped_storage()  # a real matrix's H is a view


def test_h_and_mh_errors():
    with pytest.raises(RuntimeError, match=r"tensor.H is only supported on matrices \(2-D tensors\). Got 3-D tensor. "
                                           r"For batches of matrices, consider using tensor.mH"):
        tp.ones(2, 2, 2).H
    with pytest.raises(RuntimeError, match="tensor.mH is only supported on matrices or batches of matrices. Got 1-D"):
        tp.ones(3).mH
    assert tp.tensor(2.0).H.item() == 2.0


def test_complex_conversions_and_their_gradient():
    x = tp.tensor([1.0, -2.0], requires_grad=True)
    z = x.cdouble()
    assert z.dtype is tp.complex128 and z.tolist() == [1 + 0j, -2 + 0j]
    assert x.cfloat().dtype is tp.complex64
    assert tp.tensor([True, False]).cfloat().tolist() == [1 + 0j, 0j]
    (z.real * tp.tensor([3.0, 4.0], dtype=tp.float64)).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def test_resolve_neg_and_scalar_tensor():
    x = tp.ones(2)
    assert tp.resolve_neg(x) is x and x.resolve_neg() is x
    s = tp.scalar_tensor(3)
    assert s.shape == () and s.dtype is tp.float32 and s.item() == 3.0
    assert tp.scalar_tensor(-5, dtype=tp.uint8).item() == 251  # wraps, as PyTorch's does
    assert tp.scalar_tensor(2, dtype=tp.int64, requires_grad=False).dtype is tp.int64
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        tp.scalar_tensor(300, dtype=tp.int8)
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        tp.scalar_tensor(1 + 2j)


# -- stacking -------------------------------------------------------------------------------------------------
def test_column_stack_and_block_diag():
    a, b = tp.tensor([1, 2]), tp.tensor([[3, 4], [5, 6]])
    assert tp.column_stack([a, b]).tolist() == [[1, 3, 4], [2, 5, 6]]
    m = tp.block_diag(tp.tensor([[1, 2]]), tp.tensor(3.0), tp.tensor([4, 5], dtype=tp.int32))
    assert m.dtype is tp.float32
    assert m.tolist() == [[1, 2, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 4, 5]]
    assert tp.block_diag().shape == (1, 0)
    with pytest.raises(RuntimeError, match="column_stack expects a non-empty TensorList"):
        tp.column_stack([])
    with pytest.raises(RuntimeError, match="Input 0 has 3 dimensions"):
        tp.block_diag(tp.ones(1, 1, 1))


def test_block_diag_gradient_and_vmap():
    a, b = _f64(2, 2).requires_grad_(), _f64(3, seed=1).requires_grad_()
    assert gradcheck(lambda a, b: tp.block_diag(a, b), (a, b))
    xs = _f64(4, 2, 2)
    got = tp.vmap(lambda x: tp.block_diag(x, tp.ones(1, 1, dtype=tp.float64)))(xs)
    for i in range(4):
        assert np.array_equal(got[i].numpy(), tp.block_diag(xs[i], tp.ones(1, 1, dtype=tp.float64)).numpy())


def test_cartesian_prod_and_combinations():
    a, b = tp.tensor([1, 2]), tp.tensor([3, 4, 5])
    assert tp.cartesian_prod(a, b).tolist() == [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]]
    assert tp.cartesian_prod(a) is a
    x = tp.tensor([1.0, 2.0, 3.0])
    assert tp.combinations(x).tolist() == [[1.0, 2.0], [1.0, 3.0], [2.0, 3.0]]
    assert tp.combinations(x, 2, with_replacement=True).shape == (6, 2)
    assert tp.combinations(x, 4).shape == (0, 4) and tp.combinations(x, 0).shape == (0,)
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[2, 2\]"):
        tp.cartesian_prod(tp.ones(2, 2))
    with pytest.raises(RuntimeError, match="Expect a non-negative number, but got -1"):
        tp.combinations(x, -1)


def test_diagflat():
    assert tp.diagflat(tp.tensor([[1, 2], [3, 4]])).tolist() == np.diagflat([1, 2, 3, 4]).tolist()
    assert tp.diagflat(tp.tensor([1, 2]), -1).tolist() == [[0, 0, 0], [1, 0, 0], [0, 2, 0]]


# -- products, norms and statistics --------------------------------------------------------------------------
def test_inner_and_vdot():
    a, b = _f64(2, 3), _f64(4, 3, seed=1)
    np.testing.assert_allclose(tp.inner(a, b).numpy(), np.inner(a.numpy(), b.numpy()))
    assert tp.inner(tp.tensor(2.0), tp.tensor([1.0, 3.0])).tolist() == [2.0, 6.0]
    z, w = tp.tensor([1 + 1j, 2 - 1j]), tp.tensor([3j, 1 + 0j])
    assert complex(tp.vdot(z, w).item()) == complex(np.vdot(z.numpy(), w.numpy()))
    assert tp.vdot(tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0])).item() == 11.0
    with pytest.raises(RuntimeError, match=r"inner\(\) the last dimension must match"):
        tp.inner(tp.ones(2, 3), tp.ones(2, 4))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        tp.vdot(tp.ones(1, 1), tp.ones(3))


def test_msort_dist():
    x = tp.tensor([[3.0, 1.0], [1.0, 2.0], [2.0, 0.0]])
    assert tp.msort(x).tolist() == [[1.0, 0.0], [2.0, 1.0], [3.0, 2.0]]
    a, b = tp.tensor([1.0, 2.0]), tp.tensor([4.0, 6.0])
    assert tp.dist(a, b).item() == 5.0
    assert tp.dist(a, b, 1).item() == 7.0 and tp.dist(a, b, math.inf).item() == 4.0 and tp.dist(a, b, 0).item() == 2.0
    with pytest.raises(RuntimeError, match="norm\\(\\): input dtype should be either floating point or complex"):
        tp.dist(tp.ones(2, dtype=tp.int64), tp.ones(2, dtype=tp.int64))


def test_renorm_values_gradient_and_in_place():
    x = tp.tensor([[3.0, 4.0], [0.3, 0.4]])
    r = tp.renorm(x, 2, 0, 1.0)
    np.testing.assert_allclose(r.numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    y = x.clone()
    assert y.renorm_(2, 0, 1.0) is y and np.allclose(y.numpy(), r.numpy())
    w = _f64(3, 4).requires_grad_()
    assert gradcheck(lambda w: tp.renorm(w, 2, 1, 0.5), (w,))
    with pytest.raises(RuntimeError, match="renorm: input needs at least 2 dimensions, got 1 dimensions"):
        tp.renorm(tp.ones(3), 2, 0, 1.0)
    with pytest.raises(RuntimeError, match="renorm: non-positive-norm not supported"):
        tp.renorm(tp.ones(3, 3), 0, 0, 1.0)


def test_cov_and_corrcoef_against_numpy():
    x = _f64(3, 6)
    fw = tp.tensor([1, 2, 1, 3, 1, 2])
    aw = tp.tensor([0.5, 1.0, 2.0, 1.0, 0.3, 1.5], dtype=tp.float64)
    for kw in ({}, {"correction": 0}, {"fweights": fw}, {"aweights": aw}, {"fweights": fw, "aweights": aw,
                                                                           "correction": 2}):
        npkw = {"ddof": kw.get("correction", 1), "fweights": kw["fweights"].numpy() if "fweights" in kw else None,
                "aweights": kw["aweights"].numpy() if "aweights" in kw else None}
        np.testing.assert_allclose(tp.cov(x, **kw).numpy(), np.cov(x.numpy(), **npkw), rtol=1e-10)
    np.testing.assert_allclose(tp.corrcoef(x).numpy(), np.corrcoef(x.numpy()), rtol=1e-10)
    v = tp.tensor([1, 2, 3, 4])
    assert tp.cov(v).dtype is tp.float32 and abs(tp.cov(v).item() - 5 / 3) < 1e-6
    assert tp.corrcoef(v).item() == 1.0
    g = _f64(2, 5).requires_grad_()
    assert gradcheck(lambda g: tp.cov(g, aweights=aw[:5]), (g,))
    assert gradcheck(tp.corrcoef, (g,))


def test_cov_errors_and_warning():
    x = tp.ones(5)
    with pytest.raises(RuntimeError, match="cov\\(\\): fweights cannot be negative"):
        tp.cov(x, fweights=tp.tensor([1, -1, 1, 1, 1]))
    with pytest.raises(RuntimeError, match="cov\\(\\): weights sum to zero, can't be normalized"):
        tp.cov(x, aweights=tp.zeros(5))
    with pytest.raises(RuntimeError, match="cov\\(\\): bool dtype is not supported for input"):
        tp.cov(tp.ones(3, dtype=tp.bool))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = tp.cov(tp.ones(2, 3), correction=5)
    assert "degrees of freedom is <= 0" in str(caught[0].message) and bool(out.isnan().all())
    assert caught[0].filename == __file__


# -- flat indexing ---------------------------------------------------------------------------------------------
def test_take_and_put():
    x = tp.arange(6.0).reshape(2, 3)
    assert tp.take(x, tp.tensor([[0, 5], [-1, 2]])).tolist() == [[0.0, 5.0], [5.0, 2.0]]
    assert x.t().take(tp.tensor([1])).tolist() == [3.0]  # row-major order of the transposed view
    y = x.t().put(tp.tensor([0, 1, 1]), tp.tensor([10.0, 20.0, 30.0]), accumulate=True)
    assert y.tolist() == [[10.0, 53.0], [1.0, 4.0], [2.0, 5.0]]
    z = x.clone()
    assert z.put_(tp.tensor([-1]), tp.tensor([9.0])) is z and z.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 9.0]]
    with pytest.raises(IndexError, match="out of range: tried to access index 6 on a tensor of 6 elements."):
        tp.take(x, tp.tensor([6]))
    with pytest.raises(IndexError, match="put_\\(\\): Expected source and index to have the same number"):
        x.put(tp.tensor([1]), tp.ones(2))


def test_take_and_put_gradients():
    x, s = _f64(3, 4).requires_grad_(), _f64(3, seed=1).requires_grad_()
    idx = tp.tensor([0, 11, 5])
    assert gradcheck(lambda x: tp.take(x, idx), (x,))
    assert gradcheck(lambda x, s: tp.put(x, idx, s), (x, s))
    assert gradcheck(lambda x, s: tp.put(x, tp.tensor([2, 2, 3]), s, True), (x, s))


def test_take_out():
    out = tp.empty(0)
    assert tp.take(tp.ones(3), tp.tensor([0, 1]), out=out) is out and out.tolist() == [1.0, 1.0]


def test_unravel_index():
    r, c = tp.unravel_index(tp.tensor([5, 0, -1, 7]), (2, 3))
    assert r.tolist() == [1, 0, 1, 0] and c.tolist() == [2, 0, 2, 1]  # -1 counts from the end; 7 wraps
    assert r.dtype is tp.int64
    (i,) = tp.unravel_index(tp.tensor(4, dtype=tp.int32), 6)
    assert i.shape == () and i.item() == 4 and i.dtype is tp.int64
    assert tp.unravel_index(tp.tensor([0]), ()) == ()
    with pytest.raises(TypeError, match="expected 'indices' to be integer dtype"):
        tp.unravel_index(tp.tensor([1.0]), (2,))
    with pytest.raises(ValueError, match=r"'shape' cannot have negative values, but got \(2, -3\)"):
        tp.unravel_index(tp.tensor([1]), (2, -3))


def test_nonzero_static_and_sum_to_size():
    x = tp.tensor([[0, 1], [2, 0]])
    assert tp.nonzero_static(x, size=1).tolist() == [[0, 1]]
    assert tp.nonzero_static(x, size=3, fill_value=9).tolist() == [[0, 1], [1, 0], [9, 9]]
    with pytest.raises(RuntimeError, match="nonzero_static: 'size' must be an non-negative integer"):
        tp.nonzero_static(x, size=-1)
    y = tp.ones(2, 3, 4)
    assert y.sum_to_size(3, 1).tolist() == [[8.0]] * 3
    assert y.sum_to_size((1, 3, 1)).shape == (1, 3, 1)
    assert y.sum_to_size(2, 3, 4) is y
    assert tp.ones(2, dtype=tp.bool).sum_to_size(()).dtype is tp.int64
    with pytest.raises(RuntimeError, match=r"size \{\[10, 10\]\} is not expandable to size \{\[10, 5, 10\]\}."):
        tp.ones(10, 5, 10).sum_to_size(10, 10)


def test_constant_pad_nd_and_unsafe_split():
    x = tp.tensor([[1, 2, 3]])
    assert tp.constant_pad_nd(x, (1, -1, 1, 0), 7).tolist() == [[7, 7, 7], [7, 1, 2]]
    same = tp.constant_pad_nd(x, (0, 0))
    assert same.tolist() == x.tolist() and same.data_ptr() != x.data_ptr()
    with pytest.raises(RuntimeError, match="Length of pad must be even but instead it equals 3"):
        tp.constant_pad_nd(x, (1, 2, 3))
    y = tp.arange(5)
    assert [p.tolist() for p in tp.unsafe_split(y, 2)] == [[0, 1], [2, 3], [4]]
    assert [p.tolist() for p in y.unsafe_chunk(2)] == [[0, 1, 2], [3, 4]]


# -- the *_scatter family --------------------------------------------------------------------------------------
def test_scatter_family_values():
    x = tp.zeros(3, 4)
    assert tp.diagonal_scatter(x, tp.ones(3), 1).tolist() == np.eye(3, 4, 1).tolist()
    assert tp.diagonal_scatter(x, tp.ones(2), -1).tolist() == np.eye(3, 4, -1).tolist()
    assert tp.select_scatter(x, tp.ones(3), 1, -1).tolist() == [[0, 0, 0, 1.0]] * 3
    s = tp.slice_scatter(x, tp.ones(3, 2), 1, 0, None, 2)
    assert s.tolist() == [[1.0, 0, 1.0, 0]] * 3
    a = tp.as_strided_scatter(tp.zeros(3, 3), tp.tensor([[1.0, 2.0], [3.0, 4.0]]), (2, 2), (1, 3), 1)
    assert a.tolist() == [[0, 1.0, 3.0], [0, 2.0, 4.0], [0, 0, 0]]
    # the input's memory layout is kept: the same strides address the transposed input's storage
    t = tp.zeros(3, 2).t()
    assert tp.as_strided_scatter(t, tp.ones(2), (2,), (1,)).tolist() == [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    with pytest.raises(RuntimeError, match=r"expected src to have a size equal to the slice of self. src size = \[4\], "
                                           r"slice size = \[3\]"):
        tp.diagonal_scatter(x, tp.ones(4))


def test_scatter_family_gradients():
    x = _f64(3, 4).requires_grad_()
    assert gradcheck(lambda x, s: tp.diagonal_scatter(x, s, 1), (x, _f64(3, seed=1).requires_grad_()))
    assert gradcheck(lambda x, s: tp.select_scatter(x, s, 0, 2), (x, _f64(4, seed=2).requires_grad_()))
    assert gradcheck(lambda x, s: tp.slice_scatter(x, s, 1, 1, 4, 2), (x, _f64(3, 2, seed=3).requires_grad_()))


def test_as_strided_scatter_gradient_is_the_true_one():
    # PyTorch's own backward hands the input the gradient of the overwritten elements (its OpInfo marks
    # the gradient test an expected failure); here the overwritten elements get none, the others all
    x, s = tp.ones(3, 3, requires_grad=True), tp.ones(2, 2, requires_grad=True)
    gx, gs = tp.autograd.grad(tp.as_strided_scatter(x, s, (2, 2), (1, 2)).sum(), [x, s])
    assert gx.tolist() == [[0.0, 0.0, 0.0], [0.0, 1.0, 1.0], [1.0, 1.0, 1.0]] and gs.tolist() == [[1.0, 1.0]] * 2


def test_scatter_family_under_vmap_with_a_batched_src():
    x, srcs = _f64(3, 4), _f64(5, 3, seed=1)
    got = tp.vmap(lambda s: tp.select_scatter(x, s, 1, 0))(srcs)
    for i in range(5):
        assert np.array_equal(got[i].numpy(), tp.select_scatter(x, srcs[i], 1, 0).numpy())


# -- index_reduce -------------------------------------------------------------------------------------------------
def test_index_reduce():
    x = tp.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    src = tp.tensor([[2.0, 2.0], [3.0, 0.5], [10.0, 10.0]])
    idx = tp.tensor([0, 0, 2])
    assert tp.index_reduce(x, 0, idx, src, "prod").tolist() == [[6.0, 2.0], [3.0, 4.0], [50.0, 60.0]]
    assert x.index_reduce(0, idx, src, "amax", include_self=False).tolist() == [[3.0, 2.0], [3.0, 4.0], [10.0, 10.0]]
    assert tp.index_reduce(x, 0, idx, src, "mean").tolist() == [[2.0, 1.5], [3.0, 4.0], [7.5, 8.0]]
    y = x.clone()
    assert y.index_reduce_(0, idx, src, "amin") is y and y.tolist() == [[1.0, 0.5], [3.0, 4.0], [5.0, 6.0]]
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin but got sum."):
        tp.index_reduce(x, 0, idx, src, "sum")
    w = _f64(3, 2).requires_grad_()
    assert gradcheck(lambda w, s: tp.index_reduce(w, 0, idx, s, "prod"), (w, _f64(3, 2, seed=1).requires_grad_()))


# -- strided factories and resize_ ---------------------------------------------------------------------------------
def test_strided_factories():
    e = tp.empty_strided((2, 3), (1, 2), dtype=tp.float64)
    assert e.shape == (2, 3) and e.stride() == (1, 2) and e.dtype is tp.float64
    p = tp.empty_permuted((2, 3, 4), (2, 0, 1))
    assert p.shape == (2, 3, 4) and p.stride() == (3, 1, 6)
    n = tp.ones(2, dtype=tp.int16).new_empty_strided((3,), (2,))
    assert n.dtype is tp.int16 and n.stride() == (2,)
    with pytest.raises(RuntimeError, match="Duplicate dim not allowed"):
        tp.empty_permuted((2, 3), (0, 0))
    with pytest.raises(RuntimeError, match=r"dimensionality of sizes \(2\) must match dimensionality of strides"):
        tp.empty_strided((2, 3), (1,))


def test_resize_keeps_the_leading_elements():
    x = tp.arange(6.0)
    assert x.resize_(2, 2) is x and x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    x.resize_((3, 2))
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    x.resize_(4, 2)  # grows the memory: the old elements stay in front
    assert x.shape == (4, 2) and x[:3].tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    v = tp.arange(6.0)[2:]
    v.resize_(2)
    assert v.tolist() == [2.0, 3.0] and v.storage_offset() == 2
    assert tp.ones(3).resize_as_(tp.ones(1, 2)).shape == (1, 2)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        tp.ones(2, requires_grad=True).resize_(1)


def test_index_reduce_of_bool_and_complex_tensors():
    b = tp.tensor([True, False, False])
    assert b.index_reduce(0, tp.tensor([1, 1]), tp.tensor([True, False]), "amax").tolist() == [True, True, False]
    z = tp.tensor([1 + 1j, 2 + 0j])
    got = z.index_reduce(0, tp.tensor([0, 0]), tp.tensor([3 + 1j, 2 - 2j]), "mean")
    assert np.allclose(got.numpy(), [2 + 0j, 2 + 0j])
    assert np.allclose(z.index_reduce(0, tp.tensor([1]), tp.tensor([1j]), "prod").numpy(), [1 + 1j, 2j])
    with pytest.raises(NotImplementedError, match="\"maximum_cpu\" not implemented for 'ComplexFloat'"):
        z.index_reduce(0, tp.tensor([0]), tp.tensor([1j]), "amax")
    with pytest.raises(NotImplementedError, match="index_reduce_func_exclude_input_init"):
        z.index_reduce(0, tp.tensor([0]), tp.tensor([1j]), "mean", include_self=False)


def test_t_of_a_non_matrix_warns_once_as_in_pytorch():
    from tensorplug.ops import methods
    methods.T_WARNED[0] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tp.ones(2, 3, 4).T.shape == (4, 3, 2)
        assert tp.ones(3).T.shape == (3,)
        assert tp.ones(2, 3).T.shape == (3, 2)
    assert len(caught) == 1 and "The use of `x.T` on tensors of dimension other than 2" in str(caught[0].message)
    assert caught[0].filename == __file__


def test_out_where_pytorch_has_it():
    a = tp.tensor([[3.0, 4.0], [1.0, 0.0]])
    for fn, args in ((tp.inner, (a, a)), (tp.vdot, (a[0], a[1])), (tp.msort, (a,)), (tp.renorm, (a, 2, 0, 1.0)),
                     (tp.column_stack, ([a[0], a[1]],)), (tp.slice_scatter, (a, a[:1], 0, 0, 1)),
                     (tp.index_reduce, (a, 0, tp.tensor([0]), a[:1], "prod"))):
        out = tp.empty(0)
        assert fn(*args, out=out) is out
        assert np.allclose(out.numpy(), fn(*args).numpy())
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tp.inner(a.requires_grad_(), a, out=tp.empty(0))
