"""Op database entries of the nn misc functions: the activations of ``ops/nn_extra.py``, the norms,
distances and losses of ``nn/functional_misc.py`` (CTC included), ``tensorplug.cdist`` and the LSTM
recurrence.

References compute in float64 with numpy and cast to the input's dtype. Gradient samples take their
values from a grid that keeps off every kink and jump of these functions (0, +-0.5, +-3, the thresholds
used below).
"""

from __future__ import annotations

import math

import numpy as np

import tensorplug as tp

from . import samples as S
from .samples import small_when_grad as _small_when_grad
from .opinfo import OP_DB, OpInfo, SampleInput
from .samples import FLOATING, make_tensor, index_tensor
from ..nn import functional as F
from ..ops import nn_extra as _ex
from .samples import error_input as _err, errors_of as _errors

# -- the entry helpers (op_db.py imports this module, so it cannot import them from there) --------------------
_NN_TOL = {"atol": 2e-2, "rtol": 2e-2}  # reduced-precision sums round at every step, in PyTorch and here alike


def _add(name, op, ref, dtypes, samples, **kw):
    info = OpInfo(name=name, op=op, ref=ref, dtypes=tuple(dtypes), sample_inputs=_small_when_grad(samples), **kw)
    OP_DB.append(info)
    return info


def _nn(name, ref, samples, **kw):
    dtypes = kw.pop("dtypes", FLOATING)
    return _add(f"nn.functional.{name}", getattr(F, name.partition(".")[0]), ref, dtypes, samples, **kw)


def _random(name, op, dtypes, samples, **kw):
    return _add(name, op, None, dtypes, samples, random=True, supports_autograd=False, **kw)


def _t(shape, dtype=tp.float32, seed=0, **kw):
    return make_tensor(shape, dtype, seed=seed, **kw)


def _not_impl(kernel, dtype_name):
    return f'"{kernel}(_vml)?(_cpu)?" not implemented for \'{dtype_name}\''


def _reduced(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


_F32_64 = (tp.float32, tp.float64)
# values at least 0.2 from the kinks at 0, +-0.5 (the shrinks), +-3 (hardswish), 0.1 (threshold)
_GRID = np.array([-3.7, -2.6, -1.9, -1.3, -0.8, -0.25, 0.3, 0.75, 1.2, 1.7, 2.4, 3.5])


def _vals(shape, seed, scale=1.0):
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    return (rng.choice(_GRID, n) * scale).reshape(shape)


def _mk(shape, dtype, seed, requires_grad, scale=1.0, **kw):
    return make_tensor(shape, dtype, values=_vals(shape, seed, scale), seed=seed, requires_grad=requires_grad, **kw)


def _unary_samples(extra=({},), scale=1.0):
    def sample_inputs(device, dtype, requires_grad):
        for i, kw in enumerate(extra):
            yield SampleInput(_mk((3, 4), dtype, i, requires_grad, scale), (), dict(kw), name=f"matrix{i}")
        yield SampleInput(_mk((2, 3), dtype, 7, requires_grad, scale, transposed=True), (), dict(extra[0]),
                          name="transposed")
        yield SampleInput(_mk((5,), dtype, 8, requires_grad, scale, noncontiguous=True), (), dict(extra[0]),
                          name="stepped")
        yield SampleInput(_mk((), dtype, 9, requires_grad, scale), (), dict(extra[0]), name="scalar")
    return sample_inputs


def _unary(fn):
    def ref(x, *args, **kw):
        return S.cast(fn(S.f64(x), *args, **kw), x.dtype)
    return ref


def _sigmoid(v):
    return 0.5 * np.tanh(0.5 * v) + 0.5


_SA, _SS = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _float_error(name, kernel, *args, **kw):
    return lambda: _err(NotImplementedError, _not_impl(kernel, "Long"), _t((3,), tp.int64), *args, **kw)


# -- activations ----------------------------------------------------------------------------------------
for _name, _fn, _kws, _errs in (
        ("hardswish", lambda v: v * np.clip(v + 3, 0, 6) / 6, ({},), (_float_error("hardswish", "hardswish"),)),
        ("hardsigmoid", lambda v: np.clip(v + 3, 0, 6) / 6, ({},), (_float_error("hardsigmoid", "hardsigmoid"),)),
        ("selu", lambda v: _SS * np.where(v > 0, v, _SA * np.expm1(np.minimum(v, 0))), ({},),
         (_float_error("selu", "elu"),)),
        ("celu", lambda v, alpha=1.0: np.where(v > 0, v, alpha * np.expm1(np.minimum(v, 0) / alpha)),
         ({}, {"alpha": 0.6}), (_float_error("celu", "elu"),
                                lambda: _err(RuntimeError, "ZeroDivisionError: alpha cannot be 0 for CELU", _t((3,)),
                                             alpha=0.0))),
        ("softsign", lambda v: v / (1 + np.abs(v)), ({},), ()),
        ("tanhshrink", lambda v: v - np.tanh(v), ({},), ()),
        ("threshold", lambda v, threshold, value: np.where(v > threshold, v, value),
         ({"threshold": 0.1, "value": -2.0}, {"threshold": -1.0, "value": 0.5}),
         (lambda: _err(NotImplementedError, _not_impl("threshold", "Bool"), _t((3,), tp.bool), 0.0, 1.0),)),
        ("hardshrink", lambda v, lambd=0.5: np.where(np.abs(v) > lambd, v, 0.0), ({}, {"lambd": 1.0}),
         (_float_error("hardshrink", "hardshrink"),)),
        ("softshrink", lambda v, lambd=0.5: np.where(v > lambd, v - lambd, np.where(v < -lambd, v + lambd, 0.0)),
         ({}, {"lambd": 1.0}), (_float_error("softshrink", "softshrink"),
                                lambda: _err(RuntimeError, r"lambda must be in range \[0, 3.40282e\+38\] for input "
                                                           r"dtype Float, but found -1", _t((3,)), -1.0))),
        ("rrelu", lambda v, lower=0.125, upper=1 / 3: np.where(v >= 0, v, v * (lower + upper) / 2),
         ({}, {"lower": 0.2, "upper": 0.4}),
         (_float_error("rrelu", "leaky_relu"),
          lambda: _err(RuntimeError, "Lower bound should be less than or equal to the upper bound", _t((3,)), 0.5,
                       0.1))),
):
    _nn(_name, _unary(_fn), _unary_samples(_kws, 0.5 if _name == "softsign" else 1.0), **_NN_TOL,
        aten=(_name,), error_inputs=_errors(*_errs) if _errs else None)


def _glu_ref(x, dim=-1):
    v = S.f64(x)
    a, b = np.split(v, 2, axis=dim)
    return S.cast(a * _sigmoid(b), x.dtype)


def _glu_samples(device, dtype, requires_grad):
    yield SampleInput(_mk((3, 4), dtype, 0, requires_grad), (), name="last")
    yield SampleInput(_mk((2, 6, 3), dtype, 1, requires_grad, transposed=True), (1,), name="dim1")
    yield SampleInput(_mk((4,), dtype, 2, requires_grad), (0,), name="vector")


_nn("glu", _glu_ref, _glu_samples, **_NN_TOL, aten=("glu",), error_inputs=_errors(
    lambda: _err(RuntimeError, "Halving dimension must be even, but dimension 1 is size 3", _t((2, 3)), 1),
    lambda: _err(RuntimeError, "glu does not support scalars because halving size must be even", _t(())),
    lambda: _err(NotImplementedError, _not_impl("glu", "Long"), _t((4,), tp.int64))))


def _prelu_ref(x, w):
    v, a = S.f64(x), S.f64(w)
    if a.size != 1 and v.ndim >= 2:
        a = a.reshape((-1,) + (1,) * (v.ndim - 2))
    else:
        a = a.reshape(())
    return S.cast(np.where(v > 0, v, a * v), x.dtype)


def _prelu_samples(device, dtype, requires_grad):
    w = lambda n, seed: make_tensor((n,), dtype, 0.1, 0.4, seed=seed, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(_mk((2, 3, 4), dtype, 0, requires_grad), (w(3, 1),), name="per_channel")
    yield SampleInput(_mk((3, 4), dtype, 2, requires_grad, transposed=True), (w(1, 3),), name="shared")
    yield SampleInput(_mk((5,), dtype, 4, requires_grad), (w(1, 5),), name="vector")


_nn("prelu", _prelu_ref, _prelu_samples, **_NN_TOL, aten=("prelu",), error_inputs=_errors(
    lambda: _err(RuntimeError, r"Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 "
                               r"and channel size = 4\.", _t((3, 4)), _t((3,))),
    lambda: _err(RuntimeError, r"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2",
                 _t((3, 4)), _t((1, 1)))))


# -- norms ----------------------------------------------------------------------------------------------
def _rms_ref(x, normalized_shape, weight=None, eps=None):
    v = S.f64(x)
    nd = len(normalized_shape)
    eps = {np.float16: 2.0 ** -10, np.float32: 2.0 ** -23, np.float64: 2.0 ** -52}.get(x.dtype.type, 2.0 ** -7) \
        if eps is None else eps
    axes = tuple(range(v.ndim - nd, v.ndim))
    y = v / np.sqrt((v * v).mean(axis=axes, keepdims=True) + eps)
    if weight is not None:
        y = y * S.f64(weight)
    return S.cast(y, x.dtype)


def _rms_samples(device, dtype, requires_grad):
    mk = lambda shape, seed, **kw: make_tensor(shape, dtype, -2, 2, seed=seed, requires_grad=requires_grad, **kw)  # noqa
    yield SampleInput(mk((3, 4), 0), ((4,),), name="last")
    yield SampleInput(mk((2, 3, 4), 1, transposed=True), ((3, 4), mk((3, 4), 2)), name="weight")
    yield SampleInput(mk((2, 5), 3), ([5],), {"eps": 1e-3}, name="eps")


_nn("rms_norm", _rms_ref, _rms_samples, **_NN_TOL, aten=("mean", "rsqrt"), error_inputs=_errors(
    lambda: _err(RuntimeError, r"Given normalized_shape=\[5\], expected input with shape \[\*5\], but got input of "
                               r"size\[3, 4\]", _t((3, 4)), (5,)),
    lambda: _err(NotImplementedError, _not_impl("rms_norm", "Long"), _t((3, 4), tp.int64), (4,))))


def _instance_ref(x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    v = S.f64(x)
    axes = tuple(range(2, v.ndim))
    view = (1, -1) + (1,) * (v.ndim - 2)
    if use_input_stats:
        y = (v - v.mean(axis=axes, keepdims=True)) / np.sqrt(v.var(axis=axes, keepdims=True) + eps)
    else:
        y = (v - S.f64(running_mean).reshape(view)) / np.sqrt(S.f64(running_var).reshape(view) + eps)
    if weight is not None:
        y = y * S.f64(weight).reshape(view)
    if bias is not None:
        y = y + S.f64(bias).reshape(view)
    return S.cast(y, x.dtype)


def _instance_samples(device, dtype, requires_grad):
    mk = lambda shape, seed, lo=-2, hi=2, **kw: make_tensor(shape, dtype, lo, hi, seed=seed,  # noqa: E731
                                                            requires_grad=requires_grad, **kw)
    const = lambda shape, seed, lo, hi: make_tensor(shape, dtype, lo, hi, seed=seed)  # noqa: E731
    yield SampleInput(mk((2, 3, 5), 0), name="plain")
    yield SampleInput(mk((2, 2, 3, 3), 1, transposed=True), (), {"weight": mk((2,), 2), "bias": mk((2,), 3)},
                      name="affine")
    yield SampleInput(mk((2, 3, 4), 4), (const((3,), 5, -1, 1), const((3,), 6, 0.5, 2)),
                      {"use_input_stats": False}, name="running_stats")


_nn("instance_norm", _instance_ref, _instance_samples, **_NN_TOL, aten=("var_mean",), error_inputs=_errors(
    lambda: _err(ValueError, r"Expected more than 1 spatial element when training, got input size \(2, 3, 1\)",
                 _t((2, 3, 1)))))


def _lrn_ref(x, size, alpha=1e-4, beta=0.75, k=1.0):
    v = S.f64(x)
    sq = v * v
    c = v.shape[1]
    pad = [(0, 0)] * v.ndim
    pad[1] = (size // 2, (size - 1) // 2)
    p = np.pad(sq, pad)
    div = sum(np.take(p, range(i, i + c), axis=1) for i in range(size)) / size
    return S.cast(v / (div * alpha + k) ** beta, x.dtype)


def _lrn_samples(device, dtype, requires_grad):
    mk = lambda shape, seed, **kw: make_tensor(shape, dtype, -2, 2, seed=seed, requires_grad=requires_grad, **kw)  # noqa
    yield SampleInput(mk((2, 5, 4), 0), (3,), name="3d")
    yield SampleInput(mk((2, 4, 3), 1, transposed=True), (2,), {"alpha": 0.1, "beta": 0.5, "k": 2.0}, name="params")
    if dtype not in (tp.float16, tp.bfloat16):
        yield SampleInput(mk((1, 4, 2, 3), 2), (2,), {"alpha": 0.5}, name="4d")


_nn("local_response_norm", _lrn_ref, _lrn_samples, **_NN_TOL, aten=("cat", "pow"), error_inputs=_errors(
    lambda: _err(ValueError, r"Expected 3D or higher dimensionality\s+input \(got 2 dimensions\)", _t((3, 4)), 2),
    lambda: _err(NotImplementedError, _not_impl("avg_pool3d_out_frame", "Half"), _t((1, 2, 3, 3), tp.float16), 2)))


# -- dropout variants (random) --------------------------------------------------------------------------
def _dropout_nd_samples(shape, extra):
    def sample_inputs(device, dtype, requires_grad):
        yield SampleInput(make_tensor(shape, dtype, seed=0), (), {"p": 0.5, **extra}, name="p_half")
        yield SampleInput(make_tensor(shape, dtype, seed=1, transposed=True), (), {"p": 0.25, **extra},
                          name="transposed")
    return sample_inputs


for _name, _shape in (("dropout1d", (2, 3, 4)), ("dropout2d", (2, 3, 2, 2)), ("dropout3d", (2, 2, 2, 2, 2)),
                      ("alpha_dropout", (3, 4)), ("feature_alpha_dropout", (2, 3, 4))):
    _random(f"nn.functional.{_name}", getattr(F, _name), FLOATING,
            _dropout_nd_samples(_shape, {"training": True} if "alpha" in _name else {}), aten=("bernoulli_", "mul"),
            error_inputs=_errors(lambda _shape=_shape: _err(
                ValueError, "dropout probability has to be between 0 and 1, but got 1.5", _t(_shape), 1.5)))
_add("nn.functional.dropout1d.eval", F.dropout1d, lambda x, p=0.5, training=True: x.copy(), FLOATING,
     lambda device, dtype, rg: iter([SampleInput(make_tensor((2, 3, 4), dtype, seed=0, requires_grad=rg), (),
                                                 {"training": False}, name="eval")]), aten=())
_add("nn.functional.alpha_dropout.eval", F.alpha_dropout, lambda x, p=0.5: x.copy(), FLOATING,
     lambda device, dtype, rg: iter([SampleInput(make_tensor((3, 4), dtype, seed=0, requires_grad=rg), (), {"p": 0.3},
                                                 name="eval")]), aten=())


# -- embedding_bag --------------------------------------------------------------------------------------
def _bag_ref(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
             sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    w = S.f64(weight)
    idx = np.asarray(input)
    psw = None if per_sample_weights is None else S.f64(per_sample_weights).reshape(-1)
    if idx.ndim == 2:
        starts = list(range(0, idx.size, idx.shape[1]))
    else:
        starts = [int(v) for v in np.asarray(offsets)]
    flat = idx.reshape(-1)
    ends = starts[1:] + [flat.size]
    if include_last_offset:
        starts, ends = starts[:-1], ends[:-1]
    rows = []
    for s, e in zip(starts, ends):
        sel = [j for j in range(s, e) if padding_idx is None or flat[j] != padding_idx % w.shape[0]]
        if not sel:
            rows.append(np.zeros(w.shape[1]))
            continue
        r = w[flat[sel]]
        if psw is not None:
            r = r * psw[sel][:, None]
        rows.append(r.sum(0) if mode == "sum" else r.mean(0) if mode == "mean" else r.max(0))
    return S.cast(np.array(rows).reshape(len(rows), w.shape[1]), weight.dtype)


def _bag_samples(device, dtype, requires_grad):
    w = lambda seed: make_tensor((6, 3), dtype, values=_vals((6, 3), seed), seed=seed,  # noqa: E731
                                 requires_grad=requires_grad)
    yield SampleInput(index_tensor([[0, 2, 1], [3, 3, 5]]), (w(0),), name="2d_mean")
    yield SampleInput(index_tensor([0, 2, 1, 4, 5]), (w(1), index_tensor([0, 2, 2])), {"mode": "sum"},
                      name="offsets_sum_empty_bag")
    yield SampleInput(index_tensor([1, 2, 4, 5]), (w(2), index_tensor([0, 1])), {"mode": "max"}, name="max")
    yield SampleInput(index_tensor([1, 2, 4, 5]), (w(3), index_tensor([0, 3, 4])),
                      {"mode": "sum", "include_last_offset": True,
                       "per_sample_weights": make_tensor((4,), dtype, 0.5, 2, seed=4, requires_grad=requires_grad)},
                      name="weights_last_offset")
    yield SampleInput(index_tensor([[0, 2], [2, 2]]), (w(5),), {"padding_idx": 2}, name="padding")


_nn("embedding_bag", _bag_ref, _bag_samples, **_NN_TOL,
    xfails={"vmap": "the bags are cut at the offsets read on the host (.tolist()), which a batched tensor does not allow"}, aten=("index_select", "sum"), error_inputs=_errors(
    lambda: _err(ValueError, "offsets has to be a 1D Tensor but got None", index_tensor([0, 1]), _t((3, 2))),
    lambda: _err(ValueError, "mode has to be one of sum, mean or max", index_tensor([[0, 1]]), _t((3, 2)),
                 mode="min"),
    lambda: _err(ValueError, "weight has to be a 2D Tensor, but got Tensor of dimension 1", index_tensor([[0]]),
                 _t((3,))),
    lambda: _err(NotImplementedError, "per_sample_weights is only supported for mode='sum'", index_tensor([[0]]),
                 _t((3, 2)), per_sample_weights=_t((1, 1)))))


# -- distances -------------------------------------------------------------------------------------------
def _cos_ref(x1, x2, dim=1, eps=1e-8):
    a, b = np.broadcast_arrays(S.f64(x1), S.f64(x2))
    na = np.maximum(np.sqrt((a * a).sum(dim, keepdims=True)), eps)
    nb = np.maximum(np.sqrt((b * b).sum(dim, keepdims=True)), eps)
    return S.cast(((a / na) * (b / nb)).sum(dim), x1.dtype)


def _pnorm(d, p, axis, keepdims=False):
    if p == math.inf:
        return np.abs(d).max(axis=axis, keepdims=keepdims)
    if p == 0:
        return (d != 0).sum(axis=axis, keepdims=keepdims).astype(np.float64)
    return (np.abs(d) ** p).sum(axis=axis, keepdims=keepdims) ** (1.0 / p)


def _pairwise_ref(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    d = S.f64(x1) - S.f64(x2) + eps
    return S.cast(_pnorm(d, p, -1, keepdim), x1.dtype)


def _pdist_ref(x, p=2):
    v = S.f64(x)
    n = v.shape[0]
    out = [_pnorm(v[i] - v[j], p, -1) for i in range(n) for j in range(i + 1, n)]
    return S.cast(np.array(out).reshape(-1), x.dtype)


def _cdist_ref(x1, x2, p=2.0, compute_mode=None):
    d = S.f64(x1)[..., :, None, :] - S.f64(x2)[..., None, :, :]
    return S.cast(_pnorm(d, p, -1), x1.dtype)


def _pair_samples(extra, shapes=(((3, 4), (3, 4)), ((2, 3), (2, 3)), ((4,), (4,)))):
    def sample_inputs(device, dtype, requires_grad):
        for i, ((s1, s2), kw) in enumerate(zip(shapes * 2, extra)):
            a = make_tensor(s1, dtype, -2, 2, seed=2 * i, requires_grad=requires_grad)
            b = make_tensor(s2, dtype, -2, 2, seed=2 * i + 1, requires_grad=requires_grad, transposed=i == 1)
            yield SampleInput(a, (b,), dict(kw), name=f"case{i}")
    return sample_inputs


_nn("cosine_similarity", _cos_ref, _pair_samples(({}, {"dim": 0}, {"dim": -1})), **_NN_TOL, aten=("norm", "sum"),
    error_inputs=_errors(lambda: _err(RuntimeError, "expected common dtype to be floating point, yet common dtype "
                                                    "is Long", _t((2, 3), tp.int64), _t((2, 3), tp.int64))))
_nn("pairwise_distance", _pairwise_ref, _pair_samples(({}, {"p": 1.5, "keepdim": True}, {"p": 3.0})), **_NN_TOL,
    aten=("norm",))


def _pdist_samples(device, dtype, requires_grad):
    yield SampleInput(make_tensor((4, 3), dtype, -2, 2, seed=0, requires_grad=requires_grad), name="p2")
    yield SampleInput(make_tensor((3, 2), dtype, -2, 2, seed=1, requires_grad=requires_grad, transposed=True), (1.5,),
                      name="p1_5")
    yield SampleInput(make_tensor((3, 4), dtype, -2, 2, seed=2, requires_grad=requires_grad), (3.0,), name="p3")


_nn("pdist", _pdist_ref, _pdist_samples, dtypes=_F32_64, aten=("index_select", "norm"), error_inputs=_errors(
    lambda: _err(RuntimeError, "pdist only supports 2D tensors, got: 3D", _t((2, 3, 4))),
    lambda: _err(RuntimeError, "pdist only supports non-negative p values", _t((3, 4)), -1.0),
    lambda: _err(NotImplementedError, _not_impl("pdist", "Half"), _t((3, 4), tp.float16))))


def _cdist_samples(device, dtype, requires_grad):
    mk = lambda shape, seed, **kw: make_tensor(shape, dtype, -2, 2, seed=seed, requires_grad=requires_grad, **kw)  # noqa
    yield SampleInput(mk((3, 4), 0), (mk((5, 4), 1),), name="p2")
    yield SampleInput(mk((2, 3, 2), 2, transposed=True), (mk((2, 4, 2), 3),), {"p": 1.5}, name="batched")
    yield SampleInput(mk((2, 3), 4), (mk((1, 2, 3), 5),), {"p": 3.0, "compute_mode": "donot_use_mm_for_euclid_dist"},
                      name="broadcast")


_add("cdist", tp.cdist, _cdist_ref, _F32_64, _cdist_samples, aten=("cdist",), error_inputs=_errors(
    lambda: _err(RuntimeError, "cdist only supports at least 2D tensors, X1 got: 1D", _t((3,)), _t((3, 3))),
    lambda: _err(RuntimeError, "X1 and X2 must have the same number of columns. X1: 4 X2: 5", _t((3, 4)),
                 _t((3, 5))),
    lambda: _err(RuntimeError, "cdist only supports non-negative p values", _t((3, 4)), _t((3, 4)), -1.0),
    lambda: _err(ValueError, "bad is not a valid value for compute_mode", _t((3, 4)), _t((3, 4)),
                 compute_mode="bad")))


# -- losses ------------------------------------------------------------------------------------------------
def _signs(shape, seed):
    return make_tensor(shape, tp.float64, values=np.where(np.random.default_rng(seed).random(shape) > 0.4, 1.0, -1.0),
                       seed=seed)


def _as(t, dtype):
    return t.to(dtype)


def _loss_samples(make):
    """``make(dtype, requires_grad, reduction, seed)`` -> (input, args, kwargs); one sample per reduction."""
    def sample_inputs(device, dtype, requires_grad):
        for i, red in enumerate(("mean", "sum", "none")):
            inp, args, kw = make(dtype, requires_grad, i)
            yield SampleInput(inp, args, {**kw, "reduction": red}, name=red)
    return sample_inputs


def _red_error(*args):
    return lambda: _err(ValueError, "bad is not a valid value for reduction", *args, reduction="bad")


def _margin_ranking_ref(x1, x2, target, margin=0, reduction="mean"):
    loss = np.maximum(0, -S.f64(target) * (S.f64(x1) - S.f64(x2)) + margin)
    return S.cast(_reduced(loss, reduction), x1.dtype)


def _margin_ranking_make(dtype, rg, i):
    a = make_tensor((6,), dtype, values=_vals((6,), i), seed=i, requires_grad=rg)
    b = make_tensor((6,), dtype, values=_vals((6,), i + 10) * 0.1, seed=i, requires_grad=rg)
    return a, (b, _as(_signs((6,), i), dtype)), {"margin": 0.05 * i}


_nn("margin_ranking_loss", _margin_ranking_ref, _loss_samples(_margin_ranking_make), **_NN_TOL, aten=("clamp_min",),
    error_inputs=_errors(_red_error(_t((3,)), _t((3,)), _t((3,))), lambda: _err(
        RuntimeError, "margin_ranking_loss : All input tensors should have same dimension", _t((3, 4)), _t((3, 4)),
        _t((4,)))))


def _hinge_ref(x, target, margin=1.0, reduction="mean"):
    v, t = S.f64(x), S.f64(target)
    loss = np.where(t != 1, np.maximum(0, margin - v), 0) + np.where(t != -1, v, 0)
    return S.cast(_reduced(loss, reduction), x.dtype)


def _hinge_make(dtype, rg, i):
    return _mk((3, 4), dtype, i, rg, 0.5), (_as(_signs((3, 4), i), dtype),), {"margin": [1.0, 0.5, 2.0][i]}


_nn("hinge_embedding_loss", _hinge_ref, _loss_samples(_hinge_make), **_NN_TOL, aten=("where",),
    error_inputs=_errors(_red_error(_t((3,)), _t((3,)))))


def _soft_margin_ref(x, target, reduction="mean"):
    loss = np.log1p(np.exp(-S.f64(target) * S.f64(x)))
    return S.cast(_reduced(loss, reduction), x.dtype)


def _soft_margin_make(dtype, rg, i):
    return make_tensor((3, 4), dtype, -2, 2, seed=i, requires_grad=rg), (_as(_signs((3, 4), i), dtype),), {}


_nn("soft_margin_loss", _soft_margin_ref, _loss_samples(_soft_margin_make), **_NN_TOL, aten=("log1p",),
    error_inputs=_errors(_red_error(_t((3,)), _t((3,)))))


def _cos_emb_ref(x1, x2, target, margin=0.0, reduction="mean"):
    a, b, t = S.f64(x1), S.f64(x2), S.f64(target)
    d = a.ndim - 1
    cos = (a * b).sum(d) / np.sqrt(((a * a).sum(d) + 1e-12) * ((b * b).sum(d) + 1e-12))
    loss = np.where(t == 1, 1 - cos, 0) + np.where(t == -1, np.maximum(0, cos - margin), 0)
    return S.cast(_reduced(loss, reduction), x1.dtype)


def _cos_emb_make(dtype, rg, i):
    a = make_tensor((4, 3), dtype, -2, 2, seed=i, requires_grad=rg)
    b = make_tensor((4, 3), dtype, -2, 2, seed=i + 5, requires_grad=rg)
    return a, (b, _as(_signs((4,), i), dtype)), {"margin": [-0.9, 0.0, -0.5][i]}


_nn("cosine_embedding_loss", _cos_emb_ref, _loss_samples(_cos_emb_make), **_NN_TOL, aten=("sum", "sqrt"),
    error_inputs=_errors(_red_error(_t((2, 3)), _t((2, 3)), _t((2,))), lambda: _err(
        RuntimeError, "0D or 1D target tensor expected, multi-target not supported", _t((2, 3)), _t((2, 3)),
        _t((2, 1)))))


def _triplet_ref(a, p_, n, margin=1.0, p=2, eps=1e-6, swap=False, reduction="mean"):
    A, P, N = S.f64(a), S.f64(p_), S.f64(n)
    dp, dn = _pnorm(A - P + eps, p, -1), _pnorm(A - N + eps, p, -1)
    if swap:
        dn = np.minimum(dn, _pnorm(P - N + eps, p, -1))
    return S.cast(_reduced(np.maximum(0, margin + dp - dn), reduction), a.dtype)


def _triplet_make(dtype, rg, i):
    mk = lambda seed: make_tensor((3, 4), dtype, -2, 2, seed=seed, requires_grad=rg)  # noqa: E731
    return mk(i), (mk(i + 3), mk(i + 6)), [{"margin": 2.0}, {"p": 1, "swap": True, "margin": 3.0}, {"margin": 3.0}][i]


_nn("triplet_margin_loss", _triplet_ref, _loss_samples(_triplet_make), **_NN_TOL, aten=("norm",),
    error_inputs=_errors(_red_error(_t((2, 3)), _t((2, 3)), _t((2, 3))), lambda: _err(
        RuntimeError, "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
                      "but got: anchor 2D, positive 2D, and negative 1D inputs", _t((2, 3)), _t((2, 3)), _t((3,)))))


def _triplet_dist_ref(a, p_, n, distance_function=None, margin=1.0, swap=False, reduction="mean"):
    return _triplet_ref(a, p_, n, margin=margin, swap=swap, reduction=reduction)


def _triplet_dist_make(dtype, rg, i):
    mk = lambda seed: make_tensor((3, 4), dtype, -2, 2, seed=seed, requires_grad=rg)  # noqa: E731
    return mk(i), (mk(i + 3), mk(i + 6)), [{"margin": 2.0}, {"swap": True, "margin": 3.0}, {"margin": 3.0}][i]


_nn("triplet_margin_with_distance_loss", _triplet_dist_ref, _loss_samples(_triplet_dist_make), **_NN_TOL,
    aten=("norm",), error_inputs=_errors(
        lambda: _err(ValueError, "margin must be greater than 0, got 0", _t((2, 3)), _t((2, 3)), _t((2, 3)), margin=0),
        lambda: _err(ValueError, "bad is not a valid value for reduction", _t((2, 3)), _t((2, 3)), _t((2, 3)),
                     reduction="bad")))


def _gauss_ref(x, target, var, full=False, eps=1e-6, reduction="mean"):
    v, t, s = S.f64(x), S.f64(target), S.f64(var)
    if s.shape != v.shape and v.shape[:-1] == s.shape:
        s = s[..., None]
    s = np.maximum(s, eps)
    loss = 0.5 * (np.log(s) + (v - t) ** 2 / s)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return S.cast(_reduced(loss, reduction), x.dtype)


def _gauss_make(dtype, rg, i):
    mk = lambda shape, seed, lo=-2, hi=2: make_tensor(shape, dtype, lo, hi, seed=seed, requires_grad=rg)  # noqa
    var_shape = [(3, 4), (3,), (3, 1)][i]
    return mk((3, 4), i), (mk((3, 4), i + 3), mk(var_shape, i + 6, 0.2, 2)), {"full": i == 1}


_nn("gaussian_nll_loss", _gauss_ref, _loss_samples(_gauss_make), **_NN_TOL,
    xfails={"vmap": "the negative-variance check reads the values (.item()), as PyTorch's Python code does"}, aten=("log",), error_inputs=_errors(
    lambda: _err(ValueError, "var is of incorrect size", _t((3, 4)), _t((3, 4)), _t((2,), low=0.1, high=1)),
    lambda: _err(ValueError, "var has negative entry/entries", _t((3, 4)), _t((3, 4)), _t((3, 4), low=-2, high=-1)),
    lambda: _err(ValueError, "bad is not valid", _t((3, 4)), _t((3, 4)), _t((3, 4), low=0.1, high=1),
                 reduction="bad")))


def _poisson_ref(x, target, log_input=True, full=False, eps=1e-8, reduction="mean"):
    v, t = S.f64(x), S.f64(target)
    loss = np.exp(v) - t * v if log_input else v - t * np.log(v + eps)
    if full:
        safe = np.where(t > 1, t, 2.0)
        loss = loss + np.where(t > 1, safe * np.log(safe) - safe + 0.5 * np.log(2 * math.pi * safe), 0)
    return S.cast(_reduced(loss, reduction), x.dtype)


def _poisson_make(dtype, rg, i):
    log_input = i != 1
    x = make_tensor((3, 4), dtype, -1 if log_input else 0.2, 1 if log_input else 3, seed=i, requires_grad=rg)
    t = make_tensor((3, 4), dtype, values=np.random.default_rng(i).integers(0, 5, (3, 4)).astype(np.float64), seed=i)
    return x, (t,), {"log_input": log_input, "full": i > 0}


_nn("poisson_nll_loss", _poisson_ref, _loss_samples(_poisson_make), **_NN_TOL, aten=("exp",),
    error_inputs=_errors(_red_error(_t((3,)), _t((3,)))))


def _mlsm_ref(x, target, weight=None, reduction="mean"):
    v, t = S.f64(x), S.f64(target)
    ls = lambda z: np.minimum(z, 0) - np.log1p(np.exp(-np.abs(z)))  # noqa: E731
    loss = -(t * ls(v) + (1 - t) * ls(-v))
    if weight is not None:
        loss = loss * S.f64(weight)
    return S.cast(_reduced(loss.sum(-1) / v.shape[-1], reduction), x.dtype)


def _mlsm_make(dtype, rg, i):
    t = make_tensor((3, 4), dtype, values=(np.random.default_rng(i).random((3, 4)) > 0.5).astype(np.float64), seed=i)
    kw = {"weight": make_tensor((4,), dtype, 0.5, 2, seed=9)} if i == 1 else {}
    return make_tensor((3, 4), dtype, -2, 2, seed=i, requires_grad=rg), (t,), kw


_nn("multilabel_soft_margin_loss", _mlsm_ref, _loss_samples(_mlsm_make), **_NN_TOL, aten=("log1p",),
    error_inputs=_errors(_red_error(_t((3, 2)), _t((3, 2)))))


def _multi_margin_ref(x, target, p=1, margin=1.0, weight=None, reduction="mean"):
    v = S.f64(x).reshape(-1, x.shape[-1]) if x.ndim else S.f64(x).reshape(1, 1)
    t = np.asarray(target).reshape(-1)
    n, c = v.shape
    m = np.maximum(0, margin - v[np.arange(n), t][:, None] + v) ** p
    if weight is not None:
        m = m * S.f64(weight)[t][:, None]
    m[np.arange(n), t] = 0
    loss = m.sum(1) / c
    if x.ndim < 2:
        loss = loss.reshape(())
    return S.cast(_reduced(loss, reduction), x.dtype)


def _multi_margin_make(dtype, rg, i):
    x = make_tensor((3, 4), dtype, values=_vals((3, 4), i, 0.3), seed=i, requires_grad=rg)
    kw = [{}, {"p": 2, "margin": 0.7, "weight": make_tensor((4,), dtype, 0.5, 2, seed=8)}, {"margin": 0.9}][i]
    return x, (index_tensor([0, 3, 1]),), kw


_nn("multi_margin_loss", _multi_margin_ref, _loss_samples(_multi_margin_make), dtypes=_F32_64,
    xfails={"vmap": "the target range check reads the values (.item()), which a batched tensor does not allow"}, aten=("gather",),
    error_inputs=_errors(
        lambda: _err(ValueError, "only p == 1 and p == 2 supported", _t((3, 4)), index_tensor([0, 1, 2]), p=3),
        lambda: _err(RuntimeError, "target out of range", _t((3, 4)), index_tensor([0, 1, 7])),
        lambda: _err(RuntimeError, r"multi_margin_loss: target tensor should be 1-D with size equal to the number of "
                                   r"input samples \(batch size\)\. Expected target size \[3\], but got \[2\]",
                     _t((3, 4)), index_tensor([0, 1]))))


def _mlm_ref(x, target, reduction="mean"):
    v = S.f64(x).reshape(-1, x.shape[-1])
    t = np.asarray(target).reshape(v.shape)
    n, c = v.shape
    out = np.zeros(n)
    for k in range(n):
        ts = []
        for j in t[k]:
            if j < 0:
                break
            ts.append(j)
        is_t = np.zeros(c, bool)
        is_t[ts] = True
        for j in ts:
            out[k] += np.maximum(0, 1 - v[k, j] + v[k, ~is_t]).sum()
    out = out / c
    if x.ndim < 2:
        out = out.reshape(())
    return S.cast(_reduced(out, reduction), x.dtype)


def _mlm_make(dtype, rg, i):
    x = make_tensor((3, 4), dtype, values=_vals((3, 4), i, 0.3), seed=i, requires_grad=rg)
    return x, (index_tensor([[0, 2, -1, 1], [3, -1, 0, 0], [1, 2, 3, 0]]),), {}


_nn("multilabel_margin_loss", _mlm_ref, _loss_samples(_mlm_make), dtypes=_F32_64,
    xfails={"vmap": "the targets are read on the host (.tolist()) to find each row's -1 terminator"}, aten=("clamp_min",),
    error_inputs=_errors(lambda: _err(RuntimeError, r"inconsistent target size: \[3, 3\] for input of size: \[3, 4\]",
                                      _t((3, 4)), index_tensor([[0] * 3] * 3))))


# -- multi-head attention ------------------------------------------------------------------------------------
def _mha_ref(q, k, v, e, h, w, b, bias_k, bias_v, add_zero_attn, dropout_p, ow, ob, training=True,
             key_padding_mask=None, need_weights=True, attn_mask=None, average_attn_weights=True):
    Q, K, V = S.f64(q), S.f64(k), S.f64(v)
    W, B, OW, OB = S.f64(w), S.f64(b), S.f64(ow), S.f64(ob)
    L, N, E = Q.shape
    S_ = K.shape[0]
    hd = E // h
    proj = lambda x, i: x @ W[i * E:(i + 1) * E].T + B[i * E:(i + 1) * E]  # noqa: E731
    qh = proj(Q, 0).reshape(L, N, h, hd).transpose(1, 2, 0, 3)
    kh = proj(K, 1).reshape(S_, N, h, hd).transpose(1, 2, 0, 3)
    vh = proj(V, 2).reshape(S_, N, h, hd).transpose(1, 2, 0, 3)
    scores = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(hd)
    if attn_mask is not None:
        scores = np.where(np.asarray(attn_mask)[None, None], -np.inf, scores)
    if key_padding_mask is not None:
        scores = np.where(np.asarray(key_padding_mask)[:, None, None, :], -np.inf, scores)
    wts = np.exp(scores - scores.max(-1, keepdims=True))
    wts = wts / wts.sum(-1, keepdims=True)
    out = (wts @ vh).transpose(2, 0, 1, 3).reshape(L, N, E) @ OW.T + OB
    res = [S.cast(out, q.dtype), S.cast(wts.mean(1) if average_attn_weights else wts, q.dtype) if need_weights else None]
    return res


def _mha_op(query, key, value, *args, **kwargs):
    return F.multi_head_attention_forward(query, key, value, *args, **kwargs)


def _mha_samples(device, dtype, requires_grad):
    mk = lambda shape, seed, lo=-1, hi=1: make_tensor(shape, dtype, lo, hi, seed=seed,  # noqa: E731
                                                      requires_grad=requires_grad)
    E, H, L, S_, N = 4, 2, 2, 3, 2

    def args(seed):
        return (mk((L, N, E), seed), mk((S_, N, E), seed + 1), mk((S_, N, E), seed + 2), E, H,
                mk((3 * E, E), seed + 3), mk((3 * E,), seed + 4), None, None, False, 0.0, mk((E, E), seed + 5),
                mk((E,), seed + 6))
    a = args(0)
    yield SampleInput(a[0], a[1:], name="weights")
    a = args(10)
    pad = S.bool_tensor((N, S_), seed=1) & tp.tensor([[False, True, True], [True, False, True]])
    yield SampleInput(a[0], a[1:], {"need_weights": False, "key_padding_mask": pad}, name="padding_sdpa")
    a = args(20)
    mask = tp.tensor([[False, True, False], [False, False, True]])
    yield SampleInput(a[0], a[1:], {"attn_mask": mask, "average_attn_weights": False}, name="mask_per_head")


_add("nn.functional.multi_head_attention_forward", F.multi_head_attention_forward, _mha_ref, FLOATING, _mha_samples,
    xfails={"vmap": "with need_weights=False the second result is None, which vmap cannot return"},
     aten=("linear", "softmax.int", "scaled_dot_product_attention"), **_NN_TOL)


# -- the LSTM recurrence -------------------------------------------------------------------------------------
def _lstm_scan_ref(xw, h0, c0, w_hh):
    X, h, c, W = S.f64(xw), S.f64(h0), S.f64(c0), S.f64(w_hh)
    H = h.shape[1]
    outs, cells, gates = [], [], []
    for t in range(X.shape[0]):
        a = X[t] + h @ W.T
        i, f, g, o = _sigmoid(a[:, :H]), _sigmoid(a[:, H:2 * H]), np.tanh(a[:, 2 * H:3 * H]), _sigmoid(a[:, 3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
        outs.append(h)
        cells.append(c)
        gates.append(np.concatenate([i, f, g, o], 1))
    return [S.cast(np.array(v), xw.dtype) for v in (outs, cells, gates)]


def _lstm_scan_samples(device, dtype, requires_grad):
    mk = lambda shape, seed, **kw: make_tensor(shape, dtype, -1, 1, seed=seed, requires_grad=requires_grad, **kw)  # noqa
    yield SampleInput(mk((3, 2, 8), 0), (mk((2, 2), 1), mk((2, 2), 2), mk((8, 2), 3)), name="small")
    yield SampleInput(mk((4, 1, 12), 4, noncontiguous=True), (mk((1, 3), 5), mk((1, 3), 6), mk((12, 3), 7, transposed=True)),
                      name="layouts")


_add("_lstm_scan", _ex.lstm_scan, _lstm_scan_ref, FLOATING, _lstm_scan_samples, aten=("_lstm_scan",), **_NN_TOL,
     error_inputs=_errors(lambda: _err(RuntimeError, "_lstm_scan: inconsistent sizes", _t((3, 2, 8)), _t((2, 3)),
                                       _t((2, 3)), _t((8, 3)))))


# -- the GRU recurrence --------------------------------------------------------------------------------------
def _gru_scan_ref(xw, h0, w_hh, b_hh):
    X, h, W, bh = S.f64(xw), S.f64(h0), S.f64(w_hh), S.f64(b_hh)
    H = h.shape[1]
    outs, gates = [], []
    for t in range(X.shape[0]):
        gh = h @ W.T + bh
        r, z = _sigmoid(X[t, :, :H] + gh[:, :H]), _sigmoid(X[t, :, H:2 * H] + gh[:, H:2 * H])
        n = np.tanh(X[t, :, 2 * H:] + r * gh[:, 2 * H:])
        h = (1 - z) * n + z * h
        outs.append(h)
        gates.append(np.concatenate([r, z, n, gh[:, 2 * H:]], 1))
    return [S.cast(np.array(v), xw.dtype) for v in (outs, gates)]


def _gru_scan_samples(device, dtype, requires_grad):
    mk = lambda shape, seed, **kw: make_tensor(shape, dtype, -1, 1, seed=seed, requires_grad=requires_grad, **kw)  # noqa
    yield SampleInput(mk((3, 2, 6), 0), (mk((2, 2), 1), mk((6, 2), 2), mk((6,), 3)), name="small")
    yield SampleInput(mk((4, 1, 9), 4, noncontiguous=True), (mk((1, 3), 5), mk((9, 3), 6, transposed=True),
                                                             mk((9,), 7)), name="layouts")


_add("_gru_scan", _ex.gru_scan, _gru_scan_ref, FLOATING, _gru_scan_samples, aten=("_gru_scan",), **_NN_TOL,
     error_inputs=_errors(lambda: _err(RuntimeError, "_gru_scan: inconsistent sizes", _t((3, 2, 6)), _t((2, 3)),
                                       _t((6, 3)), _t((6,)))))


# -- the in-place functions: each entry's op runs on a clone of its input, the function itself is ``inplace``
def _on_clone(fn):
    def op(input, *args, **kwargs):
        return fn(input.clone(), *args, **kwargs)
    op.__name__ = op.__qualname__ = fn.__name__
    op.__doc__ = f"``F.{fn.__name__}`` applied to a clone of the input."
    return op


for _name, _fn, _kws in (
        ("selu_", lambda v: _SS * np.where(v > 0, v, _SA * np.expm1(np.minimum(v, 0))), ({},)),
        ("celu_", lambda v, alpha=1.0: np.where(v > 0, v, alpha * np.expm1(np.minimum(v, 0) / alpha)),
         ({}, {"alpha": 0.6})),
        ("rrelu_", lambda v, lower=0.125, upper=1 / 3: np.where(v >= 0, v, v * (lower + upper) / 2), ({},)),
        ("threshold_", lambda v, threshold, value: np.where(v > threshold, v, value),
         ({"threshold": 0.1, "value": -2.0},))):
    _add(f"nn.functional.{_name}.on_clone", _on_clone(getattr(F, _name)), _unary(_fn), FLOATING,
         _unary_samples(_kws), inplace=getattr(F, _name), aten=(_name.rstrip("_"),), **_NN_TOL)


# -- CTC ------------------------------------------------------------------------------------------------------
def _ctc_ref(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False,
             from_logits=False):
    lp = S.f64(log_probs)
    if from_logits:
        lp = lp - lp.max(-1, keepdims=True)
        lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    il, tl = list(np.asarray(input_lengths).reshape(-1)), list(np.asarray(target_lengths).reshape(-1))
    tg = np.asarray(targets)
    out = []
    for b in range(lp.shape[1]):
        labels = tg[b, :tl[b]] if tg.ndim == 2 else tg[sum(tl[:b]):sum(tl[:b + 1])]
        ext = [blank]
        for c in labels:
            ext += [int(c), blank]
        alpha = np.full(len(ext), -np.inf)
        alpha[0] = lp[0, b, ext[0]]
        if len(ext) > 1:
            alpha[1] = lp[0, b, ext[1]]
        for t in range(1, il[b]):
            new = np.full(len(ext), -np.inf)
            for s in range(len(ext)):
                terms = [alpha[s]] + ([alpha[s - 1]] if s else []) + \
                    ([alpha[s - 2]] if s > 1 and ext[s] != blank and ext[s] != ext[s - 2] else [])
                new[s] = np.logaddexp.reduce(terms) + lp[t, b, ext[s]]
            alpha = new
        nll = -np.logaddexp.reduce(alpha[-2:]) if len(ext) > 1 else -alpha[-1]
        out.append(0.0 if zero_infinity and np.isinf(nll) else nll)
    out = np.array(out)
    if reduction == "mean":
        out = (out / np.maximum(np.array(tl), 1)).mean()
    elif reduction == "sum":
        out = out.sum()
    return S.cast(out, log_probs.dtype)


def _ctc_samples(from_logits):
    def sample_inputs(device, dtype, requires_grad):
        def lp(shape, seed):
            x = make_tensor(shape, dtype, -2, 2, seed=seed, requires_grad=requires_grad and from_logits)
            return x if from_logits else x.log_softmax(-1)
        kw = {"from_logits": True} if from_logits else {}
        yield SampleInput(lp((5, 2, 4), 0), (index_tensor([[1, 2, 2], [3, 1, 0]]), index_tensor([5, 4]),
                                             index_tensor([3, 2])), dict(kw), name="padded_mean")
        yield SampleInput(lp((4, 3, 3), 1), (index_tensor([1, 2, 2, 1]), (4, 3, 2), (2, 1, 1)),
                          {"reduction": "sum", **kw}, name="concatenated_sum")
        yield SampleInput(lp((3, 2, 3), 2), (index_tensor([[1, 1, 1], [2, 0, 0]]), [3, 3], [3, 1]),
                          {"reduction": "none", "zero_infinity": True, **kw}, name="zero_infinity")
    return sample_inputs


_ctc_errors = _errors(
    lambda: _err(RuntimeError, "blank must be in label range", _t((5, 2, 4)).log_softmax(-1),
                 index_tensor([[1], [2]]), [5, 5], [1, 1], blank=4),
    lambda: _err(RuntimeError, "Expected input_lengths to have value at most 5, but got value 6",
                 _t((5, 2, 4)).log_softmax(-1), index_tensor([[1], [2]]), [6, 5], [1, 1]),
    lambda: _err(RuntimeError, "Expected tensor to have size at least 3 at dimension 1, but got size 1",
                 _t((5, 2, 4)).log_softmax(-1), index_tensor([[1], [2]]), [5, 5], [3, 1]),
    lambda: _err(ValueError, "bad is not a valid value for reduction", _t((5, 2, 4)).log_softmax(-1),
                 index_tensor([[1], [2]]), [5, 5], [1, 1], reduction="bad"))
# PyTorch's gradient treats the log-probabilities as log_softmax outputs: exact only through a log_softmax,
# which the ".from_logits" entry applies (and gradchecks)
_nn("ctc_loss", lambda *a, **k: _ctc_ref(*a, **k), _ctc_samples(False), dtypes=_F32_64, aten=("_ctc_loss",),
    supports_autograd=False, error_inputs=_ctc_errors,
    xfails={"vmap": "the input and target lengths are read on the host (.tolist()), as PyTorch reads them; a batched tensor does not allow it"},)


def _ctc_from_logits(logits, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False,
                     from_logits=True):
    """``F.ctc_loss`` of ``logits.log_softmax(-1)``."""
    return F.ctc_loss(logits.log_softmax(-1), targets, input_lengths, target_lengths, blank, reduction, zero_infinity)


_add("nn.functional.ctc_loss.from_logits", _ctc_from_logits, _ctc_ref, _F32_64, _ctc_samples(True),
     aten=("_ctc_loss", "_ctc_loss_backward", "log_softmax.int"),
     xfails={"vmap": "the input and target lengths are read on the host (.tolist()), as PyTorch reads them; a batched tensor does not allow it"},)
