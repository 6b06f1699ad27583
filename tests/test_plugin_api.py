"""The public plugin API: plugins stay on it, and it says what it promises."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys
import textwrap

import pytest

import tensorplug
from tensorplug import plugin_api

ROOT = pathlib.Path(__file__).resolve().parents[1]
# the modules of the core a plugin may import: the user API, this contract, registration and the kit
ALLOWED = ("tensorplug", "tensorplug.plugin_api", "tensorplug.library", "tensorplug.testing", "tensorplug.func",
           "tensorplug.autograd", "tensorplug.autograd.graph", "tensorplug.nn", "tensorplug.nn.functional",
           "tensorplug.optim", "tensorplug.utils.data", "tensorplug.demo", "tensorplug.distributed",
           "tensorplug.nn.parallel", "tensorplug.distributed.algorithms.ddp_comm_hooks",
           "tensorplug.distributed.algorithms.ddp_comm_hooks.default_hooks")


def _plugin_files():
    for top in ("plugins", "examples"):
        yield from sorted((ROOT / top).rglob("*.py"))


def _violations(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("tensorplug.") and a.name not in ALLOWED:
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "tensorplug" or node.module.startswith("tensorplug.")):
            if node.module not in ALLOWED:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import ...")
            for a in node.names:
                if a.name.startswith("_"):
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {a.name}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in ("tensorplug", "tp") and node.attr.startswith("_") and node.attr != "__version__":
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    return out


def test_plugins_and_examples_use_only_the_public_api():
    bad = [v for f in _plugin_files() for v in _violations(f)]
    assert not bad, "plugins reach into the core's internals (use tensorplug.plugin_api):\n" + "\n".join(bad)


def test_the_checker_catches_private_imports(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("from tensorplug.tensor import make_view\nfrom tensorplug import _state\nimport tensorplug.ops\n"
                 "x = tensorplug._PUBLIC\n")
    global ROOT
    old, ROOT = ROOT, tmp_path
    try:
        assert len(_violations(f)) == 4
    finally:
        ROOT = old


def test_every_public_name_is_documented_and_exists():
    for name in plugin_api.__all__:
        obj = getattr(plugin_api, name)
        if callable(obj) and not isinstance(obj, type) or isinstance(obj, type):
            assert (obj.__doc__ or "").strip(), f"plugin_api.{name} has no docstring"
    doc = (ROOT / "docs" / "plugins.md").read_text()
    missing = [n for n in plugin_api.__all__ if f"`{n}" not in doc]
    assert not missing, f"docs/plugins.md does not describe: {missing}"


def test_tensor_maker_follows_the_backends_current_key_set():
    rec = plugin_api.backend("cpu")
    make = plugin_api.tensor_maker(rec)
    import numpy as np
    t = make(np.ones(3, np.float32), tensorplug.float32)
    assert t.device == tensorplug.device("cpu") and t._ks == plugin_api.key_set("cpu")
    assert (t + 1).tolist() == [2.0, 2.0, 2.0]


def test_written_arguments_reads_the_schema():
    assert plugin_api.written_arguments(plugin_api.lookup_op("tensorplug::add_.Tensor")) == (0,)
    assert plugin_api.written_arguments(plugin_api.lookup_op("tensorplug::add.Tensor")) == ()


@pytest.mark.parametrize("wanted, ok", [((1, 0), True), ((1, 99), False), ((2, 0), False), ((0, 9), False),
                                        ("1.0", False)])
def test_check_api_version(wanted, ok):
    if ok:
        plugin_api.check_api_version(wanted, "p")
    else:
        with pytest.raises(ImportError):
            plugin_api.check_api_version(wanted, "p")


def test_plugin_for_another_api_version_is_failed_and_import_still_works():
    code = textwrap.dedent("""
        import sys, types, warnings
        import tensorplug
        mod = types.ModuleType("futureplug")
        mod.TENSORPLUG_API = (2, 0)
        info = tensorplug.plugins.register(mod, "futureplug", enable_now=False)
        try:
            tensorplug.plugins.enable("futureplug")
        except ImportError as e:
            print("raised", e)
        print(info.state, "|", info.error)
        print((tensorplug.ones(2) + 1).tolist())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "raised" in out and "failed | ImportError" in out and "needs tensorplug plugin API 2.0" in out
    assert "[2.0, 2.0]" in out


def test_the_plugins_in_this_repository_declare_the_api_and_a_bounded_core():
    import re
    major, minor = (int(x) for x in tensorplug.__version__.split(".")[:2])
    for pyproject in [ROOT / "plugins" / d / "pyproject.toml" for d in ("cpu", "profiler", "vmap", "autocast",
                                                                          "privateuse1_example")] + \
            [ROOT / "examples" / "minimal_backend" / "pyproject.toml"]:
        deps = re.findall(r'"([^"]+)"', re.search(r"^dependencies = \[(.*)\]", pyproject.read_text(), re.M).group(1))
        core = [d for d in deps if d.split(">")[0].split("<")[0].split("=")[0].strip() == "tensorplug"]
        assert core == [f"tensorplug>={major}.{minor},<{major}.{minor + 1}"], pyproject
    for name in ("cpu", "profiler", "vmap", "openreg", "minimal", "autocast"):
        major, minor = tensorplug.plugins.get(name).obj.TENSORPLUG_API
        # written for this API or an earlier minor of it (a minor release only adds names)
        assert major == plugin_api.API_VERSION[0] and minor <= plugin_api.API_VERSION[1], name
        plugin_api.check_api_version((major, minor))
    assert tensorplug.plugins.get("autocast").obj.TENSORPLUG_API == (1, 1)  # it uses set_thread_keys


def test_normalize_device_validates_the_ordinal_and_fills_the_index_in():
    tp = tensorplug
    assert plugin_api.normalize_device("cpu:3") == tp.device("cpu")  # one CPU, any index, as in PyTorch
    assert plugin_api.normalize_device(tp.device("minimal")) == tp.device("minimal:0")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        plugin_api.normalize_device("minimal:4")
