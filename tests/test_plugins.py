"""The plugin manager: enabling, disabling, failures, public names, and entry-point discovery.

In-process tests register toy plugins with ``tensorplug.plugins.register``;
the discovery tests write a ``*.dist-info`` directory with entry points and
import tensorplug in a fresh interpreter that has it on ``sys.path``.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import threading

import numpy as np
import pytest
from pluggy import PluginValidationError

import tensorplug as tp
from tensorplug.backend import BACKENDS
from tensorplug.dispatch import REGISTRY, FunctionalityKey, dispatcher as d
from tensorplug.dispatch.library import LIBRARIES

TESTS_DIR = pathlib.Path(__file__).resolve().parent
ADD = tp.ops.tensorplug.add.Tensor
NEG = tp.ops.tensorplug.neg.default


def tdev(values):
    return tp.tensor(values, device="testdev")


def owned_by(name):
    return [lib for lib in LIBRARIES if lib.owner == name]


# -- listing -------------------------------------------------------------------------
def test_listing_describes_an_enabled_plugin(testdev):
    info = tp.plugins.get("testdev")
    assert info in tp.plugins.list() and tp.plugins.is_enabled("testdev")
    assert info.as_dict() == {
        "name": "testdev", "distribution": None, "version": "0.0.1", "state": "enabled", "keys": [],
        "backends": ["testdev"], "kernels": len(testdev.KERNELS), "namespace": ["testdev_synchronize"],
        "error": None}


def test_listing_counts_keys_and_fallbacks(logging_plugin):
    d_ = tp.plugins.get("logging").as_dict()
    assert (d_["keys"], d_["kernels"], d_["namespace"]) == (["Logging"], 1, ["logging_mode"])


@pytest.mark.parametrize("call, exc, message", [
    (lambda: tp.plugins.enable("nosuchplugin"), ValueError, "unknown plugin 'nosuchplugin'"),
    (lambda: tp.plugins.disable("nosuchplugin"), ValueError, "unknown plugin 'nosuchplugin'"),
    (lambda: tp.plugins.register(object(), "testdev"), ValueError, "a plugin named 'testdev' is already known"),
])
def test_plugin_manager_errors(testdev, call, exc, message):
    with pytest.raises(exc, match=message):
        call()


# -- disabling and enabling ------------------------------------------------------------
def test_disabling_a_backend_plugin_removes_everything_it_registered(testdev):
    x = tdev([1.0, 2.0])
    assert tp.testdev_synchronize() == "synchronized"
    tp.plugins.disable("testdev")
    info = tp.plugins.get("testdev")
    assert (info.state, info.backends, info.names, info.kernel_count) == ("disabled", [], [], 0)
    assert "testdev" not in BACKENDS and "TestDev" not in REGISTRY.backend_by_name
    assert ("Dense", "TestDev") not in ADD.table and owned_by("testdev") == []
    assert ("TestDev", "kernel", "testdev") not in ADD.dispatch_table()
    with pytest.raises(AttributeError, match=r"tensorplug.testdev_synchronize is provided by the plugin 'testdev' "
                                             r"\(pip install tensorplug-testdev\), which is installed but disabled; "
                                             r"enable it with tensorplug.plugins.enable\('testdev'\)"):
        tp.testdev_synchronize
    # an existing tensor of the disabled backend raises the error a new one would
    with pytest.raises(RuntimeError) as e:
        ADD(x, x)
    msg = str(e.value)
    assert msg.startswith("no backend is registered for device type 'testdev': the backend 'TestDev' comes from "
                          "the plugin 'testdev' (pip install tensorplug-testdev), which is installed but disabled; "
                          "enable it with tensorplug.plugins.enable('testdev') or check "
                          "TENSORPLUG_LOAD_PLUGINS / TENSORPLUG_DISABLE_PLUGINS.")
    with pytest.raises(RuntimeError, match=r"no backend is registered for device type 'testdev': the backend "
                                           r"'TestDev' comes from the plugin 'testdev'"):
        tdev([1.0])

    tp.plugins.enable("testdev")
    np.testing.assert_array_equal(ADD(x, x)._host(), [2.0, 4.0])  # the same tensor works again
    assert tp.testdev_synchronize() == "synchronized"
    assert tp.plugins.get("testdev").kernel_count == len(testdev.KERNELS)


def test_disabling_a_key_plugin_removes_the_key_and_its_fallback(testdev, logging_plugin):
    x = logging_plugin.tag(tdev([1.0]))
    tp.plugins.disable("logging")
    assert "Logging" not in REGISTRY.functionality and ("Logging", None) not in d.FALLBACKS
    assert NEG(x)._host().tolist() == [-1.0]  # the tensor's stale bit names no key: ignored
    assert logging_plugin.LOG == []
    tp.plugins.enable("logging")
    NEG(x)
    assert [e[1] for e in logging_plugin.LOG] == ["tensorplug::neg"]


def test_disabling_a_kernel_plugin_names_it_in_the_missing_kernel_error(testdev, make_plugin, make_library):
    make_library("toyplug", "DEF").define("f(Tensor x) -> Tensor")

    class KernelPlugin:
        @tp.hookimpl
        def tensorplug_register_kernels(self, library):
            library("toyplug", "IMPL", "TestDev").impl("f", lambda x: "from kernelplug")

    make_plugin(KernelPlugin(), "kernelplug")
    x = tdev([1.0])
    assert tp.ops.toyplug.f(x) == "from kernelplug"
    tp.plugins.disable("kernelplug")
    with pytest.raises(NotImplementedError, match=r"'toyplug::f' has kernels for: \[\]. The kernel comes from the "
                                                  r"plugin 'kernelplug' \(pip install tensorplug-kernelplug\), "
                                                  r"which is installed but disabled"):
        tp.ops.toyplug.f(x)


def test_disabling_removes_the_plugins_operators(testdev, make_plugin):
    class OpPlugin:
        @tp.hookimpl
        def tensorplug_register_kernels(self, library):
            lib = library("toyplugops", "DEF")
            lib.define("twice(Tensor x) -> Tensor")
            lib.impl("twice", lambda x: tp.ops.tensorplug.add.Tensor(x, x), "CompositeImplicitAutograd")

    make_plugin(OpPlugin(), "opplugin")
    assert tp.ops.toyplugops.twice(tdev([2.0]))._host().tolist() == [4.0]
    tp.plugins.disable("opplugin")
    assert "toyplugops::twice" not in d.OPS
    with pytest.raises(AttributeError, match="no operator namespace 'toyplugops'"):
        tp.ops.toyplugops
    tp.plugins.enable("opplugin")
    assert tp.ops.toyplugops.twice(tdev([2.0]))._host().tolist() == [4.0]


# -- failures --------------------------------------------------------------------------
def test_plugin_that_raises_is_failed_and_its_partial_registrations_are_undone(make_plugin):
    from toy_plugins import broken
    with pytest.raises(RuntimeError, match="boom: the broken plugin fails on purpose"):
        make_plugin(broken, "broken")
    info = tp.plugins.get("broken")
    assert info.state == "failed"
    assert info.error == "RuntimeError: boom: the broken plugin fails on purpose"
    assert "tensorplug_register_kernels" in info.traceback
    assert info.as_dict()["error"] == info.error
    assert "Broken" not in REGISTRY.functionality and "brokendev" not in BACKENDS
    assert "BrokenDev" not in REGISTRY.backend_by_name and ("Broken", None) not in d.FALLBACKS
    assert ("Dense", "BrokenDev") not in NEG.table and owned_by("broken") == []
    assert not tp.plugins.is_enabled("broken")
    assert REGISTRY.by_priority[44] is None  # the priority is free for another plugin


@pytest.mark.parametrize("plugin_names, message", [
    ({"toy_ok": 1, "tensor": 2}, "name 'tensor' would shadow tensorplug.tensor, which the core defines"),
    ({"toy_ok": 1, "not an identifier": 2}, "public name 'not an identifier' is not a Python identifier"),
])
def test_bad_public_names_fail_the_plugin_and_undo_its_names(make_plugin, plugin_names, message):
    class NamePlugin:
        @tp.hookimpl
        def tensorplug_namespace(self):
            return plugin_names

    with pytest.raises(ValueError, match=message):
        make_plugin(NamePlugin(), "names")
    assert tp.plugins.get("names").state == "failed"
    with pytest.raises(AttributeError, match="tensorplug.toy_ok is provided by the plugin 'names'"):
        tp.toy_ok


def test_two_plugins_cannot_provide_the_same_name(testdev, make_plugin):
    class Copycat:
        @tp.hookimpl
        def tensorplug_namespace(self):
            return {"testdev_synchronize": None}

    with pytest.raises(ValueError, match="name 'testdev_synchronize' is already provided by plugin 'testdev'"):
        make_plugin(Copycat(), "copycat")
    assert tp.testdev_synchronize() == "synchronized"


def test_two_keys_cannot_share_a_priority(logging_plugin, make_plugin):
    class Clash:
        @tp.hookimpl
        def tensorplug_functionality_keys(self):
            return [FunctionalityKey("Clash", 12)]

    with pytest.raises(ValueError, match="dispatch key 'Clash' asks for priority 12, which key 'Logging' "
                                         "\\(plugin 'logging'\\) already holds"):
        make_plugin(Clash(), "clash")


def test_misspelt_hook_fails_the_plugin(make_plugin):
    class Typo:
        @tp.hookimpl
        def tensorplug_backend(self):
            return []

    with pytest.raises(PluginValidationError, match="unknown hook 'tensorplug_backend'"):
        make_plugin(Typo(), "typo")
    assert tp.plugins.get("typo").state == "failed"


@pytest.mark.parametrize("error", [SystemExit(3), KeyboardInterrupt()], ids=lambda e: type(e).__name__)
def test_system_exit_and_keyboard_interrupt_while_loading_are_contained(make_plugin, error):
    from toy_plugins import exits
    plugin = exits._Exits("Exits", 46, error)
    with pytest.raises(type(error)):
        make_plugin(plugin, "exits")
    info = tp.plugins.get("exits")
    assert (info.state, info.error) == ("failed", f"{type(error).__name__}: {error}")
    assert "Exits" not in REGISTRY.functionality and ("Exits", None) not in d.FALLBACKS and owned_by("exits") == []
    # discovery and the pending completion warn instead: import tensorplug goes on
    tp.plugins.disable("exits")
    if isinstance(error, SystemExit):
        with pytest.warns(RuntimeWarning, match="plugin 'exits' failed to load and is skipped: SystemExit: 3"):
            tp.plugins._enable_all(["exits"])
    else:
        with pytest.raises(KeyboardInterrupt):
            tp.plugins._enable_all(["exits"])
    assert tp.plugins.get("exits").state == "failed" and "Exits" not in REGISTRY.functionality


def test_a_user_override_does_not_stop_the_plugin_from_coming_back(testdev, make_plugin, make_library):
    make_library("toyplug", "DEF").define("f(Tensor x) -> Tensor")

    class KernelPlugin:
        @tp.hookimpl
        def tensorplug_register_kernels(self, library):
            library("toyplug", "IMPL", "TestDev").impl("f", lambda x: "from kernelplug")
            library("tensorplug", "IMPL").fallback(lambda op, ks, *a: "plugin fallback", "TestDev")

    make_plugin(KernelPlugin(), "kernelplug")
    user = make_library("toyplug", "IMPL")
    user.impl("f", lambda x: "from the user", "TestDev", allow_override=True)
    user_fb = make_library("tensorplug", "IMPL")
    user_fb.fallback(lambda op, ks, *a: "user fallback", "TestDev", allow_override=True)
    x = tdev([1.0])
    sub = tp.ops.tensorplug.sub.Tensor
    assert tp.ops.toyplug.f(x) == "from the user" and sub(x, x) == "user fallback"
    tp.plugins.disable("kernelplug")
    tp.plugins.enable("kernelplug")  # raised: "already registered by 'user'"
    assert tp.plugins.get("kernelplug").state == "enabled"
    assert tp.ops.toyplug.f(x) == "from the user" and sub(x, x) == "user fallback"  # the override stays on top
    user._destroy()
    user_fb._destroy()
    assert tp.ops.toyplug.f(x) == "from kernelplug" and sub(x, x) == "plugin fallback"
    # a registration without allow_override still conflicts with the plugin's
    with pytest.raises(RuntimeError, match="already registered by 'kernelplug'; pass allow_override=True"):
        make_library("toyplug", "IMPL").impl("f", lambda x: 0, "TestDev")


# -- threads ------------------------------------------------------------------------------
class _Gate:
    """A plugin whose kernel hook stops until the test lets it go (so another thread acts meanwhile)."""

    def __init__(self):
        self.inside, self.go = threading.Event(), threading.Event()

    @tp.hookimpl
    def tensorplug_register_kernels(self, library):
        self.lib = library("tensorplug", "IMPL")
        self.inside.set()
        assert self.go.wait(30)


def test_a_library_belongs_to_the_thread_that_creates_it(make_plugin, make_library):
    gate = _Gate()
    t = threading.Thread(target=make_plugin, args=(gate, "gate"))
    t.start()
    try:
        assert gate.inside.wait(30)
        assert make_library("userns", "FRAGMENT").owner == "user"  # the plugin being enabled is another thread's
    finally:
        gate.go.set()
        t.join()
    assert gate.lib.owner == "gate" and tp.plugins.get("gate").state == "enabled"


def test_a_resolution_in_flight_cannot_cache_a_disabled_plugins_kernel(testdev, make_plugin, make_library):
    make_library("toyplug", "DEF").define("f(Tensor x) -> Tensor")

    class KernelPlugin:
        @tp.hookimpl
        def tensorplug_register_kernels(self, library):
            library("toyplug", "IMPL", "TestDev").impl("f", lambda x: "from kernelplug")

    make_plugin(KernelPlugin(), "kernelplug")
    op, x = tp.ops.toyplug.f.default, tdev([1.0])
    resolved, go, results = threading.Event(), threading.Event(), []

    def slow_resolve(ks):  # the kernel is found, then the plugin is disabled before it is cached
        k = type(op)._resolve_uncached(op, ks)
        resolved.set()
        assert go.wait(30)
        return k

    op._resolve_uncached = slow_resolve
    try:
        t = threading.Thread(target=lambda: results.append(op(x)))
        t.start()
        assert resolved.wait(30)
        tp.plugins.disable("kernelplug")
        go.set()
        t.join()
    finally:
        del op._resolve_uncached
    assert results == ["from kernelplug"]  # the call in flight ran with what it found
    with pytest.raises(NotImplementedError, match="The kernel comes from the plugin 'kernelplug'"):
        op(x)


def test_a_device_lookup_in_flight_cannot_cache_a_disabled_backends_key_set(testdev, monkeypatch):
    import tensorplug.backend as backend
    dev = tp.device("testdev")
    backend.clear_device_caches()
    found, go = threading.Event(), threading.Event()
    real = backend.backend_for

    def slow_backend_for(d):  # the backend is found, then disabled before its key set is cached
        b = real(d)
        found.set()
        assert go.wait(30)
        return b

    monkeypatch.setattr(backend, "backend_for", slow_backend_for)
    t = threading.Thread(target=backend.device_keyset, args=(dev,))
    t.start()
    assert found.wait(30)
    tp.plugins.disable("testdev")
    go.set()
    t.join()
    assert dev not in backend._device_ks_cache


def test_enabling_and_disabling_from_two_threads_at_once(testdev, logging_plugin, make_plugin):
    class OpPlugin:  # defines operators: the operator table changes
        @tp.hookimpl
        def tensorplug_register_kernels(self, library):
            lib = library("threadops", "DEF")
            for i in range(20):
                lib.define(f"op{i}(Tensor x) -> Tensor")
                lib.impl(f"op{i}", lambda x: x, "CompositeImplicitAutograd")

    make_plugin(OpPlugin(), "threadops")
    errors = []

    def toggle(name, n=40):
        try:
            for _ in range(n):
                tp.plugins.disable(name)
                tp.plugins.enable(name)
                tp.plugins.list()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def call(n=400):
        x = tdev([1.0])
        try:
            for _ in range(n):
                NEG(x)
                d.invalidate_caches()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=toggle, args=("threadops",)), threading.Thread(target=toggle,
                                                                                          args=("logging",)),
                   threading.Thread(target=call)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert tp.plugins.is_enabled("threadops") and tp.plugins.is_enabled("logging")
    assert NEG(tdev([1.0]))._host().tolist() == [-1.0]


# -- public names ------------------------------------------------------------------------
def test_plugin_names_resolve_only_while_enabled(logging_plugin):
    assert tp.logging_mode is logging_plugin.logging_mode
    tp.plugins.disable("logging")
    with pytest.raises(AttributeError, match="tensorplug.logging_mode is provided by the plugin 'logging'"):
        tp.logging_mode


def test_unknown_names_are_plain_attribute_errors():
    with pytest.raises(AttributeError, match="^module 'tensorplug' has no attribute 'no_such_name'$"):
        tp.no_such_name


# -- entry-point discovery, in fresh interpreters ------------------------------------------
LISTING = ("import json, tensorplug, tensorplug.backend as b; "
           "print(json.dumps({'plugins': {p.name: p.as_dict() for p in tensorplug.plugins.list()}, "
           "'keys': sorted(tensorplug.dispatch.REGISTRY.functionality), 'backends': sorted(b.BACKENDS)}))")


def write_distribution(root, dist, version, entry_points):
    """A minimal installed distribution: ``NAME-VERSION.dist-info`` with METADATA and entry points."""
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(
        "[tensorplug.plugins]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items()))


def run_python(code, path, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    e["PYTHONPATH"] = os.pathsep.join([str(path), str(TESTS_DIR)])
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def toy_dist(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    write_distribution(root, "tensorplug-toy", "0.3.0", {"toy": "toy_plugins.testdev"})
    return root


def test_entry_point_plugin_is_discovered_and_enabled(toy_dist):
    code = LISTING + "; import tensorplug as tp; print(tp.testdev_synchronize())"
    r = run_python(code, toy_dist)
    assert r.returncode == 0, r.stderr
    out, sync = r.stdout.splitlines()
    listing = json.loads(out)
    toy = listing["plugins"]["toy"]
    assert (toy["distribution"], toy["version"], toy["state"]) == ("tensorplug-toy", "0.3.0", "enabled")
    assert toy["backends"] == ["testdev"] and toy["namespace"] == ["testdev_synchronize"]
    assert "testdev" in listing["backends"] and sync == "synchronized"


@pytest.mark.parametrize("env, enabled", [
    ({"TENSORPLUG_LOAD_PLUGINS": ""}, set()),
    ({"TENSORPLUG_LOAD_PLUGINS": "cpu,toy"}, {"cpu", "toy"}),
    ({"TENSORPLUG_LOAD_PLUGINS": " toy "}, {"toy"}),
    ({"TENSORPLUG_DISABLE_PLUGINS": "toy"}, {"cpu"}),
    ({"TENSORPLUG_LOAD_PLUGINS": "cpu,toy", "TENSORPLUG_DISABLE_PLUGINS": "cpu"}, {"toy"}),
])
def test_environment_selects_plugins(toy_dist, env, enabled):
    r = run_python(LISTING, toy_dist, **env)
    assert r.returncode == 0, r.stderr
    listing = json.loads(r.stdout)
    plugins = listing["plugins"]
    assert {"cpu", "toy"} <= set(plugins)
    assert {n for n in ("cpu", "toy") if plugins[n]["state"] == "enabled"} == enabled
    assert all(plugins[n]["state"] == "disabled" for n in ("cpu", "toy") if n not in enabled)
    assert ("testdev" in listing["backends"]) == ("toy" in enabled)


def test_unknown_names_in_the_load_list_warn(toy_dist):
    r = run_python(LISTING, toy_dist, TENSORPLUG_LOAD_PLUGINS="toy,nosuchplugin")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["plugins"]["toy"]["state"] == "enabled"
    assert ("RuntimeWarning: tensorplug: TENSORPLUG_LOAD_PLUGINS names plugins that are not installed: "
            "nosuchplugin (installed: ") in r.stderr


def test_known_plugin_names_say_which_plugin_provides_them(toy_dist):
    code = ("import tensorplug\n"
            "for name in ('vmap', 'profiler', 'openreg'):\n"
            "    try:\n"
            "        getattr(tensorplug, name)\n"
            "    except AttributeError as e:\n"
            "        print(e)\n")
    r = run_python(code, toy_dist, TENSORPLUG_LOAD_PLUGINS="cpu")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3
    for line, (name, plugin) in zip(lines, [("vmap", "vmap"), ("profiler", "profiler"), ("openreg", "openreg")]):
        assert line.startswith(f"tensorplug.{name} is provided by the plugin '{plugin}' "
                               f"(pip install tensorplug-{plugin}), which is ")
        assert line.endswith("not installed") or f"enable it with tensorplug.plugins.enable('{plugin}')" in line


def test_broken_entry_points_warn_and_import_still_works(tmp_path):
    write_distribution(tmp_path, "tensorplug-broken", "1.0", {
        "broken": "toy_plugins.broken", "missing": "toy_plugins.no_such_module"})
    code = ("import warnings\nwarnings.simplefilter('always')\n" + LISTING
            + "\nimport tensorplug.backend\nassert tensorplug.tensor([1.0]).tolist() == [1.0]")
    r = run_python(code, tmp_path)
    assert r.returncode == 0, r.stderr
    listing = json.loads(r.stdout)
    broken, missing = listing["plugins"]["broken"], listing["plugins"]["missing"]
    assert (broken["state"], broken["error"]) == ("failed", "RuntimeError: boom: the broken plugin fails on purpose")
    assert missing["state"] == "failed" and missing["error"].startswith("ModuleNotFoundError: No module named")
    assert listing["plugins"]["cpu"]["state"] == "enabled"
    assert "Broken" not in listing["keys"] and "brokendev" not in listing["backends"]
    assert "RuntimeWarning: tensorplug: plugin 'broken' failed to load and is skipped: RuntimeError: boom" in r.stderr
    assert "RuntimeWarning: tensorplug: plugin 'missing' failed to load" in r.stderr


def test_system_exit_and_keyboard_interrupt_at_discovery(tmp_path):
    (tmp_path / "exit").mkdir()
    write_distribution(tmp_path / "exit", "tensorplug-exits", "1.0", {"exits": "toy_plugins.exits:SYSTEM_EXIT"})
    r = run_python("import warnings\nwarnings.simplefilter('always')\n" + LISTING
                   + "\nassert tensorplug.tensor([1.0]).tolist() == [1.0]", tmp_path / "exit")
    assert r.returncode == 0, r.stderr  # SystemExit from a plugin does not end the program
    listing = json.loads(r.stdout)
    assert (listing["plugins"]["exits"]["state"], listing["plugins"]["exits"]["error"]) == ("failed", "SystemExit: 3")
    assert listing["plugins"]["cpu"]["state"] == "enabled" and "Exits" not in listing["keys"]
    assert "RuntimeWarning: tensorplug: plugin 'exits' failed to load and is skipped: SystemExit: 3" in r.stderr

    (tmp_path / "interrupt").mkdir()
    write_distribution(tmp_path / "interrupt", "tensorplug-exits", "1.0", {
        "aaa_interrupts": "toy_plugins.exits:INTERRUPT", "exits": "toy_plugins.exits:SYSTEM_EXIT"})
    code = ("import json, sys, warnings\nwarnings.simplefilter('always')\n"
            "try:\n    import tensorplug\nexcept KeyboardInterrupt:\n    print('interrupted')\n"
            "plugins = sys.modules['tensorplug.plugins']\n"
            "keys = sys.modules['tensorplug.dispatch.keys'].REGISTRY.functionality\n"
            "print(json.dumps({n: [p.state, p.error] for n, p in plugins._PLUGINS.items()}))\n"
            "print('Interrupts' in keys)\n"
            "plugins.discover()\n"
            "print(json.dumps({n: p.state for n, p in plugins._PLUGINS.items()}))\n")
    r = run_python(code, tmp_path / "interrupt")
    assert r.returncode == 0, r.stderr
    interrupted, after, key_left, rediscovered = r.stdout.splitlines()
    assert interrupted == "interrupted"  # the user's Ctrl-C is not swallowed
    # undone and failed; the plugins it kept from being tried are not listed as if selected out
    assert json.loads(after) == {"aaa_interrupts": ["failed", "KeyboardInterrupt: "]} and key_left == "False"
    states = json.loads(rediscovered)
    assert (states["aaa_interrupts"], states["cpu"], states["exits"]) == ("failed", "enabled", "failed")


@pytest.mark.parametrize("first", ["import tensorplug", "import toy_plugins.testdev"])
def test_a_plugin_loads_after_the_plugin_providing_its_backend(tmp_path, first):
    # 'aaa' registers a kernel for TestDev, which 'zzz' provides: name order would fail it
    write_distribution(tmp_path, "tensorplug-toys", "1.0", {
        "aaa": "toy_plugins.testdev_extras", "zzz": "toy_plugins.testdev"})
    code = ("import warnings\nwarnings.simplefilter('always')\n" + first + "\n" + LISTING
            + "\nimport tensorplug as tp\n"
              "print(tp.ops.testdev_extras.double(tp.tensor([1.0, 2.0], device='testdev'))._host().tolist())")
    r = run_python(code, tmp_path)
    assert r.returncode == 0, r.stderr
    out, doubled = r.stdout.splitlines()
    plugins = json.loads(out)["plugins"]
    assert plugins["aaa"]["state"] == plugins["zzz"]["state"] == "enabled", plugins
    assert doubled == "[2.0, 4.0]" and "failed to load" not in r.stderr


def test_two_distributions_with_one_plugin_name_are_both_listed(tmp_path):
    roots = [tmp_path / "a", tmp_path / "b"]
    for root in roots:
        root.mkdir()
    write_distribution(roots[0], "tensorplug-toy-zeta", "1.0", {"toy": "toy_plugins.logging_key"})
    write_distribution(roots[1], "tensorplug-toy-alpha", "2.0", {"toy": "toy_plugins.testdev"})
    code = "import warnings\nwarnings.simplefilter('always')\n" + LISTING + "\ntensorplug.plugins.discover()"
    for order in (roots, roots[::-1]):  # whichever comes first on sys.path
        r = run_python(code, os.pathsep.join(map(str, order)))
        assert r.returncode == 0, r.stderr
        plugins = json.loads(r.stdout)["plugins"]
        kept, other = plugins["toy"], plugins["tensorplug-toy-zeta:toy"]
        assert (kept["distribution"], kept["state"], kept["backends"]) == ("tensorplug-toy-alpha", "enabled",
                                                                           ["testdev"])
        assert (other["distribution"], other["state"]) == ("tensorplug-toy-zeta", "disabled")
        assert r.stderr.count("RuntimeWarning: tensorplug: the plugin name 'toy' is declared by two distributions: "
                              "tensorplug-toy-alpha and tensorplug-toy-zeta") == 1  # discovering again: no news
    # the other one is selected by its listed name
    r = run_python(code, os.pathsep.join(map(str, roots)), TENSORPLUG_LOAD_PLUGINS="tensorplug-toy-zeta:toy")
    assert r.returncode == 0, r.stderr
    plugins = json.loads(r.stdout)["plugins"]
    assert (plugins["toy"]["state"], plugins["tensorplug-toy-zeta:toy"]["state"]) == ("disabled", "enabled")


# -- the documentation's examples --------------------------------------------------------
@pytest.mark.parametrize("page", ["architecture.md", "plugins.md", "backend-contract.md"])
def test_documentation_examples_run(page, capsys):
    """Every ```python block of the page runs, in order, in one namespace."""
    if not tp.plugins.is_enabled("cpu"):
        pytest.skip("the examples use the cpu plugin")
    text = (TESTS_DIR.parent / "docs" / page).read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    namespace = {"__name__": f"docs_{page}"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/{page} block {i}", "exec"), namespace)
    assert [p.name for p in tp.plugins.list() if p.obj is not None and p.entry_point is None] == []


def test_every_distribution_the_core_names_in_a_hint_exists_in_the_repository():
    """"pip install X" hints in core/ (and the tables behind them) name only distributions of this repository."""
    import pathlib
    import re
    import tomllib
    root = pathlib.Path(__file__).resolve().parents[1]
    dists = set()
    for pp in root.glob("**/pyproject.toml"):
        if ".venv" in pp.parts:
            continue
        dists.add(tomllib.loads(pp.read_text())["project"]["name"])
    code = ("import json, tensorplug\nfrom tensorplug import plugins as p\nfrom tensorplug import backend as b\n"
            "print(json.dumps(sorted(set(p.KNOWN_PLUGINS.values()) | {x for _, x in b.BACKEND_PROVIDERS.values()}"
            " | {p.distribution_of(n) for n in p.NAME_PROVIDERS.values()})))")
    import json, subprocess, sys, os
    env = dict(os.environ, TENSORPLUG_LOAD_PLUGINS="")  # the core's own tables, no plugin loaded
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    named = set(json.loads(r.stdout))
    for src in (root / "core" / "tensorplug").rglob("*.py"):
        named |= set(re.findall(r"pip install (tensorplug-[a-z0-9_-]+)", src.read_text()))
    for doc in (root / "docs").glob("*.md"):
        named |= set(re.findall(r"pip install (tensorplug-[a-z0-9_-]+)", doc.read_text()))
    named -= {"tensorplug-testdev", "tensorplug-mydev"}  # the docs' own example plugins
    assert named, "no hints found"
    assert named <= dists, f"hints name distributions not in the repository: {sorted(named - dists)}"
