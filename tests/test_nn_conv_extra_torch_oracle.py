"""The convolution family beyond conv1d/conv2d against PyTorch: values and float64 gradients of
conv_transpose1d/2d, conv3d, conv2d (now a CPU kernel with GEMM gradients), fold/unfold,
pixel_shuffle/unshuffle and interpolate in every mode; errors (type and message); the modules'
reprs, state_dict keys, initialization and forward/backward with the same weights."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
import tensorplug.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def pair(shape, seed, grad=True, dtype=np.float64):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return tp.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def close(ours, theirs, what, tol=1e-10):
    a = ours.detach().numpy().astype(np.float64)
    b = theirs.detach().float().numpy().astype(np.float64) if theirs.dtype == torch.bfloat16 else \
        theirs.detach().numpy().astype(np.float64)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=str(what))


def forward_backward(fn, tfn, tensors, what, tol=1e-10):
    """Both functions on the same float64 values; outputs and every input gradient agree."""
    ours, theirs = zip(*[pair(s, i) if s is not None else (None, None) for i, s in enumerate(tensors)])
    y, z = fn(*ours), tfn(*theirs)
    close(y, z, (what, "output"), tol)
    g = np.random.default_rng(99).standard_normal(tuple(z.shape))
    y.backward(tp.tensor(g))
    z.backward(torch.tensor(g))
    for i, (t, u) in enumerate(zip(ours, theirs)):
        if t is not None:
            close(t.grad, u.grad, (what, "grad", i), tol)


CONV_T2D = [
    ((2, 4, 5, 6), (4, 3, 3, 3), True, {}),
    ((2, 4, 5, 6), (4, 3, 3, 3), True, {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    ((2, 4, 5, 6), (4, 3, 4, 4), False, {"stride": 2, "padding": 1}),
    ((4, 5, 6), (4, 3, 2, 3), True, {"stride": (3, 1), "dilation": (2, 3), "output_padding": (1, 2)}),
    ((1, 6, 3, 3), (6, 1, 3, 2), True, {"groups": 3, "padding": (2, 0), "dilation": 2}),
    ((2, 3, 4, 4), (3, 2, 5, 5), False, {"padding": 3}),  # padding beyond the kernel reach crops the output
]


@pytest.mark.parametrize("xs, ws, bias, kw", CONV_T2D)
def test_conv_transpose2d_values_and_gradients(xs, ws, bias, kw):
    bs = (ws[1] * kw.get("groups", 1),) if bias else None
    forward_backward(lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
                     lambda x, w, b: TF.conv_transpose2d(x, w, b, **kw), [xs, ws, bs], (xs, ws, kw))


@pytest.mark.parametrize("xs, ws, kw", [
    ((2, 4, 7), (4, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    ((4, 5), (4, 2, 2), {"dilation": 3}),
])
def test_conv_transpose1d_values_and_gradients(xs, ws, kw):
    forward_backward(lambda x, w: F.conv_transpose1d(x, w, **kw), lambda x, w: TF.conv_transpose1d(x, w, **kw),
                     [xs, ws], (xs, ws, kw))


@pytest.mark.parametrize("xs, ws, kw", [
    ((2, 4, 5, 6, 7), (6, 2, 3, 2, 3), {"stride": (2, 1, 2), "padding": (1, 0, 1), "groups": 2}),
    ((3, 4, 4, 5), (2, 3, 2, 2, 2), {"dilation": (1, 2, 1), "padding": "same"}),
    ((1, 2, 4, 4, 4), (3, 2, 3, 3, 3), {"padding": "valid", "stride": 1}),
])
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths:UserWarning")  # PyTorch's own
def test_conv3d_values_and_gradients(xs, ws, kw):
    forward_backward(lambda x, w, b: F.conv3d(x, w, b, **kw), lambda x, w, b: TF.conv3d(x, w, b, **kw),
                     [xs, ws, (ws[0],)], (xs, ws, kw))


@pytest.mark.parametrize("xs, ws, kw", [
    ((2, 4, 7, 6), (6, 2, 3, 3), {"stride": 2, "padding": 1, "groups": 2}),
    ((2, 4, 7, 6), (6, 4, 3, 2), {"stride": (1, 2), "padding": (2, 0), "dilation": (2, 1)}),
    ((4, 7, 6), (6, 4, 3, 3), {}),
    ((2, 3, 9, 9), (4, 3, 3, 3), {"stride": 3}),  # windows that do not overlap
    ((2, 3, 8, 8), (4, 3, 3, 3), {"stride": 3, "padding": 1}),  # the last rows feed no window
])
def test_conv2d_kernel_and_its_gemm_gradients(xs, ws, kw):
    forward_backward(lambda x, w, b: F.conv2d(x, w, b, **kw), lambda x, w, b: TF.conv2d(x, w, b, **kw),
                     [xs, ws, (ws[0],)], (xs, ws, kw))


def test_double_backward_of_conv2d_and_conv_transpose2d():
    x, tx = pair((1, 2, 4, 4), 0)
    w, tw = pair((3, 2, 2, 2), 1)
    for fn, tfn in ((F.conv2d, TF.conv2d), (F.conv_transpose2d, TF.conv_transpose2d)):
        ww, tww = (w, tw) if fn is F.conv2d else pair((2, 3, 2, 2), 2)
        y, z = fn(x, ww, stride=2) if fn is F.conv2d else fn(x, ww, stride=2), tfn(tx, tww, stride=2)
        gx, = tp.autograd.grad((y * y).sum(), x, create_graph=True)
        tgx, = torch.autograd.grad((z * z).sum(), tx, create_graph=True)
        close(gx, tgx, "first gradient")
        gw, = tp.autograd.grad(gx.sum(), ww)
        tgw, = torch.autograd.grad(tgx.sum(), tww)
        close(gw, tgw, "second gradient")


@pytest.mark.parametrize("dtype", [np.float32, "float16", "bfloat16"])
def test_conv_kernels_in_reduced_precision(dtype):
    rng = np.random.default_rng(0)
    a, wa = rng.standard_normal((2, 4, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    tdt = {np.float32: torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
    pdt = {np.float32: tp.float32, "float16": tp.float16, "bfloat16": tp.bfloat16}[dtype]
    x, w = tp.tensor(a, dtype=pdt), tp.tensor(wa, dtype=pdt)
    tx, tw = torch.tensor(a, dtype=tdt), torch.tensor(wa, dtype=tdt)
    tol = 1e-4 if dtype is np.float32 else 5e-2
    y, z = F.conv_transpose2d(x, w, stride=2), TF.conv_transpose2d(tx, tw, stride=2)
    assert y.dtype is pdt
    close(y, z, "conv_transpose2d", tol)
    close(F.conv2d(x, w.transpose(0, 1).contiguous(), padding=1), TF.conv2d(tx, tw.transpose(0, 1), padding=1),
          "conv2d", tol)


@pytest.mark.parametrize("xs, args", [
    ((2, 3, 5, 6), ((2, 3), 1, (1, 0), (2, 1))),
    ((3, 5, 5), (3, 2, 1, 2)),
    ((1, 2, 4, 7), ((1, 2), (1, 3), 0, 1)),
])
def test_unfold_and_fold(xs, args):
    forward_backward(lambda x: F.unfold(x, *args), lambda x: TF.unfold(x, *args), [xs], ("unfold", xs, args))
    cols = TF.unfold(torch.zeros(xs), *args)
    forward_backward(lambda c: F.fold(c, xs[-2:], *args), lambda c: TF.fold(c, xs[-2:], *args),
                     [tuple(cols.shape)], ("fold", xs, args))


@pytest.mark.parametrize("shape, r", [((2, 8, 3, 4), 2), ((9, 2, 2), 3), ((2, 1, 4, 2, 3), 2)])
def test_pixel_shuffle_and_unshuffle(shape, r):
    forward_backward(lambda x: F.pixel_shuffle(x, r), lambda x: TF.pixel_shuffle(x, r), [shape], shape)
    big = shape[:-3] + (shape[-3] // (r * r), shape[-2] * r, shape[-1] * r)
    forward_backward(lambda x: F.pixel_unshuffle(x, r), lambda x: TF.pixel_unshuffle(x, r), [big], big)


_INTERP = [((2, 3, 7), ("nearest", "nearest-exact", "linear", "area")),
           ((2, 3, 5, 6), ("nearest", "nearest-exact", "bilinear", "bicubic", "area")),
           ((1, 2, 3, 4, 5), ("nearest", "nearest-exact", "trilinear", "area"))]
_SIZES = [{"size": 4}, {"size": (11, 9, 7)}, {"scale_factor": 2}, {"scale_factor": 0.7},
          {"scale_factor": (1.7, 2.3, 0.5)}, {"scale_factor": 1.3, "recompute_scale_factor": True},
          {"scale_factor": 3}, {"size": (1, 1, 1)}]


@pytest.mark.parametrize("shape, mode", [(s, m) for s, modes in _INTERP for m in modes])
def test_interpolate_every_mode_values_and_gradients(shape, mode):
    nd = len(shape) - 2
    aligns = [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]
    for kw in _SIZES:
        kw = {k: (v[:nd] if isinstance(v, tuple) else v) for k, v in kw.items()}
        for ac in aligns:
            what = (shape, mode, kw, ac)
            forward_backward(lambda x: F.interpolate(x, mode=mode, align_corners=ac, **kw),
                             lambda x: TF.interpolate(x, mode=mode, align_corners=ac, **kw), [shape], what)
            # float32: nearest source indices are computed in float, as PyTorch's kernels do
            a = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
            close(F.interpolate(tp.tensor(a), mode=mode, align_corners=ac, **kw),
                  TF.interpolate(torch.tensor(a), mode=mode, align_corners=ac, **kw), what, 1e-5)


def test_interpolate_nearest_on_uint8_and_half():
    a = np.random.default_rng(0).integers(0, 255, (1, 2, 3, 5)).astype(np.uint8)
    for mode in ("nearest", "nearest-exact"):
        y = F.interpolate(tp.tensor(a), scale_factor=1.6, mode=mode)
        assert y.dtype is tp.uint8
        close(y, TF.interpolate(torch.tensor(a), scale_factor=1.6, mode=mode), mode, 0)
    h = np.random.default_rng(1).standard_normal((1, 2, 3, 5)).astype(np.float16)
    close(F.interpolate(tp.tensor(h), size=(4, 7), mode="bilinear"),
          TF.interpolate(torch.tensor(h), size=(4, 7), mode="bilinear"), "half", 2e-3)


def test_deprecated_upsample_functions_warn_and_match():
    a = np.random.default_rng(0).standard_normal((1, 2, 3, 4))
    for name in ("upsample", "upsample_nearest", "upsample_bilinear"):
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            y = getattr(F, name)(tp.tensor(a), scale_factor=2)
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            z = getattr(TF, name)(torch.tensor(a), scale_factor=2)
        assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
        assert [w.category for w in ours] == [w.category for w in theirs]
        close(y, z, name)


def _t(shape, dtype=np.float32):
    a = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    return tp.tensor(a), torch.tensor(a)


ERRORS = [
    ("conv_transpose2d", lambda M, x, w: M.conv_transpose2d(x((5, 5)), w((4, 3, 3, 3)))),
    ("conv_transpose2d", lambda M, x, w: M.conv_transpose2d(x((2, 4, 5, 5)), w((3, 3, 3, 3)))),
    ("conv_transpose2d", lambda M, x, w: M.conv_transpose2d(x((2, 4, 5, 5)), w((4, 3, 3, 3)), groups=3)),
    ("conv_transpose2d", lambda M, x, w: M.conv_transpose2d(x((2, 4, 5, 5)), w((4, 3, 3, 3)), stride=0)),
    ("conv_transpose2d", lambda M, x, w: M.conv_transpose2d(x((2, 4, 5, 5)), w((4, 3, 3, 3)), padding=-1)),
    ("conv_transpose2d", lambda M, x, w: M.conv_transpose2d(x((2, 4, 5, 5)), w((4, 3, 3, 3)), output_padding=2,
                                                            stride=2)),
    ("conv_transpose2d", lambda M, x, w: M.conv_transpose2d(x((2, 4, 5, 5)), w((4, 3, 3, 3)), w((4,)))),
    ("conv_transpose2d", lambda M, x, w: M.conv_transpose2d(x((2, 4, 5, 5)), w((4, 3, 3, 3)), stride=(1, 2, 3))),
    ("conv_transpose2d", lambda M, x, w: M.conv_transpose2d(x((2, 4, 5, 5)), w((4, 3, 3)))),
    ("conv_transpose1d", lambda M, x, w: M.conv_transpose1d(x((2, 4, 5, 5)), w((4, 3, 3)))),
    ("conv_transpose1d", lambda M, x, w: M.conv_transpose1d(x((2, 4, 5)), w((4, 3, 3)), output_padding=1)),
    ("conv3d", lambda M, x, w: M.conv3d(x((2, 3, 5)), w((4, 3, 3, 3, 3)))),
    ("conv3d", lambda M, x, w: M.conv3d(x((1, 3, 2, 2, 2)), w((4, 2, 1, 1, 1)))),
    ("conv3d", lambda M, x, w: M.conv3d(x((1, 2, 2, 2, 2)), w((4, 2, 3, 3, 3)))),
    ("conv3d", lambda M, x, w: M.conv3d(x((1, 2, 4, 4, 4)), w((4, 2, 3, 3, 3)), stride=2, padding="same")),
    ("pixel_shuffle", lambda M, x, w: M.pixel_shuffle(x((2, 5, 4, 4)), 2)),
    ("pixel_shuffle", lambda M, x, w: M.pixel_shuffle(x((4, 4)), 2)),
    ("pixel_shuffle", lambda M, x, w: M.pixel_shuffle(x((2, 4, 4, 4)), 0)),
    ("pixel_unshuffle", lambda M, x, w: M.pixel_unshuffle(x((2, 4, 5, 4)), 2)),
    ("pixel_unshuffle", lambda M, x, w: M.pixel_unshuffle(x((2, 4, 4, 5)), 2)),
    ("pixel_unshuffle", lambda M, x, w: M.pixel_unshuffle(x((2, 4, 4, 4)), -1)),
    ("unfold", lambda M, x, w: M.unfold(x((2, 3, 5, 5)), 6)),
    ("unfold", lambda M, x, w: M.unfold(x((2, 3, 5, 5)), 0)),
    ("unfold", lambda M, x, w: M.unfold(x((2, 3, 5, 5)), 2, stride=0)),
    ("unfold", lambda M, x, w: M.unfold(x((2, 3, 5, 5)), 2, padding=-1)),
    ("unfold", lambda M, x, w: M.unfold(x((2, 3, 5, 5)), 2, dilation=0)),
    ("unfold", lambda M, x, w: M.unfold(x((2, 3, 5, 5)), (2, 2, 2))),
    ("unfold", lambda M, x, w: M.unfold(x((2, 3, 5, 5), np.int64), 2)),
    ("fold", lambda M, x, w: M.fold(x((2, 12, 15)), (5, 5), 2)),
    ("fold", lambda M, x, w: M.fold(x((2, 13, 16)), (5, 5), 2)),
    ("fold", lambda M, x, w: M.fold(x((2, 12, 16, 1)), (5, 5), 2)),
    ("fold", lambda M, x, w: M.fold(x((2, 12, 16)), (0, 5), 2)),
    ("fold", lambda M, x, w: M.fold(x((2, 12, 16)), (5, 5), 2, stride=0)),
    ("fold", lambda M, x, w: M.fold(x((2, 12, 16), np.int64), (5, 5), 2)),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), size=(0, 3))),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), scale_factor=0.1)),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), size=(2, 3), mode="linear")),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), size=(2, 3), mode="trilinear")),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4)), size=3, mode="bilinear")),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4)), size=3, mode="bicubic")),
    ("interpolate", lambda M, x, w: M.interpolate(x((3, 4)), size=3)),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), size=(2, 3), mode="foo")),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), size=(2, 3), align_corners=True)),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), size=(2, 3), scale_factor=2)),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)))),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), size=(2, 3, 4))),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), scale_factor=(2, 3, 4))),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), size=(2, 3), recompute_scale_factor=True)),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), size=(2, 3), antialias=True)),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5), np.int64), size=(2, 3), mode="bilinear")),
    ("interpolate", lambda M, x, w: M.interpolate(x((2, 3, 4, 5)), size=(2.5, 3))),
]


@pytest.mark.parametrize("i", range(len(ERRORS)), ids=lambda i: f"{ERRORS[i][0]}-{i}")
def test_errors_as_pytorch(i):
    _, call = ERRORS[i]
    got = {}
    for lib, M, key in ((tp, F, 0), (torch, TF, 1)):
        def x(shape, dtype=np.float32, key=key):
            return _t(shape, dtype)[key]
        try:
            call(M, x, x)
        except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
            got[key] = e
    assert 1 in got, "PyTorch accepts this call"
    assert 0 in got, f"tensorplug accepts a call PyTorch refuses: {got[1]!r}"
    ours, theirs = got[0], got[1]
    assert type(ours) is type(theirs), (ours, theirs)
    # the C++ tensor type names carry the library's name
    assert str(ours).replace("tensorplug.", "torch.") == str(theirs), (str(ours), str(theirs))


def test_oversized_transposed_padding_is_refused_as_pytorch_does():
    # PyTorch's CPU library names a primitive that could not be built; the type matches, our text says why
    x, tx = _t((2, 4, 5, 5))
    w, tw = _t((4, 3, 3, 3))
    with pytest.raises(RuntimeError):
        TF.conv_transpose2d(tx, tw, padding=5)
    with pytest.raises(RuntimeError, match="calculated output size"):
        F.conv_transpose2d(x, w, padding=5)


# -- modules ---------------------------------------------------------------------------------------------
MODULES = [
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "output_padding": 1, "groups": 2}, (2, 4, 5)),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "padding": 1, "dilation": 2, "bias": False}, (2, 4, 5, 5)),
    ("ConvTranspose2d", (4, 2, (2, 3)), {"stride": (2, 1), "output_padding": (1, 0)}, (4, 3, 3)),
    ("Conv3d", (2, 4, 3), {"padding": 1, "stride": (1, 2, 2)}, (2, 2, 4, 5, 5)),
    ("Conv3d", (2, 4, 2), {"padding": "same", "padding_mode": "reflect"}, (2, 2, 3, 4, 4)),
    ("Conv3d", (4, 4, (1, 2, 2)), {"groups": 2, "padding_mode": "circular", "padding": 1}, (1, 4, 3, 3, 3)),
    ("PixelShuffle", (2,), {}, (1, 8, 3, 3)),
    ("PixelUnshuffle", (2,), {}, (1, 2, 4, 6)),
    ("Unfold", ((2, 3),), {"padding": 1, "stride": 2}, (2, 3, 5, 6)),
    ("Fold", ((4, 5), 2), {}, (2, 8, 12)),
    ("Upsample", (), {"scale_factor": 2, "mode": "bilinear"}, (1, 2, 3, 4)),
    ("Upsample", (), {"size": (5, 7), "mode": "bicubic", "align_corners": True}, (1, 2, 3, 4)),
    ("Upsample", (), {"scale_factor": (1.5, 2.0, 0.5), "mode": "trilinear"}, (1, 2, 3, 4, 4)),
    ("UpsamplingNearest2d", (), {"scale_factor": 3}, (1, 2, 3, 4)),
    ("UpsamplingBilinear2d", (), {"size": 6}, (1, 2, 3, 4)),
    ("ReflectionPad1d", ((2, 1),), {}, (2, 3, 5)),
    ("ReflectionPad2d", (2,), {}, (2, 3, 4, 5)),
    ("ReflectionPad3d", ((1, 0, 2, 1, 0, 1),), {}, (1, 2, 3, 4, 5)),
    ("ReplicationPad1d", (3,), {}, (3, 4)),
    ("ReplicationPad2d", ((1, 2, 0, 3),), {}, (2, 3, 4, 5)),
    ("ReplicationPad3d", (1,), {}, (2, 2, 3, 3)),
    ("ZeroPad1d", ((1, 2),), {}, (2, 3, 4)),
    ("ZeroPad2d", ((1, -1, 2, 0),), {}, (2, 3, 4, 5)),
    ("ZeroPad3d", (1,), {}, (1, 2, 2, 3)),
    ("ConstantPad1d", (2, 3.5), {}, (2, 3, 4)),
    ("ConstantPad2d", ((1, 0, 2, 3), -1.0), {}, (2, 3, 4)),
    ("ConstantPad3d", (1, 2.0), {}, (1, 1, 2, 2, 2)),
    ("CircularPad1d", ((2, 1),), {}, (2, 3, 4)),
    ("CircularPad2d", (1,), {}, (2, 3, 4, 5)),
    ("CircularPad3d", ((1, 0, 1, 0, 0, 1),), {}, (1, 2, 3, 3, 3)),
]


@pytest.mark.parametrize("name, args, kw, shape", MODULES, ids=[m[0] for m in MODULES])
def test_module_matches_pytorch(name, args, kw, shape):
    ours, theirs = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in ours.state_dict().items():
        assert tuple(v.shape) == tuple(theirs.state_dict()[k].shape), k
    theirs.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy()) for k, v in ours.state_dict().items()})
    theirs.double()
    ours_params = {k: tp.tensor(v.detach().numpy().astype(np.float64), requires_grad=True)
                   for k, v in ours.named_parameters()}
    for k, p in ours_params.items():
        setattr(ours, k, nn.Parameter(p))
    x, tx = pair(shape, 3)
    y, z = ours(x), theirs(tx)
    close(y, z, (name, "output"))
    g = np.random.default_rng(4).standard_normal(tuple(z.shape))
    y.backward(tp.tensor(g))
    z.backward(torch.tensor(g))
    close(x.grad, tx.grad, (name, "input grad"))
    tparams = dict(theirs.named_parameters())
    for k, p in ours.named_parameters():
        close(p.grad, tparams[k].grad, (name, "grad", k))


@pytest.mark.parametrize("name, args", [("ConvTranspose2d", (16, 32, 3)), ("ConvTranspose1d", (8, 4, 5)),
                                        ("Conv3d", (4, 8, 3))])
def test_module_default_init_follows_pytorch(name, args):
    """kaiming_uniform_(a=sqrt(5)) of the weight (fan_in from its dim 1) and the bias within 1/sqrt(fan_in)."""
    tp.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    w, tw = ours.weight.detach().numpy(), theirs.weight.detach().numpy()
    fan_in = tw[0].size
    bound = 1 / np.sqrt(fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    np.testing.assert_allclose(w.std(), tw.std(), rtol=0.15)
    assert np.abs(ours.bias.detach().numpy()).max() <= bound


def test_conv_transpose_output_size_as_pytorch():
    ours, theirs = nn.ConvTranspose2d(2, 3, 3, stride=2), torch.nn.ConvTranspose2d(2, 3, 3, stride=2)
    x, tx = _t((1, 2, 4, 4))
    for size in ([9, 9], [10, 10], [1, 3, 10, 9], (9, 10)):
        assert tuple(ours(x, output_size=size).shape) == tuple(theirs(tx, output_size=size).shape)
    for size in ([8, 9], [11, 9], [1, 2, 3]):
        with pytest.raises(ValueError) as a:
            ours(x, output_size=size)
        with pytest.raises(ValueError) as b:
            theirs(tx, output_size=size)
        assert str(a.value) == str(b.value).replace("torch.Size(", "").replace("])", "]")


@pytest.mark.parametrize("make", [
    lambda M: M.ConvTranspose2d(2, 3, 3, padding_mode="reflect"),
    lambda M: M.ConvTranspose1d(3, 3, 3, groups=2),
    lambda M: M.ConvTranspose1d(2, 3, 3, groups=2),
    lambda M: M.Conv3d(2, 3, 3, stride=2, padding="same"),
    lambda M: M.Conv3d(2, 3, 3, padding="full"),
])
def test_module_argument_errors_as_pytorch(make):
    with pytest.raises(ValueError) as a:
        make(nn)
    with pytest.raises(ValueError) as b:
        make(torch.nn)
    assert str(a.value) == str(b.value)


def test_circular_pad_module_checks_the_input_rank_as_pytorch():
    x, tx = _t((5,))
    with pytest.raises(ValueError) as a:
        nn.CircularPad2d(1)(x)
    with pytest.raises(ValueError) as b:
        torch.nn.CircularPad2d(1)(tx)
    assert str(a.value) == str(b.value)


# -- adaptive max pooling, affine_grid, grid_sample --------------------------------------------------------------
def _distinct(shape, seed):
    n = int(np.prod(shape))
    a = np.random.default_rng(seed).permutation(n).reshape(shape) / n
    return tp.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


@pytest.mark.parametrize("fn, shape, out", [("adaptive_max_pool2d", (2, 3, 5, 7), (2, 3)),
                                            ("adaptive_max_pool2d", (3, 5, 7), (3, None)),
                                            ("adaptive_max_pool2d", (1, 2, 4, 5), (7, 9)),
                                            ("adaptive_max_pool2d", (1, 2, 4, 5), 0),
                                            ("adaptive_max_pool1d", (2, 3, 7), 3),
                                            ("adaptive_max_pool1d", (3, 4), 6)])
def test_adaptive_max_pool_values_indices_and_gradients(fn, shape, out):
    x, tx = _distinct(shape, 0)
    y, i = getattr(F, fn)(x, out, return_indices=True)
    z, j = getattr(TF, fn)(tx, out, return_indices=True)
    close(y, z, fn)
    assert i.dtype is tp.int64 and np.array_equal(i.numpy(), j.numpy())
    if not z.numel():  # PyTorch's backward refuses an empty output; ours gives the input a zero gradient
        y.sum().backward()
        assert not x.grad.numpy().any()
        return
    g = np.random.default_rng(1).standard_normal(tuple(z.shape))
    y.backward(tp.tensor(g))
    z.backward(torch.tensor(g))
    close(x.grad, tx.grad, fn)


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 3, 1), (2, 1, 2, 3, 4)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(size, align_corners):
    th = (2, 3) if len(size) == 4 else (3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unit-size grids with align_corners warn, in both
        forward_backward(lambda t: F.affine_grid(t, size, align_corners),
                         lambda t: TF.affine_grid(t, size, align_corners), [(size[0],) + th], size)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample(mode, padding_mode, align_corners):
    x, tx = pair((2, 3, 5, 7), 0)
    pts = np.random.default_rng(1).uniform(-1.6, 1.6, (2, 4, 6, 2))
    g, tg = tp.tensor(pts, requires_grad=True), torch.tensor(pts, requires_grad=True)
    y = F.grid_sample(x, g, mode, padding_mode, align_corners)
    z = TF.grid_sample(tx, tg, mode, padding_mode, align_corners)
    close(y, z, "output")
    up = np.random.default_rng(2).standard_normal(tuple(z.shape))
    y.backward(tp.tensor(up))
    z.backward(torch.tensor(up))
    close(x.grad, tx.grad, "input grad")
    close(g.grad, tg.grad, "grid grad")


def test_grid_sample_of_an_affine_grid_and_the_default_align_corners_warning():
    x, tx = pair((1, 2, 4, 4), 0, grad=False)
    theta = np.array([[[0.8, -0.2, 0.1], [0.3, 0.9, -0.2]]])
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        y = F.grid_sample(x, F.affine_grid(tp.tensor(theta), (1, 2, 3, 5)))
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        z = TF.grid_sample(tx, TF.affine_grid(torch.tensor(theta), (1, 2, 3, 5)))
    close(y, z, "sampled")
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


GRID_ERRORS = [
    lambda M, x: M.adaptive_max_pool2d(x((2, 3, 5, 7)), (2, 3, 4)),
    lambda M, x: M.adaptive_max_pool2d(x((5, 7)), 2),
    lambda M, x: M.adaptive_max_pool2d(x((2, 3, 0, 7)), 2),
    lambda M, x: M.adaptive_max_pool2d(x((2, 3, 5, 7)), (-1, 3)),
    lambda M, x: M.adaptive_max_pool2d(x((2, 3, 5, 7), np.int64), 2),
    lambda M, x: M.adaptive_max_pool1d(x((2, 3, 7, 1)), 3),
    lambda M, x: M.adaptive_max_pool1d(x((7,)), 3),
    lambda M, x: M.adaptive_max_pool1d(x((2, 3, 7)), (3, 4)),
    lambda M, x: M.adaptive_max_pool1d(x((2, 0, 7)), 3),
    lambda M, x: M.affine_grid(x((2, 2, 3), np.int64), (2, 3, 4, 5), align_corners=False),
    lambda M, x: M.affine_grid(x((2, 2, 3)), (3, 3, 4, 5), align_corners=False),
    lambda M, x: M.affine_grid(x((2, 2, 3)), (2, 3, 4), align_corners=False),
    lambda M, x: M.affine_grid(x((2, 2, 3)), (2, 3, 4, 0), align_corners=False),
    lambda M, x: M.grid_sample(x((2, 3, 5, 7)), x((2, 4, 5, 2)), mode="foo", align_corners=False),
    lambda M, x: M.grid_sample(x((2, 3, 5, 7)), x((2, 4, 5, 2)), padding_mode="foo", align_corners=False),
    lambda M, x: M.grid_sample(x((2, 3, 5, 7)), x((1, 4, 5, 2)), align_corners=False),
    lambda M, x: M.grid_sample(x((2, 3, 5, 7)), x((2, 4, 5, 1)), align_corners=False),
    lambda M, x: M.grid_sample(x((2, 3, 5, 7)), x((2, 4, 5, 2), np.float64), align_corners=False),
    lambda M, x: M.grid_sample(x((3, 5, 7)), x((4, 5, 2)), align_corners=False),
    lambda M, x: M.grid_sample(x((2, 3, 5, 7), np.int64), x((2, 4, 5, 2), np.int64), align_corners=False),
]


@pytest.mark.parametrize("i", range(len(GRID_ERRORS)))
def test_pooling_and_grid_errors_as_pytorch(i):
    got = {}
    for M, key in ((F, 0), (TF, 1)):
        try:
            GRID_ERRORS[i](M, lambda shape, dtype=np.float32, key=key: _t(shape, dtype)[key])
        except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
            got[key] = e
    assert 1 in got and 0 in got, got
    assert type(got[0]) is type(got[1]), got
    norm = str(got[0]).replace("tensorplug.", "torch.").replace("Got (2, 3, 3).", "Got torch.Size([2, 3, 3]).")
    assert norm == str(got[1]), (str(got[0]), str(got[1]))


def test_unsupported_grid_sample_modes_are_refused():
    x, g = tp.randn(1, 1, 3, 3), tp.zeros(1, 2, 2, 2)
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.grid_sample(x, g, mode="bicubic", align_corners=False)
    # 5-D inputs are sampled trilinearly (tests/test_nn_more_torch_oracle.py)
    assert F.grid_sample(tp.randn(1, 1, 2, 2, 2), tp.zeros(1, 1, 1, 1, 3), align_corners=False).shape == (1, 1, 1, 1, 1)


@pytest.mark.parametrize("name, out", [("AdaptiveMaxPool1d", 3), ("AdaptiveMaxPool2d", (2, None))])
def test_adaptive_max_pool_modules(name, out):
    ours, theirs = getattr(nn, name)(out, return_indices=True), getattr(torch.nn, name)(out, return_indices=True)
    assert repr(ours) == repr(theirs)
    x, tx = _distinct((2, 3, 5) if name.endswith("1d") else (2, 3, 5, 4), 3)
    (y, i), (z, j) = ours(x), theirs(tx)
    close(y, z, name)
    assert np.array_equal(i.numpy(), j.numpy())


POOL3D = [((2, 3, 5, 6, 7), (2,), {}),
          ((3, 5, 6, 7), (3,), {"stride": 2, "padding": 1}),
          ((1, 2, 6, 5, 7), ((2, 3, 2),), {"stride": (2, 1, 2), "ceil_mode": True}),
          ((1, 2, 4, 4, 4), (3,), {"stride": 2, "padding": 1, "ceil_mode": True})]


@pytest.mark.parametrize("shape, args, kw", POOL3D)
def test_max_pool3d_values_indices_and_gradients(shape, args, kw):
    for extra in ({}, {"dilation": (2, 1, 1)} if shape[-3] >= 5 else {}):
        x, tx = _distinct(shape, 0)
        y, i = F.max_pool3d(x, *args, return_indices=True, **kw, **extra)
        z, j = TF.max_pool3d(tx, *args, return_indices=True, **kw, **extra)
        close(y, z, "max_pool3d")
        assert np.array_equal(i.numpy(), j.numpy())
        g = np.random.default_rng(1).standard_normal(tuple(z.shape))
        y.backward(tp.tensor(g))
        z.backward(torch.tensor(g))
        close(x.grad, tx.grad, "max_pool3d grad")


@pytest.mark.parametrize("shape, args, kw", POOL3D)
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor_override", [None, 3])
def test_avg_pool3d_values_and_gradients(shape, args, kw, count_include_pad, divisor_override):
    forward_backward(lambda x: F.avg_pool3d(x, *args, count_include_pad=count_include_pad,
                                            divisor_override=divisor_override, **kw),
                     lambda x: TF.avg_pool3d(x, *args, count_include_pad=count_include_pad,
                                             divisor_override=divisor_override, **kw), [shape], (shape, kw))
    a = (np.random.default_rng(2).standard_normal(shape) * 50).astype(np.int64)
    close(F.avg_pool3d(tp.tensor(a), *args, **kw), TF.avg_pool3d(torch.tensor(a), *args, **kw), "int64", 0)


POOL3D_ERRORS = [
    lambda M, x: M.max_pool3d(x((5, 6, 7)), 2),
    lambda M, x: M.max_pool3d(x((2, 0, 5, 6, 7)), 2),
    lambda M, x: M.max_pool3d(x((2, 3, 5, 6, 7)), 2, padding=2),
    lambda M, x: M.max_pool3d(x((2, 3, 5, 6, 7)), 0),
    lambda M, x: M.max_pool3d(x((2, 3, 5, 6, 7)), 2, stride=0),
    lambda M, x: M.max_pool3d(x((2, 3, 5, 6, 7)), 2, dilation=0),
    lambda M, x: M.max_pool3d(x((2, 3, 5, 6, 7)), (2, 2)),
    lambda M, x: M.max_pool3d(x((2, 3, 5, 6, 7)), 8),
    lambda M, x: M.max_pool3d(x((2, 3, 5, 6, 7), np.bool_), 2),
    lambda M, x: M.max_pool3d(x((2, 3, 5, 6, 7)), 2, padding=-1),
    lambda M, x: M.avg_pool3d(x((5, 6, 7)), 2),
    lambda M, x: M.avg_pool3d(x((2, 3, 5, 6, 7)), 2, padding=2),
    lambda M, x: M.avg_pool3d(x((2, 3, 5, 6, 7)), 8),
    lambda M, x: M.avg_pool3d(x((2, 3, 5, 6, 7), np.float16), 2),
    lambda M, x: M.avg_pool3d(x((2, 3, 5, 6, 7)), 2, divisor_override=0),
    lambda M, x: M.avg_pool3d(x((2, 3, 5, 6, 7)), (2, 2)),
    lambda M, x: M.avg_pool3d(x((2, 3, 5, 6, 7)), 2, padding=-1),
]


@pytest.mark.parametrize("i", range(len(POOL3D_ERRORS)))
def test_pool3d_errors_as_pytorch(i):
    got = {}
    for M, key in ((F, 0), (TF, 1)):
        try:
            POOL3D_ERRORS[i](M, lambda shape, dtype=np.float32, key=key: _t(shape, dtype)[key])
        except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
            got[key] = e
    assert 1 in got and 0 in got, got
    assert type(got[0]) is type(got[1]) and str(got[0]) == str(got[1]), (got[0], got[1])


@pytest.mark.parametrize("name, args, kw, shape", [
    ("MaxPool3d", (2,), {"padding": 1}, (1, 2, 4, 5, 5)),
    ("MaxPool3d", ((2, 1, 2),), {"stride": 1, "dilation": (1, 1, 2), "ceil_mode": True}, (2, 3, 4, 5)),
    ("AvgPool3d", (2,), {"stride": 1, "count_include_pad": False, "padding": 1}, (1, 2, 3, 4, 4)),
    ("AvgPool3d", ((1, 2, 2),), {"divisor_override": 2}, (1, 2, 3, 4, 4)),
])
def test_pool3d_modules(name, args, kw, shape):
    ours, theirs = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    assert repr(ours) == repr(theirs)
    forward_backward(ours, theirs, [shape], name)
