"""The minimal example backend: installed, with memory of its own, and conformant through its fallback."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tensorplug as tp
import tensorplug_minimal
from tensorplug.testing import run_conformance

NATIVE = {"add", "mul", "neg", "sum", "t"}  # "t" is a view over the native as_strided
FALLBACK = {"exp", "matmul"}
pytestmark = pytest.mark.filterwarnings("ignore:.*falling back to the CPU:UserWarning")


def test_plugin_is_installed_and_enabled():
    info = tp.plugins.get("minimal")
    assert (info.name, info.dist, info.state) == ("minimal", "tensorplug-minimal", "enabled")
    assert tp.plugins.is_enabled("minimal") and "minimal" in info.backends


@pytest.mark.parametrize("values, dtype", [([[1.5, -2.0], [3.0, 4.25]], tp.float32), ([1, 2, 300], tp.int64),
                                           ([True, False], tp.bool), ([0.5, 1.0], tp.bfloat16)])
def test_data_lives_in_device_memory_and_round_trips(values, dtype):
    host = tp.tensor(values, dtype=dtype)
    x = host.to("minimal")
    assert x.device == tp.device("minimal", 0) and x.dtype is dtype
    assert isinstance(x._data, tensorplug_minimal.Array) and type(x._data.root) is bytearray
    host.fill_(0)  # the device copy does not share the host's memory
    assert x.cpu().tolist() == tp.tensor(values, dtype=dtype).tolist()
    assert x._host() is not x._host()  # reading values back copies them out each time
    with pytest.raises(TypeError, match="can't convert minimal:0 device type tensor to numpy"):
        x.numpy()


def test_views_share_device_storage():
    x = tp.arange(6, device="minimal").reshape(2, 3)
    v = x.t()
    assert v.untyped_storage().root is x.untyped_storage().root and v.stride() == (1, 3)
    v.add_(tp.ones(3, 2, dtype=tp.int64, device="minimal"))
    assert x.tolist() == [[1, 2, 3], [4, 5, 6]] and x._version == 1


def test_native_kernels_and_fallback(monkeypatch):
    monkeypatch.setattr(tensorplug_minimal, "_warned", set())
    x = tp.tensor([[1.0, 2.0], [3.0, 4.0]], device="minimal")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = (x + x * 2).sum(0)  # native kernels: no warning
    assert y.device.type == "minimal" and y.tolist() == [12.0, 18.0]
    with pytest.warns(UserWarning, match="tensorplug::exp is not implemented natively for 'minimal'; "
                                         "falling back to the CPU") as rec:
        e = x.exp()
        x.exp()  # warns once per op
    assert len(rec) == 1 and e.device.type == "minimal"
    np.testing.assert_allclose(e.tolist(), np.exp([[1.0, 2.0], [3.0, 4.0]]), rtol=1e-6)
    v, i = x.sort(1, descending=True)  # a tuple of results comes back to the device
    assert (v.device.type, i.device.type, i.tolist()) == ("minimal", "minimal", [[1, 0], [1, 0]])
    before = x._data
    assert x.clamp_(max=2.5) is x and x._data is before  # in place through the fallback
    assert x.tolist() == [[1.0, 2.0], [2.5, 2.5]]


def test_autograd_on_the_device():
    x = tp.tensor([1.0, -2.0, 3.0], device="minimal", requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.device.type == "minimal" and x.grad.tolist() == [2.0, -4.0, 6.0]


def test_conformance_native_ops_pass_and_the_rest_are_fallback():
    report = run_conformance("minimal", ops=",".join(sorted(NATIVE | FALLBACK)),
                             dtypes=[tp.float32, tp.float64, tp.int64])
    by_status = {}
    for case, outcome in report.results:
        by_status.setdefault(outcome.status, set()).add(case.opinfo.name)
    assert report.ok and "failed" not in by_status
    assert by_status["passed"] >= NATIVE and by_status["fallback"] == FALLBACK
    assert not by_status["fallback"] & NATIVE


def test_conformance_command_line():
    proc = subprocess.run([sys.executable, "-m", "tensorplug", "conformance", "minimal", "--ops", "add,exp,t",
                           "--dtypes", "float32", "int64", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    ops = {o["op"]: o for o in data["ops"]}
    assert data["summary"]["failed"] == 0 and data["summary"]["passed"] > 0
    assert ops["exp"]["fallback_ops"] == ["exp", "exp_"] and ops["exp"]["passed"] == []
    assert ops["add"]["fallback_ops"] == [] and ops["add"]["failed"] == {}


def test_the_fallback_copies_back_only_written_arguments_so_aliased_reads_do_not_undo_the_write():
    """``x.sub_(x)`` runs through the CPU fallback with two host copies of ``x``: only the written one comes back."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = tp.tensor([1.0, 2.0, 3.0], device="minimal")
        x.sub_(x)
        assert x.tolist() == [0.0, 0.0, 0.0]
        y = tp.tensor([[1.0, 2.0], [3.0, 4.0]], device="minimal")
        y.div_(y.view(2, 2))  # a view of the same memory, same layout: full overlap, allowed
        assert y.tolist() == [[1.0, 1.0], [1.0, 1.0]]
