"""Operators of ``tensorplug.nn.functional``: convolution, pooling, normalization, embedding, the
class-index losses and scaled dot-product attention.

Each is an operator with PyTorch's schema, so a backend can own it: its kernel
is the decomposition into public ops below, registered under
CompositeImplicitAutograd, and a backend that registers a kernel for its Dense
key (a fused convolution, a native layer norm) wins for its tensors. Autograd,
vmap and the profiler see one operator, and decompose it where no backend
kernel exists. Argument checks run in each op's ``check`` (once, for every
backend, with PyTorch's messages); ``nn.functional`` keeps only the Python-side
conversions (``None`` strides, string reductions, ``max_norm``).

* convolutions are im2col: one strided view of the input per kernel
  position, one ``stack`` copy of them all (N, C*kh*kw, Ho*Wo), one
  broadcast matmul with the weight (per group) that lands in NCHW order;
* pooling takes the same columns (a plain reshape when windows do not
  overlap); max pooling picks each window's first maximum with ``argmax`` +
  ``gather``, so its gradient goes to that one element as in PyTorch;
* the losses on class indices pick the target log-probabilities with
  ``gather`` (never a one-hot matmul).
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from ..dtypes import c_type_name
from ..tensor import Tensor
from ._common import document as _document
from ._lib import SEEDED, defop
from .comparison import where_fn as _where
from .factories import arange, empty_like, full, ones, tensor, zeros, zeros_like
from .joining import cat, stack
from .pointwise import not_implemented
from .promotion import _pt_name
from .reductions import var_mean_fn as _var_mean

__all__ = ["constant_pad", "conv1d", "conv1d_padding", "conv2d", "conv2d_padding", "max_pool1d", "max_pool2d",
           "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d", "batch_norm",
           "layer_norm", "native_layer_norm", "native_layer_norm_backward", "group_norm", "embedding", "nll_loss", "cross_entropy_loss",
           "scaled_dot_product_attention", "REDUCTIONS"]

_INF = math.inf
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}  # the int ``reduction`` of the loss schemas


def _tup(v, nd):
    """An int or a sequence as a tuple; a 1-tuple is repeated to ``nd`` values."""
    t = (v,) if v.__class__ is int else tuple(v)
    return t * nd if len(t) == 1 else t


# -- padding ------------------------------------------------------------------------------------
def constant_pad(x, pad, value):
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
                parts.append(full(shape, value, dtype=out._dtype, device=out._device))
            parts.append(out)
            if hi:
                shape[dim] = hi
                parts.append(full(shape, value, dtype=out._dtype, device=out._device))
            out = cat(parts, dim)
    return out


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
    return stack(views, 2)


# -- convolution ---------------------------------------------------------------------------------
def _conv_arg(name, value, nd):
    t = _tup(value, nd)
    if len(t) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} values to match the "
                           f"convolution dimensions, but got {name}={list(t)}")
    return t


def _conv_pads(nd, padding, dilation, kernel):
    """(lo, hi) per spatial dim for an int padding or "valid" / "same" (an odd total: the extra on the right)."""
    if padding.__class__ is str:
        if padding == "same":
            return [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for d, k in zip(dilation, kernel)]
        return [(0, 0)] * nd
    return [(p, p) for p in _tup(padding, nd)]


def _check_conv(nd):
    name = f"conv{nd}d"

    def check(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        # PyTorch checks the bias dtype first; its padding="valid"/"same" path casts the bias instead
        if bias is not None and bias._dtype is not input._dtype and padding.__class__ is not str:
            raise RuntimeError(f"Input type ({c_type_name(input._dtype)}) and bias type ({c_type_name(bias._dtype)}) "
                               "should be the same")
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
                               f"input of size: {list(input._shape)}")
        if weight.dim() < 3:
            raise RuntimeError("weight should have at least three dimensions")
        if weight.dim() != nd + 2:
            w = weight.dim()
            # PyTorch's padding="same"/"valid" path prints the weight's size right after "weight"
            sep = "" if padding.__class__ is str else " "
            raise RuntimeError(f"Expected {w}-dimensional input for {w}-dimensional weight{sep}{list(weight._shape)}, "
                               f"but got {input.dim()}-dimensional input of size {list(input._shape)} instead")
        stride = _conv_arg("stride", stride, nd)
        dilation = _conv_arg("dilation", dilation, nd)
        if any(s <= 0 for s in stride):
            raise RuntimeError("non-positive stride is not supported")
        if any(d <= 0 for d in dilation):
            raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
        if groups <= 0:
            raise RuntimeError("non-positive groups is not supported")
        kernel = weight._shape[2:]
        if padding.__class__ is str:
            if padding == "same":
                if any(s != 1 for s in stride):
                    raise RuntimeError("padding='same' is not supported for strided convolutions")
            elif padding != "valid":
                raise RuntimeError(f"Invalid padding string: '{padding}'")
        elif any(p < 0 for p in _conv_arg("padding", padding, nd)):
            raise RuntimeError("negative padding is not supported")
        pads = _conv_pads(nd, padding, dilation, kernel)
        shape = input._shape if input.dim() == nd + 2 else (1,) + input._shape
        out_c, in_cg = weight._shape[:2]
        c = shape[1]
        if out_c % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                               f"but got weight of size [{list(weight._shape)}] instead")
        if c != in_cg * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(weight._shape)}, expected "
                               f"input{list(shape)} to have {in_cg * groups} channels, but got {c} channels "
                               "instead")
        if bias is not None and (bias.dim() != 1 or bias._shape[0] != out_c):
            raise RuntimeError(f"Given weight of size {list(weight._shape)}, expected bias to be 1-dimensional "
                               f"with {out_c} elements, but got bias of size {list(bias._shape)} instead")
        if input._dtype is not weight._dtype:
            raise RuntimeError(f"expected scalar type {_pt_name(input._dtype)} but found {_pt_name(weight._dtype)}")
        padded = [s + lo + hi for s, (lo, hi) in zip(shape[2:], pads)]
        if any(d * (k - 1) + 1 > p for d, k, p in zip(dilation, kernel, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                               f"Kernel size: ({' x '.join(str(d * (k - 1) + 1) for d, k in zip(dilation, kernel))})"
                               ". Kernel size can't be greater than actual input size")
    return check


def _conv(nd):
    def conv(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        stride, dilation = _tup(stride, nd), _tup(dilation, nd)
        pads = _conv_pads(nd, padding, dilation, weight._shape[2:])
        batched = input.dim() == nd + 2
        x = input if batched else input.unsqueeze(0)
        if nd == 1:
            x, weight = x.unsqueeze(2), weight.unsqueeze(2)
            stride, dilation, pads = (1,) + stride, (1,) + dilation, [(0, 0)] + pads
        if nd == 2 and padding.__class__ is not str:  # the primitive conv2d's own decomposition
            if any(lo or hi for lo, hi in pads):
                x = constant_pad(x, (pads[1][0], pads[1][1], pads[0][0], pads[0][1]), 0)
            out = _conv2d_im2col(x, weight, bias, stride, dilation, groups)
        else:  # the other overloads are conv2d (a backend's fused kernel, and conv2d's backward formula)
            if all(lo == hi for lo, hi in pads):
                pad2 = (pads[0][0], pads[1][0])
            else:
                x = constant_pad(x, (pads[1][0], pads[1][1], pads[0][0], pads[0][1]), 0)
                pad2 = (0, 0)
            if bias is not None and bias._dtype is not x._dtype:  # the padding="valid"/"same" overload casts it
                bias = bias.to(x._dtype)
            out = conv2d(x, weight, bias, stride, pad2, dilation, groups)
        if nd == 1:
            out = out.squeeze(2)
        return out if batched else out.squeeze(0)
    return conv


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
    if bias is None:
        return out
    return out + (bias if bias._dtype is out._dtype else bias.to(out._dtype)).view(out_c, 1, 1)


_CONV_DOC = ("{nd}-D convolution (cross-correlation) of ``input`` (N, C_in, *spatial) or (C_in, *spatial) with "
             "``weight`` (C_out, C_in / groups, *kernel){pad}.")


def _define_conv(nd):
    """``conv{nd}d`` with int padding and its ``.padding`` overload ("valid" / "same"): one check and decomposition."""
    head = f"Tensor input, Tensor weight, Tensor? bias=None, SymInt[{nd}] stride=1, "
    tail = f", SymInt[{nd}] dilation=1, SymInt groups=1) -> Tensor"
    plain = defop(f"conv{nd}d(" + head + f"SymInt[{nd}] padding=0" + tail,
                  check=_check_conv(nd), composite=_conv(nd))
    by_name = defop(f"conv{nd}d.padding(" + head + 'str padding="valid"' + tail,
                    check=_check_conv(nd), composite=_conv(nd))
    return (_document(plain, _CONV_DOC.format(nd=nd, pad="")),
            _document(by_name, _CONV_DOC.format(nd=nd, pad=', padding "valid" or "same"')))


conv1d, conv1d_padding = _define_conv(1)
conv2d, conv2d_padding = _define_conv(2)


# -- pooling -------------------------------------------------------------------------------------------
def _pool_out(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_args(name, nd, kernel_size, stride, padding, dilation):
    """kernel, stride (the kernel when empty), padding and dilation as ``nd``-tuples, validated."""
    def tup(what, v):
        t = _tup(v, nd)
        if len(t) != nd:
            raise RuntimeError(f"{name}: {what} must either be a single int, or a tuple of {nd} ints")
        return t
    k = tup("kernel_size", kernel_size)
    s = k if stride is None or (stride.__class__ is not int and len(stride) == 0) else tup("stride", stride)
    p, d = tup("padding", padding), tup("dilation", dilation)
    if any(x < 0 for x in p):  # PyTorch's pool_check_shape words it so for every pooling op
        raise RuntimeError(f"pad must be non-negative, but got pad: {next(x for x in p if x < 0)}")
    for what, v, low in (("kernel_size", k, 1), ("stride", s, 1), ("dilation", d, 1)):
        if any(x < low for x in v):
            raise RuntimeError(f"{name}: {what} must be {'non-negative' if low == 0 else 'greater than zero'}, "
                               f"but got {list(v)}")
    return k, s, p, d


def _sizes_str(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _check_pool2d_input(shape):
    """PyTorch's pool2d_shape_check: (C, H, W) with no empty dim, or (N, C, H, W) whose batch alone may be empty."""
    n = len(shape)
    if not ((n == 3 and 0 not in shape) or (n == 4 and 0 not in shape[1:])):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{_sizes_str(shape)}")


def _check_pool_input(name, input):
    """The input checks of each pooling op, in PyTorch's words: the 1-d ops that PyTorch runs as 2-d pooling
    of an (N, C, 1, L) view report that view's sizes."""
    shape, n = input._shape, input.dim()
    if name == "max_pool1d":
        if not ((n == 2 and 0 not in shape) or (n == 3 and 0 not in shape[1:])):
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                               f"for input, but got:{_sizes_str(shape)}")
    elif name in ("max_pool1d_with_indices", "avg_pool1d"):
        if n not in (2, 3):
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {n}-dimensional tensor for argument #1 'self' "
                               f"(while checking arguments for {name[:10]})")
        _check_pool2d_input(shape[:-1] + (1,) + shape[-1:])
    elif name == "avg_pool2d":
        if n < 3:
            m = max(n, 1)
            raise IndexError(f"Dimension out of range (expected to be in range of [{-m}, {m - 1}], but got -3)")
        _check_pool2d_input(shape)
    else:  # max_pool2d, with or without indices
        if n not in (3, 4):
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        _check_pool2d_input(shape)


def _pool_geometry(nd, input, k, s, p, d, ceil_mode):
    """(k, s, p, d) as 2-D tuples, the (N, C, H, W) input sizes and the output size; PyTorch's size errors
    (the input's dims have been checked by :func:`_check_pool_input`)."""
    shape = input._shape if input.dim() == nd + 2 else (1,) + input._shape
    if nd == 1:
        shape = shape[:2] + (1,) + shape[2:]
        k, s, p, d = (1,) + k, (1,) + s, (0,) + p, (1,) + d
    sizes = shape[2:]
    outs = tuple(_pool_out(n, ki, si, pi, di, ceil_mode) for n, ki, si, pi, di in zip(sizes, k, s, p, d))
    if any(o <= 0 for o in outs):
        shown = shape[1:] if nd == 2 else (shape[1], shape[3])
        out_shown = (shape[1],) + (outs if nd == 2 else outs[1:])
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, shown))}). Calculated output size: "
                           f"({'x'.join(map(str, out_shown))}). Output size is too small")
    return (k, s, p, d), sizes, outs


def _pool_prepare(nd, input, k, s, p, d, ceil_mode, fill):
    """The input as (N, C, H, W), padded so that exactly the output's windows fit; and the output size."""
    (k, s, p, d), sizes, outs = _pool_geometry(nd, input, k, s, p, d, ceil_mode)
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    if nd == 1:
        x = x.unsqueeze(2)
    # right/bottom: what the last window needs beyond the input (ceil_mode windows may overhang the padding)
    hi = [max((o - 1) * si + di * (ki - 1) + 1 - n - pi, 0) for o, si, di, ki, n, pi in zip(outs, s, d, k, sizes, p)]
    if p[0] or p[1] or hi[0] or hi[1]:
        x = constant_pad(x, (p[1], hi[1], p[0], hi[0]), fill)
    return x, batched, (k, s, p, d), outs


def _pool_finish(out, nd, batched):
    if nd == 1:
        out = out.squeeze(2)
    return out if batched else out.squeeze(0)


def _min_of(dtype):
    """The smallest value of an integer (or bool) dtype: what integer max pooling pads with."""
    if dtype is _dt.bool or dtype is _dt.uint8:
        return 0
    return -(1 << (8 * dtype.itemsize - 1))


def _check_max_pool(nd, with_indices):
    name = f"max_pool{nd}d"

    def check(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        if nd == 1 and not with_indices:  # PyTorch checks max_pool1d's input before its arguments
            _check_pool_input(name, self)
            neg = [x for x in _tup(padding, 1) if x < 0]
            if neg:
                raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {neg[0]}")
        k, s, p, d = _pool_args(name, nd, kernel_size, stride, padding, dilation)
        for pi, ki, di in zip(p, k, d):
            if pi > (di * (ki - 1) + 1) // 2:
                raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pi}, "
                                   f"kernel_size={ki} and dilation={di}")
        if nd == 2 or with_indices:
            _check_pool_input(name + ("_with_indices" if nd == 1 else ""), self)
        _pool_geometry(nd, self, k, s, p, d, ceil_mode)
        # PyTorch's max_pool1d (no indices) is floating only; the others take any dtype but bool
        if nd == 1 and not with_indices and not self._dtype.is_floating_point or self._dtype is _dt.bool:
            raise not_implemented("max_pool1d_impl" if nd == 1 and not with_indices else "max_pool2d", self._dtype)
    return check


def _max_pool(nd, return_indices):
    name = f"max_pool{nd}d"

    def max_pool(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        input = self
        k, s, p, d = _pool_args(name, nd, kernel_size, stride, padding, dilation)
        fill = -_INF if input._dtype.is_floating_point else _min_of(input._dtype)
        x, batched, (k, s, p, d), (ho, wo) = _pool_prepare(nd, input, k, s, p, d, ceil_mode, fill)
        cols = _patches(x, k, s, d)
        # the first maximum of each window (NaN wins), and the gradient goes to it alone, as in PyTorch
        idx = cols.argmax(2, keepdim=True)
        out = _pool_finish(cols.gather(2, idx).squeeze(2), nd, batched)
        if not return_indices:
            return out
        idx = idx.squeeze(2)
        dev = input._device
        rows = (arange(ho, device=dev) * s[0] - p[0]).view(ho, 1) + (idx // k[1]) * d[0]
        cols = (arange(wo, device=dev) * s[1] - p[1]) + (idx % k[1]) * d[1]
        width = input._shape[-1]
        return out, _pool_finish(rows * width + cols, nd, batched)
    return max_pool


_MAX_ARGS = "Tensor self, int[{n}] kernel_size, int[{n}] stride=[], int[{n}] padding=0, int[{n}] dilation=1, " \
            "bool ceil_mode=False"
_MAX_DOC = ("Max over sliding windows of the last {nd} dim(s) of (N, C, *spatial) or (C, *spatial); ``stride`` "
            "defaults to ``kernel_size``; padding counts as -inf.")
max_pool1d = _document(defop(f"max_pool1d({_MAX_ARGS.format(n=1)}) -> Tensor", check=_check_max_pool(1, False),
                             composite=_max_pool(1, False)), _MAX_DOC.format(nd=1))
max_pool2d = _document(defop(f"max_pool2d({_MAX_ARGS.format(n=2)}) -> Tensor", check=_check_max_pool(2, False),
                             composite=_max_pool(2, False)), _MAX_DOC.format(nd=2))
max_pool1d_with_indices = _document(
    defop(f"max_pool1d_with_indices({_MAX_ARGS.format(n=1)}) -> (Tensor, Tensor)",
          check=_check_max_pool(1, True),
          composite=_max_pool(1, True)),
    _MAX_DOC.format(nd=1) + " Also each maximum's flat position in its row.")
max_pool2d_with_indices = _document(
    defop(f"max_pool2d_with_indices({_MAX_ARGS.format(n=2)}) -> (Tensor, Tensor)",
          check=_check_max_pool(2, True),
          composite=_max_pool(2, True)),
    _MAX_DOC.format(nd=2) + " Also each maximum's flat position ``h * W + w`` in its plane.")


def _check_avg_pool(nd):
    name = f"avg_pool{nd}d"

    def check(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
              divisor_override=None):
        if divisor_override is not None and divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        k, s, p, d = _pool_args(name, nd, kernel_size, stride, padding, 1)
        for pi, ki in zip(p, k):
            if pi > ki // 2:
                raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pi}, "
                                   f"kernel_size={ki} and dilation=1")
        _check_pool_input(name, self)
        _pool_geometry(nd, self, k, s, p, d, ceil_mode)
        # PyTorch's CPU kernel: floating dtypes and int64 (whose mean is truncated toward zero)
        if not self._dtype.is_floating_point and self._dtype is not _dt.int64:
            raise not_implemented("avg_pool2d", self._dtype)
    return check


def _avg_pool(nd):
    name = f"avg_pool{nd}d"

    def avg_pool(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        input = self
        k, s, p, d = _pool_args(name, nd, kernel_size, stride, padding, 1)
        sizes = input._shape[-nd:]
        x, batched, (k, s, p, d), outs = _pool_prepare(nd, input, k, s, p, d, ceil_mode, 0)
        if s == k:
            sums = _tiles(x, k, outs[0], outs[1]).sum((3, 5))
        else:
            sums = _patches(x, k, s, d).sum(2)
        # int64 averages are truncated toward zero, as PyTorch's integer division
        mean = (lambda a, b: a / b) if sums._dtype.is_floating_point else (lambda a, b: a.div(b, rounding_mode="trunc"))
        if divisor_override is not None:
            return _pool_finish(mean(sums, divisor_override), nd, batched)
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
            return _pool_finish(mean(sums, k[0] * k[1]), nd, batched)
        div = tensor([[a * b for b in counts[1]] for a in counts[0]], dtype=sums._dtype, device=sums._device)
        return _pool_finish(mean(sums, div), nd, batched)
    return avg_pool


_AVG_DOC = ("Mean over sliding windows of the last {nd} dim(s) of (N, C, *spatial) or (C, *spatial); zero padding "
            "counts in the mean unless ``count_include_pad=False``{extra}. Floating dtypes and int64 (the mean "
            "truncated toward zero), as PyTorch's CPU kernel.")
_avg1 = _avg_pool(1)
avg_pool1d = _document(defop("avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, "
                             "bool ceil_mode=False, bool count_include_pad=True) -> Tensor",
                             check=_check_avg_pool(1),
                             composite=lambda self, kernel_size, stride=(), padding=0, ceil_mode=False,
                             count_include_pad=True: _avg1(self, kernel_size, stride, padding, ceil_mode,
                                                           count_include_pad, None)),
                       _AVG_DOC.format(nd=1, extra=""))
avg_pool2d = _document(defop("avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
                             "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) "
                             "-> Tensor", check=_check_avg_pool(2), composite=_avg_pool(2)),
                       _AVG_DOC.format(nd=2, extra="; ``divisor_override`` replaces the window size as divisor"))


# -- normalization --------------------------------------------------------------------------------------
def _check_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    if input.dim() < 2:
        if running_mean is not None:
            raise RuntimeError(f"running_mean should contain 0 elements not {running_mean.numel()}")
        raise RuntimeError(f"batch_norm: expected an input of at least 2 dimensions (N, C, ...), got input of "
                           f"size {list(input._shape)}")
    c = input._shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    c = input._shape[1]
    dims = (0,) + tuple(range(2, input.dim()))
    n = input.numel() // c if c else 0
    if (training or running_mean is None or running_var is None) and not n:
        # no values per channel (an empty batch): nothing to normalize, and as in PyTorch the running
        # statistics stay as they are (their update would be NaN, and so the weight's gradient)
        mean = var = zeros((c,), dtype=input._dtype, device=input._device)
    elif training or running_mean is None or running_var is None:
        var, mean = _var_mean(input, dims, correction=0)
        if training and running_mean is not None:
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


batch_norm = _document(defop("batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
                             "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) "
                             "-> Tensor", check=_check_batch_norm, composite=_batch_norm),
                       "Normalize each channel (dim 1) over the batch and spatial dims: the batch's statistics when "
                       "``training`` (updating the running ones in place), else the running ones.")


def _check_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    ns = tuple(normalized_shape)
    k = len(ns)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if input.dim() < k or input._shape[input.dim() - k:] != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size{list(input._shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._shape != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t._shape)} and normalized_shape = {list(ns)}")


def _plain(*ts):
    """True when every tensor is a plain Tensor (or a subclass that declares itself one, as
    ``nn.Parameter`` does with ``_plain_subclass``): a transform's wrapper (vmap's batched tensor) takes
    an op's decomposition, whose pieces have batching rules, instead of the fused primitive."""
    for t in ts:
        if t is not None and t.__class__ is not Tensor and not getattr(t.__class__, "_plain_subclass", False):
            return False
    return True


def _layer_norm_stats(input, normalized_shape, eps):
    dims = tuple(range(-len(normalized_shape), 0))
    var, mean = _var_mean(input, dims, correction=0, keepdim=True)
    return mean, (var + eps).rsqrt()


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    if _plain(input, weight, bias):
        return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]
    mean, rstd = _layer_norm_stats(input, normalized_shape, eps)
    return _layer_norm_affine((input - mean) * rstd, weight, bias)


def _layer_norm_affine(out, weight, bias):
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


layer_norm = _document(defop("layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                             "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
                             check=_check_layer_norm, composite=_layer_norm),
                       "Normalize over the last ``len(normalized_shape)`` dims, then scale by ``weight`` and shift "
                       "by ``bias``.")


def _check_native_layer_norm(input, normalized_shape, weight, bias, eps):
    _check_layer_norm(input, normalized_shape, weight, bias)


def _native_layer_norm(input, normalized_shape, weight, bias, eps):
    mean, rstd = _layer_norm_stats(input, normalized_shape, eps)
    return _layer_norm_affine((input - mean) * rstd, weight, bias), mean, rstd


# PyTorch's primitive: the output with the per-row mean and 1/std (shaped (*, 1, ..., 1)), which its
# backward reuses. A backend that has no kernel for it gets the decomposition above.
native_layer_norm = defop("native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
                          "float eps) -> (Tensor, Tensor, Tensor)", check=_check_native_layer_norm,
                          composite=_native_layer_norm)


def _native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    dims = tuple(range(-len(normalized_shape), 0))
    n = 1
    for d in normalized_shape:
        n *= d
    xhat = (input - mean) * rstd
    lead = tuple(range(input.dim() - len(normalized_shape)))
    gw = (grad_out * xhat).sum(lead) if output_mask[1] and weight is not None else None
    gb = grad_out.sum(lead) if output_mask[2] and bias is not None else None
    gi = None
    if output_mask[0]:
        g = grad_out * weight if weight is not None else grad_out
        gi = (g - g.mean(dims, keepdim=True) - xhat * (g * xhat).mean(dims, keepdim=True)) * rstd
    return gi, gw, gb


native_layer_norm_backward = defop(
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, "
    "Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    composite=_native_layer_norm_backward)


@derivative("native_layer_norm", nondiff_outputs=(1, 2))
def _(grads, input, normalized_shape, weight, bias, eps, result1, result2, needs_input_grad):
    g = grads[0]
    mask = (needs_input_grad[0], needs_input_grad[1], needs_input_grad[2])
    if g is None:
        return None, None, None
    if is_grad_enabled() or not _plain(g, input, weight, bias):
        # create_graph: the decomposed backward is recorded, with the statistics computed again from
        # the input (the saved ones carry no gradient), so it has gradients of its own
        mean, rstd = _layer_norm_stats(input, normalized_shape, eps)
        return _native_layer_norm_backward(g, input, normalized_shape, mean, rstd, weight, bias, mask)
    return native_layer_norm_backward(g, input, normalized_shape, result1, result2, weight, bias, list(mask))


def _check_group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    c = input._shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(input._shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t._shape)} and input of shape {list(input._shape)}")


def _group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    n, c = input._shape[:2]
    m = input.numel() // (n * num_groups) if n else c // num_groups * math.prod(input._shape[2:])
    x = input.reshape(n, num_groups, m)  # (-1 is ambiguous for an empty batch)
    if m:
        var, mean = _var_mean(x, (-1,), correction=0, keepdim=True)
    else:  # empty groups: NaN statistics as PyTorch's (0 / 0), without var_mean's degrees-of-freedom warning
        var = mean = x.sum(-1, keepdim=True) / 0.0
    out = ((x - mean) * (var + eps).rsqrt()).view(input._shape)
    shape = (c,) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    return out


group_norm = _document(defop("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
                             "float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
                             check=_check_group_norm, composite=_group_norm),
                       "Normalize (N, C, *) over each group of C / num_groups channels (and the spatial dims), "
                       "then apply the per-channel ``weight`` and ``bias``.")


# -- embedding ------------------------------------------------------------------------------------------------
def _check_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices._dtype is not _dt.int64 and indices._dtype is not _dt.int32:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.type()} instead (while checking arguments for embedding)")
    if sparse:
        raise NotImplementedError("embedding(sparse=True): tensorplug has no sparse tensors")


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    v = weight._shape[0]
    flat = indices.reshape(-1)
    out = weight.index_select(0, flat)
    if padding_idx >= 0 and out._requires_grad:
        out = _where((flat != padding_idx).unsqueeze(1), out, out.detach())
    if scale_grad_by_freq and out._requires_grad:
        counts = zeros((v,), dtype=out._dtype, device=out._device).index_put_(
            (flat,), ones(flat._shape, dtype=out._dtype, device=out._device), accumulate=True)
        # forward value unchanged (out - out.detach() is exactly 0); gradient scaled by 1 / count
        out = out.detach() + (out - out.detach()) / counts.index_select(0, flat).unsqueeze(1)
    return out.view(indices._shape + (weight._shape[1],))


embedding = _document(defop("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
                            "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
                            check=_check_embedding, composite=_embedding),
                      "Rows of ``weight`` picked by ``indices``; the row ``padding_idx`` (when >= 0) gets no "
                      "gradient, ``scale_grad_by_freq`` divides each row's gradient by its count.")


# -- losses on class indices ------------------------------------------------------------------------------------
def _check_reduction(reduction):
    if reduction not in (0, 1, 2):
        raise ValueError(f"{reduction} is not a valid value for reduction")


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


def _check_class_weight(weight, c):
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {list(weight._shape)}")


def _nll_terms(logp, target, weight, ignore_index):
    """(per-element loss, per-element weight, ignored mask) for class-index targets.

    ``logp``'s class dim is 1 (0 for a 1-D input); ignored targets become class 0 for ``gather`` and get
    weight 0.
    """
    class_dim = 0 if logp.dim() == 1 else 1
    c = logp._shape[class_dim]
    ignored = target == ignore_index
    safe = _where(ignored, 0, target)
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
    return -picked * w, w, ignored


def _reduce(loss, reduction):
    if reduction == 1:
        return loss.mean()
    if reduction == 2:
        return loss.sum()
    return loss


def _check_nll_loss(self, target, weight=None, reduction=1, ignore_index=-100):
    _check_reduction(reduction)
    _check_target(self, target)
    _check_class_weight(weight, self._shape[0 if self.dim() == 1 else 1])


def _nll_loss(self, target, weight=None, reduction=1, ignore_index=-100):
    loss, w, _ = _nll_terms(self, target, weight, ignore_index)
    if reduction == 1:
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


nll_loss = _document(defop("nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
                           "SymInt ignore_index=-100) -> Tensor", check=_check_nll_loss, composite=_nll_loss),
                     "Negative log-likelihood of class indices (any number of dims, as PyTorch's nll_loss_nd); "
                     "``reduction`` is 0 (none), 1 (mean over the weights of the kept targets) or 2 (sum).")


def _nll_weights(target, weight, ignore_index, dtype):
    """(target with ignored entries as class 0, per-element weight: 0 where ignored, ignored mask)."""
    ignored = target == ignore_index
    safe = _where(ignored, 0, target)
    if safe._dtype is not _dt.int64:
        safe = safe.long()
    kept = (~ignored).to(dtype)
    w = kept if weight is None else weight.index_select(0, safe.reshape(-1)).view(safe._shape) * kept
    return safe, w, ignored


def _nll_loss_backward(grad_output, self, target, weight=None, reduction=1, ignore_index=-100):
    class_dim = 0 if self.dim() == 1 else 1
    safe, w, ignored = _nll_weights(target, weight, ignore_index, self._dtype)
    g = grad_output / w.sum() if reduction == 1 else grad_output
    # an ignored target gets no gradient, as in PyTorch: 0, not 0 times an infinite mean (all ignored)
    src = _where(ignored, 0.0, -(g * w))
    return zeros_like(self).scatter_add(class_dim, safe.unsqueeze(class_dim), src.unsqueeze(class_dim))


# PyTorch's nll_loss_backward (without its total_weight argument: recomputed from the weights): the
# gradient of nll_loss with respect to self. A composite every backend gets, that a backend may fuse
# (the CPU writes the picked entries in one pass); nll_loss's own formula calls it, so autograd records
# one NllLossBackward0 node, as in PyTorch.
nll_loss_backward = defop("nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, "
                          "int reduction=1, SymInt ignore_index=-100) -> Tensor", composite=_nll_loss_backward)


@derivative("nll_loss")
def _(grad, self, target, weight, reduction, ignore_index, needs_input_grad):
    gw = None
    if needs_input_grad[2]:
        # PyTorch refuses a weight that requires grad; the composite this op was differentiates it,
        # and so does this formula (the mean's denominator depends on the weights too)
        class_dim = 0 if self.dim() == 1 else 1
        safe, w, ignored = _nll_weights(target, weight, ignore_index, self._dtype)
        kept = (~ignored).to(self._dtype)
        picked = self.gather(class_dim, safe.unsqueeze(class_dim)).squeeze(class_dim)
        if reduction == 1:
            total = w.sum()
            v = kept * (-picked - (-picked * w).sum() / total) / total * grad
        else:
            v = -picked * kept * grad
        gw = zeros_like(weight).scatter_add(0, safe.reshape(-1), v.reshape(-1))
    gs = nll_loss_backward(grad, self, target, weight, reduction, ignore_index) if needs_input_grad[0] else None
    return gs, None, gw


def _check_cross_entropy(self, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    _check_reduction(reduction)
    # as PyTorch: only a smoothing that applies (> 0) is checked; a negative or NaN one means none
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if self.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.dim()})")
    c = self._shape[0 if self.dim() == 1 else 1]
    if target._shape == self._shape:
        if not target._dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{_pt_name(target._dtype)}")
        if ignore_index != -100:
            raise RuntimeError("ignore_index is not supported for floating point target")
        _check_class_weight(weight, c)
        return
    _check_target(self, target)
    _check_class_weight(weight, c)


def _cross_entropy(self, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    input = self
    class_dim = 0 if input.dim() == 1 else 1
    c = input._shape[class_dim]
    logp = input.log_softmax(class_dim)
    if target._shape == input._shape:
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * weight.view((c,) + (1,) * (input.dim() - class_dim - 1))
        loss = -prod.sum(class_dim)
        if reduction == 1:
            return loss.sum() / (input.numel() // c if c else 0)
        return _reduce(loss, reduction)
    if label_smoothing <= 0:
        return nll_loss(logp, target, weight, reduction, ignore_index)  # as PyTorch: NllLossBackward0
    loss, w, ignored = _nll_terms(logp, target, weight, ignore_index)
    if reduction == 1:
        denom = w.sum()
        nll = loss.sum() / denom
    else:
        nll = _reduce(loss, reduction)
    if label_smoothing <= 0:
        return nll
    lp = logp if weight is None else logp * weight.view((c,) + (1,) * (input.dim() - class_dim - 1))
    smooth = _where(ignored, 0.0, -lp.sum(class_dim))
    if reduction == 1:
        smooth = smooth.sum() / denom
    else:
        smooth = _reduce(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


cross_entropy_loss = _document(
    defop("cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
          "SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor",
          check=_check_cross_entropy, composite=_cross_entropy),
    "Cross entropy of the logits ``self`` (class dim 1, or 0 for a 1-D input) against class indices or class "
    "probabilities; ``reduction`` as in nll_loss.")


# -- attention -------------------------------------------------------------------------------------------------------
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def _cpp(dtype):
    """The C++ name PyTorch's attention messages print for a dtype ("float", "long int")."""
    return _CPP_NAMES.get(dtype.name, dtype.name)


def _check_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    q, k, v = query, key, value
    if q._dtype is not k._dtype or q._dtype is not v._dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp(q._dtype)} key.dtype: {_cpp(k._dtype)} and value.dtype: "
                           f"{_cpp(v._dtype)} instead.")
    if q.dim() < 2 or k.dim() < 2 or v.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{q.dim()} key.dim: {k.dim()} and value.dim: {v.dim()} instead.")
    if attn_mask is not None and attn_mask._dtype is not _dt.bool and attn_mask._dtype is not q._dtype:
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_cpp(attn_mask._dtype)} and  query.dtype: {_cpp(q._dtype)} "
                           "instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if dropout_p > 1.0:  # as PyTorch: no dropout at all for dropout_p <= 0
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if enable_gqa and q.dim() >= 3 and k.dim() >= 3:
        hq, hk, hv = q._shape[-3], k._shape[-3], v._shape[-3]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            # PyTorch's message, cut short as it is there
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")


def _repeat_heads(t, groups):
    """``t.repeat_interleave(groups, -3)``: each head of (..., H, S, E) ``groups`` times in a row."""
    if groups == 1:
        return t
    shape = t._shape
    return t.unsqueeze(-3).expand(shape[:-2] + (groups,) + shape[-2:]).reshape(
        shape[:-3] + (shape[-3] * groups,) + shape[-2:])


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    L, S, E = query._shape[-2], key._shape[-2], query._shape[-1]
    if enable_gqa and query.dim() >= 3:
        key = _repeat_heads(key, query._shape[-3] // key._shape[-3])
        value = _repeat_heads(value, query._shape[-3] // value._shape[-3])
    factor = 1 / math.sqrt(E) if scale is None else scale
    if dropout_p <= 0.0 and _plain(query, key, value, attn_mask):
        return _fused_sdpa(query, key, value, attn_mask, is_causal, factor)[0]
    weights = _sdpa_weights(query, key, attn_mask, is_causal, factor)
    if dropout_p > 0.0:
        if dropout_p == 1.0:
            weights = weights * 0.0
        else:
            weights = weights * empty_like(weights).bernoulli_(1 - dropout_p).div_(1 - dropout_p)
    return weights.matmul(value)


def _sdpa_weights(query, key, attn_mask, is_causal, factor):
    """softmax(query @ key^T * factor + mask), with 0 for rows in which nothing takes part."""
    L, S = query._shape[-2], key._shape[-2]
    scores = query.matmul(key.transpose(-2, -1)) * factor
    if is_causal:
        attn_mask = ones((L, S), dtype=_dt.bool, device=query._device).tril()
    if attn_mask is None:
        return scores.softmax(-1)
    if attn_mask._dtype is _dt.bool:
        masked = ~attn_mask  # True where an element takes no part
        scores = scores.masked_fill(masked, -_INF)
    else:
        scores = scores + attn_mask
        masked = scores == -_INF
    # rows that take no part at all give 0 (PyTorch's safe softmax), with finite gradients
    empty = masked.all(-1, keepdim=True)
    return _where(empty, 0.0, _where(empty, 0.0, scores).softmax(-1))


def _fused_sdpa_composite(query, key, value, attn_mask=None, is_causal=False, scale=1.0):
    weights = _sdpa_weights(query, key, attn_mask, is_causal, scale)
    return weights.matmul(value), weights


# One primitive for scores, masked softmax and the weighted sum, returning the attention weights too,
# which its backward reuses; a backend without a kernel for it gets the decomposition above.
_fused_sdpa = defop("_fused_sdpa(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
                    "bool is_causal=False, float scale=1.0) -> (Tensor, Tensor)", composite=_fused_sdpa_composite)


def _fused_sdpa_backward_composite(grad, query, key, value, weights, scale):
    gv = weights.transpose(-2, -1).matmul(grad)
    gw = grad.matmul(value.transpose(-2, -1))
    gs = weights * (gw - (gw * weights).sum(-1, keepdim=True))
    return gs.matmul(key) * scale, gs.transpose(-2, -1).matmul(query) * scale, gv, gs


# the gradients of query, key and value, and that of the scores (the gradient of a float mask)
_fused_sdpa_backward = defop("_fused_sdpa_backward(Tensor grad, Tensor query, Tensor key, Tensor value, "
                             "Tensor weights, float scale) -> (Tensor, Tensor, Tensor, Tensor)",
                             composite=_fused_sdpa_backward_composite)


@derivative("_fused_sdpa", nondiff_outputs=(1,))
def _(grads, query, key, value, attn_mask, is_causal, scale, result1, needs_input_grad):
    g = grads[0]
    if g is None:
        return None, None, None, None
    if is_grad_enabled() or not _plain(g, query, key, value):
        # create_graph: the decomposed backward is recorded, with the weights computed again from the
        # inputs (the saved ones carry no gradient), so it has gradients of its own
        weights = _sdpa_weights(query, key, attn_mask, is_causal, scale)
        gq, gk, gv, gs = _fused_sdpa_backward_composite(g, query, key, value, weights, scale)
    else:
        gq, gk, gv, gs = _fused_sdpa_backward(g, query, key, value, result1, scale)
    gm = None
    if attn_mask is not None and needs_input_grad[3]:
        gm = sum_to(gs, attn_mask._shape)
    return _sum_to_shape(gq, query), _sum_to_shape(gk, key), _sum_to_shape(gv, value), gm


def _sum_to_shape(g, t):
    return g if g._shape == t._shape else sum_to(g, t._shape)


scaled_dot_product_attention = _document(
    defop("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
          "float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
          check=_check_sdpa, composite=_sdpa, tags=SEEDED),
    "softmax(query @ key^T * scale + mask) @ value over (..., L, E), (..., S, E), (..., S, Ev).\n\n"
    "A bool ``attn_mask`` marks the elements that take part (True), a float one is added to the scores; "
    "``is_causal`` uses the lower-triangular (L, S) mask; ``scale`` defaults to 1 / sqrt(E); ``dropout_p`` "
    "drops attention weights; ``enable_gqa`` repeats each key/value head for a group of query heads. Rows "
    "in which nothing takes part give 0.")
