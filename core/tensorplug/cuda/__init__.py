"""``tensorplug.cuda``: PyTorch's CUDA runtime namespace, answering "no CUDA" until a backend provides it.

The core holds no CUDA code. Every function here asks the backend record
registered for the device type ``"cuda"`` (``tensorplug.backend.BACKENDS``):

* with no such backend (the usual CPU install) the answers are those of a
  CPU-only PyTorch build: ``is_available()`` is False, ``device_count()`` 0,
  the seeding functions and ``empty_cache()`` do nothing, the memory counters
  are 0, and what needs a device (``current_device()``, ``get_device_name()``,
  ``synchronize()``, ``set_device()``...) raises
  ``AssertionError("Torch not compiled with CUDA enabled")``;
* once a plugin registers a backend named ``"cuda"``, ``is_available``,
  ``device_count``, ``synchronize`` and the seeds go to that record's methods,
  and every function the record's ``runtime`` object (any object, e.g. a
  module) defines replaces the one here: ``tensorplug.cuda.memory_allocated()``
  calls ``record.runtime.memory_allocated()``. Names this module lacks
  (``Stream``, ``Event``...) are looked up on the runtime as well.

See docs/runtime.md.
"""

from __future__ import annotations

import functools
import importlib

from .. import backend as _backend
from ..plugins import complete_pending
from ..device import device as _device

__all__ = ["is_available", "device_count", "current_device", "set_device", "get_device_name",
           "get_device_capability", "get_device_properties", "is_bf16_supported", "is_initialized", "init",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed", "synchronize", "empty_cache",
           "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "memory_stats", "device", "amp"]

NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _record():
    """The backend record serving ``"cuda"``, or None."""
    b = _backend.BACKENDS.get("cuda")
    if b is None:
        if complete_pending():
            b = _backend.BACKENDS.get("cuda")
    return b


def _runtime_fn(name):
    b = _record()
    return None if b is None else getattr(getattr(b, "runtime", None), name, None)


def _provided(fn):
    """Let the cuda backend's ``runtime.<name>`` replace this function while it is registered."""
    name = fn.__name__

    @functools.wraps(fn)
    def call(*args, **kwargs):
        impl = _runtime_fn(name)
        if impl is not None:
            return impl(*args, **kwargs)
        return fn(*args, **kwargs)
    return call


def _lazy_init():
    if _record() is None or not is_available():
        raise AssertionError(NOT_COMPILED)


@_provided
def is_available():
    """Whether a CUDA device can be used: False unless a plugin serves ``"cuda"`` and has a device."""
    b = _record()
    return b is not None and bool(b.is_available()) and b.device_count() > 0


@_provided
def device_count():
    """The number of CUDA devices (0 without a cuda backend)."""
    b = _record()
    return 0 if b is None or not b.is_available() else int(b.device_count())


@_provided
def is_initialized():
    """Whether CUDA state was initialised: False without a cuda backend."""
    return False


@_provided
def init():
    """Initialise CUDA; raises ``AssertionError`` when there is none, as PyTorch's CPU build does."""
    _lazy_init()


@_provided
def current_device():
    """The index of the current CUDA device."""
    _lazy_init()
    return 0


@_provided
def set_device(device):
    """Select the current CUDA device (a negative index is ignored, as in PyTorch)."""
    index = device.index if isinstance(device, _device) else (_device(device).index if isinstance(device, str)
                                                              else device)
    if index is not None and index >= 0:
        _lazy_init()


@_provided
def get_device_name(device=None):
    """The name of a CUDA device."""
    _lazy_init()
    return "cuda"


@_provided
def get_device_capability(device=None):
    """The ``(major, minor)`` compute capability of a CUDA device."""
    _lazy_init()
    return (0, 0)


@_provided
def get_device_properties(device=None):
    """The properties of a CUDA device."""
    _lazy_init()
    return None


@_provided
def is_bf16_supported(including_emulation=True):
    """Whether bfloat16 runs on the current CUDA device: False without one."""
    return False


@_provided
def manual_seed(seed):
    """Seed the current CUDA device's generator (no effect without a cuda backend)."""
    int(seed)
    b = _record()
    if b is not None:
        b.manual_seed(int(seed))


@_provided
def manual_seed_all(seed):
    """Seed every CUDA device's generator (no effect without a cuda backend)."""
    manual_seed(seed)


@_provided
def seed():
    """Seed the current CUDA device from a random number (no effect without a cuda backend)."""


@_provided
def seed_all():
    """Seed every CUDA device from a random number (no effect without a cuda backend)."""


@_provided
def initial_seed():
    """The current CUDA device's initial seed."""
    _lazy_init()
    return 0


@_provided
def synchronize(device=None):
    """Wait for all work on a CUDA device to finish."""
    _lazy_init()
    _record().synchronize(device)


@_provided
def empty_cache():
    """Release cached device memory (nothing to do without a cuda backend)."""


@_provided
def memory_stats(device=None):
    """The caching allocator's statistics: empty without a cuda backend."""
    return {}


@_provided
def memory_allocated(device=None):
    """Bytes of device memory held by tensors: 0 without a cuda backend."""
    return 0


@_provided
def max_memory_allocated(device=None):
    """Peak bytes held by tensors: 0 without a cuda backend."""
    return 0


@_provided
def memory_reserved(device=None):
    """Bytes reserved by the caching allocator: 0 without a cuda backend."""
    return 0


@_provided
def max_memory_reserved(device=None):
    """Peak bytes reserved by the caching allocator: 0 without a cuda backend."""
    return 0


@_provided
def reset_peak_memory_stats(device=None):
    """Reset the peak memory counters (nothing to do without a cuda backend)."""


class device:
    """Context manager that makes ``device`` the current CUDA device (``with tensorplug.cuda.device(0):``)."""

    def __init__(self, device):
        self.idx = device.index if isinstance(device, _device) else device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None and self.idx >= 0:
            self.prev_idx = current_device()
            set_device(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            set_device(self.prev_idx)
        return False


def __getattr__(name):
    if name == "amp":
        return importlib.import_module(f"{__name__}.amp")
    impl = None if name.startswith("__") else _runtime_fn(name)
    if impl is None:
        raise AttributeError(f"module 'tensorplug.cuda' has no attribute '{name}'")
    return impl
