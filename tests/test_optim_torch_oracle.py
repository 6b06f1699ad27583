"""Optimizers and schedulers against PyTorch: same parameters after the same hand-set gradients, same lrs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), ()]
STEPS = 10
TOL = {"float32": 1e-6, "float64": 1e-12}

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.2, "nesterov": True, "maximize": True}),
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.1, "betas": (0.8, 0.9), "eps": 1e-3}),
    ("Adam", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.3, "maximize": True}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.1}),
    ("AdamW", {"lr": 0.1, "weight_decay": 0.5}),
    ("AdamW", {"lr": 0.1, "amsgrad": True, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
    ("RMSprop", {"lr": 0.01, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-4, "momentum": 0.3, "weight_decay": 0.05, "centered": True}),
]


def _ids(case):
    name, kw = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in kw.items())


def _grads(dtype, seed):
    """Per step, one gradient array per parameter; the second parameter has none on step 4."""
    rng = np.random.default_rng(seed)
    out = []
    for step in range(STEPS):
        out.append([None if (step == 4 and i == 1) else rng.normal(size=s).astype(dtype) for i, s in enumerate(SHAPES)])
    return out


def _run_both(name, kw, dtype, seed=0, groups=False):
    rng = np.random.default_rng(100 + seed)
    init = [rng.normal(size=s).astype(dtype) for s in SHAPES]
    ours = [tp.tensor(a, requires_grad=True) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    if groups:
        ours_p = [{"params": ours[:1], "lr": 0.02}, {"params": ours[1:]}]
        theirs_p = [{"params": theirs[:1], "lr": 0.02}, {"params": theirs[1:]}]
    else:
        ours_p, theirs_p = ours, theirs
    opt = getattr(tp.optim, name)(ours_p, **kw)
    topt = getattr(torch.optim, name)(theirs_p, **kw)
    for step_grads in _grads(dtype, seed):
        for p, q, g in zip(ours, theirs, step_grads):
            p.grad = None if g is None else tp.tensor(g)
            q.grad = None if g is None else torch.tensor(g)
        opt.step()
        topt.step()
    return opt, topt, ours, theirs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_parameters_match_torch_after_ten_steps(case, dtype):
    name, kw = case
    opt, topt, ours, theirs = _run_both(name, kw, dtype)
    for p, q in zip(ours, theirs):
        assert p.dtype.name == dtype
        np.testing.assert_allclose(p.numpy(force=True), q.detach().numpy(), rtol=0, atol=TOL[dtype])
    # the optimizer state holds the same tensors under the same keys (looser: centered RMSprop's
    # sqrt(v - mean**2) cancels, which magnifies rounding differences in the momentum buffer)
    state_tol = {"float32": 1e-5, "float64": 1e-10}[dtype]
    ours_state, theirs_state = opt.state_dict()["state"], topt.state_dict()["state"]
    assert ours_state.keys() == theirs_state.keys()
    for k in ours_state:
        assert ours_state[k].keys() == theirs_state[k].keys()
        for key, v in ours_state[k].items():
            np.testing.assert_allclose(v.numpy(), theirs_state[k][key].numpy(), rtol=state_tol, atol=state_tol)


@pytest.mark.parametrize("name, kw", [CASES[1], CASES[8], CASES[15], CASES[20]])
def test_param_groups_with_own_lr_match_torch(name, kw):
    _, _, ours, theirs = _run_both(name, kw, "float64", seed=3, groups=True)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.numpy(force=True), q.detach().numpy(), rtol=0, atol=1e-12)


def _to_tp(obj):
    if isinstance(obj, torch.Tensor):
        return tp.tensor(obj.numpy())
    if isinstance(obj, dict):
        return {k: _to_tp(v) for k, v in obj.items()}
    return obj


@pytest.mark.parametrize("name, kw", [CASES[2], CASES[12], CASES[16], CASES[23]])
def test_state_dict_layout_matches_torch_and_loads_torchs(name, kw):
    opt, topt, ours, theirs = _run_both(name, kw, "float64", seed=5)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [g["params"] for g in tsd["param_groups"]]
    for g, tg in zip(sd["param_groups"], tsd["param_groups"]):
        assert {k: tg[k] for k in g} == g  # every option we keep, torch keeps with the same value
    # a state dict converted from torch's continues exactly like torch
    fresh = [tp.tensor(q.detach().numpy(), requires_grad=True) for q in theirs]
    opt2 = getattr(tp.optim, name)(fresh, **kw)
    opt2.load_state_dict(_to_tp(tsd))
    for g in _grads("float64", 9)[:3]:
        for p, q, a in zip(fresh, theirs, g):
            p.grad = None if a is None else tp.tensor(a)
            q.grad = None if a is None else torch.tensor(a)
        opt2.step()
        topt.step()
    for p, q in zip(fresh, theirs):
        np.testing.assert_allclose(p.numpy(force=True), q.detach().numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name, kw, message", [
    ("SGD", {"lr": -1}, "Invalid learning rate: -1"),
    ("SGD", {"lr": 0.1, "momentum": -0.5}, "Invalid momentum value: -0.5"),
    ("SGD", {"lr": 0.1, "weight_decay": -1e-3}, "Invalid weight_decay value: -0.001"),
    ("SGD", {"lr": 0.1, "nesterov": True}, "Nesterov momentum requires a momentum and zero dampening"),
    ("SGD", {"lr": 0.1, "nesterov": True, "momentum": 0.9, "dampening": 0.1},
     "Nesterov momentum requires a momentum and zero dampening"),
    ("Adam", {"lr": -0.5}, "Invalid learning rate: -0.5"),
    ("Adam", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
    ("Adam", {"betas": (1.0, 0.999)}, "Invalid beta parameter at index 0: 1.0"),
    ("Adam", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1"),
    ("AdamW", {"weight_decay": -2.0}, "Invalid weight_decay value: -2.0"),
    ("RMSprop", {"alpha": -0.1}, "Invalid alpha value: -0.1"),
    ("RMSprop", {"momentum": -1}, "Invalid momentum value: -1"),
    ("RMSprop", {"eps": -1e-8}, "Invalid epsilon value: -1e-08"),
])
def test_hyperparameter_errors_match_torch(name, kw, message):
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.ones(2, requires_grad=True)], **kw)
    with pytest.raises(ValueError) as ours:
        getattr(tp.optim, name)([tp.ones(2, requires_grad=True)], **kw)
    assert str(ours.value) == str(theirs.value) == message


# -- schedulers -------------------------------------------------------------------------------------
SCHEDULERS = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("StepLR", {"step_size": 1}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 10}),
    ("CosineAnnealingLR", {"T_max": 7, "eta_min": 0.01}),
    ("LambdaLR", {"lr_lambda": lambda epoch: 0.95 ** epoch + 1 / (epoch + 1)}),
]


def _sched_pair(name, kw):
    p, q = tp.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    p2, q2 = tp.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
    opt = tp.optim.SGD([{"params": [p]}, {"params": [p2], "lr": 0.3}], lr=0.1)
    topt = torch.optim.SGD([{"params": [q]}, {"params": [q2], "lr": 0.3}], lr=0.1)
    return (opt, getattr(tp.optim.lr_scheduler, name)(opt, **kw),
            topt, getattr(torch.optim.lr_scheduler, name)(topt, **kw))


@pytest.mark.parametrize("name, kw", SCHEDULERS, ids=[n + str(i) for i, (n, _) in enumerate(SCHEDULERS)])
def test_scheduler_lr_sequence_equals_torch(name, kw):
    opt, sched, topt, tsched = _sched_pair(name, kw)
    ours, theirs = [sched.get_last_lr()], [tsched.get_last_lr()]
    for _ in range(30):
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        ours.append(sched.get_last_lr())
        theirs.append(tsched.get_last_lr())
        assert [g["lr"] for g in opt.param_groups] == [g["lr"] for g in topt.param_groups]
    assert ours == theirs
    assert sched.state_dict().keys() == tsched.state_dict().keys()


@pytest.mark.parametrize("name, kw", SCHEDULERS[:5])
def test_scheduler_step_with_epoch_uses_torchs_closed_form(name, kw):
    opt, sched, topt, tsched = _sched_pair(name, kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in (4, 9, 13, 2):
            opt.step()
            topt.step()
            sched.step(epoch)
            tsched.step(epoch)
            assert sched.get_last_lr() == tsched.get_last_lr()


def test_scheduler_order_warning_matches_torch():
    opt, sched, topt, tsched = _sched_pair("StepLR", {"step_size": 2})
    with pytest.warns(UserWarning) as ours:
        sched.step()
    with pytest.warns(UserWarning) as theirs:
        tsched.step()
    assert str(ours[0].message) == str(theirs[0].message)
    assert "before `optimizer.step()`" in str(ours[0].message)


def test_cosine_recursion_stays_close_to_closed_form():
    opt, sched, _, _ = _sched_pair("CosineAnnealingLR", {"T_max": 10, "eta_min": 0.01})
    for epoch in range(1, 25):
        opt.step()
        sched.step()
        closed = 0.01 + (0.1 - 0.01) * (1 + math.cos(math.pi * epoch / 10)) / 2
        assert sched.get_last_lr()[0] == pytest.approx(closed, abs=1e-12)
