"""Robustness: disabled backends, plugins imported before the core, device indices."""

import json
import pathlib
import pickle
import re
import subprocess
import sys

import pytest

import tensorplug as tp

ROOT = pathlib.Path(__file__).resolve().parents[1]
CORE = ROOT / "core" / "tensorplug"
BACKEND_ERROR = (r"no backend is registered for device type 'cpu': .*installed but disabled; "
                 r"enable it with tensorplug.plugins.enable\('cpu'\)")


def test_the_core_looks_backends_up_by_name_in_one_helper_only():
    """``BACKENDS[...]`` appears only in backend.py (the helper) and plugins.py (registration)."""
    found = []
    for src in CORE.rglob("*.py"):
        if src.name in ("backend.py", "plugins.py"):
            continue
        for i, line in enumerate(src.read_text().splitlines(), 1):
            if "BACKENDS[" in line:
                found.append(f"{src.relative_to(ROOT)}:{i}: {line.strip()}")
    assert found == []


CALLS = {
    "x + 1": lambda x: x + 1, "repr": repr, "str": str, "tolist": lambda x: x.tolist(),
    "stride": lambda x: x.stride(), "view": lambda x: x.view(4), "item": lambda x: x[0, 0].item(),
    "numpy": lambda x: x.numpy(), "storage_offset": lambda x: x.storage_offset(),
    "data_ptr": lambda x: x.data_ptr(), "is_contiguous": lambda x: x.is_contiguous(),
    "pickle": pickle.dumps, "x + x": lambda x: x + x, "sum": lambda x: x.sum(),
}


def test_existing_tensors_of_a_disabled_backend_raise_the_backend_error():
    """After disable("cpu"), old cpu tensors fail like new ones, never with a KeyError."""
    x = tp.ones(2, 2)
    v = x[0]
    tp.plugins.disable("cpu")
    try:
        with pytest.raises(RuntimeError, match=BACKEND_ERROR):
            tp.zeros(2)
        for name, call in CALLS.items():
            with pytest.raises(RuntimeError, match=BACKEND_ERROR):
                call(x)
        with pytest.raises(RuntimeError, match=BACKEND_ERROR):
            v.add_(1)
    finally:
        tp.plugins.enable("cpu")
    assert (x + x).tolist() == [[2.0, 2.0], [2.0, 2.0]]


def run_python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("first, use, plugin", [
    ("tensorplug_cpu", "print((tensorplug.ones(2) + 1).tolist())", "cpu"),
    ("tensorplug_minimal", "print(tensorplug.ones(2, device='minimal').device.type)", "minimal"),
])
def test_a_plugin_imported_before_tensorplug_ends_up_registered(first, use, plugin):
    """``import tensorplug_cpu`` before ``import tensorplug``: the plugin completes when first needed."""
    code = (f"import {first}\nimport tensorplug\n{use}\n"
            "import io, contextlib, json\nfrom tensorplug import cli\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            "    cli.main(['plugins', '--json'])\n"
            "print(buf.getvalue())\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    first_line, rest = r.stdout.split("\n", 1)
    assert first_line == ("[2.0, 2.0]" if plugin == "cpu" else "minimal")
    listing = {p["name"]: p for p in json.loads(rest)}
    assert listing[plugin]["state"] == "enabled"
    assert listing[plugin]["backends"] == [plugin] and listing[plugin]["kernels"] > 0
    assert "cpu" in listing and listing["cpu"]["state"] == "enabled"


# -- device indices ------------------------------------------------------------------
def test_an_out_of_range_device_index_is_rejected_before_any_kernel():
    """``minimal:7`` (one minimal device) and ``openreg:<count>`` raise PyTorch's invalid device ordinal."""
    from tensorplug.backend import backend_for
    for typ in ("minimal", "openreg"):
        count = backend_for(typ).device_count()
        bad = f"{typ}:{count}"
        for call in (lambda: tp.ones(2, device=bad), lambda: tp.zeros(2).to(bad),
                     lambda: tp.zeros(2).to(device=tp.device(bad)), lambda: tp.Generator(device=bad),
                     lambda: tp.ops.tensorplug._to_copy(tp.zeros(2), device=bad),
                     lambda: tp.tensor([1.0], device=bad)):
            with pytest.raises(RuntimeError, match=rf"invalid device ordinal.*{bad}.*device_count\(\) is {count}"):
                call()


def test_a_valid_device_index_is_honoured():
    """The tensor's device index is the one requested; ``cpu:1`` is ``cpu``, as in PyTorch."""
    assert tp.ones(2, device="openreg:1").device == tp.device("openreg", 1)
    assert tp.zeros(2).to("openreg:1").device.index == 1
    assert tp.ones(2, device="minimal:0").device == tp.device("minimal", 0)
    assert tp.ones(2, device="minimal").device == tp.device("minimal", 0)
    assert tp.ones(2, device="cpu:1").device == tp.device("cpu")
    assert tp.zeros(2).to("cpu:3").device == tp.device("cpu")
    assert tp.Generator(device="cpu:2").device == tp.device("cpu")


@pytest.mark.parametrize("backend", ["cpu", "minimal", "openreg"])
def test_the_conformance_kit_checks_device_indices(backend, monkeypatch):
    """The kit's device_index check passes on every backend and fails on one that ignores the index."""
    from tensorplug.testing import suite
    from tensorplug.backend import backend_for
    suite.check_device_index(backend, None, None)
    if backend != "cpu":
        b = backend_for(backend)
        monkeypatch.setattr(type(b), "device_count", lambda self: 99)  # claims devices it cannot give
        tp.dispatch.dispatcher.invalidate_caches()
        try:
            with pytest.raises(AssertionError):
                suite.check_device_index(backend, None, None)
        finally:
            monkeypatch.undo()
            tp.dispatch.dispatcher.invalidate_caches()


# -- in-place ops on aliasing arguments -------------------------------------------------------------
OVERLAP = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single"


@pytest.mark.parametrize("device", ["cpu", "minimal", "openreg"])
def test_in_place_ops_on_aliasing_arguments(device):
    """Full aliasing computes as PyTorch does; a partial overlap raises PyTorch's RuntimeError on every backend."""
    import warnings
    warnings.simplefilter("ignore")
    x = tp.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    assert x.add_(x).tolist() == [[2.0, 4.0], [6.0, 8.0]]
    assert x.mul_(x).tolist() == [[4.0, 16.0], [36.0, 64.0]]
    assert x.add_(x.view(2, 2)).tolist() == [[8.0, 32.0], [72.0, 128.0]]   # a view, same layout
    v = x.view(-1)
    for call in (lambda: x.sub_(x.t()), lambda: v[1:].copy_(v[:-1]), lambda: x.mul_(x[0])):
        with pytest.raises(RuntimeError, match=re.escape(OVERLAP)):
            call()
    assert x.tolist() == [[8.0, 32.0], [72.0, 128.0]]   # nothing was written
    w = tp.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    w[::2].add_(w[1::2])   # interleaved, no common element: allowed, as in PyTorch
    assert w.tolist() == [3.0, 2.0, 7.0, 4.0]


@pytest.mark.parametrize("backend", ["cpu", "minimal", "openreg"])
def test_the_conformance_kit_runs_the_aliasing_samples(backend):
    """The op database's aliasing entries run (forward and error inputs) on every backend and pass."""
    from tensorplug.testing import run_conformance
    report = run_conformance(backend, ops="*.aliased")
    ran = {(c.opinfo.name, c.check.name) for c, o in report.results if o.status in ("passed", "fallback")}
    for name in ("mul_.aliased", "sub_.aliased", "copy_.aliased"):
        assert (name, "error_inputs") in ran and (name, "forward") in ran
    assert ("add_.aliased", "forward") in ran
    assert report.ok
