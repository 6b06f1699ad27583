"""Tensors on cuda devices: placement, copies, guards, errors, host exchange.

Runs on a GPU, and on a CPU in the simulated mode (``TENSORPLUG_CUDA_SIMULATE=2``, as ``make test``
runs it); skipped with the plugin's reason elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp

from tensorplug_cuda.testing import needs_cuda, needs_gpu, needs_simulation, needs_two

pytestmark = needs_cuda


def test_factories_and_moves_land_on_the_current_device():
    assert tp.zeros(2, device="cuda").device == tp.device("cuda", 0)
    x = tp.arange(6.0).reshape(2, 3)
    y = x.cuda()
    assert y.device.type == "cuda" and y.device.index == 0 and y.is_cuda
    assert y.cuda() is y and y.to("cuda") is y and y.to("cuda:0") is y
    assert y.cpu().tolist() == x.tolist()
    m = tp.nn.Linear(3, 2).to("cuda")
    assert all(p.device == tp.device("cuda:0") for p in m.parameters())
    assert m(y).device == tp.device("cuda:0")


def test_values_round_trip_through_the_device_in_every_supported_dtype():
    for d in (tp.bool, tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.float32, tp.float64):
        host = (tp.arange(12) % 5).to(d).reshape(3, 4)
        dev = host.to("cuda")
        assert dev.dtype is d
        assert dev.cpu().tolist() == host.tolist()
        t = dev.t()  # a view: non-contiguous on the device
        assert not t.is_contiguous() and t.cpu().tolist() == host.t().tolist()


def test_device_memory_is_not_shared_with_the_host():
    host = tp.ones(4)
    dev = host.cuda()
    host.fill_(5)
    assert dev.cpu().tolist() == [1.0] * 4
    back = dev.cpu()
    back.fill_(7)
    assert dev.cpu().tolist() == [1.0] * 4


def test_numpy_of_a_cuda_tensor_raises_pytorchs_error():
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. Use Tensor\.cpu\(\) "
                                        r"to copy the tensor to host memory first\."):
        tp.ones(2, device="cuda").numpy()


def test_copy_between_host_and_device_in_both_directions_casts():
    dev = tp.zeros(3, device="cuda", dtype=tp.float64)
    dev.copy_(tp.tensor([1, 2, 3]))  # int64 host -> float64 device
    assert dev.cpu().tolist() == [1.0, 2.0, 3.0]
    host = tp.zeros(3, dtype=tp.int32)
    host.copy_(dev * 2)  # device -> host, cast
    assert host.tolist() == [2, 4, 6]
    assert (dev.to(tp.float16)).dtype is tp.float16


def test_mixing_host_and_device_raises_pytorchs_error():
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device, but found at least "
                                           r"two devices, cuda:0 and cpu!"):
        tp.ones(2, device="cuda") + tp.ones(2)


def test_bfloat16_is_declared_unsupported_with_a_clear_error():
    with pytest.raises(TypeError, match="tensorplug-cuda does not support tensorplug.bfloat16"):
        tp.zeros(2, device="cuda", dtype=tp.bfloat16)
    with pytest.raises(TypeError, match="cupy has no bfloat16"):
        tp.ones(2, dtype=tp.bfloat16).cuda()
    assert tp.bfloat16 not in tp.plugin_api.backend("cuda").supported_dtypes()
    assert tp.cuda.is_bf16_supported() is False


@needs_two
def test_a_tensor_on_device_1_stays_there_through_ops_and_autograd():
    x = tp.randn(3, 4, device="cuda:1", requires_grad=True)
    assert x.device == tp.device("cuda", 1)
    y = (x.exp() * 2).sum()
    assert y.device == tp.device("cuda", 1)
    y.backward()
    assert x.grad.device == tp.device("cuda", 1)
    assert tp.cuda.current_device() == 0  # the guard put the current device back


@needs_two
def test_mixing_two_devices_raises_and_copies_between_them():
    a = tp.ones(2, device="cuda:0")
    b = tp.ones(2, device="cuda:1")
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cuda:1"):
        a + b
    c = a.to("cuda:1")
    assert c.device.index == 1 and (c + b).cpu().tolist() == [2.0, 2.0]
    b.copy_(a * 3)
    assert b.cpu().tolist() == [3.0, 3.0] and b.device.index == 1


@needs_two
def test_the_device_context_and_set_device_choose_where_factories_allocate():
    with tp.cuda.device(1):
        assert tp.cuda.current_device() == 1
        assert tp.zeros(1, device="cuda").device.index == 1
    assert tp.cuda.current_device() == 0
    tp.cuda.set_device(1)
    try:
        assert tp.empty(2, device="cuda").device.index == 1
    finally:
        tp.cuda.set_device(0)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tp.zeros(1, device=f"cuda:{tp.cuda.device_count()}")


def test_device_module_answers():
    assert tp.cuda.is_available() and tp.cuda.device_count() >= 1 and tp.cuda.is_initialized()
    props = tp.cuda.get_device_properties(0)
    assert props.total_memory > 0 and isinstance(tp.cuda.get_device_name(), str)
    assert isinstance(tp.cuda.get_device_capability(), tuple)
    tp.cuda.synchronize()


def test_pin_memory_gives_a_pinned_host_copy():
    x = tp.arange(4.0)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and p.device.type == "cpu"
    assert p.tolist() == x.tolist()
    assert p.cuda(non_blocking=True).cpu().tolist() == x.tolist()


@needs_simulation
def test_the_simulation_has_no_cuda_array_interface_and_says_why():
    with pytest.raises(AttributeError, match="simulated mode keeps it on the host"):
        tp.ones(2, device="cuda").__cuda_array_interface__
    with pytest.raises(AttributeError, match="non-CUDA tensor type"):
        tp.ones(2).__cuda_array_interface__


@needs_gpu
def test_dlpack_and_the_cuda_array_interface_share_device_memory():
    import cupy
    x = tp.arange(6.0, device="cuda")
    c = cupy.from_dlpack(x)
    c[0] = 42.0
    assert x.cpu().tolist()[0] == 42.0
    iface = x.__cuda_array_interface__
    assert iface["shape"] == (6,) and iface["data"][0] == c.data.ptr
    arr = cupy.arange(4, dtype=cupy.float32)
    t = tp.from_dlpack(arr)
    assert t.device.type == "cuda" and t.dtype is tp.float32
    arr[1] = -1
    assert t.cpu().tolist() == [0.0, -1.0, 2.0, 3.0]


def test_from_dlpack_of_host_memory_is_a_cpu_tensor():
    a = np.arange(3.0)
    t = tp.from_dlpack(a)
    assert t.device.type == "cpu" and t.tolist() == [0.0, 1.0, 2.0]


def test_non_blocking_copies_arrive_after_a_synchronize():
    host = tp.arange(1000.0).pin_memory()
    dev = host.to("cuda", non_blocking=True)
    back = (dev * 2).to("cpu", non_blocking=True)
    tp.cuda.synchronize()
    assert back.tolist() == (tp.arange(1000.0) * 2).tolist()
    if not tp.cuda.is_simulated():
        assert back.is_pinned()  # the device-to-host copy landed in page-locked memory


def test_a_data_loader_with_pin_memory_gives_pinned_batches():
    from tensorplug.utils.data import DataLoader, TensorDataset
    data = TensorDataset(tp.arange(12.0).reshape(6, 2), tp.arange(6))
    batches = list(DataLoader(data, batch_size=4, pin_memory=True))
    assert [len(b[0]) for b in batches] == [4, 2]
    assert all(x.is_pinned() and y.is_pinned() for x, y in batches)
    x = batches[0][0].to("cuda", non_blocking=True)
    tp.cuda.synchronize()
    assert x.cpu().tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]
