"""Behaviours fixed so that PyTorch's OpInfo samples pass (issue 13): each test fails on the code before."""

from __future__ import annotations

import pytest

import tensorplug as tp


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge", "less", "greater_equal", "fmod", "rsub",
                                  "copysign"])
def test_number_first_argument_is_a_type_error(name):
    t = tp.ones(2)
    with pytest.raises(TypeError, match="received an invalid combination of arguments - got \\(int, Tensor\\)"):
        getattr(tp, name)(2, t)
    getattr(tp, name)(t, 2)  # a number second is fine


@pytest.mark.parametrize("name", ["add", "sub", "mul", "floor_divide"])
def test_number_first_argument_still_accepted_where_pytorch_accepts_it(name):
    assert getattr(tp, name)(2, tp.ones(2)).shape == (2,)


def test_tensordot_broadcasts_a_contracted_dim_of_size_one():
    a = tp.arange(6.0).reshape((1, 2, 3))
    b = tp.arange(8.0).reshape((2, 2, 2))
    out = tp.tensordot(a, b, dims=([0, 1], [2, 0]))
    # a's dim 0 (size 1) against b's dim 2 (size 2): b is summed over that dim
    want = tp.tensordot(a, b.sum((2,), True), dims=([0, 1], [2, 0]))
    assert out.shape == (3, 2)
    assert tp.allclose(out, want)
    with pytest.raises(RuntimeError, match="contracted dimensions need to match, but first has size 3 in dim 0 "
                                           "and second has size 2 in dim 0"):
        tp.tensordot(tp.ones(3, 3), tp.ones(2, 3), ([0], [0]))
