"""nn layers and nn.functional against numpy references; default initializations; gradients by gradcheck."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp
from tensorplug import nn
from tensorplug.autograd import gradcheck
import tensorplug.nn.functional as F

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32, seed=None):
    rng = RNG if seed is None else np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype)


def T(a, grad=False):
    t = tp.tensor(a)
    return t.requires_grad_() if grad else t


def close(ours, ref, tol=1e-5):
    np.testing.assert_allclose(ours.detach().numpy(), ref, rtol=tol, atol=tol)


# -- numpy references ---------------------------------------------------------------------------
def conv2d_ref(x, w, b, stride, padding, dilation, groups):
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, ho, wo), dtype=np.float64)
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i * dh:i * dh + sh * (ho - 1) + 1:sh,
                           j * dw:j * dw + sw * (wo - 1) + 1:sw]
                out[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out


def pool2d_ref(x, k, s, p, d, ceil_mode, op, count_include_pad=True):
    """Max or mean over windows, with PyTorch's output size rule and divisor rule."""
    n, c, h, w = x.shape
    outs = []
    for size, ki, si, pi, di in zip((h, w), k, s, p, d):
        num = size + 2 * pi - di * (ki - 1) - 1 + (si - 1 if ceil_mode else 0)
        o = num // si + 1
        if ceil_mode and (o - 1) * si >= size + pi:
            o -= 1
        outs.append(o)
    out = np.zeros((n, c, outs[0], outs[1]))
    for i in range(outs[0]):
        for j in range(outs[1]):
            hs, ws = i * s[0] - p[0], j * s[1] - p[1]
            rows = [hs + a * d[0] for a in range(k[0])]
            cols = [ws + b * d[1] for b in range(k[1])]
            vr = [r for r in rows if 0 <= r < h]
            vc = [q for q in cols if 0 <= q < w]
            win = x[:, :, vr][:, :, :, vc].reshape(n, c, -1)
            if op == "max":
                out[:, :, i, j] = win.max(-1)
            else:
                he, we = min(hs + k[0], h + p[0]), min(ws + k[1], w + p[1])
                div = (he - hs) * (we - ws) if count_include_pad else len(vr) * len(vc)
                out[:, :, i, j] = win.sum(-1) / div
    return out


# -- linear, bilinear, identity ----------------------------------------------------------------------
def test_linear_forward_and_shapes():
    lin = nn.Linear(4, 3)
    x = rand(5, 4)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    close(lin(T(x)), x @ w.T + b)
    close(lin(T(rand(2, 5, 4, seed=1))), rand(2, 5, 4, seed=1) @ w.T + b)
    close(nn.Linear(4, 2, bias=False)(T(x)).detach().sum() * 0, np.float32(0))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(5x5 and 4x3\)"):
        lin(T(rand(5, 5)))


def test_bilinear_forward():
    m = nn.Bilinear(3, 2, 4)
    x1, x2 = rand(5, 3), rand(5, 2)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    close(m(T(x1), T(x2)), np.einsum("bi,oij,bj->bo", x1, w, x2) + b)


def test_identity_and_flatten():
    x = T(rand(2, 3, 4))
    assert nn.Identity(7, key=1)(x) is x
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 4)
    assert nn.Unflatten(2, (2, 2))(x).shape == (2, 3, 2, 2)
    assert repr(nn.Unflatten(1, (2, 2))) == "Unflatten(dim=1, unflattened_size=(2, 2))"
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints, but found element of type float"):
        nn.Unflatten(1, (2, 2.0))


# -- convolution ------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 2), groups=st.sampled_from([1, 2]), cg=st.integers(1, 2), og=st.integers(1, 2),
       kh=st.integers(1, 3), kw=st.integers(1, 3), sh=st.integers(1, 2), sw=st.integers(1, 3),
       ph=st.integers(0, 2), pw=st.integers(0, 1), dh=st.integers(1, 2), dw=st.integers(1, 2),
       h=st.integers(5, 7), w=st.integers(5, 8), bias=st.booleans())
def test_conv2d_matches_numpy(n, groups, cg, og, kh, kw, sh, sw, ph, pw, dh, dw, h, w, bias):
    x = rand(n, groups * cg, h, w)
    wt = rand(groups * og, cg, kh, kw)
    b = rand(groups * og) if bias else None
    out = F.conv2d(T(x), T(wt), None if b is None else T(b), (sh, sw), (ph, pw), (dh, dw), groups)
    close(out, conv2d_ref(x, wt, b, (sh, sw), (ph, pw), (dh, dw), groups), 1e-4)
    assert out.is_contiguous()


@pytest.mark.parametrize("kernel, dilation", [(3, 1), (4, 1), (3, 2), ((2, 5), (1, 1))])
def test_conv2d_same_padding(kernel, dilation):
    m = nn.Conv2d(2, 3, kernel, padding="same", dilation=dilation)
    x = rand(1, 2, 6, 7)
    out = m(T(x))
    assert out.shape == (1, 3, 6, 7)
    k = (kernel, kernel) if isinstance(kernel, int) else kernel
    d = (dilation, dilation) if isinstance(dilation, int) else dilation
    # PyTorch's rule: an odd total padding puts the extra element on the right/bottom
    totals = [di * (ki - 1) for di, ki in zip(d, k)]
    xp = np.pad(x, ((0, 0), (0, 0), (totals[0] // 2, totals[0] - totals[0] // 2),
                    (totals[1] // 2, totals[1] - totals[1] // 2)))
    close(out, conv2d_ref(xp, m.weight.detach().numpy(), m.bias.detach().numpy(), (1, 1), (0, 0), d, 1), 1e-4)
    assert nn.Conv2d(2, 3, 3, padding="valid")(T(x)).shape == (1, 3, 4, 5)


def test_conv1d_and_unbatched_inputs():
    m = nn.Conv1d(2, 4, 3, stride=2, padding=1)
    x = rand(3, 2, 9)
    ref = conv2d_ref(x[:, :, None], m.weight.detach().numpy()[:, :, None], m.bias.detach().numpy(), (1, 2),
                     (0, 1), (1, 1), 1)[:, :, 0]
    close(m(T(x)), ref, 1e-4)
    close(m(T(x[0])), ref[0], 1e-4)
    c2 = nn.Conv2d(2, 3, 3)
    close(c2(T(x[0, :, :9].reshape(2, 3, 3))).reshape(3), c2(T(x[:1, :, :9].reshape(1, 2, 3, 3))).reshape(3)
          .detach().numpy())


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv2d_padding_modes(mode):
    m = nn.Conv2d(1, 2, 3, padding=(1, 2), padding_mode=mode)
    x = rand(1, 1, 4, 5)
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), mode=np_mode)
    close(m(T(x)), conv2d_ref(xp, m.weight.detach().numpy(), m.bias.detach().numpy(), (1, 1), (0, 0), (1, 1), 1),
          1e-4)
    assert f"padding_mode={mode}" in repr(m)


CONV_ERRORS = [
    (lambda: F.conv2d(T(rand(4, 8)), T(rand(8, 4, 3, 3))), RuntimeError,
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of size: \[4, 8\]"),
    (lambda: F.conv2d(T(rand(2, 4, 8, 8)), T(rand(8, 3, 3, 3))), RuntimeError,
     r"Given groups=1, weight of size \[8, 3, 3, 3\], expected input\[2, 4, 8, 8\] to have 3 channels, but got 4 "
     r"channels instead"),
    (lambda: F.conv2d(T(rand(2, 3, 8, 8)), T(rand(8, 3, 9, 9))), RuntimeError,
     r"Calculated padded input size per channel: \(8 x 8\). Kernel size: \(9 x 9\). Kernel size can't be greater"),
    (lambda: F.conv2d(T(rand(2, 3, 8, 8)), T(rand(8, 3, 3, 3)), T(rand(4))), RuntimeError,
     r"Given weight of size \[8, 3, 3, 3\], expected bias to be 1-dimensional with 8 elements, but got bias of "
     r"size \[4\] instead"),
    (lambda: F.conv2d(T(rand(1, 3, 8, 8)), T(rand(8, 3, 3, 3)), stride=0), RuntimeError,
     "non-positive stride is not supported"),
    (lambda: F.conv2d(T(rand(1, 3, 8, 8)), T(rand(8, 3, 3, 3)), padding=-1), RuntimeError,
     "negative padding is not supported"),
    (lambda: F.conv2d(T(rand(1, 3, 8, 8)), T(rand(8, 3, 3, 3)), dilation=0), RuntimeError,
     r"dilation should be greater than zero, but got \[0, 0\]"),
    (lambda: F.conv2d(T(rand(1, 3, 8, 8)), T(rand(8, 3, 3, 3)), groups=0), RuntimeError,
     "non-positive groups is not supported"),
    (lambda: F.conv2d(T(rand(1, 4, 8, 8)), T(rand(3, 2, 3, 3)), groups=2), RuntimeError,
     r"Given groups=2, expected weight to be divisible by 2 at dimension 0"),
    (lambda: F.conv2d(T(rand(1, 3, 8, 8, dtype=np.float64)), T(rand(8, 3, 3, 3))), RuntimeError,
     "expected scalar type Double but found Float"),
    (lambda: F.conv2d(T(rand(1, 3, 8, 8)), T(rand(8, 3, 3, 3)), stride=2, padding="same"), RuntimeError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(T(rand(1, 3, 8, 8)), T(rand(8, 3, 3, 3)), padding="foo"), RuntimeError,
     "Invalid padding string: 'foo'"),
    (lambda: F.conv2d(T(rand(1, 3, 8, 8)), T(rand(8, 3, 3, 3)), stride=(1, 2, 3)), RuntimeError,
     r"expected stride to be a single integer value or a list of 2 values to match the convolution dimensions, "
     r"but got stride=\[1, 2, 3\]"),
    (lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError, "in_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 3, 3, groups=2), ValueError, "out_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 4, 3, groups=0), ValueError, "groups must be a positive integer"),
    (lambda: nn.Conv2d(4, 4, 3, padding="full"), ValueError, "Invalid padding string 'full'"),
    (lambda: nn.Conv2d(4, 4, 3, padding="same", stride=2), ValueError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: nn.Conv2d(4, 4, 3, padding_mode="mirror"), ValueError, "padding_mode must be one of"),
]


@pytest.mark.parametrize("call, error, match", CONV_ERRORS)
def test_conv_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_conv_reprs():
    assert repr(nn.Conv2d(3, 8, 3, padding="same")) == "Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=same)"
    assert repr(nn.Conv2d(3, 8, (3, 5), stride=2, padding=1, dilation=2, bias=False, padding_mode="circular")) == \
        ("Conv2d(3, 8, kernel_size=(3, 5), stride=(2, 2), padding=(1, 1), dilation=(2, 2), bias=False, "
         "padding_mode=circular)")
    assert repr(nn.Conv1d(2, 4, 3, groups=2)) == "Conv1d(2, 4, kernel_size=(3,), stride=(1,), groups=2)"


# -- pooling ------------------------------------------------------------------------------------
POOLS = [  # kernel, stride, padding, dilation, ceil_mode
    ((2, 2), (2, 2), (0, 0), (1, 1), False),
    ((3, 3), (2, 2), (1, 1), (1, 1), True),
    ((3, 2), (1, 2), (1, 0), (1, 1), False),
    ((2, 3), (2, 1), (1, 1), (2, 1), True),
    ((3, 3), (3, 3), (0, 1), (1, 1), True),
]


@pytest.mark.parametrize("k, s, p, d, ceil_mode", POOLS)
def test_max_pool2d_matches_numpy(k, s, p, d, ceil_mode):
    x = rand(2, 3, 7, 8)
    out = F.max_pool2d(T(x), k, s, p, d, ceil_mode)
    close(out, pool2d_ref(x, k, s, p, d, ceil_mode, "max"))
    m = nn.MaxPool2d(k, s, p, d, ceil_mode=ceil_mode)
    close(m(T(x[0])), pool2d_ref(x[:1], k, s, p, d, ceil_mode, "max")[0])


@settings(max_examples=40, deadline=None)
@given(kh=st.integers(1, 3), kw=st.integers(1, 3), sh=st.integers(1, 3), sw=st.integers(1, 3), dh=st.integers(1, 2),
       h=st.integers(3, 7), w=st.integers(3, 7), ceil_mode=st.booleans(), include=st.booleans(), data=st.data())
def test_pools_match_numpy_property(kh, kw, sh, sw, dh, h, w, ceil_mode, include, data):
    ph = data.draw(st.integers(0, (dh * (kh - 1) + 1) // 2))
    pw = data.draw(st.integers(0, kw // 2))
    if dh * (kh - 1) + 1 > h + 2 * ph or kw > w + 2 * pw:
        return
    x = rand(1, 2, h, w)
    k, s, p = (kh, kw), (sh, sw), (ph, pw)
    close(F.max_pool2d(T(x), k, s, p, (dh, 1), ceil_mode), pool2d_ref(x, k, s, p, (dh, 1), ceil_mode, "max"))
    if ph <= kh // 2:
        close(F.avg_pool2d(T(x), k, s, p, ceil_mode, include),
              pool2d_ref(x, k, s, p, (1, 1), ceil_mode, "avg", include))


@pytest.mark.parametrize("k, s, p, d, ceil_mode", [c for c in POOLS if c[3] == (1, 1)])
@pytest.mark.parametrize("include", [True, False])
def test_avg_pool2d_matches_numpy(k, s, p, d, ceil_mode, include):
    x = rand(2, 3, 7, 8)
    out = F.avg_pool2d(T(x), k, s, p, ceil_mode, include)
    close(out, pool2d_ref(x, k, s, p, d, ceil_mode, "avg", include))


def test_avg_pool2d_divisor_override_and_1d_pools():
    x = rand(1, 2, 4, 4)
    close(F.avg_pool2d(T(x), 2, divisor_override=3), x.reshape(1, 2, 2, 2, 2, 2).sum((3, 5)) / 3)
    y = rand(2, 3, 9)
    close(F.max_pool1d(T(y), 3, 2, 1), pool2d_ref(y[:, :, None], (1, 3), (1, 2), (0, 1), (1, 1), False, "max")[:, :, 0])
    close(nn.AvgPool1d(2)(T(y)), y[:, :, :8].reshape(2, 3, 4, 2).mean(-1))


def test_max_pool_returns_pytorch_indices_and_first_maximum():
    x = np.array([[[[1.0, 5.0, 5.0], [2.0, 0.0, 4.0], [5.0, 1.0, 3.0]]]], dtype=np.float32)
    out, idx = F.max_pool2d(T(x), 2, 1, return_indices=True)
    close(out, np.array([[[[5.0, 5.0], [5.0, 4.0]]]]))
    assert idx.tolist() == [[[[1, 1], [6, 5]]]]  # the first maximum in row-major order wins
    xg = T(x, grad=True)
    F.max_pool2d(xg, 2, 1).sum().backward()
    assert xg.grad.tolist() == [[[[0.0, 2.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]]]
    o2, i2 = nn.MaxPool2d(3, 2, 1, return_indices=True)(T(rand(1, 1, 5, 5, seed=3)))
    flat = rand(1, 1, 5, 5, seed=3).reshape(-1)
    assert np.array_equal(flat[i2.numpy().reshape(-1)], o2.numpy().reshape(-1))


def test_max_pool_propagates_nan():
    x = rand(1, 1, 4, 4)
    x[0, 0, 1, 1] = np.nan
    out = F.max_pool2d(T(x), 2).numpy()
    assert np.isnan(out[0, 0, 0, 0]) and not np.isnan(out[0, 0, 1, 1])


@pytest.mark.parametrize("size, out", [((6, 6), (3, 2)), ((7, 5), (3, 3)), ((5, 7), (1, 1)), ((4, 4), (None, 3)),
                                       ((5, 3), (7, 2))])
def test_adaptive_avg_pool2d_matches_numpy(size, out):
    x = rand(2, 3, *size)
    res = F.adaptive_avg_pool2d(T(x), out)
    oh, ow = (size[0] if out[0] is None else out[0]), out[1]
    ref = np.zeros((2, 3, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, h1 = (i * size[0]) // oh, -(-(i + 1) * size[0] // oh)
            w0, w1 = (j * size[1]) // ow, -(-(j + 1) * size[1] // ow)
            ref[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean((-2, -1))
    close(res, ref)
    assert nn.AdaptiveAvgPool2d(1)(T(x[0])).shape == (3, 1, 1)
    close(nn.AdaptiveAvgPool1d(2)(T(x[:, :, 0])), x[:, :, 0].reshape(2, 3, 2, -1).mean(-1)
          if size[1] % 2 == 0 else F.adaptive_avg_pool1d(T(x[:, :, 0]), 2).numpy())


POOL_ERRORS = [
    (lambda: F.max_pool2d(T(rand(1, 1, 4, 4)), 2, padding=2), RuntimeError,
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
    (lambda: F.max_pool2d(T(rand(1, 1, 1, 1)), 2), RuntimeError,
     r"Given input size: \(1x1x1\). Calculated output size: \(1x0x0\). Output size is too small"),
    (lambda: F.max_pool2d(T(rand(5, 5)), 2), RuntimeError,
     r"non-empty 3D or 4D \(batch mode\) tensor expected for input"),
    (lambda: F.avg_pool2d(T(rand(1, 1, 4, 4)), 2, padding=2), RuntimeError,
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1"),
    (lambda: F.adaptive_avg_pool2d(T(rand(5, 5)), 2), RuntimeError,
     r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, but got \[5, 5\]"),
    (lambda: F.max_pool2d(T(rand(1, 1, 4, 4)), 0), RuntimeError, "kernel_size must be greater than zero"),
]


@pytest.mark.parametrize("call, error, match", POOL_ERRORS)
def test_pool_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_pool_reprs():
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool2d(3, 1, 1)) == "AvgPool2d(kernel_size=3, stride=1, padding=1)"
    assert repr(nn.AdaptiveAvgPool2d((1, None))) == "AdaptiveAvgPool2d(output_size=(1, None))"


# -- normalization -----------------------------------------------------------------------------------
def test_batchnorm2d_training_updates_running_stats():
    bn = nn.BatchNorm2d(3, momentum=0.2)
    with tp.no_grad():
        bn.weight.copy_(T(np.array([1.0, 2.0, 0.5], dtype=np.float32)))
        bn.bias.copy_(T(np.array([0.0, 1.0, -1.0], dtype=np.float32)))
    x = rand(4, 3, 2, 5) * 3 + 1
    out = bn(T(x))
    mean, var = x.mean((0, 2, 3)), x.var((0, 2, 3))
    ref = (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5) * np.array([1, 2, 0.5])[:, None, None] \
        + np.array([0, 1, -1])[:, None, None]
    close(out, ref, 1e-4)
    n = 4 * 2 * 5
    close(bn.running_mean, 0.2 * mean, 1e-5)
    close(bn.running_var, 0.8 + 0.2 * var * n / (n - 1), 1e-5)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    close(bn(T(x)), (x - bn.running_mean.numpy()[:, None, None]) / np.sqrt(bn.running_var.numpy()[:, None, None]
                                                                             + 1e-5)
          * np.array([1, 2, 0.5])[:, None, None] + np.array([0, 1, -1])[:, None, None], 1e-4)
    assert bn.num_batches_tracked.item() == 1


def test_batchnorm_cumulative_average_and_no_tracking():
    bn = nn.BatchNorm1d(2, momentum=None, affine=False)
    xs = [rand(5, 2, seed=i) for i in range(3)]
    for x in xs:
        bn(T(x))
    close(bn.running_mean, np.mean([x.mean(0) for x in xs], 0), 1e-5)
    assert bn.num_batches_tracked.item() == 3
    free = nn.BatchNorm1d(2, track_running_stats=False)
    assert free.running_mean is None and "running_mean" not in free.state_dict()
    free.eval()  # without running statistics eval mode uses the batch's
    x = rand(6, 2, 3)
    m, v = x.mean((0, 2)), x.var((0, 2))
    close(free(T(x)), (x - m[:, None]) / np.sqrt(v[:, None] + 1e-5), 1e-4)


@pytest.mark.parametrize("call, error, match", [
    (lambda: nn.BatchNorm1d(3)(T(rand(1, 3))), ValueError,
     r"Expected more than 1 value per channel when training, got input size \(1, 3\)"),
    (lambda: nn.BatchNorm1d(3)(T(rand(2, 3, 4, 5))), ValueError, r"expected 2D or 3D input \(got 4D input\)"),
    (lambda: nn.BatchNorm2d(3)(T(rand(2, 3))), ValueError, r"expected 4D input \(got 2D input\)"),
    (lambda: F.batch_norm(T(rand(3, 4)), tp.zeros(3), tp.ones(4)), RuntimeError,
     "running_mean should contain 4 elements not 3"),
    (lambda: F.layer_norm(T(rand(3, 4)), (5,)), RuntimeError,
     r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\], but got input of size\[3, 4\]"),
    (lambda: F.layer_norm(T(rand(3, 4)), (4,), tp.ones(3)), RuntimeError,
     r"Expected weight to be of same shape as normalized_shape, but got weight of shape \[3\] and "
     r"normalized_shape = \[4\]"),
    (lambda: F.group_norm(T(rand(3, 4)), 3), RuntimeError,
     r"Expected number of channels in input to be divisible by num_groups, but got input of shape \[3, 4\] and "
     r"num_groups=3"),
    (lambda: F.group_norm(T(rand(3)), 1), RuntimeError, "Expected at least 2 dimensions for input tensor but "
                                                        "received 1"),
    (lambda: nn.GroupNorm(3, 4), ValueError, r"num_channels \(4\) must be divisible by num_groups \(3\)"),
])
def test_norm_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_layer_norm_and_group_norm():
    x = rand(2, 3, 4, 5)
    ln = nn.LayerNorm((4, 5))
    with tp.no_grad():
        ln.weight.copy_(T(rand(4, 5, seed=1)))
        ln.bias.copy_(T(rand(4, 5, seed=2)))
    m, v = x.mean((-2, -1), keepdims=True), x.var((-2, -1), keepdims=True)
    close(ln(T(x)), (x - m) / np.sqrt(v + 1e-5) * rand(4, 5, seed=1) + rand(4, 5, seed=2), 1e-4)
    gn = nn.GroupNorm(3, 3, affine=False)
    g = x.reshape(2, 3, -1)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    close(gn(T(x)), ref, 1e-4)
    assert nn.LayerNorm(4, bias=False).bias is None
    assert repr(nn.LayerNorm(4)) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"
    assert repr(nn.GroupNorm(2, 4)) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    assert repr(nn.BatchNorm2d(3)) == \
        "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"


# -- dropout, embedding -------------------------------------------------------------------------------
def test_dropout_train_eval_and_seed():
    d = nn.Dropout(0.25)
    x = tp.ones(20000)
    tp.manual_seed(3)
    y = d(x).numpy()
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    tp.manual_seed(3)
    assert np.array_equal(d(x).numpy(), y)
    d.eval()
    assert d(x) is x
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 1.0).abs().sum().item() == 0
    z = tp.ones(10)
    assert F.dropout(z, 0.5, inplace=True) is z
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        F.dropout(x, -0.1)
    assert repr(nn.Dropout()) == "Dropout(p=0.5, inplace=False)"


def test_embedding_lookup_padding_and_max_norm():
    emb = nn.Embedding(10, 3, padding_idx=0)
    assert emb.weight[0].abs().sum().item() == 0
    idx = np.array([[1, 0, 3], [0, 0, 9]])
    out = emb(tp.tensor(idx))
    w = emb.weight.detach().numpy()
    close(out, w[idx])
    out.sum().backward()
    g = emb.weight.grad.numpy()
    assert g[0].sum() == 0 and g[1].tolist() == [1, 1, 1] and g[2].sum() == 0
    assert repr(emb) == "Embedding(10, 3, padding_idx=0)"
    assert nn.Embedding(4, 2, padding_idx=-1).padding_idx == 3
    e2 = nn.Embedding(3, 2, max_norm=1.0)
    with tp.no_grad():
        e2.weight.copy_(tp.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]]))
    e2(tp.tensor([0, 1]))
    close(e2.weight, np.array([[0.6, 0.8], [0.3, 0.4], [6.0, 8.0]]), 1e-5)
    pre = nn.Embedding.from_pretrained(tp.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert not pre.weight.requires_grad and pre(tp.tensor([1])).tolist() == [[3.0, 4.0]]


def test_embedding_scale_grad_by_freq():
    emb = nn.Embedding(4, 2, scale_grad_by_freq=True)
    emb(tp.tensor([1, 1, 2, 1])).sum().backward()
    assert emb.weight.grad.tolist() == [[0, 0], [1, 1], [1, 1], [0, 0]]


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.embedding(tp.tensor([1.0]), T(rand(3, 2))), RuntimeError,
     "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
     "tensorplug.FloatTensor instead"),
    (lambda: F.embedding(tp.tensor([5]), T(rand(3, 2))), IndexError, "index out of range in self"),
    (lambda: nn.Embedding(3, 2, padding_idx=3), AssertionError, "Padding_idx must be within num_embeddings"),
    (lambda: nn.Embedding(3, 2, padding_idx=-4), AssertionError, "Padding_idx must be within num_embeddings"),
])
def test_embedding_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- activations --------------------------------------------------------------------------------------
def _erf(a):
    return np.vectorize(math.erf)(a)


ACTIVATIONS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0), "ReLU()"),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6), "ReLU6()"),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x), "LeakyReLU(negative_slope=0.2)"),
    (nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x)), "ELU(alpha=0.5)"),
    (nn.GELU(), lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2))), "GELU(approximate='none')"),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
     "GELU(approximate='tanh')"),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x)), "SiLU()"),
    (nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x))), "Mish()"),
    (nn.Softplus(2.0), lambda x: np.log1p(np.exp(2 * x)) / 2, "Softplus(beta=2.0, threshold=20.0)"),
    (nn.Hardtanh(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), "Hardtanh(min_val=-0.5, max_val=0.5)"),
    (nn.Tanh(), np.tanh, "Tanh()"),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x)), "Sigmoid()"),
    (nn.LogSigmoid(), lambda x: -np.log1p(np.exp(-x)), "LogSigmoid()"),
    (nn.Softmax(1), lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True), "Softmax(dim=1)"),
    (nn.Softmin(0), lambda x: np.exp(-x) / np.exp(-x).sum(0, keepdims=True), "Softmin(dim=0)"),
    (nn.LogSoftmax(-1), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True)), "LogSoftmax(dim=-1)"),
]


@pytest.mark.parametrize("module, ref, text", ACTIVATIONS, ids=[a[2] for a in ACTIVATIONS])
def test_activations_match_numpy(module, ref, text):
    x = rand(4, 5) * 3
    close(module(T(x)), ref(x.astype(np.float64)), 1e-5)
    assert repr(module) == text


@pytest.mark.parametrize("fn", [F.relu, F.relu6, F.leaky_relu, F.elu, F.silu, F.mish, F.hardtanh])
def test_inplace_activations_write_input_and_differentiate(fn):
    x = rand(3, 4) * 2
    ref = fn(T(x)).numpy()
    t = T(x)
    assert fn(t, inplace=True) is t
    close(t, ref)
    leaf = T(x, grad=True)
    h = leaf * 1.0
    fn(h, inplace=True).sum().backward()
    other = T(x, grad=True)
    fn(other).sum().backward()
    close(leaf.grad, other.grad.numpy())


def test_softmax_without_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        out = F.softmax(T(rand(3, 4)))
    close(out.sum(1), np.ones(3))


# -- padding ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("pad", [(1, 2), (0, 1, 2, 1), (2, 0, 0, 0)])
@pytest.mark.parametrize("mode, np_mode", [("constant", "constant"), ("reflect", "reflect"),
                                           ("replicate", "edge"), ("circular", "wrap")])
def test_pad_modes_match_numpy(pad, mode, np_mode):
    x = rand(2, 3, 4)
    widths = [(0, 0)] * (3 - len(pad) // 2) + [(pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)][::-1]
    close(F.pad(T(x), pad, mode=mode), np.pad(x, widths, mode=np_mode))


def test_pad_constant_value_negative_and_errors():
    x = rand(3, 4)
    close(F.pad(T(x), (1, -1), value=7.0), np.pad(x[:, :3], ((0, 0), (1, 0)), constant_values=7.0))
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(T(x), (1,))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two times the input "
                                           "dimension but got padding length 6 and input of dimension 2"):
        F.pad(T(x), (1,) * 6)
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        F.pad(T(rand(1, 2, 3)), (3, 3), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once."):
        F.pad(T(rand(1, 2, 3)), (4, 4), mode="circular")
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(T(x), (1, 1), mode="foo")


# -- default initialization ------------------------------------------------------------------------------
@pytest.mark.parametrize("make, fan_in", [(lambda: nn.Linear(50, 40), 50), (lambda: nn.Conv2d(6, 30, 3), 54),
                                          (lambda: nn.Conv1d(4, 20, 5, groups=2), 10)])
def test_linear_and_conv_default_init(make, fan_in):
    tp.manual_seed(0)
    m = make()
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) gives the same bound as the bias
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound


def test_other_default_inits():
    tp.manual_seed(0)
    emb = nn.Embedding(200, 50)
    w = emb.weight.detach().numpy()
    assert abs(w.std() - 1) < 0.05 and abs(w.mean()) < 0.05
    for m in (nn.BatchNorm1d(3), nn.LayerNorm(3), nn.GroupNorm(1, 3)):
        assert m.weight.tolist() == [1.0] * 3 and m.bias.tolist() == [0.0] * 3
    bil = nn.Bilinear(16, 2, 4)
    assert np.abs(bil.weight.detach().numpy()).max() <= 0.25


# -- nn.init ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, param, gain", [("linear", None, 1), ("conv2d", None, 1), ("sigmoid", None, 1),
                                               ("tanh", None, 5 / 3), ("relu", None, math.sqrt(2)),
                                               ("leaky_relu", None, math.sqrt(2 / (1 + 0.01 ** 2))),
                                               ("leaky_relu", 0.2, math.sqrt(2 / 1.04)), ("selu", None, 0.75)])
def test_calculate_gain(name, param, gain):
    assert nn.init.calculate_gain(name, param) == pytest.approx(gain)


def test_init_errors_and_fans():
    assert nn.init._calculate_fan_in_and_fan_out(tp.empty(5, 3, 2, 2)) == (12, 20)
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        nn.init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope x not a valid number"):
        nn.init.calculate_gain("leaky_relu", "x")
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2 "
                                         "dimensions"):
        nn.init.xavier_uniform_(tp.empty(3))
    with pytest.raises(ValueError, match="Mode fan_mid not supported, please use one of fan_in, fan_out"):
        nn.init.kaiming_uniform_(tp.empty(3, 3), mode="fan_mid")
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        nn.init.kaiming_normal_(tp.empty(0, 3))


@pytest.mark.parametrize("fn, kwargs, kind, scale", [
    (nn.init.kaiming_uniform_, {}, "uniform", math.sqrt(3) * math.sqrt(2 / (1 + 0.01 ** 2)) / math.sqrt(200)),
    (nn.init.kaiming_uniform_, {"mode": "fan_out", "nonlinearity": "relu"}, "uniform", math.sqrt(6 / 100)),
    (nn.init.kaiming_normal_, {"nonlinearity": "relu"}, "normal", math.sqrt(2 / 200)),
    (nn.init.xavier_uniform_, {"gain": 2.0}, "uniform", 2 * math.sqrt(6 / 300)),
    (nn.init.xavier_normal_, {}, "normal", math.sqrt(2 / 300)),
    (nn.init.uniform_, {"a": -0.3, "b": 0.3}, "uniform", 0.3),
    (nn.init.normal_, {"std": 0.02}, "normal", 0.02),
])
def test_init_distributions(fn, kwargs, kind, scale):
    tp.manual_seed(1)
    w = nn.Parameter(tp.empty(100, 200))
    assert fn(w, **kwargs) is w and w.requires_grad and w.grad_fn is None
    a = w.detach().numpy()
    if kind == "uniform":
        assert np.abs(a).max() <= scale and np.abs(a).max() > 0.99 * scale
        assert abs(a.std() - scale / math.sqrt(3)) < 0.02 * scale
    else:
        assert abs(a.std() - scale) < 0.02 * scale


def test_constant_inits():
    w = nn.Parameter(tp.empty(3, 3))
    assert nn.init.constant_(w, 0.5).tolist() == [[0.5] * 3] * 3
    assert nn.init.ones_(w).sum().item() == 9 and nn.init.zeros_(w).sum().item() == 0
    assert nn.init.eye_(w).tolist() == np.eye(3).tolist()


# -- gradients through the decompositions --------------------------------------------------------------
def D(*shape, seed=0):
    return tp.tensor(rand(*shape, dtype=np.float64, seed=seed)).requires_grad_()


GRADCHECKS = [
    ("conv2d stride/pad/dilation/groups",
     lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
     lambda: (D(1, 4, 5, 5), D(4, 2, 2, 2, seed=1), D(4, seed=2))),
    ("conv1d same", lambda x, w: F.conv1d(x, w, padding="same"), lambda: (D(2, 2, 5), D(3, 2, 2, seed=1))),
    ("max_pool2d ceil", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), lambda: (D(1, 2, 5, 6),)),
    ("avg_pool2d exclude pad", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), lambda: (D(1, 2, 5, 5),)),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (3, 2)), lambda: (D(1, 2, 5, 5),)),
    ("batch_norm train", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     lambda: (D(4, 3, 2), D(3, seed=1), D(3, seed=2))),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b), lambda: (D(3, 4), D(4, seed=1), D(4, seed=2))),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), lambda: (D(2, 4, 3), D(4, seed=1), D(4, seed=2))),
    ("embedding", lambda w: F.embedding(tp.tensor([[0, 2], [2, 3]]), w), lambda: (D(4, 3),)),
    ("bilinear", lambda a, b, w: F.bilinear(a, b, w), lambda: (D(3, 2), D(3, 3, seed=1), D(2, 2, 3, seed=2))),
    ("pad reflect", lambda x: F.pad(x, (2, 1, 1, 0), mode="reflect"), lambda: (D(1, 1, 3, 4),)),
    ("logsigmoid", F.logsigmoid, lambda: (tp.tensor([-30.0, -1.0, 0.0, 2.0, 40.0], dtype=tp.float64)
                                          .requires_grad_(),)),
]


@pytest.mark.parametrize("name, fn, make", GRADCHECKS, ids=[g[0] for g in GRADCHECKS])
def test_gradients_match_finite_differences(name, fn, make):
    assert gradcheck(fn, make())
