"""Quantized tensors and dynamic quantization against PyTorch: int_repr bit for bit, outputs within a step."""

import copy
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*deprecated", category=UserWarning)
warnings.filterwarnings("ignore", message=".*torch.ao.quantization.*deprecated", category=DeprecationWarning)

QDTYPES = [("qint8", 3), ("quint8", 100), ("qint32", -7)]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("n", [7, 100_003])   # the scalar tail and the vectorized body of PyTorch's kernel
@pytest.mark.parametrize("scale", [0.1, 0.037, 1 / 3, 0.0123456789, 0.5])
@pytest.mark.parametrize("dtype,zp", QDTYPES)
def test_int_repr_and_dequantize_equal_torch_bit_for_bit(n, scale, dtype, zp):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 10).astype(np.float32)
    x[: min(n, 4)] = np.array([0.5, -0.5, 1.5, 2.5], np.float32)[: min(n, 4)] * np.float32(scale)  # ties
    ours = tp.quantize_per_tensor(tp.from_numpy(x), scale, zp, getattr(tp, dtype))
    theirs = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, getattr(torch, dtype))
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    np.testing.assert_array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_per_channel_int_repr_equals_torch():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((16, 300)) * 3).astype(np.float32)
    scales = rng.uniform(0.01, 0.1, 16)
    zps = rng.integers(-10, 10, 16)
    for axis, dtype in ((0, "qint8"), (1, "quint8")):
        data = w if axis == 0 else np.ascontiguousarray(w.T)
        z = zps if dtype == "qint8" else np.abs(zps) + 100
        ours = tp.quantize_per_channel(tp.from_numpy(data), tp.from_numpy(scales), tp.from_numpy(z), axis,
                                       getattr(tp, dtype))
        theirs = torch.quantize_per_channel(torch.from_numpy(data), torch.from_numpy(scales), torch.from_numpy(z),
                                            axis, getattr(torch, dtype))
        np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
        np.testing.assert_array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("reduce_range", [False, True])
def test_quantize_per_tensor_dynamic_picks_torchs_parameters(reduce_range):
    x = (np.random.default_rng(1).standard_normal((8, 50)) * 2 + 0.3).astype(np.float32)
    ours = tp.quantize_per_tensor_dynamic(tp.from_numpy(x), tp.quint8, reduce_range)
    theirs = torch.quantize_per_tensor_dynamic(torch.from_numpy(x), torch.quint8, reduce_range)
    assert ours.q_zero_point() == theirs.q_zero_point()
    assert ours.q_scale() == pytest.approx(theirs.q_scale(), rel=1e-6)
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())


def _pair():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
                             torch.nn.Linear(256, 10))
    m = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    with tp.no_grad():
        for p, q in zip(m.parameters(), tm.parameters()):
            p.copy_(tp.from_numpy(q.detach().numpy().copy()))
    return m, tm


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("batch", [1, 32, 512])
def test_quantize_dynamic_matches_torch_within_one_step(batch):
    m, tm = _pair()
    x = (np.random.default_rng(batch).standard_normal((batch, 784))).astype(np.float32)
    ours = tp.ao.quantization.quantize_dynamic(m, {nn.Linear}, dtype=tp.qint8)
    theirs = torch.ao.quantization.quantize_dynamic(tm, {torch.nn.Linear}, dtype=torch.qint8)
    for a, b in zip([c for c in ours.children() if hasattr(c, "weight") and callable(c.weight)],
                    [c for c in theirs.children() if hasattr(c, "weight") and callable(c.weight)]):
        np.testing.assert_array_equal(a.weight().int_repr().numpy(), b.weight().int_repr().numpy())
        assert a.weight().q_scale() == pytest.approx(b.weight().q_scale(), rel=1e-7)
    got = ours(tp.from_numpy(x)).numpy()
    want = theirs(torch.from_numpy(x)).detach().numpy()
    # one quantization step of the last layer's output: activation scale times weight scale, times K
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_per_token_config_halves_torchs_dynamic_error():
    m, tm = _pair()
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((64, 784)) * rng.uniform(0.1, 4, (64, 1))).astype(np.float32)
    ref = tm(torch.from_numpy(x)).detach().numpy()
    theirs = torch.ao.quantization.quantize_dynamic(tm, {torch.nn.Linear}, dtype=torch.qint8)
    err_torch = np.abs(theirs(torch.from_numpy(x)).detach().numpy() - ref).max()
    tp.quantization.quantize_(m, tp.quantization.Int8DynamicActivationInt8Weight())
    err_ours = np.abs(m(tp.from_numpy(x)).numpy() - ref).max()
    assert err_ours <= 0.5 * err_torch


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("lo,hi", [(0.0, 0.0), (-1e-30, 1e-30), (1e-7, 2e-7), (-5.0, -1.0), (2.0, 9.0), (-1e30, 1e30)])
def test_dynamic_parameters_of_edge_ranges_equal_torchs(lo, hi):
    x = np.array([lo, hi, (lo + hi) / 2], np.float32)
    ours = tp.quantize_per_tensor_dynamic(tp.from_numpy(x), tp.quint8, False)
    theirs = torch.quantize_per_tensor_dynamic(torch.from_numpy(x), torch.quint8, False)
    assert ours.q_zero_point() == theirs.q_zero_point()
    assert ours.q_scale() == pytest.approx(theirs.q_scale(), rel=1e-6)
