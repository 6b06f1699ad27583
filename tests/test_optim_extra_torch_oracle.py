"""Adagrad, Adadelta, Adamax, NAdam, RAdam, LBFGS and the added schedulers against PyTorch, step by step in float64."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), ()]
STEPS = 12

CASES = [
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1, "initial_accumulator_value": 0.2}),
    ("Adagrad", {"lr": 0.1, "eps": 1e-3, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.1}),
    ("Adadelta", {"maximize": True}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.95), "eps": 1e-3, "weight_decay": 0.2}),
    ("Adamax", {"lr": 0.05, "maximize": True}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "momentum_decay": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.05, "maximize": True, "betas": (0.7, 0.9)}),
    ("RAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.6), "maximize": True}),  # rho_t > 5 early
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True}),
]


def _ids(case):
    name, kw = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in kw.items())


def _run_both(name, kw, dtype="float64", seed=0):
    rng = np.random.default_rng(100 + seed)
    init = [rng.normal(size=s).astype(dtype) for s in SHAPES]
    ours = [tp.tensor(a, requires_grad=True) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    opt = getattr(tp.optim, name)(ours, **kw)
    topt = getattr(torch.optim, name)(theirs, **kw)
    grng = np.random.default_rng(seed)
    for step in range(STEPS):
        for i, (p, q) in enumerate(zip(ours, theirs)):
            g = None if (step == 4 and i == 1) else grng.normal(size=SHAPES[i]).astype(dtype)
            p.grad = None if g is None else tp.tensor(g)
            q.grad = None if g is None else torch.tensor(g)
        opt.step()
        topt.step()
        for p, q in zip(ours, theirs):  # step by step, not only at the end
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=0, atol=1e-12,
                                       err_msg=f"step {step}")
    return opt, topt


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_optimizer_matches_torch_every_step(case):
    name, kw = case
    opt, topt = _run_both(name, kw)
    sd, tsd = opt.state_dict()["state"], topt.state_dict()["state"]
    assert sd.keys() == tsd.keys()
    for k in sd:
        assert sd[k].keys() == tsd[k].keys()
        for key, v in sd[k].items():
            np.testing.assert_allclose(np.asarray(v.numpy()), tsd[k][key].numpy(), rtol=1e-10, atol=1e-12)
    for g, tg in zip(opt.state_dict()["param_groups"], topt.state_dict()["param_groups"]):
        assert {k: tg[k] for k in g} == g


def test_float32_close_to_torch():
    opt, topt = None, None
    for name, kw in [("NAdam", {"lr": 0.05}), ("RAdam", {"lr": 0.05}), ("Adagrad", {"lr": 0.1})]:
        rng = np.random.default_rng(0)
        a = rng.normal(size=(4, 3)).astype("float32")
        p, q = tp.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        opt, topt = getattr(tp.optim, name)([p], **kw), getattr(torch.optim, name)([q], **kw)
        for _ in range(5):
            g = rng.normal(size=(4, 3)).astype("float32")
            p.grad, q.grad = tp.tensor(g), torch.tensor(g)
            opt.step()
            topt.step()
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name, kw, exc, message", [
    ("Adagrad", {"lr": -1}, ValueError, "Invalid learning rate: -1"),
    ("Adagrad", {"lr_decay": -1}, ValueError, "Invalid lr_decay value: -1"),
    ("Adagrad", {"initial_accumulator_value": -1}, ValueError, "Invalid initial_accumulator_value value: -1"),
    ("Adagrad", {"eps": -1}, ValueError, "Invalid epsilon value: -1"),
    ("Adadelta", {"rho": 1.5}, ValueError, "Invalid rho value: 1.5"),
    ("Adadelta", {"weight_decay": -1}, ValueError, "Invalid weight_decay value: -1"),
    ("Adamax", {"betas": (1.0, 0.9)}, ValueError, "Invalid beta parameter at index 0: 1.0"),
    ("NAdam", {"momentum_decay": -1}, ValueError, "Invalid momentum_decay value: -1"),
    ("NAdam", {"betas": (0.9, 1.0)}, ValueError, "Invalid beta parameter at index 1: 1.0"),
    ("RAdam", {"eps": -1}, ValueError, "Invalid epsilon value: -1"),
    ("LBFGS", {"lr": -1}, ValueError, "Invalid learning rate: -1"),
])
def test_bad_hyperparameters_raise_torchs_errors(name, kw, exc, message):
    with pytest.raises(exc) as theirs:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kw)
    assert str(theirs.value) == message
    with pytest.raises(exc, match="^" + message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.") + "$"):
        getattr(tp.optim, name)([tp.zeros(1, requires_grad=True)], **kw)


# -- LBFGS ---------------------------------------------------------------------------------------------------

_A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]])
_B = np.array([1.0, -2.0, 0.5])


def _objective(x, mod):
    """A convex quartic: well conditioned, so rounding differences do not grow from step to step."""
    a, b = mod.tensor(_A), mod.tensor(_B)
    return 0.5 * (x * (a @ x)).sum() - (b * x).sum() + 0.1 * (x ** 4).sum()


@pytest.mark.parametrize("kw", [{}, {"history_size": 3, "max_iter": 7}, {"line_search_fn": "strong_wolfe"},
                                {"line_search_fn": "strong_wolfe", "history_size": 2, "lr": 0.5},
                                {"max_iter": 3, "max_eval": 4}, {"lr": 0.1, "max_iter": 5},
                                {"line_search_fn": "strong_wolfe", "lr": 3.0, "max_iter": 4}])
def test_lbfgs_matches_torch(kw):
    ours = tp.tensor([-1.5, 2.0, 3.0], dtype=tp.float64, requires_grad=True)
    theirs = torch.tensor([-1.5, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    opt, topt = tp.optim.LBFGS([ours], **kw), torch.optim.LBFGS([theirs], **kw)
    evals = [0, 0]

    def closure():
        evals[0] += 1
        opt.zero_grad()
        loss = _objective(ours, tp)
        loss.backward()
        return loss

    def tclosure():
        evals[1] += 1
        topt.zero_grad()
        loss = _objective(theirs, torch)
        loss.backward()
        return loss

    for _ in range(4):
        a, b = opt.step(closure), topt.step(tclosure)
        assert a.item() == pytest.approx(b.item(), rel=1e-10, abs=1e-12)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-9, atol=1e-12)
    assert evals[0] == evals[1]
    s, ts = opt.state[ours], topt.state[theirs]
    assert (s["func_evals"], s["n_iter"]) == (ts["func_evals"], ts["n_iter"])


def test_lbfgs_with_a_module_and_group_errors():
    tp.manual_seed(0)
    model = tp.nn.Linear(3, 1)
    x = tp.randn(16, 3)
    y = x @ tp.tensor([[1.0], [-2.0], [0.5]]) + 0.25
    opt = tp.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss
    for _ in range(3):
        opt.step(closure)
    assert closure().item() < 1e-8
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        tp.optim.LBFGS([{"params": [tp.zeros(1, requires_grad=True)]}, {"params": [tp.zeros(1, requires_grad=True)]}])
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt = tp.optim.LBFGS([tp.ones(1, requires_grad=True)], line_search_fn="armijo")
        p = opt.param_groups[0]["params"][0]

        def c():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss
        opt.step(c)


# -- schedulers ----------------------------------------------------------------------------------------------

def _pair(momentum=True, betas=False, groups=1):
    ps = [tp.zeros(1, requires_grad=True) for _ in range(groups)]
    qs = [torch.zeros(1, requires_grad=True) for _ in range(groups)]
    if betas:
        return tp.optim.Adam([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)]), \
            torch.optim.Adam([{"params": [q], "lr": 0.1 * (i + 1)} for i, q in enumerate(qs)])
    kw = {"momentum": 0.9} if momentum else {}
    return tp.optim.SGD([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)], **kw), \
        torch.optim.SGD([{"params": [q], "lr": 0.1 * (i + 1)} for i, q in enumerate(qs)], **kw)


SCHEDULERS = [
    ("MultiStepLR", {"milestones": [2, 5, 5, 8], "gamma": 0.5}),
    ("ConstantLR", {"factor": 0.25, "total_iters": 4}),
    ("LinearLR", {}),
    ("LinearLR", {"start_factor": 0.1, "end_factor": 0.9, "total_iters": 7}),
    ("PolynomialLR", {"total_iters": 6, "power": 2.0}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3}),
    ("CosineAnnealingWarmRestarts", {"T_0": 2, "T_mult": 2, "eta_min": 0.01}),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": 14}),
    ("OneCycleLR", {"max_lr": [1.0, 2.0], "epochs": 2, "steps_per_epoch": 7, "anneal_strategy": "linear",
                    "three_phase": True}),
    ("LambdaLR", {"lr_lambda": lambda e: 0.95 ** e}),
]


@pytest.mark.parametrize("betas", [False, True])
@pytest.mark.parametrize("case", SCHEDULERS, ids=[c[0] + str(i) for i, c in enumerate(SCHEDULERS)])
def test_scheduler_lrs_match_torch(case, betas):
    name, kw = case
    opt, topt = _pair(betas=betas, groups=2)
    s = getattr(tp.optim.lr_scheduler, name)(opt, **kw)
    ts = getattr(torch.optim.lr_scheduler, name)(topt, **kw)
    assert s.get_last_lr() == ts.get_last_lr()
    for epoch in range(14 if name == "OneCycleLR" else 15):
        opt.step()
        topt.step()
        s.step()
        ts.step()
        assert s.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-14, abs=0), epoch
        for g, tg in zip(opt.param_groups, topt.param_groups):
            if "momentum" in tg:
                assert g["momentum"] == pytest.approx(tg["momentum"], rel=1e-14)
            if "betas" in tg:
                assert g["betas"][0] == pytest.approx(tg["betas"][0], rel=1e-14)


def test_one_cycle_steps_past_the_end_raise_torchs_error():
    opt, topt = _pair()
    s = tp.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    for _ in range(2):
        opt.step()
        s.step()
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total steps is 2"):
        s.step()


def test_warm_restarts_fractional_epochs_match_torch():
    opt, topt = _pair()
    kw = {"T_0": 3, "T_mult": 2}
    s = tp.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, **kw)
    ts = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(topt, **kw)
    for i in range(40):
        epoch = i / 4
        opt.step()
        topt.step()
        s.step(epoch)
        ts.step(epoch)
        assert s.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-14)
        assert (s.T_i, s.last_epoch) == (ts.T_i, ts.last_epoch)


def _sequential_pair(opt, mod):
    first = mod.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)
    second = mod.lr_scheduler.ExponentialLR(opt, gamma=0.8)
    third = mod.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    return mod.lr_scheduler.SequentialLR(opt, [first, second, third], milestones=[3, 7])


def test_sequential_and_chained_match_torch():
    for kind in ("sequential", "chained"):
        opt, topt = _pair(groups=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "sequential":
                s, ts = _sequential_pair(opt, tp.optim), _sequential_pair(topt, torch.optim)
            else:
                s = tp.optim.lr_scheduler.ChainedScheduler([tp.optim.lr_scheduler.ConstantLR(opt, factor=0.5),
                                                             tp.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)])
                ts = torch.optim.lr_scheduler.ChainedScheduler(
                    [torch.optim.lr_scheduler.ConstantLR(topt, factor=0.5),
                     torch.optim.lr_scheduler.ExponentialLR(topt, gamma=0.9)])
            assert s.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-14)
            for epoch in range(12):
                opt.step()
                topt.step()
                s.step()
                ts.step()
                assert s.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-14), (kind, epoch)
                assert [g["lr"] for g in opt.param_groups] == pytest.approx([g["lr"] for g in topt.param_groups],
                                                                            rel=1e-14)


@pytest.mark.parametrize("kw", [{}, {"mode": "max", "factor": 0.5, "patience": 2, "cooldown": 1},
                                {"threshold_mode": "abs", "threshold": 0.1, "patience": 1, "min_lr": 0.02},
                                {"min_lr": [0.05, 0.001], "patience": 0, "eps": 1e-3}])
def test_reduce_on_plateau_matches_torch(kw):
    opt, topt = _pair(groups=2)
    s = tp.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
    ts = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kw)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.91, 0.96, 0.97, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.7]
    for m in metrics:
        s.step(tp.tensor(m))
        ts.step(torch.tensor(m))
        assert s.get_last_lr() == ts.get_last_lr()
        assert (s.num_bad_epochs, s.cooldown_counter, s.best) == (ts.num_bad_epochs, ts.cooldown_counter, ts.best)


@pytest.mark.parametrize("build", [
    lambda m, o: m.optim.lr_scheduler.ConstantLR(o, factor=1.5),
    lambda m, o: m.optim.lr_scheduler.LinearLR(o, start_factor=0),
    lambda m, o: m.optim.lr_scheduler.LinearLR(o, end_factor=1.5),
    lambda m, o: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda m, o: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=0),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=2.0),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="exp"),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=[1.0, 2.0, 3.0], total_steps=5),
    lambda m, o: m.optim.lr_scheduler.ReduceLROnPlateau(o, factor=1.0),
    lambda m, o: m.optim.lr_scheduler.ReduceLROnPlateau(o, mode="avg"),
    lambda m, o: m.optim.lr_scheduler.ReduceLROnPlateau(o, threshold_mode="pct"),
    lambda m, o: m.optim.lr_scheduler.ReduceLROnPlateau(o, min_lr=[0.1]),
    lambda m, o: m.optim.lr_scheduler.SequentialLR(o, [], milestones=[]),
    lambda m, o: m.optim.lr_scheduler.SequentialLR(o, [m.optim.lr_scheduler.ExponentialLR(o, 0.9)], milestones=[2]),
    lambda m, o: m.optim.lr_scheduler.ChainedScheduler([]),
    lambda m, o: m.optim.lr_scheduler.ChainedScheduler([m.optim.lr_scheduler.ReduceLROnPlateau(o)]),
])
def test_scheduler_errors_match_torch(build):
    opt, topt = _pair(groups=2)
    with pytest.raises(Exception) as theirs:
        build(torch, topt)
    with pytest.raises(type(theirs.value)) as ours:
        build(tp, opt)
    assert str(ours.value) == str(theirs.value).replace("torch.", "tensorplug.")


def test_one_cycle_without_momentum_support_raises():
    p = tp.zeros(1, requires_grad=True)
    opt = tp.optim.Adagrad([p])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1 with `cycle_momentum`"):
        tp.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=4)
    s = tp.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=4, cycle_momentum=False)
    assert s.get_last_lr() == pytest.approx([0.04], rel=1e-12)
    assert math.isclose(opt.param_groups[0]["min_lr"], 0.04 / 1e4)
