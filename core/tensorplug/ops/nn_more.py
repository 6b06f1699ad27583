"""More nn operators with PyTorch's schemas: ``channel_shuffle``, ``max_unpool2d`` / ``max_unpool3d``,
3-d adaptive pooling, ``conv_transpose3d``, the ``native_*`` normalizations that return their statistics
(``native_batch_norm``, ``native_group_norm``), ``native_dropout_backward``,
``max_pool2d_with_indices_backward`` and ``grid_sampler_3d``.

Every one is a CompositeImplicitAutograd kernel over existing ops (reshapes, ``scatter``, ``gather``,
``index_select``, matmul, ``conv3d``), so autograd, vmap and every backend get it through its pieces.
Checks run once, before dispatch, with PyTorch's CPU errors.
"""

from __future__ import annotations

import math

import warnings

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._common import document as _document
from ._lib import POINTWISE, attach, defop, public
from .comparison import where_fn as _where, with_zero_grad
from .complex_ops import complex as _complex, view_as_real
from .factories import arange, empty, ones, tensor, zeros
from .fft_ops import _fft_c2c, _fft_c2r, _fft_r2c
from .joining import cat
from .nn_conv_extra import (_check_conv_transpose, _dilate, _f32, _source_coord, _sizes, col2im, conv3d,
                            grid_sampler_2d, grid_sampler_check)
from .nn_ops import _tup, constant_pad, native_layer_norm
from .padding import pad as _pad
from .pointwise import not_implemented
from .promotion import _pt_name
from .reductions import var_mean_fn as _var_mean

__all__ = ["channel_shuffle", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
           "conv_transpose3d", "native_batch_norm", "native_group_norm", "native_dropout_backward",
           "max_pool2d_with_indices_backward", "grid_sampler_3d", "fractional_max_pool2d",
           "fractional_max_pool3d", "stft", "istft"]


# -- channel_shuffle ------------------------------------------------------------------------------------------
def _check_channel_shuffle(self, groups):
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if self.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{_sizes(self._shape)}")
    c = self._shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")


def _channel_shuffle(self, groups):
    n, c = self._shape[:2]
    rest = self._shape[2:]
    return self.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape(self._shape)


channel_shuffle = public("channel_shuffle", _document(
    defop("channel_shuffle(Tensor self, SymInt groups) -> Tensor", check=_check_channel_shuffle,
          composite=_channel_shuffle),
    "(N, C, *) with its channels, seen as (groups, C / groups), transposed: channel ``g * (C / groups) + k`` "
    "moves to ``k * groups + g``."))


# -- max_unpool -------------------------------------------------------------------------------------------------
def _check_unpool(nd, self, indices, output_size):
    if indices._dtype is not _dt.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_pt_name(indices._dtype)}")
    if len(output_size) != nd:
        raise RuntimeError(f"There should be exactly {nd} elements (depth, height, width) in output_size, but got "
                           f"{len(output_size)} elements." if nd == 3 else
                           f"There should be exactly two elements (height, width) in output_size, but got "
                           f"{len(output_size)} elements.")
    if self.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor "
                           f"with {self.dim()} dimensions.")
    if indices._shape != self._shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({_sizes(self._shape)}) "
                           f"but got indices tensor with shape: {_sizes(indices._shape)}")
    for i in range(1, self.dim()):
        if self._shape[i] <= 0:
            raise RuntimeError(f"max_unpooling{nd}d(): Expected input to have non-zero size for non-batch dimensions, "
                               f"but got {_sizes(self._shape)} with dimension {i} being empty.")
    if not self._dtype.is_floating_point:
        raise not_implemented(f"max_unpool{nd}d", self._dtype)
    plane = math.prod(output_size)
    if indices.numel() and indices.__class__ is Tensor:  # (a transform's wrapper: scatter checks the range)
        lo, hi = int(indices.min().item()), int(indices.max().item())
        if lo < 0 or hi >= plane:
            bad = lo if lo < 0 else hi
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(map(str, output_size))})")


def _unpool(nd, self, indices, output_size):
    """Each value written at its flat index of an (N, C, prod(output_size)) zero tensor (the last write wins)."""
    lead = self._shape[:self.dim() - nd]
    m = math.prod(self._shape[self.dim() - nd:])
    flat_in = self.reshape(lead + (m,))
    out = zeros(lead + (math.prod(output_size),), dtype=self._dtype, device=self._device)
    out = out.scatter(-1, indices.reshape(lead + (m,)), flat_in)
    return out.reshape(lead + tuple(output_size))


max_unpool2d = _document(
    defop("max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor",
          check=lambda self, indices, output_size: _check_unpool(2, self, indices, output_size),
          composite=lambda self, indices, output_size: _unpool(2, self, indices, output_size)),
    "The partial inverse of max_pool2d: (N, C, H, W) or (C, H, W) values written at their flat indices "
    "``h * W_out + w`` of a zero (N, C, *output_size) plane.")


def _check_unpool3d(self, indices, output_size, stride, padding):
    _check_unpool(3, self, indices, output_size)
    if len(stride) != 3:
        raise RuntimeError(f"There should be exactly three elements (depth, height, width) in stride, but got: "
                           f"{len(stride)} elements.")
    if len(padding) != 3:
        raise RuntimeError(f"There should be exactly three elements (depth, height, width) in padding, but got: "
                           f"{len(padding)} elements.")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")


max_unpool3d = _document(
    defop("max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, int[3] padding) -> Tensor",
          check=_check_unpool3d,
          composite=lambda self, indices, output_size, stride, padding: _unpool(3, self, indices, output_size)),
    "The partial inverse of max_pool3d: values written at their flat indices ``(t * H + h) * W + w`` of a zero "
    "(N, C, *output_size) volume.")


# -- 3-d adaptive pooling -------------------------------------------------------------------------------------
def _check_adaptive3d(name, kernel, self, output_size):
    if len(output_size) != 3:
        raise RuntimeError(f"{name}: output_size must be 3" if name == "adaptive_avg_pool3d" else
                           f"{name}(): internal error: output_size.size() must be 3")
    if self.dim() not in (4, 5):
        raise RuntimeError(f"{name}(): Expected 4D or 5D tensor, but got{':' if 'max' in name else ''} "
                           f"{_sizes(self._shape)}")
    for i in range(1, self.dim()):
        if self._shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {_sizes(self._shape)} with dimension {i} being empty")
    if any(o < 0 for o in output_size):
        if "max" in name:
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{next(o for o in output_size if o < 0)}: "
                               f"{_sizes(self._shape[:-3] + tuple(output_size))}")
        a, b, c = output_size  # (PyTorch's message puts no space before the last)
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{a}, {b},{c}}}")
    if not self._dtype.is_floating_point:
        raise not_implemented(kernel, self._dtype)


def _span(i, n, o):
    return i * n // o, -(-(i + 1) * n // o)


def _adaptive_matrix(n, o, like):
    """(o, n) averaging matrix: row i averages PyTorch's window [floor(i*n/o), ceil((i+1)*n/o))."""
    rows = []
    for r in range(o):
        s, e = _span(r, n, o)
        rows.append([1.0 / (e - s) if s <= j < e else 0.0 for j in range(n)])
    return tensor(rows, dtype=like._dtype, device=like._device)


def adaptive_mean(input, output_size):
    """Mean over PyTorch's adaptive windows of the last ``len(output_size)`` dims (the adaptive average pools
    of every dimensionality): a reshape and a mean for equal windows, else a product with the averaging matrix."""
    nd = len(output_size)
    x = input
    for i, o in enumerate(output_size):
        dim = x.dim() - nd + i
        n = x._shape[dim]
        if n == o:
            continue
        if o == 0:
            x = x.narrow(dim, 0, 0)
        elif n % o == 0:
            x = x.unflatten(dim, (o, n // o)).mean(dim + 1)
        else:
            x = x.movedim(dim, -1).matmul(_adaptive_matrix(n, o, x).t()).movedim(-1, dim)
    return x if x is not input else input.clone()


adaptive_avg_pool3d = _document(
    defop("adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
          check=lambda self, output_size: _check_adaptive3d("adaptive_avg_pool3d", "adaptive_avg_pool3d_cpu", self,
                                                            output_size),
          composite=adaptive_mean),
    "Mean over PyTorch's adaptive windows [floor(i*n/o), ceil((i+1)*n/o)) of the last 3 dims of (N, C, D, H, W) "
    "or (C, D, H, W).")


def _windows(n, o):
    spans = [_span(i, n, o) for i in range(o)]
    width = max((e - s for s, e in spans), default=1)
    return [[min(s + j, e - 1) for j in range(width)] for s, e in spans], width


def _adaptive_max3d(self, output_size):
    outs = tuple(output_size)
    lead = self._shape[:-3]
    sizes = self._shape[-3:]
    dev = self._device
    if 0 in outs:
        return (self.narrow(-1, 0, 0).reshape(lead + (0,)).reshape(lead + outs) if self.numel() else
                zeros(lead + outs, dtype=self._dtype, device=dev)), zeros(lead + outs, dtype=_dt.int64, device=dev)
    wins = [_windows(n, o) for n, o in zip(sizes, outs)]
    v = self
    for i, (idx, _) in enumerate(wins):
        v = v.index_select(v.dim() - 3 + i, tensor([j for w in idx for j in w], dtype=_dt.int64, device=dev))
    (_, wd), (_, wh), (_, ww) = wins
    m = len(lead)
    v = v.reshape(lead + (outs[0], wd, outs[1], wh, outs[2], ww)).permute(
        tuple(range(m)) + (m, m + 2, m + 4, m + 1, m + 3, m + 5)).reshape(lead + outs + (wd * wh * ww,))
    arg = v.argmax(-1, keepdim=True)  # the first maximum of each window (NaN wins)
    out = v.gather(-1, arg).squeeze(-1)
    h, w = sizes[1], sizes[2]
    (dwin, _), (hwin, _), (wwin, _) = wins
    flat = tensor([[[[(a * h + b) * w + c for a in dw for b in hw for c in cw] for cw in wwin] for hw in hwin]
                   for dw in dwin], dtype=_dt.int64, device=dev)
    idx = flat.expand(lead + flat._shape).gather(-1, arg).squeeze(-1)
    return out, idx


adaptive_max_pool3d = _document(
    defop("adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)",
          check=lambda self, output_size: _check_adaptive3d("adaptive_max_pool3d", "adaptive_max_pool3d_cpu", self,
                                                            output_size),
          composite=_adaptive_max3d),
    "Max over PyTorch's adaptive windows of the last 3 dims of (N, C, D, H, W) or (C, D, H, W), and each "
    "maximum's flat position ``(t * H + h) * W + w`` in its volume.")


# -- conv_transpose3d ---------------------------------------------------------------------------------------------
def _conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """A stride-1 conv3d of the zero-dilated, padded input with the flipped, channel-swapped weight."""
    s, p, op, d = (_tup(v, 3) for v in (stride, padding, output_padding, dilation))
    batched = input.dim() == 5
    x = input if batched else input.unsqueeze(0)
    cin, cog = weight._shape[:2]
    k = weight._shape[2:]
    for i in range(3):
        x = _dilate(x, 2 + i, s[i])
    lo = [di * (ki - 1) - pi for di, ki, pi in zip(d, k, p)]
    pads = (lo[2], lo[2] + op[2], lo[1], lo[1] + op[1], lo[0], lo[0] + op[0])
    if any(v < 0 for v in pads):  # padding beyond the kernel's reach: pad what is needed, then crop
        x = constant_pad(x, tuple(max(v, 0) for v in pads), 0)
        for i, (a, b) in enumerate(((pads[4], pads[5]), (pads[2], pads[3]), (pads[0], pads[1]))):
            cut_lo, cut_hi = max(-a, 0), max(-b, 0)
            if cut_lo or cut_hi:
                x = x.narrow(2 + i, cut_lo, x._shape[2 + i] - cut_lo - cut_hi)
    elif any(pads):
        x = constant_pad(x, pads, 0)
    w = weight.reshape((groups, cin // groups, cog) + k).transpose(1, 2).reshape((groups * cog, cin // groups) + k)
    out = conv3d(x, w.flip((2, 3, 4)), bias, (1, 1, 1), (0, 0, 0), tuple(d), groups)
    return out if batched else out.squeeze(0)


_check_ct_shared = _check_conv_transpose(3)


def _check_conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """conv_transpose2d's checks, with PyTorch's 3-d wording for the weight's groups, the output padding and the
    output size."""
    if weight.dim() == 5 and 0 < groups and weight._shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {_sizes(weight._shape)} instead")
    try:
        _check_ct_shared(input, weight, bias, stride, padding, 0, groups, dilation)
    except RuntimeError as e:
        if not str(e).startswith("conv_transpose3d: the calculated output size"):
            raise
    op = _tup(output_padding, 3)
    if len(op) != 3:
        raise RuntimeError(f"expected output_padding to be a single integer value or a list of 3 values to match "
                           f"the convolution dimensions, but got output_padding={list(op)}")
    if any(v < 0 for v in op):
        raise RuntimeError("negative output_padding is not supported")
    s, p, d = _tup(stride, 3), _tup(padding, 3), _tup(dilation, 3)
    if any(o >= si and o >= di for o, si, di in zip(op, s, d)):
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                           + " ".join(f"output_padding_{a}: {v}" for a, v in zip(("depth", "height", "width"), op))
                           + " " + " ".join(f"stride_{a}: {v}" for a, v in zip(("depth", "height", "width"), s))
                           + " " + " ".join(f"dilation_{a}: {v}" for a, v in zip(("depth", "height", "width"), d)))
    sizes = input._shape[-3:]
    outs = [(n - 1) * si - 2 * pi + di * (k - 1) + oi + 1
            for n, si, pi, di, k, oi in zip(sizes, s, p, d, weight._shape[2:], op)]
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, sizes))}). Calculated output size "
                           f"per channel: ({' x '.join(map(str, outs))}). Output size is too small")


conv_transpose3d = _document(
    defop("conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, "
          "SymInt[3] padding=0, SymInt[3] output_padding=0, SymInt groups=1, SymInt[3] dilation=1) -> Tensor",
          check=_check_conv_transpose3d, composite=_conv_transpose3d),
    "3-D transposed convolution (the gradient of conv3d with respect to its input) of ``input`` "
    "(N, C_in, D, H, W) or (C_in, D, H, W) with ``weight`` (C_in, C_out / groups, kd, kh, kw).")


# -- native normalizations ----------------------------------------------------------------------------------------
def _check_native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
                         f"{max(input.dim(), 1) - 1}], but got 1)")
    c = input._shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    if input.numel() == 0:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if not input._dtype.is_floating_point:
        raise not_implemented("batch_norm_cpu", input._dtype)


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    c = input._shape[1]
    shape = (c,) + (1,) * (input.dim() - 2)
    if training:
        dims = (0,) + tuple(range(2, input.dim()))
        x = input.float() if input._dtype in (_dt.float16, _dt.bfloat16) else input
        var, mean = _var_mean(x, dims, correction=0)
        invstd = (var + eps).rsqrt()
        if running_mean is not None:
            n = input.numel() // c
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach().to(running_mean._dtype) * momentum)
                unbiased = var.detach() * (n / (n - 1)) if n > 1 else var.detach() * math.inf
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var._dtype) * momentum)
        # PyTorch's saved statistics are not differentiable results
        save_mean, save_invstd = mean.detach().to(input._dtype), invstd.detach().to(input._dtype)
    else:
        mean, invstd = running_mean, (running_var + eps).rsqrt()
        save_mean = empty((0,), dtype=running_mean._dtype, device=input._device)
        save_invstd = empty((0,), dtype=running_var._dtype, device=input._device)
    scale = invstd if weight is None else invstd * weight
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias
    out = input * scale.to(input._dtype).view(shape) + shift.to(input._dtype).view(shape)
    return out, save_mean, save_invstd


native_batch_norm = public("native_batch_norm", _document(
    defop("native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
          "bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", check=_check_native_batch_norm,
          composite=_native_batch_norm),
    "batch_norm returning (output, the batch's per-channel mean, 1 / sqrt(var + eps)) when ``training`` (and "
    "updating the running statistics), (output, empty, empty) otherwise."))


def _check_native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    if group <= 0 or C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input._shape)} and num_groups={group}")
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements, but got {input.numel()}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, but "
                               f"got {name} of shape {list(t._shape)} and input of shape {list(input._shape)}")
    if not input._dtype.is_floating_point:
        raise not_implemented("group_norm_cpu", input._dtype)


def _native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    x = input.reshape(N, group, (C // group) * HxW)
    if x._shape[-1]:
        var, mean = _var_mean(x, (-1,), correction=0, keepdim=True)
    else:
        var = mean = x.sum(-1, keepdim=True) / 0.0
    rstd = (var + eps).rsqrt()
    out = ((x - mean) * rstd).reshape(input._shape)
    shape = (C,) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


native_group_norm = public("native_group_norm", _document(
    defop("native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, "
          "float eps) -> (Tensor, Tensor, Tensor)", check=_check_native_group_norm, composite=_native_group_norm),
    "group_norm of (N, C, *) returning (output, the per-group mean (N, group), 1 / sqrt(var + eps) (N, group))."))


# -- backward ops PyTorch has in torch.ops.aten only --------------------------------------------------------------
def _native_dropout_backward(grad_output, mask, scale):
    return grad_output * mask * scale


native_dropout_backward = _document(
    defop("native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor",
          composite=_native_dropout_backward, tags=POINTWISE),
    "dropout's input gradient: ``grad_output * mask * scale`` (PyTorch's ``aten.native_dropout_backward``).")


def _check_pool_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    if indices._shape != grad_output._shape:
        raise RuntimeError(f"Expected indices of the same shape as grad_output {_sizes(grad_output._shape)}, got "
                           f"{_sizes(indices._shape)}")
    if self.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")


def _max_pool2d_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    lead = self._shape[:-2]
    plane = self._shape[-2] * self._shape[-1]
    m = grad_output._shape[-2] * grad_output._shape[-1]
    g = zeros(lead + (plane,), dtype=grad_output._dtype, device=grad_output._device)
    g = g.scatter_add(-1, indices.reshape(lead + (m,)), grad_output.reshape(lead + (m,))).reshape(self._shape)
    return with_zero_grad(g, self)  # as PyTorch: differentiable in ``self`` with a zero gradient


max_pool2d_with_indices_backward = _document(
    defop("max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
          "int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor",
          check=_check_pool_backward, composite=_max_pool2d_backward),
    "max_pool2d's input gradient: each output gradient added at its maximum's flat index in the input's plane "
    "(PyTorch's ``aten.max_pool2d_with_indices_backward``).")


# -- grid_sampler_3d --------------------------------------------------------------------------------------------------
_check_grid_sampler_3d = grid_sampler_check(
    3, "grid_sampler3d_cpu", lambda: RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input"))


def _grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    n, c, d, h, w = input._shape
    od, oh, ow = grid._shape[1:4]
    L = od * oh * ow
    ix = _source_coord(grid.select(-1, 0), w, padding_mode, align_corners).reshape(n, L)
    iy = _source_coord(grid.select(-1, 1), h, padding_mode, align_corners).reshape(n, L)
    iz = _source_coord(grid.select(-1, 2), d, padding_mode, align_corners).reshape(n, L)
    flat = input.reshape(n, c, d * h * w)

    def pick(xi, yi, zi):
        valid = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1) & (zi >= 0) & (zi <= d - 1)
        pos = ((zi.clamp(0, d - 1) * h + yi.clamp(0, h - 1)) * w + xi.clamp(0, w - 1)).long()
        vals = flat.gather(2, pos.unsqueeze(1).expand(n, c, L))
        return _where(valid.unsqueeze(1), vals, 0.0)

    if interpolation_mode == 1:  # nearest: half to even
        out = pick(ix.detach().round(), iy.detach().round(), iz.detach().round())
        out = with_zero_grad(out, grid)  # as PyTorch: the grid gets a zero gradient
    else:
        x0, y0, z0 = ix.detach().floor(), iy.detach().floor(), iz.detach().floor()
        fx, fy, fz = ix - x0, iy - y0, iz - z0
        out = None
        for dz in (0, 1):
            wz = fz if dz else 1 - fz
            for dy in (0, 1):
                wy = fy if dy else 1 - fy
                for dx in (0, 1):
                    wx = fx if dx else 1 - fx
                    term = pick(x0 + dx, y0 + dy, z0 + dz) * (wx * wy * wz).unsqueeze(1)
                    out = term if out is None else out + term
    return out.view(n, c, od, oh, ow)


grid_sampler_3d = public("grid_sampler_3d", _document(
    defop("grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) "
          "-> Tensor", check=_check_grid_sampler_3d, composite=_grid_sampler_3d),
    "``input`` (N, C, D, H, W) sampled at ``grid`` (N, Do, Ho, Wo, 3) of normalized (x, y, z) in [-1, 1]: mode 0 "
    "trilinear, 1 nearest; padding 0 zeros, 1 border, 2 reflection (``nn.functional.grid_sample`` of 5-D inputs)."))

# defined with grid_sample (nn_conv_extra) and layer_norm (nn_ops); PyTorch also has them as torch.*
public("grid_sampler_2d", grid_sampler_2d)
public("native_layer_norm", native_layer_norm)


# -- fractional max pooling ---------------------------------------------------------------------------------------
_FRAC_DIM = {2: ("height", "width"), 3: ("time", "height", "width")}


def _check_fractional(nd):
    name = f"fractional_max_pool{nd}d"

    ints = "Ints" if nd == 2 else "three Ints"

    def check(self, kernel_size, output_size, random_samples):
        if len(kernel_size) != nd:
            raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of {ints}")
        if len(output_size) != nd:
            raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of {ints}")
        shape = self._shape
        if self.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {_sizes(shape)}")
        for i in range(self.dim() - nd - 1, self.dim()):
            if shape[i] == 0 and i > 0:
                raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but got"
                                   f"{_sizes(shape)} with dimension {i} being empty.")
        if random_samples._dtype is not self._dtype:
            raise RuntimeError("Expect _random_samples to have the same dtype as input")
        if random_samples.dim() != 3:
            raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {random_samples.dim()}")
        n = shape[0] if self.dim() == nd + 2 else 1
        c = shape[-nd - 1]
        if random_samples._shape[0] < n:
            raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
        if random_samples._shape[1] != c:
            raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
        if random_samples._shape[2] != nd:
            raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {random_samples._shape[2]}.")
        suffix = "_out" if nd == 3 else ""
        for what, o, k, size in zip(_FRAC_DIM[nd], output_size, kernel_size, shape[-nd:]):
            if o + k - 1 > size:
                raise RuntimeError(f"{name}{suffix}(): pool {what} {k} too large relative to input {what} {size}")
        if not self._dtype.is_floating_point:
            raise not_implemented(name + "_out_frame", self._dtype)
    return check


def _interval_starts(sample, n, o, k):
    """PyTorch's pseudo-random window starts (N, C, o) along one dim from ``sample`` (N, C) in [0, 1):
    ``int((i + u) * alpha) - int(u * alpha)`` with ``alpha = (n - k) / (o - 1)``; the last window ends at ``n``,
    computed in the samples' dtype as PyTorch's kernel does."""
    lead = sample._shape
    last = zeros(lead + (1,), dtype=_dt.int64, device=sample._device) + (n - k)
    if o <= 1:
        return last.narrow(-1, 0, o)
    np_t = _dt.float64 if sample._dtype is _dt.float64 else _dt.float32
    # one division in the samples' precision (float32 unless float64, a correctly rounded quotient)
    a = (n - k) / (o - 1) if np_t is _dt.float64 else _f32((n - k) / (o - 1))
    s = sample if sample._dtype is np_t else sample.to(np_t)
    i = arange(o - 1, dtype=np_t, device=sample._device)
    starts = ((i + s.unsqueeze(-1)) * a).long() - (s * a).long().unsqueeze(-1)
    return cat([starts, last], -1)


def _fractional(nd):
    def pool(self, kernel_size, output_size, random_samples):
        batched = self.dim() == nd + 2
        x = self if batched else self.unsqueeze(0)
        n, c = x._shape[:2]
        sizes = x._shape[2:]
        dev = x._device
        outs, ks = tuple(output_size), tuple(kernel_size)
        if n == 0 or 0 in outs:
            out = zeros((n, c) + outs, dtype=x._dtype, device=dev)
            idx = zeros((n, c) + outs, dtype=_dt.int64, device=dev)
        else:
            samples = random_samples.narrow(0, 0, n).detach()
            # dims in the samples' order: 2-d (width, height), 3-d (time, height, width)
            order = (1, 0) if nd == 2 else (0, 1, 2)
            starts = [None] * nd
            for j, dim in enumerate(order):
                starts[dim] = _interval_starts(samples.select(-1, j), sizes[dim], outs[dim], ks[dim])
            # the flat input position of every window element: (N, C, *outs, prod(ks))
            flat = None
            stride = 1
            for dim in reversed(range(nd)):
                shape = [n, c] + [1] * nd + [1] * nd
                shape[2 + dim] = outs[dim]
                kshape = [1] * (2 + nd) + [1] * nd
                kshape[2 + nd + dim] = ks[dim]
                pos = starts[dim].view(tuple(shape)) + arange(ks[dim], device=dev).view(tuple(kshape))
                flat = pos * stride if flat is None else flat + pos * stride
                stride *= sizes[dim]
            m = math.prod(outs)
            kk = math.prod(ks)
            flat = flat.reshape(n, c, m * kk)
            vals = x.reshape(n, c, math.prod(sizes)).gather(2, flat).reshape(n, c, m, kk)
            arg = vals.argmax(-1, keepdim=True)  # the first maximum of each window
            out = vals.gather(-1, arg).squeeze(-1).reshape((n, c) + outs)
            idx = flat.reshape(n, c, m, kk).gather(-1, arg).squeeze(-1).reshape((n, c) + outs)
        return (out, idx) if batched else (out.squeeze(0), idx.squeeze(0))
    return pool


fractional_max_pool2d = _document(
    defop("fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, Tensor random_samples) "
          "-> (Tensor, Tensor)", check=_check_fractional(2), composite=_fractional(2)),
    "Fractional max pooling of (N, C, H, W) or (C, H, W) to ``output_size`` with kh x kw windows at PyTorch's "
    "pseudo-random starts drawn from ``random_samples`` (N, C, 2) (width, height); the maxima and their flat "
    "positions ``h * W + w``.")
fractional_max_pool3d = _document(
    defop("fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, Tensor random_samples) "
          "-> (Tensor, Tensor)", check=_check_fractional(3), composite=_fractional(3)),
    "Fractional max pooling of (N, C, T, H, W) or (C, T, H, W) with windows at PyTorch's pseudo-random starts "
    "drawn from ``random_samples`` (N, C, 3) (time, height, width); the maxima and their flat positions.")


# -- stft / istft -------------------------------------------------------------------------------------------------
def _stft_lengths(n_fft, hop_length, win_length):
    return (n_fft // 4 if hop_length is None else hop_length), (n_fft if win_length is None else win_length)


def _padded_window(window, win_length, n_fft, like):
    """``window`` (or ones) of ``win_length`` centred in ``n_fft`` points with zeros, as PyTorch pads it."""
    if window is None:
        d = like._dtype.to_real() if like._dtype.is_complex else like._dtype
        window = ones((win_length,), dtype=d, device=like._device)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = constant_pad(window, (left, n_fft - win_length - left), 0)
    return window


def _check_stft(self, n_fft, hop_length=None, win_length=None, window=None, normalized=False, onesided=None,
                return_complex=None, align_to_window=None):
    complex_in = self._dtype.is_complex or (window is not None and window._dtype.is_complex)
    if return_complex is None and not complex_in:
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    hop, win = _stft_lengths(n_fft, hop_length, win_length)
    if self.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {self.dim()}D")
    if not (self._dtype.is_floating_point or self._dtype.is_complex):
        raise RuntimeError("stft: expected a tensor of floating point or complex values")
    n = self._shape[-1]
    if n_fft <= 0 or n_fft > n:
        raise RuntimeError(f"stft: expected 0 < n_fft < {n}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window._shape[0] != win):
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win}, but got window "
                           f"with size {_sizes(window._shape)}")
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if align_to_window:
        raise NotImplementedError("stft(align_to_window=True) is not supported")


def _stft(self, n_fft, hop_length=None, win_length=None, window=None, normalized=False, onesided=None,
          return_complex=None, align_to_window=None):
    hop, win = _stft_lengths(n_fft, hop_length, win_length)
    x = self if self.dim() == 2 else self.unsqueeze(0)
    frames = x.unfold(-1, n_fft, hop)  # (B, n_frames, n_fft)
    if window is not None:
        frames = frames * _padded_window(window, win, n_fft, self)
    norm = 1 if normalized else 0
    if frames._dtype.is_complex:
        out = _fft_c2c(frames, [2], norm, True)
    else:
        out = _fft_r2c(frames, [2], norm, True if onesided is None else onesided)
    out = out.transpose(1, 2)
    if self.dim() == 1:
        out = out.squeeze(0)
    complex_in = self._dtype.is_complex or (window is not None and window._dtype.is_complex)
    if return_complex is None:
        return_complex = complex_in
    return out if return_complex else view_as_real(out)


stft = _document(
    defop("stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, "
          "bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) "
          "-> Tensor", check=_check_stft, composite=_stft),
    "The short-time Fourier transform of (L) or (B, L) (no centring: ``tensorplug.stft`` pads first): "
    "frames of ``n_fft`` every ``hop_length``, times the window, transformed; (B?, n_freq, n_frames).")


def _istft_parts(self, n_fft, hop_length, win_length, onesided):
    hop, win = _stft_lengths(n_fft, hop_length, win_length)
    fft_size = self._shape[-2] if self.dim() >= 2 else 0
    return hop, win, (fft_size != n_fft) if onesided is None else onesided


def _check_istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
                 onesided=None, length=None, return_complex=False):
    if not self._dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if self.numel() == 0:
        raise RuntimeError("istft input tensor cannot be empty")
    if self.dim() < 2:  # PyTorch reads the frequency dim of the real view (..., 2)
        n = self.dim() + 1
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got -3)")
    if self.dim() > 3:
        raise RuntimeError(f"istft: expected a tensor with 3 or 4 dimensions, but got {self.dim() + 1}")
    hop, win, one = _istft_parts(self, n_fft, hop_length, win_length, onesided)
    fft_size = self._shape[-2]
    if one and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not one and n_fft != fft_size:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError("istft: expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError("istft: expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window._shape[0] != win):
        raise RuntimeError("istft: Invalid window shape. window has to be 1D and length of `win_length`")
    if return_complex and one:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if not return_complex and window is not None and window._dtype.is_complex:
        raise RuntimeError("Complex windows are incompatible with return_complex=False")


def _overlap_add(frames, n_fft, hop, total):
    """Frames (B, n_frames, n_fft) summed at their offsets ``i * hop`` into (B, total) (col2im)."""
    if frames._dtype.is_complex:
        return _complex(_overlap_add(frames.real, n_fft, hop, total), _overlap_add(frames.imag, n_fft, hop, total))
    out = col2im(frames.transpose(1, 2), (1, total), (1, n_fft), (1, 1), (0, 0), (1, hop))
    return out.reshape(frames._shape[0], total)


def _istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False, onesided=None,
           length=None, return_complex=False):
    hop, win, one = _istft_parts(self, n_fft, hop_length, win_length, onesided)
    x = self if self.dim() == 3 else self.unsqueeze(0)
    n_frames = x._shape[-1]
    total = n_fft + hop * (n_frames - 1)
    w = _padded_window(window, win, n_fft, self)
    x = x.transpose(1, 2)  # (B, n_frames, fft_size)
    norm = 1 if normalized else 2
    if return_complex:
        y = _fft_c2c(x, [2], norm, False)
    else:
        if not one:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        y = _fft_c2r(x, [2], norm, n_fft)
    y = _overlap_add(y * w, n_fft, hop, total)
    env = _overlap_add((w * w).expand(1, n_frames, n_fft), n_fft, hop, total)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    stop = min(end, total)
    y, env = y.narrow(1, start, max(stop - start, 0)), env.narrow(1, start, max(stop - start, 0))
    if env.numel() and bool((env.abs().min() < 1e-11).item()):
        raise RuntimeError("istft: window overlap add min: 1")
    y = y / env
    if end > total:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", stacklevel=3)
        y = constant_pad(y, (0, end - total), 0)
    return y if self.dim() == 3 else y.squeeze(0)


istft = public("istft", _document(
    defop("istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, "
          "bool center=True, bool normalized=False, bool? onesided=None, int? length=None, "
          "bool return_complex=False) -> Tensor", check=_check_istft, composite=_istft),
    "The inverse short-time Fourier transform of a complex (B?, n_freq, n_frames) spectrum: inverse transforms "
    "of the frames, times the window, overlap-added and divided by the window's squared overlap-add."))


def stft_fn(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
            normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform of ``input`` (L) or (B, L): (B?, n_fft // 2 + 1 (or n_fft), n_frames)
    complex (``return_complex=True``, required for real inputs) or its ``view_as_real``. With ``center`` the
    signal is first padded by ``n_fft // 2`` on both sides (``pad_mode``), as in PyTorch."""
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
                      "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", stacklevel=2)
    if return_complex is False:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.", stacklevel=2)
    if center:
        dim = input.dim()
        pad = n_fft // 2
        shape = (1,) * (3 - dim) + tuple(input._shape) if dim <= 3 else tuple(input._shape)
        padded = _pad(input.view(shape), [pad, pad], pad_mode)
        input = padded.view(padded._shape[-dim:])
    return stft(input, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align_to_window)


public("stft", stft_fn)
attach("stft", stft_fn)
attach("istft", istft)
