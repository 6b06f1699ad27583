"""``tensorplug.nn.functional``: the layers and losses as functions.

Convolution, pooling, normalization, embedding, the class-index losses and
scaled dot-product attention are operators (``tensorplug/ops/nn_ops.py``):
the functions here convert PyTorch's Python-level arguments (``None``
strides, string reductions, ``max_norm``) and call the operator, whose
decomposition runs unless a backend registered a kernel of its own. The other
functions are composites of public tensor ops (no numpy), so they run on any
backend and autograd differentiates them through their pieces.

Argument errors are PyTorch's (type and message), checked before any work.
"""

from __future__ import annotations

import math
import warnings

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..ops.promotion import _pt_name
from ..ops import nn_ops as _ops
from ..ops.padding import pad
from ..ops import nn_more as _nn_more
from .modules.utils import _single, _pair
import tensorplug as _tp

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "pad",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "batch_norm", "layer_norm", "group_norm", "dropout", "embedding", "one_hot", "normalize",
    "scaled_dot_product_attention",
    "relu", "relu_", "relu6", "elu", "leaky_relu", "gelu", "silu", "mish", "softplus", "hardtanh", "tanh",
    "sigmoid", "logsigmoid", "softmax", "softmin", "log_softmax",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "huber_loss", "smooth_l1_loss", "kl_div",
]



def _size(shape):
    return str(tuple(shape))


# -- linear ---------------------------------------------------------------------------------
def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: one matmul and one add (weight: out_features x in_features)."""
    return _tp.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = input1 @ weight[o] @ input2 + bias[o]`` (weight: out x in1 x in2; one dtype for all)."""
    ts = (("input1", input1), ("input2", input2), ("weight", weight)) + ((("bias", bias),) if bias is not None else ())
    if any(t._dtype is not input1._dtype for _, t in ts):
        raise RuntimeError("All tensors must have the same dtype, got " +
                           ", ".join(f"{n}: {_dt.c_type_name(t._dtype)}" for n, t in ts))
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


# -- padding: ops/padding.py (the ops modules use it too) ---------------------------------------------


# -- convolution ---------------------------------------------------------------------------------
def _ints(v):
    """Lists become tuples (what the operators take for int[N]); ints and tuples pass as they are."""
    return tuple(v) if v.__class__ is list else v


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) of ``input`` (N, C_in, L) or (C_in, L) with ``weight``
    (C_out, C_in / groups, k). ``padding`` is an int, a 1-tuple, "valid" or "same"."""
    if padding.__class__ is str:
        return _ops.conv1d_padding(input, weight, bias, _ints(stride), padding, _ints(dilation), groups)
    return _ops.conv1d(input, weight, bias, _ints(stride), _ints(padding), _ints(dilation), groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) of ``input`` (N, C_in, H, W) or (C_in, H, W) with ``weight``
    (C_out, C_in / groups, kh, kw). ``stride``, ``padding``, ``dilation`` are ints or pairs; ``padding`` may
    also be "valid" or "same" (stride 1 only)."""
    if padding.__class__ is str:
        return _ops.conv2d_padding(input, weight, bias, _ints(stride), padding, _ints(dilation), groups)
    return _ops.conv2d(input, weight, bias, _ints(stride), _ints(padding), _ints(dilation), groups)


# -- pooling -------------------------------------------------------------------------------------------
def _stride(stride):
    return () if stride is None else _ints(stride)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over sliding windows of the last dim of (N, C, L) or (C, L); ``stride`` defaults to
    ``kernel_size``. With ``return_indices`` also the flat position of each maximum in its row."""
    op = _ops.max_pool1d_with_indices if return_indices else _ops.max_pool1d
    return op(input, _ints(kernel_size), _stride(stride), _ints(padding), _ints(dilation), ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over sliding windows of (N, C, H, W) or (C, H, W); ``stride`` defaults to ``kernel_size``; padding
    counts as -inf. With ``return_indices`` also each maximum's flat position ``h * W + w`` in its plane."""
    op = _ops.max_pool2d_with_indices if return_indices else _ops.max_pool2d
    return op(input, _ints(kernel_size), _stride(stride), _ints(padding), _ints(dilation), ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over sliding windows of the last dim of (N, C, L) or (C, L); zero padding counts in the mean
    unless ``count_include_pad=False``."""
    return _ops.avg_pool1d(input, _ints(kernel_size), _stride(stride), _ints(padding), ceil_mode, count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over sliding windows of (N, C, H, W) or (C, H, W); zero padding counts in the mean unless
    ``count_include_pad=False``; ``divisor_override`` replaces the window size as divisor."""
    return _ops.avg_pool2d(input, _ints(kernel_size), _stride(stride), _ints(padding), ceil_mode, count_include_pad,
                           divisor_override)


def _output_size_fits(input, output_size):
    """PyTorch's Python wrappers of the 2-d and 3-d adaptive pools: a list of sizes needs more input dims."""
    if isinstance(output_size, (list, tuple)) and input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")


def _adaptive_avg_pool(nd, input, output_size):
    name = f"adaptive_avg_pool{nd}d"
    if nd == 1 and isinstance(output_size, (list, tuple)) and len(output_size) != 1:
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain one int "
                           f"(got {len(output_size)})")
    if nd == 2:
        _output_size_fits(input, output_size)
    shape = input._shape
    if input.dim() not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                               f"'self' (while checking arguments for {name})")
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(shape)}")
    # the spatial dims may not be empty (PyTorch runs the 1-d op as the 2-d one on an (N, C, 1, L) view)
    shown = shape[:-1] + (1,) + shape[-1:] if nd == 1 else shape
    for i in range(len(shown) - 2, len(shown)):
        if shown[i] == 0:
            raise RuntimeError(f"adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, "
                               f"but input has sizes {list(shown)} with dimension {i} being empty")
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f'"adaptive_avg_pool2d" not implemented for \'{_pt_name(input._dtype)}\'')
    sizes = input._shape[-nd:]
    out = _single(output_size) if nd == 1 else _pair(output_size)
    if len(out) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    out = tuple(s if o is None else o for o, s in zip(out, sizes))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{list(out)}")
    return _nn_more.adaptive_mean(input, out)


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
    An empty batch gives an empty result and, as in PyTorch, leaves the running statistics as they are.
    """
    if training and input.dim() >= 2:
        _verify_batch_size(input._shape)
    return _ops.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, True)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the last ``len(normalized_shape)`` dims, then scale by ``weight`` and shift by ``bias``
    (both of shape ``normalized_shape``)."""
    ns = (normalized_shape,) if normalized_shape.__class__ is int else tuple(normalized_shape)
    return _ops.layer_norm(input, ns, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize (N, C, *) over each group of C / num_groups channels (and the spatial dims), then apply the
    per-channel ``weight`` and ``bias``."""
    return _ops.group_norm(input, num_groups, weight, bias, eps)


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
    if padding_idx:  # (0 needs no size: a weight of the wrong rank is then the op's error)
        if not weight.dim():
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        v = weight._shape[0]
        if not -v <= padding_idx < v:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= v
    if max_norm is not None and weight.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.dim()}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for embedding_renorm_)")
    _ops._check_embedding(weight, input, -1, scale_grad_by_freq, sparse)
    if max_norm is not None:
        _embedding_renorm_(weight, input.reshape(-1), max_norm, norm_type)
    return _ops.embedding(weight, input, -1 if padding_idx is None else padding_idx, scale_grad_by_freq, sparse)


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


scaled_dot_product_attention = _ops.scaled_dot_product_attention


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
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), without overflow (0 at +inf, -inf at -inf)."""
    a = input.abs()
    # (x - |x|) / 2 is min(x, 0) with the right derivative (1/2) at 0; at +inf it is inf - inf, so 0 there
    return ((input - a) * 0.5).masked_fill(input == math.inf, 0) - (-a).exp().log1p()


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


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class indices: ``-input[n, target[n]] * weight[target[n]]``.

    ``input`` holds log-probabilities, (N, C), (C,) or (N, C, d1, ...); ``target`` class indices
    (int64). Targets equal to ``ignore_index`` contribute nothing; "mean" divides by the total weight of
    the other targets.
    """
    reduction = _reduction(reduction, size_average, reduce)
    return _ops.nll_loss(input, target, weight, _ops.REDUCTIONS[reduction], ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy between the logits ``input`` (class dim 1, or 0 for a 1-D input) and ``target``.

    ``target`` holds class indices (int64; shape of ``input`` without the class dim), or class
    probabilities (floating, the shape of ``input``). ``weight`` rescales each class; ``ignore_index``
    skips index targets; ``label_smoothing`` mixes the target with the uniform distribution.
    """
    reduction = _reduction(reduction, size_average, reduce)
    return _ops.cross_entropy_loss(input, target, weight, _ops.REDUCTIONS[reduction], ignore_index, label_smoothing)


def _float_loss(kernel, input, target):
    """PyTorch's error for a pointwise loss of two integer tensors (their kernels are floating only)."""
    d = _tp.result_type(input, target)
    if not d.is_floating_point and d is not _tp.bool:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_pt_name(d)}'")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)^2, reduced; ``weight`` (input's shape) weighs each element ("mean": by sum(weight))."""
    _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    _float_loss("mse", input, target)
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
    """0.5 * d^2 where |d| < delta, else delta * (|d| - delta / 2), for d = input - target (``delta`` > 0)."""
    _warn_size(input, target)
    reduction = _reduction(reduction)
    if not delta > 0:  # NaN too
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _float_loss("huber", input, target)
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
    _float_loss("smooth_l1", input, target)
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
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"log_sigmoid\" not implemented for '{_pt_name(input._dtype)}'")
    ls = logsigmoid(input)
    if pos_weight is not None:
        ls = ls * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * input - ls
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t * log(x) + (1 - t) * log(1 - x)) for probabilities ``input``; each log is clamped at -100.

    As in PyTorch, ``target`` has the dtype of ``input`` (a floating one), and every element of both
    lies in [0, 1] (NaN does not): the first element outside raises, naming ``input`` or ``target``.
    """
    reduction = _reduction(reduction, size_average, reduce)
    if target._shape != input._shape:
        raise ValueError(f"Using a target size ({_size(target._shape)}) that is different to the input size "
                         f"({_size(input._shape)}) is deprecated. Please ensure they have the same size.")
    if target._dtype is not input._dtype:
        raise RuntimeError(f"Found dtype {_pt_name(target._dtype)} but expected {_pt_name(input._dtype)}")
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for '{_pt_name(input._dtype)}'")
    bad_input = ((input >= 0) & (input <= 1)).logical_not()
    bad = bad_input | ((target >= 0) & (target <= 1)).logical_not()
    if bad.any().item():
        first = bad.reshape(-1).to(_tp.uint8).argmax()
        name = "input" if bad_input.reshape(-1)[first].item() else "target"
        raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    loss = -(target * input.log().clamp_min(-100) + (1 - target) * (1 - input).log().clamp_min(-100))
    if weight is not None:
        loss = loss * (weight if weight._dtype is loss._dtype else weight.to(loss._dtype))
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
    if not (input._dtype.is_floating_point and target._dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # PyTorch's xlogy(t, t): 0 where the target is 0 (log of 1 there keeps the gradient finite), NaN
        # where it is negative
        safe = target.masked_fill(target <= 0, 1.0).masked_fill(target < 0, math.nan)
        loss = target * safe.log() - target * input
    out = _reduce(loss, red)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input._shape[0]
    return out



# -- the convolution family beyond conv1d/conv2d (ops in tensorplug/ops/nn_conv_extra.py) ----------------
from ..ops import nn_conv_extra as _conv_ops  # noqa: E402  (this section's ops)

__all__ += ["conv3d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold", "pixel_shuffle", "pixel_unshuffle"]


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) of ``input`` (N, C_in, D, H, W) or (C_in, D, H, W) with ``weight``
    (C_out, C_in / groups, kd, kh, kw); ``padding`` may also be "valid" or "same" (stride 1 only)."""
    if padding.__class__ is str:
        return _conv_ops.conv3d_padding(input, weight, bias, _ints(stride), padding, _ints(dilation), groups)
    return _conv_ops.conv3d(input, weight, bias, _ints(stride), _ints(padding), _ints(dilation), groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution of ``input`` (N, C_in, L) or (C_in, L) with ``weight``
    (C_in, C_out / groups, k): the gradient of conv1d with respect to its input."""
    return _conv_ops.conv_transpose1d(input, weight, bias, _ints(stride), _ints(padding), _ints(output_padding),
                                      groups, _ints(dilation))


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution of ``input`` (N, C_in, H, W) or (C_in, H, W) with ``weight``
    (C_in, C_out / groups, kh, kw): the gradient of conv2d with respect to its input; the output is
    ``(H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1`` high (and so wide)."""
    return _conv_ops.conv_transpose2d(input, weight, bias, _ints(stride), _ints(padding), _ints(output_padding),
                                      groups, _ints(dilation))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of (N, C, H, W) or (C, H, W) as columns: (N, C * kh * kw, L), L the number of
    blocks (im2col)."""
    return _conv_ops.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The inverse layout of ``unfold``: blocks (N, C * kh * kw, L) summed into (N, C, *output_size) (col2im);
    overlapping blocks add up."""
    return _conv_ops.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding),
                            _pair(stride))


def pixel_shuffle(input, upscale_factor):
    """(*, C * r * r, H, W) to (*, C, H * r, W * r) with ``r = upscale_factor``."""
    return _conv_ops.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H * r, W * r) to (*, C * r * r, H, W) with ``r = downscale_factor``."""
    return _conv_ops.pixel_unshuffle(input, downscale_factor)


# -- resampling ----------------------------------------------------------------------------------------------
__all__ += ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_INTERP_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_LINEAR_NDIM = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _area(input, output_size):
    nd = input.dim() - 2
    if nd == 1:
        return adaptive_avg_pool1d(input, output_size)
    if nd == 2:
        return adaptive_avg_pool2d(input, output_size)
    # box averages are separable: (H, W) with the depth folded into the channels, then the depth
    n, c, d = input._shape[:3]
    x = adaptive_avg_pool2d(input.reshape((n, c * d) + input._shape[3:]), output_size[1:])
    x = x.reshape((n, c, d, -1)).transpose(2, 3)
    x = adaptive_avg_pool1d(x.reshape(n, -1, d), output_size[0])
    return x.reshape((n, c) + tuple(output_size[1:]) + (output_size[0],)).permute(0, 1, 4, 2, 3).contiguous()


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample the spatial dims of (N, C, *spatial) to ``size`` or by ``scale_factor``.

    ``mode``: "nearest", "nearest-exact", "linear" (3-D input), "bilinear" / "bicubic" (4-D), "trilinear"
    (5-D) or "area" (adaptive average pooling). ``align_corners`` (interpolating modes only) maps the corner
    pixels onto each other; ``recompute_scale_factor`` derives the source positions from the output size
    instead of the given scales. ``antialias=True`` is not supported.
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | "
                             "bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(isinstance(v, int) or isinstance(v, _tp.Tensor) and not v.dtype.is_floating_point
                       for v in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(v) for v in size]}")
            output_size = [int(v) for v in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of "
                                 f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                                 "format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if antialias:
        raise NotImplementedError(f"interpolate: antialias=True is not supported (mode '{mode}')")
    if mode in _LINEAR_NDIM and input.dim() in (3, 4, 5) and input.dim() != _LINEAR_NDIM[mode]:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR_NDIM[mode]}D input")
    if mode == "area" and input.dim() in (3, 4, 5):
        return _area(input, output_size)
    op = _conv_ops.UPSAMPLE.get((mode, dim))
    if op is None or mode == "lanczos":
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  f"the modes: {_INTERP_MODES} (got {mode})")
    if mode in ("nearest", "nearest-exact"):
        return op(input, output_size, scale_factors)
    return op(input, output_size, align_corners, scale_factors)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode, align_corners)``."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode="nearest")``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- adaptive max pooling, affine grids and grid sampling --------------------------------------------------------
__all__ += ["adaptive_max_pool1d", "adaptive_max_pool2d", "affine_grid", "grid_sample"]


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) or (C, L) to length ``output_size`` (PyTorch's windows); with
    ``return_indices`` also each maximum's position."""
    out, idx = _conv_ops.adaptive_max_pool1d(input, _single(output_size))
    return (out, idx) if return_indices else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of (N, C, H, W) or (C, H, W) to ``output_size`` (an int or a pair; None keeps a dim); with
    ``return_indices`` also each maximum's flat position ``h * W + w``."""
    _output_size_fits(input, output_size)
    out = _pair(output_size)
    out = tuple(input.shape[-2 + i] if o is None else o for i, o in enumerate(out)) if len(out) == 2 else out
    res, idx = _conv_ops.adaptive_max_pool2d(input, out)
    return (res, idx) if return_indices else res


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
                  "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample "
                  "for details.")


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) of the batch of affine maps ``theta`` (N, 2, 3) for an output of ``size``
    (N, C, H, W); (N, D, H, W, 3) of (N, 3, 4) for a 5-D size. Coordinates are normalized to [-1, 1]."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) in (4, 5):
        r, c = (2, 3) if len(size) == 4 else (3, 4)
        if theta.dim() != 3 or theta.shape[-2] != r or theta.shape[-1] != c:
            raise ValueError(f"Expected a batch of {len(size) - 2}D affine matrices of shape Nx{r}x{c} for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation of "
                      "affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _conv_ops.affine_grid_generator(theta, size, align_corners)


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample (N, C, H, W) at the normalized (x, y) locations of ``grid`` (N, Ho, Wo, 2), -1 and 1 being the
    edges (``align_corners=False``) or the centres (True) of the corner pixels. ``mode`` "bilinear" or
    "nearest" ("bicubic" is not supported); ``padding_mode`` "zeros", "border" or "reflection". 5-D inputs
    (N, C, D, H, W) take a grid (N, Do, Ho, Wo, 3) of (x, y, z) and sample trilinearly."""
    if mode not in _GRID_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in _GRID_PADDING:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if input.dim() == 5:  # volumetric: trilinear or nearest (tensorplug/ops/nn_more.py)
        return _nn_more.grid_sampler_3d(input, grid, _GRID_MODES[mode], _GRID_PADDING[padding_mode], align_corners)
    return _conv_ops.grid_sampler_2d(input, grid, _GRID_MODES[mode], _GRID_PADDING[padding_mode], align_corners)


__all__ += ["max_pool3d", "avg_pool3d"]


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over sliding windows of (N, C, D, H, W) or (C, D, H, W); ``stride`` defaults to ``kernel_size``.
    With ``return_indices`` also each maximum's flat position ``(t * H + h) * W + w``."""
    op = _conv_ops.max_pool3d_with_indices if return_indices else _conv_ops.max_pool3d
    return op(input, _ints(kernel_size), _stride(stride), _ints(padding), _ints(dilation), ceil_mode)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over sliding windows of (N, C, D, H, W) or (C, D, H, W), with avg_pool2d's rules."""
    return _conv_ops.avg_pool3d(input, _ints(kernel_size), _stride(stride), _ints(padding), ceil_mode,
                                count_include_pad, divisor_override)
# -- more activations, norms, dropouts, embedding_bag, distances and losses (functional_misc.py) -----------------
from .functional_misc import *  # noqa: E402,F401,F403
from .functional_misc import __all__ as _misc_all  # noqa: E402
__all__ += _misc_all
# -- channel_shuffle, max_unpool, 3-d adaptive pools, conv_transpose3d (functional_more.py) ---------------------
from .functional_more import *  # noqa: E402,F401,F403
from .functional_more import __all__ as _more_all  # noqa: E402
__all__ += _more_all
