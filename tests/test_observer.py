"""What the core reports to an observer (plugin_api.set_observer) and the global hooks a tracing
transform uses: module forward pre-hooks and optimizer step pre/post hooks, as PyTorch's."""

import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.plugin_api import set_observer


class Log:
    def __init__(self):
        self.events = []

    def host_read(self, t, what):
        self.events.append(("host", what))

    def value_check(self, t):
        self.events.append(("check", tuple(t.shape)))

    def grad_read(self, t):
        self.events.append(("grad_read", id(t)))

    def grad_write(self, t, value):
        self.events.append(("grad_write", id(t), value is None))

    def effect(self, fn, *args):
        self.events.append(("effect", fn.__name__, args[-1]))


@pytest.fixture
def log():
    obs = Log()
    set_observer(obs)
    yield obs
    set_observer(None)


def test_values_leaving_for_python_are_reported(log):
    x = tp.tensor([1.0, 2.0])
    x.sum().item()
    x.tolist()
    x.numpy()
    repr(x)
    bool(x[0])
    assert [e[1] for e in log.events if e[0] == "host"] == [
        "Tensor.item()", "Tensor.tolist()", "Tensor.numpy()", "printing a tensor", "Tensor.item()"]


def test_value_checks_are_reported_apart_from_host_reads(log):
    tp.randn(4, 2)[tp.tensor([0, 3])]
    assert ("check", (2,)) in log.events and not any(e[0] == "host" for e in log.events)


def test_grad_reads_and_writes_include_the_engines_accumulation(log):
    w = tp.ones(2, requires_grad=True)
    (w * 2).sum().backward()
    (w * 3).sum().backward()
    w.grad = None
    events = [e for e in log.events if e[0].startswith("grad")]
    assert events == [("grad_read", id(w)), ("grad_write", id(w), False),  # first backward: assigned
                      ("grad_read", id(w)),                                 # second: accumulated in place
                      ("grad_write", id(w), True)]


def test_reseeding_is_reported_as_an_effect(log):
    tp.manual_seed(3)
    tp.Generator().manual_seed(4)
    assert [e for e in log.events if e[0] == "effect"] == [("effect", "_seed_all", 3), ("effect", "_reseed", 4)]


def test_without_an_observer_nothing_is_called():
    obs = Log()
    x = tp.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    x.sum().item()
    assert obs.events == []


def test_global_module_forward_pre_hook():
    seen = []
    m = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    handle = nn.modules.module.register_module_forward_pre_hook(lambda mod, args: seen.append(type(mod).__name__))
    try:
        m(tp.ones(1, 2))
    finally:
        handle.remove()
    m(tp.ones(1, 2))
    assert seen == ["Sequential", "Linear", "ReLU"]


def test_global_optimizer_step_hooks():
    p = nn.Parameter(tp.ones(2))
    opt = tp.optim.SGD([p], lr=0.1)
    seen = []
    pre = tp.optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: seen.append(("pre", o)))
    post = tp.optim.optimizer.register_optimizer_step_post_hook(lambda o, a, k: seen.append(("post", o)))
    p.grad = tp.ones(2)
    opt.step()
    pre.remove()
    post.remove()
    opt.step()
    assert seen == [("pre", opt), ("post", opt)]
    assert tp.allclose(p.detach(), tp.full((2,), 0.8))
