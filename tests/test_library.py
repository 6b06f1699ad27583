"""``tensorplug.library``: defining operators, registering kernels, and reaching them as ``tensorplug.ops.NS.OP``."""

from __future__ import annotations

import pytest

import tensorplug as tp
from tensorplug.dispatch import dispatcher as d
from tensorplug.dispatch.library import Library, parse_dispatch_key, define, impl, owner_scope, LIBRARIES


def tdev(values):
    return tp.tensor(values, device="testdev")


# -- kinds ---------------------------------------------------------------------------
def test_def_library_owns_its_namespace(make_library):
    make_library("toylib", "DEF")
    with pytest.raises(RuntimeError, match="namespace 'toylib' is already defined by a DEF library of 'user'; "
                                           "use kind='FRAGMENT'"):
        Library("toylib", "DEF")


def test_namespace_is_free_again_after_its_def_library_is_destroyed(make_library):
    lib = Library("toylib", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib._destroy()
    assert "toylib::f" not in d.OPS and lib not in LIBRARIES
    make_library("toylib", "DEF").define("f(Tensor x) -> Tensor")
    assert "toylib::f" in d.OPS


def test_fragment_adds_definitions_and_impl_only_registers(testdev, make_library):
    make_library("toylib", "DEF").define("f(Tensor x) -> Tensor")
    g = make_library("toylib", "FRAGMENT").define("g(Tensor x) -> Tensor")
    impl_lib = make_library("toylib", "IMPL", "TestDev")
    with pytest.raises(RuntimeError, match="define\\(\\) is not allowed on an IMPL library"):
        impl_lib.define("h(Tensor x) -> Tensor")
    impl_lib.impl("g", lambda x: "g on TestDev")
    assert g(tdev([1.0])) == "g on TestDev"


@pytest.mark.parametrize("ns, kind, exc, message", [
    ("toylib", "OTHER", ValueError, "Library kind must be DEF, FRAGMENT or IMPL, got 'OTHER'"),
    ("toy-lib", "DEF", ValueError, "invalid namespace 'toy-lib'"),
])
def test_bad_library_arguments(ns, kind, exc, message):
    with pytest.raises(exc, match=message):
        Library(ns, kind)


def test_define_twice_raises(make_library):
    lib = make_library("toylib", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="operator toylib::f is already defined \\(by 'user'\\)"):
        make_library("toylib", "FRAGMENT").define("f(Tensor x) -> Tensor")


def test_schema_namespace_must_match_the_library(make_library):
    with pytest.raises(ValueError, match="names the namespace 'other', but the library's namespace is 'toylib'"):
        make_library("toylib", "DEF").define("other::f(Tensor x) -> Tensor")


def test_impl_in_another_namespace_raises(make_library):
    make_library("toylib", "DEF").define("f(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="operator 'toylib::f' is not in this library's namespace 'toyother'"):
        make_library("toyother", "IMPL").impl("toylib::f", lambda x: x, "CompositeImplicitAutograd")


@pytest.mark.parametrize("call, exc, message", [
    (lambda lib: lib.impl("f", lambda x: x), ValueError, "impl\\(\\) needs a dispatch_key"),
    (lambda lib: lib.impl("f", 3, "TestDev"), TypeError, "impl\\(\\): kernel must be callable, got int"),
    (lambda lib: lib.impl("nope", lambda x: x, "TestDev"), KeyError, "no operator named 'toylib::nope'"),
    (lambda lib: lib.impl("f", lambda x: x, "NoSuchKey"), ValueError, "unknown dispatch key 'NoSuchKey'; known keys"),
    (lambda lib: lib.impl("f", d.FALLTHROUGH, "TestDev", with_keyset=True), ValueError,
     "a fallthrough kernel takes no key set"),
    (lambda lib: lib.fallback(lambda *a: None), ValueError, "fallback\\(\\) needs a dispatch_key"),
    (lambda lib: lib.fallback(None, "TestDev"), TypeError, "fallback\\(\\): kernel must be callable"),
    (lambda lib: lib.fallback(lambda *a: None, "CompositeImplicitAutograd"), ValueError,
     "fallbacks cannot be registered for alias keys"),
])
def test_bad_registrations(testdev, make_library, call, exc, message):
    make_library("toylib", "DEF").define("f(Tensor x) -> Tensor")
    with pytest.raises(exc, match=message):
        call(make_library("toylib", "IMPL"))


@pytest.mark.parametrize("name, parsed", [
    ("TestDev", ("Dense", "TestDev")),
    ("Dense", ("Dense", None)),
    ("Autograd", ("Autograd", None)),
    ("AutogradTestDev", ("Autograd", "TestDev")),
    ("CompositeImplicitAutograd", ("CompositeImplicitAutograd", None)),
    ("CompositeExplicitAutograd", ("CompositeExplicitAutograd", None)),
])
def test_dispatch_key_names(testdev, name, parsed):
    assert parse_dispatch_key(name) == parsed


def test_libraries_belong_to_the_plugin_being_enabled(testdev, make_library):
    with owner_scope("someplugin"):
        lib = Library("toylib", "DEF")
    try:
        op = lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CompositeImplicitAutograd")
        assert (lib.owner, op.owner) == ("someplugin", "someplugin")
        assert ("AutogradTestDev", "composite", "someplugin") in op.dispatch_table()
    finally:
        lib._destroy()
    assert make_library("toylib", "DEF").owner == "user"


# -- reaching operators ---------------------------------------------------------------
def test_ops_namespace_reaches_packets_and_overloads(testdev, make_library):
    lib = make_library("toylib", "DEF")
    f = lib.define("f(Tensor x) -> Tensor")
    f_two = lib.define("f.two(Tensor x, Tensor y) -> Tensor")
    assert tp.ops.toylib.f.default is f and tp.ops.toylib.f.two is f_two
    assert tp.ops.toylib.f.overloads == {"": f, "two": f_two}
    assert "f" in dir(tp.ops.toylib)
    assert d.lookup_op("toylib::f.default") is f and d.lookup_op("toylib::f.two") is f_two
    with pytest.raises(AttributeError, match="'toylib::f' has no overload 'three'"):
        tp.ops.toylib.f.three
    with pytest.raises(AttributeError, match="object has no attribute 'nope'"):
        tp.ops.toylib.nope
    with pytest.raises(AttributeError, match="no operator namespace 'toynothing'"):
        tp.ops.toynothing


def test_core_ops_are_reachable():
    add = tp.ops.tensorplug.add
    assert add.Tensor.qualname == "tensorplug::add.Tensor"
    assert str(add.Tensor.schema) == "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert {"Tensor", "Scalar"} <= set(add.overloads)
    assert add.Tensor.entry._op is add.Tensor


def test_packet_picks_the_overload_from_the_arguments(testdev, make_library):
    lib = make_library("toylib", "DEF")
    lib.define("g.Tensor(Tensor x, Tensor y) -> Tensor")
    lib.define("g.Scalar(Tensor x, Scalar y) -> Tensor")
    lib.impl("g.Tensor", lambda x, y: "Tensor", "CompositeImplicitAutograd")
    lib.impl("g.Scalar", lambda x, y: "Scalar", "CompositeImplicitAutograd")
    x = tdev([1.0])
    assert (tp.ops.toylib.g(x, x), tp.ops.toylib.g(x, 2)) == ("Tensor", "Scalar")
    with pytest.raises(TypeError, match="toylib::g\\(\\): no overload matches the arguments; overloads: "
                                        "g.Tensor\\(Tensor x, Tensor y\\) -> Tensor; g.Scalar"):
        tp.ops.toylib.g(x, "s")


def test_removed_operators_disappear_from_the_namespace(make_library):
    lib = Library("toylib", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    assert tp.ops.toylib.f
    lib._destroy()
    with pytest.raises(AttributeError):
        tp.ops.toylib


def test_function_forms_define_and_impl(testdev):
    with owner_scope("functionforms"):
        op = define("toyfn::twice(Tensor x) -> Tensor")

        @impl("toyfn::twice", "TestDev")
        def twice(x):
            return "twice on TestDev"
    try:
        assert tp.ops.toyfn.twice(tdev([1.0])) == "twice on TestDev"
        assert ("TestDev", "kernel", "functionforms") in op.dispatch_table()
        with pytest.raises(ValueError, match="define\\(\\) needs a qualified schema"):
            define("twice(Tensor x) -> Tensor")
    finally:
        from tensorplug.dispatch.library import destroy_owned_by
        destroy_owned_by("functionforms")
    assert "toyfn::twice" not in d.OPS


def test_operator_pickles_by_name():
    import pickle
    op = tp.ops.tensorplug.add.Tensor
    assert pickle.loads(pickle.dumps(op)) is op
