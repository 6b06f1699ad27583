"""``tensorplug.cuda``'s functions, as ``torch.cuda``'s: devices, seeds, streams, events, memory.

The core's ``tensorplug.cuda`` module forwards every name this module defines to it while the plugin
is enabled (``BACKEND.runtime``). Availability questions (``is_available``, ``device_count``) never
raise; everything that needs a device raises the one "CUDA is not available" error naming the cause.
"""

from __future__ import annotations

import contextlib

import tensorplug

from . import driver as _drv
from . import random as _random
from .backend import BACKEND

OutOfMemoryError = _drv.OutOfMemoryError
CudaUnavailableError = _drv.CudaUnavailableError


def _drv_ready():
    return BACKEND.ensure_ready()


def _index(device=None):
    """A device index from None (the current device), an int, a string or a device."""
    drv = _drv_ready()
    if device is None:
        return drv.current_device()
    if isinstance(device, Stream):
        return device.device_index
    if isinstance(device, str):
        device = tensorplug.device(device)
    if isinstance(device, tensorplug.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return drv.current_device() if device.index is None else device.index
    idx = int(device)
    if idx < 0:
        return drv.current_device()
    if idx >= drv.device_count():
        raise RuntimeError(f"CUDA error: invalid device ordinal: device {idx} was requested but device_count() "
                           f"is {drv.device_count()}")
    return idx


# -- devices ---------------------------------------------------------------------------------------
def is_available():
    """Whether a CUDA device can be used (never raises; False without cupy or a GPU)."""
    return BACKEND.is_available() and BACKEND.device_count() > 0


def device_count():
    """The number of CUDA devices (0 without cupy or a GPU)."""
    return BACKEND.device_count()


def is_initialized():
    """Whether a cuda device was used in this process."""
    return BACKEND._ready


def init():
    """Initialise CUDA now (otherwise it happens at the first use of a cuda device)."""
    _drv_ready()


def current_device():
    """The index of the current CUDA device."""
    return _drv_ready().current_device()


def set_device(device):
    """Make ``device`` the current CUDA device (a negative index is ignored, as in PyTorch)."""
    if isinstance(device, int) and device < 0:
        return
    _drv_ready().set_device(_index(device))


class device:
    """``with tensorplug.cuda.device(1):``: device 1 is current inside the block (None/-1: no change)."""

    def __init__(self, device):
        self.idx = -1 if device is None else (device if isinstance(device, int) else _index(device))
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            set_device(self.prev_idx)
        return False


def get_device_name(device=None):
    """The name of a CUDA device ("... simulated ..." in the simulated mode)."""
    return _drv_ready().device_name(_index(device))


def get_device_capability(device=None):
    """The ``(major, minor)`` compute capability ((0, 0) in the simulated mode)."""
    return _drv_ready().capability(_index(device))


class _Properties:
    def __init__(self, name, major, minor, total_memory):
        self.name, self.major, self.minor, self.total_memory = name, major, minor, total_memory

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1 << 20)}MB)")


def get_device_properties(device=None):
    """``name``, ``major``, ``minor`` and ``total_memory`` of a CUDA device."""
    drv = _drv_ready()
    i = _index(device)
    major, minor = drv.capability(i)
    return _Properties(drv.device_name(i), major, minor, drv.total_memory(i))


def is_bf16_supported(including_emulation=True):
    """False: cupy has no bfloat16, so tensorplug-cuda declares it unsupported (docs/cuda.md)."""
    return False


def synchronize(device=None):
    """Wait for all work on a CUDA device to finish."""
    _drv_ready().synchronize(_index(device))


# -- seeds -----------------------------------------------------------------------------------------
def manual_seed(seed):
    """Seed the current CUDA device's default generator (quietly nothing without a device, as PyTorch)."""
    seed = int(seed)
    if not is_available():
        return
    _random.default_generator(current_device()).manual_seed(seed)


def manual_seed_all(seed):
    """Seed every CUDA device's default generator."""
    seed = int(seed)
    _random.seed_all(seed)


def seed():
    """Seed the current device's generator from a random number."""
    if is_available():
        _random.default_generator(current_device()).seed()


def seed_all():
    """Seed every device's generator from a random number."""
    import os  # lazy: rarely used
    manual_seed_all(int.from_bytes(os.urandom(8), "little"))


def initial_seed():
    """The current device's generator's initial seed."""
    return _random.default_generator(current_device()).initial_seed()


def get_rng_state(device="cuda"):
    """The state of a device's generator, a uint8 CPU tensor."""
    return _random.default_generator(_index(device)).get_state()


def set_rng_state(new_state, device="cuda"):
    """Restore a device's generator from :func:`get_rng_state`."""
    _random.default_generator(_index(device)).set_state(new_state)


def get_rng_state_all():
    """Every device's generator state."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    """Restore every device's generator."""
    for i, s in enumerate(new_states):
        set_rng_state(s, i)


# -- streams and events ----------------------------------------------------------------------------
class Stream:
    """A CUDA stream (``tensorplug.cuda.Stream(device=None, priority=0)``): kernels launched inside
    ``with tensorplug.cuda.stream(s):`` are queued on it. A stub that runs work at once in the
    simulated mode."""

    def __init__(self, device=None, priority=0, _native=None):
        drv = _drv_ready()
        self.device_index = _index(device)
        self.priority = priority
        self._native = _native if _native is not None else drv.new_stream(self.device_index, priority)

    @property
    def device(self):
        return tensorplug.device("cuda", self.device_index)

    @property
    def cuda_stream(self):
        return getattr(self._native, "ptr", 0)

    def synchronize(self):
        """Wait for the work queued on this stream."""
        self._native.synchronize()

    def query(self):
        """Whether all queued work has finished."""
        return bool(self._native.done if hasattr(self._native, "done") else self._native.query())

    def wait_event(self, event):
        """Make later work on this stream wait for ``event``."""
        self._native.wait_event(event._native)

    def wait_stream(self, stream):
        """Make later work on this stream wait for the work queued so far on ``stream``."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record ``event`` (a new one if None) on this stream; returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream and \
            self.device_index == other.device_index

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return f"<tensorplug.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: ``Event(enable_timing=False, blocking=False, interprocess=False)``."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._native = _drv_ready().new_event(enable_timing, blocking, interprocess)
        self._recorded = False

    def record(self, stream=None):
        """Record the event on ``stream`` (the current stream if None)."""
        stream = current_stream() if stream is None else stream
        self._native.record(stream._native)
        self._recorded = True

    def wait(self, stream=None):
        """Make ``stream`` (the current stream if None) wait for this event."""
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        """Whether the work before the event has finished."""
        return bool(self._native.done if hasattr(self._native, "done") else self._native.query())

    def synchronize(self):
        """Wait for the work before the event."""
        self._native.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded, with ``enable_timing=True``)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        drv = _drv_ready()
        if drv.simulated:
            return self._native.elapsed_ms(end_event._native)
        return float(drv.cupy.cuda.get_elapsed_time(self._native, end_event._native))


_current_streams: dict = {}  # device index -> Stream set by the stream() context


def current_stream(device=None):
    """The stream kernels on ``device`` are queued on now."""
    i = _index(device)
    s = _current_streams.get(i)
    return s if s is not None else default_stream(i)


def default_stream(device=None):
    """The device's default (null) stream."""
    drv = _drv_ready()
    i = _index(device)
    return Stream(i, _native=drv.default_stream(i))


@contextlib.contextmanager
def stream(s):
    """``with tensorplug.cuda.stream(s):``: work queued inside goes to stream ``s`` (None: no change)."""
    if s is None:
        yield
        return
    drv = _drv_ready()
    prev = _current_streams.get(s.device_index)
    _current_streams[s.device_index] = s
    try:
        with device(s.device_index), drv.stream_context(s._native):
            yield
    finally:
        if prev is None:
            _current_streams.pop(s.device_index, None)
        else:
            _current_streams[s.device_index] = prev


def set_stream(s):
    """Make ``s`` its device's current stream."""
    _current_streams[s.device_index] = s
    drv = _drv_ready()
    if not drv.simulated:
        s._native.use()


# -- memory ----------------------------------------------------------------------------------------
def memory_allocated(device=None):
    """Bytes of device memory held by tensors now."""
    if not is_available():
        return 0
    return _drv_ready().allocated(_index(device))


def max_memory_allocated(device=None):
    """Peak of :func:`memory_allocated` since the start or the last :func:`reset_peak_memory_stats`."""
    if not is_available():
        return 0
    drv = _drv_ready()
    return drv.counter.peak[_index(device)]


def memory_reserved(device=None):
    """Bytes the caching allocator holds (in use or cached for reuse)."""
    if not is_available():
        return 0
    return _drv_ready().reserved(_index(device))


def max_memory_reserved(device=None):
    """Peak of :func:`memory_reserved` as seen by its calls and at each reset (cupy keeps no peak)."""
    if not is_available():
        return 0
    drv = _drv_ready()
    i = _index(device)
    drv.counter.note_reserved(i, drv.reserved(i))
    return drv.counter.reserved_peak[i]


def reset_peak_memory_stats(device=None):
    """Start the peak counters again from the current values."""
    if not is_available():
        return
    drv = _drv_ready()
    i = _index(device)
    drv.counter.reset_peak(i, drv.reserved(i))


def reset_max_memory_allocated(device=None):
    """Same as :func:`reset_peak_memory_stats` (PyTorch's older name)."""
    reset_peak_memory_stats(device)


def empty_cache():
    """Give the caching allocator's unused blocks back to the driver."""
    if is_available():
        _drv_ready().free_cached()


def mem_get_info(device=None):
    """``(free, total)`` bytes of the device."""
    return _drv_ready().mem_get_info(_index(device))


def memory_stats(device=None):
    """A dict of the allocator counters, under PyTorch's key names."""
    if not is_available():
        return {}
    i = _index(device)
    return {"allocated_bytes.all.current": memory_allocated(i), "allocated_bytes.all.peak": max_memory_allocated(i),
            "reserved_bytes.all.current": memory_reserved(i), "reserved_bytes.all.peak": max_memory_reserved(i)}


def memory_summary(device=None, abbreviated=False):
    """A printable table of the memory counters."""
    i = _index(device)
    rows = [("Allocated memory", memory_allocated(i), max_memory_allocated(i)),
            ("Reserved memory", memory_reserved(i), max_memory_reserved(i))]
    free, total = mem_get_info(i)
    lines = [f"tensorplug-cuda memory summary, device {i} ({_drv_ready().name})",
             f"{'':24}{'current':>14}{'peak':>14}"]
    lines += [f"{name:24}{_drv._fmt(cur):>14}{_drv._fmt(peak):>14}" for name, cur, peak in rows]
    lines.append(f"{'Device free / total':24}{_drv._fmt(free):>14}{_drv._fmt(total):>14}")
    return "\n".join(lines)


# -- host memory and exchange ---------------------------------------------------------------------
def pin_memory(t):
    """``Tensor.pin_memory()``: a copy of CPU tensor ``t`` in page-locked host memory."""
    from tensorplug.plugin_api import wrap  # lazy: rarely used
    drv = _drv_ready()
    host = drv.pinned_empty(t._shape, t._dtype.np)
    host[...] = t._data
    return wrap(host, t._dtype, "cpu")


def is_pinned(t):
    """``Tensor.is_pinned()`` of a CPU tensor."""
    d, _ = _drv.probe()
    return d is not None and d.is_pinned(t._data)


def is_simulated():
    """Whether the devices are the simulated mode's (``TENSORPLUG_CUDA_SIMULATE``), not GPUs."""
    d, _ = _drv.probe()
    return d is not None and d.simulated


