"""CPU convolution kernels: im2col through a strided view of the input, then one GEMM per group.

* ``conv2d``: the columns (C*kh*kw, N*Ho*Wo) are one copy of an ``as_strided`` view of the padded
  input; ``weight (O, C*kh*kw) @ columns`` is the output, channels first, moved to NCHW in one copy.
* ``conv2d_weight_backward``: ``grad (O, N*Ho*Wo) @ columns.T``, the same columns.
* ``conv_transpose2d_backward``: both gradients of a transposed convolution from one copy of the output
  gradient's columns, channels last.
* ``conv_transpose2d.input`` (also conv2d's input gradient): ``input @ weight`` in channels-last rows
  gives the columns of the output, which col2im adds into a zero buffer with one strided ``+=`` per
  kernel position (channels last, each ``+=`` moves runs of output channels, not of a row's pixels).

Half types compute in float32 and round once, as PyTorch's CPU kernels accumulate them.
"""

from __future__ import annotations

import numpy as np

import tensorplug

from .elementwise import quiet
from .kernels import wrap
from .xp import xp

_f32 = np.dtype(xp.float32)
_HALF = (tensorplug.float16, tensorplug.bfloat16)


def _values(t):
    """``t``'s numpy values in the dtype the kernel computes in."""
    a = t._data
    return a.astype(_f32) if t._dtype in _HALF else a


def _pair(v):
    return (v, v) if v.__class__ is int else tuple(v) * (2 if len(v) == 1 else 1)


def _batched(t):
    a = _values(t)
    return (a, True) if a.ndim == 4 else (a[None], False)


def _columns(padded, kernel, stride, dilation, ho, wo):
    """The view (C, kh, kw, N, Ho, Wo) of the padded input (N, C, Hp, Wp): no copy. Read-only on
    numpy, whose flag says so (its elements overlap); cupy arrays have no such flag."""
    n, c = padded.shape[:2]
    sn, sc, sh, sw = padded.strides
    (kh, kw), (s0, s1), (d0, d1) = kernel, stride, dilation
    view = xp.lib.stride_tricks.as_strided(padded, (c, kh, kw, n, ho, wo),
                                           (sc, sh * d0, sw * d1, sn, sh * s0, sw * s1))
    if isinstance(view, np.ndarray):
        view.flags.writeable = False
    return view


def _padded(x, ph, pw):
    if not ph and not pw:
        return x
    n, c, h, w = x.shape
    out = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), x.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = x
    return out


def _finish(out, t, batched):
    """The float32 result of a half-type computation rounded to ``t``'s dtype; wrapped."""
    d = t._dtype
    if d in _HALF:
        out = out.astype(d.np)
    return wrap(out if batched else out[0], d)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x, batched = _batched(input)
    w = _values(weight)
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    cols = _columns(_padded(x, *padding), (kh, kw), stride, dilation, ho, wo)
    og, k, m = o // groups, cg * kh * kw, n * ho * wo
    out = xp.empty((o, m), xp.result_type(x, w))
    for g in range(groups):
        out[g * og:(g + 1) * og] = w[g * og:(g + 1) * og].reshape(og, k) @ cols[g * cg:(g + 1) * cg].reshape(k, m)
    if bias is not None:
        out += _values(bias)[:, None]
    out = xp.ascontiguousarray(out.reshape(o, n, ho, wo).transpose(1, 0, 2, 3))
    return _finish(out, input, batched)


def conv2d_weight_backward(grad_output, input, weight_size, stride, padding, dilation, groups):
    x, _ = _batched(input)
    gy, _ = _batched(grad_output)
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    o, cg, kh, kw = weight_size
    n, _, ho, wo = gy.shape
    cols = _columns(_padded(x, *padding), (kh, kw), stride, dilation, ho, wo)
    og, k, m = o // groups, cg * kh * kw, n * ho * wo
    g2 = gy.transpose(1, 0, 2, 3).reshape(o, m)
    out = xp.empty((o, k), xp.result_type(x, gy))
    for g in range(groups):
        out[g * og:(g + 1) * og] = g2[g * og:(g + 1) * og] @ cols[g * cg:(g + 1) * cg].reshape(k, m).T
    return _finish(out.reshape(o, cg, kh, kw)[None], grad_output, False)


def _channels_last(x):
    """(N, C, H, W) values as the rows (N*H*W, C) of a channels-last copy."""
    n, c, h, w = x.shape
    return xp.ascontiguousarray(x.transpose(0, 2, 3, 1)).reshape(n * h * w, c)


def conv_transpose2d_backward(grad_output, input, weight, stride, padding, dilation, groups):
    """conv_transpose2d's (input, weight) gradients: both GEMMs read one copy of the output gradient's
    columns. Taken channels last (N*H*W, kh*kw*O) when there are at least as many output channels per
    group as input columns, so that the copy moves the longer runs (O values rather than W)."""
    gy, batched = _batched(grad_output)
    x, _ = _batched(input)
    w = _values(weight)
    if w.shape[1] < x.shape[3]:
        return _conv_transpose2d_backward_nchw(gy, x, w, batched, input, weight, stride, padding, dilation, groups)
    (s0, s1), (p0, p1), (d0, d1) = _pair(stride), _pair(padding), _pair(dilation)
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = c // groups
    ot = og * groups
    hp, wp = gy.shape[2] + 2 * p0, gy.shape[3] + 2 * p1
    padded = xp.zeros((n, hp, wp, ot), gy.dtype)
    padded[:, p0:hp - p0, p1:wp - p1] = gy.transpose(0, 2, 3, 1)
    sn, sh, sw, sc = padded.strides
    view = xp.lib.stride_tricks.as_strided(padded, (n, h, wd, kh, kw, ot),
                                           (sn, sh * s0, sw * s1, sh * d0, sw * d1, sc))
    m, k = n * h * wd, kh * kw * og
    xr = _channels_last(x)
    wr = w.transpose(0, 2, 3, 1)  # (C, kh, kw, O/groups)
    dt = xp.result_type(gy, w)
    gi = xp.empty((m, c), dt)
    gw = xp.empty((c, kh, kw, og), dt)
    for g in range(groups):
        cols = view[..., g * og:(g + 1) * og].reshape(m, k)  # a copy
        gi[:, g * cg:(g + 1) * cg] = cols @ wr[g * cg:(g + 1) * cg].reshape(cg, k).T
        gw[g * cg:(g + 1) * cg] = (xr[:, g * cg:(g + 1) * cg].T @ cols).reshape(cg, kh, kw, og)
    gi = xp.ascontiguousarray(gi.reshape(n, h, wd, c).transpose(0, 3, 1, 2))
    return _finish(gi, input, batched), _finish(xp.ascontiguousarray(gw.transpose(0, 3, 1, 2))[None], weight, False)


def _transposed_output(x, w, stride, padding, output_padding, dilation):
    """(stride, padding, dilation) as pairs, and the output's height and width, of a transposed convolution."""
    (s0, s1), (p0, p1), (q0, q1), (d0, d1) = _pair(stride), _pair(padding), _pair(output_padding), _pair(dilation)
    h, wd = x.shape[2:]
    kh, kw = w.shape[2:]
    ho = (h - 1) * s0 - 2 * p0 + d0 * (kh - 1) + q0 + 1
    wo = (wd - 1) * s1 - 2 * p1 + d1 * (kw - 1) + q1 + 1
    return (s0, s1), (p0, p1), (d0, d1), ho, wo


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transposed convolution by col2im, channels last when there are at least as many output channels
    per group as input columns (each strided ``+=`` then moves runs of O values rather than of W), else
    channels first."""
    x, batched = _batched(input)
    w = _values(weight)
    if w.shape[1] < x.shape[3]:
        return _conv_transpose2d_nchw(x, w, batched, input, bias, stride, padding, output_padding, groups, dilation)
    (s0, s1), (p0, p1), (d0, d1), ho, wo = _transposed_output(x, w, stride, padding, output_padding, dilation)
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = c // groups
    dt = xp.result_type(x, w)
    # channels last, so each kernel position's strided += moves runs of O values: the columns
    # (N, H, W, kh, kw, O) of one GEMM per group add into the full (uncropped) output (N, Hp, Wp, O)
    xr = _channels_last(x)
    wr = w.transpose(0, 2, 3, 1)  # (C, kh, kw, O/groups)
    buf = xp.zeros((n, ho + 2 * p0, wo + 2 * p1, og * groups), dt)
    hs, ws = s0 * (h - 1) + 1, s1 * (wd - 1) + 1
    for g in range(groups):
        cols = (xr[:, g * cg:(g + 1) * cg] @ wr[g * cg:(g + 1) * cg].reshape(cg, kh * kw * og)).reshape(
            n, h, wd, kh, kw, og)
        part = buf[..., g * og:(g + 1) * og]
        for i in range(kh):
            rows = part[:, i * d0:i * d0 + hs:s0]
            for j in range(kw):
                rows[:, :, j * d1:j * d1 + ws:s1] += cols[:, :, :, i, j]
    out = buf[:, p0:p0 + ho, p1:p1 + wo]
    if bias is not None:
        out = out + _values(bias)
    out = xp.ascontiguousarray(out.transpose(0, 3, 1, 2))
    return _finish(out, input, batched)


def _conv_transpose2d_backward_nchw(gy, x, w, batched, input, weight, stride, padding, dilation, groups):
    """conv_transpose2d_backward channels first: the columns (O*kh*kw, N*H*W) copy runs of W values."""
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = c // groups
    cols = _columns(_padded(gy, *padding), (kh, kw), stride, dilation, h, wd)
    k, m = og * kh * kw, n * h * wd
    x2 = x.transpose(1, 0, 2, 3).reshape(c, m)
    dt = xp.result_type(gy, w)
    gi = xp.empty((c, m), dt)
    gw = xp.empty((c, k), dt)
    for g in range(groups):
        cg_cols = cols[g * og:(g + 1) * og].reshape(k, m)
        gi[g * cg:(g + 1) * cg] = w[g * cg:(g + 1) * cg].reshape(cg, k) @ cg_cols
        gw[g * cg:(g + 1) * cg] = x2[g * cg:(g + 1) * cg] @ cg_cols.T
    gi = xp.ascontiguousarray(gi.reshape(c, n, h, wd).transpose(1, 0, 2, 3))
    return _finish(gi, input, batched), _finish(gw.reshape(w.shape)[None], weight, False)


def _conv_transpose2d_nchw(x, w, batched, input, bias, stride, padding, output_padding, groups, dilation):
    """conv_transpose2d channels first: each strided ``+=`` of col2im moves runs of W values."""
    (s0, s1), (p0, p1), (d0, d1), ho, wo = _transposed_output(x, w, stride, padding, output_padding, dilation)
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = c // groups
    dt = xp.result_type(x, w)
    # the full (uncropped) output, channels first: each kernel position adds its strided slice
    buf = xp.zeros((og * groups, n, ho + 2 * p0, wo + 2 * p1), dt)
    x2 = x.transpose(1, 0, 2, 3).reshape(c, n * h * wd)
    hs, ws = s0 * (h - 1) + 1, s1 * (wd - 1) + 1
    for g in range(groups):
        cols = (w[g * cg:(g + 1) * cg].reshape(cg, og * kh * kw).T @ x2[g * cg:(g + 1) * cg]).reshape(
            og, kh, kw, n, h, wd)
        part = buf[g * og:(g + 1) * og]
        for i in range(kh):
            rows = part[:, :, i * d0:i * d0 + hs:s0]
            for j in range(kw):
                rows[:, :, :, j * d1:j * d1 + ws:s1] += cols[:, i, j]
    out = buf[:, :, p0:p0 + ho, p1:p1 + wo]
    if bias is not None:
        out = out + _values(bias)[:, None, None, None]
    out = xp.ascontiguousarray(out.transpose(1, 0, 2, 3))
    return _finish(out, input, batched)


KERNELS = {
    "conv2d": quiet(conv2d),
    "conv2d_weight_backward": quiet(conv2d_weight_backward),
    "conv_transpose2d.input": quiet(conv_transpose2d),
    "conv_transpose2d_backward": quiet(conv_transpose2d_backward),
}
