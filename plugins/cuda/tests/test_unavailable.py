"""Without cupy or a GPU (and without the simulation) the plugin loads, answers "no CUDA" and says why."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import types

import pytest

import tensorplug as tp
from tensorplug_cuda import driver as drv

from tensorplug_cuda.testing import REASON

pytestmark = pytest.mark.skipif(REASON is None, reason="a cuda device is usable here (GPU or simulation): "
                                "these tests check the behaviour without one")


def test_availability_answers_no_without_raising():
    assert tp.cuda.is_available() is False
    assert tp.cuda.device_count() == 0
    assert tp.cuda.memory_allocated() == 0 and tp.cuda.max_memory_allocated() == 0
    assert tp.cuda.is_initialized() is False


def test_every_first_use_raises_the_same_error_naming_the_cause():
    messages = []
    for use in (lambda: tp.zeros(2, device="cuda"), lambda: tp.ones(2).cuda(),
                lambda: tp.nn.Linear(2, 2).to("cuda"), lambda: tp.tensor([1.0], device="cuda:0")):
        with pytest.raises(tp.cuda.CudaUnavailableError) as info:
            use()
        messages.append(str(info.value))
    assert len(set(messages)) == 1
    msg = messages[0]
    assert msg.startswith("CUDA is not available: ")
    if importlib.util.find_spec("cupy") is None:
        assert "cupy is not installed" in msg and "tensorplug-cuda[cuda12]" in msg and "[cuda13]" in msg
    else:
        assert "no usable CUDA GPU or driver" in msg


def test_the_error_is_a_runtime_error_as_pytorch_raises():
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        tp.empty(3, device="cuda")


def test_the_demo_exits_with_the_same_message(capsys):
    from tensorplug import demo
    with pytest.raises(SystemExit) as info:
        demo.main(["--device", "cuda"])
    assert "CUDA is not available" in str(info.value)


def test_no_gpu_reason_carries_cupys_own_message(monkeypatch):
    class CUDARuntimeError(RuntimeError):
        pass

    def no_driver():
        raise CUDARuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA "
                               "runtime version")
    fake = types.ModuleType("cupy")
    fake.is_available = lambda: False
    fake.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=no_driver))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.delenv(drv.SIMULATE_ENV, raising=False)
    d, why = drv._probe()
    assert d is None
    assert why.startswith("no usable CUDA GPU or driver: CUDARuntimeError: cudaErrorInsufficientDriver")


def test_missing_cupy_reason_names_the_extras(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    monkeypatch.delenv(drv.SIMULATE_ENV, raising=False)
    d, why = drv._probe()
    assert d is None and "cupy is not installed" in why and "pip install 'tensorplug-cuda[cuda12]'" in why


def test_a_bad_simulation_setting_is_an_error(monkeypatch):
    monkeypatch.setenv(drv.SIMULATE_ENV, "yes")
    with pytest.raises(RuntimeError, match="TENSORPLUG_CUDA_SIMULATE must be a number of simulated devices"):
        drv.simulated_device_count()
    monkeypatch.setenv(drv.SIMULATE_ENV, "0")
    assert drv.simulated_device_count() == 0


def test_loading_the_plugin_touches_neither_cupy_nor_the_device():
    code = ("import sys, tensorplug\n"
            "assert tensorplug.plugins.is_enabled('cuda')\n"
            "print('cupy' in sys.modules, 'tensorplug_cuda._lib' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != drv.SIMULATE_ENV}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def test_the_conformance_command_says_why_and_fails():
    env = {k: v for k, v in os.environ.items() if k != drv.SIMULATE_ENV}
    out = subprocess.run([sys.executable, "-m", "tensorplug", "conformance", "cuda", "--ops", "add"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 1
    assert "tensorplug conformance: cuda: the backend 'cuda' has no usable device: CUDA is not available" \
        in out.stderr
