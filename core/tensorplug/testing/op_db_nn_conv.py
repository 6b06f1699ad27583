"""Op database entries of the convolution family beyond conv1d/conv2d: transposed convolutions, conv3d,
unfold / fold, pixel (un)shuffle and interpolate (with the deprecated upsample functions).

Imported at the end of :mod:`tensorplug.testing.op_db`, whose conventions the entries follow (numpy
references in float64 rounded to the result dtype, gradient samples of at most 300 elements that pass
float64 gradcheck, error inputs with PyTorch's exception types and messages). The references are
written directly in numpy: strided windows, one ``+=`` per kernel position, per-dim interpolation taps.
"""

from __future__ import annotations

import warnings

import numpy as np

import tensorplug as tp

from . import samples as S
from .samples import small_when_grad as _small_when_grad
from .opinfo import OP_DB, OpInfo, SampleInput, ErrorInput
from .samples import ALL, FLOATING, make_tensor
from ..nn import functional as F

__all__ = []

_TOL = {"atol": 2e-2, "rtol": 2e-2}  # reduced-precision sums over windows and channels round at every step
_T = {"transposed": True}
_NC = {"noncontiguous": True}


def _nn(name, ref, dtypes, samples, **kw):
    fn = getattr(F, name.partition(".")[0])
    OP_DB.append(OpInfo(name=f"nn.functional.{name}", op=fn, ref=ref, dtypes=tuple(dtypes),
                        sample_inputs=_small_when_grad(samples), **kw))


def _errors(*makers):
    def error_inputs(device):
        for m in makers:
            yield m()
    return error_inputs


def _err(exc, regex, input, *args, **kwargs):
    return ErrorInput(SampleInput(input, args, kwargs), exc, regex)


def _t(shape, dtype=tp.float32, seed=0):
    return make_tensor(shape, dtype, seed=seed)


def _ntuple(v, nd):
    t = (v,) if isinstance(v, (int, float)) else tuple(v)
    return t * nd if len(t) == 1 else t


def _batched(x, nd):
    v = S.f64(x)
    return (v, True) if v.ndim == nd + 2 else (v[None], False)


def _mk(dtype, requires_grad):
    def mk(shape, seed, **kw):
        return make_tensor(shape, dtype, -1, 1, seed=seed, requires_grad=requires_grad, **kw)
    return mk


# -- conv3d ------------------------------------------------------------------------------------------------------
def _conv3d_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    v, batched = _batched(x, 3)
    wv = S.f64(w)
    s, d, k = _ntuple(stride, 3), _ntuple(dilation, 3), wv.shape[2:]
    if padding == "same":
        pads = [(di * (ki - 1) // 2, di * (ki - 1) - di * (ki - 1) // 2) for di, ki in zip(d, k)]
    elif padding == "valid":
        pads = [(0, 0)] * 3
    else:
        pads = [(p, p) for p in _ntuple(padding, 3)]
    v = np.pad(v, [(0, 0), (0, 0)] + pads)
    outs = [(n - di * (ki - 1) - 1) // si + 1 for n, ki, si, di in zip(v.shape[2:], k, s, d)]
    og, cg = wv.shape[0] // groups, wv.shape[1]
    out = np.zeros((v.shape[0], wv.shape[0], *outs))
    for pos in np.ndindex(*k):
        sl = tuple(slice(p * di, p * di + si * (o - 1) + 1, si) for p, di, si, o in zip(pos, d, s, outs))
        part = v[(slice(None), slice(None)) + sl]
        for g in range(groups):
            out[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", part[:, g * cg:(g + 1) * cg],
                                                     wv[(slice(g * og, (g + 1) * og), slice(None)) + pos])
    if b is not None:
        out = out + S.f64(b).reshape(-1, 1, 1, 1)
    return S.cast(out if batched else out[0], x.dtype)


def _conv3d_samples(device, dtype, requires_grad):
    mk = _mk(dtype, requires_grad)
    yield SampleInput(mk((1, 1, 2, 2, 3), 0), (mk((1, 1, 2, 2, 2), 1),), name="tiny")
    yield SampleInput(mk((2, 2, 3, 3, 3), 2), (mk((2, 2, 2, 2, 2), 3), mk((2,), 4)), name="bias")
    yield SampleInput(mk((2, 3, 4, 3), 5, **_NC), (mk((2, 2, 2, 2, 2), 6),), {"stride": (2, 1, 1), "padding": 1},
                      name="unbatched_stride_pad")
    yield SampleInput(mk((1, 4, 3, 4, 4), 7), (mk((2, 2, 2, 1, 2), 8), mk((2,), 9)),
                      {"groups": 2, "dilation": (1, 2, 2)}, name="groups_dilation")
    yield SampleInput(mk((1, 2, 3, 3, 3), 10, **_T), (mk((2, 2, 2, 2, 2), 11),), {"padding": "same"}, name="same")


_nn("conv3d", _conv3d_ref, FLOATING, _conv3d_samples, aten=("conv3d", "conv3d.padding", "conv2d"), **_TOL,
    error_inputs=_errors(
        lambda: _err(RuntimeError, r"Expected 4D \(unbatched\) or 5D \(batched\) input to conv3d, but got input of "
                                   r"size: \[2, 3, 5\]", _t((2, 3, 5)), _t((4, 3, 3, 3, 3))),
        lambda: _err(RuntimeError, r"Given groups=1, weight of size \[4, 2, 1, 1, 1\], expected input\[1, 3, 2, 2, "
                                   r"2\] to have 2 channels, but got 3 channels instead",
                     _t((1, 3, 2, 2, 2)), _t((4, 2, 1, 1, 1)))))


# -- transposed convolutions ---------------------------------------------------------------------------------------
def _conv_t_ref(nd):
    def ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        v, batched = _batched(x, nd)
        wv = S.f64(w)
        s, p, op, d = (_ntuple(a, nd) for a in (stride, padding, output_padding, dilation))
        n, c = v.shape[:2]
        og, k = wv.shape[1], wv.shape[2:]
        cg = c // groups
        full = [(i - 1) * si + di * (ki - 1) + 1 + oi for i, si, di, ki, oi in zip(v.shape[2:], s, d, k, op)]
        out = np.zeros((n, og * groups, *full))
        for g in range(groups):
            for pos in np.ndindex(*k):
                part = np.einsum("nc...,co->no...", v[:, g * cg:(g + 1) * cg],
                                 wv[(slice(g * cg, (g + 1) * cg), slice(None)) + pos])
                sl = tuple(slice(q * di, q * di + si * (i - 1) + 1, si)
                           for q, di, si, i in zip(pos, d, s, v.shape[2:]))
                out[(slice(None), slice(g * og, (g + 1) * og)) + sl] += part
        out = out[(slice(None), slice(None)) + tuple(slice(pi, f - pi) for pi, f in zip(p, full))]
        if b is not None:
            out = out + S.f64(b).reshape((-1,) + (1,) * nd)
        return S.cast(out if batched else out[0], x.dtype)
    return ref


def _conv_t_samples(nd):
    def sample_inputs(device, dtype, requires_grad):
        mk = _mk(dtype, requires_grad)
        sp = (3,) * nd
        yield SampleInput(mk((1, 1) + (2,) * nd, 0), (mk((1, 1) + (2,) * nd, 1),), name="tiny")
        yield SampleInput(mk((2, 2) + sp, 2), (mk((2, 3) + (3,) * nd, 3), mk((3,), 4)),
                          {"stride": 2, "padding": 1, "output_padding": 1}, name="bias_stride_pad")
        yield SampleInput(mk((2,) + sp, 5, **_NC), (mk((2, 2) + (2,) * nd, 6),), name="unbatched")
        yield SampleInput(mk((1, 4) + sp, 7), (mk((4, 1) + (2,) * nd, 8), mk((2,), 9)),
                          {"groups": 2, "dilation": 2, "stride": (2,) if nd == 1 else (1, 2)}, name="groups_dilation")
        yield SampleInput(mk((1, 2) + sp, 10, **_T), (mk((2, 2) + (2,) * nd, 11),),
                          {"stride": 3, "dilation": 3, "output_padding": 2, "padding": 1}, name="output_padding_dilation")
        # as many output channels per group as input columns: the CPU kernels' channels-last path
        yield SampleInput(mk((2, 4) + (2,) * nd, 12), (mk((4, 3) + (2,) * nd, 13), mk((6,), 14)),
                          {"groups": 2, "stride": 2, "padding": 1, "dilation": 2, "output_padding": 1},
                          name="channels_last_groups")
    return sample_inputs


def _conv_t_errors(nd):
    sp = (5,) * nd
    name = f"conv_transpose{nd}d"
    return _errors(
        lambda: _err(RuntimeError, rf"Expected {nd + 1}D \(unbatched\) or {nd + 2}D \(batched\) input to {name}, but "
                                   r"got input of size: \[5\]", _t((5,)), _t((4, 3) + (3,) * nd)),
        lambda: _err(RuntimeError, r"Given transposed=1, weight of size \[3, 3" + ", 3" * nd + r"\], expected input\[2, "
                                   r"4" + ", 5" * nd + r"\] to have 3 channels, but got 4 channels instead",
                     _t((2, 4) + sp), _t((3, 3) + (3,) * nd)),
        lambda: _err(RuntimeError, "output padding must be smaller than either stride or dilation",
                     _t((2, 4) + sp), _t((4, 3) + (3,) * nd), None, 2, 0, 2),
        lambda: _err(RuntimeError, r"expected bias to be 1-dimensional with 3 elements, but got bias of size \[4\]",
                     _t((2, 4) + sp), _t((4, 3) + (3,) * nd), _t((4,))),
        lambda: _err(RuntimeError, r"Input type \((torch|tensorplug).FloatTensor\) and weight type \((torch|tensorplug).DoubleTensor\) should be "
                                   "the same", _t((2, 4) + sp), _t((4, 3) + (3,) * nd, tp.float64)),
        lambda: _err(RuntimeError, "non-positive stride is not supported", _t((2, 4) + sp), _t((4, 3) + (3,) * nd),
                     stride=0),
        lambda: _err(RuntimeError, r"Given groups=3, expected weight to be divisible by 3 at dimension 0",
                     _t((2, 4) + sp), _t((4, 3) + (3,) * nd), groups=3))


for _nd in (1, 2):
    _nn(f"conv_transpose{_nd}d", _conv_t_ref(_nd), FLOATING, _conv_t_samples(_nd), error_inputs=_conv_t_errors(_nd),
        aten=("conv_transpose2d.input",) + (("conv_transpose1d",) if _nd == 1 else ()), **_TOL)


# -- unfold / fold ---------------------------------------------------------------------------------------------
def _unfold_ref(x, kernel_size, dilation=1, padding=0, stride=1):
    v, batched = _batched(x, 2)
    k, d, p, s = (_ntuple(a, 2) for a in (kernel_size, dilation, padding, stride))
    v = np.pad(v, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    outs = [(n - di * (ki - 1) - 1) // si + 1 for n, ki, si, di in zip(v.shape[2:], k, s, d)]
    parts = [v[:, :, i * d[0]:i * d[0] + s[0] * (outs[0] - 1) + 1:s[0], j * d[1]:j * d[1] + s[1] * (outs[1] - 1) + 1:s[1]]
             for i in range(k[0]) for j in range(k[1])]
    out = np.stack(parts, 2).reshape(v.shape[0], -1, outs[0] * outs[1])
    return S.cast(out if batched else out[0], x.dtype)


def _fold_ref(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    v = S.f64(x)
    batched = v.ndim == 3
    v = v if batched else v[None]
    o, k, d, p, s = (_ntuple(a, 2) for a in (output_size, kernel_size, dilation, padding, stride))
    bh, bw = [(n + 2 * pi - di * (ki - 1) - 1) // si + 1 for n, ki, si, di, pi in zip(o, k, s, d, p)]
    n = v.shape[0]
    blocks = v.reshape(n, -1, k[0], k[1], bh, bw)
    out = np.zeros((n, blocks.shape[1], o[0] + 2 * p[0] + s[0] * bh + d[0] * k[0],
                    o[1] + 2 * p[1] + s[1] * bw + d[1] * k[1]))
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i * d[0]:i * d[0] + s[0] * (bh - 1) + 1:s[0], j * d[1]:j * d[1] + s[1] * (bw - 1) + 1:s[1]] += \
                blocks[:, :, i, j]
    out = out[:, :, p[0]:p[0] + o[0], p[1]:p[1] + o[1]]
    return S.cast(out if batched else out[0], x.dtype)


def _unfold_samples(device, dtype, requires_grad):
    mk = _mk(dtype, requires_grad)
    yield SampleInput(mk((1, 1, 3, 3), 0), (2,), name="tiny")
    yield SampleInput(mk((2, 2, 4, 5), 1), ((2, 3),), {"stride": (2, 1), "padding": 1}, name="stride_pad")
    yield SampleInput(mk((2, 5, 4), 2, **_NC), (2,), {"dilation": 2}, name="unbatched_dilation")
    yield SampleInput(mk((1, 3, 4, 4), 3, **_T), (3,), {"padding": (1, 0), "stride": 2}, name="overhang")


def _fold_samples(device, dtype, requires_grad):
    mk = _mk(dtype, requires_grad)
    yield SampleInput(mk((1, 4, 4), 0), ((3, 3), 2), name="tiny")
    yield SampleInput(mk((2, 12, 15), 1), ((4, 5), (2, 3)), {"stride": (2, 1), "padding": 1}, name="stride_pad")
    yield SampleInput(mk((8, 4), 2, **_NC), ((4, 4), 2), {"dilation": 2}, name="unbatched_dilation")
    yield SampleInput(mk((1, 27, 6), 3, **_T), ((5, 5), 3), {"stride": 2, "padding": (1, 0)}, name="uncovered_rows")


_BLOCK_ERRORS = (
    lambda: _err(RuntimeError, "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 0",
                 _t((2, 3, 5, 5)), 0),
    lambda: _err(RuntimeError, "stride should be greater than zero, but got stride_height: 0 stride_width: 0",
                 _t((2, 3, 5, 5)), 2, stride=0),
    lambda: _err(RuntimeError, "padding should be non-negative, but got pad_height: -1 pad_width: -1",
                 _t((2, 3, 5, 5)), 2, padding=-1),
    lambda: _err(RuntimeError, "dilation should be greater than zero, but got dilation_height: 0 dilation_width: 0",
                 _t((2, 3, 5, 5)), 2, dilation=0),
    lambda: _err(RuntimeError, "It is expected kernel_size equals to 2, but got size 3", _t((2, 3, 5, 5)), (2, 2, 2)),
    lambda: _err(RuntimeError, r"Given input with spatial size \(5, 5\), kernel_size=\(6, 6\), dilation=\(1, 1\), "
                               r"padding=\(0, 0\), calculated shape of the array of sliding blocks as \(0, 0\), but its "
                               "components must be at least one.", _t((2, 3, 5, 5)), 6),
    lambda: _err(NotImplementedError, "\"im2col_out_cpu\" not implemented for 'Long'", _t((2, 3, 5, 5), tp.int64), 2),
)
_nn("unfold", _unfold_ref, FLOATING, _unfold_samples, aten=("im2col",), error_inputs=_errors(*_BLOCK_ERRORS))
_nn("fold", _fold_ref, FLOATING, _fold_samples, aten=("col2im", "conv_transpose2d.input"), error_inputs=_errors(
    lambda: _err(RuntimeError, r"Given output_size=\(5, 5\), kernel_size=\(2, 2\), dilation=\(1, 1\), padding=\(0, 0\), "
                               r"stride=\(1, 1\), expected size of input's dimension 2 to match the calculated number "
                               r"of sliding blocks 4 \* 4 = 16, but got input.size\(2\)=15.",
                 _t((2, 12, 15)), (5, 5), 2),
    lambda: _err(RuntimeError, r"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                               r"but got input.size\(1\)=13 and kernel_size=\(2, 2\).", _t((2, 13, 16)), (5, 5), 2),
    lambda: _err(RuntimeError, r"Expected 2D or 3D \(batch mode\) tensor for input with possibly 0 batch size and "
                               r"non-zero dimensions for input, but got: \[2, 12, 16, 1\]",
                 _t((2, 12, 16, 1)), (5, 5), 2),
    lambda: _err(RuntimeError, "stride should be greater than zero", _t((2, 12, 16)), (5, 5), 2, stride=0),
    lambda: _err(NotImplementedError, "\"col2im_out_cpu\" not implemented for 'Long'",
                 _t((2, 12, 16), tp.int64), (5, 5), 2)))


# -- pixel shuffle ---------------------------------------------------------------------------------------------
def _shuffle_ref(x, r):
    v = np.asarray(x)
    *lead, c, h, w = v.shape
    y = v.reshape(*lead, c // (r * r), r, r, h, w)
    m = len(lead)
    y = y.transpose(*range(m), m, m + 3, m + 1, m + 4, m + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def _unshuffle_ref(x, r):
    v = np.asarray(x)
    *lead, c, h, w = v.shape
    m = len(lead)
    y = v.reshape(*lead, c, h // r, r, w // r, r).transpose(*range(m), m, m + 2, m + 4, m + 1, m + 3)
    return y.reshape(*lead, c * r * r, h // r, w // r)


def _shuffle_samples(down):
    def sample_inputs(device, dtype, requires_grad):
        def mk(shape, seed, **kw):
            return make_tensor(shape, dtype, seed=seed, requires_grad=requires_grad, **kw)
        if down:
            yield SampleInput(mk((1, 2, 4, 6), 0), (2,), name="plain")
            yield SampleInput(mk((2, 3, 3), 1, **_NC), (3,), name="unbatched")
            yield SampleInput(mk((2, 1, 2, 2, 4), 2, **_T), (2,), name="extra_batch_dims")
            yield SampleInput(mk((1, 2, 3, 3), 3), (1,), name="factor_one")
        else:
            yield SampleInput(mk((1, 8, 2, 3), 0), (2,), name="plain")
            yield SampleInput(mk((9, 2, 2), 1, **_NC), (3,), name="unbatched")
            yield SampleInput(mk((2, 1, 4, 2, 2), 2, **_T), (2,), name="extra_batch_dims")
            yield SampleInput(mk((1, 2, 3, 3), 3), (1,), name="factor_one")
    return sample_inputs


_nn("pixel_shuffle", _shuffle_ref, ALL, _shuffle_samples(False), aten=("pixel_shuffle",), error_inputs=_errors(
    lambda: _err(RuntimeError, r"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                               r"of upscale_factor, but input.size\(-3\)=5 is not divisible by 4", _t((2, 5, 4, 4)), 2),
    lambda: _err(RuntimeError, r"pixel_shuffle expects input to have at least 3 dimensions, but got input with 2 "
                               r"dimension\(s\)", _t((4, 4)), 2),
    lambda: _err(RuntimeError, "pixel_shuffle expects a positive upscale_factor, but got 0", _t((2, 4, 4, 4)), 0)))
_nn("pixel_unshuffle", _unshuffle_ref, ALL, _shuffle_samples(True), aten=("pixel_unshuffle",), error_inputs=_errors(
    lambda: _err(RuntimeError, r"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                               r"input.size\(-2\)=5 is not divisible by 2", _t((2, 4, 5, 4)), 2),
    lambda: _err(RuntimeError, r"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                               r"input.size\(-1\)=5 is not divisible by 2", _t((2, 4, 4, 5)), 2),
    lambda: _err(RuntimeError, "pixel_unshuffle expects a positive downscale_factor, but got -1", _t((2, 4, 4, 4)), -1)))


# -- interpolate -----------------------------------------------------------------------------------------------
def _up_taps(mode, n_in, n_out, align_corners, scale):
    """numpy (indices, weights) per output position along one dim, as PyTorch's kernels compute them."""
    dst = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        if mode == "nearest" and n_out == n_in:
            return [dst], [np.ones(n_out)]
        if mode == "nearest" and n_out == 2 * n_in:
            return [dst // 2], [np.ones(n_out)]
        r = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
        off = np.float32(0.5 if mode == "nearest-exact" else 0.0)
        src = np.floor((dst.astype(np.float32) + off) * r).astype(np.int64)
        return [np.minimum(src, n_in - 1)], [np.ones(n_out)]
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        src = ((1.0 / scale) if scale else n_in / n_out) * (dst + 0.5) - 0.5
    if mode == "bicubic":
        i = np.floor(src).astype(np.int64)
        t = src - i
        a = -0.75
        near = lambda z: ((a + 2) * z - (a + 3)) * z * z + 1  # noqa: E731
        far = lambda z: ((a * z - 5 * a) * z + 8 * a) * z - 4 * a  # noqa: E731
        return ([np.clip(i + o, 0, n_in - 1) for o in (-1, 0, 1, 2)], [far(t + 1), near(t), near(1 - t), far(2 - t)])
    src = np.maximum(src, 0.0)
    i = src.astype(np.int64)
    lam = src - i
    return [i, np.where(i < n_in - 1, i + 1, i)], [1 - lam, lam]


def _interp_ref(mode):
    def ref(x, size=None, scale_factor=None, align_corners=None, recompute_scale_factor=None):
        v = S.f64(x)
        nd = v.ndim - 2
        if size is not None:
            outs, scales = _ntuple(size, nd), [None] * nd
        else:
            sf = [float(s) for s in _ntuple(scale_factor, nd)]
            outs = [int(n * s) for n, s in zip(v.shape[2:], sf)]
            scales = [None] * nd if recompute_scale_factor or mode == "area" else sf
        for i in range(nd):
            ax = 2 + i
            n_in, n_out = v.shape[ax], outs[i]
            if mode == "area":
                parts = [v.take(range(o * n_in // n_out, -(-(o + 1) * n_in // n_out)), axis=ax).mean(ax, keepdims=True)
                         for o in range(n_out)]
                v = np.concatenate(parts, ax)
                continue
            idx, ws = _up_taps(mode, n_in, n_out, align_corners, scales[i])
            shape = (n_out,) + (1,) * (nd - 1 - i)
            v = sum(np.take(v, ix, axis=ax) * w.reshape(shape) for ix, w in zip(idx, ws))
        return S.cast(v, x.dtype)
    return ref


_INTERP_CASES = {
    "nearest": (((1, 2, 5), {"size": 7}), ((2, 1, 3, 4), {"scale_factor": 2}), ((1, 2, 5, 4), {"size": (3, 7)}),
                ((1, 1, 2, 3, 4), {"scale_factor": (1.5, 0.5, 1.0)}),
                ((1, 2, 4, 3), {"scale_factor": 1.7, "recompute_scale_factor": True})),
    "nearest-exact": (((1, 2, 5), {"size": 8}), ((1, 2, 5, 4), {"scale_factor": (0.6, 1.5)}),
                      ((1, 1, 2, 3, 3), {"size": (3, 2, 5)})),
    "linear": (((1, 2, 5), {"size": 8}), ((2, 1, 6), {"scale_factor": 0.5, "align_corners": True}),
               ((1, 2, 4), {"scale_factor": 1.7})),
    "bilinear": (((1, 2, 3, 4), {"size": (5, 3)}), ((1, 1, 4, 4), {"scale_factor": 1.5, "align_corners": True}),
                 ((2, 1, 3, 5), {"scale_factor": (2.0, 0.6)}),
                 ((1, 1, 5, 3), {"scale_factor": 1.3, "recompute_scale_factor": True})),
    "bicubic": (((1, 2, 3, 4), {"size": (5, 6)}), ((1, 1, 4, 4), {"scale_factor": 1.5, "align_corners": True}),
                ((1, 1, 5, 3), {"scale_factor": (0.7, 2.0)})),
    "trilinear": (((1, 1, 2, 3, 4), {"size": (3, 4, 2)}),
                  ((1, 2, 3, 2, 3), {"scale_factor": 1.5, "align_corners": True})),
    "area": (((1, 2, 7), {"size": 3}), ((1, 2, 5, 6), {"size": (2, 4)}), ((1, 1, 4, 3, 5), {"size": (2, 3, 2)}),
             ((1, 2, 6, 4), {"scale_factor": 0.5})),
}


def _interp_samples(mode):
    def sample_inputs(device, dtype, requires_grad):
        for i, (shape, kw) in enumerate(_INTERP_CASES[mode]):
            lay = (_NC, _T, {})[i % 3]
            t = make_tensor(shape, dtype, seed=i, requires_grad=requires_grad, **lay)
            yield SampleInput(t, (), dict(kw), name="_".join(f"{k}_{v}" for k, v in kw.items()))
    return sample_inputs


def _interp_call(mode):
    def interpolate(input, **kw):
        kw.setdefault("mode", mode)
        return F.interpolate(input, **kw)
    interpolate.__name__ = interpolate.__qualname__ = "interpolate"
    interpolate.__doc__ = f"``nn.functional.interpolate(input, mode={mode!r}, ...)``."
    return interpolate


_INTERP_ERRORS = (
    lambda: _err(ValueError, "align_corners option can only be set with the interpolating modes: linear \\| bilinear "
                             "\\| bicubic \\| trilinear", _t((1, 2, 3, 4)), size=2, mode="nearest", align_corners=True),
    lambda: _err(ValueError, "only one of size or scale_factor should be defined", _t((1, 2, 3, 4)), size=2,
                 scale_factor=2),
    lambda: _err(ValueError, "either size or scale_factor should be defined", _t((1, 2, 3, 4))),
    lambda: _err(ValueError, r"Input and output must have the same number of spatial dimensions, but got input with "
                             r"spatial dimensions of \[3, 4\] and output size of \(2, 3, 4\)", _t((1, 2, 3, 4)),
                 size=(2, 3, 4)),
    lambda: _err(ValueError, "recompute_scale_factor is not meaningful with an explicit size.", _t((1, 2, 3, 4)),
                 size=2, recompute_scale_factor=True),
    lambda: _err(NotImplementedError, "Got 4D input, but linear mode needs 3D input", _t((1, 2, 3, 4)), size=2,
                 mode="linear"),
    lambda: _err(NotImplementedError, r"Input Error: Only 3D, 4D and 5D input Tensors supported \(got 3D\) for the "
                                      r"modes: nearest \| linear", _t((1, 2, 3)), size=2, mode="bicubic"),
    lambda: _err(RuntimeError, r"Input and output sizes should be greater than 0, but got input \(H: 3, W: 4\) output "
                               r"\(H: 0, W: 2\)", _t((1, 2, 3, 4)), size=(0, 2)),
    lambda: _err(ValueError, "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes",
                 _t((1, 2, 3, 4)), size=2, antialias=True),
    lambda: _err(NotImplementedError, "\"upsample_bilinear2d_channels_last\" not implemented for 'Long'",
                 _t((1, 2, 3, 4), tp.int64), size=2, mode="bilinear"),
)
_INTERP_ATEN = {"nearest": ("upsample_nearest1d.vec", "upsample_nearest2d.vec", "upsample_nearest3d.vec"),
                "nearest-exact": ("_upsample_nearest_exact1d.vec", "_upsample_nearest_exact2d.vec",
                                  "_upsample_nearest_exact3d.vec"),
                "linear": ("upsample_linear1d.vec",), "bilinear": ("upsample_bilinear2d.vec",),
                "trilinear": ("upsample_trilinear3d.vec",), "bicubic": ("upsample_bicubic2d.vec",), "area": ()}
for _mode in _INTERP_CASES:
    # nearest modes copy values: every dtype PyTorch's CPU kernels take (floating and uint8)
    _dts = FLOATING + (tp.uint8,) if _mode.startswith("nearest") else FLOATING
    OP_DB.append(OpInfo(name=f"nn.functional.interpolate.{_mode.replace('-', '_')}", op=_interp_call(_mode),
                        ref=_interp_ref(_mode), dtypes=_dts, sample_inputs=_small_when_grad(_interp_samples(_mode)),
                        aten=_INTERP_ATEN[_mode], error_inputs=_errors(*_INTERP_ERRORS) if _mode == "nearest" else None,
                        **_TOL))


def _deprecated(name, mode, align_corners=None):
    fn = getattr(F, name)

    def call(input, **kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return fn(input, **kw)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``nn.functional.{name}`` with its deprecation warning silenced."

    def ref(x, size=None, scale_factor=None):
        kw = {} if align_corners is None else {"align_corners": align_corners}
        return _interp_ref(mode)(x, size, scale_factor, **kw)

    def sample_inputs(device, dtype, requires_grad):
        yield SampleInput(make_tensor((1, 2, 3, 4), dtype, seed=0, requires_grad=requires_grad), (),
                          {"size": (5, 3)}, name="size")
        yield SampleInput(make_tensor((1, 1, 3, 3), dtype, seed=1, requires_grad=requires_grad, **_NC), (),
                          {"scale_factor": 2}, name="scale")
    OP_DB.append(OpInfo(name=f"nn.functional.{name}.quiet", op=call, ref=ref, dtypes=FLOATING,
                        sample_inputs=_small_when_grad(sample_inputs), aten=_INTERP_ATEN[mode], **_TOL))


_deprecated("upsample", "nearest")
_deprecated("upsample_nearest", "nearest")
_deprecated("upsample_bilinear", "bilinear", True)


# -- adaptive max pooling -----------------------------------------------------------------------------------
def _distinct(shape, dtype, seed, requires_grad):
    """Values with no ties (a permutation of a grid): max pooling's gradient is then smooth."""
    n = int(np.prod(shape))
    v = np.random.default_rng(seed).permutation(n).reshape(shape) * (8.0 / max(n, 1)) - 4.0
    return make_tensor(shape, dtype, values=v, requires_grad=requires_grad)


def _adaptive_max_ref(nd):
    def ref(x, output_size, return_indices=False):
        v = S.f64(x)
        outs = _ntuple(output_size, nd)
        outs = tuple(v.shape[-nd + i] if o is None else o for i, o in enumerate(outs))
        sizes = v.shape[-nd:]
        vals = np.zeros(v.shape[:-nd] + outs)
        idx = np.zeros(v.shape[:-nd] + outs, np.int64)
        for pos in np.ndindex(*outs):
            sl = tuple(slice(p * n // o, -(-(p + 1) * n // o)) for p, n, o in zip(pos, sizes, outs))
            win = v[(Ellipsis,) + sl].reshape(v.shape[:-nd] + (-1,))
            a = np.argmax(win, -1)
            vals[(Ellipsis,) + pos] = np.take_along_axis(win, a[..., None], -1)[..., 0]
            coords = np.unravel_index(a, tuple(s.stop - s.start for s in sl))
            flat = coords[0] + sl[0].start if nd == 1 else \
                (coords[0] + sl[0].start) * sizes[1] + coords[1] + sl[1].start
            idx[(Ellipsis,) + pos] = flat
        out = S.cast(vals, x.dtype)
        return (out, idx) if return_indices else out
    return ref


def _adaptive_max_samples(nd):
    cases = {1: (((2, 3, 7), (3,), {}), ((3, 5), (5,), {"return_indices": True}), ((1, 2, 4), (6,), {}),
                 ((1, 1, 6), (1,), {"return_indices": True})),
             2: (((2, 2, 5, 7), ((2, 3),), {}), ((2, 5, 7), ((3, None),), {"return_indices": True}),
                 ((1, 2, 4, 5), ((7, 9),), {}), ((1, 1, 6, 6), (1,), {"return_indices": True}))}[nd]

    def sample_inputs(device, dtype, requires_grad):
        for i, (shape, args, kw) in enumerate(cases):
            yield SampleInput(_distinct(shape, dtype, i, requires_grad), args, dict(kw), name=f"case{i}")
    return sample_inputs


_nn("adaptive_max_pool1d", _adaptive_max_ref(1), FLOATING, _adaptive_max_samples(1), aten=("adaptive_max_pool1d",),
    error_inputs=_errors(
        lambda: _err(RuntimeError, r"Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' "
                                   r"\(while checking arguments for adaptive_max_pool1d\)", _t((2, 3, 7, 1)), 3),
        lambda: _err(RuntimeError, r"adaptive_max_pool1d\(\): Expected input to have non-zero size for non-batch "
                                   r"dimensions, but input has sizes \[2, 3, 0\] with dimension 2 being empty",
                     _t((2, 3, 0)), 3),
        lambda: _err(NotImplementedError, "\"adaptive_max_pool2d\" not implemented for 'Long'",
                     _t((2, 3, 7), tp.int64), 3)))
_nn("adaptive_max_pool2d", _adaptive_max_ref(2), FLOATING, _adaptive_max_samples(2), aten=("adaptive_max_pool2d",),
    error_inputs=_errors(
        lambda: _err(RuntimeError, r"adaptive_max_pool2d\(\): Expected 3D or 4D tensor, but got: \[5, 7\]",
                     _t((5, 7)), 2),
        lambda: _err(RuntimeError, r"adaptive_max_pool2d\(\): internal error: output_size.size\(\) must be 2",
                     _t((2, 3, 5, 7)), (2, 3, 4)),
        lambda: _err(RuntimeError, r"Trying to create tensor with negative dimension -1: \[2, 3, -1, 3\]",
                     _t((2, 3, 5, 7)), (-1, 3))))


# -- affine_grid / grid_sample -----------------------------------------------------------------------------------
def _lin(n, align_corners):
    if n <= 1:
        return np.zeros(n)
    v = np.linspace(-1.0, 1.0, n)
    return v if align_corners else v * (n - 1) / n


def _affine_grid_ref(theta, size, align_corners=None):
    th = S.f64(theta)
    spatial = tuple(size[2:])
    axes = [_lin(n, bool(align_corners)) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # D, H, W order
    base = np.stack(list(mesh[::-1]) + [np.ones(spatial)], -1).reshape(-1, len(spatial) + 1)
    out = np.einsum("lk,njk->nlj", base, th).reshape((size[0],) + spatial + (len(spatial),))
    return S.cast(out, theta.dtype)


def _affine_grid_samples(device, dtype, requires_grad):
    mk = _mk(dtype, requires_grad)
    yield SampleInput(mk((2, 2, 3), 0), ((2, 3, 4, 5),), {"align_corners": False}, name="2d")
    yield SampleInput(mk((1, 2, 3), 1, **_T), ((1, 1, 3, 3),), {"align_corners": True}, name="2d_corners")
    yield SampleInput(mk((2, 3, 4), 2), ((2, 1, 2, 3, 4),), {"align_corners": False}, name="3d")
    yield SampleInput(mk((1, 3, 4), 3, **_NC), ((1, 2, 3, 2, 2),), {"align_corners": True}, name="3d_corners")


_nn("affine_grid", _affine_grid_ref, FLOATING, _affine_grid_samples, aten=("affine_grid_generator", "matmul"),
    error_inputs=_errors(
        lambda: _err(ValueError, r"Expected theta to have floating point type, but got (torch|tensorplug).int64",
                     _t((2, 2, 3), tp.int64), (2, 3, 4, 5), align_corners=False),
        lambda: _err(ValueError, r"Expected a batch of 2D affine matrices of shape Nx2x3 for size \(2, 3, 4, 5\)",
                     _t((2, 3, 3)), (2, 3, 4, 5), align_corners=False),
        lambda: _err(NotImplementedError, r"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
                                          r"transforms, respectively. Got size \(2, 3, 4\).",
                     _t((2, 2, 3)), (2, 3, 4), align_corners=False),
        lambda: _err(ValueError, r"Expected non-zero, positive output size. Got \(2, 3, 4, 0\)",
                     _t((2, 2, 3)), (2, 3, 4, 0), align_corners=False),
        lambda: _err(RuntimeError, r"Expected size for first two dimensions of batch2 tensor to be: \[3, 3\] but got: "
                                   r"\[2, 3\].", _t((2, 2, 3)), (3, 3, 4, 5), align_corners=False)))


def _reflect_np(x, low2, high2):
    if low2 == high2:
        return np.zeros_like(x)
    lo, span = low2 / 2, (high2 - low2) / 2
    x = np.abs(x - lo)
    extra = np.fmod(x, span)
    flips = np.floor(x / span)
    return np.where(flips % 2 == 0, extra + lo, span - extra + lo)


def _grid_sample_ref(x, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    v, g = S.f64(x), S.f64(grid)
    n, c, h, w = v.shape

    def src(coord, size):
        s = ((coord + 1) / 2) * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
        if padding_mode == "border":
            s = np.clip(s, 0, size - 1)
        elif padding_mode == "reflection":
            s = _reflect_np(s, 0, 2 * (size - 1)) if align_corners else _reflect_np(s, -1, 2 * size - 1)
            s = np.clip(s, 0, size - 1)
        return s
    ix, iy = src(g[..., 0], w), src(g[..., 1], h)  # N, Ho, Wo
    batch = np.arange(n)[:, None, None]

    def at(xi, yi):
        ok = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
        vals = v[batch, :, np.clip(yi, 0, h - 1).astype(np.int64), np.clip(xi, 0, w - 1).astype(np.int64)]
        return np.where(ok[..., None], vals, 0.0)  # N, Ho, Wo, C
    if mode == "nearest":
        out = at(np.rint(ix), np.rint(iy))
    else:
        x0, y0 = np.floor(ix), np.floor(iy)
        fx, fy = ix - x0, iy - y0
        out = (at(x0, y0) * ((1 - fx) * (1 - fy))[..., None] + at(x0 + 1, y0) * (fx * (1 - fy))[..., None]
               + at(x0, y0 + 1) * ((1 - fx) * fy)[..., None] + at(x0 + 1, y0 + 1) * (fx * fy)[..., None])
    return S.cast(np.moveaxis(out, -1, 1), x.dtype)


def _grid_sample_samples(device, dtype, requires_grad):
    rng = np.random.default_rng(7)
    i = 0
    for mode in ("bilinear", "nearest"):
        for padding_mode in ("zeros", "border", "reflection"):
            for align_corners in (False, True):
                x = make_tensor((1, 2, 3, 4), dtype, seed=i, requires_grad=requires_grad)
                # points inside and beyond [-1, 1]; nearest sampling gives the grid a zero gradient, so only
                # the bilinear samples differentiate it
                pts = rng.uniform(-1.3, 1.3, (1, 2, 3, 2))
                g = make_tensor(pts.shape, dtype, values=pts, requires_grad=requires_grad and mode == "bilinear")
                yield SampleInput(x, (g,), {"mode": mode, "padding_mode": padding_mode,
                                            "align_corners": align_corners},
                                  name=f"{mode}_{padding_mode}_{align_corners}")
                i += 1


_nn("grid_sample", _grid_sample_ref, (tp.float32, tp.float64), _grid_sample_samples, aten=("grid_sampler_2d",),
    error_inputs=_errors(
        lambda: _err(ValueError, r"nn.functional.grid_sample\(\): expected mode to be 'bilinear', 'nearest' or "
                                 r"'bicubic', but got: 'foo'", _t((2, 3, 5, 7)), _t((2, 4, 5, 2)), mode="foo",
                     align_corners=False),
        lambda: _err(ValueError, r"nn.functional.grid_sample\(\): expected padding_mode to be 'zeros', 'border', or "
                                 r"'reflection', but got: 'foo'", _t((2, 3, 5, 7)), _t((2, 4, 5, 2)),
                     padding_mode="foo", align_corners=False),
        lambda: _err(RuntimeError, r"grid_sampler\(\): expected grid and input to have same batch size, but got input "
                                   r"with sizes \[2, 3, 5, 7\] and grid with sizes \[1, 4, 5, 2\]",
                     _t((2, 3, 5, 7)), _t((1, 4, 5, 2)), align_corners=False),
        lambda: _err(RuntimeError, r"grid_sampler\(\): expected grid to have size 2 in last dimension, but got grid "
                                   r"with sizes \[2, 4, 5, 1\]", _t((2, 3, 5, 7)), _t((2, 4, 5, 1)),
                     align_corners=False),
        lambda: _err(RuntimeError, "expected scalar type Float but found Double", _t((2, 3, 5, 7)),
                     _t((2, 4, 5, 2), tp.float64), align_corners=False)))


# -- 3-d pooling -------------------------------------------------------------------------------------------------------
def _pool_out_ref(n, k, s, p, d, ceil_mode):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    o = num // s + 1
    return o - 1 if ceil_mode and (o - 1) * s >= n + p else o


def _pool3d_windows(v, k, s, p, d, ceil_mode, fill):
    sizes = v.shape[2:]
    outs = [_pool_out_ref(*a, ceil_mode) for a in zip(sizes, k, s, p, d)]
    v = np.pad(v, [(0, 0), (0, 0)] + [(pi, pi) for pi in p], constant_values=fill)
    extra = [max((o - 1) * si + di * (ki - 1) + 1 - v.shape[2 + i], 0)
             for i, (o, si, di, ki) in enumerate(zip(outs, s, d, k))]
    v = np.pad(v, [(0, 0), (0, 0)] + [(0, e) for e in extra], constant_values=fill)
    span = tuple(di * (ki - 1) + 1 for ki, di in zip(k, d))
    w = np.lib.stride_tricks.sliding_window_view(v, span, axis=(2, 3, 4))
    w = w[(slice(None), slice(None)) + tuple(slice(0, si * (o - 1) + 1, si) for si, o in zip(s, outs))
          + tuple(slice(None, None, di) for di in d)]
    return w, outs  # N, C, Do, Ho, Wo, kd, kh, kw


def _max_pool3d_ref(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    v, batched = _batched(x, 3)
    k = _ntuple(kernel_size, 3)
    s = k if stride is None or stride in ((), []) else _ntuple(stride, 3)
    p, d = _ntuple(padding, 3), _ntuple(dilation, 3)
    w, outs = _pool3d_windows(v, k, s, p, d, ceil_mode, -np.inf)
    flat = w.reshape(w.shape[:5] + (-1,))
    arg = np.argmax(flat, -1)
    out = np.take_along_axis(flat, arg[..., None], -1)[..., 0]
    out = S.cast(out if batched else out[0], x.dtype)
    if not return_indices:
        return out
    kt, kh, kw = np.unravel_index(arg, k)
    t = np.arange(outs[0]).reshape(-1, 1, 1) * s[0] - p[0] + kt * d[0]
    h = np.arange(outs[1]).reshape(-1, 1) * s[1] - p[1] + kh * d[1]
    ww = np.arange(outs[2]) * s[2] - p[2] + kw * d[2]
    sizes = v.shape[2:]
    idx = ((t * sizes[1] + h) * sizes[2] + ww).astype(np.int64)
    return out, idx if batched else idx[0]


def _avg_pool3d_ref(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                    divisor_override=None):
    v, batched = _batched(x, 3)
    k = _ntuple(kernel_size, 3)
    s = k if stride is None or stride in ((), []) else _ntuple(stride, 3)
    p = _ntuple(padding, 3)
    w, outs = _pool3d_windows(v, k, s, p, (1, 1, 1), ceil_mode, 0.0)
    sums = w.sum((-3, -2, -1))
    if divisor_override is not None:
        div = divisor_override
    else:
        counts = []
        for o, ki, si, pi, n in zip(outs, k, s, p, v.shape[2:]):
            starts = np.arange(o) * si - pi
            ends = np.minimum(starts + ki, n + pi)
            counts.append(ends - starts if count_include_pad else np.minimum(ends, n) - np.maximum(starts, 0))
        div = counts[0][:, None, None] * counts[1][:, None] * counts[2]
    out = sums / div
    if np.dtype(x.dtype).kind in "iu":
        out = np.trunc(out)
    return S.cast(out if batched else out[0], x.dtype)


def _pool3d_samples(avg):
    cases = [((1, 2, 4, 4, 4), (2,), {}),
             ((2, 3, 5, 4), (3,), {"stride": 2, "padding": 1}),
             ((1, 1, 5, 4, 6), ((2, 3, 2),), {"stride": (2, 1, 2), "ceil_mode": True}),
             ((1, 2, 4, 3, 3), (2, 1), {"padding": 1} if avg else {"dilation": (2, 1, 1)})]
    if avg:
        cases += [((1, 1, 4, 4, 3), (3, 2), {"padding": 1, "count_include_pad": False, "ceil_mode": True}),
                  ((1, 2, 3, 3, 3), (2, 1), {"divisor_override": 3})]
    else:
        cases += [((1, 2, 4, 4, 3), (2, 2, 1), {"return_indices": True, "ceil_mode": True})]

    def sample_inputs(device, dtype, requires_grad):
        for i, (shape, args, kw) in enumerate(cases):
            yield SampleInput(_distinct(shape, dtype, i, requires_grad), args, dict(kw), name=f"case{i}")
    return sample_inputs


_POOL3D_ERRORS = (
    lambda: _err(RuntimeError, r"non-empty 4D or 5D \(batch mode\) tensor expected for input", _t((5, 6, 7)), 2),
    lambda: _err(RuntimeError, "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and "
                               "dilation=1", _t((2, 3, 5, 6, 7)), 2, padding=2),
    lambda: _err(RuntimeError, "stride should not be zero", _t((2, 3, 5, 6, 7)), 2, stride=0),
    lambda: _err(RuntimeError, "pad must be non-negative, but got pad: -1", _t((2, 3, 5, 6, 7)), 2, padding=-1),
)
_nn("max_pool3d", _max_pool3d_ref, FLOATING + (tp.int64,), _pool3d_samples(False),
    aten=("max_pool3d", "max_pool3d_with_indices"), error_inputs=_errors(*_POOL3D_ERRORS,
        lambda: _err(RuntimeError, r"max_pool3d: kernel_size must either be a single int, or a tuple of three ints",
                     _t((2, 3, 5, 6, 7)), (2, 2)),
        lambda: _err(RuntimeError, r"Given input size: \(3x5x6x7\). Calculated output size: \(3x0x0x0\). Output size "
                                   "is too small", _t((2, 3, 5, 6, 7)), 8),
        lambda: _err(RuntimeError, "dilation should be greater than zero, but got dilationT: 0 dilationH: 0 "
                                   "dilationW: 0", _t((2, 3, 5, 6, 7)), 2, dilation=0),
        lambda: _err(NotImplementedError, "\"max_pool3d\" not implemented for 'Bool'",
                     _t((2, 3, 5, 6, 7), tp.bool), 2)))
_nn("avg_pool3d", _avg_pool3d_ref, (tp.bfloat16, tp.float32, tp.float64, tp.int64), _pool3d_samples(True),
    aten=("avg_pool3d",), error_inputs=_errors(*_POOL3D_ERRORS,
        lambda: _err(RuntimeError, r"avg_pool3d: kernel_size must be a single int, or a tuple of three ints",
                     _t((2, 3, 5, 6, 7)), (2, 2)),
        lambda: _err(RuntimeError, r"input image \(T: 5 H: 6 W: 7\) smaller than kernel size \(kT: 8 kH: 8 kW: 8\)",
                     _t((2, 3, 5, 6, 7)), 8),
        lambda: _err(RuntimeError, "divisor must be not zero", _t((2, 3, 5, 6, 7)), 2, divisor_override=0),
        lambda: _err(NotImplementedError, "\"avg_pool3d_out_frame\" not implemented for 'Half'",
                     _t((2, 3, 5, 6, 7), tp.float16), 2)))
