"""Losses (functional and modules) against numpy formulas; their argument errors; gradient clipping utils."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.autograd import gradcheck
import tensorplug.nn.functional as F

RNG = np.random.default_rng(0)


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def T(a):
    return tp.tensor(a)


def close(ours, ref, tol=1e-5):
    np.testing.assert_allclose(ours.detach().numpy(), ref, rtol=tol, atol=tol)


def log_softmax(x, axis):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def reduce(loss, reduction, denom=None):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / (loss.size if denom is None else denom)


def ce_ref(x, target, weight=None, ignore_index=-100, reduction="mean", smoothing=0.0):
    """PyTorch's cross entropy on class indices, written out elementwise (class dim 1)."""
    lp = log_softmax(x.astype(np.float64), 1)
    c = x.shape[1]
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    lp_m = np.moveaxis(lp, 1, -1).reshape(-1, c)
    t = target.reshape(-1)
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    wt = w[safe] * keep
    nll = -lp_m[np.arange(len(t)), safe] * wt
    smooth = -(lp_m * w).sum(-1) * keep
    if reduction == "none":
        out = (1 - smoothing) * nll + smoothing / c * smooth
        return out.reshape(target.shape)
    if reduction == "sum":
        return (1 - smoothing) * nll.sum() + smoothing / c * smooth.sum()
    return ((1 - smoothing) * nll.sum() + smoothing / c * smooth.sum()) / wt.sum()


CE_CASES = [
    ((5, 4), [0, 3, 1, 2, 1], {}),
    ((5, 4), [0, 3, -100, 2, 1], {"reduction": "sum"}),
    ((5, 4), [0, 3, 1, 2, 1], {"weight": [1.0, 2.0, 0.5, 3.0]}),
    ((5, 4), [0, 3, 1, 1, 1], {"weight": [1.0, 2.0, 0.5, 3.0], "ignore_index": 1, "reduction": "none"}),
    ((5, 4), [0, 3, -100, 2, 1], {"label_smoothing": 0.2}),
    ((5, 4), [0, 3, 2, 2, 1], {"label_smoothing": 0.1, "weight": [1.0, 2.0, 0.5, 3.0], "ignore_index": 2}),
    ((2, 3, 4, 2), [[[0, 1], [2, 2], [1, 0], [0, -100]], [[1, 1], [0, 2], [2, 1], [1, 1]]],
     {"label_smoothing": 0.3, "reduction": "none"}),
    ((2, 3, 5), [[0, 1, 2, 2, 1], [1, 1, 0, 2, 2]], {"weight": [0.2, 1.0, 3.0]}),
]


@pytest.mark.parametrize("shape, target, kwargs", CE_CASES)
def test_cross_entropy_class_indices(shape, target, kwargs):
    x = rand(*shape)
    t = np.array(target)
    kw = dict(kwargs)
    weight = None if "weight" not in kw else np.array(kw.pop("weight"), dtype=np.float32)
    ours = F.cross_entropy(T(x), T(t), None if weight is None else T(weight), **kw)
    ref = ce_ref(x, t, weight, kw.get("ignore_index", -100), kw.get("reduction", "mean"),
                 kw.get("label_smoothing", 0.0))
    close(ours, ref)
    mod = nn.CrossEntropyLoss(None if weight is None else T(weight), **kw)
    close(mod(T(x), T(t)), ref)


def test_cross_entropy_unbatched_and_probabilities():
    x = rand(4)
    close(F.cross_entropy(T(x), tp.tensor(2)), -log_softmax(x[None], 1)[0, 2])
    p = np.abs(rand(3, 4, seed=1))
    p /= p.sum(1, keepdims=True)
    xs = rand(3, 4, seed=2)
    lp = log_softmax(xs.astype(np.float64), 1)
    close(F.cross_entropy(T(xs), T(p)), -(lp * p).sum(1).mean())
    w = np.array([1.0, 2.0, 0.5, 1.5], dtype=np.float32)
    smoothed = p * 0.8 + 0.2 / 4
    close(F.cross_entropy(T(xs), T(p), T(w), label_smoothing=0.2, reduction="none"), -(lp * smoothed * w).sum(1))
    close(F.cross_entropy(T(xs), T(p), reduction="sum"), -(lp * p).sum())


def test_all_targets_ignored_gives_nan_mean():
    out = F.cross_entropy(T(rand(3, 4)), T(np.array([-100, -100, -100])))
    assert math.isnan(out.item())


def test_nll_loss():
    lp = log_softmax(rand(6, 3), 1).astype(np.float32)
    t = np.array([0, 2, 1, 1, 2, 0])
    w = np.array([0.5, 1.0, 2.0], dtype=np.float32)
    picked = -lp[np.arange(6), t]
    close(F.nll_loss(T(lp), T(t)), picked.mean())
    close(F.nll_loss(T(lp), T(t), T(w)), (picked * w[t]).sum() / w[t].sum())
    close(nn.NLLLoss(ignore_index=2, reduction="none")(T(lp), T(t)), np.where(t == 2, 0, picked))
    close(F.nll_loss(T(lp), T(t).to(tp.uint8), reduction="sum"), picked.sum())


CE_ERRORS = [
    (lambda: F.cross_entropy(T(rand(3, 4)), tp.tensor([0, 1, 2], dtype=tp.int32)), RuntimeError,
     "expected target dtype to be Long or Byte, but got Int"),
    (lambda: F.cross_entropy(T(rand(3, 4)), tp.tensor([0, 1])), ValueError,
     r"Expected input batch_size \(3\) to match target batch_size \(2\)."),
    (lambda: F.cross_entropy(T(rand(3, 4)), tp.tensor([[0, 1], [1, 1], [0, 0]])), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    (lambda: F.cross_entropy(T(rand(3, 4, 5)), tp.zeros(3, 6, dtype=tp.int64)), RuntimeError,
     r"Expected target size \[3, 5\], got \[3, 6\]"),
    (lambda: F.nll_loss(T(rand(3, 4)), tp.tensor([0, 1, 2]), weight=tp.ones(3)), RuntimeError,
     r"weight tensor should be defined either for all 4 classes or no classes but got weight tensor of shape: "
     r"\[3\]"),
    (lambda: F.cross_entropy(T(rand(3, 4)), T(rand(3, 4)), ignore_index=1), RuntimeError,
     "ignore_index is not supported for floating point target"),
    (lambda: F.cross_entropy(T(rand(3, 4)), tp.tensor([0, 5, 1])), IndexError, "Target 5 is out of bounds."),
    (lambda: F.nll_loss(T(rand(3, 4)), tp.tensor([0, -3, 1])), IndexError, "Target -3 is out of bounds."),
    (lambda: F.cross_entropy(T(rand(3, 4)), tp.tensor([0, 1, 1]), label_smoothing=1.1), RuntimeError,
     "label_smoothing must be between 0.0 and 1.0. Got: 1.1"),
    (lambda: F.cross_entropy(T(rand(3, 4)), tp.tensor([0, 1, 1]), reduction="avg"), ValueError,
     "avg is not a valid value for reduction"),
    (lambda: F.binary_cross_entropy_with_logits(T(rand(3)), T(rand(3, 1))), ValueError,
     r"Target size \(\(3, 1\)\) must be the same as input size \(\(3,\)\)"),
    (lambda: F.binary_cross_entropy(T(rand(3)), T(rand(3))), RuntimeError,
     "all elements of input should be between 0 and 1"),
    (lambda: F.mse_loss(T(rand(3)), T(rand(3)), weight=T(rand(2))), ValueError,
     "Weights and input must have the same size."),
]


@pytest.mark.parametrize("call, error, match", CE_ERRORS)
def test_loss_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_size_mismatch_warns_and_legacy_reduction_args():
    with pytest.warns(UserWarning, match=r"Using a target size \(\(3, 1\)\) that is different to the input size "
                                         r"\(\(3,\)\)"):
        F.mse_loss(T(rand(3)), T(rand(3, 1)))
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please use "
                                         "reduction='sum' instead."):
        loss = nn.L1Loss(size_average=False)
    assert loss.reduction == "sum"
    with pytest.warns(UserWarning, match="reduction='none'"):
        out = F.mse_loss(T(rand(4)), T(rand(4, seed=1)), reduce=False)
    assert out.shape == (4,)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(reduction):
    x, y = rand(4, 5), rand(4, 5, seed=1) * 2
    d = x.astype(np.float64) - y
    a = np.abs(d)
    close(F.mse_loss(T(x), T(y), reduction=reduction), reduce(d * d, reduction))
    close(nn.L1Loss(reduction=reduction)(T(x), T(y)), reduce(a, reduction))
    huber = np.where(a < 0.7, 0.5 * d * d, 0.7 * (a - 0.35))
    close(nn.HuberLoss(reduction, delta=0.7)(T(x), T(y)), reduce(huber, reduction))
    smooth = np.where(a < 0.5, 0.5 * d * d / 0.5, a - 0.25)
    close(nn.SmoothL1Loss(reduction=reduction, beta=0.5)(T(x), T(y)), reduce(smooth, reduction))
    w = np.abs(rand(4, 5, seed=2))
    close(F.mse_loss(T(x), T(y), reduction=reduction, weight=T(w)), reduce(d * d * w, reduction, w.sum()))
    close(F.l1_loss(T(x), T(y), reduction=reduction, weight=T(w)), reduce(a * w, reduction, w.sum()))
    close(F.huber_loss(T(x), T(y), reduction, 0.7, T(w)), reduce(huber * w, reduction))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy(reduction):
    x = rand(3, 4) * 4
    x[0, 0], x[0, 1] = 60.0, -60.0  # stable far out in the tails
    t = np.abs(rand(3, 4, seed=1)) % 1
    pw = np.array([1.0, 2.0, 0.5, 3.0], dtype=np.float32)
    w = np.abs(rand(3, 4, seed=2))
    xd = x.astype(np.float64)
    logsig = -np.logaddexp(0, -xd)
    log1m = -np.logaddexp(0, xd)
    ref = -(pw * t * logsig + (1 - t) * log1m) * w
    close(F.binary_cross_entropy_with_logits(T(x), T(t), T(w), reduction=reduction, pos_weight=T(pw)),
          reduce(ref, reduction), 1e-4)
    close(nn.BCEWithLogitsLoss(reduction=reduction)(T(x), T(t)), reduce(-(t * logsig + (1 - t) * log1m), reduction),
          1e-4)
    p = 1 / (1 + np.exp(-rand(3, 4, seed=3)))
    bce = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    close(nn.BCELoss(reduction=reduction)(T(p.astype(np.float32)), T(t)), reduce(bce, reduction), 1e-4)
    edge = F.binary_cross_entropy(tp.tensor([0.0, 1.0]), tp.tensor([1.0, 0.0]), reduction="none")
    assert edge.tolist() == [100.0, 100.0]  # log clamped at -100, as in PyTorch


def test_kl_div():
    lp = log_softmax(rand(3, 4), 1).astype(np.float32)
    q = np.exp(log_softmax(rand(3, 4, seed=1), 1)).astype(np.float32)
    q[0, 0] = 0.0
    pointwise = np.where(q > 0, q * np.log(np.where(q > 0, q, 1)), 0) - q * lp
    close(F.kl_div(T(lp), T(q), reduction="batchmean"), pointwise.sum() / 3)
    close(nn.KLDivLoss(reduction="none", log_target=True)(T(lp), T(np.log(q + 1e-3))),
          (q + 1e-3) * (np.log(q + 1e-3) - lp), 1e-4)


def D(*shape, seed=0):
    return tp.tensor(rand(*shape, seed=seed, dtype=np.float64)).requires_grad_()


LOSS_GRADS = [
    ("cross_entropy smoothing weight ignore",
     lambda x, w: F.cross_entropy(x, tp.tensor([0, 2, 1, -100]), w, label_smoothing=0.2),
     lambda: (D(4, 3), tp.tensor([1.0, 2.0, 0.5], dtype=tp.float64))),
    ("cross_entropy probabilities", lambda x, p: F.cross_entropy(x, p, label_smoothing=0.1),
     lambda: (D(3, 4), tp.tensor(np.full((3, 4), 0.25)).requires_grad_())),
    ("bce with logits pos_weight", lambda x, t: F.binary_cross_entropy_with_logits(
        x, t, pos_weight=tp.tensor([2.0, 0.5, 1.0], dtype=tp.float64)),
     lambda: (D(2, 3), tp.tensor(np.abs(rand(2, 3, dtype=np.float64)) % 1).requires_grad_())),
    ("huber", lambda x, y: F.huber_loss(x, y, delta=0.5), lambda: (D(3, 3), D(3, 3, seed=1))),
    ("mse sum", lambda x, y: F.mse_loss(x, y, reduction="sum"), lambda: (D(5), D(5, seed=1))),
]


@pytest.mark.parametrize("name, fn, make", LOSS_GRADS, ids=[g[0] for g in LOSS_GRADS])
def test_loss_gradients(name, fn, make):
    assert gradcheck(fn, make())


def test_loss_modules_register_weight_buffers():
    w = tp.tensor([1.0, 2.0])
    ce = nn.CrossEntropyLoss(weight=w, label_smoothing=0.1)
    assert ce.weight is w and list(ce.state_dict()) == ["weight"]
    assert list(nn.CrossEntropyLoss().state_dict()) == []
    bce = nn.BCEWithLogitsLoss(pos_weight=w)
    assert list(bce.state_dict()) == ["pos_weight"]
    assert repr(ce) == "CrossEntropyLoss()" and repr(nn.HuberLoss()) == "HuberLoss()"
    ce.to(tp.float64)
    assert ce.weight.dtype is tp.float64


# -- nn.utils -------------------------------------------------------------------------------------------
def _with_grads(grads):
    params = []
    for g in grads:
        p = nn.Parameter(tp.zeros(len(g)))
        p.grad = tp.tensor(g)
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3])
def test_clip_grad_norm(norm_type):
    grads = [[3.0, -4.0], [12.0], [0.0, 1.0, -2.0]]
    params = _with_grads(grads) + [nn.Parameter(tp.zeros(1))]  # a parameter without grad is skipped
    flat = np.concatenate([np.array(g) for g in grads])
    total = np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    out = nn.utils.clip_grad_norm_(params, 2.0, norm_type)
    assert out.item() == pytest.approx(total, rel=1e-6)
    coef = min(1.0, 2.0 / (total + 1e-6))
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), np.array(g) * coef, rtol=1e-6)
    small = _with_grads([[0.1, 0.1]])
    nn.utils.clip_grad_norm_(small[0], 5.0)  # a single tensor works too; nothing to clip
    np.testing.assert_allclose(small[0].grad.numpy(), [0.1, 0.1], rtol=1e-6)


def test_clip_grad_norm_nonfinite_and_empty():
    params = _with_grads([[math.inf, 1.0]])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is "
                                           "non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([nn.Parameter(tp.zeros(1))], 1.0).item() == 0.0
    assert nn.utils.clip_grad_norm_(_with_grads([[3.0, 4.0]]), 1.0, foreach=True).item() == pytest.approx(5.0)


def test_clip_grad_value_and_vector_conversion():
    params = _with_grads([[3.0, -4.0], [0.5]])
    nn.utils.clip_grad_value_(params, 1.0)
    assert params[0].grad.tolist() == [1.0, -1.0] and params[1].grad.tolist() == [0.5]
    lin = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(lin.parameters())
    assert vec.shape == (8,)
    np.testing.assert_array_equal(vec.detach().numpy()[:6], lin.weight.detach().numpy().reshape(-1))
    nn.utils.vector_to_parameters(tp.arange(8.0), lin.parameters())
    assert lin.bias.tolist() == [6.0, 7.0] and lin.weight.requires_grad
