"""In-place ops on tensors whose elements share memory, against PyTorch: the same calls raise the same
error, and the ones PyTorch accepts give the same values and warnings."""

import warnings

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")


def _nn(m):
    return m.nn.functional


CALLS = {
    "add_": lambda m, x: x.add_(1), "add_ itself": lambda m, x: x.add_(x), "mul_": lambda m, x: x.mul_(2),
    "sub_.Tensor": lambda m, x: x.sub_(m.ones(4, 3)), "div_": lambda m, x: x.div_(2),
    "pow_": lambda m, x: x.pow_(2), "abs_": lambda m, x: x.abs_(), "exp_": lambda m, x: x.exp_(),
    "round_": lambda m, x: x.round_(), "sign_": lambda m, x: x.sign_(), "clamp_": lambda m, x: x.clamp_(0, 1),
    "clamp_max_": lambda m, x: x.clamp_max_(0), "relu_": lambda m, x: x.relu_(),
    "sigmoid_": lambda m, x: x.sigmoid_(), "logical_not_": lambda m, x: x.logical_not_(),
    "F.relu inplace": lambda m, x: _nn(m).relu(x, inplace=True),
    "F.leaky_relu inplace": lambda m, x: _nn(m).leaky_relu(x, inplace=True),
    "F.elu inplace": lambda m, x: _nn(m).elu(x, inplace=True),
    "F.dropout inplace": lambda m, x: _nn(m).dropout(x, 0.5, True, True),
    "copy_": lambda m, x: x.copy_(m.ones(4, 3)), "copy_ broadcast": lambda m, x: x.copy_(m.ones(3)),
    "fill_": lambda m, x: x.fill_(1.5), "fill_ tensor": lambda m, x: x.fill_(m.tensor(1.5)),
    "zero_": lambda m, x: x.zero_(),
    "uniform_": lambda m, x: x.uniform_(), "normal_": lambda m, x: x.normal_(),
    "bernoulli_": lambda m, x: x.bernoulli_(0.5), "random_": lambda m, x: x.random_(0, 5),
    "scatter_": lambda m, x: x.scatter_(1, m.zeros(4, 1, dtype=m.int64), 1.0),
    "scatter_add_": lambda m, x: x.scatter_add_(1, m.zeros(4, 1, dtype=m.int64), m.ones(4, 1)),
    "addcdiv_": lambda m, x: x.addcdiv_(m.ones(4, 3), m.ones(4, 3)),
    "lerp_": lambda m, x: x.lerp_(m.ones(4, 3), 0.5),
    "index_put_": lambda m, x: x.index_put_((m.tensor([0]),), m.tensor(1.0)),
    "index_put_ accumulate": lambda m, x: x.index_put_((m.tensor([0]),), m.tensor(1.0), accumulate=True),
    "masked_fill_": lambda m, x: x.masked_fill_(m.tensor([[True, False, True]] * 4), 2.0),
    "masked_fill_ tensor": lambda m, x: x.masked_fill_(m.tensor([[True, False, True]] * 4), m.tensor(2.0)),
    "x[0] = tensor": lambda m, x: x.__setitem__(0, m.ones(3)),
    "x[:, 0] = 1.0": lambda m, x: x.__setitem__((slice(None), 0), 1.0),
    "x[:, 0] = tensor": lambda m, x: x.__setitem__((slice(None), 0), m.ones(4)),
    "x[...] = 1.0": lambda m, x: x.__setitem__(Ellipsis, 1.0),
    "x[index] = tensor": lambda m, x: x.__setitem__(m.tensor([0, 1]), m.ones(3)),
}


def _outcome(m, name):
    x = m.zeros(1, 3).expand(4, 3)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        try:
            CALLS[name](m, x)
        except RuntimeError as e:
            result = ("raises", str(e))
        else:
            random = name.split()[0] in ("uniform_", "normal_", "bernoulli_", "random_")
            result = ("values", None if random else np.asarray(x.tolist()).tolist())
    # PyTorch's warnings end with where they were raised in its C++ sources
    warned = sorted({str(w.message).split(" (Triggered internally")[0] for w in got
                     if "deprecated" in str(w.message)})
    return result, warned


@pytest.mark.parametrize("name", sorted(CALLS))
def test_in_place_ops_on_an_expanded_view_match_torch(name):
    assert _outcome(tp, name) == _outcome(torch, name)


@pytest.mark.parametrize("shape,expand", [((1,), (1, 1)), ((1, 0), (3, 0)), ((3,), (2, 3)), ((2, 1), (2, 2))])
def test_which_layouts_count_as_overlapping_match_torch(shape, expand):
    out = []
    for m in (tp, torch):
        x = m.zeros(shape).expand(expand)
        try:
            x.add_(1)
            out.append("ok")
        except RuntimeError as e:
            out.append(str(e))
    assert out[0] == out[1]


def test_leaf_gradients_follow_the_leaf_layout_like_torch():
    strides = []
    for m in (tp, torch):
        x = m.ones(3, 4, requires_grad=True)
        x.mean().backward()
        y = m.ones(4, 3, requires_grad=True)
        (y.t() * m.ones(3, 4)).sum().backward()
        strides.append((tuple(x.grad.stride()), tuple(y.grad.stride())))
    assert strides[0] == strides[1]
