"""The core's device exchange without a GPU: Tensor.cuda / pin_memory / is_pinned, DLPack, the CUDA
array interface, and the numpy() error, which names the tensor's device."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp


class _FakeDeviceArray:
    """A DLPack producer in device memory of a type no backend holds."""

    def __dlpack_device__(self):
        return (13, 0)  # kDLOneAPI

    def __dlpack__(self, stream=None, **kwargs):
        raise AssertionError("not to be called")


def test_from_dlpack_of_device_memory_no_backend_holds_is_a_buffer_error():
    with pytest.raises(BufferError, match="no enabled backend holds DLPack device type 13"):
        tp.from_dlpack(_FakeDeviceArray())


def test_from_dlpack_of_host_memory_shares_it():
    a = np.arange(4.0)
    t = tp.from_dlpack(a)
    a[0] = 9.0
    assert t.device.type == "cpu" and t.tolist() == [9.0, 1.0, 2.0, 3.0]
    assert t.__dlpack_device__() == (1, 0)


def test_cuda_array_interface_of_a_cpu_tensor_is_an_attribute_error():
    with pytest.raises(AttributeError, match="Can't get __cuda_array_interface__ on non-CUDA tensor type: "
                                             "tensorplug.FloatTensor"):
        tp.ones(2).__cuda_array_interface__
    assert not hasattr(tp.ones(2), "__cuda_array_interface__")


def test_cuda_to_a_non_cuda_device_is_refused():
    with pytest.raises(RuntimeError, match="Invalid device, must be cuda device, got cpu"):
        tp.ones(2).cuda("cpu")


def test_pinning_needs_a_cuda_backend(monkeypatch):
    from tensorplug import backend
    monkeypatch.delitem(backend.BACKENDS, "cuda", raising=False)
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
        tp.ones(2).pin_memory()
    assert tp.ones(2).is_pinned() is False


def test_numpy_of_a_device_tensor_names_the_device():
    x = tp.ones(2, device="openreg:1")
    with pytest.raises(TypeError, match=r"can't convert openreg:1 device type tensor to numpy\. Use "
                                        r"Tensor\.cpu\(\) to copy the tensor to host memory first\."):
        x.numpy()


def test_the_demo_refuses_a_device_it_cannot_use_with_the_backends_message():
    from tensorplug import demo
    with pytest.raises(SystemExit, match="tensorplug demo: --device nosuchdev: no backend is registered for "
                                         "device type 'nosuchdev'"):
        demo.main(["--device", "nosuchdev"])
