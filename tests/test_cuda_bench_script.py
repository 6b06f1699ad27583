"""benchmarks/cuda.py and plugins/cuda/device_check.sh: they degrade cleanly without a GPU."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "cuda.py"
CHECK = ROOT / "plugins" / "cuda" / "device_check.sh"


def _env_without_cuda():
    env = {k: v for k, v in os.environ.items() if k != "TENSORPLUG_CUDA_SIMULATE"}
    disabled = [n for n in env.get("TENSORPLUG_DISABLE_PLUGINS", "").split(",") if n]
    env["TENSORPLUG_DISABLE_PLUGINS"] = ",".join(disabled + ["cuda"])  # a cuda plugin, if installed, is off
    return env


def _cuda_served(env):
    code = "import tensorplug; print(tensorplug.cuda.is_available())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def _load_bench():
    spec = importlib.util.spec_from_file_location("tensorplug_bench_cuda", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_exits_0_with_the_reason_when_no_backend_serves_cuda(tmp_path):
    env = _env_without_cuda()
    if _cuda_served(env):
        pytest.skip("a backend other than the cuda plugin serves 'cuda' here")
    out_json = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, str(BENCH), "--json", str(out_json)], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "no CUDA device for tensorplug" in r.stdout
    assert "no backend is registered for device type 'cuda'" in r.stdout  # the text of the zeros() error
    assert "Traceback" not in r.stderr
    data = json.loads(out_json.read_text())
    assert data["available"] is False and "cuda" in data["reason"]


def test_bench_quick_runs_its_cases_on_a_stand_in_device(monkeypatch, capsys, tmp_path):
    """The measuring code of ``--quick``, run on the CPU backend with the cuda runtime calls stubbed."""
    import tensorplug as tp
    bench = _load_bench()
    assert bench.CONFIGS["quick"]["mm"] == 256 and bench.CONFIGS["quick"]["add"] == 10 ** 5
    monkeypatch.setattr(bench, "DEVICE", "cpu")
    monkeypatch.setattr(bench, "cuda_unavailable_reason", lambda: None)
    monkeypatch.setenv("TENSORPLUG_CUDA_SIMULATE", "1")
    for name in ("synchronize", "reset_peak_memory_stats", "empty_cache"):
        monkeypatch.setattr(tp.cuda, name, lambda *a, **k: None, raising=False)
    monkeypatch.setattr(tp.cuda, "max_memory_allocated", lambda *a, **k: 2 ** 20, raising=False)
    monkeypatch.setattr(tp.cuda, "device_count", lambda: 1, raising=False)
    out_json = tmp_path / "quick.json"
    assert bench.main(["--quick", "--json", str(out_json)]) == 0
    text = capsys.readouterr().out
    assert "NOT GPU figures" in text
    assert "cupy: n/a (simulated mode" in text and "torch: n/a (simulated mode" in text
    data = json.loads(out_json.read_text())
    assert data["simulated"] is True and len(data["cases"]) == 6
    for case in data["cases"]:
        assert case["values"]["tensorplug"] > 0, case
        assert case["ratio_cupy"] is None and case["ratio_torch"] is None and case["meets_target"] is None


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_device_check_script_parses():
    r = subprocess.run(["bash", "-n", str(CHECK)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert os.access(CHECK, os.X_OK)
