"""nn.Module features real programs use, side by side with torch: full backward hooks, buffers that are not
persistent, hooks with kwargs, submodule access, state dicts with prefixes and non-strict loading, dtype moves."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")


def _lin(m):
    lin = m.nn.Linear(3, 2).double()
    with m.no_grad():
        lin.weight.copy_(m.tensor(np.arange(6.0).reshape(2, 3) / 5))
        lin.bias.fill_(0.5)
    return lin


def _backward_hook_log(m):
    lin = _lin(m)
    log = []

    def pre(mod, go):
        log.append(("pre", [g.tolist() for g in go]))
        return (go[0] * 2,)

    def full(mod, gi, go):
        log.append(("full", [None if g is None else g.tolist() for g in gi], [g.tolist() for g in go]))
        return None if gi[0] is None else (gi[0] * 3,)

    lin.register_full_backward_pre_hook(pre)
    handle = lin.register_full_backward_hook(full)
    x = m.tensor(np.array([[1.0, 2, 3]]), requires_grad=True)
    lin(x).sum().backward()
    log.append(("grads", x.grad.tolist(), lin.weight.grad.tolist()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lin(m.tensor(np.array([[1.0, 2, 3]]))).sum().backward()       # no input requires grad
    log.append(("warned", any("Full backward hook is firing" in str(w.message) for w in caught)))
    handle.remove()
    x.grad = None
    lin(x).sum().backward()
    log.append(("after remove", x.grad.tolist()))
    return log


def test_full_backward_hooks_match_torch():
    assert _backward_hook_log(tp) == _backward_hook_log(torch)


def test_backward_hook_on_a_multi_input_module():
    def run(m):
        class Mix(m.nn.Module):
            def forward(self, a, k, b):
                return a * b * k, a + b

        mod = Mix()
        seen = []
        mod.register_full_backward_hook(lambda mm, gi, go: seen.append(
            ([None if g is None else g.tolist() for g in gi], [None if g is None else g.tolist() for g in go])))
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        p, q = mod(a, 2.0, b)
        (p.sum() + (q * q).sum()).backward()
        return seen, a.grad.tolist(), b.grad.tolist()
    assert run(tp) == run(torch)


def _module_report(m):
    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.ReLU())
            self.head = m.nn.Linear(3, 1)
            self.register_buffer("steps", m.zeros(()))
            self.register_buffer("cache", m.ones(2), persistent=False)

        def forward(self, x, scale=1.0):
            return self.head(self.body(x)) * scale

    net = Net()
    report = {"state_keys": list(net.state_dict()), "buffers": [n for n, _ in net.named_buffers()],
              "modules": [n for n, _ in net.named_modules()], "children": [n for n, _ in net.named_children()],
              "prefixed": list(net.state_dict(prefix="model.")),
              "keep_vars": [v.requires_grad for v in net.state_dict(keep_vars=True).values()],
              "plain": [v.requires_grad for v in net.state_dict().values()],
              "sub": type(net.get_submodule("body.0")).__name__,
              "param": tuple(net.get_parameter("body.0.weight").shape)}
    sd = {k: v for k, v in net.state_dict().items() if k != "head.bias"}
    sd["extra.weight"] = m.zeros(1)
    result = net.load_state_dict(sd, strict=False)
    report["missing"], report["unexpected"] = list(result.missing_keys), list(result.unexpected_keys)
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(sd)
    report["strict_error"] = str(err.value).split("\n")[0]
    calls = []
    net.register_forward_pre_hook(lambda mod, args, kwargs: (args, {**kwargs, "scale": 2.0}), with_kwargs=True)
    net.register_forward_hook(lambda mod, args, kwargs, out: calls.append(sorted(kwargs)), with_kwargs=True)
    x = m.ones(1, 2)
    y = net(x, scale=5.0)
    report["hook_kwargs"] = calls
    report["scaled"] = y.shape == (1, 1)
    visited = []
    net.apply(lambda mod: visited.append(type(mod).__name__))
    report["apply"] = visited
    net.requires_grad_(False)
    report["frozen"] = [p.requires_grad for p in net.parameters()]
    net.requires_grad_(True)
    net(x).sum().backward()
    net.zero_grad(set_to_none=True)
    report["grads_none"] = all(p.grad is None for p in net.parameters())
    net(x).sum().backward()
    net.zero_grad(set_to_none=False)
    report["grads_zero"] = all(float(p.grad.abs().sum()) == 0 for p in net.parameters())
    report["dtypes"] = [str(p.dtype).split(".")[-1] for p in net.double().parameters()][:1] + \
        [str(p.dtype).split(".")[-1] for p in net.half().parameters()][:1] + \
        [str(p.dtype).split(".")[-1] for p in net.bfloat16().parameters()][:1] + \
        [str(p.dtype).split(".")[-1] for p in net.to(m.float64).parameters()][:1] + \
        [str(p.dtype).split(".")[-1] for p in net.float().parameters()][:1] + \
        [str(net.steps.dtype).split(".")[-1]]
    extra = m.nn.Linear(1, 1)
    net.register_module("extra", extra)
    report["registered"] = net.get_submodule("extra") is extra
    return report


def test_module_features_match_torch():
    ours, theirs = _module_report(tp), _module_report(torch)
    for key in theirs:
        assert ours[key] == theirs[key], key


def test_post_accumulate_grad_hook_matches_torch():
    def run(m):
        p = m.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        p.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        h = p.register_hook(lambda g: g * 10)
        (p * p).sum().backward()
        h.remove()
        (p * 3).sum().backward()
        return seen
    assert run(tp) == run(torch)
