"""matmul, mm, bmm, dot and mv against numpy, with PyTorch's shape and dtype errors."""

from __future__ import annotations


import numpy as np
import pytest

import tensorplug as tp

F32 = np.dtype(np.float32)

# shapes of (a, b) for a @ b: every rank combination PyTorch distinguishes
SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)), ((1, 2, 3), (6, 3, 1)),
    ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((0, 2, 3), (0, 3, 4)), ((2, 3), (3, 0)),
]


def sample(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    vals = rng.integers(-3, 4, size=shape)
    if dtype is tp.uint8:
        vals = np.abs(vals)
    return np.asarray(vals).astype(dtype.np)


def reference(a, b, dtype):
    """numpy's product; half types multiply in float32 and round once, like PyTorch on CPU."""
    if dtype in (tp.float16, tp.bfloat16):
        return np.matmul(a.astype(F32), b.astype(F32)).astype(dtype.np)
    return np.matmul(a, b)


def assert_values(out, ref, dtype):
    assert out.dtype is dtype and out.shape == ref.shape
    np.testing.assert_array_equal(np.asarray(out.numpy(), dtype=np.float64), np.asarray(ref, dtype=np.float64))


@pytest.mark.parametrize("dtype", [tp.uint8, tp.int8, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32,
                                   tp.float64], ids=str)
@pytest.mark.parametrize("sa,sb", SHAPES, ids=str)
def test_matmul_matches_numpy(sa, sb, dtype):
    a, b = sample(sa, dtype, 0), sample(sb, dtype, 1)
    ta, tb = tp.from_numpy(a), tp.from_numpy(b)
    ref = reference(a, b, dtype)
    assert_values(ta @ tb, ref, dtype)
    assert_values(tp.matmul(ta, tb), ref, dtype)
    assert_values(ta.matmul(tb), ref, dtype)


def test_non_contiguous_operands():
    a = sample((3, 4), tp.float32, 0)
    b = sample((5, 8), tp.float32, 1)
    ta = tp.from_numpy(np.ascontiguousarray(a.T)).t()   # the values of a, transposed storage
    tb = tp.ops.tensorplug.slice.Tensor(tp.from_numpy(b), 1, 0, None, 2)  # b[:, ::2], stepped columns
    assert not ta.is_contiguous() and not tb.is_contiguous()
    assert_values(ta @ tb.t(), a @ b[:, ::2].T, tp.float32)
    stacked = np.stack([a, 2 * a])
    batched = tp.from_numpy(np.ascontiguousarray(stacked.transpose(0, 2, 1))).transpose(1, 2)
    assert_values(batched @ tb.t(), stacked @ b[:, ::2].T, tp.float32)
    assert_values(tb @ ta.t(), b[:, ::2] @ a.T, tp.float32)


def test_half_precision_rounds_once():
    # 2048 + 1 + 1 in float16 steps stays 2048 (each step ties to even); in float32 it is 2050, exact in float16
    a = tp.tensor([[2048.0, 1.0, 1.0]], dtype=tp.float16)
    b = tp.ones(3, 1, dtype=tp.float16)
    assert (a @ b).item() == 2050.0
    assert (a.bfloat16() @ b.bfloat16()).item() == 2048.0  # bfloat16 has 8 bits: 2050 rounds to 2048


def test_integer_matmul_wraps_like_the_dtype():
    a = tp.full((2, 300), 1, dtype=tp.int8)
    b = tp.full((300, 2), 1, dtype=tp.int8)
    assert (a @ b).tolist() == [[44, 44], [44, 44]]


FIXED_RANK = [
    ("mm", (2, 3), (3, 4)), ("bmm", (5, 2, 3), (5, 3, 4)), ("dot", (3,), (3,)), ("mv", (2, 3), (3,)),
]


@pytest.mark.parametrize("name,sa,sb", FIXED_RANK)
def test_fixed_rank_forms(name, sa, sb):
    a, b = sample(sa, tp.float64, 0), sample(sb, tp.float64, 1)
    ta, tb = tp.from_numpy(a), tp.from_numpy(b)
    assert_values(getattr(tp, name)(ta, tb), a @ b, tp.float64)
    assert_values(getattr(ta, name)(tb), a @ b, tp.float64)


def z(*shape, dtype=tp.float32):
    return tp.zeros(*shape, dtype=dtype)


ERRORS = [
    (lambda: z(2, 3) @ z(4, 5), RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    (lambda: z(3) @ z(4), RuntimeError, r"inconsistent tensor size, expected tensor \[3\] and src \[4\] to have "
                                        r"the same number of elements, but got 3 and 4 elements respectively"),
    (lambda: z(3) @ z(4, 5), RuntimeError, r"shapes cannot be multiplied \(1x3 and 4x5\)"),
    (lambda: z(2, 3) @ z(4), RuntimeError, r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)"),
    (lambda: z(7, 2, 3) @ z(4), RuntimeError, r"size mismatch, got input \(14\), mat \(14x3\), vec \(4\)"),
    (lambda: z(7, 2, 3) @ z(4, 5), RuntimeError, r"shapes cannot be multiplied \(14x3 and 4x5\)"),
    (lambda: z(2, 3) @ z(7, 4, 5), RuntimeError, r"Expected size for first two dimensions of batch2 tensor to be: "
                                                 r"\[7, 3\] but got: \[7, 4\]."),
    (lambda: z(7, 1, 2, 3) @ z(6, 4, 5), RuntimeError, r"to be: \[42, 3\] but got: \[42, 4\]."),
    (lambda: z(7, 2, 3) @ z(6, 3, 5), RuntimeError, r"The size of tensor a \(7\) must match the size of tensor b "
                                                    r"\(6\) at non-singleton dimension 0"),
    (lambda: z(()) @ z(3), RuntimeError, "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    (lambda: z(2, 3) @ z(3, 2, dtype=tp.float64), RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: float != double"),
    (lambda: z(2, 3, dtype=tp.int64) @ z(3, 2, dtype=tp.bfloat16), RuntimeError,
     "but got: long int != c10::BFloat16"),
    (lambda: z(2, 3, dtype=tp.bool) @ z(3, 2, dtype=tp.bool), NotImplementedError,
     "\"addmm_impl_cpu_\" not implemented for 'Bool'"),
    (lambda: tp.dot(z(3, dtype=tp.bool), z(3, dtype=tp.bool)), NotImplementedError, "\"dot\" not implemented"),
    (lambda: z(3, 2, 3, dtype=tp.bool) @ z(3, dtype=tp.bool), NotImplementedError, "\"addmv_impl_cpu\" not"),
    (lambda: z(3, dtype=tp.bool) @ z(2, 3, 2, dtype=tp.bool), NotImplementedError, "\"bmm\" not implemented"),
    (lambda: tp.mv(z(()), z(3)), IndexError, "Dimension specified as 0 but tensor has no dimensions"),
    (lambda: tp.matmul(z(2), 3), TypeError, r"argument 'other' \(position 2\) must be Tensor"),
    (lambda: tp.mm(z(3), z(3, 2)), RuntimeError, "self must be a matrix"),
    (lambda: tp.mm(z(2, 3), z(2, 3, 2)), RuntimeError, "mat2 must be a matrix"),
    (lambda: tp.mm(z(2, 3), z(4, 2)), RuntimeError, r"shapes cannot be multiplied \(2x3 and 4x2\)"),
    (lambda: tp.bmm(z(2, 3), z(2, 3, 2)), RuntimeError, "batch1 must be a 3D tensor"),
    (lambda: tp.bmm(z(2, 2, 3), z(3, 2)), RuntimeError, "batch2 must be a 3D tensor"),
    (lambda: tp.bmm(z(2, 2, 3), z(3, 3, 2)), RuntimeError, r"to be: \[2, 3\] but got: \[3, 3\]."),
    (lambda: tp.bmm(z(2, 2, 3), z(2, 3, 2, dtype=tp.float64)), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: tp.dot(z(2, 3), z(2, 3)), RuntimeError, "1D tensors expected, but got 2D and 2D tensors"),
    (lambda: tp.dot(z(3), z(4)), RuntimeError, "inconsistent tensor size"),
    (lambda: tp.dot(z(3), z(3, dtype=tp.float64)), RuntimeError,
     "dot : expected both vectors to have same dtype, but found Float and Double"),
    (lambda: tp.mv(z(3), z(3)), RuntimeError, "vector \\+ matrix @ vector expected, got 1, 1, 1"),
    (lambda: tp.mv(z(2, 3), z(4)), RuntimeError, r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)"),
    (lambda: tp.mv(z(2, 3), z(3, dtype=tp.float64)), RuntimeError,
     "addmv input tensors must have the same dtype, but got Double, Float, and Double"),
]


@pytest.mark.parametrize("call,exc,match", ERRORS)
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_empty_bool_products_are_allowed():
    assert (z(0, 2, 3, dtype=tp.bool) @ z(0, 3, 2, dtype=tp.bool)).shape == (0, 2, 2)


def test_matmul_with_a_non_tensor_is_not_implemented():
    assert z(2, 2).__matmul__([[1, 0], [0, 1]]) is NotImplemented


def test_large_float32_matmul_matches_numpy():
    # its speed against np.matmul is measured in benchmarks/, not asserted here
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    ta, tb = tp.from_numpy(a), tp.from_numpy(b)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("rows", [1, 32, 64, 65])
def test_matmul_by_transposed_weight_is_row_major(rows):
    # x @ w.T as linear computes it: the CPU may compute the product transposed, but the result keeps
    # PyTorch's row-major strides and numpy's values
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 40)).astype(np.float32)
    w = rng.standard_normal((200, 40)).astype(np.float32)
    r = tp.from_numpy(x) @ tp.from_numpy(w).t()
    assert r.shape == (rows, 200) and r.stride() == (200, 1)
    np.testing.assert_allclose(r.numpy(), x @ w.T, rtol=1e-5, atol=1e-5)
