"""The CUDA backend record: devices ``cuda:0`` .. ``cuda:N-1``, memory through the driver.

A tensor's native value is a cupy array (a numpy array in the simulated mode) viewing one device
buffer. Device memory is never handed to numpy: ``to_numpy`` downloads a copy and ``from_numpy``
uploads one. Nothing touches the device until the first use of ``device="cuda"``; that first use
probes the driver (:mod:`tensorplug_cuda.driver`) and registers the kernels, or raises the one
"CUDA is not available" error that names the cause.
"""

from __future__ import annotations

import threading

import tensorplug
from tensorplug.plugin_api import Backend, all_dtypes

from . import driver as _drv

_UNSUPPORTED = frozenset({"bfloat16"})  # cupy has no bfloat16 (docs/cuda.md, "Dtypes")


class CUDABackend(Backend):
    """CUDA devices through cupy (or numpy, simulated): the ``CUDA`` backend key."""

    name = "cuda"
    key_name = "CUDA"
    slot = 1  # the CUDA component's slot: its key bit is the same each time the plugin is enabled
    dlpack_device_type = 2  # kDLCUDA: tensorplug.from_dlpack(cupy_array) comes here
    accelerator = True      # tensorplug.accelerator's device once a GPU (or the simulation) is usable

    def __init__(self):
        self._ready = False
        self._lock = threading.RLock()
        self._on_ready = []  # callables run once the driver is up (the kernels' registration)
        self.devices = ()
        self.drv = None
        self.seeders = []  # seed(int) callables: tensorplug.manual_seed reaches the generators through them

    # -- availability ---------------------------------------------------------------------------
    def is_available(self):
        return _drv.probe()[0] is not None

    def device_count(self):
        d = _drv.probe()[0]
        return 0 if d is None else d.device_count()

    def ensure_ready(self):
        """Probe the driver and register the kernels, once; raise the unavailable error if there is none."""
        if self._ready:
            return self.drv
        with self._lock:
            if not self._ready:
                drv = _drv.driver()
                if drv.device_count() == 0:
                    raise _drv.CudaUnavailableError("CUDA is not available: no CUDA device was found")
                self.drv = drv
                self.devices = tuple(tensorplug.device("cuda", i) for i in range(drv.device_count()))
                for fn in self._on_ready:
                    fn(drv)
                self._ready = True
        return self.drv

    def normalize_device(self, dev):
        drv = self.ensure_ready()
        idx = drv.current_device() if dev.index is None else dev.index
        if idx >= len(self.devices):
            raise RuntimeError(f"CUDA error: invalid device ordinal: device {dev} was requested but "
                               f"device_count() is {len(self.devices)}")
        return self.devices[idx]

    def supported_dtypes(self):
        return [d for d in all_dtypes() if d.name not in _UNSUPPORTED]

    def index_of(self, device):
        """The device index of ``device`` (None, or a device without an index: the current one)."""
        drv = self.ensure_ready()
        return drv.current_device() if device is None or device.index is None else device.index

    # -- memory ---------------------------------------------------------------------------------
    def empty(self, shape, dtype, device):
        check_dtype(dtype)
        idx = self.index_of(device)  # first: it brings the driver up
        return self.drv.empty(shape, dtype.np, idx)

    def from_numpy(self, array, device):
        idx = self.index_of(device)
        return self.drv.upload(array, idx)

    def to_numpy(self, native):
        return self.drv.download(native)

    def strides(self, native):
        isz = native.itemsize
        return tuple([s // isz for s in native.strides])

    def storage(self, native):
        return self.drv.storage(native)

    def as_strided(self, root, shape, strides, offset, dtype):
        return self.drv.as_strided(root, shape, strides, offset, dtype.np)

    def storage_nbytes(self, root):
        return root.nbytes

    def from_dlpack(self, ext, device_index):
        drv = self.ensure_ready()
        with drv.using(device_index):
            return drv.from_dlpack(ext)

    def synchronize(self, device=None):
        idx = self.index_of(device)
        self.drv.synchronize(idx)

    def manual_seed(self, seed):
        for fn in self.seeders:
            fn(seed)


def check_dtype(dtype):
    """Raise the clear error for a dtype cupy cannot hold."""
    if dtype.name in _UNSUPPORTED:
        raise TypeError(f"tensorplug-cuda does not support {dtype} (cupy has no {dtype.name} type); "
                        f"use float16 or float32 on cuda")


BACKEND = CUDABackend()  # one record for the life of the process: kernels read its key set
