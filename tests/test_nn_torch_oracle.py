"""nn layers and losses against PyTorch itself.

For each case the same weights go into a tensorplug module and a torch
module (through ``state_dict``), both run forward and backward on the same
input and upstream gradient, and outputs, input gradients, parameter
gradients and buffers (BatchNorm's running statistics) must agree within
float32 tolerance. Reprs, state_dict keys and default-init statistics are
compared too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
import tensorplug.nn.functional as F

torch = pytest.importorskip("torch")
TNN = torch.nn
TF = torch.nn.functional

RTOL, ATOL = 1e-4, 1e-5


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_close(ours, theirs, what, rtol=RTOL, atol=ATOL):
    a = ours.detach().numpy() if isinstance(ours, tp.Tensor) else np.asarray(ours)
    b = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=str(what))


def copy_weights(ours, theirs):
    """Load our module's state into the torch module (parameters and buffers, same names)."""
    state = {k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()}
    theirs.load_state_dict(state)


def both_inputs(arrays, grad):
    ours, theirs = [], []
    for a in arrays:
        floating = a.dtype.kind == "f"
        t, u = tp.tensor(a), torch.from_numpy(a.copy())
        if grad and floating:
            t.requires_grad_()
            u.requires_grad_()
        ours.append(t)
        theirs.append(u)
    return ours, theirs


def run_both(ours, theirs, arrays, grad=True, what="", atol=ATOL, steps=1):
    """Forward and backward through both modules; compare everything that should match."""
    copy_weights(ours, theirs)
    for step in range(steps):
        a, b = both_inputs(arrays, grad)
        y, z = ours(*a), theirs(*b)
        assert_close(y, z, (what, "output", step), atol=atol)
        if grad:
            g = rand(*z.shape, seed=100 + step) if z.dim() else np.float32(1.0)
            y.backward(tp.tensor(g))
            z.backward(torch.tensor(g))
            for t, u in zip(a, b):
                if u.requires_grad:
                    assert_close(t.grad, u.grad, (what, "input grad", step), atol=atol)
            ours_p = dict(ours.named_parameters())
            for name, p in theirs.named_parameters():
                if p.grad is None:
                    assert ours_p[name].grad is None, (what, name)
                else:
                    assert_close(ours_p[name].grad, p.grad, (what, "grad of", name), atol=atol)
        ours_b = dict(ours.named_buffers())
        for name, buf in theirs.named_buffers():
            assert_close(ours_b[name], buf, (what, "buffer", name, step))
    return ours, theirs


# -- layers ------------------------------------------------------------------------------------------
LAYERS = [
    ("Linear 2d", lambda m: m.Linear(5, 3), [(4, 5)]),
    ("Linear 3d no bias", lambda m: m.Linear(5, 3, bias=False), [(2, 3, 5)]),
    ("Bilinear", lambda m: m.Bilinear(3, 2, 4), [(5, 3), (5, 2)]),
    ("Conv2d stride pad dilation groups", lambda m: m.Conv2d(3, 6, 3, stride=2, padding=1, dilation=2, groups=3),
     [(2, 3, 9, 8)]),
    ("Conv2d same asymmetric", lambda m: m.Conv2d(4, 4, (3, 2), padding="same", dilation=(2, 1)), [(2, 4, 7, 6)]),
    ("Conv2d 1x1 no bias", lambda m: m.Conv2d(2, 5, 1, bias=False), [(3, 2, 4, 4)]),
    ("Conv2d strided rect", lambda m: m.Conv2d(2, 4, (2, 3), stride=(2, 1), padding=(0, 1)), [(2, 2, 7, 5)]),
    ("Conv2d stride == kernel", lambda m: m.Conv2d(3, 4, 2, stride=2), [(2, 3, 8, 8)]),
    ("Conv2d reflect", lambda m: m.Conv2d(2, 3, 3, padding=(2, 1), padding_mode="reflect"), [(1, 2, 5, 6)]),
    ("Conv2d replicate", lambda m: m.Conv2d(2, 3, 3, padding=1, padding_mode="replicate"), [(1, 2, 5, 6)]),
    ("Conv2d circular", lambda m: m.Conv2d(2, 3, 3, padding=2, padding_mode="circular"), [(1, 2, 5, 6)]),
    ("Conv2d unbatched", lambda m: m.Conv2d(2, 3, 3, padding=1), [(2, 5, 5)]),
    ("Conv1d", lambda m: m.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), [(2, 4, 11)]),
    ("Conv1d same dilated", lambda m: m.Conv1d(3, 2, 4, padding="same", dilation=2), [(2, 3, 9)]),
    ("MaxPool2d 2", lambda m: m.MaxPool2d(2), [(2, 3, 8, 8)]),
    ("MaxPool2d ceil pad", lambda m: m.MaxPool2d(3, 2, 1, ceil_mode=True), [(2, 3, 8, 7)]),
    ("MaxPool2d dilation", lambda m: m.MaxPool2d((2, 3), (1, 2), dilation=(2, 1)), [(1, 2, 7, 9)]),
    ("MaxPool2d unbatched", lambda m: m.MaxPool2d(2, 1), [(2, 5, 5)]),
    ("MaxPool1d", lambda m: m.MaxPool1d(3, 2, 1, ceil_mode=True), [(2, 3, 10)]),
    ("AvgPool2d 2", lambda m: m.AvgPool2d(2), [(2, 3, 8, 8)]),
    ("AvgPool2d exclude pad ceil", lambda m: m.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
     [(2, 3, 8, 7)]),
    ("AvgPool2d include pad ceil", lambda m: m.AvgPool2d(3, 2, 1, ceil_mode=True), [(1, 2, 6, 7)]),
    ("AvgPool2d divisor", lambda m: m.AvgPool2d((2, 3), (1, 2), (1, 1), divisor_override=4), [(1, 2, 6, 7)]),
    ("AvgPool1d", lambda m: m.AvgPool1d(3, 2, 1), [(2, 3, 10)]),
    ("AdaptiveAvgPool2d 3x2", lambda m: m.AdaptiveAvgPool2d((3, 2)), [(2, 3, 7, 5)]),
    ("AdaptiveAvgPool2d 1", lambda m: m.AdaptiveAvgPool2d(1), [(2, 3, 7, 5)]),
    ("AdaptiveAvgPool2d None", lambda m: m.AdaptiveAvgPool2d((None, 4)), [(2, 3, 5, 6)]),
    ("AdaptiveAvgPool1d", lambda m: m.AdaptiveAvgPool1d(4), [(2, 3, 7)]),
    ("LayerNorm", lambda m: m.LayerNorm((4, 5)), [(2, 3, 4, 5)]),
    ("LayerNorm no affine", lambda m: m.LayerNorm(5, elementwise_affine=False), [(3, 5)]),
    ("LayerNorm no bias", lambda m: m.LayerNorm(5, bias=False, eps=1e-3), [(3, 5)]),
    ("GroupNorm", lambda m: m.GroupNorm(2, 4), [(3, 4, 5)]),
    ("GroupNorm no affine", lambda m: m.GroupNorm(3, 6, affine=False), [(2, 6, 2, 3)]),
    ("Embedding padding_idx", lambda m: m.Embedding(10, 3, padding_idx=0), [np.array([[1, 0, 3], [0, 0, 9]])]),
    ("Embedding freq", lambda m: m.Embedding(6, 2, scale_grad_by_freq=True), [np.array([1, 1, 2, 5, 1])]),
    ("Flatten", lambda m: m.Flatten(), [(2, 3, 4)]),
    ("Unflatten", lambda m: m.Unflatten(1, (2, 6)), [(2, 12)]),
    ("Identity", lambda m: m.Identity(), [(3, 2)]),
    ("ReLU", lambda m: m.ReLU(), [(4, 5)]),
    ("ReLU6", lambda m: m.ReLU6(), [(4, 5)]),
    ("GELU", lambda m: m.GELU(), [(4, 5)]),
    ("GELU tanh", lambda m: m.GELU("tanh"), [(4, 5)]),
    ("SiLU", lambda m: m.SiLU(), [(4, 5)]),
    ("Mish", lambda m: m.Mish(), [(4, 5)]),
    ("Tanh", lambda m: m.Tanh(), [(4, 5)]),
    ("Sigmoid", lambda m: m.Sigmoid(), [(4, 5)]),
    ("LogSigmoid", lambda m: m.LogSigmoid(), [(4, 5)]),
    ("Softmax", lambda m: m.Softmax(1), [(4, 5)]),
    ("Softmin", lambda m: m.Softmin(0), [(4, 5)]),
    ("LogSoftmax", lambda m: m.LogSoftmax(-1), [(4, 5)]),
    ("LeakyReLU", lambda m: m.LeakyReLU(0.2), [(4, 5)]),
    ("ELU", lambda m: m.ELU(0.7), [(4, 5)]),
    ("Softplus", lambda m: m.Softplus(2.0, 3.0), [(4, 5)]),
    ("Hardtanh", lambda m: m.Hardtanh(-0.5, 0.8), [(4, 5)]),
]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")  # torch's own performance note
@pytest.mark.parametrize("name, make, shapes", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_pytorch(name, make, shapes):
    arrays = [s if isinstance(s, np.ndarray) else rand(*s, seed=i) * 2 for i, s in enumerate(shapes)]
    run_both(make(nn), make(TNN), arrays, what=name, atol=1e-4)


def test_max_pool_indices_match_pytorch():
    x = rand(2, 3, 7, 8)
    _, ours = F.max_pool2d(tp.tensor(x), 3, 2, 1, dilation=(1, 2), return_indices=True)
    _, theirs = TF.max_pool2d(torch.from_numpy(x), 3, 2, 1, dilation=(1, 2), return_indices=True)
    assert ours.tolist() == theirs.tolist()
    ties = np.zeros((1, 1, 4, 4), dtype=np.float32)  # every window is a tie: the first element wins
    ours = tp.tensor(ties).requires_grad_()
    theirs = torch.from_numpy(ties).requires_grad_()
    F.max_pool2d(ours, 2, 1).sum().backward()
    TF.max_pool2d(theirs, 2, 1).sum().backward()
    assert ours.grad.tolist() == theirs.grad.tolist()


BATCHNORMS = [
    ("BatchNorm1d 2d", lambda m: m.BatchNorm1d(4), (8, 4)),
    ("BatchNorm1d 3d momentum", lambda m: m.BatchNorm1d(3, momentum=0.3), (4, 3, 5)),
    ("BatchNorm2d", lambda m: m.BatchNorm2d(3), (4, 3, 5, 6)),
    ("BatchNorm2d cumulative", lambda m: m.BatchNorm2d(3, momentum=None), (2, 3, 4, 4)),
    ("BatchNorm2d no affine", lambda m: m.BatchNorm2d(3, affine=False, eps=1e-3), (2, 3, 4, 4)),
    ("BatchNorm2d no bias", lambda m: m.BatchNorm2d(3, bias=False), (2, 3, 4, 4)),
    ("BatchNorm1d untracked", lambda m: m.BatchNorm1d(3, track_running_stats=False), (6, 3)),
]


@pytest.mark.parametrize("name, make, shape", BATCHNORMS, ids=[c[0] for c in BATCHNORMS])
def test_batchnorm_train_then_eval_matches_pytorch(name, make, shape):
    ours, theirs = make(nn), make(TNN)
    with tp.no_grad():
        for p in ours.parameters():
            p.copy_(tp.tensor(rand(*p.shape, seed=7)))
    x = rand(*shape) * 3 + 2
    run_both(ours, theirs, [x], what=(name, "train"), steps=3)
    ours.eval()
    theirs.eval()
    run_both(ours, theirs, [rand(*shape, seed=5)], what=(name, "eval"))


def test_dropout_eval_and_statistics_match_pytorch():
    x = rand(3, 4)
    ours, theirs = nn.Dropout(0.3).eval(), TNN.Dropout(0.3).eval()
    run_both(ours, theirs, [x], what="eval")
    tp.manual_seed(0)
    torch.manual_seed(0)
    a = nn.Dropout(0.3)(tp.ones(50000)).numpy()
    b = TNN.Dropout(0.3)(torch.ones(50000)).numpy()
    assert set(np.unique(a)) == set(np.unique(b))  # the same two values: 0 and 1 / 0.7
    assert abs((a == 0).mean() - (b == 0).mean()) < 0.015


def test_embedding_max_norm_matches_pytorch():
    w = rand(5, 3) * 3
    ours, theirs = nn.Embedding(5, 3, max_norm=1.5, norm_type=1.0), TNN.Embedding(5, 3, max_norm=1.5, norm_type=1.0)
    with tp.no_grad():
        ours.weight.copy_(tp.tensor(w))
    run_both(ours, theirs, [np.array([[0, 2], [2, 4]])], what="max_norm")
    assert_close(ours.weight, theirs.weight, "renormalized weight")


# -- losses ---------------------------------------------------------------------------------------------
def _probs(*shape, seed=0):
    p = np.abs(rand(*shape, seed=seed)) + 0.1
    return (p / p.sum(1, keepdims=True)).astype(np.float32)


W4 = np.array([1.0, 2.0, 0.5, 3.0], dtype=np.float32)
T5 = np.array([0, 3, -100, 2, 1])
LOSSES = [
    ("CE", lambda m, T: m.CrossEntropyLoss(), [(5, 4), np.array([0, 3, 1, 2, 1])]),
    ("CE weight ignore", lambda m, T: m.CrossEntropyLoss(T(W4), ignore_index=1), [(5, 4), np.array([0, 3, 1, 2, 1])]),
    ("CE smoothing", lambda m, T: m.CrossEntropyLoss(label_smoothing=0.15), [(5, 4), T5]),
    ("CE smoothing weight sum", lambda m, T: m.CrossEntropyLoss(T(W4), label_smoothing=0.2, reduction="sum"),
     [(5, 4), T5]),
    ("CE smoothing weight none", lambda m, T: m.CrossEntropyLoss(T(W4), label_smoothing=0.2, reduction="none"),
     [(5, 4), T5]),
    ("CE smoothing weight mean", lambda m, T: m.CrossEntropyLoss(T(W4), label_smoothing=0.2), [(5, 4), T5]),
    ("CE K-dim", lambda m, T: m.CrossEntropyLoss(label_smoothing=0.1),
     [(2, 4, 3, 2), np.array([[[0, 1], [3, -100], [2, 2]], [[1, 0], [0, 3], [2, 1]]])]),
    ("CE unbatched", lambda m, T: m.CrossEntropyLoss(), [(4,), np.array(2)]),
    ("CE probabilities", lambda m, T: m.CrossEntropyLoss(), [(3, 4), _probs(3, 4)]),
    ("CE probabilities weight smoothing", lambda m, T: m.CrossEntropyLoss(T(W4), label_smoothing=0.3),
     [(3, 4), _probs(3, 4)]),
    ("CE probabilities K-dim none", lambda m, T: m.CrossEntropyLoss(reduction="none"),
     [(2, 4, 3), _probs(2, 4, 3)]),
    ("NLL", lambda m, T: m.NLLLoss(T(W4)), [(5, 4), T5]),
    ("NLL none", lambda m, T: m.NLLLoss(reduction="none", ignore_index=3), [(5, 4), T5 % 4]),
    ("MSE", lambda m, T: m.MSELoss(), [(3, 4), (3, 4)]),
    ("MSE sum", lambda m, T: m.MSELoss(reduction="sum"), [(3, 4), (3, 4)]),
    ("L1", lambda m, T: m.L1Loss(), [(3, 4), (3, 4)]),
    ("L1 none", lambda m, T: m.L1Loss(reduction="none"), [(3, 4), (3, 4)]),
    ("Huber", lambda m, T: m.HuberLoss(delta=0.6), [(3, 4), (3, 4)]),
    ("Huber sum", lambda m, T: m.HuberLoss("sum", delta=2.0), [(3, 4), (3, 4)]),
    ("SmoothL1", lambda m, T: m.SmoothL1Loss(beta=0.4), [(3, 4), (3, 4)]),
    ("BCEWithLogits", lambda m, T: m.BCEWithLogitsLoss(), [(3, 4), _probs(3, 4)]),
    ("BCEWithLogits pos_weight weight", lambda m, T: m.BCEWithLogitsLoss(T(rand(3, 4, seed=9) ** 2), pos_weight=T(W4)),
     [(3, 4), _probs(3, 4)]),
    ("BCEWithLogits none", lambda m, T: m.BCEWithLogitsLoss(reduction="none", pos_weight=T(W4)),
     [(2, 3, 4), np.abs(rand(2, 3, 4, seed=3)) % 1]),
    ("KLDiv batchmean", lambda m, T: m.KLDivLoss(reduction="batchmean"), [(3, 4), _probs(3, 4)]),
    ("KLDiv log_target", lambda m, T: m.KLDivLoss(reduction="sum", log_target=True), [(3, 4), (3, 4)]),
]


@pytest.mark.parametrize("name, make, shapes", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_matches_pytorch(name, make, shapes):
    arrays = [s if isinstance(s, np.ndarray) else rand(*s, seed=i) for i, s in enumerate(shapes)]
    if name.startswith("NLL"):
        arrays[0] = (arrays[0] - np.log(np.exp(arrays[0]).sum(1, keepdims=True))).astype(np.float32)
    ours, theirs = make(nn, tp.tensor), make(TNN, lambda a: torch.from_numpy(a.copy()))
    run_both(ours, theirs, arrays, what=name)


def test_bce_matches_pytorch():
    p = 1 / (1 + np.exp(-rand(3, 4)))
    t = np.abs(rand(3, 4, seed=1)) % 1
    w = np.abs(rand(3, 4, seed=2))
    ours = nn.BCELoss(tp.tensor(w.astype(np.float32)))
    theirs = TNN.BCELoss(torch.from_numpy(w.astype(np.float32)))
    run_both(ours, theirs, [p.astype(np.float32), t.astype(np.float32)], what="BCE")


# -- a small CNN end to end ------------------------------------------------------------------------------
def _cnn(m):
    return m.Sequential(m.Conv2d(1, 8, 3, padding=1), m.BatchNorm2d(8), m.ReLU(), m.MaxPool2d(2),
                        m.Conv2d(8, 16, 3, padding=1, groups=2), m.GELU(), m.AdaptiveAvgPool2d(2),
                        m.Flatten(), m.Dropout(0.0), m.Linear(64, 10))


def test_cnn_forward_backward_matches_pytorch():
    ours, theirs = _cnn(nn), _cnn(TNN)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    copy_weights(ours, theirs)
    x = rand(6, 1, 8, 8)
    y = np.array([0, 3, 9, 1, 1, 2])
    loss_ours = F.cross_entropy(ours(tp.tensor(x)), tp.tensor(y), label_smoothing=0.05)
    loss_theirs = TF.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y), label_smoothing=0.05)
    assert_close(loss_ours, loss_theirs, "loss")
    loss_ours.backward()
    loss_theirs.backward()
    for (n1, p1), (n2, p2) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n1 == n2
        assert_close(p1.grad, p2.grad, n1, atol=1e-4)
    norm_ours = nn.utils.clip_grad_norm_(ours.parameters(), 0.1)
    norm_theirs = torch.nn.utils.clip_grad_norm_(theirs.parameters(), 0.1)
    assert_close(norm_ours, norm_theirs, "total norm")
    for (n1, p1), (_, p2) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(p1.grad, p2.grad, ("clipped", n1), atol=1e-5)


# -- reprs, state dict keys, default initialization ------------------------------------------------------
REPR_CASES = [
    lambda m: m.Conv2d(3, 8, 3, padding="same"),
    lambda m: m.Conv2d(3, 8, (3, 5), stride=2, padding=1, dilation=2, bias=False, padding_mode="circular"),
    lambda m: m.Conv1d(2, 4, 3, groups=2),
    lambda m: m.MaxPool2d(2), lambda m: m.MaxPool2d(3, 1, 1, ceil_mode=True), lambda m: m.AvgPool2d(2),
    lambda m: m.AdaptiveAvgPool2d((1, None)), lambda m: m.BatchNorm2d(3, momentum=None),
    lambda m: m.BatchNorm1d(3, affine=False, track_running_stats=False), lambda m: m.LayerNorm(4),
    lambda m: m.LayerNorm((2, 3), elementwise_affine=False), lambda m: m.GroupNorm(2, 4),
    lambda m: m.Dropout(0.1, inplace=True), lambda m: m.Embedding(10, 3, padding_idx=0, max_norm=2.0),
    lambda m: m.Embedding(10, 3, norm_type=1.0, scale_grad_by_freq=True), lambda m: m.Flatten(0),
    lambda m: m.Unflatten(1, (2, 2)), lambda m: m.GELU(), lambda m: m.GELU("tanh"), lambda m: m.SiLU(),
    lambda m: m.Softmax(1), lambda m: m.LogSoftmax(), lambda m: m.LeakyReLU(), lambda m: m.LeakyReLU(0.2, True),
    lambda m: m.ReLU(True), lambda m: m.ELU(inplace=True), lambda m: m.Hardtanh(), lambda m: m.Softplus(),
    lambda m: m.CrossEntropyLoss(), lambda m: m.HuberLoss(), lambda m: m.Identity(), lambda m: m.Bilinear(2, 3, 4),
    lambda m: m.Linear(4, 3, bias=False), lambda m: m.Sequential(m.Linear(4, 3), m.ReLU()),
    lambda m: m.ModuleList([m.Linear(2, 2) for _ in range(3)] + [m.ReLU(), m.ReLU()]),
    lambda m: m.ModuleDict({"a": m.ReLU(), "b": m.Sequential(m.Tanh())}),
]


@pytest.mark.parametrize("make", REPR_CASES, ids=range(len(REPR_CASES)))
def test_repr_matches_pytorch(make):
    assert repr(make(nn)) == repr(make(TNN))


def test_parameter_repr_matches_pytorch():
    assert repr(nn.Parameter(tp.tensor([1.0, 2.0]))) == repr(TNN.Parameter(torch.tensor([1.0, 2.0]))) \
        .replace("torch", "tensorplug")


@pytest.mark.parametrize("make, attr, kind", [
    (lambda m: m.Linear(300, 200), "weight", "uniform"), (lambda m: m.Linear(300, 200), "bias", "uniform"),
    (lambda m: m.Conv2d(16, 64, 5), "weight", "uniform"), (lambda m: m.Conv2d(16, 64, 5), "bias", "uniform"),
    (lambda m: m.Conv1d(8, 300, 3, groups=4), "weight", "uniform"),
    (lambda m: m.Bilinear(20, 10, 40), "weight", "uniform"), (lambda m: m.Embedding(500, 64), "weight", "normal"),
])
def test_default_init_distributions_match_pytorch(make, attr, kind):
    ours = getattr(make(nn), attr).detach().numpy()
    theirs = getattr(make(TNN), attr).detach().numpy()
    assert ours.shape == theirs.shape
    if kind == "uniform":  # same bound: the extremes of many draws approach it from below
        bound = np.abs(theirs).max()
        assert np.abs(ours).max() <= bound * 1.02 and np.abs(ours).max() >= bound * 0.9
    assert ours.std() == pytest.approx(theirs.std(), rel=0.1)
    assert abs(ours.mean()) < 0.1 * ours.std() + 0.01


def test_load_state_dict_messages_match_pytorch_but_for_shape_format():
    bad = {"weight": np.ones((3, 5), np.float32), "foo": np.ones(1, np.float32)}
    with pytest.raises(RuntimeError) as ours:
        nn.Linear(4, 3).load_state_dict({k: tp.tensor(v) for k, v in bad.items()})
    with pytest.raises(RuntimeError) as theirs:
        TNN.Linear(4, 3).load_state_dict({k: torch.from_numpy(v) for k, v in bad.items()})
    expected = str(theirs.value).replace("torch.Size([3, 5])", "(3, 5)").replace("torch.Size([3, 4])", "(3, 4)")
    assert str(ours.value) == expected


def test_functional_errors_match_pytorch():
    cases = [
        (lambda f, t: f.conv2d(t(rand(2, 4, 8, 8)), t(rand(8, 3, 3, 3)))),
        (lambda f, t: f.max_pool2d(t(rand(1, 1, 4, 4)), 2, padding=2)),
        (lambda f, t: f.cross_entropy(t(rand(3, 4)), t(np.array([0, 5, 1])))),
        (lambda f, t: f.cross_entropy(t(rand(3, 4)), t(np.array([0, 1])))),
        (lambda f, t: f.layer_norm(t(rand(3, 4)), (5,))),
        (lambda f, t: f.group_norm(t(rand(3, 4)), 3)),
        (lambda f, t: f.dropout(t(rand(3)), 1.5)),
        (lambda f, t: f.embedding(t(np.array([5])), t(rand(3, 2)))),
        (lambda f, t: f.pad(t(rand(2, 3)), (1,))),
        (lambda f, t: f.mse_loss(t(rand(3)), t(rand(3)), reduction="foo")),
    ]
    for call in cases:
        with pytest.raises(Exception) as theirs:
            call(TF, lambda a: torch.from_numpy(a))
        with pytest.raises(Exception) as ours:
            call(F, tp.tensor)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value) == str(theirs.value)


def test_module_to_dtype_matches_pytorch():
    ours, theirs = _cnn(nn), _cnn(TNN)
    copy_weights(ours, theirs)
    ours.double()
    theirs.double()
    x = rand(2, 1, 8, 8).astype(np.float64)
    ours.eval()
    theirs.eval()
    assert_close(ours(tp.tensor(x)), theirs(torch.from_numpy(x)), "float64 forward", rtol=1e-10, atol=1e-12)
    assert {str(b.dtype).split(".")[-1] for b in ours.buffers()} == \
        {str(b.dtype).split(".")[-1] for b in theirs.buffers()}


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_clip_grad_norm_matches_pytorch(norm_type):
    grads = [rand(3, 4), rand(5, seed=1) * 10, rand(2, 2, seed=2)]
    ours = [nn.Parameter(tp.zeros(*g.shape)) for g in grads]
    theirs = [TNN.Parameter(torch.zeros(*g.shape)) for g in grads]
    for p, q, g in zip(ours, theirs, grads):
        p.grad = tp.tensor(g)
        q.grad = torch.from_numpy(g.copy())
    assert_close(nn.utils.clip_grad_norm_(ours, 1.5, norm_type),
                 torch.nn.utils.clip_grad_norm_(theirs, 1.5, norm_type), "norm")
    for p, q in zip(ours, theirs):
        assert_close(p.grad, q.grad, "clipped grad")
