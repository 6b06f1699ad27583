"""openreg: device memory owned by C++, the allocator, devices, seeding, the GIL, training and the profiler."""

from __future__ import annotations

import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import tensorplug as tp
import tensorplug_openreg
from tensorplug import nn
from tensorplug_openreg import _C, fallback

pytestmark = pytest.mark.filterwarnings("ignore:.*falling back to the CPU:UserWarning")
OR0, OR1 = tp.device("openreg", 0), tp.device("openreg", 1)


def test_plugin_takes_the_privateuse1_slot_renamed_openreg():
    info = tp.plugins.get("openreg")
    assert (info.dist, info.state, info.backends) == ("tensorplug-openreg", "enabled", ["openreg"])
    b = tp.backend.BACKENDS["openreg"]
    assert (b.key_name, b.slot) == ("PrivateUse1", 15)
    x = tp.ones(2).openreg()
    assert (x.device, x.is_openreg, tp.ones(1).is_openreg) == (OR0, True, False)
    assert tp.device("openreg:1") == x.openreg(1).device == OR1
    api = tp.openreg
    assert (api.is_available(), api.device_count(), api.current_device()) == (True, 2, 0)
    for name in api.__all__:
        assert getattr(api, name).__doc__, name


@pytest.mark.parametrize("values, dtype", [([[1.5, -2.0], [3.0, 4.25]], tp.float32), ([1, 2, 300], tp.int64),
                                           ([True, False], tp.bool), ([0.5, 1.0], tp.bfloat16),
                                           (7.0, tp.float64)])
def test_memory_lives_in_cpp_and_moves_only_by_copies(values, dtype):
    host = tp.tensor(values, dtype=dtype)
    x = host.to("openreg")
    assert isinstance(x._data, _C.Array) and isinstance(x._data.root, _C.Buffer)
    assert x._data.root.device == 0 and x._data.root.nbytes == host.numel() * dtype.itemsize
    host.fill_(0)  # the device copy shares nothing with the host tensor
    assert x.cpu().tolist() == tp.tensor(values, dtype=dtype).tolist() and x.dtype is dtype
    assert x._host() is not x._host()  # each read copies the values out again
    with pytest.raises(TypeError, match="can't convert openreg:0 device type tensor to numpy"):
        x.numpy()


def test_views_share_the_device_buffer():
    x = tp.arange(6, device="openreg").reshape(2, 3)
    v = x.t()
    assert v.untyped_storage().root is x.untyped_storage().root and v.stride() == (1, 3)
    v.add_(tp.ones(3, 2, dtype=tp.int64, device="openreg"))
    assert x.tolist() == [[1, 2, 3], [4, 5, 6]] and x._version == 1


def test_allocator_statistics_follow_allocation_free_reuse_and_empty_cache():
    api = tp.openreg
    dev = OR1  # device 1: nothing else in this process caches tensors there
    api.empty_cache(dev)
    base, reserved0 = api.memory_allocated(dev), api.memory_reserved(dev)
    api.reset_peak_memory_stats(dev)
    a = tp.empty(1000, dtype=tp.float32, device=dev)  # 4000 bytes: a 4096-byte size class
    assert api.memory_allocated(dev) == base + 4096 and api.memory_reserved(dev) == reserved0 + 4096
    b = tp.empty(3 << 20, dtype=tp.uint8, device=dev)  # 3 MiB: whole MiB classes
    assert api.memory_allocated(dev) == base + 4096 + (3 << 20)
    peak = api.max_memory_allocated(dev)
    assert peak == api.memory_allocated(dev)
    del b
    assert api.memory_allocated(dev) == base + 4096  # freed...
    assert api.memory_reserved(dev) == reserved0 + 4096 + (3 << 20)  # ...but cached
    c = tp.empty(3 << 20, dtype=tp.uint8, device=dev)  # reuses the cached block
    assert api.memory_reserved(dev) == reserved0 + 4096 + (3 << 20)
    del c
    assert api.max_memory_allocated(dev) == peak
    api.reset_peak_memory_stats(dev)
    assert api.max_memory_allocated(dev) == api.memory_allocated(dev) == base + 4096
    api.empty_cache(dev)
    assert api.memory_reserved(dev) == reserved0 + 4096  # only the live block is left
    del a
    assert api.memory_allocated(dev) == base
    assert api.memory_allocated(OR0) != api.memory_allocated(dev) or base == 0  # per device


def test_views_keep_their_buffer_alive():
    dev = OR1
    x = tp.zeros(4096, device=dev)
    before = tp.openreg.memory_allocated(dev)
    v = x[10:20]
    del x
    assert tp.openreg.memory_allocated(dev) == before and v.tolist() == [0.0] * 10
    del v
    assert tp.openreg.memory_allocated(dev) == before - 16384


@pytest.mark.parametrize("call, message", [
    (lambda: tp.openreg.memory_allocated(5), r"openreg device index 5 is out of range \(device_count\(\) is 2\)"),
    (lambda: tp.zeros(2, device="openreg:2"), r"openreg error: invalid device ordinal: device openreg:2 was requested "
                                              r"but device_count\(\) is 2"),
    (lambda: tp.openreg.memory_allocated("cpu"), r"Expected an openreg device, but got: cpu"),
])
def test_device_errors(call, message):
    with pytest.raises((RuntimeError, ValueError), match=message):
        call()


def test_two_devices_copies_between_them_and_mixing_raises():
    x0 = tp.tensor([[1.0, 2.0], [3.0, 4.0]], device="openreg")
    x1 = x0.to("openreg:1")
    assert x1.device == OR1 and x1._data.root.device == 1 and x1.tolist() == x0.tolist()
    assert x1.t().to(OR0).tolist() == [[1.0, 3.0], [2.0, 4.0]]  # strided source
    assert x1.to("openreg:0", tp.int64).tolist() == [[1, 2], [3, 4]]  # with a cast
    msg = r"Expected all tensors to be on the same device, but found at least two devices, openreg:0 and openreg:1"
    with pytest.raises(RuntimeError, match=msg):
        x0 + x1  # a native kernel
    with pytest.raises(RuntimeError, match=msg):
        tp.atan2(x0, x1)  # an operator served by the fallback
    with pytest.raises(RuntimeError, match=r"found at least two devices, openreg:0 and cpu"):
        x0 * tp.ones(2, 2)
    with pytest.raises(RuntimeError, match=msg.replace("openreg:0 and openreg:1", "openreg:1 and openreg:0")):
        fallback.run_on_cpu(tp.ops.tensorplug.atan2.default, (x1, x0))  # the fallback checks too


def test_copies_to_and_from_another_device_backend():
    x = tp.tensor([[1.0, 2.0], [3.0, 4.0]], device="openreg")
    m = x.t().to("minimal")  # openreg's copy_ wins dispatch and hands the values to minimal's
    assert m.device.type == "minimal" and m.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    back = m.to("openreg:1", tp.int64)
    assert (back.device, back.tolist()) == (OR1, [[1, 3], [2, 4]])


def test_current_device_selects_the_default():
    try:
        tp.openreg.set_device(1)
        assert tp.zeros(1, device="openreg").device == OR1 and tp.ones(1).openreg().device == OR1
    finally:
        tp.openreg.set_device(0)


@pytest.mark.parametrize("dtype", [tp.float32, tp.float64])
def test_manual_seed_reproduces_each_device_stream(dtype):
    def draws(dev):
        return (tp.rand(3, 4, dtype=dtype, device=dev).tolist(), tp.randn(5, dtype=dtype, device=dev).tolist())

    tp.manual_seed(123)
    first0, first1 = draws(OR0), draws(OR1)
    tp.manual_seed(123)
    assert draws(OR1) == first1 and draws(OR0) == first0  # each device has its own stream
    assert first0 == first1  # seeded alike, like every CUDA device under manual_seed
    tp.openreg.manual_seed_all(7)
    again = draws(OR0)
    assert again != first0 and tp.openreg.initial_seed(OR0) == 7
    u = np.array(tp.empty(20000, dtype=dtype, device="openreg").uniform_(-2.0, 3.0).tolist())
    n = np.array(tp.empty(20000, dtype=dtype, device="openreg").normal_(1.0, 2.0).tolist())
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.05
    assert abs(n.mean() - 1.0) < 0.05 and abs(n.std() - 2.0) < 0.05


def test_strided_random_fill_matches_a_dense_fill():
    tp.manual_seed(5)
    dense = tp.empty(3, 4, device="openreg").uniform_().tolist()
    tp.manual_seed(5)
    t = tp.zeros(4, 3, device="openreg").t()  # a column-major view of shape (3, 4)
    assert t.uniform_().tolist() == dense


def test_fallback_warns_once_per_op_and_writes_back(monkeypatch):
    monkeypatch.setattr(fallback, "_warned", set())
    x = tp.tensor([[1.0, 2.0], [3.0, 4.0]], device="openreg")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = (x + x * 2).sum(0)  # native: no warning
    assert y.tolist() == [12.0, 18.0]
    with pytest.warns(UserWarning, match="tensorplug::sqrt is not implemented natively for 'openreg'; "
                                         "falling back to the CPU") as rec:
        s = x.sqrt()
        x.sqrt()
    assert len(rec) == 1 and s.device == OR0
    np.testing.assert_allclose(s.tolist(), np.sqrt([[1.0, 2.0], [3.0, 4.0]]), rtol=1e-6)
    v, i = x.sort(1, descending=True)  # tuple results come back to the device
    assert (v.device, i.device, i.tolist()) == (OR0, OR0, [[1, 0], [1, 0]])
    col = x[:, 1]  # in place through the fallback, into a strided view
    before = col._data
    assert col.clamp_(max=2.5) is col and col._data is before
    assert x.tolist() == [[1.0, 2.0], [3.0, 2.5]]
    with pytest.warns(UserWarning, match=r"tensorplug::add.Tensor is not implemented natively for 'openreg' "
                                         r"for float16; falling back"):
        h = tp.ones(2, dtype=tp.float16, device="openreg") + 1
    assert h.dtype is tp.float16 and h.device == OR0 and h.tolist() == [2.0, 2.0]


def test_integer_division_by_zero_raises_like_the_cpu():
    a = tp.tensor([4, -7], device="openreg")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tp.div(a, tp.tensor([2, 0], device="openreg"), rounding_mode="floor")
    assert tp.div(a, tp.tensor([2, 2], device="openreg"), rounding_mode="floor").tolist() == [2, -4]


def test_gil_is_released_while_a_kernel_runs():
    # With a huge switch interval a thread gives up the GIL only when it releases it itself: the main
    # thread can count while the worker is inside the C++ matmul only if the kernel released it.
    a = tp.rand(500, 500, dtype=tp.float64, device="openreg")
    state = {"in_kernel": False, "done": False}
    seen = [0]

    def worker():
        state["in_kernel"] = True
        for _ in range(3):
            a @ a
        state["in_kernel"] = False
        state["done"] = True

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        t = threading.Thread(target=worker)
        t.start()
        while not state["done"]:
            if state["in_kernel"]:
                seen[0] += 1
            t.join(0.001)  # a blocking wait: gives the GIL to the worker when it wants it back
    finally:
        sys.setswitchinterval(interval)
    assert seen[0] > 0


def _mlp():
    tp.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def test_model_trains_on_openreg_like_on_the_cpu():
    rng = np.random.default_rng(0)
    x = tp.tensor(rng.normal(size=(32, 6)), dtype=tp.float32)
    y = tp.tensor(rng.integers(0, 3, size=32))
    results = {}
    for dev in ("cpu", "openreg"):
        model = _mlp().to(dev)
        opt = tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert all(p.device.type == dev for p in model.parameters())
        results[dev] = (losses, [p.detach().cpu().tolist() for p in model.parameters()])
    np.testing.assert_allclose(results["openreg"][0], results["cpu"][0], rtol=1e-5)
    for a, b in zip(results["openreg"][1], results["cpu"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert results["cpu"][0][-1] < results["cpu"][0][0]


def test_profiler_records_openreg_ops():
    if not tp.plugins.is_enabled("profiler"):
        pytest.fail("the profiler plugin is part of the test environment")
    x = tp.rand(4, 4, device="openreg")
    with tp.profiler.profile() as prof:
        (x @ x).relu().sum()
    names = {e.key for e in prof.key_averages()}
    assert {"tensorplug::matmul", "tensorplug::maximum", "tensorplug::sum.dim_IntList"} <= names


def test_device_count_comes_from_the_environment():
    code = "import tensorplug as tp; print(tp.openreg.device_count(), tp.zeros(1, device='openreg:3').device)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "TENSORPLUG_OPENREG_DEVICES": "4"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["4", "openreg:3"]


def test_module_is_the_worked_example():
    assert tensorplug_openreg.Array is _C.Array and tensorplug_openreg.__doc__
