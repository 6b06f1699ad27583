"""Recording: names, nesting, backward scopes, shapes, memory, threads, nested profiles."""

import threading

import pytest

import tensorplug as tp
from tensorplug.plugin_api import functionality_key, thread_keys as tls_state

prof_api = tp.profiler


def names(events, top_only=False):
    return [e.name for e in events if not top_only or e.parent is None]


def test_small_program_names_and_counts():
    x, y = tp.ones(3), tp.ones(3)
    with prof_api.profile() as prof:
        z = x + y
        z = z * y
        z.sum()
    assert names(prof.events()) == ["tensorplug::add.Tensor", "tensorplug::mul.Tensor",
                                    "tensorplug::sum.dim_IntList"]
    counts = {r.key: r.count for r in prof.key_averages()}
    assert counts["tensorplug::add.Tensor"] == 1 and counts["tensorplug::mul.Tensor"] == 1
    assert all(e.device == "cpu" and e.kind == "cpu_op" and not e.is_backward for e in prof.events())


def test_key_in_profile_only():
    bit = functionality_key("Profiler").bit
    assert functionality_key("Profiler").priority == 60
    assert not functionality_key("Profiler").per_backend
    x = tp.ones(2)
    with prof_api.profile():
        assert tls_state()[0] & bit
        y = x * 2
    assert not tls_state()[0] & bit
    assert not x._ks & bit and not y._ks & bit
    with prof_api.profile() as prof:
        pass
    (x + x)
    assert prof.events() == []


def test_composite_encloses_decomposition():
    x = tp.tensor([1.0, 2.0, 3.0])
    with prof_api.profile() as prof:
        tp.logsumexp(x, 0)  # a composite the CPU has no kernel for
    top = [e for e in prof.events() if e.parent is None]
    assert names(top) == ["tensorplug::logsumexp"]
    kids = names(top[0].children)
    assert {"tensorplug::amax", "tensorplug::exp", "tensorplug::log"} <= set(kids)
    for c in top[0].children:
        assert top[0].start <= c.start <= c.end <= top[0].end


def test_backward_ops_marked_and_in_node_scopes():
    x = tp.tensor([1.0, 2.0], requires_grad=True)
    with prof_api.profile() as prof:
        (x * x).sum().backward()
    scopes = [e for e in prof.events() if e.kind == "backward"]
    assert "MulBackward0" in names(scopes) and "SumBackward0" in names(scopes)
    assert all(e.is_backward and e.parent is None for e in scopes)
    mul_scope = next(e for e in scopes if e.name == "MulBackward0")
    assert "tensorplug::mul.Tensor" in names(mul_scope.children)
    assert all(c.is_backward for c in mul_scope.children)
    forward = [e for e in prof.events() if e.name == "tensorplug::mul.Tensor" and e.parent is None]
    assert len(forward) == 1 and not forward[0].is_backward
    assert tp.autograd.graph.NODE_SCOPES == []


def test_record_function_context_and_decorator():
    x = tp.ones(2)

    @prof_api.record_function("decorated")
    def f(t):
        return t + 1

    with prof_api.profile() as prof:
        with prof_api.record_function("block"):
            x * 3
        f(x)
    top = [e for e in prof.events() if e.parent is None]
    assert [(e.name, e.kind) for e in top] == [("block", "user_annotation"), ("decorated", "user_annotation")]
    assert names(top[0].children) == ["tensorplug::mul.Scalar"]
    assert names(top[1].children) == ["tensorplug::add.Scalar"]
    with prof_api.record_function("outside"):  # no profile: nothing recorded, no error
        x + 1


@pytest.mark.parametrize("shape,dtype", [((2, 3), tp.float32), ((4,), tp.int64), ((), tp.float64)])
def test_record_shapes_and_memory(shape, dtype):
    x = tp.ones(shape, dtype=dtype)
    with prof_api.profile(record_shapes=True, profile_memory=True) as prof:
        x.add(x)
        x.view(-1)
    add, view = [e for e in prof.events() if e.parent is None]
    assert add.input_shapes[:2] == [list(shape), list(shape)] and add.input_types[:2] == [dtype.name] * 2
    n = 1
    for s in shape:
        n *= s
    assert add.nbytes == n * dtype.itemsize
    assert view.nbytes == 0  # a view allocates nothing


def test_composite_memory_counted_once():
    x = tp.ones(8)
    with prof_api.profile(profile_memory=True) as prof:
        tp.nn.functional.silu(x)  # a composite of two kernels: sigmoid, then mul
    top = next(e for e in prof.events() if e.parent is None)
    assert top.nbytes == 0  # its result was allocated by mul, its child
    row = next(r for r in prof.key_averages() if r.key == "tensorplug::silu")
    assert row.cpu_memory_usage == sum(c.nbytes for c in top.children) > 0


def test_no_shapes_unless_asked():
    with prof_api.profile() as prof:
        tp.ones(2) + 1
    assert all(e.input_shapes is None and e.nbytes == 0 for e in prof.events())


def test_nested_profiles_both_record_inner_ops():
    x = tp.ones(2)
    with prof_api.profile() as outer:
        x + x
        with prof_api.profile() as inner:
            x * x
        x - x
    assert names(outer.events()) == ["tensorplug::add.Tensor", "tensorplug::mul.Tensor", "tensorplug::sub.Tensor"]
    assert names(inner.events()) == ["tensorplug::mul.Tensor"]
    assert not tls_state()[0]


def test_threads_profile_independently():
    results, errors = {}, []
    barrier = threading.Barrier(2)

    def work(tag, fn):
        try:
            x = tp.ones(4)
            with prof_api.profile() as prof:
                barrier.wait()
                for _ in range(20):
                    fn(x)
            results[tag] = (prof.events(), threading.get_ident())
        except Exception as e:  # surfaced below
            errors.append(e)

    t1 = threading.Thread(target=work, args=("add", lambda x: x + x))
    t2 = threading.Thread(target=work, args=("mul", lambda x: x * x))
    for t in (t1, t2):
        t.start()
    for t in (t1, t2):
        t.join()
    assert not errors
    for tag, op in (("add", "tensorplug::add.Tensor"), ("mul", "tensorplug::mul.Tensor")):
        evs, tid = results[tag]
        assert names(evs) == [op] * 20 and {e.tid for e in evs} == {tid}


def test_unprofiled_thread_records_nothing():
    x = tp.ones(2)
    seen = []
    with prof_api.profile() as prof:
        t = threading.Thread(target=lambda: seen.append(x + x))
        t.start()
        t.join()
    assert prof.events() == [] and len(seen) == 1


def test_profile_not_reentrant():
    p = prof_api.profile()
    with p:
        with pytest.raises(RuntimeError, match="already active"):
            p.__enter__()
