"""The training demo (what `make demo` runs): it learns the digits, saves and reloads."""

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("tqdm")

from tensorplug import demo  # noqa: E402


def test_mlp_reaches_95_percent_and_its_checkpoint_reloads(tmp_path, capsys):
    path = str(tmp_path / "digits.safetensors")
    acc = demo.train(demo.parser().parse_args(["--epochs", "20", "--save", path]))
    assert acc >= 0.95
    out = capsys.readouterr().out
    assert "epoch 20:" in out and "test accuracy" in out and f"saved the weights to {path}" in out
    assert demo.train(demo.parser().parse_args(["--load", path])) == acc


def test_cnn_trains(capsys):
    acc = demo.train(demo.parser().parse_args(["--model", "cnn", "--epochs", "3"]))
    assert acc > 0.8


def test_tour_shows_plugins_and_a_dispatch_table(capsys):
    assert demo.main(["--tour"]) == 0
    out = capsys.readouterr().out
    assert "cpu" in out and "enabled" in out and "CPU" in out and "kernel" in out
    assert "int32 tensor + 2.5     -> tensorplug.float32" in out


def test_profile_flag_prints_top_ops_and_writes_a_trace(tmp_path, capsys):
    import json
    import tensorplug as tp
    trace = tmp_path / "trace.json"
    if not tp.plugins.is_enabled("profiler"):
        with pytest.raises(SystemExit, match="tensorplug-profiler"):
            demo.main(["--epochs", "1", "--profile", str(trace)])
        return
    assert demo.main(["--epochs", "1", "--profile", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "Self CPU" in out and "# of Calls" in out and f"wrote a Chrome trace to {trace}" in out
    assert json.loads(trace.read_text())["traceEvents"]


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_compile_flag_trains_to_the_same_accuracy_and_reports_step_times(model, capsys):
    import tensorplug as tp
    args = ["--model", model, "--epochs", "2"]
    if not tp.plugins.is_enabled("compile"):
        with pytest.raises(SystemExit, match="tensorplug-compile"):
            demo.main(args + ["--compile"])
        return
    eager = demo.train(demo.parser().parse_args(args))
    eager_out = capsys.readouterr().out
    compiled = demo.train(demo.parser().parse_args(args + ["--compile"]))
    out = capsys.readouterr().out
    assert compiled == eager  # the same kernels in the same order: the same model, bit for bit
    assert [ln for ln in out.splitlines() if ln.startswith("epoch")] == \
        [ln for ln in eager_out.splitlines() if ln.startswith("epoch")]
    line = next(ln for ln in out.splitlines() if ln.startswith("step time"))
    assert "compiled" in line and "eager" in line


def test_ddp_flag_trains_on_two_processes_and_only_rank_0_prints():
    import subprocess
    import sys
    import tensorplug.distributed as dist
    if not dist.is_available():
        with pytest.raises(SystemExit, match="tensorplug-distributed"):
            demo.main(["--ddp", "2", "--epochs", "1"])
        return
    p = subprocess.run([sys.executable, "-m", "tensorplug", "demo", "--ddp", "2", "--epochs", "6"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert sum(ln.startswith("training a MLP") for ln in lines) == 1          # rank 0 only
    assert any(ln.startswith("data parallel: 2 processes") for ln in lines)
    epochs = [ln for ln in lines if ln.startswith("epoch")]
    assert len(epochs) == 6 and all("(per rank: " in ln for ln in epochs)
    final = float(lines[-1].rsplit(" ", 1)[1].rstrip("%"))
    assert final > 85.0, lines[-1]   # 6 epochs of 23 steps at batch 2x32 learn the digits
