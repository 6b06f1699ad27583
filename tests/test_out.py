"""out= on PyTorch's functions (tensorplug.ops.out): one mechanism for every function with an out variant."""

from __future__ import annotations

import warnings

import pytest

import tensorplug as tp


def test_out_is_written_and_returned():
    a, b = tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0])
    o = tp.empty(2)
    r = tp.add(a, b, out=o)
    assert r is o and o.tolist() == [4.0, 6.0]
    o64 = tp.empty(2, dtype=tp.float64)
    assert tp.mul(a, b, out=o64) is o64 and o64.dtype is tp.float64 and o64.tolist() == [3.0, 8.0]
    assert tp.add(a, b) is not o  # without out= nothing changes


def test_out_is_resized_with_pytorchs_warning_when_it_had_elements():
    a = tp.tensor([1.0, 2.0, 3.0])
    o = tp.empty(2)
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape "
                                         r"\[2\], which does not match the required output shape \[3\]"):
        tp.neg(a, out=o)
    assert o.shape == (3,) and o.tolist() == [-1.0, -2.0, -3.0]
    e = tp.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tp.sum(a, 0, out=e)  # an empty out is resized silently
    assert e.shape == () and e.item() == 6.0


def test_out_dtype_checks():
    a = tp.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tp.add(a, a, out=tp.empty(2, dtype=tp.int64))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        tp.gather(a, 0, tp.tensor([0]), out=tp.empty(1, dtype=tp.float64))
    with pytest.raises(RuntimeError, match="Expected the dtype for input and out to match, but got Float for "
                                           "input's dtype and Int for out's dtype."):
        tp.amax(a, 0, out=tp.empty((), dtype=tp.int32))
    with pytest.raises(RuntimeError, match="multinomial expects Long tensor out, got: Double"):
        tp.multinomial(a, 1, out=tp.empty(1, dtype=tp.float64))
    with pytest.raises(TypeError, match="torch.cat\\(\\): input types can't be cast to the desired output type Long"):
        tp.cat([a, a], out=tp.empty(4, dtype=tp.int64))


def test_out_overlap_checks():
    a = tp.tensor([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single"):
        tp.index_select(a, 0, tp.tensor([0, 1]), out=tp.empty(1).expand(2))
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor refer"):
        tp.add(a, a, out=a[:2])
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor refer"):
        tp.gather(a, 0, tp.tensor([0, 1, 2]), out=a)  # not pointwise: even the very same elements
    assert tp.add(a, a, out=a) is a and a.tolist() == [2.0, 4.0, 6.0]  # pointwise: allowed


def test_out_records_no_autograd_history():
    a = tp.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"add\(\): functions with out=\.\.\. arguments don't support automatic "
                                           r"differentiation, but one of the arguments requires grad\."):
        tp.add(a, a, out=tp.empty(2))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tp.add(a.detach(), 1.0, out=tp.empty(2, requires_grad=True))
    with tp.no_grad():
        o = tp.add(a, a, out=tp.empty(2))
    assert not o.requires_grad and o.grad_fn is None


def test_out_with_several_results_returns_the_results_type():
    a = tp.tensor([3.0, 1.0, 2.0])
    v, i = tp.empty(0), tp.empty(0, dtype=tp.int64)
    r = tp.sort(a, out=(v, i))
    assert r.values is v and r.indices is i
    assert v.tolist() == [1.0, 2.0, 3.0] and i.tolist() == [1, 2, 0]
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype long int, but got int instead"):
        tp.sort(a, out=(tp.empty(0), tp.empty(0, dtype=tp.int32)))


def test_out_in_the_namespaces_and_not_on_methods():
    A = tp.tensor([[2.0, 0.0], [0.0, 4.0]])
    o = tp.empty(0)
    assert tp.linalg.inv(A, out=o) is o and o.tolist() == [[0.5, 0.0], [0.0, 0.25]]
    o = tp.empty(0)
    assert tp.special.expit(tp.zeros(1), out=o) is o and o.tolist() == [0.5]
    with pytest.raises(TypeError):
        A.add(A, out=tp.empty(0))  # Tensor methods take no out=, as in PyTorch
