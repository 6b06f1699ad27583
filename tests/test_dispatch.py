"""The dispatcher, tested with toy plugins: a numpy test backend (``TestDev``),
a ``Logging`` key between Autograd and Dense, and keys declared per test.

Every test checks *which function ran* (kernels return or record a tag), so
each rule of the resolution order is observed, not assumed.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp
from tensorplug.backend import BACKENDS
from tensorplug.dispatch import (REGISTRY, Dense, Autograd, FunctionalityKey, FALLTHROUGH, include_keys,
                                 exclude_keys, tls_state, below)
from tensorplug.dispatch.keys import BACKEND_BITS

ADD = tp.ops.tensorplug.add.Tensor
MUL = tp.ops.tensorplug.mul.Tensor
NEG = tp.ops.tensorplug.neg.default


class KeyPlugin:
    """A plugin declaring one functionality key, optionally with a boxed fallback for it."""

    def __init__(self, name, priority, fallback=None, per_backend=False):
        self.name, self.priority, self.fallback, self.per_backend = name, priority, fallback, per_backend

    @tp.hookimpl
    def tensorplug_functionality_keys(self):
        return [FunctionalityKey(self.name, self.priority, per_backend=self.per_backend)]

    @tp.hookimpl
    def tensorplug_register_kernels(self, library):
        if self.fallback is not None:
            library("tensorplug", "IMPL").fallback(self.fallback, self.name)


def recording_fallback(name, record):
    """A boxed fallback that records (key name, key set) and redispatches."""
    def fallback(op, ks, *args):
        record.append((name, ks))
        return op.redispatch(ks, *args)
    return fallback


def tdev(values, dtype=None):
    return tp.tensor(values, dtype=dtype, device="testdev")


def key_bit(name):
    return REGISTRY.functionality[name].bit


def with_keys(t, *names):
    """A testdev tensor carrying extra functionality keys (like a Batched or quantized tensor)."""
    out = tdev(t._host())
    for n in names:
        out._ks |= key_bit(n)
    return out


@pytest.fixture
def toy_op(make_library):
    """``toytest::f(Tensor x) -> Tensor``, defined with no kernels."""
    return make_library("toytest", "DEF").define("f(Tensor x) -> Tensor")


# -- the test backend -------------------------------------------------------------
@pytest.mark.parametrize("op, args, kwargs, expected, kernel", [
    (ADD, ([1.0, 2.0], [3.0, 4.0]), {}, [4.0, 6.0], "add"),
    (ADD, ([1.0, 2.0], [3.0, 4.0]), {"alpha": 2}, [7.0, 10.0], "add"),
    (MUL, ([1.0, 2.0], [3.0, 4.0]), {}, [3.0, 8.0], "mul"),
    (NEG, ([1.0, -2.0],), {}, [-1.0, 2.0], "neg"),
])
def test_test_backend_kernels_serve_its_tensors(testdev, op, args, kwargs, expected, kernel):
    out = op(*[tdev(a) for a in args], **kwargs)
    assert testdev.CALLS == [kernel]
    assert out.device == tp.device("testdev") and out._ks == BACKENDS["testdev"].ks
    np.testing.assert_array_equal(out._host(), expected)


def test_factory_dispatches_on_its_device_argument(testdev):
    out = tp.ops.tensorplug.empty.default([2, 3], dtype=tp.float64, device="testdev")
    assert testdev.CALLS == ["empty"]
    assert (out.shape, out.dtype, out.device) == ((2, 3), tp.float64, tp.device("testdev"))


def test_highest_backend_bit_wins(testdev, make_plugin, make_library, toy_op):
    class LowBackend(testdev.NumpyTestBackend):
        name, key_name, slot = "lowdev", "LowDev", 3

    class LowPlugin:
        @tp.hookimpl
        def tensorplug_backends(self):
            return [LowBackend()]

    make_plugin(LowPlugin(), "lowdev")
    g = make_library("toytest", "FRAGMENT").define("g(Tensor a, Tensor b) -> Tensor")
    lib = make_library("toytest", "IMPL")
    lib.impl("g", lambda a, b: "LowDev", "LowDev")
    lib.impl("g", lambda a, b: "TestDev", "TestDev")
    low = tdev([1.0])
    low._ks = BACKENDS["lowdev"].ks
    assert g(low, low) == "LowDev"
    assert g(low, tdev([1.0])) == g(tdev([1.0]), low) == "TestDev"


# -- a plugin key between Autograd and Dense ------------------------------------
def test_plugin_key_gets_the_bit_of_its_priority(logging_plugin, make_plugin):
    key = REGISTRY.functionality["Logging"]
    assert (key.priority, key.owner) == (12, "logging")
    assert key.bit == 1 << (BACKEND_BITS + 12)
    assert Autograd.bit > key.bit > Dense.bit
    tp.plugins.disable("logging")
    assert "Logging" not in REGISTRY.functionality
    tp.plugins.enable("logging")
    assert REGISTRY.functionality["Logging"].bit == key.bit  # bits never move


@pytest.mark.parametrize("op, nargs, expected", [(ADD, 2, [2.0, -4.0]), (MUL, 2, [1.0, 4.0]), (NEG, 1, [-1.0, 2.0])])
def test_logging_key_logs_and_redispatches_below_itself(testdev, logging_plugin, op, nargs, expected):
    x = tdev([1.0, -2.0])
    with tp.logging_mode():
        out = op(*[x] * nargs)
    np.testing.assert_array_equal(out._host(), expected)
    [(thread, qualname, ks)] = logging_plugin.LOG
    assert (thread, qualname) == (threading.current_thread().name, op.qualname)
    assert ks == BACKENDS["testdev"].ks  # the Logging bit and everything above it are masked off
    assert testdev.CALLS == [op.name]
    op(*[x] * nargs)
    assert len(logging_plugin.LOG) == 1  # outside the block, nothing is logged


def test_tensor_carrying_the_key_is_logged_without_tls(testdev, logging_plugin):
    x = logging_plugin.tag(tdev([1.0]))
    NEG(x)
    assert [e[1] for e in logging_plugin.LOG] == ["tensorplug::neg"]


def test_boxed_fallback_is_one_function_for_every_op(testdev, logging_plugin):
    x = tdev([3.0])
    with tp.logging_mode():
        ADD(x, x)
        MUL(x, x)
        NEG(x)
    assert [e[1] for e in logging_plugin.LOG] == ["tensorplug::add.Tensor", "tensorplug::mul.Tensor",
                                                  "tensorplug::neg"]
    from tensorplug.dispatch.dispatcher import FALLBACKS
    assert FALLBACKS[("Logging", None)].kernel is logging_plugin.log_and_redispatch


# -- thread-local include / exclude ----------------------------------------------
def run_threads(*targets):
    errors = []

    def guarded(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # surfaced in the main thread below
                errors.append(e)
        return run
    threads = [threading.Thread(target=guarded(fn), name=fn.__name__) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    if errors:
        raise errors[0]


def test_tls_include_applies_only_to_its_own_thread(testdev, logging_plugin):
    x = tdev([1.0])
    barrier = threading.Barrier(2, timeout=10)
    seen = {}

    def including():
        with tp.logging_mode():
            barrier.wait()  # both threads now run concurrently, this one inside its block
            seen["including"] = (tls_state(), NEG(x)._host().tolist())
            barrier.wait()

    def plain():
        barrier.wait()
        seen["plain"] = (tls_state(), NEG(x)._host().tolist())
        barrier.wait()

    run_threads(including, plain)
    assert [e[0] for e in logging_plugin.LOG] == ["including"]
    assert seen == {"including": ((key_bit("Logging"), 0), [-1.0]), "plain": ((0, 0), [-1.0])}


def test_tls_exclude_applies_only_to_its_own_thread(testdev, logging_plugin):
    x = logging_plugin.tag(tdev([1.0]))
    barrier = threading.Barrier(2, timeout=10)

    def excluding():
        with exclude_keys("Logging"):
            barrier.wait()
            NEG(x)
            barrier.wait()

    def plain():
        barrier.wait()
        NEG(x)
        barrier.wait()

    run_threads(excluding, plain)
    assert [e[0] for e in logging_plugin.LOG] == ["plain"]


def test_one_guard_object_shared_by_two_threads_restores_each_threads_state(testdev, logging_plugin):
    guard = tp.logging_mode()
    barrier = threading.Barrier(2, timeout=10)
    after = {}
    bit = key_bit("Logging")

    def first():
        with guard:
            barrier.wait()  # 1: entered
            barrier.wait()  # 2: the other thread entered the same guard
        after["first"] = tls_state()
        barrier.wait()      # 3

    def second():
        with exclude_keys("Logging"):
            barrier.wait()  # 1
            with guard:
                barrier.wait()  # 2
                barrier.wait()  # 3: the first thread has left the guard
            after["second"] = tls_state()

    run_threads(first, second)
    assert after == {"first": (0, 0), "second": (0, bit)}


@pytest.mark.parametrize("order", ["include-then-exclude", "exclude-then-include"])
@pytest.mark.parametrize("tagged", [False, True])
def test_exclude_wins_over_include(testdev, logging_plugin, order, tagged):
    x = tdev([1.0])
    if tagged:
        logging_plugin.tag(x)
    guards = [tp.logging_mode(), exclude_keys("Logging")]
    if order == "exclude-then-include":
        guards.reverse()
    with guards[0], guards[1]:
        NEG(x)
    assert logging_plugin.LOG == []
    assert testdev.CALLS == ["neg"]


PRIORITIES = (36, 40, 44, 52, 56)  # free of the core's and the conventional plugin keys


@settings(max_examples=60, deadline=None)
@given(tagged=st.sets(st.sampled_from(PRIORITIES)), include=st.sets(st.sampled_from(PRIORITIES)),
       exclude=st.sets(st.sampled_from(PRIORITIES)))
def test_key_set_is_tensor_keys_or_include_minus_exclude_highest_first(tagged, include, exclude):
    """(tensor keys | TLS include) & ~TLS exclude, then each key once, highest priority first."""
    from toy_plugins import testdev as mod
    record = []
    names = {p: f"K{p}" for p in PRIORITIES}
    tp.plugins.register(mod, "testdev")
    try:
        for p, n in names.items():
            tp.plugins.register(KeyPlugin(n, p, recording_fallback(n, record)), n)
        x = with_keys(tdev([2.0]), *(names[p] for p in tagged))
        with include_keys(*(names[p] for p in include)), exclude_keys(*(names[p] for p in exclude)):
            out = NEG(x)
        expected = sorted((tagged | include) - exclude, reverse=True)
        assert [r[0] for r in record] == [names[p] for p in expected]
        for n, ks in record:  # each fallback saw only the keys below its own
            assert ks & ~below(REGISTRY.functionality[n]) == 0
        assert out._host().tolist() == [-2.0]
    finally:
        for n in names.values():
            tp.plugins.forget(n)
        tp.plugins.forget("testdev")


# -- fallthrough -----------------------------------------------------------------
def test_fallthrough_key_resolves_to_the_next_key_at_no_cost(testdev, make_plugin):
    make_plugin(KeyPlugin("Passthru", 40, fallback=FALLTHROUGH), "passthru")
    x = with_keys(tdev([1.0]), "Passthru")
    NEG.cache.clear()
    assert NEG(x)._host().tolist() == [-1.0]
    assert NEG.cache[x._ks] is testdev.neg  # the kernel itself: no wrapper, no extra call
    assert ("Passthru", "fallthrough", "passthru") in NEG.dispatch_table()


def test_fallthrough_kernel_for_one_op_skips_the_keys_fallback(testdev, logging_plugin, make_library):
    make_library("tensorplug", "IMPL").impl("neg", FALLTHROUGH, "Logging")
    x = tdev([1.0])
    with tp.logging_mode():
        NEG(x)
        ADD(x, x)
    assert [e[1] for e in logging_plugin.LOG] == ["tensorplug::add.Tensor"]
    assert ("Logging", "fallthrough", "user") in NEG.dispatch_table()


# -- alias precedence -------------------------------------------------------------
def test_alias_precedence_kernel_explicit_implicit_fallback_missing(testdev, make_library, toy_op):
    """exact key kernel > CompositeExplicitAutograd > CompositeImplicitAutograd > fallback > error."""
    x = tdev([1.0])
    steps = [("kernel", "kernel"), ("explicit", "composite"), ("implicit", "composite"), ("fallback", "fallback")]
    libs = {}
    # registered lowest precedence first, so each step proves the ordering rather than the registration order
    libs["fallback"] = make_library("toytest", "IMPL")
    libs["fallback"].fallback(lambda op, ks, *args: "fallback", "TestDev")
    libs["implicit"] = make_library("toytest", "IMPL")
    libs["implicit"].impl("f", lambda x: "implicit", "CompositeImplicitAutograd")
    libs["explicit"] = make_library("toytest", "IMPL")
    libs["explicit"].impl("f", lambda x: "explicit", "CompositeExplicitAutograd")
    libs["kernel"] = make_library("toytest", "IMPL")
    libs["kernel"].impl("f", lambda x: "kernel", "TestDev")
    for tag, provenance in steps:
        assert toy_op(x) == tag
        assert ("TestDev", provenance, "user") in toy_op.dispatch_table()
        libs[tag]._destroy()
    assert ("TestDev", "missing", "-") in toy_op.dispatch_table()
    with pytest.raises(NotImplementedError, match=r"Could not run 'toytest::f' with arguments from the 'TestDev'"):
        toy_op(x)


def test_kernel_for_all_backends_is_an_exact_kernel_below_the_per_backend_one(testdev, make_library, toy_op):
    x = tdev([1.0])
    lib = make_library("toytest", "IMPL")
    lib.impl("f", lambda x: "every backend", "Dense")
    lib.impl("f", lambda x: "explicit", "CompositeExplicitAutograd")
    assert toy_op(x) == "every backend"
    lib.impl("f", lambda x: "TestDev only", "TestDev")
    assert toy_op(x) == "TestDev only"


def test_implicit_composite_fills_autograd_only_without_a_backend_kernel(testdev, make_library, toy_op):
    """PyTorch's rule: a backend kernel means the decomposition must not serve AutogradBackend."""
    lib = make_library("toytest", "IMPL")
    lib.impl("f", lambda x: "implicit", "CompositeImplicitAutograd")
    assert ("AutogradTestDev", "composite", "user") in toy_op.dispatch_table()
    lib.impl("f", lambda x: "kernel", "TestDev")
    assert ("AutogradTestDev", "composite", "user") not in toy_op.dispatch_table()


# -- kernels that take the key set, and redispatch -------------------------------
def test_with_keyset_kernel_receives_keys_below_its_own_and_redispatches(testdev, logging_plugin, make_library,
                                                                        toy_op):
    seen = []

    def logging_kernel(ks, x):
        seen.append(("Logging", ks))
        return toy_op.redispatch(ks, x)

    def dense_kernel(ks, x):
        seen.append(("TestDev", ks))
        return "dense"

    lib = make_library("toytest", "IMPL")
    lib.impl("f", logging_kernel, "Logging", with_keyset=True)
    lib.impl("f", dense_kernel, "TestDev", with_keyset=True)
    x = logging_plugin.tag(tdev([1.0]))
    assert toy_op(x) == "dense"
    ks = BACKENDS["testdev"].ks
    assert seen == [("Logging", ks), ("TestDev", ks & ~Dense.bit)]
    assert logging_plugin.LOG == []  # the op's own kernel at Logging wins over the key's fallback


def test_redispatch_masks_every_key_at_or_above_the_current_one(testdev, make_plugin):
    record = []
    make_plugin(KeyPlugin("Outer", 44, recording_fallback("Outer", record)), "outer")
    make_plugin(KeyPlugin("Inner", 40, recording_fallback("Inner", record)), "inner")
    x = with_keys(tdev([1.0]), "Outer", "Inner")
    base = BACKENDS["testdev"].ks
    # the include set is re-read by nobody after the first lookup, so Outer runs once
    with include_keys("Outer"):
        assert NEG(x)._host().tolist() == [-1.0]
    assert record == [("Outer", base | key_bit("Inner")), ("Inner", base)]
    assert testdev.CALLS == ["neg"]


def test_redispatch_with_an_explicit_key_set_ignores_tls(testdev, logging_plugin):
    x = tdev([4.0])
    with tp.logging_mode():
        out = NEG.redispatch(BACKENDS["testdev"].ks, x)
    assert out._host().tolist() == [-4.0] and logging_plugin.LOG == []


# -- the per-operator cache ----------------------------------------------------------
def test_second_call_is_served_from_the_cache(testdev, make_library, toy_op):
    lib = make_library("toytest", "IMPL")
    kernel = lib.impl("f", lambda x: "kernel", "TestDev")
    x = tdev([1.0])
    toy_op.cache.clear()
    assert toy_op(x) == "kernel"
    assert toy_op.cache == {x._ks: kernel}
    toy_op.cache[x._ks] = lambda x: "from the cache"  # the entry must use it without resolving
    assert toy_op(x) == "from the cache"


@pytest.mark.parametrize("change", ["impl", "fallback", "new key", "disable plugin"])
def test_registration_changes_invalidate_the_cache(testdev, logging_plugin, make_library, make_plugin,
                                                   toy_op, change):
    make_library("toytest", "IMPL").impl("f", lambda x: "kernel", "TestDev")
    x = tdev([1.0])
    toy_op(x)
    assert x._ks in toy_op.cache
    if change == "impl":
        make_library("toytest", "IMPL").impl("f", lambda x: "other", "AutogradTestDev")
    elif change == "fallback":
        make_library("toytest", "IMPL").fallback(FALLTHROUGH, "AutogradTestDev")
    elif change == "new key":
        make_plugin(KeyPlugin("Late", 52), "late")
    else:
        tp.plugins.disable("logging")
    assert x._ks not in toy_op.cache
    assert toy_op(x) == "kernel"


def test_enabling_a_key_later_leaves_existing_key_sets_valid(testdev, make_plugin):
    x = tdev([1.0])
    before = x._ks
    make_plugin(KeyPlugin("Late", 52, recording_fallback("Late", [])), "late")
    tp.plugins.disable("late")
    assert x._ks == before and NEG(x)._host().tolist() == [-1.0]


# -- missing kernels -----------------------------------------------------------------
def test_missing_backend_kernel_names_op_key_and_the_keys_with_kernels(testdev, logging_plugin, make_library,
                                                                      toy_op):
    lib = make_library("toytest", "IMPL")
    lib.impl("f", lambda x: x, "AutogradTestDev")
    lib.impl("f", lambda x: x, "Logging")
    with pytest.raises(NotImplementedError) as e:
        toy_op(tdev([1.0]))
    assert str(e.value) == (
        "Could not run 'toytest::f' with arguments from the 'TestDev' backend. 'toytest::f' has kernels for: "
        "[AutogradTestDev, Logging]. The backend 'TestDev' (plugin 'testdev') implements no kernel for it "
        "and no composite or fallback applies.")


def test_missing_kernel_at_a_plugin_key_names_the_plugin(testdev, make_plugin):
    make_plugin(KeyPlugin("Nofallback", 40), "nofb")
    x = with_keys(tdev([1.0]), "Nofallback")
    with pytest.raises(NotImplementedError, match=r"from the 'Nofallback' backend\. .*The key 'Nofallback' is "
                                                  r"declared by the plugin 'nofb', which registers neither"):
        NEG(x)


def test_empty_key_set_is_reported(testdev):
    with exclude_keys("Dense"), pytest.raises(NotImplementedError, match="has no functionality key"):
        NEG(tdev([1.0]))


# -- overriding and unregistering -----------------------------------------------------
def test_same_op_and_key_twice_raises_unless_override(testdev, make_library, toy_op):
    x = tdev([1.0])
    make_library("toytest", "IMPL").impl("f", lambda x: "first", "TestDev")
    with pytest.raises(RuntimeError, match=r"a kernel for 'toytest::f' at dispatch key 'TestDev' is already "
                                           r"registered by 'user'; pass allow_override=True"):
        make_library("toytest", "IMPL").impl("f", lambda x: "second", "TestDev")
    second = make_library("toytest", "IMPL")
    second.impl("f", lambda x: "second", "TestDev", allow_override=True)
    assert toy_op(x) == "second"
    second._destroy()
    assert toy_op(x) == "first"


def test_removing_a_middle_override_keeps_the_stack_in_order(testdev, make_library, toy_op):
    x = tdev([1.0])
    libs = [make_library("toytest", "IMPL") for _ in range(3)]
    for i, lib in enumerate(libs):
        lib.impl("f", lambda x, i=i: i, "TestDev", allow_override=True)
    libs[1]._destroy()
    assert toy_op(x) == 2
    libs[2]._destroy()
    assert toy_op(x) == 0


def test_fallback_override_stack(testdev, make_library):
    # an op with no Autograd kernel of its own, so the key's fallback serves it
    lib = make_library("fbstack", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "TestDev")
    NEG = tp.ops.fbstack.f.default
    x = tdev([1.0])
    make_library("tensorplug", "IMPL").fallback(lambda op, ks, *a: "first", "AutogradTestDev")
    with pytest.raises(RuntimeError, match="a fallback for 'AutogradTestDev' is already registered by 'user'"):
        make_library("tensorplug", "IMPL").fallback(lambda op, ks, *a: "x", "AutogradTestDev")
    second = make_library("tensorplug", "IMPL")
    second.fallback(lambda op, ks, *a: "second", "AutogradTestDev", allow_override=True)
    x._ks |= Autograd.bit
    assert NEG(x) == "second"
    second._destroy()
    assert NEG(x) == "first"


# -- the generated entry --------------------------------------------------------------
def test_entry_function_is_the_lean_hot_path(make_library):
    op = make_library("toytest", "DEF").define("h(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                                               check=lambda *a: None)
    assert op._entry_source == (
        "def h(self, other, *, alpha=_d2):\n"
        "    if alpha.__class__ not in _T2: alpha = _coerce(_op, _A2, alpha)\n"
        "    try:\n"
        "        _keys = self._ks | other._ks\n"
        "    except (AttributeError, TypeError):\n"
        "        _bad((self, other, alpha,))\n"
        "        raise\n"
        "    if _tls_active:\n"
        "        _keys = (_keys | _tls.include) & ~_tls.exclude\n"
        "        if not _keys & _early[0]:\n"
        "            _check(self, other, alpha)\n"
        "    else:\n"
        "        _check(self, other, alpha)\n"
        "    try:\n"
        "        _kernel = _cache[_keys]\n"
        "    except KeyError:\n"
        "        _kernel = _resolve(_keys)\n"
        "    return _kernel(self, other, alpha)\n")


@pytest.mark.parametrize("schema", ["k(Tensor self, int k, int ks, Tensor out, int kernel) -> Tensor",
                                    "f(Tensor self, int keys, int check, int op, int cache) -> Tensor"])
def test_argument_names_never_clash_with_the_entrys_locals(testdev, make_library, schema):
    lib = make_library("toytest", "DEF")
    op = lib.define(schema)
    lib.impl(op, lambda self, *rest: rest, "TestDev")
    assert op(tdev([1.0]), 1, 2, *([tdev([2.0])] if "out" in schema else [3]), 4)[0] == 1


def test_reserved_argument_names_are_rejected(make_library):
    from tensorplug.dispatch.schema import SchemaError
    with pytest.raises(SchemaError, match="argument name '_keys' of toytest::r is reserved by the dispatcher"):
        make_library("toytest", "DEF").define("r(Tensor self, int _keys) -> Tensor")


def test_inplace_kernel_bumps_the_version_of_every_written_tensor(testdev, make_library):
    lib = make_library("toytest", "DEF")
    op = lib.define("w(Tensor(a!) self, Tensor(b!)? maybe, Tensor(c!)[] many) -> Tensor(a!)")
    lib.impl("w", lambda s, m, many: s, "TestDev")
    a, b, c = tdev([1.0]), tdev([2.0]), tdev([3.0])
    op(a, None, [b, c])
    op(a, b, [])
    assert (a._version, b._version, c._version) == (2, 2, 1)


@pytest.mark.parametrize("name", ["prim_", "implicit_", "explicit_"])
@pytest.mark.parametrize("logged", [False, True])
def test_each_in_place_call_counts_one_write(testdev, logging_plugin, make_library, name, logged):
    """The bump happens at the Dense kernel, so composites and a redispatching fallback add none."""
    lib = make_library("toytest", "DEF")
    prim = lib.define("prim_(Tensor(a!) self) -> Tensor(a!)")
    lib.define("implicit_(Tensor(a!) self) -> Tensor(a!)")
    lib.define("explicit_(Tensor(a!) self) -> Tensor(a!)")
    lib.impl("prim_", lambda s: s, "TestDev")
    lib.impl("implicit_", lambda s: prim(s), "CompositeImplicitAutograd")
    lib.impl("explicit_", lambda s: prim(s), "CompositeExplicitAutograd")
    x = tdev([1.0])
    before = x._version
    with tp.logging_mode() if logged else include_keys():
        getattr(tp.ops.toytest, name)(x)
    assert x._version == before + 1
    assert len(logging_plugin.LOG) == (2 if logged and name != "prim_" else int(logged))
