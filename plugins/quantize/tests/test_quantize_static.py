"""Static quantization and QAT: observers, fake quantization, fuse/prepare/convert, quantized Linear and
Conv2d, prepare_qat and the per-layer report (no PyTorch needed)."""

import math
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn import functional as F

tq = tp.ao.quantization


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Please use quant_min and quant_max")
        yield


def sqnr(ref, got):
    ref, got = np.asarray(ref, np.float64), np.asarray(got, np.float64)
    noise = ((ref - got) ** 2).sum()
    return math.inf if noise == 0 else 10 * np.log10((ref ** 2).sum() / noise)


# the per-channel weights of x86 with a full-range activation observer
QCONFIG = tq.QConfig(activation=tq.MinMaxObserver, weight=tq.PerChannelMinMaxObserver.with_args(
    dtype=tp.qint8, qscheme=tp.per_channel_symmetric))


def mlp():
    tp.manual_seed(0)
    return nn.Sequential(tq.QuantStub(), nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16), tq.DeQuantStub()).eval()


def convnet():
    tp.manual_seed(1)
    return nn.Sequential(tq.QuantStub(), nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(8, 6, 3, stride=2, padding=1, groups=2), tq.DeQuantStub()).eval()


def ptq(model, data, qconfig=QCONFIG, fuse=None):
    if fuse:
        model = tq.fuse_modules(model, fuse)
    model.qconfig = qconfig
    prepared = tq.prepare(model)
    for x in data:
        prepared(x)
    return tq.convert(prepared)


# -- observers ------------------------------------------------------------------------------------------
def test_min_max_observer_records_the_range_and_returns_its_input():
    obs = tq.MinMaxObserver()
    x = tp.tensor([-1.0, 0.5, 2.0])
    assert obs(x) is x
    obs(tp.tensor([3.0, 0.0]))
    assert (obs.min_val.item(), obs.max_val.item()) == (-1.0, 3.0)
    scale, zp = obs.calculate_qparams()
    assert scale.dtype is tp.float32 and zp.dtype is tp.int64 and tuple(scale.shape) == (1,)
    expected = np.float32(4.0) / np.float32(255)
    assert scale.item() == pytest.approx(float(expected), rel=0, abs=0)
    assert zp.item() == int(0 - np.rint(np.float32(-1.0) / expected))  # 63.75 -> 64


def test_observer_ranges_follow_dtype_and_reduce_range():
    assert (tq.MinMaxObserver().quant_min, tq.MinMaxObserver().quant_max) == (0, 255)
    assert (tq.MinMaxObserver(reduce_range=True).quant_min, tq.MinMaxObserver(reduce_range=True).quant_max) == (0, 127)
    o = tq.MinMaxObserver(dtype=tp.qint8, qscheme=tp.per_tensor_symmetric)
    assert (o.quant_min, o.quant_max) == (-128, 127)
    o(tp.tensor([-2.0, 1.0]))
    s, z = o.calculate_qparams()
    assert z.item() == 0 and s.item() == pytest.approx(2.0 / 127.5)
    u = tq.MinMaxObserver(qscheme=tp.per_tensor_symmetric)
    u(tp.tensor([-2.0, 1.0]))
    assert u.calculate_qparams()[1].item() == 128


def test_moving_average_observer_averages():
    o = tq.MovingAverageMinMaxObserver(averaging_constant=0.5)
    o(tp.tensor([-1.0, 1.0]))
    o(tp.tensor([-3.0, 5.0]))
    assert (o.min_val.item(), o.max_val.item()) == (-2.0, 3.0)


def test_per_channel_observer_and_with_args():
    factory = tq.PerChannelMinMaxObserver.with_args(ch_axis=1, dtype=tp.qint8, qscheme=tp.per_channel_symmetric)
    o = factory()
    assert factory().ch_axis == 1 and factory(ch_axis=0).ch_axis == 0
    o(tp.tensor([[1.0, -4.0, 0.5], [-2.0, 1.0, 0.25]]))
    assert o.min_val.tolist() == [-2.0, -4.0, 0.25] and o.max_val.tolist() == [1.0, 1.0, 0.5]
    s, z = o.calculate_qparams()
    assert s.tolist() == pytest.approx([2 / 127.5, 4 / 127.5, 0.5 / 127.5]) and z.tolist() == [0, 0, 0]


def test_observer_without_data_warns_and_defaults():
    with pytest.warns(UserWarning, match="must run observer before calling calculate_qparams"):
        s, z = tq.MinMaxObserver().calculate_qparams()
    assert (s.item(), z.item()) == (1.0, 0)


def test_qconfig_refuses_observer_instances():
    with pytest.raises(ValueError, match="QConfig received observer instance"):
        tq.QConfig(activation=tq.MinMaxObserver(), weight=tq.MinMaxObserver)
    qc = tq.get_default_qconfig("x86")
    assert qc.weight().qscheme is tp.per_channel_symmetric and qc.activation().quant_max == 127
    with pytest.raises(AssertionError, match="not supported"):
        tq.get_default_qconfig("tpu")


# -- fake quantization ----------------------------------------------------------------------------------
def test_fake_quantize_rounds_half_to_even_before_the_zero_point_and_masks_the_gradient():
    x = tp.tensor([0.25, 0.75, -0.25, 1.25, 10.0, -10.0], requires_grad=True)
    y = tp.fake_quantize_per_tensor_affine(x, 0.5, 1, 0, 5)
    # round_half_even(x / 0.5) + 1 = [0 + 1, 2 + 1, -0 + 1, 2 + 1, 20 + 1 -> 5, -20 + 1 -> 0]
    assert y.tolist() == [0.0, 1.0, 0.0, 1.0, 2.0, -0.5]
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]


def test_fake_quantize_per_channel():
    x = tp.tensor([[0.3, 1.0], [0.3, 1.0]], requires_grad=True)
    y = tp.fake_quantize_per_channel_affine(x, tp.tensor([0.2, 0.5]), tp.tensor([0, 2]), 0, -2, 3)
    np.testing.assert_allclose(y.detach().numpy(), [[0.4, 0.6], [0.5, 0.5]], rtol=1e-6)
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0], [1.0, 0.0]]  # 1.0 / 0.2 = 5 and 1.0 / 0.5 + 2 = 4 lie above 3


@pytest.mark.parametrize("call,match", [
    (lambda x: tp.fake_quantize_per_tensor_affine(x, 0.1, 300, 0, 255), "`zero_point` must be between"),
    (lambda x: tp.fake_quantize_per_tensor_affine(x, 0.1, 0, 10, 5), "`quant_min` should be less than or equal"),
    (lambda x: tp.fake_quantize_per_channel_affine(x, tp.tensor([0.1, 0.1]), tp.tensor([0, 9]), 0, 0, 5),
     "`zero_point` must be between"),
])
def test_fake_quantize_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(tp.zeros(2, 2))


def test_fake_quantize_module_switches():
    fq = tq.default_fake_quant()
    x = tp.tensor([-1.0, 0.013, 2.0])
    y = fq(x)
    assert fq.scale.item() > 0 and y.tolist() != x.tolist()
    fq.disable_fake_quant()
    assert fq(x) is x
    fq.enable_fake_quant().disable_observer()
    before = fq.scale.item()
    fq(tp.tensor([-100.0, 100.0]))
    assert fq.scale.item() == before
    fq.enable_observer()
    fq(tp.tensor([-100.0, 100.0]))
    assert fq.scale.item() > before
    assert tq.default_weight_fake_quant().qscheme is tp.per_tensor_symmetric


# -- post-training static quantization ------------------------------------------------------------------
def test_prepare_attaches_observers_and_convert_swaps_modules():
    model = mlp()
    model.qconfig = QCONFIG
    prepared = tq.prepare(model)
    assert not hasattr(model[1], "activation_post_process")  # inplace=False
    assert isinstance(prepared[0].activation_post_process, tq.MinMaxObserver)
    assert isinstance(prepared[1].activation_post_process, tq.MinMaxObserver)
    assert not hasattr(prepared[2], "activation_post_process") and not hasattr(prepared[4], "activation_post_process")
    x = tp.randn(16, 32)
    assert prepared(x).tolist() == model(x).tolist()  # observers do not change values
    q = tq.convert(prepared)
    assert [type(m).__name__ for m in q] == ["Quantize", "Linear", "ReLU", "Linear", "DeQuantize"]
    assert type(q[1]) is tp.ao.nn.quantized.Linear
    out = q[:4](x)
    assert out.is_quantized and out.dtype is tp.quint8 and out.q_scale() == q[3].scale
    assert q[1].weight().dtype is tp.qint8 and q[1].weight().qscheme() is tp.per_channel_affine


def test_ptq_linear_model_is_close_to_float():
    tp.manual_seed(3)
    data = [tp.randn(64, 32) for _ in range(4)]
    model = mlp()
    q = ptq(model, data)
    x = tp.randn(64, 32)
    assert sqnr(model(x).detach().numpy(), q(x).numpy()) > 30


def test_quantized_linear_matches_an_integer_reference():
    tp.manual_seed(4)
    data = [tp.randn(64, 32)]
    q = ptq(mlp(), data)
    xq = q[0](data[0])
    lin = q[1]
    out = lin(xq)
    a = xq.int_repr().numpy().astype(np.int64) - xq.q_zero_point()
    w = lin.weight()
    wi = w.int_repr().numpy().astype(np.int64) - w.q_per_channel_zero_points().numpy()[:, None]
    ref = (a @ wi.T) * (np.float64(xq.q_scale()) * w.q_per_channel_scales().numpy()) + lin.bias.numpy()
    expected = np.clip(np.rint(ref / lin.scale + lin.zero_point), 0, 255)
    assert np.abs(out.int_repr().numpy().astype(np.int64) - expected).max() <= 1
    # the ReLU clamps at the zero point in the fused module
    fused = ptq(mlp(), data, fuse=[["1", "2"]])
    assert type(fused[1]) is tp.ao.nn.quantized.LinearReLU
    assert fused[1](fused[0](data[0])).int_repr().numpy().min() >= fused[1].zero_point


def test_ptq_conv_model_is_close_to_float():
    tp.manual_seed(5)
    data = [tp.randn(4, 3, 12, 12) for _ in range(3)]
    model = convnet()
    q = ptq(model, data, fuse=[["1", "2"]])
    assert type(q[1]) is tp.ao.nn.quantized.ConvReLU2d and type(q[3]) is tp.ao.nn.quantized.Conv2d
    x = tp.randn(4, 3, 12, 12)
    y = q(x)
    assert tuple(y.shape) == (4, 6, 6, 6)
    assert sqnr(model(x).detach().numpy(), y.numpy()) > 30


def test_quantized_conv_matches_the_float_conv_of_the_dequantized_values():
    tp.manual_seed(6)
    data = [tp.randn(2, 3, 9, 9)]
    q = ptq(convnet(), data)
    xq = q[0](data[0])
    h = q[2](q[1](xq))
    conv = q[3]
    out = conv(h)
    ref = F.conv2d(h.dequantize(), conv.weight().dequantize(), conv.bias, conv.stride, conv.padding, conv.dilation,
                   conv.groups).numpy()
    expected = np.clip(np.rint(ref / conv.scale + conv.zero_point), 0, 255)
    assert np.abs(out.int_repr().numpy().astype(np.int64) - expected).max() <= 1


def test_fuse_conv_bn_relu_folds_the_batch_norm():
    tp.manual_seed(7)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    with tp.no_grad():
        model[1].running_mean.copy_(tp.randn(4))
        model[1].running_var.copy_(tp.rand(4) + 0.5)
        model[1].weight.copy_(tp.randn(4))
    model.eval()
    fused = tq.fuse_modules(model, ["0", "1", "2"])
    assert [type(m).__name__ for m in fused] == ["ConvReLU2d", "Identity", "Identity"]
    x = tp.randn(2, 3, 8, 8)
    np.testing.assert_allclose(fused(x).detach().numpy(), model(x).detach().numpy(), atol=1e-5)
    with pytest.raises(AssertionError, match="did not find fuser method"):
        tq.fuse_modules(model, ["2", "0"])
    with pytest.raises(NotImplementedError, match="Cannot fuse train modules"):
        tq.fuse_modules(model.train(), ["0", "1"])


def test_converted_state_dict_round_trips():
    tp.manual_seed(8)
    data = [tp.randn(32, 32)]
    q = ptq(mlp(), data)
    state = q.state_dict()
    assert state["1.weight"].dtype is tp.qint8 and "1.scale" in state and "0.scale" in state
    tp.manual_seed(9)
    other = ptq(mlp(), [tp.randn(32, 32) * 3])
    other.load_state_dict(state)
    x = tp.randn(8, 32)
    assert other(x).tolist() == q(x).tolist()


def test_static_module_refuses_float_input():
    q = ptq(mlp(), [tp.randn(8, 32)])
    with pytest.raises(RuntimeError, match="quantized::linear"):
        q[1](tp.randn(2, 32))


# -- quantization-aware training ------------------------------------------------------------------------
def test_qat_trains_and_converts():
    tp.manual_seed(10)
    model = nn.Sequential(tq.QuantStub(), nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1), tq.DeQuantStub())
    model = tq.fuse_modules(model.eval(), [["1", "2"]]).train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    with pytest.raises(AssertionError, match="training mode"):
        tq.prepare_qat(model.eval())
    qat = tq.prepare_qat(model.train())
    assert type(qat[1]).__name__ == "LinearReLU" and hasattr(qat[1], "weight_fake_quant")
    assert isinstance(qat[1].activation_post_process, tq.FakeQuantize)
    x = tp.randn(256, 8)
    y = tp.relu(x @ tp.randn(8, 1)) - 0.25
    opt = tp.optim.SGD(qat.parameters(), lr=0.05)
    losses = []
    for _ in range(25):
        opt.zero_grad()
        loss = ((qat(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]
    assert qat[1].weight.grad is not None and float(np.abs(qat[1].weight.grad.numpy()).sum()) > 0
    qat.eval()
    q = tq.convert(qat)
    assert type(q[1]) is tp.ao.nn.quantized.LinearReLU and type(q[3]) is tp.ao.nn.quantized.Linear
    got = q(x).numpy()
    assert ((got - y.numpy()) ** 2).mean() < 1.5 * losses[-1]


def test_qat_conv():
    tp.manual_seed(11)
    model = convnet().train()
    model.qconfig = tq.get_default_qat_qconfig("fbgemm")
    qat = tq.prepare_qat(model)
    assert type(qat[1]).__name__ == "Conv2d" and hasattr(qat[1], "weight_fake_quant")
    x = tp.randn(2, 3, 8, 8)
    out = qat(x)
    out.sum().backward()
    assert qat[1].weight.grad is not None
    q = tq.convert(qat.eval())
    assert type(q[1]) is tp.ao.nn.quantized.Conv2d
    assert sqnr(qat(x).detach().numpy(), q(x).numpy()) > 25  # the same grids: close, often identical


# -- report ---------------------------------------------------------------------------------------------
def test_report_rows_and_values():
    tp.manual_seed(12)
    data = [tp.randn(64, 32)]
    model = mlp()
    q = ptq(model, data)
    x = data[0]
    rep = tp.quantization.report(model, q, x)
    assert rep.names() == ["0", "1", "2", "3", "4", "(output)"]
    row = rep["3"]
    ref = model[:4](x).detach().numpy()
    got = q[:4](x).dequantize().numpy()
    assert row.sqnr_db == pytest.approx(sqnr(ref, got), rel=1e-9)
    assert row.max_abs_err == pytest.approx(float(np.abs(ref - got).max()))
    assert row.module == "QuantizedLinear" and row.shape == (64, 16)
    assert all(r.sqnr_db > 25 for r in rep)
    same = tp.quantization.report(model, model, x)
    assert all(r.sqnr_db == math.inf and r.max_abs_err == 0 for r in same)
    text = str(rep)
    lines = text.splitlines()
    assert lines[0].split() == ["layer", "module", "shape", "SQNR", "(dB)", "max", "abs", "err"]
    assert len({len(line) for line in lines[:2]}) == 1 and "QuantizedLinear" in text and len(lines) == 8
    assert "inf" in same.table()


def test_report_on_dynamic_quantization():
    tp.manual_seed(13)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))
    dq = tq.quantize_dynamic(model)
    rep = tp.quantization.report(model, dq, tp.randn(16, 32))
    assert rep.names() == ["0", "1", "2", "(output)"] and rep["0"].module == "DynamicQuantizedLinear"
    assert 20 < rep["(output)"].sqnr_db < math.inf


def test_report_compares_a_fused_layer_with_the_relu_of_the_float_one():
    tp.manual_seed(14)
    model = convnet()
    x = tp.randn(2, 3, 8, 8)
    q = ptq(model, [x], fuse=[["1", "2"]])
    rep = tp.quantization.report(model, q, x)
    ref = tp.relu(model[1](x)).detach().numpy()
    got = q[1](q[0](x)).dequantize().numpy()
    assert rep["1"].module == "QuantizedConvReLU2d"
    assert rep["1"].sqnr_db == pytest.approx(sqnr(ref, got), rel=1e-9) and rep["1"].sqnr_db > 25


def test_prepare_without_qconfig_warns_and_observes_nothing():
    model = mlp()
    with pytest.warns(UserWarning, match="None of the submodule got qconfig applied"):
        prepared = tq.prepare(model)
    assert not any(hasattr(m, "activation_post_process") for m in prepared.modules())


def test_per_tensor_weights_with_the_default_qconfig():
    tp.manual_seed(15)
    data = [tp.randn(64, 32) for _ in range(2)]
    model = mlp()
    q = ptq(model, data, qconfig=tq.default_qconfig)
    w = q[1].weight()
    assert w.qscheme() is tp.per_tensor_affine and w.q_zero_point() == 0
    assert (q[0].scale.item(), q[0].zero_point.item()) == tuple(
        v.item() for v in _calibrated_input_qparams(data))
    assert sqnr(model(data[0]).detach().numpy(), q(data[0]).numpy()) > 25


def _calibrated_input_qparams(data):
    obs = tq.default_observer()
    for x in data:
        obs(x)
    return obs.calculate_qparams()


def test_histogram_observer_narrows_a_heavy_tailed_range():
    tp.manual_seed(16)
    x = tp.randn(4096) ** 3
    hist, minmax = tq.HistogramObserver(), tq.MinMaxObserver()
    assert hist(x) is x
    minmax(x)
    assert hist.histogram.sum().item() == 4096 and tuple(hist.histogram.shape) == (2048,)
    s_hist, _ = hist.calculate_qparams()
    s_mm, _ = minmax.calculate_qparams()
    assert s_hist.item() < 0.99 * s_mm.item()
    assert type(tq.get_default_qconfig("x86").activation()) is tq.HistogramObserver


def test_report_on_quantize_():
    import copy
    tp.manual_seed(17)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))
    q = copy.deepcopy(model)
    tp.quantization.quantize_(q, tp.quantization.Int8WeightOnly())
    rep = tp.quantization.report(model, q, tp.randn(16, 32))
    assert rep["0"].module == "Int8WeightOnlyLinear" and 30 < rep["0"].sqnr_db < math.inf
    assert rep.names() == ["0", "1", "2", "(output)"] and rep["(output)"].max_abs_err > 0
