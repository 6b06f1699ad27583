"""``tensorplug.nn.functional``: the layers and losses as functions.

Every function is a composite of public tensor ops (no numpy), so it runs on
any backend and autograd differentiates it through its pieces:

* convolutions are im2col: one strided view of the input per kernel
  position, one ``stack`` copy of them all (N, C*kh*kw, Ho*Wo), one
  broadcast matmul with the weight (per group) that lands in NCHW order;
* pooling takes the same columns (a plain reshape when windows do not
  overlap); max pooling picks each window's first maximum with ``argmax`` +
  ``gather``, so its gradient goes to that one element as in PyTorch;
* the losses on class indices pick the target log-probabilities with
  ``gather`` (never a one-hot matmul).

Argument errors are PyTorch's (type and message), checked before any work.
"""

from __future__ import annotations

import math
import warnings

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..ops.promotion import _pt_name
from .modules.utils import _single, _pair
import tensorplug as _tp

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "pad",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "batch_norm", "layer_norm", "group_norm", "dropout", "embedding", "one_hot", "normalize",
    "relu", "relu_", "relu6", "elu", "leaky_relu", "gelu", "silu", "mish", "softplus", "hardtanh", "tanh",
    "sigmoid", "logsigmoid", "softmax", "softmin", "log_softmax",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "huber_loss", "smooth_l1_loss", "kl_div",
]

_INF = math.inf


def _size(shape):
    return str(tuple(shape))


# -- linear ---------------------------------------------------------------------------------
def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: one matmul and one add (weight: out_features x in_features)."""
    return _tp.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = input1 @ weight[o] @ input2 + bias[o]`` (weight: out x in1 x in2)."""
    if input1._shape[:-1] != input2._shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1._shape[:-1])} and "
                           f"{list(input2._shape[:-1])}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got {weight.dim()}-dimensional")
    out_f, in1, in2 = weight._shape
    if input1._shape[-1] != in1 or input2._shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input sizes do not match weight: got {input1._shape[-1]} and "
                           f"{input2._shape[-1]} for weight of size {list(weight._shape)}")
    # x1 @ W viewed as (in1, out * in2), then a batched dot with x2 over in2
    t = input1.matmul(weight.permute(1, 0, 2).reshape(in1, out_f * in2))
    out = (t.unflatten(-1, (out_f, in2)) * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias


# -- padding ------------------------------------------------------------------------------------
def _constant_pad(x, pad, value):
    """``pad`` (last dim first, (lo, hi) pairs, negative crops) filled with ``value``: one cat per padded dim."""
    out = x
    n = x.dim()
    for i in range(len(pad) // 2):
        dim = n - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo < 0:
            out = out.narrow(dim, -lo, out._shape[dim] + lo)
            lo = 0
        if hi < 0:
            out = out.narrow(dim, 0, out._shape[dim] + hi)
            hi = 0
        if lo or hi:
            parts = []
            shape = list(out._shape)
            if lo:
                shape[dim] = lo
                parts.append(_tp.full(shape, value, dtype=out._dtype, device=out._device))
            parts.append(out)
            if hi:
                shape[dim] = hi
                parts.append(_tp.full(shape, value, dtype=out._dtype, device=out._device))
            out = _tp.cat(parts, dim)
    return out


def _index_pad(x, pad, mode):
    """reflect / replicate / circular padding as one ``index_select`` per padded dim."""
    out = x
    n = x.dim()
    for i in range(len(pad) // 2):
        dim = n - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = out._shape[dim]
        if mode == "reflect":
            if lo >= size or hi >= size:
                raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                                   f"{list(x._shape)}")
            idx = [abs(j) if j < size else 2 * (size - 1) - j for j in range(-lo, size + hi)]
        elif mode == "replicate":
            idx = [min(max(j, 0), size - 1) for j in range(-lo, size + hi)]
        else:
            if lo > size or hi > size:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            idx = [j % size for j in range(-lo, size + hi)]
        if lo or hi:
            out = out.index_select(dim, _tp.tensor(idx, device=out._device))
    return out


_PAD_SIZES = {2: (2, 3), 4: (3, 4), 6: (4, 5)}


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims: ``pad = (left, right, top, bottom, ...)``, last dim first.

    ``mode`` is "constant" (``value``, 0 by default; negative pads crop), "reflect", "replicate" or
    "circular" (these pad the last 1-3 dims of a batched input).
    """
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but "
                           f"got padding length {len(pad)} and input of dimension {input.dim()}")
    if mode == "constant":
        out = _constant_pad(input, pad, 0 if value is None else value)
        return input.clone() if out is input else out
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}"" doesn\'t take in value argument.')
    if input.dim() not in _PAD_SIZES.get(len(pad), ()):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\nSupported combinations "
            "for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D "
            "input: padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last "
            "3 dimensions)")
    if any(p < 0 for p in pad):
        raise RuntimeError(f"negative padding is not supported for mode {mode}")
    out = _index_pad(input, pad, mode)
    return input.clone() if out is input else out


# -- sliding windows (shared by convolution and pooling) ----------------------------------------------
def _out_size(size, k, s, d):
    return (size - d * (k - 1) - 1) // s + 1


def _tiles(x, kernel, ho, wo):
    """Non-overlapping windows (stride == kernel, no dilation) as a view (N, C, Ho, kh, Wo, kw) of ``x``."""
    n, c, h, w = x._shape
    kh, kw = kernel
    if ho * kh != h:
        x = x.narrow(2, 0, ho * kh)
    if wo * kw != w:
        x = x.narrow(3, 0, wo * kw)
    return x.reshape(n, c, ho, kh, wo, kw)


def _patches(x, kernel, stride, dilation):
    """im2col of a 4-D (already padded) ``x``: (N, C, kh * kw, Ho, Wo), entry [:, :, i * kw + j] being the
    input under kernel position (i, j) of every window.

    Each kernel position is one strided view of ``x`` and one ``stack`` copies them all, so the backward
    is one slice-gradient per kernel position. Non-overlapping windows are a reshape of ``x`` instead.
    """
    n, c, h, w = x._shape
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    ho, wo = _out_size(h, kh, sh, dh), _out_size(w, kw, sw, dw)
    if (sh, sw) == (kh, kw) and dh == 1 and dw == 1:
        return _tiles(x, kernel, ho, wo).permute(0, 1, 3, 5, 2, 4).reshape(n, c, kh * kw, ho, wo)
    views = []
    for i in range(kh):
        rows = x.narrow(2, i * dh, ho) if sh == 1 else x[:, :, i * dh:i * dh + sh * (ho - 1) + 1:sh]
        for j in range(kw):
            views.append(rows.narrow(3, j * dw, wo) if sw == 1 else rows[..., j * dw:j * dw + sw * (wo - 1) + 1:sw])
    return _tp.stack(views, 2)


# -- convolution ---------------------------------------------------------------------------------
def _conv_arg(name, value, nd):
    t = _single(value) if nd == 1 else _pair(value)
    if len(t) == 1:
        t = t * nd
    if len(t) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} values to match the "
                           f"convolution dimensions, but got {name}={list(t)}")
    return t


def _conv(nd, input, weight, bias, stride, padding, dilation, groups):
    """Shared body of conv1d and conv2d: checks, padding, then the 2-D im2col kernel."""
    name = f"conv{nd}d"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input._shape)}")
    if weight.dim() != nd + 2:
        raise RuntimeError(f"{name}: expected a {nd + 2}-dimensional weight, but got weight of size "
                           f"{list(weight._shape)}")
    stride = _conv_arg("stride", stride, nd)
    dilation = _conv_arg("dilation", dilation, nd)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    kernel = weight._shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            # an odd total puts the extra element on the right, as PyTorch does
            pads = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for d, k in zip(dilation, kernel)]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _conv_arg("padding", padding, nd)
        if any(p < 0 for p in padding):
            raise RuntimeError("negative padding is not supported")
        pads = [(p, p) for p in padding]
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    out_c, in_cg = weight._shape[:2]
    c = x._shape[1]
    if out_c % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{list(weight._shape)}] instead")
    if c != in_cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight._shape)}, expected "
                           f"input{list(x._shape)} to have {in_cg * groups} channels, but got {c} channels instead")
    if bias is not None and (bias.dim() != 1 or bias._shape[0] != out_c):
        raise RuntimeError(f"Given weight of size {list(weight._shape)}, expected bias to be 1-dimensional with "
                           f"{out_c} elements, but got bias of size {list(bias._shape)} instead")
    if input._dtype is not weight._dtype:
        raise RuntimeError(f"expected scalar type {_pt_name(input._dtype)} but found {_pt_name(weight._dtype)}")
    spatial = x._shape[2:]
    padded = [s + lo + hi for s, (lo, hi) in zip(spatial, pads)]
    if any(d * (k - 1) + 1 > p for d, k, p in zip(dilation, kernel, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(str(d * (k - 1) + 1) for d, k in zip(dilation, kernel))}). Kernel "
                           "size can't be greater than actual input size")
    if nd == 1:
        x, weight = x.unsqueeze(2), weight.unsqueeze(2)
        stride, dilation, pads = (1,) + stride, (1,) + dilation, [(0, 0)] + pads
    if any(lo or hi for lo, hi in pads):
        x = _constant_pad(x, (pads[1][0], pads[1][1], pads[0][0], pads[0][1]), 0)
    out = _conv2d_im2col(x, weight, bias, stride, dilation, groups)
    if nd == 1:
        out = out.squeeze(2)
    return out if batched else out.squeeze(0)


def _conv2d_im2col(x, weight, bias, stride, dilation, groups):
    n = x._shape[0]
    out_c, cg, kh, kw = weight._shape
    cols = _patches(x, (kh, kw), stride, dilation)  # N, C, K, Ho, Wo
    ho, wo = cols._shape[3], cols._shape[4]
    k = cg * kh * kw
    # (O, C*K) @ (N, C*K, Ho*Wo) gives (N, O, Ho*Wo): the output already in NCHW order
    if groups == 1:
        out = weight.reshape(out_c, k).matmul(cols.reshape(n, k, ho * wo))
    else:
        out = weight.reshape(groups, out_c // groups, k).matmul(cols.reshape(n, groups, k, ho * wo))
    out = out.view(n, out_c, ho, wo)
    return out if bias is None else out + bias.view(out_c, 1, 1)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) of ``input`` (N, C_in, L) or (C_in, L) with ``weight``
    (C_out, C_in / groups, k). ``padding`` is an int, a 1-tuple, "valid" or "same"."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) of ``input`` (N, C_in, H, W) or (C_in, H, W) with ``weight``
    (C_out, C_in / groups, kh, kw). ``stride``, ``padding``, ``dilation`` are ints or pairs; ``padding`` may
    also be "valid" or "same" (stride 1 only)."""
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


# -- pooling -------------------------------------------------------------------------------------------
def _pool_out(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_args(name, nd, kernel_size, stride, padding, dilation):
    """kernel, stride (the kernel by default), padding and dilation as ``nd``-tuples, validated."""
    def tup(what, v):
        t = _single(v) if nd == 1 else _pair(v)
        if len(t) == 1:
            t = t * nd
        if len(t) != nd:
            raise RuntimeError(f"{name}: {what} must either be a single int, or a tuple of {nd} ints")
        return t
    k = tup("kernel_size", kernel_size)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else tup("stride", stride)
    p, d = tup("padding", padding), tup("dilation", dilation)
    for what, v, low in (("kernel_size", k, 1), ("stride", s, 1), ("padding", p, 0), ("dilation", d, 1)):
        if any(x < low for x in v):
            raise RuntimeError(f"{name}: {what} must be {'non-negative' if low == 0 else 'greater than zero'}, "
                               f"but got {list(v)}")
    return k, s, p, d


def _pool_prepare(name, nd, input, k, s, p, d, ceil_mode, fill):
    """The input as (N, C, H, W), padded so that exactly the output's windows fit; and the output size."""
    if input.dim() not in (nd + 1, nd + 2) or 0 in input._shape[1:]:
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    if nd == 1:
        x = x.unsqueeze(2)
        k, s, p, d = (1,) + k, (1,) + s, (0,) + p, (1,) + d
    sizes = x._shape[2:]
    outs = tuple(_pool_out(n, ki, si, pi, di, ceil_mode) for n, ki, si, pi, di in zip(sizes, k, s, p, d))
    if any(o <= 0 for o in outs):
        shown = x._shape[1:] if nd == 2 else (x._shape[1], x._shape[3])
        out_shown = (x._shape[1],) + (outs if nd == 2 else outs[1:])
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, shown))}). Calculated output size: "
                           f"({'x'.join(map(str, out_shown))}). Output size is too small")
    # right/bottom: what the last window needs beyond the input (ceil_mode windows may overhang the padding)
    hi = [max((o - 1) * si + di * (ki - 1) + 1 - n - pi, 0) for o, si, di, ki, n, pi in zip(outs, s, d, k, sizes, p)]
    if p[0] or p[1] or hi[0] or hi[1]:
        x = _constant_pad(x, (p[1], hi[1], p[0], hi[0]), fill)
    return x, batched, (k, s, p, d), outs


def _pool_finish(out, nd, batched):
    if nd == 1:
        out = out.squeeze(2)
    return out if batched else out.squeeze(0)


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    name = f"max_pool{nd}d"
    k, s, p, d = _pool_args(name, nd, kernel_size, stride, padding, dilation)
    for pi, ki, di in zip(p, k, d):
        if pi > (di * (ki - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pi}, "
                               f"kernel_size={ki} and dilation={di}")
    fill = -_INF if input._dtype.is_floating_point else _min_of(input._dtype)
    x, batched, (k, s, p, d), (ho, wo) = _pool_prepare(name, nd, input, k, s, p, d, ceil_mode, fill)
    cols = _patches(x, k, s, d)
    # the first maximum of each window (NaN wins), and the gradient goes to it alone, as in PyTorch
    idx = cols.argmax(2, keepdim=True)
    out = _pool_finish(cols.gather(2, idx).squeeze(2), nd, batched)
    if not return_indices:
        return out
    idx = idx.squeeze(2)
    dev = input._device
    rows = (_tp.arange(ho, device=dev) * s[0] - p[0]).view(ho, 1) + (idx // k[1]) * d[0]
    cols = (_tp.arange(wo, device=dev) * s[1] - p[1]) + (idx % k[1]) * d[1]
    width = input._shape[-1]
    return out, _pool_finish(rows * width + cols, nd, batched)


def _min_of(dtype):
    """The smallest value of an integer (or bool) dtype: what integer max pooling pads with."""
    if dtype is _dt.bool or dtype is _dt.uint8:
        return 0
    return -(1 << (8 * dtype.itemsize - 1))


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over sliding windows of the last dim of (N, C, L) or (C, L); ``stride`` defaults to
    ``kernel_size``. With ``return_indices`` also the flat position of each maximum in its row."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over sliding windows of (N, C, H, W) or (C, H, W); ``stride`` defaults to ``kernel_size``; padding
    counts as -inf. With ``return_indices`` also each maximum's flat position ``h * W + w`` in its plane."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    name = f"avg_pool{nd}d"
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, d = _pool_args(name, nd, kernel_size, stride, padding, 1)
    if any(pi > ki // 2 for pi, ki in zip(p, k)):
        (kh, kw), (ph, pw) = (k * 2, p * 2) if nd == 1 else (k, p)
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, "
                           f"padH = {ph}, kW = {kw}, kH = {kh}")
    sizes = input._shape[-nd:]
    x, batched, (k, s, p, d), outs = _pool_prepare(name, nd, input, k, s, p, d, ceil_mode, 0)
    if s == k:
        sums = _tiles(x, k, outs[0], outs[1]).sum((3, 5))
    else:
        sums = _patches(x, k, s, d).sum(2)
    if divisor_override is not None:
        return _pool_finish(sums / divisor_override, nd, batched)
    sizes = (1,) + tuple(sizes) if nd == 1 else tuple(sizes)
    # per output row (column): the window's extent inside the padded input, or inside the input proper
    counts = []
    for o, ki, si, pi, n in zip(outs, k, s, p, sizes):
        row = []
        for i in range(o):
            start = i * si - pi
            end = min(start + ki, n + pi)
            row.append(end - start if count_include_pad else min(end, n) - max(start, 0))
        counts.append(row)
    if all(c == k[0] for c in counts[0]) and all(c == k[1] for c in counts[1]):
        return _pool_finish(sums / (k[0] * k[1]), nd, batched)
    div = _tp.tensor([[a * b for b in counts[1]] for a in counts[0]], dtype=sums._dtype, device=sums._device)
    return _pool_finish(sums / div, nd, batched)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over sliding windows of the last dim of (N, C, L) or (C, L); zero padding counts in the mean
    unless ``count_include_pad=False``."""
    if not input._dtype.is_floating_point:
        raise RuntimeError(f'"avg_pool2d" not implemented for \'{_pt_name(input._dtype)}\'')
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over sliding windows of (N, C, H, W) or (C, H, W); zero padding counts in the mean unless
    ``count_include_pad=False``; ``divisor_override`` replaces the window size as divisor."""
    if not input._dtype.is_floating_point:
        raise RuntimeError(f'"avg_pool2d" not implemented for \'{_pt_name(input._dtype)}\'')
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _adaptive_matrix(n_in, n_out, like):
    """(n_out, n_in) averaging matrix: row i averages [floor(i*n_in/n_out), ceil((i+1)*n_in/n_out))."""
    rows = []
    for i in range(n_out):
        start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
        rows.append([1.0 / (end - start) if start <= j < end else 0.0 for j in range(n_in)])
    return _tp.tensor(rows, dtype=like._dtype, device=like._device)


def _adaptive_avg_pool(nd, input, output_size):
    name = f"adaptive_avg_pool{nd}d"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input._shape)}")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f'"adaptive_avg_pool2d" not implemented for \'{_pt_name(input._dtype)}\'')
    sizes = input._shape[-nd:]
    out = _single(output_size) if nd == 1 else _pair(output_size)
    if len(out) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    out = tuple(s if o is None else o for o, s in zip(out, sizes))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{list(out)}")
    x = input
    for i, (n, o) in enumerate(zip(sizes, out)):
        dim = x.dim() - nd + i
        if n == o:
            continue
        if o == 0:
            x = x.narrow(dim, 0, 0)
        elif n % o == 0:
            # equal windows: a reshape and a mean
            x = x.unflatten(dim, (o, n // o)).mean(dim + 1)
        else:
            m = _adaptive_matrix(n, o, x)
            x = x.movedim(dim, -1).matmul(m.t()).movedim(-1, dim)
    return x if x is not input else input.clone()


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) or (C, L) to length ``output_size`` (windows chosen as PyTorch does)."""
    return _adaptive_avg_pool(1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling of (N, C, H, W) or (C, H, W) to ``output_size`` (an int or a pair; None keeps a dim)."""
    return _adaptive_avg_pool(2, input, output_size)


# -- normalization --------------------------------------------------------------------------------------
def _verify_batch_size(shape):
    n = shape[0]
    for s in shape[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {_size(shape)}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalize each channel (dim 1) of ``input`` over the batch and spatial dims.

    ``training=True`` uses the batch's statistics and, when given, updates ``running_mean`` and
    ``running_var`` in place (``momentum``-weighted; the running variance is the unbiased one);
    ``training=False`` uses the running statistics. Computed as ``x * scale + shift`` per channel.
    """
    if input.dim() < 2:
        if running_mean is not None:
            raise RuntimeError(f"running_mean should contain 0 elements not {running_mean.numel()}")
        raise RuntimeError(f"batch_norm: expected an input of at least 2 dimensions (N, C, ...), got input of "
                           f"size {list(input._shape)}")
    if training:
        _verify_batch_size(input._shape)
    c = input._shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    dims = (0,) + tuple(range(2, input.dim()))
    if training or running_mean is None or running_var is None:
        var, mean = _tp.var_mean(input, dims, correction=0)
        if training and running_mean is not None:
            n = input.numel() // c
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach().to(running_mean._dtype) * momentum)
                running_var.mul_(1 - momentum).add_(var.detach().to(running_var._dtype) * (momentum * n / (n - 1)))
    else:
        mean, var = running_mean, running_var
    scale = (var + eps).rsqrt()
    if weight is not None:
        scale = scale * weight
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias
    shape = (c,) + (1,) * (input.dim() - 2)
    return input * scale.to(input._dtype).view(shape) + shift.to(input._dtype).view(shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the last ``len(normalized_shape)`` dims, then scale by ``weight`` and shift by ``bias``
    (both of shape ``normalized_shape``)."""
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(ns)
    if k == 0 or input._shape[input.dim() - k:] != ns or input.dim() < k:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size{list(input._shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._shape != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t._shape)} and normalized_shape = {list(ns)}")
    dims = tuple(range(-k, 0))
    var, mean = _tp.var_mean(input, dims, correction=0, keepdim=True)
    out = (input - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize (N, C, *) over each group of C / num_groups channels (and the spatial dims), then apply the
    per-channel ``weight`` and ``bias``."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input._shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(input._shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t._shape)} and input of shape {list(input._shape)}")
    x = input.reshape(n, num_groups, -1)
    var, mean = _tp.var_mean(x, (-1,), correction=0, keepdim=True)
    out = ((x - mean) * (var + eps).rsqrt()).view(input._shape)
    shape = (c,) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    return out


# -- dropout, embedding, one_hot, normalize ---------------------------------------------------------------
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (training only; the
    mask comes from tensorplug's RNG, so ``manual_seed`` reproduces it)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    mask = _tp.empty_like(input).bernoulli_(1 - p).div_(1 - p)
    return input.mul_(mask) if inplace else input * mask


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` picked by the integer ``input``: shape ``input.shape + (embedding_dim,)``.

    The row at ``padding_idx`` gets no gradient; ``max_norm`` first renormalizes (in place) the rows used
    whose ``norm_type``-norm exceeds it; ``scale_grad_by_freq`` divides each row's gradient by how often
    it occurs in ``input``.
    """
    if input._dtype is not _dt.int64 and input._dtype is not _dt.int32:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    if sparse:
        raise NotImplementedError("embedding(sparse=True): tensorplug has no sparse tensors")
    v = weight._shape[0]
    if padding_idx is not None:
        if not -v <= padding_idx < v:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= v
    flat = input.reshape(-1)
    if max_norm is not None:
        _embedding_renorm_(weight, flat, max_norm, norm_type)
    out = weight.index_select(0, flat)
    if padding_idx is not None and out._requires_grad:
        out = _tp.where((flat != padding_idx).unsqueeze(1), out, out.detach())
    if scale_grad_by_freq and out._requires_grad:
        counts = _tp.zeros((v,), dtype=out._dtype, device=out._device).index_put_(
            (flat,), _tp.ones(flat._shape, dtype=out._dtype, device=out._device), accumulate=True)
        # forward value unchanged (out - out.detach() is exactly 0); gradient scaled by 1 / count
        out = out.detach() + (out - out.detach()) / counts.index_select(0, flat).unsqueeze(1)
    return out.view(input._shape + (weight._shape[1],))


def _embedding_renorm_(weight, flat, max_norm, norm_type):
    with no_grad():
        rows = weight.index_select(0, flat)
        norms = _tp.norm(rows, norm_type, 1, keepdim=True)
        scale = _tp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        # repeated indices write the same renormalized row
        weight.index_put_((flat,), rows * scale)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot vectors along a new last dim (``num_classes`` = max + 1 by default)."""
    return _tp.one_hot(tensor, num_classes)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """``input`` divided by its ``p``-norm along ``dim`` (the norm clamped below at ``eps``)."""
    return input / _tp.norm(input, p, dim, keepdim=True).clamp_min(eps)


# -- activations ------------------------------------------------------------------------------------
def _inplace(fn, input):
    """Write ``fn(input)`` into ``input``; under autograd ``fn`` reads a copy, so backward never sees the
    overwritten values."""
    src = input.clone() if input._requires_grad else input
    return input.copy_(fn(src))


def relu(input, inplace=False):
    """max(x, 0) elementwise."""
    return _tp.relu_(input) if inplace else _tp.relu(input)


def relu_(input):
    """In-place relu."""
    return _tp.relu_(input)


def relu6(input, inplace=False):
    """min(max(x, 0), 6)."""
    return _inplace(_tp.relu6, input) if inplace else _tp.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (exp(x) - 1)."""
    fn = lambda x: _tp.elu(x, alpha)  # noqa: E731
    return _inplace(fn, input) if inplace else fn(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x."""
    fn = lambda x: _tp.leaky_relu(x, negative_slope)  # noqa: E731
    return _inplace(fn, input) if inplace else fn(input)


def gelu(input, approximate="none"):
    """x * Phi(x) (``approximate="tanh"``: the tanh approximation)."""
    return _tp.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return _inplace(_tp.silu, input) if inplace else _tp.silu(input)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    return _inplace(_tp.mish, input) if inplace else _tp.mish(input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta (linear above ``threshold``)."""
    return _tp.softplus(input, beta, threshold)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """clamp(x, min_val, max_val)."""
    fn = lambda x: _tp.hardtanh(x, min_val, max_val)  # noqa: E731
    return _inplace(fn, input) if inplace else fn(input)


def tanh(input):
    """Hyperbolic tangent."""
    return input.tanh()


def sigmoid(input):
    """1 / (1 + exp(-x))."""
    return input.sigmoid()


def logsigmoid(input):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), without overflow."""
    a = input.abs()
    # (x - |x|) / 2 is min(x, 0) with the right derivative (1/2) at 0
    return (input - a) * 0.5 - (-a).exp().log1p()


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim`` (computed in ``dtype`` when given)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _tp.softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return _tp.softmax(-input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along ``dim``, computed stably."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _tp.log_softmax(input, dim, dtype)


# -- losses -------------------------------------------------------------------------------------------------
_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce):
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  UserWarning, stacklevel=3)
    return ret


def _reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      UserWarning, stacklevel=3)
        return "mean"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _warn_size(input, target):
    if target._shape != input._shape:
        warnings.warn(f"Using a target size ({_size(target._shape)}) that is different to the input size "
                      f"({_size(input._shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", UserWarning, stacklevel=3)


def _check_weight_size(weight, input):
    if weight is not None and weight._shape != input._shape:
        raise ValueError("Weights and input must have the same size.")


def _weighted_loss(loss, weight, reduction, mean_by_weight=True):
    """PyTorch's elementwise-weighted reductions: the mean divides by sum(weight) (huber: by numel)."""
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    return _reduce(loss, reduction)


def _check_target(input, target):
    """Class-index target checks of nll_loss / cross_entropy (PyTorch's messages)."""
    if target._dtype is not _dt.int64 and target._dtype is not _dt.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_pt_name(target._dtype)}")
    dim = input.dim()
    if dim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {dim})")
    if dim == 1:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target.dim() == 1 and target._shape[0] != 1:
            raise RuntimeError(f"size mismatch (got input: {list(input._shape)} , target: {list(target._shape)}")
        return
    if target.dim() >= 1 and input._shape[0] != target._shape[0]:
        raise ValueError(f"Expected input batch_size ({input._shape[0]}) to match target batch_size "
                         f"({target._shape[0]}).")
    if dim == 2:
        if target.dim() != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif target._shape != (input._shape[0],) + input._shape[2:]:
        raise RuntimeError(f"Expected target size {[input._shape[0]] + list(input._shape[2:])}, got "
                           f"{list(target._shape)}")


def _nll_terms(logp, target, weight, ignore_index):
    """(per-element loss, per-element weight, ignored mask, safe target) for class-index targets.

    ``logp``'s class dim is 1 (0 for a 1-D input); ignored targets become class 0 for ``gather`` and get
    weight 0.
    """
    class_dim = 0 if logp.dim() == 1 else 1
    c = logp._shape[class_dim]
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {list(weight._shape)}")
    ignored = target == ignore_index
    safe = _tp.where(ignored, 0, target)
    if safe._dtype is not _dt.int64:
        safe = safe.long()
    try:
        picked = logp.gather(class_dim, safe.unsqueeze(class_dim)).squeeze(class_dim)
    except RuntimeError:
        bad = [v for v in safe.reshape(-1).tolist() if not 0 <= v < c]
        if not bad:
            raise
        raise IndexError(f"Target {bad[0]} is out of bounds.") from None
    kept = (~ignored).to(logp._dtype)
    w = kept if weight is None else weight.index_select(0, safe.reshape(-1)).view(safe._shape) * kept
    return -picked * w, w, ignored, safe


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class indices: ``-input[n, target[n]] * weight[target[n]]``.

    ``input`` holds log-probabilities, (N, C), (C,) or (N, C, d1, ...); ``target`` class indices
    (int64). Targets equal to ``ignore_index`` contribute nothing; "mean" divides by the total weight of
    the other targets.
    """
    reduction = _reduction(reduction, size_average, reduce)
    _check_target(input, target)
    loss, w, _, _ = _nll_terms(input, target, weight, ignore_index)
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy between the logits ``input`` (class dim 1, or 0 for a 1-D input) and ``target``.

    ``target`` holds class indices (int64; shape of ``input`` without the class dim), or class
    probabilities (floating, the shape of ``input``). ``weight`` rescales each class; ``ignore_index``
    skips index targets; ``label_smoothing`` mixes the target with the uniform distribution.
    """
    reduction = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    c = input._shape[class_dim]
    if target._shape == input._shape:
        if not target._dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{_pt_name(target._dtype)}")
        if ignore_index != -100:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if weight is not None and weight.numel() != c:
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but "
                               f"got weight tensor of shape: {list(weight._shape)}")
        logp = input.log_softmax(class_dim)
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * weight.view((c,) + (1,) * (input.dim() - class_dim - 1))
        loss = -prod.sum(class_dim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // c if c else 0)
        return _reduce(loss, reduction)
    _check_target(input, target)
    logp = input.log_softmax(class_dim)
    loss, w, ignored, _ = _nll_terms(logp, target, weight, ignore_index)
    if reduction == "mean":
        denom = w.sum()
        nll = loss.sum() / denom
    else:
        nll = _reduce(loss, reduction)
    if label_smoothing <= 0:
        return nll
    lp = logp if weight is None else logp * weight.view((c,) + (1,) * (input.dim() - class_dim - 1))
    smooth = _tp.where(ignored, 0.0, -lp.sum(class_dim))
    if reduction == "mean":
        smooth = smooth.sum() / denom
    else:
        smooth = _reduce(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)^2, reduced; ``weight`` (input's shape) weighs each element ("mean": by sum(weight))."""
    _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    d = input - target
    loss = d * d
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted_loss(loss, weight, reduction)
    return _reduce(loss, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|, reduced; ``weight`` as in :func:`mse_loss`."""
    _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    loss = (input - target).abs()
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted_loss(loss, weight, reduction)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 * d^2 where |d| < delta, else delta * (|d| - delta / 2), for d = input - target."""
    _warn_size(input, target)
    reduction = _reduction(reduction)
    d = input - target
    a = d.abs()
    loss = _tp.where(a < delta, d * d * 0.5, (a - 0.5 * delta) * delta)
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted_loss(loss, weight, reduction, mean_by_weight=False)
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 * d^2 / beta where |d| < beta, else |d| - beta / 2 (plain L1 for beta = 0)."""
    _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = input - target
    a = d.abs()
    loss = a if beta == 0 else _tp.where(a < beta, d * d * (0.5 / beta), a - 0.5 * beta)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross entropy of ``sigmoid(input)`` against ``target`` in [0, 1], computed from the logits
    without overflow: (1 - t) * x - lw * logsigmoid(x) with lw = 1 + (pos_weight - 1) * t."""
    reduction = _reduction(reduction, size_average, reduce)
    if target._shape != input._shape:
        raise ValueError(f"Target size ({_size(target._shape)}) must be the same as input size "
                         f"({_size(input._shape)})")
    ls = logsigmoid(input)
    if pos_weight is not None:
        ls = ls * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * input - ls
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t * log(x) + (1 - t) * log(1 - x)) for probabilities ``input``; each log is clamped at -100."""
    reduction = _reduction(reduction, size_average, reduce)
    if target._shape != input._shape:
        raise ValueError(f"Using a target size ({_size(target._shape)}) that is different to the input size "
                         f"({_size(input._shape)}) is deprecated. Please ensure they have the same size.")
    if ((input < 0) | (input > 1)).any().item():
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = -(target * input.log().clamp_min(-100) + (1 - target) * (1 - input).log().clamp_min(-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence target * (log(target) - input), ``input`` being log-probabilities
    (``log_target``: the target is too). Use ``reduction="batchmean"`` for the true KL divergence."""
    if reduction == "batchmean":
        red = "sum"
    else:
        red = _reduction(reduction, size_average, reduce)
        if red == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          UserWarning, stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # log of 1 where the target is 0: 0 * log(0) is 0, and its gradient stays finite
        loss = target * _tp.where(target > 0, target, 1.0).log() - target * input
    out = _reduce(loss, red)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input._shape[0]
    return out

