"""Reports: key_averages tables, the Chrome trace, conformance, the disabled-plugin error."""

import json
import os
import subprocess
import sys

import pytest

import tensorplug as tp

prof_api = tp.profiler
BASE_COLS = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]


def program(n=3):
    x = tp.ones(4, 4, requires_grad=True)
    for _ in range(n):
        with prof_api.record_function("step"):
            y = tp.softmax(x * 2, 1).sum()
            y.backward()
    tp.ones(2) + tp.ones(2)


@pytest.fixture(scope="module")
def prof():
    with prof_api.profile(record_shapes=True, profile_memory=True) as p:
        program()
    return p


def header(table):
    return table.splitlines()[1]


def rows(table):
    return table.splitlines()[3:-2]


def test_table_columns_and_limit(prof):
    t = prof.key_averages().table(row_limit=5)
    for col in BASE_COLS + ["CPU Mem", "Self CPU Mem"]:
        assert col in header(t)
    assert "Input Shapes" not in header(t)
    assert len(rows(t)) == 5
    assert t.splitlines()[-1].startswith("Self CPU time total: ")


@pytest.mark.parametrize("key", ["self_cpu_time_total", "cpu_time_total", "count", "cpu_memory_usage"])
def test_sorting(prof, key):
    avgs = prof.key_averages()
    order = [r.key for r in sorted(avgs, key=lambda r: getattr(r, key), reverse=True)]
    got = [line.split()[0] for line in rows(avgs.table(sort_by=key, row_limit=None))]
    assert got == order


def test_averages_match_events(prof):
    evs = prof.events()
    step = next(r for r in prof.key_averages() if r.key == "step")
    assert step.count == 3
    steps = [e for e in evs if e.name == "step"]
    assert step.cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in steps))
    assert step.cpu_time == pytest.approx(step.cpu_time_total / 3)
    total = sum(e.self_cpu_time_total for e in evs)
    assert prof.key_averages().self_cpu_time_total == pytest.approx(total)


def test_bad_sort_key(prof):
    with pytest.raises(ValueError, match="cannot sort by 'bogus'"):
        prof.key_averages().table(sort_by="bogus")


def test_group_by_input_shape():
    with prof_api.profile(record_shapes=True) as p:
        tp.ones(2) + tp.ones(2)
        tp.ones(3) + tp.ones(3)
        tp.ones(3) + tp.ones(3)
    avgs = [r for r in p.key_averages(group_by_input_shape=True) if r.key == "tensorplug::add.Tensor"]
    assert sorted((r.input_shapes[:2], r.count) for r in avgs) == [([[2], [2]], 1), ([[3], [3]], 2)]
    t = p.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in header(t) and "CPU Mem" not in header(t)
    assert [r.count for r in p.key_averages() if r.key == "tensorplug::add.Tensor"] == [3]


def check_nesting(events):
    """Every X event lies inside its enclosing one; siblings on a thread do not overlap."""
    by_tid = {}
    for e in events:
        by_tid.setdefault(e["tid"], []).append(e)
    for evs in by_tid.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            s, end = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
            while stack and stack[-1] <= s:
                stack.pop()
            if stack:
                assert end <= stack[-1], f"{e['name']} overlaps its enclosing event"
            stack.append(end)


def test_chrome_trace(prof, tmp_path):
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    evs = data["traceEvents"]
    xs = [e for e in evs if e["ph"] == "X"]
    meta = [e for e in evs if e["ph"] == "M"]
    assert len(xs) == len(prof.events())
    assert {m["name"] for m in meta} >= {"process_name", "thread_name"}
    assert {e["cat"] for e in xs} == {"cpu_op", "user_annotation", "backward"}
    for e in xs:
        assert {"name", "ph", "ts", "dur", "pid", "tid", "cat", "args"} <= set(e)
        assert e["pid"] == os.getpid() and e["dur"] >= 0
        if e["cat"] == "cpu_op":
            assert "Input Dims" in e["args"] and "Input type" in e["args"]
    check_nesting(xs)
    # the trace's nesting is the recorded parent relation
    by_name = [e for e in xs if e["name"] == "tensorplug::softmax.int"]
    assert len(by_name) == 3


def test_chrome_trace_two_threads(tmp_path):
    import threading
    out = {}

    def work(tag):
        with prof_api.profile() as p:
            program(1)
        out[tag] = p

    ts = [threading.Thread(target=work, args=(i,), name=f"worker{i}") for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for p in out.values():
        data = p.chrome_trace()
        check_nesting([e for e in data["traceEvents"] if e["ph"] == "X"])
        names = [e["args"]["name"] for e in data["traceEvents"] if e["name"] == "thread_name"]
        assert len(names) == 1 and names[0].startswith("worker")


def test_with_stack():
    with prof_api.profile(with_stack=True) as p:
        tp.ones(2) * 2
    ev = next(e for e in p.events() if e.parent is None)
    assert any("test_with_stack" in f for f in ev.stack)


def test_conformance_through_kit():
    from tensorplug.testing import run_conformance
    report = run_conformance("profiler", ops="add,softmax,sum,mul")
    counts = report.counts()
    assert counts["failed"] == 0 and counts["passed"] >= 4, report.table()


def test_disabled_plugin_error():
    code = "import tensorplug\ntry:\n    tensorplug.profiler\nexcept AttributeError as e:\n    print(e)\n"
    env = dict(os.environ, TENSORPLUG_DISABLE_PLUGINS="profiler")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert "tensorplug.profiler is provided by the plugin 'profiler' (pip install tensorplug-profiler)" in out
    assert "tensorplug.plugins.enable('profiler')" in out


def test_disable_at_runtime():
    tp.plugins.disable("profiler")
    try:
        with pytest.raises(AttributeError, match="tensorplug-profiler"):
            tp.profiler
        assert "Profiler" not in tp.dispatch.REGISTRY.functionality
    finally:
        tp.plugins.enable("profiler")
    with tp.profiler.profile() as p:
        tp.ones(1) + 1
    assert p.events()
