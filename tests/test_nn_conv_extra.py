"""The convolution family without PyTorch: the CPU kernels of conv2d, conv_transpose2d and
conv2d_weight_backward agree with the decompositions other backends run; gradients pass float64
gradcheck (and gradgradcheck); transposition identities (fold is unfold's adjoint, conv_transpose2d is
conv2d's input gradient, pixel_unshuffle undoes pixel_shuffle); vmap matches a loop; the profiler sees
one CPU kernel; interpolate's and the modules' argument handling."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
import tensorplug.nn.functional as F
from tensorplug.autograd import gradcheck, gradgradcheck
from tensorplug.ops import nn_conv_extra as E
from tensorplug.ops import nn_ops


def rand(shape, seed=0, dtype=tp.float64, grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    return tp.tensor(a, dtype=dtype, requires_grad=grad)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(a.detach().float().numpy() if a.dtype is tp.bfloat16 else a.detach().numpy(),
                               b.detach().float().numpy() if b.dtype is tp.bfloat16 else b.detach().numpy(),
                               rtol=tol, atol=tol)


CONV = [((2, 4, 7, 6), (6, 2, 3, 3), {"stride": (2, 2), "padding": (1, 1), "groups": 2}),
        ((2, 4, 7, 6), (6, 4, 3, 2), {"stride": (1, 2), "padding": (2, 0), "dilation": (2, 1)}),
        ((4, 7, 6), (6, 4, 3, 3), {}),
        ((1, 3, 9, 9), (2, 3, 3, 3), {"stride": (3, 3)})]


@pytest.mark.parametrize("xs, ws, kw", CONV)
@pytest.mark.parametrize("dtype, tol", [(tp.float64, 1e-10), (tp.float32, 1e-4), (tp.bfloat16, 5e-2)])
def test_conv2d_cpu_kernel_matches_the_decomposition(xs, ws, kw, dtype, tol):
    x, w, b = rand(xs, 0, dtype), rand(ws, 1, dtype), rand(ws[:1], 2, dtype)
    args = (kw.get("stride", (1, 1)), kw.get("padding", (0, 0)), kw.get("dilation", (1, 1)), kw.get("groups", 1))
    ours = F.conv2d(x, w, b, *args)
    composite = nn_ops._conv(2)(x, w, b, *args)
    assert ours.dtype is dtype and ours.shape == composite.shape
    close(ours, composite, tol)
    g = rand(ours.shape, 3, dtype)
    close(E.conv2d_weight_backward(g, x, w.shape, args[0], args[1], args[2], args[3]),
          E._conv2d_weight_backward(g, x, w.shape, args[0], args[1], args[2], args[3]), tol)


CONV_T = [((2, 4, 5, 6), (4, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
          ((2, 4, 5, 6), (4, 3, 4, 4), {"stride": 2, "padding": 1}),
          ((4, 5, 6), (4, 3, 2, 3), {"stride": (3, 1), "dilation": (2, 3), "output_padding": (1, 2)}),
          ((1, 2, 3, 3), (2, 2, 5, 5), {"padding": 3})]


@pytest.mark.parametrize("xs, ws, kw", CONV_T)
@pytest.mark.parametrize("dtype, tol", [(tp.float64, 1e-10), (tp.float32, 1e-4), (tp.float16, 2e-2)])
def test_conv_transpose2d_cpu_kernel_matches_the_decomposition(xs, ws, kw, dtype, tol):
    x, w = rand(xs, 0, dtype), rand(ws, 1, dtype)
    b = rand((ws[1] * kw.get("groups", 1),), 2, dtype)
    ours = F.conv_transpose2d(x, w, b, **kw)
    s, p, op, d = (nn_ops._tup(kw.get(k, v), 2) for k, v in
                   (("stride", 1), ("padding", 0), ("output_padding", 0), ("dilation", 1)))
    composite = E._conv_transpose2d(x, w, b, s, p, op, kw.get("groups", 1), d)
    assert ours.dtype is dtype
    close(ours, composite, tol)


def test_conv_transpose2d_is_the_input_gradient_of_conv2d():
    x, w = rand((2, 4, 7, 8), 0, grad=True), rand((6, 2, 3, 3), 1)
    y = F.conv2d(x, w, stride=2, padding=1, groups=2)
    g = rand(y.shape, 2)
    gx, = tp.autograd.grad(y, x, g)
    close(gx, F.conv_transpose2d(g, w, stride=2, padding=1, output_padding=(0, 1), groups=2))


@pytest.mark.parametrize("fn, shapes, kw", [
    (F.conv2d, [(1, 2, 4, 4), (2, 1, 2, 2), (2,)], {"stride": 2, "padding": 1, "groups": 2}),
    (F.conv2d, [(2, 3, 3), (2, 2, 2, 2), None], {"dilation": (1, 2), "padding": "same"}),
    (F.conv_transpose2d, [(1, 2, 3, 3), (2, 2, 2, 2), (2,)], {"stride": 2, "output_padding": 1}),
    (F.conv_transpose1d, [(1, 2, 4), (2, 3, 3), (3,)], {"stride": 2, "padding": 1, "dilation": 2}),
    (F.conv3d, [(1, 2, 3, 3, 3), (2, 2, 2, 2, 2), (2,)], {"stride": (1, 2, 1), "padding": 1}),
])
def test_gradcheck_and_gradgradcheck(fn, shapes, kw):
    ts = [rand(s, i, grad=True) if s is not None else None for i, s in enumerate(shapes)]
    present = [t for t in ts if t is not None]

    def f(*args):
        it = iter(args)
        return fn(*[next(it) if t is not None else None for t in ts], **kw)
    assert gradcheck(f, tuple(present))
    assert gradgradcheck(f, tuple(present))


@pytest.mark.parametrize("xs, args", [((2, 3, 5, 6), ((2, 3), (1, 1), (1, 0), (2, 1))),
                                      ((3, 5, 5), ((3, 3), (2, 1), (1, 1), (2, 2)))])
def test_fold_is_the_adjoint_of_unfold(xs, args):
    x = rand(xs, 0)
    cols = F.unfold(x, *args)
    y = rand(cols.shape, 1)
    lhs = (cols * y).sum().item()
    rhs = (x * F.fold(y, xs[-2:], *args)).sum().item()
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))
    # every pixel counted once per block covering it
    counts = F.fold(F.unfold(tp.ones(xs, dtype=tp.float64), *args), xs[-2:], *args)
    assert counts.min().item() >= 0 and counts.max().item() <= args[0][0] * args[0][1]


def test_pixel_shuffle_round_trip_and_layout():
    x = tp.arange(2 * 8 * 2 * 3, dtype=tp.float32).reshape(2, 8, 2, 3)
    y = F.pixel_shuffle(x, 2)
    assert y.shape == (2, 2, 4, 6)
    assert np.array_equal(F.pixel_unshuffle(y, 2).numpy(), x.numpy())
    # output pixel (h * 2 + i, w * 2 + j) of channel c is input channel c * 4 + i * 2 + j at (h, w)
    assert y[0, 1, 3, 4].item() == x[0, 1 * 4 + 1 * 2 + 0, 1, 2].item()


def test_interpolate_nearest_doubling_repeats_and_align_corners_keeps_the_corners():
    x = rand((1, 2, 3, 4), 0)
    y = F.interpolate(x, scale_factor=2)
    close(y, x.repeat_interleave(2, 2).repeat_interleave(2, 3) if hasattr(x, "repeat_interleave") else
          x.unsqueeze(3).unsqueeze(5).expand(1, 2, 3, 2, 4, 2).reshape(1, 2, 6, 8))
    for mode in ("bilinear", "bicubic"):
        z = F.interpolate(x, size=(5, 7), mode=mode, align_corners=True)
        close(z[..., 0, 0], x[..., 0, 0])
        close(z[..., -1, -1], x[..., -1, -1])
    # the same size and no scale: every interpolating mode gives the input back
    for mode, shape in (("linear", (1, 2, 5)), ("bilinear", (1, 2, 3, 4)), ("trilinear", (1, 1, 2, 3, 4))):
        v = rand(shape, 1)
        close(F.interpolate(v, size=shape[2:], mode=mode), v)


def test_interpolate_area_is_adaptive_average_pooling():
    x = rand((1, 2, 6, 9), 0)
    close(F.interpolate(x, size=(4, 3), mode="area"), F.adaptive_avg_pool2d(x, (4, 3)))
    v = rand((1, 2, 4, 6, 3), 1)
    ref = v.reshape(1, 2, 2, 2, 3, 2, 3, 1).mean((3, 5, 7))
    close(F.interpolate(v, size=(2, 3, 3), mode="area"), ref)


def test_antialias_is_refused_rather_than_ignored():
    with pytest.raises(NotImplementedError, match="antialias=True is not supported"):
        F.interpolate(rand((1, 1, 4, 4)), size=2, mode="bilinear", antialias=True)


def test_the_cpu_runs_conv2d_and_conv_transpose2d_as_one_kernel_each():
    x, w = tp.ones(1, 2, 5, 5), tp.ones(2, 3, 3, 3)
    wt = w.transpose(0, 1).contiguous()
    for call, name in ((lambda: F.conv2d(x, wt), "conv2d"),
                       (lambda: F.conv_transpose2d(x, w), "conv_transpose2d.input")):
        with tp.profiler.profile() as prof:
            call()
        top = [e for e in prof.events() if e.parent is None]
        assert [e.name for e in top] == [f"tensorplug::{name}"] and not top[0].children


def test_conv2d_backward_records_one_node_and_runs_the_two_gradient_kernels():
    x, w = rand((1, 2, 5, 5), 0, grad=True), rand((3, 2, 3, 3), 1, grad=True)
    y = F.conv2d(x, w, padding=1)
    assert y.grad_fn.name() == "Conv2dBackward0"
    with tp.profiler.profile() as prof:
        y.sum().backward()
    names = {e.name for e in prof.events()}
    assert {"tensorplug::conv_transpose2d.input", "tensorplug::conv2d_weight_backward"} <= names


@pytest.mark.parametrize("fn, xs, ws, kw", [
    (F.conv2d, (3, 2, 2, 5, 5), (3, 2, 3, 3), {"padding": 1}),
    (F.conv_transpose2d, (3, 2, 2, 3, 3), (2, 3, 2, 2), {"stride": 2}),
    (F.conv3d, (2, 1, 2, 3, 3, 3), (2, 2, 2, 2, 2), {}),
])
def test_vmap_matches_a_loop(fn, xs, ws, kw):
    if not hasattr(tp, "vmap"):
        pytest.skip("the tensorplug-vmap plugin is not installed")
    x, w = rand(xs, 0), rand(ws, 1)
    got = tp.vmap(lambda v: fn(v, w, **kw))(x)
    want = tp.stack([fn(x[i], w, **kw) for i in range(xs[0])])
    close(got, want)
    ws_batched = rand((xs[0],) + ws, 2)
    got = tp.vmap(lambda v, u: fn(v, u, **kw))(x, ws_batched)
    close(got, tp.stack([fn(x[i], ws_batched[i], **kw) for i in range(xs[0])]))


def test_conv_transpose_module_output_size_picks_the_output_padding():
    m = nn.ConvTranspose2d(2, 3, 3, stride=3)
    x = rand((1, 2, 4, 4), dtype=tp.float32)
    assert m(x).shape == (1, 3, 12, 12)
    assert m(x, output_size=(14, 13)).shape == (1, 3, 14, 13)
    with pytest.raises(ValueError, match="valid sizes range from"):
        m(x, output_size=(15, 12))
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose1d'):
        nn.ConvTranspose1d(2, 3, 3, padding_mode="circular")


def test_modules_state_dict_and_repr():
    m = nn.ConvTranspose2d(4, 6, (2, 3), stride=2, groups=2, bias=False)
    assert list(m.state_dict()) == ["weight"] and m.weight.shape == (4, 3, 2, 3)
    assert repr(m) == "ConvTranspose2d(4, 6, kernel_size=(2, 3), stride=(2, 2), groups=2, bias=False)"
    assert repr(nn.Upsample(scale_factor=2, mode="bilinear")) == "Upsample(scale_factor=2.0, mode='bilinear')"
    assert repr(nn.ZeroPad2d((1, 2, 3, 4))) == "ZeroPad2d((1, 2, 3, 4))"
    assert repr(nn.ConstantPad1d(2, 0.5)) == "ConstantPad1d(padding=(2, 2), value=0.5)"
    assert nn.ReplicationPad2d(1)(tp.arange(4.0).reshape(1, 2, 2)).tolist() == [
        [[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0], [2.0, 2.0, 3.0, 3.0], [2.0, 2.0, 3.0, 3.0]]]
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(tp.ones(2, 2))


def test_grid_sample_of_the_identity_grid_is_the_input():
    x = rand((2, 3, 4, 5), 0)
    for align_corners in (False, True):
        grid = F.affine_grid(tp.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]] * 2, dtype=tp.float64), (2, 3, 4, 5),
                             align_corners)
        for mode in ("bilinear", "nearest"):
            close(F.grid_sample(x, grid, mode, align_corners=align_corners), x)


def test_grid_sample_zero_padding_border_and_reflection_outside_the_image():
    x = tp.arange(1.0, 5.0, dtype=tp.float64).reshape(1, 1, 1, 4)
    g = tp.tensor([[[[-3.0, 0.0], [3.0, 0.0]]]], dtype=tp.float64)  # far left, far right
    assert F.grid_sample(x, g, padding_mode="zeros", align_corners=True).tolist() == [[[[0.0, 0.0]]]]
    assert F.grid_sample(x, g, padding_mode="border", align_corners=True).tolist() == [[[[1.0, 4.0]]]]
    # x = -3 reflects about -1 to 1 (the right edge), x = 3 about 1 to -1 (the left edge)
    assert F.grid_sample(x, g, padding_mode="reflection", align_corners=True).tolist() == [[[[4.0, 1.0]]]]


def test_adaptive_max_pool_indices_point_at_the_maxima():
    x = rand((2, 3, 7, 5), 0)
    y, idx = F.adaptive_max_pool2d(x, (3, 2), return_indices=True)
    flat = x.reshape(2, 3, 35)
    close(flat.gather(2, idx.reshape(2, 3, 6)).reshape(2, 3, 3, 2), y)
    # equal windows: the plain max pooling
    close(F.adaptive_max_pool2d(rand((1, 2, 6, 4), 1), (3, 2)), F.max_pool2d(rand((1, 2, 6, 4), 1), 2))
    assert nn.AdaptiveMaxPool1d(2)(rand((1, 2, 5))).shape == (1, 2, 2)


def test_gradcheck_of_grid_sample_affine_grid_and_adaptive_max_pool():
    x = rand((1, 2, 3, 4), 0, grad=True)
    theta = tp.tensor([[[0.9, 0.2, 0.05], [-0.1, 0.8, 0.1]]], dtype=tp.float64, requires_grad=True)
    assert gradcheck(lambda a, t: F.grid_sample(a, F.affine_grid(t, (1, 2, 3, 3), False), align_corners=False),
                     (x, theta))
    v = tp.tensor(np.random.default_rng(0).permutation(24).reshape(1, 2, 3, 4) / 24.0, requires_grad=True)
    assert gradcheck(lambda a: F.adaptive_max_pool2d(a, (2, 3)), (v,))


@pytest.mark.parametrize("xs, ws, kw", CONV_T)
def test_conv_transpose2d_backward_fuses_both_gradients_and_matches_its_decomposition(xs, ws, kw):
    x, w = rand(xs, 0, grad=True), rand(ws, 1, grad=True)
    y = F.conv_transpose2d(x, w, **kw)
    g = rand(y.shape, 2)
    with tp.profiler.profile() as prof:
        y.backward(g)
    assert "tensorplug::conv_transpose2d_backward" in {e.name for e in prof.events()}
    s, p, d = (nn_ops._tup(kw.get(k, v), 2) for k, v in (("stride", 1), ("padding", 0), ("dilation", 1)))
    gi, gw = E._conv_transpose2d_backward(g, x.detach(), w.detach(), s, p, d, kw.get("groups", 1))
    close(x.grad, gi)
    close(w.grad, gw)


def test_vmap_runs_one_convolution_kernel_for_the_whole_batch():
    if not hasattr(tp, "vmap"):
        pytest.skip("the tensorplug-vmap plugin is not installed")
    x, w, ws = rand((4, 2, 2, 5, 5), 0), rand((3, 2, 3, 3), 1), rand((4, 2, 3, 3, 3), 2)
    for fn, args in ((lambda v: F.conv2d(v, w, padding=1), (x,)),
                     (lambda v, u: F.conv_transpose2d(v, u, stride=2), (x, ws))):
        with tp.profiler.profile() as prof:
            tp.vmap(fn)(*args)
        names = [e.name for e in prof.events()]
        # the batched call and, inside it, one call of the kernel on the whole batch; no im2col pieces
        assert sum(n.startswith("tensorplug::conv") for n in names) == 2
        assert "tensorplug::stack" not in names and "tensorplug::matmul" not in names
