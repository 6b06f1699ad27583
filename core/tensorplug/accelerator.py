"""``tensorplug.accelerator``: the current accelerator, as ``torch.accelerator``.

The accelerator is the first registered backend whose record declares
``accelerator = True`` and that is available with at least one device
(``cuda`` first if it is one of them, then the PrivateUse1 backend, then the
others in registration order). Emulated devices (openreg, the minimal example
backend) do not declare it, so a program that picks "the accelerator if there
is one" stays on the CPU. With no such backend ``is_available()`` is False,
``current_accelerator()`` None and ``device_count()`` 0. See docs/runtime.md.
"""

from __future__ import annotations

from . import backend as _backend
from ._privateuse1 import KEY_NAME as _PRIVATEUSE1
from .device import device as _device
from .plugins import complete_pending

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
           "synchronize"]


def _record():
    complete_pending()
    candidates = [b for b in _backend.BACKENDS.values()
                  if getattr(b, "accelerator", False) and b.is_available() and b.device_count() > 0]
    candidates.sort(key=lambda b: (b.name != "cuda", b.key_name != _PRIVATEUSE1))
    return candidates[0] if candidates else None


def current_accelerator(check_available=False):
    """The accelerator's device type as a ``device`` (``device(type='cuda')``), or None when there is none."""
    b = _record()
    return None if b is None else _device(b.name)


def is_available():
    """Whether an accelerator is available."""
    return _record() is not None


def device_count():
    """The number of devices of the current accelerator (0 when there is none)."""
    b = _record()
    return 0 if b is None else int(b.device_count())


def _require():
    b = _record()
    if b is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return b


def current_device_index():
    """The index of the current device of the accelerator."""
    b = _require()
    return _backend.canonical_device(_device(b.name)).index or 0


def set_device_index(device):
    """Select the current device of the accelerator (negative indices are ignored)."""
    b = _require()
    index = device.index if isinstance(device, _device) else device
    if index is not None and index >= 0:
        _backend.canonical_device(_device(b.name, index))


def synchronize(device=None):
    """Wait for all work on the accelerator's device to finish."""
    b = _require()
    b.synchronize(device)
