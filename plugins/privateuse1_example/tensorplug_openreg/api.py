"""``tensorplug.openreg``: the device module users see (like ``torch.cuda``).

Devices are numbered ``0 .. device_count() - 1``; an argument ``device`` may be
an index, a device (``"openreg:1"``) or None for the current device. Memory
statistics count bytes in the C++ caching allocator's size classes.
"""

from __future__ import annotations

import tensorplug

from . import _C
from . import backend as _b
from .backend import current_device, set_device

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize", "manual_seed",
           "manual_seed_all", "initial_seed", "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats",
           "memory_reserved", "empty_cache"]


def _index(device):
    if device is None:
        return _b.current_device()
    if isinstance(device, int):
        idx = device
    else:
        dev = tensorplug.device(device)
        if dev.type != "openreg":
            raise ValueError(f"Expected an openreg device, but got: {dev}")
        idx = _b.current_device() if dev.index is None else dev.index
    if not 0 <= idx < _C.device_count():
        raise RuntimeError(f"openreg device index {idx} is out of range (device_count() is {_C.device_count()})")
    return idx


def is_available():
    """Whether openreg devices can be used (always True: they are simulated in host memory)."""
    return _C.device_count() > 0


def device_count():
    """The number of openreg devices (``TENSORPLUG_OPENREG_DEVICES`` when the plugin loaded, default 2)."""
    return _C.device_count()


def synchronize(device=None):
    """Wait for all work queued on ``device``. openreg kernels finish before they return, so this
    only orders the call against the device's allocator."""
    _C.synchronize(_index(device))


def manual_seed(seed):
    """Seed the random generator of the current openreg device."""
    _C.manual_seed(_b.current_device(), int(seed) % (1 << 64))


def manual_seed_all(seed):
    """Seed the random generators of every openreg device."""
    for i in range(_C.device_count()):
        _C.manual_seed(i, int(seed) % (1 << 64))


def initial_seed(device=None):
    """The seed the generator of ``device`` was last seeded with."""
    return _C.initial_seed(_index(device))


def memory_allocated(device=None):
    """Bytes held by live tensors on ``device``."""
    return _C.memory_allocated(_index(device))


def max_memory_allocated(device=None):
    """The peak of :func:`memory_allocated` since the start or the last :func:`reset_peak_memory_stats`."""
    return _C.max_memory_allocated(_index(device))


def reset_peak_memory_stats(device=None):
    """Restart the peak that :func:`max_memory_allocated` reports from the current allocation."""
    _C.reset_peak_memory_stats(_index(device))


def memory_reserved(device=None):
    """Bytes the allocator holds on ``device``: live tensors plus freed blocks kept for reuse."""
    return _C.memory_reserved(_index(device))


def empty_cache(device=None):
    """Release the freed blocks the allocator keeps (on ``device``, or on every device if None)."""
    for i in (range(_C.device_count()) if device is None else (_index(device),)):
        _C.empty_cache(i)
