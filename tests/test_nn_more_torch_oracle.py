"""The nn_more ops against PyTorch: values and float64 gradients of conv_transpose3d, max_unpool, the 3-d
adaptive pools, channel_shuffle, the native_* normalizations (all three results) and grid_sampler_3d."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def pair(shape, seed, grad=True):
    a = np.random.default_rng(seed).standard_normal(shape)
    return tp.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def both(fn, tfn, shapes, tol=1e-10):
    ours, theirs = zip(*[pair(s, i) for i, s in enumerate(shapes)])
    y, z = fn(*ours), tfn(*theirs)
    close(y, z, tol)
    g = np.random.default_rng(7).standard_normal(tuple(z.shape))
    y.backward(tp.tensor(g))
    z.backward(torch.tensor(g))
    for a, b in zip(ours, theirs):
        close(a.grad, b.grad, tol)


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1, "output_padding": 1},
                                {"stride": (1, 2, 1), "dilation": (2, 1, 1), "groups": 2}])
def test_conv_transpose3d(kw):
    both(lambda x, w, b: F.conv_transpose3d(x, w, b, **kw), lambda x, w, b: TF.conv_transpose3d(x, w, b, **kw),
         [(2, 4, 3, 2, 3), (4, 3, 2, 2, 2), (3 * kw.get("groups", 1),)])


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool(nd):
    shape = (2, 3) + (5, 6, 4)[:nd]
    t = torch.randn(shape, dtype=torch.float64)
    pool = getattr(TF, f"max_pool{nd}d")
    out, idx = pool(t, 2, return_indices=True)
    ours = getattr(F, f"max_unpool{nd}d")(tp.tensor(out.numpy()), tp.tensor(idx.numpy()), 2, output_size=shape)
    close(ours, getattr(TF, f"max_unpool{nd}d")(out, idx, 2, output_size=shape))


@pytest.mark.parametrize("size", [(2, 3, 4), (3, None, 1), 1])
def test_adaptive_pools_3d(size):
    both(lambda x: F.adaptive_avg_pool3d(x, size), lambda x: TF.adaptive_avg_pool3d(x, size), [(2, 2, 5, 4, 7)])
    both(lambda x: F.adaptive_max_pool3d(x, size), lambda x: TF.adaptive_max_pool3d(x, size), [(2, 5, 4, 7)])
    x, tx = pair((1, 2, 5, 4, 7), 3)
    assert (F.adaptive_max_pool3d(x, size, True)[1].numpy() == TF.adaptive_max_pool3d(tx, size, True)[1].numpy()).all()


def test_channel_shuffle():
    both(lambda x: F.channel_shuffle(x, 3), lambda x: TF.channel_shuffle(x, 3), [(2, 6, 2, 3)])


def test_native_norms():
    x, tx = pair((3, 4, 5), 0)
    for ours, theirs in ((tp.native_group_norm(x, None, None, 3, 4, 5, 2, 1e-5),
                          torch.native_group_norm(tx, None, None, 3, 4, 5, 2, 1e-5)),
                         (tp.native_layer_norm(x, (4, 5), None, None, 1e-5),
                          torch.native_layer_norm(tx, (4, 5), None, None, 1e-5)),
                         (tp.native_batch_norm(x, None, None, tp.zeros(4, dtype=tp.float64),
                                               tp.ones(4, dtype=tp.float64), True, 0.2, 1e-5),
                          torch.native_batch_norm(tx, None, None, torch.zeros(4, dtype=torch.float64),
                                                  torch.ones(4, dtype=torch.float64), True, 0.2, 1e-5))):
        for a, b in zip(ours, theirs):
            close(a, b, 1e-8)


@pytest.mark.parametrize("mode,pad,align", [(0, 0, False), (0, 1, True), (0, 2, False), (1, 0, True), (0, 2, True)])
def test_grid_sampler_3d(mode, pad, align):
    a = np.random.default_rng(1).uniform(-1.4, 1.4, (2, 3, 2, 4, 3))
    g, tg = tp.tensor(a, requires_grad=mode == 0), torch.tensor(a, requires_grad=mode == 0)
    x, tx = pair((2, 2, 3, 4, 5), 2)
    y = tp.grid_sampler_3d(x, g, mode, pad, align)
    z = torch.grid_sampler_3d(tx, tg, mode, pad, align)
    close(y, z)
    y.sum().backward()
    z.sum().backward()
    close(x.grad, tx.grad)
    if mode == 0:
        close(g.grad, tg.grad, 1e-8)


@pytest.mark.parametrize("nd,shape,k,kw", [(2, (2, 3, 9, 9), 3, {"output_size": (2, 3)}),
                                           (2, (3, 9, 8), (2, 3), {"output_ratio": (0.5, 0.5)}),
                                           (3, (2, 3, 5, 5, 5), (2, 2, 2), {"output_size": (2, 3, 2)}),
                                           (3, (1, 1, 7, 6, 7), (2, 3, 4), {"output_ratio": (0.5, 0.5, 0.5)})])
def test_fractional_max_pool_with_the_same_samples(nd, shape, k, kw):
    n = shape[0] if len(shape) == nd + 2 else 1
    u = np.random.default_rng(5).uniform(0, 1, (n, shape[-nd - 1], nd))
    fn, tfn = getattr(F, f"fractional_max_pool{nd}d"), getattr(TF, f"fractional_max_pool{nd}d")
    both(lambda x: fn(x, k, _random_samples=tp.tensor(u), **kw),
         lambda x: tfn(x, k, _random_samples=torch.tensor(u), **kw), [shape])
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    a = fn(tp.tensor(x), k, return_indices=True, _random_samples=tp.tensor(u.astype(np.float32)), **kw)[1]
    b = tfn(torch.tensor(x), k, return_indices=True, _random_samples=torch.tensor(u.astype(np.float32)), **kw)[1]
    assert (a.numpy() == b.numpy()).all()


@pytest.mark.parametrize("kw", [{}, {"reduction": "none", "ignore_index": 2}, {"label_smoothing": 0.1}])
def test_linear_cross_entropy(kw):
    t = np.array([0, 2, 1, 2])
    both(lambda x, w, b: F.linear_cross_entropy(x, w, tp.tensor(t), linear_bias=b, **kw),
         lambda x, w, b: TF.linear_cross_entropy(x, w, torch.tensor(t), linear_bias=b, **kw),
         [(4, 3), (3, 3), (3,)])


@pytest.mark.parametrize("kw", [{"n_fft": 10}, {"n_fft": 16, "hop_length": 4, "center": False},
                                {"n_fft": 12, "win_length": 8, "normalized": True, "onesided": False}])
def test_stft_and_istft(kw):
    a = np.random.default_rng(3).standard_normal((2, 60))
    w = np.hanning(kw.get("win_length", kw["n_fft"])) + 0.1
    ours = tp.stft(tp.tensor(a), window=tp.tensor(w), return_complex=True, **kw)
    theirs = torch.stft(torch.tensor(a), window=torch.tensor(w), return_complex=True, **kw)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-10)
    ikw = {k: v for k, v in kw.items()}
    got = tp.istft(ours, window=tp.tensor(w), length=60 if kw.get("center", True) else None, **ikw)
    want = torch.istft(theirs, window=torch.tensor(w), length=60 if kw.get("center", True) else None, **ikw)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-10)
    both(lambda x: tp.view_as_real(x.stft(8, window=tp.ones(8, dtype=tp.float64), return_complex=True)),
         lambda x: torch.view_as_real(x.stft(8, window=torch.ones(8, dtype=torch.float64), return_complex=True)),
         [(50,)])


def test_grid_sample_of_5d_inputs():
    a = np.random.default_rng(8).uniform(-1.2, 1.2, (2, 2, 3, 2, 3))
    x, tx = pair((2, 3, 4, 3, 5), 9)
    for mode in ("bilinear", "nearest"):
        close(F.grid_sample(x, tp.tensor(a), mode=mode, align_corners=False),
              TF.grid_sample(tx, torch.tensor(a), mode=mode, align_corners=False))


@pytest.mark.parametrize("kw", [{"output_padding": 1}, {"output_padding": (0, 2, 0), "stride": 2}, {"groups": 3},
                                {"padding": 3}, {"stride": 0}, {"output_padding": -1}])
def test_conv_transpose3d_errors(kw):
    with pytest.raises(Exception) as theirs:
        TF.conv_transpose3d(torch.randn(1, 2, 3, 3, 3), torch.randn(2, 2, 2, 2, 2), **kw)
    with pytest.raises(type(theirs.value)) as ours:
        F.conv_transpose3d(tp.randn(1, 2, 3, 3, 3), tp.randn(2, 2, 2, 2, 2), **kw)
    assert str(ours.value) == str(theirs.value)
