"""Operators of the convolution family beyond conv1d/conv2d: transposed convolutions, conv3d, conv2d's
gradients, im2col / col2im (``unfold`` / ``fold``), pixel (un)shuffle, adaptive max pooling, the
upsampling kernels of ``interpolate`` and ``grid_sample`` / ``affine_grid``.

The speed-critical ones are primitives with a decomposition for every backend and a fused kernel on
the CPU (``tensorplug_cpu/conv.py``): ``conv2d`` (whose decomposition is in ``nn_ops``),
``conv_transpose2d.input`` and ``conv2d_weight_backward``. Their backward formulas are one another:
conv2d's input gradient is a transposed convolution, its weight gradient ``conv2d_weight_backward``,
and a transposed convolution's gradients are a convolution and a weight gradient again, so forward and
backward are each one GEMM per group on the CPU. The rest are compositions of those and of public ops,
which gives them autograd and vmap for free.
"""

from __future__ import annotations

import math
import struct as _struct

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.grad_mode import is_grad_enabled
from ._common import document as _document
from ._lib import defop
from .comparison import where_fn as _where, with_zero_grad
from .factories import arange, ones, tensor, zeros, zeros_like
from .joining import stack
from .nn_ops import _check_conv, _conv_pads, _min_of, _patches, _pool_out, _tup, constant_pad, conv2d
from .pointwise import not_implemented
from .promotion import _pt_name

__all__ = ["conv2d_weight_backward", "conv_transpose1d", "conv_transpose2d", "conv3d", "conv3d_padding",
           "im2col", "col2im", "pixel_shuffle", "pixel_unshuffle", "UPSAMPLE", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "affine_grid_generator", "grid_sampler_2d", "max_pool3d",
           "max_pool3d_with_indices", "avg_pool3d"]


def _pairs(*vals):
    return [_tup(v, 2) for v in vals]


# -- conv2d's weight gradient ---------------------------------------------------------------------------------
def _conv2d_weight_backward(grad_output, input, weight_size, stride, padding, dilation, groups):
    stride, padding, dilation = _pairs(stride, padding, dilation)
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    g = grad_output if batched else grad_output.unsqueeze(0)
    if padding[0] or padding[1]:
        x = constant_pad(x, (padding[1], padding[1], padding[0], padding[0]), 0)
    o, cg, kh, kw = weight_size
    n, _, ho, wo = g._shape
    cols = _patches(x, (kh, kw), stride, dilation)  # N, C, K, H', W' (H' >= Ho: the last rows unused)
    cols = cols.narrow(3, 0, ho).narrow(4, 0, wo)
    k = cg * kh * kw
    # sum over the batch and the output positions: (G, O/G, N*L) @ (G, N*L, C/G*K)
    gy = g.reshape(n, groups, o // groups, ho * wo).permute(1, 2, 0, 3).reshape(groups, o // groups, n * ho * wo)
    c2 = cols.reshape(n, groups, k, ho * wo).permute(1, 0, 3, 2).reshape(groups, n * ho * wo, k)
    return gy.matmul(c2).reshape(o, cg, kh, kw)


conv2d_weight_backward = _document(
    defop("conv2d_weight_backward(Tensor grad_output, Tensor input, SymInt[4] weight_size, SymInt[2] stride, "
          "SymInt[2] padding, SymInt[2] dilation, SymInt groups) -> Tensor", composite=_conv2d_weight_backward),
    "The gradient of conv2d with respect to its weight (of size ``weight_size``), given the output gradient "
    "and the input (a primitive, so that a backend runs it as one GEMM per group).")


# -- transposed convolution --------------------------------------------------------------------------------------
def _type_name(t):
    return t.type()


def _check_conv_transpose(nd):
    name = f"conv_transpose{nd}d"

    def check(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
                               f"input of size: {list(input._shape)}")
        wnd = weight.dim() - 2
        if wnd != nd:
            raise RuntimeError(f"expected stride to be a single integer value or a list of {max(wnd, 0)} values "
                               f"to match the convolution dimensions, but got stride={list(_tup(stride, nd))}")
        if input._dtype is not weight._dtype:
            raise RuntimeError(f"Input type ({_type_name(input)}) and weight type ({_type_name(weight)}) should be "
                               "the same or input should be a MKLDNN tensor and weight is a dense tensor")
        if bias is not None and bias._dtype is not input._dtype:
            raise RuntimeError(f"Input type ({_type_name(input)}) and bias type ({_type_name(bias)}) should be the "
                               "same or input should be a MKLDNN tensor and bias is a dense tensor")
        vals = {}
        for what, v in (("stride", stride), ("padding", padding), ("output_padding", output_padding),
                        ("dilation", dilation)):
            t = _tup(v, nd)
            if len(t) != nd:
                raise RuntimeError(f"expected {what} to be a single integer value or a list of {nd} values to match "
                                   f"the convolution dimensions, but got {what}={list(t)}")
            vals[what] = t
        s, p, op, d = vals["stride"], vals["padding"], vals["output_padding"], vals["dilation"]
        if any(v <= 0 for v in s):
            raise RuntimeError("non-positive stride is not supported")
        if any(v < 0 for v in p):
            raise RuntimeError("negative padding is not supported")
        if any(v < 0 for v in op):
            raise RuntimeError("negative output_padding is not supported")
        if any(v <= 0 for v in d):
            raise RuntimeError("non-positive dilation is not supported")
        if groups <= 0:
            raise RuntimeError("non-positive groups is not supported")
        shape = input._shape if input.dim() == nd + 2 else (1,) + input._shape
        cin, cog = weight._shape[:2]
        if cin % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                               f"but got weight of size [{list(weight._shape)}] instead")
        if shape[1] != cin:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight._shape)}, expected input"
                               f"{list(shape)} to have {cin} channels, but got {shape[1]} channels instead")
        if bias is not None and (bias.dim() != 1 or bias._shape[0] != cog * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight._shape)}, expected bias to be "
                               f"1-dimensional with {cog * groups} elements, but got bias of size "
                               f"{list(bias._shape)} instead")
        if any(o >= si and o >= di for o, si, di in zip(op, s, d)):
            # PyTorch runs the 1-d op as a 2-d one of height 1, and reports it so
            (oh, ow), (sh, sw), (dh, dw) = ((0,) + op, (1,) + s, (1,) + d) if nd == 1 else (op, s, d)
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                               f"output_padding_height: {oh} output_padding_width: {ow} stride_height: {sh} "
                               f"stride_width: {sw} dilation_height: {dh} dilation_width: {dw}")
        outs = [(n - 1) * si - 2 * pi + di * (k - 1) + oi + 1
                for n, si, pi, di, k, oi in zip(shape[2:], s, p, d, weight._shape[2:], op)]
        if any(o <= 0 for o in outs):
            raise RuntimeError(f"{name}: the calculated output size {outs} is too small (input size "
                               f"{list(shape[2:])}, kernel size {list(weight._shape[2:])}, padding {list(p)})")
    return check


def _dilate(x, dim, s):
    """``x`` with ``s - 1`` zeros between neighbours along ``dim`` (one stack and one reshape)."""
    if s == 1:
        return x
    n = x._shape[dim]
    zero = zeros(x._shape, dtype=x._dtype, device=x._device)
    parts = stack([x] + [zero] * (s - 1), dim + 1)
    shape = x._shape[:dim] + (n * s,) + x._shape[dim + 1:]
    return parts.reshape(shape).narrow(dim, 0, (n - 1) * s + 1)


def _conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """A stride-1 convolution of the zero-dilated, padded input with the flipped, channel-swapped weight."""
    s, p, op, d = _pairs(stride, padding, output_padding, dilation)
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    cin, cog, kh, kw = weight._shape
    x = _dilate(_dilate(x, 2, s[0]), 3, s[1])
    lo = [di * (k - 1) - pi for di, k, pi in zip(d, (kh, kw), p)]
    x = constant_pad(x, (lo[1], lo[1] + op[1], lo[0], lo[0] + op[0]), 0)
    w = weight.reshape(groups, cin // groups, cog, kh, kw).transpose(1, 2).reshape(groups * cog, cin // groups, kh,
                                                                                 kw).flip((2, 3))
    out = conv2d(x, w, bias, (1, 1), (0, 0), tuple(d), groups)
    return out if batched else out.squeeze(0)


_CT_DOC = ("{nd}-D transposed convolution (the gradient of conv{nd}d with respect to its input) of ``input`` "
           "(N, C_in, *spatial) or (C_in, *spatial) with ``weight`` (C_in, C_out / groups, *kernel); "
           "``output_padding`` adds to one side of the output size.")
conv_transpose2d = _document(
    defop("conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
          "SymInt[2] padding=0, SymInt[2] output_padding=0, SymInt groups=1, SymInt[2] dilation=1) -> Tensor",
          check=_check_conv_transpose(2), composite=_conv_transpose2d), _CT_DOC.format(nd=2))


def _conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    stride, padding, output_padding, dilation = (_tup(v, 1) for v in (stride, padding, output_padding, dilation))
    out = conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(2), bias, (1,) + stride, (0,) + padding,
                           (0,) + output_padding, groups, (1,) + dilation)
    return out.squeeze(-2)


conv_transpose1d = _document(
    defop("conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, "
          "SymInt[1] padding=0, SymInt[1] output_padding=0, SymInt groups=1, SymInt[1] dilation=1) -> Tensor",
          check=_check_conv_transpose(1), composite=_conv_transpose1d), _CT_DOC.format(nd=1))


def _bias_grad(grad, nd):
    return grad.sum((0,) + tuple(range(2, 2 + nd)) if grad.dim() == nd + 2 else tuple(range(1, 1 + nd)))


@derivative("conv2d")
def _(grad, input, weight, bias, stride, padding, dilation, groups, needs_input_grad):
    s, p, d = _pairs(stride, padding, dilation)
    gi = gw = gb = None
    if needs_input_grad[0]:
        # the output padding that brings the transposed convolution back to the input's size
        op = tuple(n + 2 * pi - di * (k - 1) - 1 - (o - 1) * si
                   for n, o, si, pi, di, k in zip(input._shape[-2:], grad._shape[-2:], s, p, d, weight._shape[2:]))
        gi = conv_transpose2d(grad, weight, None, tuple(s), tuple(p), op, groups, tuple(d))
    if needs_input_grad[1]:
        gw = conv2d_weight_backward(grad, input, weight._shape, tuple(s), tuple(p), tuple(d), groups)
    if needs_input_grad[2]:
        gb = _bias_grad(grad, 2)
    return gi, gw, gb


def _narrow_to(t, like):
    """``t`` cut to ``like``'s spatial size (an output padding of at least the stride adds windows)."""
    for dim in (-2, -1):
        if t._shape[dim] != like._shape[dim]:
            t = t.narrow(dim, 0, like._shape[dim])
    return t


def _conv_transpose2d_backward(grad_output, input, weight, stride, padding, dilation, groups):
    gi = _narrow_to(conv2d(grad_output, weight, None, stride, padding, dilation, groups), input)
    return gi, conv2d_weight_backward(input, grad_output, weight._shape, stride, padding, dilation, groups)


# Both gradients of conv_transpose2d in one op: they read the same columns of the output gradient, which
# a backend's kernel builds once (the CPU's does). Its decomposition is the two ops it fuses.
conv_transpose2d_backward = _document(
    defop("conv_transpose2d_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[2] stride, "
          "SymInt[2] padding, SymInt[2] dilation, SymInt groups) -> (Tensor, Tensor)",
          composite=_conv_transpose2d_backward),
    "(input gradient, weight gradient) of conv_transpose2d given its output gradient.")


@derivative("conv_transpose2d.input")
def _(grad, input, weight, bias, stride, padding, output_padding, groups, dilation, needs_input_grad):
    s, p, d = _pairs(stride, padding, dilation)
    gi = gw = gb = None
    if needs_input_grad[0] and needs_input_grad[1] and not is_grad_enabled():
        # the fused kernel when no graph of the backward is recorded (its parts have formulas of their own)
        gi, gw = conv_transpose2d_backward(grad, input, weight, tuple(s), tuple(p), tuple(d), groups)
        return gi, gw, _bias_grad(grad, 2) if needs_input_grad[2] else None
    if needs_input_grad[0]:
        gi = conv2d(grad, weight, None, tuple(s), tuple(p), tuple(d), groups)
        # an output padding of at least the stride (allowed below the dilation) adds windows the input lacks
        for dim in (-2, -1):
            if gi._shape[dim] != input._shape[dim]:
                gi = gi.narrow(dim, 0, input._shape[dim])
    if needs_input_grad[1]:
        # the transposed convolution's output is conv2d's input: the roles of input and gradient swap
        gw = conv2d_weight_backward(input, grad, weight._shape, tuple(s), tuple(p), tuple(d), groups)
    if needs_input_grad[2]:
        gb = _bias_grad(grad, 2)
    return gi, gw, gb


@derivative("conv2d_weight_backward")
def _(grad, grad_output, input, weight_size, stride, padding, dilation, groups, needs_input_grad):
    # the weight gradient is bilinear in (grad_output, input): its gradients are a convolution of the
    # input and a transposed convolution of the output gradient, both with ``grad`` as the weight
    s, p, d = _pairs(stride, padding, dilation)
    gg = gi = None
    if needs_input_grad[0]:
        gg = conv2d(input, grad, None, tuple(s), tuple(p), tuple(d), groups)
        for dim in (-2, -1):
            if gg._shape[dim] != grad_output._shape[dim]:
                gg = gg.narrow(dim, 0, grad_output._shape[dim])
    if needs_input_grad[1]:
        op = tuple(n + 2 * pi - di * (k - 1) - 1 - (o - 1) * si for n, o, si, pi, di, k in
                   zip(input._shape[-2:], grad_output._shape[-2:], s, p, d, weight_size[2:]))
        gi = conv_transpose2d(grad_output, grad, None, tuple(s), tuple(p), op, groups, tuple(d))
    return gg, gi


# -- conv3d ----------------------------------------------------------------------------------------------------------
def _conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """A sum over the kernel's depth of 2-D convolutions of depth slices (the depth folded into the batch)."""
    s, d = _tup(stride, 3), _tup(dilation, 3)
    pads = _conv_pads(3, padding, d, weight._shape[2:])
    batched = input.dim() == 5
    x = input if batched else input.unsqueeze(0)
    if any(lo or hi for lo, hi in pads):
        x = constant_pad(x, (pads[2][0], pads[2][1], pads[1][0], pads[1][1], pads[0][0], pads[0][1]), 0)
    if bias is not None and bias._dtype is not x._dtype:  # the padding="valid"/"same" overload casts it
        bias = bias.to(x._dtype)
    n, c, dp = x._shape[:3]
    kd = weight._shape[2]
    do = (dp - d[0] * (kd - 1) - 1) // s[0] + 1
    out = None
    for i in range(kd):
        xs = x.narrow(2, i * d[0], (do - 1) * s[0] + 1)
        if s[0] > 1:
            xs = xs[:, :, ::s[0]]
        xs = xs.transpose(1, 2).reshape((n * do, c) + x._shape[3:])
        y = conv2d(xs, weight.select(2, i), bias if i == 0 else None, s[1:], (0, 0), d[1:], groups)
        out = y if out is None else out + y
    out = out.reshape((n, do) + out._shape[1:]).transpose(1, 2)
    return out if batched else out.squeeze(0)


_C3_DOC = ("3-D convolution (cross-correlation) of ``input`` (N, C_in, D, H, W) or (C_in, D, H, W) with "
           "``weight`` (C_out, C_in / groups, kd, kh, kw){pad}.")
conv3d = _document(defop("conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, "
                         "SymInt[3] padding=0, SymInt[3] dilation=1, SymInt groups=1) -> Tensor",
                         check=_check_conv(3), composite=_conv3d), _C3_DOC.format(pad=""))
conv3d_padding = _document(defop('conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, '
                                 'str padding="valid", SymInt[3] dilation=1, SymInt groups=1) -> Tensor',
                                 check=_check_conv(3), composite=_conv3d),
                           _C3_DOC.format(pad=', padding "valid" or "same"'))


# -- im2col / col2im -------------------------------------------------------------------------------------------------
def _check_block_args(kernel_size, dilation, padding, stride):
    for v, what in ((kernel_size, "kernel_size"), (dilation, "dilation"), (padding, "padding"), (stride, "stride")):
        if len(v) != 2:
            raise RuntimeError(f"It is expected {what} equals to 2, but got size {len(v)}")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: {kw}")
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {sh} stride_width: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {dh} dilation_width: "
                           f"{dw}")
    if ph < 0 or pw < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {ph} pad_width: {pw}")


def _blocks(size, k, d, p, s):
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _check_im2col(self, kernel_size, dilation, padding, stride):
    _check_block_args(kernel_size, dilation, padding, stride)
    shape = self._shape
    if not (self.dim() in (3, 4) and 0 not in shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(shape)}")
    outs = [_blocks(n, *a) for n, a in zip(shape[-2:], zip(kernel_size, dilation, padding, stride))]
    if outs[0] < 1 or outs[1] < 1:
        raise RuntimeError(f"Given input with spatial size ({shape[-2]}, {shape[-1]}), kernel_size=({kernel_size[0]}, "
                           f"{kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, "
                           f"{padding[1]}), calculated shape of the array of sliding blocks as ({outs[0]}, "
                           f"{outs[1]}), but its components must be at least one.")
    if not (self._dtype.is_floating_point or self._dtype is _dt.bool):  # PyTorch's CPU kernel takes bool too
        raise not_implemented("im2col_out_cpu", self._dtype)


def _im2col(self, kernel_size, dilation, padding, stride):
    batched = self.dim() == 4
    x = self if batched else self.unsqueeze(0)
    (ph, pw), (kh, kw) = padding, kernel_size
    if ph or pw:
        x = constant_pad(x, (pw, pw, ph, ph), 0)
    cols = _patches(x, (kh, kw), tuple(stride), tuple(dilation))  # N, C, K, Ho, Wo
    n, c, k, ho, wo = cols._shape
    out = cols.reshape(n, c * k, ho * wo)
    return out if batched else out.squeeze(0)


im2col = _document(defop("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) "
                         "-> Tensor", check=_check_im2col, composite=_im2col),
                   "The sliding blocks of (N, C, H, W) or (C, H, W) as columns (N, C * kh * kw, L) "
                   "(``nn.functional.unfold``).")


def _check_col2im(self, output_size, kernel_size, dilation, padding, stride):
    if len(output_size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(output_size)}")
    _check_block_args(kernel_size, dilation, padding, stride)
    shape = self._shape
    if not (self.dim() in (2, 3) and 0 not in shape[-2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(shape)}")
    k = kernel_size[0] * kernel_size[1]
    c = shape[-2]
    if c % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={c} and kernel_size=({kernel_size[0]}, {kernel_size[1]}).")
    bh, bw = (_blocks(n, *a) for n, a in zip(output_size, zip(kernel_size, dilation, padding, stride)))
    if bh * bw != shape[-1] or bh < 1 or bw < 1:
        raise RuntimeError(f"Given output_size=({output_size[0]}, {output_size[1]}), kernel_size=({kernel_size[0]}, "
                           f"{kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, "
                           f"{padding[1]}), stride=({stride[0]}, {stride[1]}), expected size of input's dimension 2 "
                           f"to match the calculated number of sliding blocks {bh} * {bw} = {bh * bw}, but got "
                           f"input.size(2)={shape[-1]}.")
    if not (self._dtype.is_floating_point or self._dtype is _dt.bool):  # PyTorch's CPU kernel takes bool too
        raise not_implemented("col2im_out_cpu", self._dtype)


def _col2im(self, output_size, kernel_size, dilation, padding, stride):
    """A transposed convolution, one group per channel, with one-hot weights: each block adds its
    values back where they came from."""
    batched = self.dim() == 3
    x = self if batched else self.unsqueeze(0)
    (kh, kw), (h, w) = kernel_size, output_size
    k = kh * kw
    n, ck, _ = x._shape
    c = ck // k
    bh, bw = (_blocks(size, *a) for size, a in zip(output_size, zip(kernel_size, dilation, padding, stride)))
    eye = tensor([[1.0 if i == j else 0.0 for j in range(k)] for i in range(k)], dtype=x._dtype, device=x._device)
    weight = eye.reshape(1, k, 1, kh, kw).expand(c, k, 1, kh, kw).reshape(ck, 1, kh, kw)
    out = conv_transpose2d(x.reshape(n, ck, bh, bw), weight, None, tuple(stride), (0, 0), (0, 0), c,
                           tuple(dilation))
    # the image is the full output less the padding on each side; what the last block does not reach is 0
    for dim, size, p in ((2, h, padding[0]), (3, w, padding[1])):
        kept = min(size, out._shape[dim] - p)
        out = out.narrow(dim, p, kept)
        if kept < size:
            out = constant_pad(out, (0, size - kept) if dim == 3 else (0, 0, 0, size - kept), 0)
    return out if batched else out.squeeze(0)


col2im = _document(defop("col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
                         "int[2] padding, int[2] stride) -> Tensor", check=_check_col2im, composite=_col2im),
                   "The sum of the sliding blocks (N, C * kh * kw, L) or (C * kh * kw, L) back into an image of "
                   "``output_size`` (``nn.functional.fold``).")


# -- pixel shuffle ---------------------------------------------------------------------------------------------------
def _check_pixel(name, what):
    def check(self, factor):
        if self.dim() < 3:
            raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {self.dim()} "
                               "dimension(s)")
        if factor <= 0:
            raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")
        c, h, w = self._shape[-3:]
        if name == "pixel_shuffle":
            if c % (factor * factor):
                raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                                   f"square of upscale_factor, but input.size(-3)={c} is not divisible by "
                                   f"{factor * factor}")
        elif h % factor:
            raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                               f"input.size(-2)={h} is not divisible by {factor}")
        elif w % factor:
            raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                               f"input.size(-1)={w} is not divisible by {factor}")
    return check


def _pixel_shuffle(self, upscale_factor):
    r = upscale_factor
    lead, (c, h, w) = self._shape[:-3], self._shape[-3:]
    m = len(lead)
    x = self.reshape(lead + (c // (r * r), r, r, h, w))
    x = x.permute(tuple(range(m)) + (m, m + 3, m + 1, m + 4, m + 2))
    return x.reshape(lead + (c // (r * r), h * r, w * r))


def _pixel_unshuffle(self, downscale_factor):
    r = downscale_factor
    lead, (c, h, w) = self._shape[:-3], self._shape[-3:]
    m = len(lead)
    x = self.reshape(lead + (c, h // r, r, w // r, r))
    x = x.permute(tuple(range(m)) + (m, m + 2, m + 4, m + 1, m + 3))
    return x.reshape(lead + (c * r * r, h // r, w // r))


pixel_shuffle = _document(defop("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor",
                                check=_check_pixel("pixel_shuffle", "upscale_factor"), composite=_pixel_shuffle),
                          "(*, C * r * r, H, W) to (*, C, H * r, W * r): each group of r * r channels becomes an "
                          "r x r block.")
pixel_unshuffle = _document(defop("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor",
                                  check=_check_pixel("pixel_unshuffle", "downscale_factor"),
                                  composite=_pixel_unshuffle),
                            "The inverse of pixel_shuffle: (*, C, H * r, W * r) to (*, C * r * r, H, W).")


# -- upsampling (nn.functional.interpolate) ----------------------------------------------------------------------
def _f32(v):
    """``v`` rounded to float32: PyTorch computes nearest-neighbour source indices in float."""
    return _struct.unpack("f", _struct.pack("f", v))[0]


def _up_sizes(input, nd, output_size, scale_factors):
    """The output's spatial sizes (floor of size * scale when only scales are given), checked."""
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    if output_size is not None and len(output_size) != nd:
        raise RuntimeError("Expected static_cast<int64_t>(output_size->size()) == spatial_dimensions to be true, "
                           "but got false.")
    if scale_factors is not None and len(scale_factors) != nd:
        raise RuntimeError("Expected static_cast<int64_t>(scale_factors->size()) == spatial_dimensions to be true, "
                           "but got false.")
    if input.dim() != nd + 2:
        raise RuntimeError(f"It is expected input_size equals to {nd + 2}, but got size {input.dim()}")
    sizes = input._shape[2:]
    outs = tuple(output_size) if output_size is not None else tuple(int(n * s) for n, s in zip(sizes, scale_factors))
    if any(n <= 0 for n in sizes) or any(o <= 0 for o in outs):
        names = "DHW"[3 - nd:]
        raise RuntimeError("Input and output sizes should be greater than 0, but got input ("
                           + ", ".join(f"{a}: {n}" for a, n in zip(names, sizes)) + ") output ("
                           + ", ".join(f"{a}: {o}" for a, o in zip(names, outs)) + ")")
    return outs


_UP_KERNEL = {"nearest": "upsample_nearest{nd}d", "nearest-exact": "_upsample_nearest_exact{nd}d",
              "linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d", "trilinear": "upsample_trilinear3d",
              "bicubic": "upsample_bicubic2d"}


def _check_upsample(nd, mode):
    def check(input, output_size, *rest):
        _up_sizes(input, nd, output_size, rest[-1])
        d = input._dtype
        ok = d.is_floating_point or (d is _dt.uint8 and mode in ("nearest", "nearest-exact"))
        if not ok:
            name = _UP_KERNEL[mode].format(nd=nd).lstrip("_")
            raise not_implemented(name + ("_channels_last" if nd == 2 else ""), d)
    return check


def _nearest_index(mode, n_in, n_out, scale):
    if mode == "nearest":
        if n_out == n_in:
            return list(range(n_out))
        if n_out == 2 * n_in:
            return [i >> 1 for i in range(n_out)]
    r = _f32(1.0 / scale) if scale is not None and scale > 0 else _f32(_f32(n_in) / n_out)
    half = 0.5 if mode == "nearest-exact" else 0.0
    return [min(int(math.floor(_f32(_f32(i + half) * r))), n_in - 1) for i in range(n_out)]


def _source(n_in, n_out, align_corners, scale, cubic):
    """PyTorch's area_pixel_compute_source_index for every output position."""
    if align_corners:
        r = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        return [r * i for i in range(n_out)]
    r = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
    src = [r * (i + 0.5) - 0.5 for i in range(n_out)]
    return src if cubic else [max(v, 0.0) for v in src]


def _cubic_weights(t):
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _taps(mode, n_in, n_out, align_corners, scale):
    """Per output position along one dim: the (source indices, weights) that mix into it."""
    if mode in ("nearest", "nearest-exact"):
        return [_nearest_index(mode, n_in, n_out, scale)], None
    if mode == "bicubic":
        idx, ws = [[] for _ in range(4)], [[] for _ in range(4)]
        for v in _source(n_in, n_out, align_corners, scale, True):
            i = math.floor(v)
            for k, w in enumerate(_cubic_weights(v - i)):
                idx[k].append(min(max(i - 1 + k, 0), n_in - 1))
                ws[k].append(w)
        return idx, ws
    lo, hi, w0, w1 = [], [], [], []
    for v in _source(n_in, n_out, align_corners, scale, False):
        i = int(v)
        lo.append(i)
        hi.append(i + 1 if i < n_in - 1 else i)
        w1.append(v - i)
        w0.append(1.0 - (v - i))
    return [lo, hi], [w0, w1]


def _upsample(nd, mode):
    def up(input, output_size, *rest):
        scales = rest[-1]
        align_corners = rest[0] if len(rest) == 2 else False
        outs = _up_sizes(input, nd, output_size, scales)
        x = input
        dev = input._device
        for i in range(nd):
            dim = 2 + i
            n_in = x._shape[dim]
            idx, ws = _taps(mode, n_in, outs[i], align_corners, None if scales is None else scales[i])
            picks = [x.index_select(dim, tensor(ix, dtype=_dt.int64, device=dev)) for ix in idx]
            if ws is None:
                x = picks[0]
                continue
            shape = (outs[i],) + (1,) * (nd - 1 - i)
            y = None
            for p, w in zip(picks, ws):
                term = p * tensor(w, dtype=x._dtype, device=dev).view(shape)
                y = term if y is None else y + term
            x = y
        return x
    return up


def _define_upsample(nd, mode):
    name = _UP_KERNEL[mode].format(nd=nd)
    align = "bool align_corners, " if mode not in ("nearest", "nearest-exact") else ""
    op = defop(f"{name}.vec(Tensor input, SymInt[]? output_size, {align}float[]? scale_factors) -> Tensor",
               check=_check_upsample(nd, mode), composite=_upsample(nd, mode))
    return _document(op, f"``interpolate(mode='{mode}')`` of an (N, C, *{nd} spatial dims) input to ``output_size`` "
                         "or to its sizes times ``scale_factors`` (floored; the scales then set the source "
                         "positions, as in PyTorch).")


UPSAMPLE = {(mode, nd): _define_upsample(nd, mode)
            for mode, nds in (("nearest", (1, 2, 3)), ("nearest-exact", (1, 2, 3)), ("linear", (1,)),
                              ("bilinear", (2,)), ("trilinear", (3,)), ("bicubic", (2,)))
            for nd in nds}
"""``{(mode, spatial dims): op entry}``: the upsampling operators of ``interpolate``."""


# -- adaptive max pooling --------------------------------------------------------------------------------------------
def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _check_adaptive_max(nd):
    name = f"adaptive_max_pool{nd}d"

    def check(self, output_size):
        shape = self._shape
        if nd == 1:
            if self.dim() not in (2, 3):
                raise RuntimeError(f"Expected 2 to 3 dimensions, but got {self.dim()}-dimensional tensor for argument "
                                   f"#1 'self' (while checking arguments for {name})")
            if len(output_size) != 1:
                raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got {len(output_size)})")
        else:
            if len(output_size) != 2:
                raise RuntimeError(f"{name}(): internal error: output_size.size() must be 2")
            if self.dim() not in (3, 4):
                raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got: {_sizes(shape)}")
        for i in range(1, self.dim()):
            if shape[i] == 0:
                raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                                   f"input has sizes {_sizes(shape)} with dimension {i} being empty")
        for o in output_size:
            if o < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {o}: "
                                   f"{_sizes(shape[:-nd] + tuple(output_size))}")
        if not self._dtype.is_floating_point:
            raise not_implemented("adaptive_max_pool2d", self._dtype)
    return check


def _windows(n, o):
    """Per output position, PyTorch's adaptive window [floor(i*n/o), ceil((i+1)*n/o)), padded to the longest by
    repeating its last index (a repeat never changes the first maximum)."""
    spans = [(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]
    width = max((e - s for s, e in spans), default=1)
    return [[min(s + j, e - 1) for j in range(width)] for s, e in spans], width


def _adaptive_max(nd):
    def pool(self, output_size):
        x = self if nd == 2 else self.unsqueeze(-2)
        outs = tuple(output_size) if nd == 2 else (1,) + tuple(output_size)
        h, w = x._shape[-2:]
        (rows, mh), (cols, mw) = _windows(h, outs[0]), _windows(w, outs[1])
        dev = x._device
        lead = x._shape[:-2]
        if 0 in outs:
            empty = x.narrow(-2, 0, 0).narrow(-1, 0, 0).reshape(lead + outs)
            out, idx = empty, zeros(lead + outs, dtype=_dt.int64, device=dev)
        else:
            v = x.index_select(-2, tensor([r for win in rows for r in win], dtype=_dt.int64, device=dev))
            v = v.index_select(-1, tensor([c for win in cols for c in win], dtype=_dt.int64, device=dev))
            m = len(lead)
            v = v.reshape(lead + (outs[0], mh, outs[1], mw)).permute(
                tuple(range(m)) + (m, m + 2, m + 1, m + 3)).reshape(lead + outs + (mh * mw,))
            # the first maximum of each window (NaN wins), and the gradient goes to it alone
            arg = v.argmax(-1, keepdim=True)
            out = v.gather(-1, arg).squeeze(-1)
            flat = tensor([[[r * w + c for r in rwin for c in cwin] for cwin in cols] for rwin in rows],
                          dtype=_dt.int64, device=dev)
            idx = flat.expand(lead + flat._shape).gather(-1, arg).squeeze(-1)
        if nd == 1:
            out, idx = out.squeeze(-2), idx.squeeze(-2)
        return out, idx
    return pool


adaptive_max_pool1d = _document(defop("adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)",
                                      check=_check_adaptive_max(1), composite=_adaptive_max(1)),
                                "Max over PyTorch's adaptive windows of the last dim of (N, C, L) or (C, L), and "
                                "each maximum's position in its row.")
adaptive_max_pool2d = _document(defop("adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
                                      check=_check_adaptive_max(2), composite=_adaptive_max(2)),
                                "Max over PyTorch's adaptive windows of (N, C, H, W) or (C, H, W), and each "
                                "maximum's flat position ``h * W + w`` in its plane.")


# -- affine_grid / grid_sample ------------------------------------------------------------------------------------------
def _check_affine_grid(theta, size, align_corners):
    k = len(size) - 1  # 3 for 2-D transforms, 4 for 3-D
    if theta._shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {k}] but got: "
                           f"[{theta._shape[0]}, {k}].")


def _base_coords(n, align_corners, like):
    """PyTorch's linspace_from_neg_one: the normalized centres (or corners) of ``n`` pixels."""
    if n <= 1:
        return zeros((n,), dtype=like._dtype, device=like._device)
    step = 2.0 / (n - 1)
    vals = [-1.0 + step * i for i in range(n)]
    if not align_corners:
        vals = [v * (n - 1) / n for v in vals]
    return tensor(vals, dtype=like._dtype, device=like._device)


def _affine_grid(theta, size, align_corners):
    spatial = tuple(size[2:])
    nd = len(spatial)
    coords = [_base_coords(n, align_corners, theta) for n in spatial]  # D, H, W (the grid's last is x = W)
    parts = []
    for i, c in enumerate(reversed(coords)):  # x, y[, z]
        dim = nd - 1 - i
        shape = [1] * nd
        shape[dim] = spatial[dim]
        parts.append(c.view(tuple(shape)).expand(spatial))
    parts.append(ones(spatial, dtype=theta._dtype, device=theta._device))
    base = stack(parts, -1).reshape(1, -1, nd + 1)
    grid = base.matmul(theta.transpose(1, 2))  # (N, prod(spatial), nd)
    return grid.view((size[0],) + spatial + (nd,))


affine_grid_generator = _document(
    defop("affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor",
          check=_check_affine_grid, composite=_affine_grid),
    "The sampling grid (N, *spatial, 2 or 3) of the affine maps ``theta`` (N, 2, 3) or (N, 3, 4) for an output "
    "of ``size`` (N, C, *spatial); ``nn.functional.affine_grid``.")


def grid_sampler_check(nd, kernel, bicubic_error):
    """The argument checks of grid_sampler_2d (``nd`` 2) and grid_sampler_3d (``nd`` 3), in PyTorch's order
    and words: ``kernel`` names the CPU kernel in the dtype error, ``bicubic_error()`` is raised for mode 2."""
    def check(input, grid, interpolation_mode, padding_mode, align_corners):
        if input._shape[:1] != grid._shape[:1] or input.dim() == 0:
            raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input "
                               f"with sizes {_sizes(input._shape)} and grid with sizes {_sizes(grid._shape)}")
        if grid._shape[-1] != nd:
            raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, but got grid "
                               f"with sizes {_sizes(grid._shape)}")
        if input.dim() != nd + 2 or grid.dim() != nd + 2:
            raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number of dimensions, "
                               f"but got input with sizes {_sizes(input._shape)} and grid with sizes "
                               f"{_sizes(grid._shape)}")
        for i in range(2, nd + 2):
            if input._shape[i] == 0:
                raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                                   f"has sizes {_sizes(input._shape)} with dimension {i} being empty")
        if not input._dtype.is_floating_point:
            raise not_implemented(kernel, input._dtype)
        if grid._dtype is not input._dtype:
            raise RuntimeError(f"expected scalar type {_pt(input._dtype)} but found {_pt(grid._dtype)}")
        if interpolation_mode == 2:
            raise bicubic_error()
    return check


_check_grid_sampler = grid_sampler_check(
    2, "grid_sampler_2d_cpu_kernel_impl",
    lambda: NotImplementedError("grid_sample(mode='bicubic') is not supported: use 'bilinear' or 'nearest'"))


def _pt(d):
    return _pt_name(d)


def _reflect(x, low2, high2):
    """PyTorch's reflect_coordinates over [low2 / 2, high2 / 2] (elementwise on a tensor)."""
    if low2 == high2:
        return zeros_like(x)
    lo, span = low2 / 2, (high2 - low2) / 2
    x = (x - lo).abs()
    extra = x.fmod(span)
    flips = (x / span).floor()
    return _where(flips.fmod(2) == 0, extra + lo, span - extra + lo)


def _source_coord(coord, size, padding_mode, align_corners):
    c = ((coord + 1) / 2) * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
    if padding_mode == 1:  # border
        c = c.clamp(0, size - 1)
    elif padding_mode == 2:  # reflection
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = c.clamp(0, size - 1)
    return c


def _grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    n, c, h, w = input._shape
    ho, wo = grid._shape[1:3]
    ix = _source_coord(grid.select(-1, 0), w, padding_mode, align_corners).reshape(n, ho * wo)
    iy = _source_coord(grid.select(-1, 1), h, padding_mode, align_corners).reshape(n, ho * wo)
    flat = input.reshape(n, c, h * w)

    def pick(xi, yi):
        """The input at integer (x, y) (N, L) per channel, 0 where outside."""
        valid = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
        pos = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).long()
        vals = flat.gather(2, pos.unsqueeze(1).expand(n, c, ho * wo))
        return _where(valid.unsqueeze(1), vals, 0.0)

    if interpolation_mode == 1:  # nearest: half to even, as nearbyint
        out = pick(ix.detach().round(), iy.detach().round())
        out = with_zero_grad(out, grid)  # as PyTorch: the grid gets a zero gradient (never NaN, whatever its values)
    else:
        x0, y0 = ix.detach().floor(), iy.detach().floor()
        wx1, wy1 = ix - x0, iy - y0
        wx0, wy0 = 1 - wx1, 1 - wy1
        out = None
        for xi, yi, wt in ((x0, y0, wx0 * wy0), (x0 + 1, y0, wx1 * wy0), (x0, y0 + 1, wx0 * wy1),
                           (x0 + 1, y0 + 1, wx1 * wy1)):
            term = pick(xi, yi) * wt.unsqueeze(1)
            out = term if out is None else out + term
    return out.view(n, c, ho, wo)


grid_sampler_2d = _document(
    defop("grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) "
          "-> Tensor", check=_check_grid_sampler, composite=_grid_sampler_2d),
    "``input`` (N, C, H, W) sampled at ``grid`` (N, Ho, Wo, 2) of normalized (x, y) in [-1, 1]: mode 0 bilinear, "
    "1 nearest; padding 0 zeros, 1 border, 2 reflection (``nn.functional.grid_sample``).")


# -- 3-d pooling -------------------------------------------------------------------------------------------------------
def _pool3d_args(name, kernel_size, stride, padding, dilation):
    avg = name == "avg_pool3d"
    say = {"kernel_size": "must be a single int" if avg else "must either be a single int",
           "stride": "must be omitted, a single number" if avg else "must either be omitted, a single int",
           "padding": "must be a single int" if avg else "must either be a single int",
           "dilation": "must be either a single int"}

    def tup(what, v):
        t = _tup(v, 3)
        if len(t) != 3:
            raise RuntimeError(f"{name}: {what} {say[what]}, or a tuple of three ints")
        return t
    k = tup("kernel_size", kernel_size)
    s = k if stride is None or (stride.__class__ is not int and len(stride) == 0) else tup("stride", stride)
    p = tup("padding", padding)
    d = tup("dilation", dilation)
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    if any(v < 0 for v in p):
        raise RuntimeError(f"pad must be non-negative, but got pad: {next(v for v in p if v < 0)}")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} kH: {k[1]} kW: {k[2]}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} dW: {s[2]}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} dilationH: {d[1]} "
                           f"dilationW: {d[2]}")
    return k, s, p, d


def _pool3d_geometry(name, input, k, s, p, d, ceil_mode):
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    shape = input._shape
    # PyTorch checks the padding before the input's sizes
    for pi, ki, di in zip(p, k, d):
        if pi > (di * (ki - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pi}, "
                               f"kernel_size={ki} and dilation={di}")
    first = input.dim() - 4
    for i in range(first, input.dim()):
        if shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input's non-batch dimensions to have positive length, but input "
                               f"has a shape of {_sizes(shape)} and non-batch dimension {i - first} has length zero!")
    sizes = shape[-3:]
    if name == "avg_pool3d" and any(n < ki for n, ki in zip(sizes, k)):
        raise RuntimeError(f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    outs = tuple(_pool_out(n, ki, si, pi, di, ceil_mode) for n, ki, si, pi, di in zip(sizes, k, s, p, d))
    if any(o < 1 for o in outs):
        c = shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, sizes))}). Calculated output size: "
                           f"({c}x{'x'.join(map(str, outs))}). Output size is too small")
    return sizes, outs


def _check_max_pool3d(with_indices):
    def check(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        k, s, p, d = _pool3d_args("max_pool3d", kernel_size, stride, padding, dilation)
        _pool3d_geometry("max_pool3d_with_indices_out_cpu_template", self, k, s, p, d, ceil_mode)
        if self._dtype is _dt.bool:
            raise not_implemented("max_pool3d", self._dtype)
    return check


def _windows3d(input, k, s, p, d, ceil_mode, fill):
    """(N, C, K, Do, Ho, Wo): every window of the padded 5-D input, one strided view per kernel offset."""
    batched = input.dim() == 5
    x = input if batched else input.unsqueeze(0)
    sizes = x._shape[2:]
    outs = tuple(_pool_out(n, ki, si, pi, di, ceil_mode) for n, ki, si, pi, di in zip(sizes, k, s, p, d))
    hi = [max((o - 1) * si + di * (ki - 1) + 1 - n - pi, 0) for o, si, di, ki, n, pi in zip(outs, s, d, k, sizes, p)]
    if any(p) or any(hi):
        x = constant_pad(x, (p[2], hi[2], p[1], hi[1], p[0], hi[0]), fill)
    views = []
    for a in range(k[0]):
        xa = x[:, :, a * d[0]:a * d[0] + s[0] * (outs[0] - 1) + 1:s[0]]
        for b in range(k[1]):
            xb = xa[:, :, :, b * d[1]:b * d[1] + s[1] * (outs[1] - 1) + 1:s[1]]
            for c in range(k[2]):
                views.append(xb[..., c * d[2]:c * d[2] + s[2] * (outs[2] - 1) + 1:s[2]])
    return stack(views, 2), batched, sizes, outs


def _max_pool3d(return_indices):
    def pool(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        k, s, p, d = _pool3d_args("max_pool3d", kernel_size, stride, padding, dilation)
        fill = -math.inf if self._dtype.is_floating_point else _min_of(self._dtype)
        cols, batched, sizes, outs = _windows3d(self, k, s, p, d, ceil_mode, fill)
        idx = cols.argmax(2, keepdim=True)
        out = cols.gather(2, idx).squeeze(2)
        out = out if batched else out.squeeze(0)
        if not return_indices:
            return out
        idx = idx.squeeze(2)
        dev = self._device
        pos = []
        for i, (o, si, pi, di) in enumerate(zip(outs, s, p, d)):
            offset = (idx // (k[1] * k[2])) if i == 0 else (idx // k[2]) % k[1] if i == 1 else idx % k[2]
            shape = [1, 1, 1]
            shape[i] = o
            pos.append((arange(o, device=dev) * si - pi).view(tuple(shape)) + offset * di)
        flat = (pos[0] * sizes[1] + pos[1]) * sizes[2] + pos[2]
        return out, flat if batched else flat.squeeze(0)
    return pool


_MAX3_ARGS = ("Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, "
              "bool ceil_mode=False")
max_pool3d = _document(defop(f"max_pool3d({_MAX3_ARGS}) -> Tensor", check=_check_max_pool3d(False),
                             composite=_max_pool3d(False)),
                       "Max over sliding windows of the last 3 dims of (N, C, D, H, W) or (C, D, H, W); ``stride`` "
                       "defaults to ``kernel_size``; padding counts as -inf.")
max_pool3d_with_indices = _document(defop(f"max_pool3d_with_indices({_MAX3_ARGS}) -> (Tensor, Tensor)",
                                          check=_check_max_pool3d(True), composite=_max_pool3d(True)),
                                    "max_pool3d and each maximum's flat position ``(t * H + h) * W + w``.")


def _check_avg_pool3d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                      divisor_override=None):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, d = _pool3d_args("avg_pool3d", kernel_size, stride, padding, 1)
    _pool3d_geometry("avg_pool3d", self, k, s, p, d, ceil_mode)
    if self._dtype is _dt.bool or self._dtype is _dt.float16:
        raise not_implemented("avg_pool3d_out_frame", self._dtype)


def _avg_pool3d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                divisor_override=None):
    k, s, p, d = _pool3d_args("avg_pool3d", kernel_size, stride, padding, 1)
    cols, batched, sizes, outs = _windows3d(self, k, s, p, d, ceil_mode, 0)
    sums = cols.sum(2)
    mean = (lambda a, b: a / b) if sums._dtype.is_floating_point else (lambda a, b: a.div(b, rounding_mode="trunc"))
    if divisor_override is not None:
        out = mean(sums, divisor_override)
    else:
        counts = []
        for o, ki, si, pi, n in zip(outs, k, s, p, sizes):
            row = []
            for i in range(o):
                start = i * si - pi
                end = min(start + ki, n + pi)
                row.append(end - start if count_include_pad else min(end, n) - max(start, 0))
            counts.append(row)
        div = tensor([[[a * b * c for c in counts[2]] for b in counts[1]] for a in counts[0]], dtype=sums._dtype,
                     device=sums._device)
        out = mean(sums, div)
    return out if batched else out.squeeze(0)


avg_pool3d = _document(defop("avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
                             "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
                             check=_check_avg_pool3d, composite=_avg_pool3d),
                       "Mean over sliding windows of the last 3 dims of (N, C, D, H, W) or (C, D, H, W), with "
                       "avg_pool2d's rules for padding, ``ceil_mode`` and ``divisor_override``.")
