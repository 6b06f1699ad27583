"""Quantized tensors, kernels, exact integer products, workflows and files (no PyTorch needed)."""

import copy
import os
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn

from tensorplug_quantize import gemm
from tensorplug_quantize.qtensor import QuantizedTensor


def mlp():
    tp.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


# -- tensors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,zp,expected", [
    ("qint8", 3, [4, 4, 2, 2, 6, 8, 127, -128]),     # ties to even after adding the zero point
    ("quint8", 0, [0, 2, 0, 0, 2, 5, 200, 0]),
])
def test_quantize_rounds_half_to_even_after_the_zero_point_and_saturates(dtype, zp, expected):
    x = tp.tensor([0.25, 0.75, -0.25, -0.75, 1.25, 2.5, 100., -100.])
    q = tp.quantize_per_tensor(x, 0.5, zp, getattr(tp, dtype))
    assert q.int_repr().tolist() == expected
    assert q.is_quantized and not x.is_quantized
    assert (q.q_scale(), q.q_zero_point(), q.qscheme()) == (0.5, zp, tp.per_tensor_affine)
    np.testing.assert_array_equal(q.dequantize().numpy(), (np.array(expected, np.float32) - zp) * 0.5)


def test_printing_matches_pytorch_layout():
    q = tp.quantize_per_tensor(tp.tensor([0.25, 0.75, -0.25, -0.75, 1.25, 2.5, 100., -100.]), 0.5, 3, tp.qint8)
    assert repr(q) == ("tensor([  0.5000,   0.5000,  -0.5000,  -0.5000,   1.5000,   2.5000,  62.0000,\n"
                       "        -65.5000], size=(8,), dtype=tensorplug.qint8,\n"
                       "       quantization_scheme=tensorplug.per_tensor_affine, scale=0.5, zero_point=3)")


def test_per_channel_parameters_follow_views():
    w = tp.arange(12, dtype=tp.float32).reshape(3, 4)
    q = tp.quantize_per_channel(w, tp.tensor([0.1, 0.2, 0.3]), tp.tensor([0, 1, -1]), 0, tp.qint8)
    assert q.q_per_channel_scales().dtype is tp.float64 and q.q_per_channel_axis() == 0
    assert q.t().q_per_channel_axis() == 1
    assert q[1:].q_per_channel_scales().tolist() == pytest.approx([0.2, 0.3])
    row = q[2]
    assert row.qscheme() is tp.per_tensor_affine and row.q_scale() == pytest.approx(0.3) and row.q_zero_point() == -1
    with pytest.raises(RuntimeError, match="uniformly quantized"):
        q.reshape(12)
    with pytest.raises(RuntimeError, match="kPerTensorAffine"):
        q.q_scale()


@pytest.mark.parametrize("call,err,match", [
    (lambda x: tp.quantize_per_tensor(x, 0.0, 0, tp.qint8), RuntimeError, "scale must be a positive"),
    (lambda x: tp.quantize_per_tensor(x, float("nan"), 0, tp.qint8), RuntimeError, "scale must be a positive"),
    (lambda x: tp.quantize_per_tensor(x, 0.5, 300, tp.qint8), RuntimeError, "zero_point 300 is above upper bound"),
    (lambda x: tp.quantize_per_tensor(x, 0.5, -1, tp.quint8), RuntimeError, "below lower bound"),
    (lambda x: tp.quantize_per_tensor(x, 0.5, 0, tp.int8), RuntimeError, "requires quantized dtype"),
    (lambda x: tp.quantize_per_tensor(x.double(), 0.5, 0, tp.qint8), RuntimeError, "got Double"),
    (lambda x: x.int_repr(), NotImplementedError, "int_repr"),
    (lambda x: x.q_scale(), NotImplementedError, "q_scale"),
    (lambda x: tp.quantize_per_channel(x.reshape(2, 2), tp.tensor([1.0]), tp.tensor([0]), 0, tp.qint8),
     RuntimeError, "length of scales must equal to channel, expected 2 got, 1"),
    (lambda x: tp.quantize_per_channel(x.reshape(2, 2), tp.tensor([1.0, 1.0]), tp.tensor([0, 0]), 2, tp.qint8),
     RuntimeError, "Channel axis out of range"),
])
def test_bad_input_gets_pytorchs_errors(call, err, match):
    with pytest.raises(err, match=match):
        call(tp.tensor([1.0, 2.0, 3.0, 4.0]))


def test_an_op_without_a_quantized_kernel_refuses_instead_of_dequantizing():
    q = tp.quantize_per_tensor(tp.randn(4), 0.1, 0, tp.qint8)
    with pytest.raises(NotImplementedError, match="Could not run 'tensorplug::exp' with arguments from the "
                                                  "'QuantizedCPU' backend"):
        q.exp()
    with pytest.raises(NotImplementedError, match="QuantizedCPU"):
        q + q
    with pytest.raises(RuntimeError, match="floating point"):
        q.requires_grad_()
    with pytest.raises(TypeError, match="unsupported ScalarType QInt8"):
        q.numpy()


@pytest.mark.parametrize("make", [lambda q: tp.zeros_like(q), lambda q: tp.empty(2, dtype=tp.qint8),
                                  lambda q: tp.randn(2).to(tp.qint8), lambda q: tp.full((2,), 1, dtype=tp.quint8)])
def test_factories_never_make_a_plain_tensor_of_a_quantized_dtype(make):
    q = tp.quantize_per_tensor(tp.randn(2), 0.1, 0, tp.qint8)
    with pytest.raises(RuntimeError, match="cannot create a plain tensor"):
        make(q)


def test_relu_clamps_at_the_zero_point_and_cat_requantizes_with_a_warning():
    x = tp.tensor([-1.0, -0.2, 0.3, 1.0])
    q = tp.quantize_per_tensor(x, 0.1, 5, tp.quint8)
    assert tp.relu(q).dequantize().tolist() == pytest.approx([0.0, 0.0, 0.3, 1.0])
    q2 = tp.quantize_per_tensor(x, 0.05, 20, tp.quint8)
    with pytest.warns(UserWarning, match="share the same quantization parameters"):
        c = tp.cat([q, q2])
    assert (c.q_scale(), c.q_zero_point()) == (0.1, 5)
    qc = tp.quantize_per_channel(x.reshape(4, 1), tp.ones(4), tp.zeros(4, dtype=tp.int64), 0, tp.quint8)
    with pytest.raises(RuntimeError, match="kPerTensorAffine"):
        tp.cat([q, qc.t()[0]])


def test_quantized_ops_requantize_to_the_given_parameters():
    a = tp.quantize_per_tensor(tp.tensor([0.5, -1.0, 2.0]), 0.1, 10, tp.quint8)
    b = tp.quantize_per_tensor(tp.tensor([0.25, 1.0, -3.0]), 0.05, 60, tp.quint8)
    s = tp.ops.quantized.add(a, b, 0.2, 20)
    assert (s.q_scale(), s.q_zero_point()) == (0.2, 20)
    np.testing.assert_allclose(s.dequantize().numpy(), [0.8, 0.0, -1.0], atol=0.1 + 1e-6)
    r = tp.ops.quantized.add_relu(a, b, 0.2, 20)
    assert r.dequantize().min().item() >= 0


# -- exact integer products --------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1000, 1024, 1025, 3000])
@pytest.mark.parametrize("kind", ["s8s8", "u8s8"])
def test_int_matmul_is_bit_exact_on_both_sides_of_the_float32_limit(k, kind):
    rng = np.random.default_rng(k)
    if kind == "s8s8":
        a = rng.choice(np.array([-128, 127], np.int8), size=(7, k))
    else:
        a = rng.choice(np.array([0, 255], np.uint8), size=(7, k))
    b = rng.choice(np.array([-128, 127], np.int8), size=(k, 5))
    ref = a.astype(np.int64) @ b.astype(np.int64)
    got = gemm.int_matmul(a, b)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref)
    # a single float32 product would not be exact here: the test covers the blocked path
    if k * gemm.bound(a) * gemm.bound(b) > 1 << 24:
        assert gemm.block_size(gemm.bound(a), gemm.bound(b)) < k


def test_affine_matmul_applies_zero_points_exactly():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, (4, 600)).astype(np.uint8)
    b = rng.integers(-128, 128, (600, 3)).astype(np.int8)
    zb = np.array([1, -2, 3])
    ref = (a.astype(np.int64) - 7) @ (b.astype(np.int64) - zb)
    np.testing.assert_array_equal(gemm.affine_matmul(a, 7, b, zb), ref)


def test_quantized_linear_and_matmul_equal_the_float_op_on_dequantized_values():
    x = tp.quantize_per_tensor(tp.randn(5, 40), 0.02, 128, tp.quint8)
    w = tp.quantize_per_channel(tp.randn(6, 40), tp.full((6,), 0.03), tp.zeros(6, dtype=tp.int64), 0, tp.qint8)
    b = tp.randn(6)
    got = tp.nn.functional.linear(x, w, b).numpy()
    ref = x.dequantize().numpy().astype(np.float64) @ w.dequantize().numpy().astype(np.float64).T + b.numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    y = tp.quantize_per_tensor(tp.randn(40, 3), 0.05, 100, tp.quint8)
    np.testing.assert_allclose((x @ y).numpy(), x.dequantize().numpy() @ y.dequantize().numpy(), rtol=1e-5, atol=1e-5)


# -- workflows --------------------------------------------------------------------------------------
def test_quantize_dynamic_replaces_linears_and_also_a_bare_linear():
    m = mlp()
    x = tp.randn(32, 784)
    ref = m(x).detach().numpy()
    q = tp.ao.quantization.quantize_dynamic(m, {nn.Linear}, dtype=tp.qint8)
    assert type(m[0]) is nn.Linear  # inplace=False worked on a copy
    assert [type(c).__name__ for c in q.children()].count("DynamicLinear") == 3
    assert np.abs(q(x).numpy() - ref).max() < 0.05
    bare = tp.ao.quantization.quantize_dynamic(nn.Linear(8, 4))
    assert isinstance(bare.weight(), QuantizedTensor)


@pytest.mark.parametrize("config,bytes_ratio", [
    (lambda: tp.quantization.Int8DynamicActivationInt8Weight(), 0.26),
    (lambda: tp.quantization.Int8WeightOnly(), 0.26),
    (lambda: tp.quantization.Int4WeightOnly(group_size=128), 0.15),
])
def test_torchao_configs_quantize_in_place_and_save_small_files(config, bytes_ratio, tmp_path):
    m = mlp()
    x = tp.randn(64, 784)
    ref = m(x).detach().numpy()
    tp.save(m.state_dict(), tmp_path / "f.safetensors")
    assert tp.quantization.quantize_(m, config()) is None
    got = m(x).numpy()
    assert np.abs(got - ref).max() < 0.1
    weights = {k: v for k, v in m.state_dict().items() if k.endswith("weight")}
    tp.save(weights, tmp_path / "q.safetensors")
    floats = {k: v for k, v in mlp().state_dict().items() if k.endswith("weight")}
    tp.save(floats, tmp_path / "fw.safetensors")
    assert os.path.getsize(tmp_path / "q.safetensors") <= bytes_ratio * os.path.getsize(tmp_path / "fw.safetensors")
    # the quantized model round-trips through a file: the same outputs bit for bit
    tp.save(m.state_dict(), tmp_path / "m.safetensors")
    m2 = mlp()
    tp.quantization.quantize_(m2, config())
    m2.load_state_dict(tp.load(tmp_path / "m.safetensors"))
    np.testing.assert_array_equal(m2(x).numpy(), got)


def test_per_token_config_has_a_smaller_error_than_quantize_dynamic():
    m = mlp()
    x = tp.randn(256, 784) * tp.rand(256, 1) * 4  # rows of very different ranges: per-token scales help
    ref = m(x).detach().numpy()
    dyn = tp.ao.quantization.quantize_dynamic(m)
    tok = copy.deepcopy(m)
    tp.quantization.quantize_(tok, tp.quantization.Int8DynamicActivationInt8Weight())
    assert np.abs(tok(x).numpy() - ref).max() <= 0.5 * np.abs(dyn(x).numpy() - ref).max()


def test_quantized_files_hold_no_pickles_and_need_the_plugin(tmp_path):
    q = tp.quantize_per_tensor(tp.randn(3), 0.1, 2, tp.qint8)
    path = tmp_path / "q.safetensors"
    tp.save({"q": q}, path)
    back = tp.load(path)["q"]
    assert back.int_repr().tolist() == q.int_repr().tolist() and back.q_scale() == 0.1
    raw = open(path, "rb").read()
    assert b"pickle" not in raw and b'"I8"' in raw


def test_disabled_plugin_names_itself():
    tp.plugins.disable("quantize")
    try:
        with pytest.raises(AttributeError, match="tensorplug-quantize"):
            tp.quantize_per_tensor
        with pytest.raises(AttributeError, match="tensorplug-quantize"):
            tp.ao.quantization.quantize_dynamic
        with pytest.raises(AttributeError, match="tensorplug-quantize"):
            tp.quantization.quantize_
    finally:
        tp.plugins.enable("quantize")
    assert tp.quantize_per_tensor(tp.ones(1), 1.0, 0, tp.qint8).int_repr().tolist() == [1]


@pytest.mark.parametrize("k", [1, 2, 7, 784])
def test_int4_packing_round_trips_two_values_per_byte(k):
    from tensorplug_quantize.int4 import pack_int4, unpack_int4
    v = np.random.default_rng(k).integers(0, 16, (5, k)).astype(np.uint8)
    packed = pack_int4(v)
    assert packed.shape == (5, (k + 1) // 2) and packed.dtype == np.uint8
    np.testing.assert_array_equal(unpack_int4(packed, k), v)


def test_zero_dim_tensors_quantize():
    q = tp.quantize_per_tensor(tp.tensor(1.25), 0.5, 0, tp.qint8)
    assert q.shape == () and q.int_repr().item() == 2 and q.item() == 1.0
    assert tp.quantize_per_tensor(tp.tensor(1.25), 0.5, 0, tp.qint32).int_repr().item() == 2


def test_workflow_names_load_on_first_use():
    import subprocess
    import sys
    code = ("import sys, tensorplug as tp\n"
            "assert 'tensorplug_quantize.workflows' not in sys.modules and 'tensorplug.nn' not in sys.modules\n"
            "f = tp.ao.quantization.quantize_dynamic\n"
            "assert f is tp.ao.quantization.quantize_dynamic and f.__module__ == 'tensorplug_quantize.workflows'\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
