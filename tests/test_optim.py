"""tensorplug.optim: update rules against hand computations and a float64 numpy reference, param groups,
state dicts, errors, and the learning rate schedulers."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.optim import lr_scheduler


def leaf(values, dtype=tp.float64):
    return tp.tensor(values, dtype=dtype, requires_grad=True)


def values(t):
    return t.numpy(force=True).tolist()


# -- hand computations ------------------------------------------------------------------------------
def test_sgd_plain_step_is_p_minus_lr_grad():
    p = leaf([1.0, -2.0])
    opt = tp.optim.SGD([p], lr=0.5)
    p.grad = tp.tensor([0.25, 4.0], dtype=tp.float64)
    opt.step()
    assert values(p) == [1.0 - 0.125, -2.0 - 2.0]


def test_sgd_momentum_first_buffer_is_the_grad_then_dampened():
    p = leaf([0.0])
    opt = tp.optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.5)
    p.grad = tp.tensor([2.0], dtype=tp.float64)
    opt.step()                              # b1 = g = 2 (no dampening on the first step)
    assert values(opt.state[p]["momentum_buffer"]) == [2.0]
    assert values(p) == pytest.approx([-0.2], abs=1e-15)
    opt.step()                              # b2 = 0.9 * 2 + 0.5 * 2 = 2.8
    assert values(opt.state[p]["momentum_buffer"]) == pytest.approx([2.8], abs=1e-15)
    assert values(p) == pytest.approx([-0.2 - 0.28], abs=1e-15)


def test_sgd_nesterov_and_weight_decay_by_hand():
    p = leaf([1.0])
    opt = tp.optim.SGD([p], lr=0.1, momentum=0.5, nesterov=True, weight_decay=0.2)
    p.grad = tp.tensor([1.0], dtype=tp.float64)
    opt.step()          # g = 1 + 0.2 * 1 = 1.2; b = 1.2; g' = 1.2 + 0.5 * 1.2 = 1.8; p = 1 - 0.18
    assert values(p) == pytest.approx([0.82], abs=1e-15)
    opt.step()          # g = 1 + 0.2 * 0.82 = 1.164; b = 0.6 + 1.164 = 1.764; g' = 1.164 + 0.882 = 2.046
    assert values(p) == pytest.approx([0.82 - 0.2046], abs=1e-15)


def test_adam_first_steps_by_hand():
    p = leaf([1.0, -1.0])
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
    opt = tp.optim.Adam([p], lr=lr, betas=(b1, b2), eps=eps)
    g1, g2 = [0.5, -3.0], [1.0, 2.0]
    p.grad = tp.tensor(g1, dtype=tp.float64)
    opt.step()
    # step 1: m = (1-b1) g, v = (1-b2) g^2, bias corrections make the update lr * g / (|g| + eps)
    expect1 = [1.0 - lr * 0.5 / (0.5 + eps), -1.0 + lr * 3.0 / (3.0 + eps)]
    assert values(p) == pytest.approx(expect1, abs=1e-14)
    p.grad = tp.tensor(g2, dtype=tp.float64)
    opt.step()
    expect2 = []
    for x, a, b in zip(expect1, g1, g2):
        m = b1 * (1 - b1) * a + (1 - b1) * b
        v = b2 * (1 - b2) * a * a + (1 - b2) * b * b
        expect2.append(x - lr / (1 - b1 ** 2) * m / (math.sqrt(v) / math.sqrt(1 - b2 ** 2) + eps))
    assert values(p) == pytest.approx(expect2, abs=1e-14)
    assert opt.state[p]["step"].item() == 2.0


def test_adamw_decays_weights_before_the_adam_update():
    p = leaf([2.0])
    opt = tp.optim.AdamW([p], lr=0.1, weight_decay=0.5)
    p.grad = tp.tensor([0.0], dtype=tp.float64)     # zero grad: only the decay moves p
    opt.step()
    assert values(p) == pytest.approx([2.0 * (1 - 0.1 * 0.5)], abs=1e-15)


def test_rmsprop_first_step_by_hand():
    p = leaf([1.0])
    opt = tp.optim.RMSprop([p], lr=0.01, alpha=0.9, eps=1e-6)
    p.grad = tp.tensor([2.0], dtype=tp.float64)
    opt.step()   # v = 0.1 * 4 = 0.4; p = 1 - 0.01 * 2 / (sqrt(0.4) + 1e-6)
    assert values(p) == pytest.approx([1.0 - 0.02 / (math.sqrt(0.4) + 1e-6)], abs=1e-15)


# -- a float64 numpy reference for several steps and option combinations ----------------------------
def ref_sgd(p, grads, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
    buf = None
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def ref_adam(p, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False,
             decoupled=False):
    b1, b2 = betas
    m = v = vmax = np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        vv = vmax if amsgrad else v
        p = p - lr / (1 - b1 ** t) * m / (np.sqrt(vv) / math.sqrt(1 - b2 ** t) + eps)
    return p


def ref_rmsprop(p, grads, lr, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False, maximize=False):
    v = gavg = buf = np.zeros_like(p)
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        if centered:
            gavg = alpha * gavg + (1 - alpha) * g
            avg = np.sqrt(v - gavg * gavg) + eps
        else:
            avg = np.sqrt(v) + eps
        if momentum:
            buf = momentum * buf + g / avg
            p = p - lr * buf
        else:
            p = p - lr * g / avg
    return p


REFERENCE_CASES = [
    ("SGD", ref_sgd, {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", ref_sgd, {"lr": 0.1, "momentum": 0.8, "nesterov": True, "maximize": True}),
    ("Adam", ref_adam, {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", ref_adam, {"lr": 0.05, "betas": (0.5, 0.6), "eps": 1e-3, "maximize": True}),
    ("AdamW", lambda p, g, **kw: ref_adam(p, g, decoupled=True, **kw), {"lr": 0.05, "weight_decay": 0.3}),
    ("RMSprop", ref_rmsprop, {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("RMSprop", ref_rmsprop, {"lr": 0.01, "alpha": 0.8, "maximize": True}),
]


@pytest.mark.parametrize("name, ref, kw", REFERENCE_CASES)
def test_five_steps_match_numpy_reference(name, ref, kw):
    rng = np.random.default_rng(7)
    p0 = rng.normal(size=(2, 3))
    grads = [rng.normal(size=(2, 3)) for _ in range(5)]
    p = tp.tensor(p0, requires_grad=True)
    opt = getattr(tp.optim, name)([p], **kw)
    for g in grads:
        p.grad = tp.tensor(g)
        opt.step()
    np.testing.assert_allclose(p.numpy(force=True), ref(p0, grads, **kw), rtol=0, atol=1e-12)


# -- mechanics ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda ps: tp.optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: tp.optim.Adam(ps),
                                  lambda ps: tp.optim.AdamW(ps), lambda ps: tp.optim.RMSprop(ps, centered=True)])
def test_parameters_are_updated_in_place_and_without_history(make):
    p = tp.ones(3, requires_grad=True)
    ptr, obj = p.data_ptr(), p
    opt = make([p])
    p.grad = tp.full((3,), 0.5)
    opt.step()
    assert opt.param_groups[0]["params"][0] is obj
    assert p.data_ptr() == ptr and p._version > 0
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert values(p) != [1.0, 1.0, 1.0]


def test_step_skips_parameters_without_grad():
    a, b = leaf([1.0]), leaf([2.0])
    opt = tp.optim.Adam([a, b], lr=0.1)
    a.grad = tp.tensor([1.0], dtype=tp.float64)
    opt.step()
    assert values(b) == [2.0] and b not in opt.state and a in opt.state


def test_step_runs_closure_with_grad_enabled_and_returns_its_loss():
    p = leaf([3.0])
    opt = tp.optim.SGD([p], lr=0.1)
    seen = []

    def closure():
        seen.append(tp.is_grad_enabled())
        p.grad = tp.tensor([1.0], dtype=tp.float64)
        return 42.0

    with tp.no_grad():
        assert opt.step(closure) == 42.0
    assert seen == [True] and values(p) == [2.9]


def test_step_disables_grad_inside():
    seen = []

    class Probe(tp.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {})

        def step(self, closure=None):
            seen.append(tp.is_grad_enabled())

    Probe([leaf([1.0])]).step()
    assert seen == [False] and tp.is_grad_enabled()


@pytest.mark.parametrize("default, expected", [(tp.float32, tp.float32), (tp.float64, tp.float64)])
def test_step_counter_is_a_scalar_tensor_of_the_default_float_dtype(default, expected):
    prev = tp.get_default_dtype()
    tp.set_default_dtype(default)
    try:
        p = leaf([1.0])
        opt = tp.optim.Adam([p])
        p.grad = tp.ones_like(p)
        opt.step()
    finally:
        tp.set_default_dtype(prev)
    step = opt.state[p]["step"]
    assert step.shape == () and step.dtype is expected and step.item() == 1.0


def test_zero_grad_sets_none_or_zeroes_in_place():
    p = leaf([1.0, 2.0])
    opt = tp.optim.SGD([p], lr=0.1)
    p.grad = tp.tensor([3.0, 4.0], dtype=tp.float64)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and values(g) == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_param_groups_take_defaults_and_keep_their_own_options():
    a, b = leaf([1.0]), leaf([1.0])
    opt = tp.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert [g["momentum"] for g in opt.param_groups] == [0, 0.9]
    assert len(opt.param_groups[1]["params"]) == 1 and opt.param_groups[1]["params"][0] is b
    a.grad = tp.tensor([1.0], dtype=tp.float64)
    b.grad = tp.tensor([1.0], dtype=tp.float64)
    opt.step()
    assert values(a) == [0.9] and values(b) == [0.5]
    c = leaf([0.0])
    opt.add_param_group({"params": [c], "lr": 2.0})
    assert opt.param_groups[2]["momentum"] == 0 and opt.param_groups[2]["lr"] == 2.0


def test_named_parameters_are_accepted():
    a, b = leaf([1.0]), leaf([2.0])
    opt = tp.optim.SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


@pytest.mark.parametrize("params, exc, message", [
    ([], ValueError, "optimizer got an empty parameter list"),
    (tp.ones(2), TypeError, "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got tensorplug.Tensor"),
    ([1.0], TypeError, "optimizer can only optimize Tensors, but one of the params is float"),
    ({"a": 1}, TypeError, "optimizer can only optimize Tensors, but one of the params is str"),
    ([{"params": {tp.ones(1)}}], TypeError, "optimizer parameters need to be organized in ordered collections"),
])
def test_constructor_errors(params, exc, message):
    with pytest.raises(exc, match=message):
        tp.optim.SGD(params, lr=0.1)


def test_group_errors():
    a = leaf([1.0])
    opt = tp.optim.SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="param_group must be a dict, but got <class 'list'>"):
        opt.add_param_group([a])
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        tp.optim.SGD([a * 2], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        tp.optim.SGD([a, a], lr=0.1)
    with pytest.raises(ValueError, match="all optimizer param groups should be with/without names"):
        opt.add_param_group({"params": [("w", leaf([1.0]))]})


def test_required_option_must_be_set_by_each_group():
    class Needs(tp.optim.Optimizer):
        def __init__(self, params, lr=tp.optim.optimizer.required):
            super().__init__(params, {"lr": lr})

    with pytest.raises(ValueError, match="parameter group didn't specify a value of required optimization "
                                         "parameter lr"):
        Needs([leaf([1.0])])
    assert Needs([{"params": [leaf([1.0])], "lr": 1.0}]).param_groups[0]["lr"] == 1.0


def test_repr_lists_each_groups_options():
    opt = tp.optim.SGD([leaf([1.0])], lr=0.1)
    # PyTorch's options, in its order (sorted), foreach / differentiable / fused included
    assert repr(opt).splitlines() == ["SGD (", "Parameter Group 0", "    dampening: 0", "    differentiable: False",
                                      "    foreach: None", "    fused: None", "    lr: 0.1", "    maximize: False",
                                      "    momentum: 0", "    nesterov: False", "    weight_decay: 0", ")"]


# -- state dicts -------------------------------------------------------------------------------------
def _stepped_adam(seed=0, **kw):
    rng = np.random.default_rng(seed)
    ps = [tp.tensor(rng.normal(size=s), requires_grad=True) for s in [(2,), (3,), (1,)]]
    opt = tp.optim.Adam([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.01}], lr=0.1, **kw)
    for _ in range(3):
        for p in ps:
            p.grad = tp.tensor(rng.normal(size=p.shape))
        opt.step()
    return opt, ps


def test_state_dict_uses_indices_across_groups():
    opt, ps = _stepped_adam(amsgrad=True)
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1, 2]]
    assert sorted(sd["state"]) == [0, 1, 2]
    assert set(sd["state"][1]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert sd["state"][2]["exp_avg"] is opt.state[ps[2]]["exp_avg"]
    assert sd["param_groups"][1] == {"lr": 0.01, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0,
                                     "amsgrad": True, "maximize": False, "decoupled_weight_decay": False,
                                     "foreach": None, "capturable": False, "differentiable": False,
                                     "fused": None, "params": [1, 2]}


def test_load_state_dict_restores_state_and_hyperparameters_then_continues_identically():
    opt, ps = _stepped_adam(seed=1)
    opt.param_groups[0]["lr"] = 0.2
    sd = opt.state_dict()
    clones = [tp.tensor(p.numpy(force=True), requires_grad=True) for p in ps]
    opt2 = tp.optim.Adam([{"params": clones[:1]}, {"params": clones[1:]}], lr=0.5)
    opt2.load_state_dict(sd)
    assert [g["lr"] for g in opt2.param_groups] == [0.2, 0.01]
    assert opt2.param_groups[0]["params"][0] is clones[0]
    # copies, not aliases (PyTorch would share the buffers and the two runs below would interfere)
    assert opt2.state[clones[1]]["exp_avg"] is not opt.state[ps[1]]["exp_avg"]
    rng = np.random.default_rng(2)
    for _ in range(2):
        for p, q in zip(ps, clones):
            g = rng.normal(size=p.shape)
            p.grad, q.grad = tp.tensor(g), tp.tensor(g)
        opt.step()
        opt2.step()
    for p, q in zip(ps, clones):
        assert values(p) == values(q)


def test_load_state_dict_copies_and_casts_state_to_the_parameters_dtype_but_keeps_steps():
    opt, _ = _stepped_adam(seed=3)
    sd = opt.state_dict()
    ps32 = [tp.zeros(s, dtype=tp.float32, requires_grad=True) for s in [(2,), (3,), (1,)]]
    opt32 = tp.optim.Adam([{"params": ps32[:1]}, {"params": ps32[1:]}])
    opt32.load_state_dict(sd)
    assert opt32.state[ps32[1]]["exp_avg"].dtype is tp.float32
    step = opt32.state[ps32[1]]["step"]
    assert step.dtype is sd["state"][1]["step"].dtype and step.item() == 3.0
    assert step is not sd["state"][1]["step"]


@pytest.mark.parametrize("groups, message", [
    (lambda a, b, c: [a, b, c], "loaded state dict has a different number of parameter groups"),
    (lambda a, b, c: [{"params": [a, b]}, {"params": [c]}],
     "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"),
])
def test_load_state_dict_checks_groups(groups, message):
    opt, _ = _stepped_adam()
    other = tp.optim.Adam(groups(leaf([1.0, 2.0]), leaf([1.0, 2.0, 3.0]), leaf([1.0])))
    with pytest.raises(ValueError, match=message):
        other.load_state_dict(opt.state_dict())


def test_load_state_dict_accepts_plain_number_steps():
    p = leaf([1.0])
    opt = tp.optim.RMSprop([p])
    sd = {"state": {0: {"step": 3, "square_avg": tp.tensor([1.0], dtype=tp.float64)}},
          "param_groups": [{"lr": 0.1, "alpha": 0.5, "eps": 1e-8, "weight_decay": 0, "params": [0]}]}
    opt.load_state_dict(sd)
    assert opt.state[p]["step"].item() == 3.0 and opt.param_groups[0]["momentum"] == 0


# -- schedulers --------------------------------------------------------------------------------------
def _opt(lr=1.0):
    return tp.optim.SGD([leaf([1.0])], lr=lr)


def _run(sched, opt, n):
    out = [sched.get_last_lr()[0]]
    for _ in range(n):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr()[0])
    return out


@pytest.mark.parametrize("make, expected", [
    (lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=0.5), [1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.125]),
    (lambda o: lr_scheduler.ExponentialLR(o, gamma=0.5), [1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625]),
    (lambda o: lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1)), [1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6, 1 / 7]),
    (lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=4),
     [(1 + math.cos(math.pi * t / 4)) / 2 for t in range(7)]),
])
def test_scheduler_sequences(make, expected):
    opt = _opt()
    got = _run(make(opt), opt, 6)
    assert got == pytest.approx(expected, abs=1e-15)
    assert opt.param_groups[0]["lr"] == got[-1] and opt.param_groups[0]["initial_lr"] == 1.0


def test_scheduler_state_dict_round_trip_resumes_the_schedule():
    opt = _opt()
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.1)
    _run(sched, opt, 3)
    saved_sched, saved_opt = sched.state_dict(), opt.state_dict()
    assert "optimizer" not in saved_sched and saved_sched["last_epoch"] == 3
    rest = _run(sched, opt, 4)
    opt2 = _opt(lr=7.0)
    sched2 = lr_scheduler.CosineAnnealingLR(opt2, T_max=10, eta_min=0.1)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    assert _run(sched2, opt2, 4) == rest


def test_lambda_scheduler_state_dict_keeps_callable_objects_state_only():
    class Factor:
        def __init__(self):
            self.base = 0.5

        def __call__(self, epoch):
            return self.base ** epoch

    opt = tp.optim.SGD([{"params": [leaf([1.0])]}, {"params": [leaf([1.0])]}], lr=1.0)
    fn = Factor()
    sched = lr_scheduler.LambdaLR(opt, [fn, lambda e: 1.0])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [{"base": 0.5}, None]
    fn.base = 0.1
    sched.load_state_dict(sd)
    assert fn.base == 0.5 and "lr_lambdas" in sd
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        lr_scheduler.LambdaLR(opt, [fn])


def test_scheduler_errors_and_warnings():
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lr_scheduler.StepLR([], step_size=1)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        lr_scheduler.StepLR(_opt(), step_size=1, last_epoch=3)
    opt = _opt()
    sched = lr_scheduler.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        sched.step()
    opt2 = _opt()
    sched2 = lr_scheduler.StepLR(opt2, step_size=1)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()
