"""The ``tensorplug`` command: in-process through ``cli.main`` and as ``python -m tensorplug``."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

import tensorplug as tp
from tensorplug import cli
from tensorplug.dispatch import REGISTRY

TESTS_DIR = pathlib.Path(__file__).resolve().parent


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def rows(text):
    """The whitespace-separated cells of each line."""
    return [line.split() for line in text.splitlines()]


# -- plugins ---------------------------------------------------------------------------
def test_plugins_table_lists_each_plugin(capsys, testdev, logging_plugin):
    code, out, _ = run(capsys, "plugins")
    assert code == 0
    table = rows(out)
    assert table[0] == ["NAME", "DISTRIBUTION", "VERSION", "STATE", "KEYS", "BACKENDS", "KERNELS"]
    assert ["testdev", "-", "0.0.1", "enabled", "-", "testdev", str(len(testdev.KERNELS))] in table
    assert ["logging", "-", "0.0.1", "enabled", "Logging", "-", "1"] in table


def test_plugins_table_shows_failures(capsys, make_plugin):
    from toy_plugins import broken
    with pytest.raises(RuntimeError):
        make_plugin(broken, "broken")
    code, out, _ = run(capsys, "plugins")
    assert code == 0
    assert ["broken", "-", "0.0.1", "failed", "-", "-", "0"] in rows(out)
    assert "broken: RuntimeError: boom: the broken plugin fails on purpose" in out.splitlines()


def test_plugins_json_is_the_listing(capsys, testdev):
    code, out, _ = run(capsys, "plugins", "--json")
    assert code == 0
    assert json.loads(out) == [p.as_dict() for p in tp.plugins.list()]


# -- dispatch-table ---------------------------------------------------------------------
def test_dispatch_table_of_one_overload(capsys, testdev, logging_plugin):
    code, out, _ = run(capsys, "dispatch-table", "add.Tensor")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "tensorplug::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    table = rows("\n".join(lines[1:]))
    assert table[0] == ["KEY", "PROVENANCE", "PLUGIN"]
    assert ["TestDev", "kernel", "testdev"] in table and ["Logging", "fallback", "logging"] in table
    assert table[1:] == [list(r) for r in tp.ops.tensorplug.add.Tensor.dispatch_table()]


@pytest.mark.parametrize("spec", ["add", "tensorplug::add"])
def test_dispatch_table_of_every_overload(capsys, spec):
    code, out, _ = run(capsys, "dispatch-table", spec)
    assert code == 0
    headers = [line for line in out.splitlines() if line.startswith("tensorplug::add")]
    assert headers == [f"tensorplug::{op.schema}" for op in tp.ops.tensorplug.add.overloads.values()]


@pytest.mark.parametrize("spec, headers", [
    ("neg", ["tensorplug::neg(Tensor self) -> Tensor"]),
    ("neg.default", ["tensorplug::neg(Tensor self) -> Tensor"]),
    ("tensorplug::neg.default", ["tensorplug::neg(Tensor self) -> Tensor"]),
    ("toycli::f", ["toycli::f(Tensor x) -> Tensor", "toycli::f.two(Tensor x, int n) -> Tensor"]),
    ("toycli::f.two", ["toycli::f.two(Tensor x, int n) -> Tensor"]),
])
def test_dispatch_table_names(capsys, testdev, make_library, spec, headers):
    lib = make_library("toycli", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.define("f.two(Tensor x, int n) -> Tensor")
    code, out, _ = run(capsys, "dispatch-table", spec)
    assert code == 0
    assert [line for line in out.splitlines() if "::" in line] == headers


def test_dispatch_table_provenance_column(capsys, testdev, make_library, make_plugin):
    from tensorplug.dispatch import FunctionalityKey

    class Keys:
        @tp.hookimpl
        def tensorplug_functionality_keys(self):
            return [FunctionalityKey("ClifFall", 52)]

        @tp.hookimpl
        def tensorplug_register_kernels(self, library):
            library("tensorplug", "IMPL").fallback(tp.fallthrough_kernel, "ClifFall")

    make_plugin(Keys(), "clikeys")
    lib = make_library("toycli", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CompositeImplicitAutograd")
    code, out, _ = run(capsys, "dispatch-table", "toycli::f")
    table = rows(out)
    assert ["ClifFall", "fallthrough", "clikeys"] in table
    assert ["TestDev", "composite", "user"] in table


def test_dispatch_table_json(capsys):
    code, out, _ = run(capsys, "dispatch-table", "neg", "--json")
    op = tp.ops.tensorplug.neg.default
    assert code == 0
    assert json.loads(out) == [{"op": "tensorplug::neg", "schema": str(op.schema),
                                "table": [{"key": k, "provenance": p, "plugin": o} for k, p, o in op.dispatch_table()]}]


@pytest.mark.parametrize("spec, hint", [("ad.Tensor", "did you mean add.Tensor"), ("nosuchop", ""),
                                        ("nons::f", ""), ("add.NoOverload", "")])
def test_unknown_operator_exits_1(capsys, spec, hint):
    code, out, err = run(capsys, "dispatch-table", spec)
    assert (code, out) == (1, "")
    assert err.startswith(f"tensorplug dispatch-table: unknown operator {spec!r}") and hint in err


# -- keys ------------------------------------------------------------------------------------
def test_keys_lists_functionality_keys_and_backends(capsys, testdev, logging_plugin):
    code, out, _ = run(capsys, "keys")
    assert code == 0
    table = rows(out)
    assert ["Autograd", "24", "40", "yes", "core"] in table
    assert ["Logging", "12", "28", "no", "logging"] in table
    assert ["Dense", "8", "24", "yes", "core"] in table
    assert ["TestDev", "testdev", "7", "testdev"] in table
    names = [r[0] for r in table]
    assert names.index("Autograd") < names.index("Logging") < names.index("Dense")


def test_keys_json(capsys, testdev):
    code, out, _ = run(capsys, "keys", "--json")
    data = json.loads(out)
    assert code == 0
    assert [k["name"] for k in data["functionality"]] == [
        k.name for k in sorted(REGISTRY.functionality.values(), key=lambda k: -k.priority)]
    assert {"name": "TestDev", "device": "testdev", "bit": 7, "plugin": "testdev"} in data["backends"]


# -- usage ------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [[], ["nosuchcommand"], ["dispatch-table"], ["plugins", "--bogus"]])
def test_usage_errors_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and "usage: tensorplug" in err


def test_help_exits_0(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "dispatch-table" in out and "Exit status: 0 ok, 1 unknown operator, 2 usage error" in out


def test_demo_runs_the_demo_module_with_its_arguments(capsys, monkeypatch):
    import types
    seen = []
    fake = types.SimpleNamespace(main=lambda argv: seen.append(argv) or 0)
    monkeypatch.setitem(sys.modules, "tensorplug.demo", fake)
    assert cli.main(["demo", "--fast", "x", "--help"]) == 0
    assert seen == [["--fast", "x", "--help"]]


def test_demo_without_the_module_exits_1(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorplug.demo", None)  # import raises ModuleNotFoundError
    code, _, err = run(capsys, "demo")
    assert code == 1 and "no tensorplug.demo module" in err


# -- as a program ---------------------------------------------------------------------------------
def python_m(*argv, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    e.update(env)
    return subprocess.run([sys.executable, "-m", "tensorplug", *argv], env=e, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("argv, code, stream, expected", [
    (["plugins", "--json"], 0, "stdout", '"name": "cpu"'),
    (["dispatch-table", "add.Tensor"], 0, "stdout", "tensorplug::add.Tensor("),
    (["dispatch-table", "nosuchop"], 1, "stderr", "unknown operator 'nosuchop'"),
    (["keys"], 0, "stdout", "functionality keys, highest priority first:"),
    (["frobnicate"], 2, "stderr", "invalid choice: 'frobnicate'"),
])
def test_python_dash_m(argv, code, stream, expected):
    r = python_m(*argv)
    assert r.returncode == code, r.stderr
    assert expected in getattr(r, stream)


def test_python_dash_m_lists_a_plugin_that_failed_at_discovery(tmp_path):
    info = tmp_path / "tensorplug_broken-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorplug-broken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[tensorplug.plugins]\nbroken = toy_plugins.broken\n")
    r = python_m("plugins", PYTHONPATH=os.pathsep.join([str(tmp_path), str(TESTS_DIR)]))
    assert r.returncode == 0, r.stderr
    assert ["broken", "tensorplug-broken", "1.0", "failed", "-", "-", "0"] in rows(r.stdout)
    assert "broken: RuntimeError: boom: the broken plugin fails on purpose" in r.stdout
    assert "RuntimeWarning" in r.stderr
