"""The device layer under the CUDA backend: cupy on a GPU, or numpy in the simulated mode.

Everything the plugin asks of the device goes through one :class:`Driver`: the array module, device
count and selection, synchronization, streams and events, the caching allocator's counters, host
transfers. Two drivers exist:

* :class:`CupyDriver`: the real one, on cupy (imported on first use, never at plugin load);
* :class:`SimulatedDriver`: a test aid for contributors, chosen by ``TENSORPLUG_CUDA_SIMULATE=N``
  (N simulated devices). numpy stands in for cupy and streams, events and the memory pool are stubs
  that keep the same counters. It runs the plugin's own code paths on a CPU (device selection,
  guards, copies, memory statistics, the Python side of every fused kernel); it cannot check CUDA
  kernel sources, the ordering of real streams, or where cupy's semantics differ from numpy's.

:func:`driver` returns the driver, probing once; when there is neither a simulation nor a usable
GPU it raises :class:`CudaUnavailableError` naming the cause (cupy not installed, and which extra to
install; or no GPU / driver, with cupy's own message).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref

import numpy as np

SIMULATE_ENV = "TENSORPLUG_CUDA_SIMULATE"
SIMULATE_MEMORY_ENV = "TENSORPLUG_CUDA_SIMULATE_MEMORY"  # bytes per simulated device (default 16 GiB)
INSTALL_HINT = ("install cupy through the plugin's extras: pip install 'tensorplug-cuda[cuda12]' for a CUDA 12 "
                "driver, or 'tensorplug-cuda[cuda13]' for CUDA 13")


class CudaUnavailableError(RuntimeError):
    """No CUDA device can be used: cupy is missing, or there is no GPU or driver."""


class OutOfMemoryError(RuntimeError):
    """A device allocation failed (``tensorplug.cuda.OutOfMemoryError``, as ``torch.cuda.OutOfMemoryError``)."""


def simulated_device_count():
    """The number of simulated devices ``TENSORPLUG_CUDA_SIMULATE`` asks for (0: no simulation)."""
    raw = os.environ.get(SIMULATE_ENV, "").strip()
    if raw in ("", "0"):
        return 0
    try:
        n = int(raw)
    except ValueError:
        n = -1
    if n < 0:
        raise RuntimeError(f"{SIMULATE_ENV} must be a number of simulated devices (0 to switch the simulation "
                           f"off), got {raw!r}")
    return n


class PeakCounter:
    """Bytes in use and their peak, per device: ``torch.cuda.max_memory_allocated``'s counter."""

    def __init__(self, n):
        self.current = [0] * n
        self.peak = [0] * n
        self.reserved_peak = [0] * n
        self.lock = threading.Lock()

    def add(self, dev, nbytes):
        with self.lock:
            c = self.current[dev] = self.current[dev] + nbytes
            if c > self.peak[dev]:
                self.peak[dev] = c

    def sub(self, dev, nbytes):
        with self.lock:
            self.current[dev] -= nbytes

    def reset_peak(self, dev, reserved):
        with self.lock:
            self.peak[dev] = self.current[dev]
            self.reserved_peak[dev] = reserved

    def note_reserved(self, dev, reserved):
        if reserved > self.reserved_peak[dev]:
            self.reserved_peak[dev] = reserved


class Driver:
    """What the backend needs of a device runtime (see the two implementations below)."""

    name = "?"
    simulated = False
    xp = None
    native_type = None

    def device_count(self):
        raise NotImplementedError

    # current device, per thread as in CUDA
    def __init__(self):
        self._local = threading.local()

    def current_device(self):
        return getattr(self._local, "device", 0)

    def set_device(self, index):
        self._local.device = index

    @contextlib.contextmanager
    def using(self, index):
        """Make ``index`` the current device for a block."""
        prev = self.current_device()
        if prev == index:
            yield
            return
        self.set_device(index)
        try:
            yield
        finally:
            self.set_device(prev)


# -- the simulation --------------------------------------------------------------------------------
class SimStream:
    """A stream of the simulated mode: work runs at once, so ordering is trivially kept."""

    def __init__(self, device_index, priority=0, default=False):
        self.device_index = device_index
        self.priority = priority
        self.default = default
        self.ptr = 0 if default else id(self)

    def synchronize(self):
        pass

    def query(self):
        return True

    def wait_event(self, event):
        pass

    def record(self, event):
        event._time = time.perf_counter()


class SimEvent:
    """An event of the simulated mode: recording notes the host clock."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._time = None

    def record(self, stream):
        self._time = time.perf_counter()

    def synchronize(self):
        pass

    def query(self):
        return True

    def elapsed_ms(self, end):
        return (end._time - self._time) * 1e3


class SimulatedDriver(Driver):
    """numpy standing in for cupy on ``n`` simulated devices (``TENSORPLUG_CUDA_SIMULATE=n``).

    Memory is counted by the plugin's allocation path (every fresh result the kernels wrap), one
    entry per root buffer, released when numpy frees it; a capacity per device
    (``TENSORPLUG_CUDA_SIMULATE_MEMORY`` bytes, 16 GiB unless set) makes allocations past it raise
    the out-of-memory error, so that path can be tested.
    """

    name = "simulated (numpy)"
    simulated = True
    xp = np
    native_type = np.ndarray

    def __init__(self, n):
        super().__init__()
        self.n = n
        self.capacity = int(os.environ.get(SIMULATE_MEMORY_ENV, 16 << 30))
        self.counter = PeakCounter(n)
        self._live = {}  # id(root buffer) -> (device, nbytes)
        self._pinned = {}  # id(host array) -> weak reference: the "page-locked" host arrays
        self._default_streams = [SimStream(i, default=True) for i in range(n)]

    def device_count(self):
        return self.n

    def device_name(self, index):
        return "tensorplug simulated CUDA device (numpy; not a GPU)"

    def capability(self, index):
        return (0, 0)

    def total_memory(self, index):
        return self.capacity

    def synchronize(self, index):
        pass

    # memory: the plugin's own accounting
    def track(self, native, index):
        """Count ``native``'s root buffer against device ``index`` (once per buffer)."""
        root = native
        while root.base is not None and isinstance(root.base, np.ndarray):
            root = root.base
        key = id(root)
        if key in self._live or root.nbytes == 0:
            return native
        nbytes = root.nbytes
        if self.counter.current[index] + nbytes > self.capacity:
            raise out_of_memory(nbytes, index, self.capacity, self.counter.current[index], self.capacity)
        self._live[key] = (index, nbytes)
        self.counter.add(index, nbytes)
        weakref.finalize(root, self._release, key)
        return native

    def _release(self, key):
        entry = self._live.pop(key, None)
        if entry is not None:
            self.counter.sub(*entry)

    def allocated(self, index):
        return self.counter.current[index]

    def reserved(self, index):
        return self.counter.current[index]  # no cache: what is held is what is reserved

    def free_cached(self):
        pass

    def mem_get_info(self, index):
        return (self.capacity - self.counter.current[index], self.capacity)

    # views: as the CPU backend keeps them, numpy views of one root array
    def storage(self, native):
        root = native
        while isinstance(root.base, np.ndarray):
            root = root.base
        if root is native:
            return native, 0
        return root, (native.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // native.itemsize

    def as_strided(self, root, shape, strides, offset, np_dtype):
        isz = np.dtype(np_dtype).itemsize
        if not (root.flags.c_contiguous or root.flags.f_contiguous):
            root = root.transpose(np.argsort(root.strides)[::-1])  # a permuted dense block, in memory order
            if not root.flags.c_contiguous:
                raise RuntimeError("as_strided: the storage's memory is not one dense block")
        flat = root.reshape(-1, order="A").view(np.uint8)
        if 0 in shape:
            offset = 0  # an empty view addresses no memory
        return np.ndarray(shape, dtype=np_dtype, buffer=flat, offset=offset * isz,
                          strides=tuple(s * isz for s in strides))

    def empty(self, shape, np_dtype, index):
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(np_dtype).itemsize
        if self.counter.current[index] + nbytes > self.capacity:
            raise out_of_memory(nbytes, index, self.capacity, self.counter.current[index], self.capacity)
        return self.track(np.empty(shape, dtype=np_dtype), index)

    def upload(self, host, index, non_blocking=False):
        return self.track(np.array(host, copy=True, order="C"), index)

    def download(self, native, non_blocking=False):
        return np.array(native, copy=True)

    def from_dlpack(self, ext):
        return np.from_dlpack(ext)

    def pinned_empty(self, shape, np_dtype):
        """Host memory standing for page-locked memory: an ordinary array, remembered as pinned."""
        host = np.empty(shape, dtype=np_dtype)
        key = id(host)
        self._pinned[key] = weakref.ref(host, lambda _r, k=key: self._pinned.pop(k, None))
        return host

    def is_pinned(self, host):
        root = host
        while isinstance(root.base, np.ndarray):
            root = root.base
        ref = self._pinned.get(id(root))
        return ref is not None and ref() is root

    # streams and events
    def new_stream(self, index, priority=0):
        return SimStream(index, priority)

    def default_stream(self, index):
        return self._default_streams[index]

    def new_event(self, enable_timing=False, blocking=False, interprocess=False):
        return SimEvent(enable_timing, blocking, interprocess)

    @contextlib.contextmanager
    def stream_context(self, stream):
        yield


# -- cupy ------------------------------------------------------------------------------------------
class CupyDriver(Driver):
    """The GPU through cupy. cupy's caching ``MemoryPool`` holds device memory; a ``MemoryHook``
    keeps the in-use counter's peak, which cupy does not track."""

    name = "cupy"

    def __init__(self, cupy):
        super().__init__()
        self.cupy = cupy
        self.xp = cupy
        self.native_type = cupy.ndarray
        self.n = cupy.cuda.runtime.getDeviceCount()
        self.pool = cupy.get_default_memory_pool()
        self.pinned_pool = cupy.get_default_pinned_memory_pool()
        self.counter = PeakCounter(self.n)
        self._install_peak_hook()

    def _install_peak_hook(self):
        from cupy.cuda import memory_hook  # lazy: only once cupy is in use

        counter = self.counter

        class _PeakHook(memory_hook.MemoryHook):
            name = "tensorplug_peak"

            def malloc_postprocess(self, device_id, size, mem_size, mem_ptr, pmem_id):
                if mem_ptr:  # 0 when the allocation failed
                    counter.add(device_id, mem_size)

            def free_postprocess(self, device_id, mem_size, mem_ptr, pmem_id):
                counter.sub(device_id, mem_size)

        # a MemoryHook is a context manager that is active per thread; enter it for the process
        self._hook = _PeakHook()
        self._hook.__enter__()

    def device_count(self):
        return self.n

    def current_device(self):
        return self.cupy.cuda.runtime.getDevice()

    def set_device(self, index):
        self.cupy.cuda.runtime.setDevice(index)

    def device_name(self, index):
        name = self.cupy.cuda.runtime.getDeviceProperties(index)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    def capability(self, index):
        props = self.cupy.cuda.runtime.getDeviceProperties(index)
        return (int(props["major"]), int(props["minor"]))

    def total_memory(self, index):
        return int(self.cupy.cuda.runtime.getDeviceProperties(index)["totalGlobalMem"])

    def synchronize(self, index):
        with self.cupy.cuda.Device(index):
            self.cupy.cuda.Device(index).synchronize()

    def track(self, native, index):
        return native  # the pool hook counts every allocation

    # views: a storage's root is one byte array over the whole allocation (cupy's ``Memory``), so
    # every view of it, however made, finds the same root and its offset from the pointers
    def storage(self, native):
        ptr = native.data
        mem = ptr.mem
        root = self.cupy.ndarray((mem.size,), np.uint8, memptr=self.cupy.cuda.MemoryPointer(mem, 0))
        return root, (ptr.ptr - mem.ptr) // native.itemsize

    def as_strided(self, root, shape, strides, offset, np_dtype):
        isz = np.dtype(np_dtype).itemsize
        if 0 in shape:
            offset = 0
        return self.cupy.ndarray(tuple(shape), np_dtype, memptr=root.data + offset * isz,
                                 strides=tuple(s * isz for s in strides))

    def allocated(self, index):
        return self.counter.current[index]

    def reserved(self, index):
        with self.cupy.cuda.Device(index):
            r = int(self.pool.total_bytes())
        self.counter.note_reserved(index, r)
        return r

    def free_cached(self):
        self.pool.free_all_blocks()
        self.pinned_pool.free_all_blocks()

    def mem_get_info(self, index):
        with self.cupy.cuda.Device(index):
            free, total = self.cupy.cuda.runtime.memGetInfo()
        return (int(free), int(total))

    def empty(self, shape, np_dtype, index):
        with self.cupy.cuda.Device(index):
            try:
                return self.cupy.empty(shape, dtype=np_dtype)
            except self.cupy.cuda.memory.OutOfMemoryError:
                pass
            # cupy's pool keeps freed blocks: release them once and retry before giving up
            self.pool.free_all_blocks()
            try:
                return self.cupy.empty(shape, dtype=np_dtype)
            except self.cupy.cuda.memory.OutOfMemoryError:
                nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(np_dtype).itemsize
                free, total = self.mem_get_info(index)
                raise out_of_memory(nbytes, index, total, self.allocated(index), self.reserved(index),
                                    free) from None

    def upload(self, host, index, non_blocking=False):
        """A device copy of host array ``host``; with ``non_blocking`` and page-locked ``host``, queued on
        the current stream without waiting (the caller keeps ``host`` alive and unchanged until then)."""
        with self.cupy.cuda.Device(index):
            if non_blocking and host.flags.c_contiguous and self.is_pinned(host):
                arr = self.cupy.empty(host.shape, dtype=host.dtype)
                arr.set(host, stream=self.cupy.cuda.get_current_stream())
                return arr
            return self.cupy.asarray(host)

    def download(self, native, non_blocking=False):
        """A host copy of ``native``; with ``non_blocking``, into page-locked memory on the current stream
        (synchronize, or wait on an event, before reading it)."""
        if non_blocking:
            out = self.pinned_empty(native.shape, native.dtype)
            return native.get(stream=self.cupy.cuda.get_current_stream(), out=out)
        return self.cupy.asnumpy(native)

    def pinned_empty(self, shape, np_dtype):
        import cupyx  # lazy: with cupy
        return cupyx.empty_pinned(shape, dtype=np_dtype)

    def is_pinned(self, host):
        try:
            attrs = self.cupy.cuda.runtime.pointerGetAttributes(host.ctypes.data)
        except Exception:  # plain pageable memory: the runtime does not know the pointer
            return False
        return attrs.type == self.cupy.cuda.runtime.memoryTypeHost

    def from_dlpack(self, ext):
        return self.cupy.from_dlpack(ext)

    def new_stream(self, index, priority=0):
        with self.cupy.cuda.Device(index):
            return self.cupy.cuda.Stream(non_blocking=False)

    def default_stream(self, index):
        return self.cupy.cuda.Stream.null

    def new_event(self, enable_timing=False, blocking=False, interprocess=False):
        return self.cupy.cuda.Event(block=blocking, disable_timing=not enable_timing, interprocess=interprocess)

    def stream_context(self, stream):
        return stream


def out_of_memory(nbytes, index, total, allocated, reserved, free=None):
    """PyTorch's out-of-memory error, with the sizes."""
    free = total - reserved if free is None else free
    return OutOfMemoryError(
        f"CUDA out of memory. Tried to allocate {_fmt(nbytes)}. GPU {index} has a total capacity of {_fmt(total)} "
        f"of which {_fmt(free)} is free. Of the allocated memory {_fmt(allocated)} is allocated by tensorplug, "
        f"and {_fmt(max(reserved - allocated, 0))} is reserved by tensorplug but unallocated.")


def _fmt(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} bytes"


# -- probing ---------------------------------------------------------------------------------------
_probe_lock = threading.Lock()
_probed: list = []  # [driver or None, reason or None], filled once


def probe():
    """``(driver, None)`` or ``(None, reason)``: decided once per process, on first use."""
    if _probed:
        return _probed[0], _probed[1]
    with _probe_lock:
        if not _probed:
            _probed.extend(_probe())
    return _probed[0], _probed[1]


def _probe():
    n = simulated_device_count()
    if n:
        return SimulatedDriver(n), None
    try:
        import cupy  # lazy: cupy loads on first use of the device, never at plugin load
    except ImportError as e:
        return None, f"cupy is not installed ({e}); {INSTALL_HINT}"
    try:
        if not cupy.is_available():
            try:
                cupy.cuda.runtime.getDeviceCount()
                why = "cupy found no usable GPU"
            except Exception as e:  # cupy's own message: cudaErrorInsufficientDriver, no device...
                why = f"{type(e).__name__}: {e}"
            return None, f"no usable CUDA GPU or driver: {why}"
        return CupyDriver(cupy), None
    except Exception as e:
        return None, f"no usable CUDA GPU or driver: {type(e).__name__}: {e}"


def driver():
    """The driver; raises :class:`CudaUnavailableError` with the cause when there is none."""
    d, why = probe()
    if d is None:
        raise CudaUnavailableError(f"CUDA is not available: {why}")
    return d


def _reset_for_tests():
    _probed.clear()
