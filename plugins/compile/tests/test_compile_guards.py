"""Guards: a program is replayed only while what it baked in still holds; otherwise the call is traced
again (and past the cache size limit it runs eagerly, with one warning). Never a stale result."""

import warnings

import pytest

import tensorplug as tp
from tensorplug import nn
import tensorplug.nn.functional as F
from tensorplug_compile import api

from compile_helpers import mlp, same, training_step


def settle(cf, *args, n=3):
    out = None
    for _ in range(n):
        out = cf(*args)
    return out


def recompiles(cf):
    return [e[1] for e in cf.events if e[0] == "recompile"]


@pytest.mark.parametrize("change, reason", [
    (lambda x: tp.randn(5, 3), "shape"),
    (lambda x: x.double(), "dtype"),
    (lambda x: x.clone().requires_grad_(), "requires_grad"),
])
def test_input_metadata_is_guarded(change, reason):
    cf = tp.compile(lambda x: x.sin() * 2)
    x = tp.randn(4, 3)
    settle(cf, x)
    y = change(x)
    assert same(settle(cf, y).detach(), (y.sin() * 2).detach())
    assert reason in recompiles(cf)[-1]
    assert same(cf(x), x.sin() * 2)  # the first program is still there
    assert len(cf.graphs) == 2


def test_grad_mode_and_python_arguments_are_guarded():
    cf = tp.compile(lambda x, k: x * k)
    x = tp.randn(3)
    settle(cf, x, 2.0)
    assert same(settle(cf, x, 3.0), x * 3.0)
    assert "input 1 is not 2.0" in recompiles(cf)[-1]
    with tp.no_grad():
        assert same(settle(cf, x, 3.0), x * 3.0)
    assert "grad mode" in recompiles(cf)[-1]


def test_the_training_flag_and_replaced_parameters_are_guarded():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    cf = tp.compile(model)
    x = tp.ones(2, 4)
    with tp.no_grad():
        settle(cf, x)
        model.eval()
        assert same(settle(cf, x), model[0](x))
        assert "training flag" in recompiles(cf._compiled_call)[-1]
        model[0].weight = nn.Parameter(tp.zeros(4, 4))
        assert same(settle(cf, x), model[0](x))
        assert "parameter 'weight' is another tensor" in recompiles(cf._compiled_call)[-1]


def test_optimizer_hyperparameters_are_guarded():
    models = [mlp(), mlp()]
    opts = [tp.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in models]
    sched = [tp.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5) for o in opts]
    eager, compiled = training_step(models[0], opts[0]), tp.compile(training_step(models[1], opts[1]))
    x, y = tp.randn(8, 20), tp.randint(0, 4, (8,))
    for _ in range(9):
        eager(x, y)
        compiled(x, y)
        for s in sched:
            s.step()
    assert all(same(a, b) for a, b in zip(models[0].parameters(), models[1].parameters()))
    assert any("lr is not 0.1" in r for r in recompiles(compiled))


def test_inputs_mutated_in_place_and_aliased_inputs():
    def f(a, b):
        a.add_(b)
        return a * 2
    cf = tp.compile(f)
    x, y = tp.zeros(3), tp.ones(3)
    for i in range(4):
        out = cf(x, y)
        assert same(x, tp.full((3,), float(i + 1))) and same(out, 2 * x)
    z = tp.ones(3)
    assert same(cf(z, z), tp.full((3,), 4.0)) and same(z, tp.full((3,), 2.0))
    assert "same tensor" in recompiles(cf)[-1]


def test_a_python_value_that_changes_each_call_is_never_baked_in():
    count = [0]

    def f(x):
        count[0] += 1
        return x * count[0]
    cf = tp.compile(f)
    x = tp.ones(2)
    with pytest.warns(UserWarning, match="records different kernel calls on every call"):
        outs = [cf(x) for _ in range(6)]
    assert [o[0].item() for o in outs] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert not cf.graphs
    assert api.ExplainOutput(cf.events).unstable


def test_the_cache_size_limit_warns_once_and_runs_eagerly():
    cf = tp.compile(lambda x: x + 1)
    with pytest.warns(UserWarning, match="cache size limit") as rec:
        for n in range(1, api.CACHE_SIZE_LIMIT + 4):
            x = tp.ones(n)
            assert same(cf(x), x + 1)
    assert len([w for w in rec if "cache size limit" in str(w.message)]) == 1
    assert len(cf.entries) == api.CACHE_SIZE_LIMIT


def test_a_varying_last_batch_adds_one_program_not_one_per_call():
    model = mlp()
    opt = tp.optim.SGD(model.parameters(), lr=0.1)
    step = tp.compile(training_step(model, opt))
    x, y = tp.randn(20, 20), tp.randint(0, 4, (20,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for epoch in range(4):
            for i in range(0, 20, 8):  # batches of 8, 8 and 4
                step(x[i:i + 8], y[i:i + 8])
    assert len(step.graphs) == 2


def test_reset_forgets_every_trace():
    cf = tp.compile(lambda x: x.exp())
    settle(cf, tp.ones(2))
    assert cf.graphs
    tp.compiler.reset()
    assert not cf.entries and not cf.graphs
    assert same(cf(tp.ones(2)), tp.ones(2).exp())


def test_a_guard_that_fails_runs_nothing_of_the_program():
    calls = []
    model = nn.Linear(3, 3)
    model.register_forward_hook(lambda m, a, o: calls.append(1))
    cf = tp.compile(model)
    x = tp.ones(1, 3)
    with tp.no_grad():
        settle(cf, x)
        n = len(calls)
        cf(x)
        assert len(calls) == n  # replayed: Python hooks ran while tracing only
        cf(tp.ones(2, 3))
        assert len(calls) == n + 1  # a new trace runs the Python again
    assert F.relu is not None


def test_autocast_regions_are_guarded_and_captured():
    if not tp.plugins.is_enabled("autocast"):
        pytest.skip("the autocast plugin is not enabled")
    model = nn.Linear(8, 4)
    cf = tp.compile(model)
    x = tp.randn(2, 8)
    with tp.no_grad():
        plain = settle(cf, x)
        with tp.autocast("cpu", dtype=tp.bfloat16):
            mixed = settle(cf, x)
            want = model(x)
        with tp.autocast("cpu", dtype=tp.float16):
            half = settle(cf, x)
    assert plain.dtype is tp.float32 and mixed.dtype is tp.bfloat16 and half.dtype is tp.float16
    assert same(mixed, want)
    assert len(cf._compiled_call.graphs) == 3


SCALE = 2.0


def scaled(x):
    return x * SCALE


def test_globals_closure_values_and_module_attributes_the_function_reads_are_guarded():
    global SCALE
    cf = tp.compile(scaled)
    x = tp.ones(2)
    settle(cf, x)
    SCALE = 3.0
    try:
        assert same(settle(cf, x), x * 3.0)
        assert "the global SCALE" in recompiles(cf)[-1]
    finally:
        SCALE = 2.0
    def make():
        k = 0.5

        def set_k(v):
            nonlocal k
            k = v
        return (lambda x: x / k), set_k
    f, set_k = make()
    cl = tp.compile(f)
    assert same(settle(cl, x), x / 0.5)
    set_k(0.25)
    assert same(settle(cl, x), x / 0.25)
    assert "the closure's k" in recompiles(cl)[-1]

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.temperature = 2.0

        def forward(self, x):
            return x / self.temperature
    m = Scaled()
    cm = tp.compile(m)
    with tp.no_grad():
        settle(cm, x)
        m.temperature = 4.0
        assert same(settle(cm, x), x / 4.0)
    assert "temperature is not 2.0" in recompiles(cm._compiled_call)[-1]
    drop = nn.Dropout(0.5)
    cd = tp.compile(drop)
    with tp.no_grad():
        settle(cd, tp.ones(100))
        drop.p = 0.0
        assert same(settle(cd, tp.ones(100)), tp.ones(100))


def test_a_kernel_registered_after_the_capture_is_used():
    from tensorplug.library import Library
    cf = tp.compile(lambda x: x.sin())
    x = tp.ones(2)
    settle(cf, x)
    lib = Library("tensorplug", "IMPL")  # a user's kernel, replacing the CPU's
    lib.impl("sin", lambda self: tp.plugin_api.wrap(self._data * 0 + 7, self._dtype, self._device), "CPU",
             allow_override=True)
    try:
        assert same(settle(cf, x), tp.full((2,), 7.0))
        assert "registered or removed" in recompiles(cf)[-1]
    finally:
        lib._destroy()  # (as the core's tests remove a library)
    assert same(settle(cf, x), x.sin())
