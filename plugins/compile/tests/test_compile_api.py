"""The user API: tensorplug.compile as function and decorator, modules, model.compile(), the switches
that run eagerly, and what a user sees of a capture (code, table, explain)."""

import subprocess
import sys

import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug_compile import CompiledFunction

from compile_helpers import mlp, same


def test_function_and_decorator_forms():
    @tp.compile
    def f(x):
        return x.cos() + 1

    @tp.compile(fullgraph=True, mode="reduce-overhead")
    def g(x):
        return x.cos() - 1
    x = tp.randn(3)
    for _ in range(3):
        assert same(f(x), x.cos() + 1) and same(g(x), x.cos() - 1)
    assert isinstance(f, CompiledFunction) and f.graphs and g.graphs and g.fullgraph
    assert f.__name__ == "f"


def test_bad_arguments_get_pytorchs_errors():
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast, should be one of: default, reduce-overhead"):
        tp.compile(lambda x: x, mode="fast")
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        tp.compile(lambda x: x, backend="nope")
    with pytest.raises(RuntimeError, match="Either mode or options"):
        tp.compile(lambda x: x, mode="default", options={})


def test_a_compiled_module_passes_parameters_state_and_modes_through():
    model = mlp()
    cm = tp.compile(model)
    assert isinstance(cm, nn.Module) and cm._orig_mod is model
    assert [id(p) for p in cm.parameters()] == [id(p) for p in model.parameters()]
    assert list(cm.state_dict()) == ["_orig_mod." + k for k in model.state_dict()]
    cm.eval()
    assert not model.training
    cm.train()
    model.note = "kept"
    assert model.training and cm.note == "kept"  # other attributes come from the original
    x = tp.randn(2, 20)
    with tp.no_grad():
        for _ in range(3):
            assert same(cm(x), model(x))
    assert cm._compiled_call.graphs


def test_model_compile_in_place():
    model = mlp()
    ref = mlp()
    model.compile()
    x = tp.randn(3, 20)
    with tp.no_grad():
        for _ in range(3):
            assert same(model(x), ref(x))
    assert model.forward.graphs
    assert "_orig_mod" not in "".join(model.state_dict())


def test_code_and_table_show_the_capture(capsys):
    cf = tp.compile(lambda a, b: (a @ b).relu().sum(1))
    a, b = tp.randn(4, 5), tp.randn(5, 6)
    assert cf.code is None
    for _ in range(3):
        cf(a, b)
    assert cf.code.startswith("def compiled_") and "return MISS" in cf.code
    cf.print_tabular()
    table = capsys.readouterr().out
    for name in ("matmul", "maximum", "sum.dim_IntList", "input", "output"):
        assert name in table


def test_explain_reports_graphs_and_recompiles():
    def f(x):
        return x * 2
    report = tp.compiler.explain(f)(tp.ones(3))
    assert report.graph_count == 1 and report.graph_break_count == 0
    cf = tp.compile(f)
    for n in (3, 3, 3, 4, 4, 4):
        cf(tp.ones(n))
    report = tp.compiler.explain(cf)()
    assert report.graph_count == 2 and "shape" in report.recompiles[0]
    assert "Graph Count: 2" in str(report)


def test_disabled_switches_run_eagerly(monkeypatch):
    for cf in (tp.compile(lambda x: x + 1, backend="eager"), tp.compile(lambda x: x + 1, disable=True)):
        for _ in range(3):
            assert same(cf(tp.ones(2)), tp.full((2,), 2.0))
        assert not cf.entries
    monkeypatch.setenv("TENSORPLUG_COMPILE_DISABLE", "1")
    cf = tp.compile(lambda x: x + 1)
    for _ in range(3):
        cf(tp.ones(2))
    assert not cf.entries


def test_is_compiling_is_true_while_tracing_only():
    seen = []

    def f(x):
        seen.append(tp.compiler.is_compiling())
        return x + 1
    cf = tp.compile(f)
    for _ in range(4):
        cf(tp.ones(1))
    assert seen == [True, True] and not tp.compiler.is_compiling()


def test_a_compiled_function_inside_another_is_inlined():
    inner = tp.compile(lambda x: x.exp())
    outer = tp.compile(lambda x: inner(x) + 1)
    for _ in range(3):
        assert same(outer(tp.ones(2)), tp.ones(2).exp() + 1)
    assert outer.graphs and not inner.entries


def test_without_the_plugin_compile_names_it():
    code = ("import tensorplug as tp\n"
            "try:\n    tp.compile\nexcept AttributeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "TENSORPLUG_DISABLE_PLUGINS": "compile"})
    assert "tensorplug.compile is provided by the plugin 'compile' (pip install tensorplug-compile)" in out.stdout
    assert "installed but disabled" in out.stdout


def test_keyword_and_nested_arguments():
    def f(x, *, scale, extra):
        return x * scale + extra["b"][0]
    cf = tp.compile(f)
    x, b = tp.randn(3), tp.randn(3)
    for _ in range(3):
        assert same(cf(x, scale=2.0, extra={"b": [b]}), x * 2.0 + b)
    assert cf.graphs
    assert same(cf(x, scale=3.0, extra={"b": [b]}), x * 3.0 + b)
    assert same(cf(x, scale=2.0, extra={"b": [b, b]}), x * 2.0 + b)  # another structure: traced anew


def test_an_error_while_tracing_is_the_eager_error_and_leaves_nothing_behind():
    cf = tp.compile(lambda x: x + tp.ones(3))
    with pytest.raises(RuntimeError) as compiled:
        cf(tp.ones(4))
    with pytest.raises(RuntimeError) as eager:
        tp.ones(4) + tp.ones(3)
    assert str(compiled.value) == str(eager.value)
    assert not cf.entries and not tp.compiler.is_compiling()
    assert tp.plugin_api.thread_keys() == (0, 0)
    assert same(cf(tp.ones(3)), tp.full((3,), 2.0))


def test_a_replay_under_a_profile_shows_as_one_scope():
    if not tp.plugins.is_enabled("profiler"):
        pytest.skip("the profiler plugin is not enabled")
    cf = tp.compile(lambda x: (x * 2).exp().sum())
    x = tp.ones(3)
    with tp.profiler.profile() as prof:
        for _ in range(4):
            cf(x)
    names = [e.name for e in prof.events() if e.parent is None]
    assert cf.graphs and names[-1].startswith("tensorplug.compile: compiled_")
    assert names.count(names[-1]) == 2  # the third and fourth calls replayed
