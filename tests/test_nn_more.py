"""channel_shuffle, max_unpool, 3-d adaptive pooling, conv_transpose3d, the native_* normalizations, the
backward ops of torch.ops.aten and grid_sampler_3d: values against numpy and hand-computed results, errors."""

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F
from tensorplug.testing import op_db_nn_more as R


def _a(t):
    return t.detach().numpy()


def test_channel_shuffle_moves_channels():
    x = tp.arange(6.0).reshape(1, 6, 1)
    assert _a(F.channel_shuffle(x, 2)).ravel().tolist() == [0, 3, 1, 4, 2, 5]
    assert _a(tp.nn.ChannelShuffle(3)(x)).ravel().tolist() == [0, 2, 4, 1, 3, 5]
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups"):
        F.channel_shuffle(tp.ones(1, 5, 2), 2)
    with pytest.raises(RuntimeError, match="must be positive"):
        tp.channel_shuffle(tp.ones(1, 4, 2), 0)


def test_max_unpool_inverts_max_pool():
    x = tp.tensor([[[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 8.0, 1.0]]]])
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    assert _a(idx).ravel().tolist() == [1, 6]
    up = F.max_unpool2d(out, idx, 2)
    assert _a(up).tolist() == [[[[0.0, 5.0, 0.0, 0.0], [0.0, 0.0, 8.0, 0.0]]]]
    assert tp.nn.MaxUnpool2d(2)(out, idx, output_size=(3, 5)).shape == (1, 1, 3, 5)
    v, i = F.max_pool1d(tp.tensor([[[1.0, 3.0, 2.0, 0.0, 7.0]]]), 2, return_indices=True)
    assert _a(F.max_unpool1d(v, i, 2, output_size=[5])).ravel().tolist() == [0, 3, 2, 0, 0]


def test_max_unpool_gradient_and_errors():
    x = tp.tensor([[[[2.0, 3.0]]]], requires_grad=True)
    idx = tp.tensor([[[[3, 0]]]])
    up = F.max_unpool2d(x, idx, 2, output_size=(2, 3))
    assert _a(up).tolist() == [[[[3.0, 0.0, 0.0], [2.0, 0.0, 0.0]]]]
    (up * tp.tensor([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]])).sum().backward()
    assert _a(x.grad).ravel().tolist() == [4.0, 1.0]
    with pytest.raises(RuntimeError, match="Found an invalid max index: 9"):
        F.max_unpool2d(tp.ones(1, 1, 1, 2), tp.tensor([[[[0, 9]]]]), 2, output_size=(2, 3))
    with pytest.raises(RuntimeError, match="Expected shape of indices to be same"):
        F.max_unpool3d(tp.ones(1, 1, 2, 2, 2), tp.zeros(1, 1, 2, 2, 1, dtype=tp.int64), 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool2d(tp.ones(1, 1, 2, 2), tp.zeros(1, 1, 2, 2, dtype=tp.int64), 2, output_size=(9, 9))


def test_adaptive_pools_3d():
    x = tp.arange(2 * 4 * 4 * 6.0).reshape(2, 4, 4, 6)
    v = _a(x)
    got = _a(F.adaptive_avg_pool3d(x, (2, 1, 3)))
    want = v.reshape(2, 2, 2, 1, 4, 3, 2).mean((2, 4, 6))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    out, idx = F.adaptive_max_pool3d(x, 2, return_indices=True)
    assert out.shape == (2, 2, 2, 2) and _a(out)[0, 0, 0, 0] == v[0, 1, 1, 2]
    assert _a(idx)[0, 0, 0, 0] == (1 * 4 + 1) * 6 + 2
    assert tp.nn.AdaptiveAvgPool3d((None, 2, 3))(x).shape == (2, 4, 2, 3)
    assert tp.nn.AdaptiveMaxPool3d(1)(x).shape == (2, 1, 1, 1)
    with pytest.raises(ValueError, match="Input dimension should be at least 4"):
        F.adaptive_avg_pool3d(tp.ones(2, 2, 2), (1, 1, 1))
    with pytest.raises(NotImplementedError, match="adaptive_max_pool3d_cpu"):
        F.adaptive_max_pool3d(tp.ones(1, 2, 2, 2, dtype=tp.int64), 1)


def test_conv_transpose3d_matches_the_scatter_reference():
    x = R.make_tensor((1, 2, 2, 3, 2), tp.float64, seed=1)
    w = R.make_tensor((2, 3, 2, 2, 3), tp.float64, seed=2)
    b = R.make_tensor((3,), tp.float64, seed=3)
    for kw in ({}, {"stride": 2, "padding": 1, "output_padding": 1}, {"dilation": (1, 2, 1)}):
        got = F.conv_transpose3d(x, w, b, **kw)
        np.testing.assert_allclose(_a(got), R._conv_t3_ref(_a(x), _a(w), _a(b), **kw), atol=1e-12)
    m = tp.nn.ConvTranspose3d(2, 4, 3, stride=2)
    assert m(tp.ones(1, 2, 2, 2, 2)).shape == (1, 4, 5, 5, 5)
    assert m(tp.ones(1, 2, 2, 2, 2), output_size=(6, 6, 6)).shape == (1, 4, 6, 6, 6)


def test_native_batch_norm_outputs_and_running_stats():
    x = tp.tensor([[[1.0, 3.0]], [[5.0, 7.0]]])  # N=2, C=1, L=2
    rm, rv = tp.zeros(1), tp.ones(1)
    out, mean, invstd = tp.native_batch_norm(x, None, None, rm, rv, True, 0.5, 0.0)
    assert _a(mean).tolist() == [4.0] and abs(_a(invstd)[0] - 1 / np.sqrt(5.0)) < 1e-6
    assert abs(_a(rm)[0] - 2.0) < 1e-6 and abs(_a(rv)[0] - (0.5 + 0.5 * 20 / 3)) < 1e-5
    np.testing.assert_allclose(_a(out).ravel(), (np.array([1, 3, 5, 7]) - 4) / np.sqrt(5), rtol=1e-6)
    out, m2, s2 = tp.native_batch_norm(x, None, None, rm, rv, False, 0.5, 0.0)
    assert m2.shape == (0,) and s2.shape == (0,)
    with pytest.raises(RuntimeError, match="running_mean and running_var must be defined in evaluation mode"):
        tp.native_batch_norm(x, None, None, None, None, False, 0.1, 1e-5)


def test_native_group_and_layer_norm_statistics():
    x = tp.arange(12.0).reshape(2, 2, 3)
    out, mean, rstd = tp.native_group_norm(x, None, None, 2, 2, 3, 1, 0.0)
    assert mean.shape == (2, 1) and _a(mean).ravel().tolist() == [2.5, 8.5]
    np.testing.assert_allclose(_a(rstd).ravel(), 1 / np.sqrt(np.var(np.arange(6.0))) * np.ones(2), rtol=1e-6)
    out, mean, rstd = tp.native_layer_norm(x, (3,), None, None, 0.0)
    assert mean.shape == (2, 2, 1) and _a(mean).ravel().tolist() == [1, 4, 7, 10]
    with pytest.raises(RuntimeError, match="Expected normalized_shape to be at least 1-dimensional"):
        tp.native_layer_norm(x, (), None, None, 1e-5)


def test_backward_ops():
    g = tp.tensor([1.0, 2.0, 3.0])
    m = tp.tensor([True, False, True])
    assert _a(tp.ops.tensorplug.native_dropout_backward(g, m, 2.0)).tolist() == [2.0, 0.0, 6.0]
    assert tp.ops.tensorplug.native_dropout_backward(tp.ones(2, dtype=tp.int64), m[:2], 2.0).dtype is tp.float32
    x = tp.tensor([[[1.0, 5.0], [3.0, 4.0]]])
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    gi = tp.ops.tensorplug.max_pool2d_with_indices_backward(tp.full_like(out, 7.0), x, (2, 2), (2, 2), (0, 0),
                                                            (1, 1), False, idx)
    assert _a(gi).tolist() == [[[0.0, 7.0], [0.0, 0.0]]]


def test_grid_samplers():
    x = tp.arange(8.0).reshape(1, 1, 2, 2, 2)
    corners = tp.tensor([[[[[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]]]])
    got = _a(tp.grid_sampler_3d(x, corners, 0, 0, True)).ravel()
    assert got.tolist() == [0.0, 7.0, 3.5]
    assert _a(tp.grid_sampler_3d(x, corners, 1, 0, True)).ravel()[:2].tolist() == [0.0, 7.0]
    img = tp.arange(4.0).reshape(1, 1, 2, 2)
    g2 = tp.tensor([[[[1.0, -1.0]]]])
    assert _a(tp.grid_sampler_2d(img, g2, 0, 0, True)).ravel().tolist() == [1.0]
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        tp.grid_sampler_3d(x, corners, 2, 0, True)


def test_linear_cross_entropy_is_cross_entropy_of_the_logits():
    x = R.make_tensor((4, 3), tp.float64, seed=1)
    w = R.make_tensor((5, 3), tp.float64, seed=2)
    b = R.make_tensor((5,), tp.float64, seed=3)
    t = tp.tensor([0, 4, 2, 1])
    got = F.linear_cross_entropy(x, w, t, linear_bias=b, reduction="sum")
    want = F.cross_entropy(F.linear(x, w, b), t, reduction="sum")
    assert abs(got.item() - want.item()) < 1e-12
    k = F.linear_cross_entropy(x[:2], R.make_tensor((4, 2, 3), tp.float64, seed=4), tp.tensor([[0, 3], [1, 1]]),
                               reduction="none")
    assert k.shape == (2, 2)
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified when target contains probabilities"):
        F.linear_cross_entropy(x, w, tp.ones(4, 5) / 5, ignore_index=0)
    with pytest.raises(RuntimeError, match="K-dimensional loss defined by linear_weight shape"):
        F.linear_cross_entropy(x[0], R.make_tensor((4, 2, 3), tp.float64), tp.tensor([0, 1]))


def test_fractional_max_pool_windows():
    x = tp.arange(16.0).reshape(1, 1, 4, 4)
    u = tp.tensor([[[0.5, 0.5]]])
    out, idx = F.fractional_max_pool2d(x, 2, output_size=2, return_indices=True, _random_samples=u)
    # alpha = (4 - 2) / (2 - 1) = 2: starts int(0.5 * 2) - int(0.5 * 2) = 0 and the last 4 - 2 = 2
    assert _a(out).tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]] and _a(idx).ravel().tolist() == [5, 7, 13, 15]
    y = F.fractional_max_pool3d(tp.randn(2, 5, 5, 5), 2, output_ratio=(0.5, 0.5, 0.5))
    assert y.shape == (2, 2, 2, 2)
    assert tp.nn.FractionalMaxPool2d(3, output_ratio=0.5)(tp.randn(1, 2, 9, 9)).shape == (1, 2, 4, 4)
    with pytest.raises(ValueError, match="requires specifying either an output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="pool height 3 too large relative to input height 4"):
        F.fractional_max_pool2d(x, 3, output_size=3)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        tp.nn.FractionalMaxPool3d(2, output_ratio=1.5)


def test_stft_frames_and_istft_inverts_it():
    x = tp.tensor(np.sin(np.arange(64) * 0.3))
    w = tp.tensor(np.hanning(16))
    spec = tp.stft(x, 16, hop_length=4, window=w, return_complex=True)
    assert spec.shape == (9, 17) and spec.dtype is tp.complex128
    # frame 1 of the centred signal is x_padded[4:20] times the window
    xp = np.pad(np.sin(np.arange(64) * 0.3), 8, mode="reflect")
    np.testing.assert_allclose(spec.numpy()[:, 1], np.fft.rfft(xp[4:20] * np.hanning(16)), atol=1e-12)
    back = tp.istft(spec, 16, hop_length=4, window=w, length=64)
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-10)
    assert x.stft(16, window=w, return_complex=False).shape == (9, 17, 2)
    with pytest.raises(RuntimeError, match="stft requires the return_complex parameter"):
        tp.stft(x, 16, window=w)
    with pytest.raises(RuntimeError, match="istft requires a complex-valued input tensor"):
        tp.istft(tp.ones(9, 5), 16)


def test_native_batch_norm_training_updates_the_running_statistics_in_place():
    x = tp.tensor([[1.0, 2.0, 3.0], [3.0, 6.0, 3.0], [5.0, 4.0, 3.0], [7.0, 0.0, 3.0]])
    rm, rv = tp.zeros(3), tp.ones(3)
    out, mean, rstd = tp.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    assert mean.tolist() == pytest.approx([4.0, 3.0, 3.0])
    assert rm.tolist() == pytest.approx([0.4, 0.3, 0.3])  # 0.9 * 0 + 0.1 * mean
    # 0.9 * 1 + 0.1 * the unbiased variance (20/3, 20/3, 0)
    assert rv.tolist() == pytest.approx([0.9 + 2 / 3, 0.9 + 2 / 3, 0.9])
    assert rstd.tolist() == pytest.approx([1 / (5.0 + 1e-5) ** 0.5, 1 / (5.0 + 1e-5) ** 0.5, 1 / 1e-5 ** 0.5])
