"""``tensorplug.cuda``'s runtime on a device: memory statistics, out-of-memory, seeds, streams, events."""

from __future__ import annotations

import pytest

import tensorplug as tp

from tensorplug_cuda.testing import needs_cuda, needs_simulation, needs_two

pytestmark = needs_cuda


# -- memory ----------------------------------------------------------------------------------------
def test_memory_allocated_follows_tensors_and_the_peak_stays():
    tp.cuda.synchronize()
    base = tp.cuda.memory_allocated()
    tp.cuda.reset_peak_memory_stats()
    assert tp.cuda.max_memory_allocated() == base
    x = tp.empty(1 << 18, device="cuda")  # 1 MiB
    held = tp.cuda.memory_allocated()
    assert held - base >= x.numel() * 4
    del x
    assert tp.cuda.memory_allocated() == base
    assert tp.cuda.max_memory_allocated() >= held
    tp.cuda.reset_peak_memory_stats()
    assert tp.cuda.max_memory_allocated() == base
    assert tp.cuda.memory_reserved() >= tp.cuda.memory_allocated()
    assert tp.cuda.max_memory_reserved() >= tp.cuda.memory_reserved()
    stats = tp.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == tp.cuda.memory_allocated()


def test_results_of_ops_are_counted_too():
    x = tp.ones(1000, device="cuda")
    before = tp.cuda.memory_allocated()
    y = x * 2 + 1
    assert tp.cuda.memory_allocated() - before >= 4000
    del y


def test_empty_cache_mem_get_info_and_the_summary():
    tp.cuda.empty_cache()
    free, total = tp.cuda.mem_get_info()
    assert 0 < free <= total
    text = tp.cuda.memory_summary()
    assert "Allocated memory" in text and "Reserved memory" in text


@needs_simulation
def test_out_of_memory_raises_with_the_sizes_and_the_process_keeps_working(monkeypatch):
    d = tp.plugin_api.backend("cuda").drv
    monkeypatch.setattr(d, "capacity", d.counter.current[0] + (8 << 20))
    with pytest.raises(tp.cuda.OutOfMemoryError, match=r"CUDA out of memory\. Tried to allocate 16\.00 MiB\. "
                                                       r"GPU 0 has a total capacity of"):
        tp.empty(4 << 20, device="cuda")
    with pytest.raises(RuntimeError):  # OutOfMemoryError is a RuntimeError, as in PyTorch
        tp.ones(4 << 20, device="cuda") * 2
    assert tp.ones(10, device="cuda").sum().item() == 10.0


# -- random numbers --------------------------------------------------------------------------------
def test_manual_seed_makes_device_draws_reproducible():
    tp.manual_seed(7)
    a = tp.randn(5, device="cuda")
    d1 = tp.nn.functional.dropout(tp.ones(100, device="cuda"), 0.5)
    tp.manual_seed(7)
    b = tp.randn(5, device="cuda")
    d2 = tp.nn.functional.dropout(tp.ones(100, device="cuda"), 0.5)
    assert a.device.type == "cuda" and a.cpu().tolist() == b.cpu().tolist()
    assert d1.cpu().tolist() == d2.cpu().tolist()
    assert 20 < int((d1 == 0).sum().item()) < 80


def test_cuda_manual_seed_and_rng_state():
    tp.cuda.manual_seed(3)
    assert tp.cuda.initial_seed() == 3
    state = tp.cuda.get_rng_state()
    a = tp.rand(4, device="cuda")
    tp.cuda.set_rng_state(state)
    b = tp.rand(4, device="cuda")
    assert a.cpu().tolist() == b.cpu().tolist()
    tp.cuda.manual_seed_all(11)
    c = tp.rand(4, device="cuda")
    tp.cuda.manual_seed_all(11)
    assert tp.rand(4, device="cuda").cpu().tolist() == c.cpu().tolist()


def test_init_on_the_device():
    tp.manual_seed(0)
    lin = tp.nn.Linear(8, 4).to("cuda")
    tp.nn.init.kaiming_uniform_(lin.weight)
    tp.nn.init.zeros_(lin.bias)
    assert lin.weight.device.type == "cuda" and float(lin.weight.abs().max().item()) > 0
    assert lin.bias.cpu().tolist() == [0.0] * 4


@needs_two
def test_each_device_has_its_own_generator():
    tp.cuda.manual_seed_all(5)
    a0 = tp.rand(3, device="cuda:0")
    with tp.cuda.device(1):
        tp.cuda.manual_seed(99)  # only device 1's generator
    tp.cuda.manual_seed_all(5)
    with tp.cuda.device(1):
        tp.cuda.manual_seed(99)
    assert tp.rand(3, device="cuda:0").cpu().tolist() == a0.cpu().tolist()
    assert tp.rand(3, device="cuda:1").cpu().tolist() != a0.cpu().tolist()


# -- streams and events ----------------------------------------------------------------------------
def test_streams_and_the_stream_context():
    s = tp.cuda.Stream()
    assert tp.cuda.current_stream() == tp.cuda.default_stream()
    with tp.cuda.stream(s):
        assert tp.cuda.current_stream() == s
        y = tp.ones(4, device="cuda") * 3
    assert tp.cuda.current_stream() == tp.cuda.default_stream()
    s.synchronize()
    assert s.query() and y.cpu().tolist() == [3.0] * 4
    t = tp.cuda.Stream()
    t.wait_stream(s)
    t.wait_event(s.record_event())
    t.synchronize()


def test_events_time_work_between_them():
    start, end = tp.cuda.Event(enable_timing=True), tp.cuda.Event(enable_timing=True)
    start.record()
    x = tp.ones(1000, device="cuda")
    for _ in range(10):
        x = x * 1.0001
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0.0
    untimed = tp.cuda.Event()
    untimed.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        start.elapsed_time(untimed)
    with pytest.raises(RuntimeError, match="must be recorded"):
        tp.cuda.Event(enable_timing=True).elapsed_time(end)
