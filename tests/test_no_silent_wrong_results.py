"""Calls that used to compute a wrong result, or fail, where PyTorch raises or computes (the values and
messages written out; the torch-oracle twin is test_no_silent_wrong_results_torch_oracle.py)."""

from __future__ import annotations

import math

import pytest

import tensorplug as tp
import tensorplug.nn.functional as F

INF, NAN = math.inf, math.nan


def _grad(fn, values):
    x = tp.tensor(values, dtype=tp.float64, requires_grad=True)
    (g,) = tp.autograd.grad(fn(x).sum(), x)
    return g.tolist()


def _same(a, b):
    return all((math.isnan(p) and math.isnan(q)) or p == q for p, q in zip(a, b)) and len(a) == len(b)


# -- activations -------------------------------------------------------------------------------------------
def test_logsigmoid_of_infinities():
    assert F.logsigmoid(tp.tensor([INF, -INF, 0.0])).tolist() == [0.0, -INF, pytest.approx(-math.log(2))]
    assert _grad(F.logsigmoid, [INF, -INF, 0.0]) == [0.0, 1.0, 0.5]


def test_softplus_backward_propagates_nan():
    assert _same(_grad(F.softplus, [NAN, 0.0, 30.0]), [NAN, 0.5, 1.0])
    assert _same(_grad(lambda x: F.softplus(x, beta=2.0, threshold=5.0), [NAN, 3.0]), [NAN, 1.0])


def test_elu_backward_at_nan_is_the_linear_slope():
    assert _same(_grad(F.elu, [NAN, -INF, 1.0]), [1.0, 0.0, 1.0])


# -- losses --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x,t,name", [([0.5], [2.0], "target"), ([0.5], [-0.5], "target"), ([0.5], [NAN], "target"),
                                      ([NAN], [0.5], "input"), ([0.5, 1.5], [2.0, 0.5], "target")])
def test_binary_cross_entropy_needs_values_in_0_1(x, t, name):
    with pytest.raises(RuntimeError, match=f"^all elements of {name} should be between 0 and 1$"):
        F.binary_cross_entropy(tp.tensor(x), tp.tensor(t))


def test_binary_cross_entropy_dtypes():
    with pytest.raises(RuntimeError, match="^Found dtype Double but expected Float$"):
        F.binary_cross_entropy(tp.tensor([0.5]), tp.tensor([1.0], dtype=tp.float64))
    with pytest.raises(NotImplementedError, match="\"binary_cross_entropy\" not implemented for 'Long'"):
        F.binary_cross_entropy(tp.tensor([1]), tp.tensor([1]))
    out = F.binary_cross_entropy(tp.tensor([0.25]), tp.tensor([1.0]), weight=tp.tensor([2.0], dtype=tp.float64))
    assert out.dtype is tp.float32


@pytest.mark.parametrize("delta", [0.0, -1.0, NAN])
def test_huber_loss_needs_a_positive_delta(delta):
    with pytest.raises(RuntimeError, match=r"^huber_loss does not support non-positive values for delta\.$"):
        F.huber_loss(tp.tensor([0.5]), tp.tensor([2.0]), delta=delta)


def test_kl_div_of_a_negative_target_is_nan_and_integers_are_refused():
    out = F.kl_div(tp.tensor([-1.0, -1.0, -1.0]), tp.tensor([-2.0, 0.0, 0.5]), reduction="none").tolist()
    assert math.isnan(out[0]) and out[1] == 0.0 and out[2] == pytest.approx(0.5 * math.log(0.5) + 0.5)
    with pytest.raises(RuntimeError, match=r"^kl_div: Integral inputs not supported\.$"):
        F.kl_div(tp.tensor([-1.0]), tp.tensor([1]), reduction="sum")


def test_cross_entropy_negative_label_smoothing_means_none():
    x, t = tp.tensor([[1.0, 2.0, 3.0]]), tp.tensor([0])
    assert F.cross_entropy(x, t, label_smoothing=-0.1).item() == F.cross_entropy(x, t).item()


@pytest.mark.parametrize("name,kernel", [("mse_loss", "mse"), ("huber_loss", "huber"), ("smooth_l1_loss", "smooth_l1")])
def test_pointwise_losses_of_integers_are_not_implemented(name, kernel):
    with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Long'"):
        getattr(F, name)(tp.tensor([1]), tp.tensor([2]))


# -- layers ---------------------------------------------------------------------------------------------------
def test_conv_bias_of_another_dtype():
    with pytest.raises(RuntimeError, match=r"^Input type \(float\) and bias type \(double\) should be the same$"):
        F.conv1d(tp.ones(1, 1, 3), tp.ones(1, 1, 2), tp.ones(1, dtype=tp.float64))
    with pytest.raises(RuntimeError, match=r"^Input type \(float\) and bias type \(long int\) should be the same$"):
        F.conv2d(tp.ones(1, 1, 3, 3), tp.ones(1, 1, 2, 2), tp.ones(1, dtype=tp.int64))
    with pytest.raises(RuntimeError, match="^All tensors must have the same dtype, got input1: float, input2: float, "
                                           "weight: float, bias: double$"):
        F.bilinear(tp.ones(2, 3), tp.ones(2, 3), tp.ones(4, 3, 3), tp.ones(4, dtype=tp.float64))


@pytest.mark.parametrize("weight", [tp.ones(3), tp.ones(3, 2, 2), tp.tensor(1.0)])
def test_embedding_weight_must_be_2d(weight):
    with pytest.raises(RuntimeError, match="^'weight' must be 2-D$"):
        F.embedding(tp.tensor([0]), weight)


def test_int_arguments_refuse_bools():
    with pytest.raises(TypeError, match="argument 'start' .* must be int, not bool"):
        tp.ones(3).narrow(0, True, 1)
    with pytest.raises(TypeError, match="must be int, not bool"):
        tp.ones(3).select(0, True)


@pytest.mark.parametrize("call,message", [
    (lambda: F.max_pool1d(tp.ones(0, 4), 2), "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                                              "batch size for input, but got:[0, 4]"),
    (lambda: F.max_pool2d(tp.ones(0, 4, 4), 2), "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                                                "for input, but got:[0, 4, 4]"),
    (lambda: F.avg_pool1d(tp.ones(0, 4), 2), "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                                             "for input, but got:[0, 1, 4]"),
    (lambda: F.adaptive_avg_pool2d(tp.ones(1, 4, 0), 2), "adaptive_avg_pool2d(): Expected input to have non-zero size "
                                                         "for non-batch dimensions, but input has sizes [1, 4, 0] with "
                                                         "dimension 2 being empty"),
])
def test_pooling_refuses_empty_non_batch_dims(call, message):
    with pytest.raises(RuntimeError) as info:
        call()
    assert str(info.value) == message


def test_pooling_accepts_an_empty_batch():
    assert F.max_pool1d(tp.ones(0, 1, 4), 2).shape == (0, 1, 2)
    assert F.avg_pool2d(tp.ones(0, 1, 4, 4), 2).shape == (0, 1, 2, 2)


def test_avg_pool_of_int64_truncates_toward_zero():
    x = tp.tensor([[[-3, -2, 5, 4, 1, 1, 7]]])
    assert F.avg_pool1d(x, 2).tolist() == [[[-2, 4, 1]]]
    assert F.avg_pool1d(x, 3, 2, 1).tolist() == [[[-1, 2, 2, 2]]]
    assert F.avg_pool2d(x, (1, 2), divisor_override=3).tolist() == [[[-1, 3, 0]]]
    with pytest.raises(NotImplementedError, match="\"avg_pool2d\" not implemented for 'Int'"):
        F.avg_pool1d(x.int(), 2)
    with pytest.raises(NotImplementedError, match="\"max_pool1d_impl\" not implemented for 'Long'"):
        F.max_pool1d(x, 2)


# -- Python operators and shapes -------------------------------------------------------------------------------
def test_reflected_operators_called_directly_with_a_tensor():
    x, y = tp.tensor([3.0, 4.0]), tp.tensor([2.0, 8.0])
    assert x.__rsub__(y).tolist() == [-1.0, 4.0]
    assert x.__rpow__(y).tolist() == [8.0, 4096.0]
    assert x.__rmod__(y).tolist() == [2.0, 0.0]
    assert x.__rtruediv__(y).tolist() == pytest.approx([2 / 3, 2.0])
    assert x.__rfloordiv__(y).tolist() == [0.0, 2.0]
    assert tp.ones(2, 3).__rmatmul__(tp.ones(4, 2)).shape == (4, 3)
    assert x.__rsub__("a") is NotImplemented


def test_broadcast_shapes_of_ints_and_sequences():
    assert tp.broadcast_shapes(5, (1,)) == (5,)
    assert tp.broadcast_shapes((2, 1), 3, None) == (2, 3)
    with pytest.raises(RuntimeError, match=r"^Attempting to broadcast a dimension of length 3 at -1! Mismatching "
                                           r"argument at index 1 had \(3,\); but expected shape should be "
                                           r"broadcastable to \[2\]$"):
        tp.broadcast_shapes(2, 3)
    with pytest.raises(ValueError, match="^Attempting to broadcast a dimension with negative length!$"):
        tp.broadcast_shapes(-1)


# -- normalization on empty inputs ---------------------------------------------------------------------------
def test_batch_norm_on_an_empty_batch_keeps_the_running_statistics():
    rm, rv = tp.zeros(3), tp.ones(3)
    w = tp.ones(3, requires_grad=True)
    y = F.batch_norm(tp.ones(0, 3), rm, rv, w, training=True)
    y.sum().backward()
    assert y.shape == (0, 3) and rm.tolist() == [0.0] * 3 and rv.tolist() == [1.0] * 3
    assert w.grad.tolist() == [0.0] * 3
    assert F.batch_norm(tp.ones(2, 0, 4), None, None, training=True).shape == (2, 0, 4)  # no channels


def test_group_norm_on_an_empty_batch():
    w = tp.ones(4, requires_grad=True)
    y = F.group_norm(tp.ones(0, 4, 5), 2, w)
    y.sum().backward()
    assert y.shape == (0, 4, 5) and w.grad.tolist() == [0.0] * 4


def test_gather_on_empty_inputs():
    assert tp.gather(tp.ones(0, 3), 1, tp.zeros(0, 2, dtype=tp.int64)).shape == (0, 2)
    assert tp.gather(tp.ones(2, 3), 1, tp.zeros(2, 0, dtype=tp.int64)).shape == (2, 0)


# -- norm -------------------------------------------------------------------------------------------------------
def test_norm_p0_requires_grad_with_no_gradient():
    x = tp.tensor([1.5, 0.0, -2.0], requires_grad=True)
    n = tp.norm(x, 0)
    assert n.item() == 2.0 and n.requires_grad and type(n.grad_fn).__name__ == "LinalgVectorNormBackward0"
    n.backward()
    assert x.grad is None


@pytest.mark.parametrize("p", [0.5, -1])
def test_norm_gradient_at_zero_is_zero_for_p_below_1(p):
    g = _grad(lambda x: tp.norm(x, p), [1.5, 0.0, -2.0])
    assert g[1] == 0.0 and not any(math.isnan(v) for v in g)


# -- pad ----------------------------------------------------------------------------------------------------------
def test_pad_crops_in_every_mode():
    x = tp.arange(5.0).reshape(1, 5)
    assert F.pad(x, (2, -1), "reflect").tolist() == [[2.0, 1.0, 0.0, 1.0, 2.0, 3.0]]
    assert F.pad(x, (-1, 2), "replicate").tolist() == [[1.0, 2.0, 3.0, 4.0, 4.0, 4.0]]
    assert F.pad(x, (-1, 2), "circular").tolist() == [[1.0, 2.0, 3.0, 4.0, 1.0, 2.0]]  # crops, then wraps
    assert F.pad(x, (-1, -2)).tolist() == [[1.0, 2.0]]
    with pytest.raises(RuntimeError, match=r"^input \(W: 5\) is too small\. Calculated output W: 0$"):
        F.pad(x, (-5, 0), "reflect")
    with pytest.raises(RuntimeError, match=r"^narrow\(\): length must be non-negative\.$"):
        F.pad(x, (-6, 2))
