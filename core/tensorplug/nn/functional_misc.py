"""More of ``tensorplug.nn.functional``: activations, norms, dropouts, ``embedding_bag``, distances and
losses, with PyTorch's arguments, defaults and errors (re-exported by :mod:`tensorplug.nn.functional`).

The activations call the operators of ``tensorplug/ops/nn_extra.py``; the rest are composites of public
tensor ops, so they run on every backend and autograd and vmap go through their pieces.
"""

from __future__ import annotations

import math
import warnings

import tensorplug as _tp

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..ops import ctc as _ctc, nn_extra as _ex
from ..ops.promotion import _pt_name

__all__ = [
    "hardswish", "hardsigmoid", "selu", "selu_", "celu", "celu_", "glu", "prelu", "rrelu", "rrelu_", "softsign",
    "threshold", "threshold_", "hardshrink", "softshrink", "tanhshrink",
    "rms_norm", "instance_norm", "local_response_norm",
    "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "embedding_bag", "cosine_similarity", "pairwise_distance", "pdist",
    "margin_ranking_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss", "cosine_embedding_loss",
    "gaussian_nll_loss", "poisson_nll_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss",
    "multi_margin_loss", "soft_margin_loss", "hinge_embedding_loss", "multi_head_attention_forward", "ctc_loss",
]


def _size(shape):
    return str(tuple(shape))


# -- activations ----------------------------------------------------------------------------------------
def _inplace(fn, input):
    """Write ``fn(input)`` into ``input`` (under autograd ``fn`` reads a copy)."""
    src = input.clone() if input._requires_grad else input
    return input.copy_(fn(src))


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6."""
    return _inplace(_ex.hardswish, input) if inplace else _ex.hardswish(input)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    return _inplace(_ex.hardsigmoid, input) if inplace else _ex.hardsigmoid(input)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with PyTorch's constants (self-normalizing)."""
    return _inplace(_ex.selu, input) if inplace else _ex.selu(input)


def selu_(input):
    """In-place selu."""
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    fn = lambda x: _ex.celu(x, alpha)  # noqa: E731
    return _inplace(fn, input) if inplace else fn(input)


def celu_(input, alpha=1.0):
    """In-place celu."""
    return celu(input, alpha, True)


def glu(input, dim=-1):
    """a * sigmoid(b), where a and b are the first and second halves of ``dim``."""
    return _ex.glu(input, dim)


def prelu(input, weight):
    """x where x > 0, else weight * x; ``weight`` has one element or one per channel (dim 1)."""
    return _ex.prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky relu: slope (lower + upper) / 2, or in training a slope from U(lower, upper) per
    negative element."""
    fn = lambda x: _ex.rrelu(x, lower, upper, training)  # noqa: E731
    return _inplace(fn, input) if inplace else fn(input)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place rrelu."""
    return rrelu(input, lower, upper, training, True)


def softsign(input):
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value."""
    fn = lambda x: _ex.threshold(x, threshold, value)  # noqa: E731
    return _inplace(fn, input) if inplace else fn(input)


def threshold_(input, threshold, value):
    """In-place threshold."""
    return _inplace(lambda x: _ex.threshold(x, threshold, value), input)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return _ex.hardshrink(input, lambd)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    return _ex.softshrink(input, lambd)


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


# -- norms ----------------------------------------------------------------------------------------------
def _opmath(x):
    return x.float() if x._dtype in (_dt.float16, _dt.bfloat16) else x


# machine epsilon per floating dtype (PyTorch's torch.finfo(dtype).eps, rms_norm's default)
_EPS_BY_DTYPE = {_dt.float16: 2.0 ** -10, _dt.bfloat16: 2.0 ** -7, _dt.float32: 2.0 ** -23, _dt.float64: 2.0 ** -52}


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the last ``len(normalized_shape)`` dims, times ``weight``;
    ``eps`` defaults to the machine epsilon of the input's dtype."""
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    nd = len(ns)
    if nd == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if tuple(input._shape[input.dim() - nd:]) != ns or input.dim() < nd:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape [*{', '.join(map(str, ns))}]"
                           f", but got input of size{list(input._shape)}")
    if weight is not None and tuple(weight._shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight._shape)} and normalized_shape = {list(ns)}")
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"rms_norm\" not implemented for '{_pt_name(input._dtype)}'")
    x = _opmath(input)
    if eps is None:
        eps = _EPS_BY_DTYPE[input._dtype]
    dims = tuple(range(input.dim() - nd, input.dim()))
    y = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
    y = y.to(input._dtype)
    return y if weight is None else y * weight


def _verify_spatial_size(shape):
    n = 1
    for s in shape[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {_size(shape)}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each (sample, channel) plane of (N, C, *) over its spatial dims; with ``use_input_stats``
    False, use the running statistics instead. Given running statistics are updated (in place) with the
    batch average of the instance statistics."""
    if input.dim() < 2:
        raise ValueError(f"Expected 2D or higher input (got {input.dim()}D input)")
    if use_input_stats:
        _verify_spatial_size(input._shape)
    c = input._shape[1]
    view = (1, c) + (1,) * (input.dim() - 2)
    dims = tuple(range(2, input.dim()))
    if use_input_stats:
        x = _opmath(input)
        var, mean = _tp.var_mean(x, dims, correction=0, keepdim=True)
        y = ((x - mean) * (var + eps).rsqrt()).to(input._dtype)
        if running_mean is not None or running_var is not None:
            n = input.numel() // (input._shape[0] * c)
            with no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(mean.detach().mean(0).reshape(c) * momentum)
                if running_var is not None:
                    unbiased = var.detach().mean(0).reshape(c) * (n / max(n - 1, 1))
                    running_var.mul_(1 - momentum).add_(unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
        y = (input - running_mean.reshape(view)) * (running_var.reshape(view) + eps).rsqrt()
    if weight is not None:
        y = y * weight.reshape(view)
    if bias is not None:
        y = y + bias.reshape(view)
    return y


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels)^beta (zero padded, as PyTorch)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    _no_half("avg_pool3d_out_frame" if dim > 3 else None, input)
    sq = input * input
    c = input._shape[1]
    zeros = lambda n: _tp.zeros(input._shape[:1] + (n,) + input._shape[2:], dtype=sq._dtype,  # noqa: E731
                                device=sq._device)
    padded = _tp.cat([zeros(size // 2), sq, zeros((size - 1) // 2)], 1)
    div = padded.narrow(1, 0, c)
    for i in range(1, size):
        div = div + padded.narrow(1, i, c)
    if div._dtype.is_floating_point:
        div = div * (alpha / size)
    else:  # PyTorch averages through avg_pool, whose integer kernel truncates the mean
        div = div.div(size, rounding_mode="trunc") * alpha
    div = (div + k) ** beta
    return input / div


def _no_half(kernel, x):
    """PyTorch's error for the CPU kernels that lack float16 and bfloat16."""
    if kernel is not None and x._dtype in (_dt.float16, _dt.bfloat16):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_pt_name(x._dtype)}'")


# -- dropout ----------------------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


_ALPHA = 1.7580993408473766


def _noise_dropout(input, p, training, inplace, feature, alpha):
    """PyTorch's _dropout_impl: a (feature) mask from the RNG, and the alpha-dropout affine correction."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    shape = input._shape[:2] + (1,) * (input.dim() - 2) if feature else input._shape
    noise = _tp.empty(shape, dtype=input._dtype, device=input._device).bernoulli_(1 - p)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = (noise - 1) * (_ALPHA * a) + _ALPHA * a * p
        noise = noise * a
        return input.mul_(noise).add_(b) if inplace else input * noise + b
    noise = noise / (1 - p)
    return input.mul_(noise) if inplace else input * noise


def _feature_dropout(name, nd, input, p, training, inplace):
    _check_p(p)
    d = input.dim()
    if nd == 1:
        if d not in (2, 3):
            raise RuntimeError(
                f"dropout1d: Expected 2D or 3D input, but received a {d}D input. Note that dropout1d exists to "
                "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an "
                "optional batch dimension (i.e. 2D or 3D inputs).")
        batched = d == 3
    else:
        if d not in (nd + 1, nd + 2):
            warnings.warn(
                f"{name}: Received a {d}-D input to {name}, which is deprecated and will result in an error in a "
                f"future release. To retain the behavior and silence this warning, please use dropout instead. "
                f"Note that {name} exists to provide channel-wise dropout on inputs with {nd} spatial dimensions, "
                f"a channel dimension, and an optional batch dimension (i.e. {nd + 1}D or {nd + 2}D inputs).",
                stacklevel=3)
        if nd == 2 and d == 3:
            warnings.warn(
                "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                "dropout1d instead.", stacklevel=3)
        batched = not (nd == 3 and d == 4)
    if batched:
        return _noise_dropout(input, p, training, inplace, True, False)
    out = _noise_dropout(input.unsqueeze(0), p, training, False, True, False).squeeze(0)
    return input.copy_(out) if inplace and out is not input else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or (C, L) with probability ``p``; scale the rest by 1 / (1 - p)."""
    return _feature_dropout("dropout1d", 1, input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) with probability ``p``; scale the rest by 1 / (1 - p)."""
    return _feature_dropout("dropout2d", 2, input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability ``p``."""
    return _feature_dropout("dropout3d", 3, input, p, training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps the mean and variance of selu activations (dropped elements take -alpha * scale)."""
    _check_p(p)
    return _noise_dropout(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels."""
    _check_p(p)
    return _noise_dropout(input, p, training, inplace, True, True)


# -- embedding_bag ------------------------------------------------------------------------------------------
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embedding rows, without building the per-index rows' tensor
    per bag: a 2-D ``input`` holds one bag per row; a 1-D ``input`` is cut into bags at ``offsets``.
    ``per_sample_weights`` (mode "sum") weighs each index; ``padding_idx`` entries are left out (an
    empty bag gives zeros)."""
    if weight._dtype is _dt.int64 and input._dtype.is_floating_point:
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input._shape != per_sample_weights._shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({_size(per_sample_weights._shape)}) is not None, "
                         f"then it must have the same shape as the input ({_size(input._shape)})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        n, L = input._shape
        starts = list(range(0, n * L, L)) if L else [0] * n
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = [int(v) for v in offsets.tolist()]
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError("embedding_bag(sparse=True): tensorplug has no sparse tensors")
    if input._dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {_pt_name(input._dtype)} instead")
    if max_norm is not None:
        with no_grad():
            rows = weight.index_select(0, input)
            norms = _tp.norm(rows, norm_type, 1, keepdim=True)
            weight.index_put_((input,), rows * _tp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0))
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    total = input.numel()
    if starts and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {starts[0]}")
    if starts and starts[-1] > total:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {total}, but got offsets[-1] of "
                           f"{starts[-1]}")
    ends = starts[1:] + [total]
    if include_last_offset:
        starts, ends = starts[:-1], ends[:-1]
    nbags, dim = len(starts), weight._shape[1]
    lengths = [max(e - s, 0) for s, e in zip(starts, ends)]
    width = max(lengths, default=0)
    # a (bags, width) matrix of positions into ``input``; the slots past a bag's end point at 0 and are masked
    pos = [[s + j if j < n else 0 for j in range(width)] for s, n in zip(starts, lengths)]
    valid = [[j < n for j in range(width)] for n in lengths]
    dev = weight._device
    pos_t = _tp.tensor(pos, dtype=_dt.int64, device=dev).reshape(nbags, width)
    keep = _tp.tensor(valid, dtype=_dt.bool, device=dev).reshape(nbags, width)
    idx = input.to(_dt.int64)[pos_t.reshape(-1)].reshape(nbags, width) if total else pos_t
    if padding_idx is not None:
        v = weight._shape[0]
        if not -v <= padding_idx < v:
            raise AssertionError(f"padding_idx must be within the number of embeddings, -{v} through {v - 1}, but got "
                                 f"{padding_idx}")
        keep = keep & (idx != padding_idx % v)
    rows = weight.index_select(0, idx.reshape(-1)).reshape(nbags, width, dim)
    if mode == "max":
        filled = rows.masked_fill(keep.logical_not().unsqueeze(-1), -math.inf)
        out = filled.amax(1) if width else rows.sum(1)
        return out.masked_fill(keep.any(1).logical_not().unsqueeze(-1), 0.0) if width else out
    w = keep.to(weight._dtype)
    if per_sample_weights is not None:
        w = w * (per_sample_weights[pos_t.reshape(-1)].reshape(nbags, width) if total else w)
    out = (rows * w.unsqueeze(-1)).sum(1)
    if mode == "mean":
        out = out / keep.sum(1, keepdim=True).clamp_min(1).to(out._dtype)
    return out


# -- distances -------------------------------------------------------------------------------------------------
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along ``dim`` (the inputs broadcast)."""
    shape = _tp.broadcast_shapes(x1._shape, x2._shape)
    a, b = x1.expand(shape), x2.expand(shape)
    common = _tp.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_pt_name(common)}")
    na = _tp.norm(a, 2, dim, keepdim=True)
    nb = _tp.norm(b, 2, dim, keepdim=True)
    return ((a / na.clamp_min(eps)) * (b / nb.clamp_min(eps))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim."""
    d = max(x1.dim(), x2.dim())
    if d == 0:
        return _tp.norm(x1 - x2 + eps, p)
    return _tp.norm(x1 - x2 + eps, p, d - 1, keepdim=keepdim)


def _pair_indices(n):
    i, j = [], []
    for a in range(n):
        for b in range(a + 1, n):
            i.append(a)
            j.append(b)
    return i, j


def pdist(input, p=2):
    """The ``p``-norm distances between the rows of the 2-D ``input``, pair (i, j > i) by pair, row-major."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if not input._dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    _no_half("pdist", input)
    i, j = _pair_indices(input._shape[0])
    if not i:
        # empty, but a differentiable result as PyTorch's (a view of no element of the input)
        return input.reshape((-1,))[:0] * 0
    dev = input._device
    diff = input.index_select(0, _tp.tensor(i, dtype=_dt.int64, device=dev)) - \
        input.index_select(0, _tp.tensor(j, dtype=_dt.int64, device=dev))
    return _tp.norm(diff, p, 1)


# -- losses ---------------------------------------------------------------------------------------------------
def _legacy(size_average, reduce):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  UserWarning, stacklevel=4)
    return ret


def _reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        return _legacy(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_size(input1._shape)}, input2: {_size(input2._shape)}, target: "
                           f"{_size(target._shape)} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where target is 1, max(0, margin - x) where target is -1 (summed where it is neither)."""
    reduction = _reduction(reduction, size_average, reduce)
    zero = _tp.zeros((), dtype=input._dtype, device=input._device)
    margin_part = _tp.where(target != 1, (margin - input).clamp_min(0), zero)
    self_part = _tp.where(target != -1, input, zero)
    return _reduce(margin_part + self_part, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), averaged over every element for "mean"."""
    reduction = _reduction(reduction, size_average, reduce)
    z = -input * target  # that order: a shape mismatch names input as tensor a, as PyTorch
    # log1p(exp(z)) without overflow
    loss = z.clamp_min(0) + (-z.abs()).exp().log1p()
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1."""
    reduction = _reduction(reduction, size_average, reduce)
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dim() == 0 and input1.dim() != 1 or target.dim() == 1 and input1.dim() != 2:
        raise RuntimeError(f"{target.dim()}D target tensor expects {target.dim() + 1}D input tensors, but found "
                           f"inputs with sizes {list(input1._shape)} and {list(input2._shape)}.")
    if input1._shape != input2._shape:
        raise RuntimeError(f"The size of tensor a ({input1._shape[-1]}) must match the size of tensor b "
                           f"({input2._shape[-1]}) at non-singleton dimension {input1.dim() - 1}")
    d = input1.dim() - 1
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    m1 = (input1 * input1).sum(d) + eps
    m2 = (input2 * input2).sum(d) + eps
    cos = prod / (m1 * m2).sqrt()
    zero = _tp.zeros((), dtype=cos._dtype, device=cos._device)
    loss = _tp.where(target == 1, 1 - cos, zero) + _tp.where(target == -1, (cos - margin).clamp_min(0), zero)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)) with the ``p``-norm pairwise distance (``swap``: d(a, n) is
    min(d(a, n), d(p, n)))."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {float(margin)}")
    reduction = _reduction(reduction, size_average, reduce)
    a, b, c = anchor.dim(), positive.dim(), negative.dim()
    if not (a == b == c):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {b}D, and negative {c}D inputs")
    dp = pairwise_distance(anchor, positive, p, eps)
    dn = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dn = _tp.minimum(dn, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + dp - dn).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """The triplet loss with any ``distance_function`` (default :func:`pairwise_distance`)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, b, c = anchor.dim(), positive.dim(), negative.dim()
    if not (a == b == c):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {b}D, and negative {c}D inputs")
    dist = pairwise_distance if distance_function is None else distance_function
    dp, dn = dist(anchor, positive), dist(anchor, negative)
    if swap:
        dn = _tp.minimum(dn, dist(positive, negative))
    return _reduce((margin + dp - dn).clamp_min(0), reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 * (log(var) + (input - target)^2 / var) (+ 0.5 * log(2 pi) with ``full``); ``var`` is clamped
    at ``eps`` (without gradient through the clamp), and may lack the last dim or have size 1 in one."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _tp.full(input._shape, float(var), dtype=input._dtype, device=input._device)
    elif (var < 0).any().item():
        raise ValueError("var has negative entry/entries")
    if var._shape != input._shape:
        if input._shape[:-1] == var._shape:
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input._shape, var._shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(input) - target * input (``log_input``), or input - target * log(input + eps); ``full`` adds
    Stirling's approximation of log(target!) where target > 1."""
    reduction = _reduction(reduction, size_average, reduce)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        safe = target.masked_fill(target <= 1, 2.0)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + stirling.masked_fill(target <= 1, 0.0)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy of sigmoid(input) per class, averaged over the classes (the last dim)."""
    reduction = _reduction(reduction, size_average, reduce)

    def logsig(x):
        return (x.clamp_max(0)) - (-x.abs()).exp().log1p()
    loss = -(target * logsig(input) + (1 - target) * logsig(-input))
    if weight is not None:
        loss = loss * weight
    d = input.dim() - 1
    c = input._shape[d] if input.dim() else 1
    loss = loss.sum(d) / c if input.dim() else loss
    return _reduce(loss, reduction)


def _margin_shapes(name, input, target):
    if input.dim() > 2 or (input.dim() and input._shape[-1] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input._shape)}")
    n = input._shape[0] if input.dim() == 2 else 1
    c = input._shape[-1] if input.dim() else 1
    return n, c


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """sum over i != y of max(0, margin - x[y] + x[i])^p / C (times weight[y]), per sample."""
    reduction = _reduction(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    n, c = _margin_shapes("multi_margin_loss", input, target)
    if target.numel() != n or target.dim() > 1:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target._shape)}. Input "
                           f"has shape {list(input._shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight._shape)}")
    if target._dtype is not _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {_pt_name(target._dtype)}")
    _no_half("multi_margin_loss_cpu_kernel", input)
    x = input.reshape(n, c)
    t = target.reshape(n)
    if n and ((t < 0) | (t >= c)).any().item():
        raise RuntimeError("target out of range")
    xy = x.gather(1, t.unsqueeze(1))
    m = (margin - xy + x).clamp_min(0)
    if p == 2:
        m = m * m
    if weight is not None:
        m = m * weight.index_select(0, t).unsqueeze(1)
    not_y = _tp.arange(c, device=x._device).unsqueeze(0) != t.unsqueeze(1)
    loss = (m * not_y.to(m._dtype)).sum(1) / c
    if input.dim() < 2:
        loss = loss.reshape(input._shape[:0] if input.dim() == 0 else ())
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over target classes j (the entries of ``target`` before its first -1) and non-target classes i of
    max(0, 1 - (x[j] - x[i])) / C, per sample."""
    reduction = _reduction(reduction, size_average, reduce)
    n, c = _margin_shapes("multilabel_margin_loss", input, target)
    if (target.dim() > 1 or target.numel() != c) if input.dim() <= 1 else target._shape != input._shape:
        raise RuntimeError(f"inconsistent target size: {list(target._shape)} for input of size: "
                           f"{list(input._shape)}")
    _no_half("multilabel_margin_loss_forward_out_frame", input)
    x = input.reshape(n, c)
    rows = target.reshape(n, c).tolist()
    counts = []
    for row in rows:
        cnt = [0] * c
        for v in row:
            if v < 0:
                break
            if v >= c:
                raise RuntimeError("target index out of range")
            cnt[v] += 1
        counts.append(cnt)
    cnt = _tp.tensor(counts, dtype=x._dtype, device=x._device).reshape(n, c)
    non_target = (cnt == 0).to(x._dtype)
    m = (1 - x.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)  # [n, j, i]
    loss = (m * cnt.unsqueeze(2) * non_target.unsqueeze(1)).sum((1, 2)) / c
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


# -- multi-head attention -----------------------------------------------------------------------------------
def _float_mask(mask, dtype, name):
    if mask is None:
        return None
    if mask._dtype is _dt.bool:
        return _tp.zeros(mask._shape, dtype=dtype, device=mask._device).masked_fill(mask, -math.inf)
    if not mask._dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """PyTorch's functional multi-head attention: inputs (L, N, E) / (S, N, E) or unbatched (L, E); returns
    ``(output, weights)`` (weights averaged over the heads unless ``average_attn_weights=False``, None
    unless ``need_weights``). Bool masks mark the positions that do *not* take part."""
    batched = query.dim() == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query._shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    E = embed_dim
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                                 "v_proj_weight is None")
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        wq, wk, wv = in_proj_weight[:E], in_proj_weight[E:2 * E], in_proj_weight[2 * E:]
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = in_proj_bias[:E], in_proj_bias[E:2 * E], in_proj_bias[2 * E:]
    q = _tp.linear(query, wq, bq)
    k = _tp.linear(key, wk, bk)
    v = _tp.linear(value, wv, bv)
    attn_mask = _float_mask(attn_mask, q._dtype, "attn_mask")
    key_padding_mask = _float_mask(key_padding_mask, q._dtype, "key_padding_mask")
    src_len = k._shape[0]
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask._shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {_size(attn_mask._shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask._shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {_size(attn_mask._shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    def pad_masks(am, kpm):
        z = lambda m: _tp.cat([m, _tp.zeros(m._shape[:-1] + (1,), dtype=m._dtype, device=m._device)], -1)  # noqa
        return (None if am is None else z(am)), (None if kpm is None else z(kpm))
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = _tp.cat([k, bias_k.expand(1, bsz, E)])
        v = _tp.cat([v, bias_v.expand(1, bsz, E)])
        attn_mask, key_padding_mask = pad_masks(attn_mask, key_padding_mask)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k._shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k
    v = v.reshape(v._shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v
    if add_zero_attn:
        zshape = (bsz * num_heads, 1, head_dim)
        k = _tp.cat([k, _tp.zeros(zshape, dtype=k._dtype, device=k._device)], 1)
        v = _tp.cat([v, _tp.zeros(zshape, dtype=v._dtype, device=v._device)], 1)
        attn_mask, key_padding_mask = pad_masks(attn_mask, key_padding_mask)
    src_len = k._shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask._shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{_size(key_padding_mask._shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = (q * (1.0 / math.sqrt(head_dim))).matmul(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = _tp.nn.functional.dropout(weights, dropout_p)
        out = weights.matmul(v)
    else:
        if attn_mask is not None and attn_mask._shape[0] == 1:
            mask = attn_mask.unsqueeze(0)
        elif attn_mask is not None:
            mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
        else:
            mask = None
        out = _tp.nn.functional.scaled_dot_product_attention(
            q.reshape(bsz, num_heads, tgt_len, head_dim), k.reshape(bsz, num_heads, src_len, head_dim),
            v.reshape(bsz, num_heads, src_len, head_dim), mask, dropout_p).reshape(bsz * num_heads, tgt_len, head_dim)
        weights = None
    out = out.transpose(0, 1).reshape(tgt_len * bsz, E)
    out = _tp.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, E)
    if weights is not None:
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            weights = weights.squeeze(0)
    if not batched:
        out = out.squeeze(1)
    return out, weights


# -- CTC ------------------------------------------------------------------------------------------------------
def _lengths(v):
    if isinstance(v, int):
        return [v]
    if hasattr(v, "tolist"):
        out = v.tolist()
        return [out] if isinstance(out, int) else [int(n) for n in out]
    return [int(n) for n in v]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The connectionist temporal classification loss of log-probabilities (T, N, C) (or (T, C)) against
    targets (N, S) padded or 1-D concatenated; ``input_lengths`` and ``target_lengths`` per sample (tensors
    or sequences, read on the host). "mean" divides each sample's loss by its target length, then
    averages; ``zero_infinity`` makes impossible alignments' losses and gradients 0."""
    reduction = _reduction(reduction)
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    il, tl = _lengths(input_lengths), _lengths(target_lengths)
    nll, _ = _ctc.ctc_loss(log_probs, targets, il, tl, blank, zero_infinity)
    if reduction == "mean":
        div = _tp.tensor(tl, dtype=nll._dtype, device=nll._device).clamp_min(1)
        return (nll / div).mean()
    if reduction == "sum":
        return nll.sum()
    return nll.squeeze(0) if unbatched else nll
