"""Graph breaks: a value read into Python ends the capture; the function runs eagerly (default) or,
with ``fullgraph=True``, the call raises naming the operation and the user's line."""

import pytest

import tensorplug as tp
from tensorplug_compile.trace import GraphBreak

from compile_helpers import same


def branchy(x):
    if x.sum() > 0:  # bool(t): data-dependent control flow
        return x * 2
    return x - 1


def reads_item(x):
    return x * x.max().item()


def reads_list(x):
    return x + sum(x.tolist())


def prints(x):
    print(x)
    return x + 1


def masked(x):
    return x[x > 0] + 1


def nonzero(x):
    return x[x.nonzero(as_tuple=True)] * 2


@pytest.mark.parametrize("fn, what", [
    (branchy, "Tensor.item()"), (reads_item, "Tensor.item()"), (reads_list, "Tensor.tolist()"),
    (prints, "printing a tensor"),
    (nonzero, "nonzero"), (masked, "boolean-mask indexing"),
], ids=["bool", "item", "tolist", "print", "nonzero", "mask"])
def test_a_graph_break_runs_eagerly_with_the_right_values(fn, what, capsys):
    cf = tp.compile(fn)
    for x in (tp.tensor([1.0, 2.0, 0.0]), tp.tensor([-3.0, 1.0, 0.0]), tp.tensor([5.0, -1.0, 2.0])):
        for _ in range(3):
            assert same(cf(x), fn(x))
    assert not cf.graphs
    report = tp.compiler.explain(cf)()
    assert report.graph_break_count >= 1
    reason, where = report.break_reasons[0]
    assert what in reason and "test_compile_breaks.py" in where
    assert "Graph Break Count" in str(report)


@pytest.mark.parametrize("fn, line", [
    (branchy, "if x.sum() > 0:"), (reads_item, "return x * x.max().item()"),
    (reads_list, "return x + sum(x.tolist())"),
])
def test_fullgraph_raises_naming_the_operation_and_line(fn, line):
    cf = tp.compile(fn, fullgraph=True)
    with pytest.raises(GraphBreak, match="fullgraph=True") as info:
        cf(tp.ones(3))
    assert line in str(info.value) and "test_compile_breaks.py" in str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_item_after_the_call_is_fine():
    cf = tp.compile(lambda x: (x * x).sum())
    vals = [cf(tp.full((3,), float(i))).item() for i in range(5)]
    assert vals == [0.0, 3.0, 12.0, 27.0, 48.0] and cf.graphs


@pytest.mark.parametrize("pick", [lambda emb, i: tp.index_select(emb, 0, i), lambda emb, i: emb[i]],
                         ids=["index_select", "getitem"])
def test_an_index_check_still_runs_on_replay(pick):
    emb = tp.randn(5, 3)
    cf = tp.compile(lambda i: pick(emb, i))
    for _ in range(3):
        assert same(cf(tp.tensor([0, 4])), emb[tp.tensor([0, 4])])
    assert cf.graphs
    with pytest.raises(IndexError) as compiled_err:
        cf(tp.tensor([0, 7]))
    with pytest.raises(IndexError) as eager_err:
        pick(emb, tp.tensor([0, 7]))
    assert str(compiled_err.value) == str(eager_err.value)


def test_inputs_that_a_transform_wraps_run_eagerly():
    cf = tp.compile(lambda x: x.sin())
    got = tp.vmap(cf)(tp.randn(4, 3))
    assert got.shape == (4, 3)
    assert not cf.graphs and any("transform's tensor" in e[1] for e in cf.events if e[0] == "break")


def test_compiler_disable_is_a_graph_break_inside_and_a_plain_call_outside():
    @tp.compiler.disable
    def helper(x):
        return x + 1

    cf = tp.compile(lambda x: helper(x) * 2)
    for _ in range(3):
        assert same(cf(tp.ones(2)), tp.full((2,), 4.0))
    assert not cf.graphs and "compiler.disable" in cf.events[0][1]
    assert same(helper(tp.ones(1)), tp.full((1,), 2.0))
