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
