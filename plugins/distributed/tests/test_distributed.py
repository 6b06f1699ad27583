"""tensorplug-distributed: the multi-process checks (each a script under tests/scripts run by mpiexec)
and the parts that need no process group. Without mpi4py or mpiexec the MPI tests skip, naming the extra."""

import os
import pathlib
import subprocess
import sys
import time

import pytest

import tensorplug as tp
import tensorplug.distributed as dist
import tensorplug_distributed
from tensorplug_distributed import _mpi, run

SCRIPTS = pathlib.Path(__file__).with_name("scripts")
WHY = _mpi.missing()
needs_mpi = pytest.mark.skipif(WHY is not None, reason=f"needs MPI: {WHY}")


def mpiexec(n, script, *args, timeout=120):
    """Run ``script`` on ``n`` processes; (exit status, stdout + stderr, seconds)."""
    cmd = run.command(n, str(SCRIPTS / script), [str(a) for a in args])
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    env["OPENBLAS_NUM_THREADS"] = "1"
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout + p.stderr, time.monotonic() - start


@needs_mpi
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("script", ["collectives", "alltoall", "ddp_hooks"])  # alltoall: P2P, objects too
def test_collectives_match_numpy(script, n):
    rc, out, _ = mpiexec(n, f"{script}.py")
    assert rc == 0, out
    assert f"{script} ok:" in out and f"on {n} ranks" in out


def test_backend_queries_as_pytorchs(monkeypatch):
    assert dist.is_backend_available("mpi") == dist.is_mpi_available()
    assert dist.is_backend_available("gloo") is False and dist.is_backend_available("nope") is False
    assert dist.get_default_backend_for_device("cpu") == "mpi"
    assert dist.get_default_backend_for_device(tp.device("cuda", 0)) == "nccl"
    with pytest.raises(ValueError, match="Default backend not registered for device : meta"):
        dist.get_default_backend_for_device("meta")
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert dist.get_node_local_rank() == 3
    monkeypatch.delenv("LOCAL_RANK")
    assert dist.get_node_local_rank(fallback_rank=1) == 1
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()


def test_debug_levels_error_classes_and_op_queries_as_pytorchs(monkeypatch):
    from tensorplug_distributed import group
    monkeypatch.setattr(group, "_DEBUG", [None])
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "detail")
    assert dist.get_debug_level() is dist.DebugLevel.DETAIL
    dist.set_debug_level(dist.DebugLevel.INFO)
    assert dist.get_debug_level() == 1
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "LOUD")
    with pytest.raises(ValueError, match="must be OFF, INFO, or DETAIL"):
        dist.set_debug_level_from_env()
    assert dist.supports_complex(dist.ReduceOp.SUM) and not dist.supports_complex(dist.ReduceOp.MAX)
    for cls in (dist.DistBackendError, dist.DistNetworkError, dist.DistStoreError, dist.QueueEmptyError):
        assert issubclass(cls, dist.DistError) and issubclass(cls, RuntimeError)
    assert dist.is_ucc_available() is False and dist.is_xccl_available() is False


@needs_mpi
def test_collectives_without_mpiexec():
    """A plain ``python script.py`` is a one-process MPI job (MPI's singleton start)."""
    p = subprocess.run([sys.executable, str(SCRIPTS / "collectives.py")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "on 1 ranks" in p.stdout


@needs_mpi
def test_api_errors_and_work_handles():
    p = subprocess.run([sys.executable, str(SCRIPTS / "api_single.py")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "api ok:" in p.stdout


@needs_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_ddp_matches_single_process_training(n):
    rc, out, _ = mpiexec(n, "ddp_equivalence.py")
    assert rc == 0, out
    assert f"ddp ok on {n} ranks" in out


@needs_mpi
def test_cuda_tensors_dispatch_to_the_cuda_kernels_on_simulated_devices(monkeypatch):
    pytest.importorskip("tensorplug_cuda", reason="needs tensorplug-cuda")
    monkeypatch.setenv("TENSORPLUG_CUDA_SIMULATE", "1")
    rc, out, _ = mpiexec(2, "cuda_collectives.py")
    assert rc == 0, out
    assert "cuda collectives ok on 2 ranks" in out


@needs_mpi
def test_detail_debug_mode_reports_a_dtype_mismatch_across_ranks(monkeypatch):
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "DETAIL")
    rc, out, _ = mpiexec(2, "mismatch.py")
    assert rc == 0, out
    assert out.count("caught: Detected mismatch between collectives on ranks") == 2


@needs_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_join_trains_on_uneven_inputs(n):
    rc, out, _ = mpiexec(n, "uneven.py", timeout=120)
    assert rc == 0, out
    assert f"join ok on {n} ranks" in out


@needs_mpi
def test_a_rank_that_raises_ends_the_job():
    rc, out, took = mpiexec(2, "failures.py", "raise", timeout=60)
    assert rc != 0
    assert "ValueError: rank 1 failed on purpose" in out
    assert "[Rank 1] uncaught ValueError: aborting the job" in out
    assert took < 30


@needs_mpi
def test_a_late_rank_trips_the_watchdog():
    rc, out, took = mpiexec(2, "failures.py", "late", timeout=60)
    assert rc != 0
    assert "[Rank 0] Watchdog caught collective operation timeout: all_reduce (SeqNum=1" in out
    assert "not reached" not in out
    assert took < 30


@needs_mpi
def test_async_wait_raises_past_the_timeout():
    rc, out, took = mpiexec(2, "failures.py", "async", timeout=60)
    assert "caught: [Rank 0] all_reduce (SeqNum=1, group ranks [0, 1]) did not finish within 1000 ms" in out
    assert "exiting while all_reduce (SeqNum=1) has not finished" in out
    assert rc != 0 and took < 30


@needs_mpi
@pytest.mark.parametrize("wait_all", [False, True])
def test_monitored_barrier_names_the_late_ranks(wait_all):
    rc, out, took = mpiexec(3, "failures.py", "monitored", *(["all"] if wait_all else []), timeout=60)
    assert rc == 0, out
    named = "Ranks 1, 2 failed" if wait_all else "Rank 1 failed"
    assert f"rank 0 caught: [Rank 0]: {named} to pass monitoredBarrier in 300 ms" in out
    assert "rank 1 caught: [Rank 1]: rank 0 did not release monitoredBarrier within 300 ms" in out
    assert took < 30


@needs_mpi
def test_launcher_sets_torchrun_variables(tmp_path):
    script = tmp_path / "show.py"
    script.write_text("import os, sys\n"
                      "print('R', os.environ['RANK'], os.environ['WORLD_SIZE'], os.environ['LOCAL_RANK'], "
                      "os.environ['MASTER_ADDR'], sys.argv[1:], __name__)\n")
    p = subprocess.run([sys.executable, "-m", "tensorplug", "run", "-n", "2", str(script), "--lr", "0.1"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = sorted(line for line in p.stdout.splitlines() if line.startswith("R "))
    assert lines == ["R 0 2 0 127.0.0.1 ['--lr', '0.1'] __main__", "R 1 2 1 127.0.0.1 ['--lr', '0.1'] __main__"]


@needs_mpi
def test_launcher_passes_on_a_failing_exit_status(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import sys\nsys.exit(7)\n")
    p = subprocess.run([sys.executable, "-m", "tensorplug", "run", "-n", "2", str(script)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode != 0


def test_launcher_dry_run_names_mpiexec(capsys):
    if _mpi.mpiexec_path() is None:
        assert run.main(["-n", "2", "x.py"]) == 1
        assert "needs mpiexec" in capsys.readouterr().err
        return
    assert run.main(["--dry-run", "-n", "3", "train.py", "--epochs", "2"]) == 0
    line = capsys.readouterr().out.split()
    assert line[0] == _mpi.mpiexec_path() and line[1:3] == ["-n", "3"]
    assert line[-5:] == ["tensorplug_distributed.worker", "train.py", "--epochs", "2"][-5:] or "train.py" in line


def test_is_available_follows_mpi4py_and_mpiexec(monkeypatch):
    assert dist.is_available() == (WHY is None)
    monkeypatch.setattr(_mpi, "has_mpi4py", lambda: False)
    assert dist.is_available() is False
    with pytest.raises(RuntimeError, match=r"mpi4py is not installed \(pip install 'tensorplug-distributed\[mpi\]'"):
        dist.init_process_group("mpi")


def test_before_init_collectives_raise_pytorchs_error():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(tp.ones(2))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        tp.nn.parallel.DistributedDataParallel(tp.nn.Linear(2, 2))


def test_names_come_from_the_plugin_and_go_with_it():
    assert dist.all_reduce is tensorplug_distributed.api.all_reduce
    assert dist.ReduceOp.AVG.name == "AVG"
    assert issubclass(dist.DistributedDataParallel, tp.nn.parallel.DistributedDataParallel)
    tp.plugins.disable("distributed")
    try:
        assert dist.is_available() is False
        with pytest.raises(AttributeError, match="provided by the plugin 'distributed'"):
            dist.all_reduce
        with pytest.raises(RuntimeError, match="no distributed plugin"):
            dist.init_process_group()
    finally:
        tp.plugins.enable("distributed")
    assert dist.all_reduce is tensorplug_distributed.api.all_reduce


def test_collective_operators_are_registered_per_backend():
    from tensorplug import plugin_api
    op = plugin_api.lookup_op("c10d::allreduce_")
    assert plugin_api.written_arguments(op) == (0,) or list(plugin_api.written_arguments(op)) == [0]
    assert op.provenance(plugin_api.key_set("cpu")) == "kernel"
