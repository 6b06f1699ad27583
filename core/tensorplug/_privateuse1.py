"""The PrivateUse1 slot and its renaming: device methods named after the backend that takes it.

A backend record with ``key_name = "PrivateUse1"`` (fixed ``slot = 15``) is an
out-of-tree device, like PyTorch's PrivateUse1 renamed with
``rename_privateuse1_backend``. While its plugin is enabled, the core adds,
under the record's ``name`` (``openreg`` say):

* ``Tensor.openreg(device=None)``: a copy on that device, like ``Tensor.cuda()``;
* ``Tensor.is_openreg``: whether the tensor lives there;
* ``nn.Module.openreg(device=None)``: moves parameters and buffers there.

Disabling the plugin removes them. ``nn`` loads lazily, so the Module method is
set when ``nn.modules.module`` is imported if the backend came first.
"""

from __future__ import annotations

import sys

from .device import device as _device
from .tensor import Tensor

KEY_NAME = "PrivateUse1"

_INSTALLED: dict = {}  # backend name -> [(class, attribute)] set for it
_MODULE_PATH = "tensorplug.nn.modules.module"


def renamed():
    """The device type currently on the PrivateUse1 slot, or None."""
    return next(iter(_INSTALLED), None)


def _target(name, device):
    dev = _device(name) if device is None else (_device(name, device) if isinstance(device, int)
                                                  else _device(device))
    if dev.type != name:
        raise RuntimeError(f"Invalid device, must be {name} device, got {dev}")
    return dev


def _tensor_method(name):
    def move(self, device=None, non_blocking=False):
        return self.to(_target(name, device), non_blocking=non_blocking)
    move.__name__ = name
    move.__doc__ = (f"A copy of this tensor on the {name} device ``device`` (an index, a device or None for the "
                    f"current one); returns self if it is already there.")
    return move


def _is_property(name):
    return property(lambda self: self._device.type == name,
                    doc=f"Whether the tensor is stored on a {name} device.")


def _module_method(name):
    def move(self, device=None):
        dev = _target(name, device)
        return self._apply(lambda t: t.to(dev))
    move.__name__ = name
    move.__doc__ = f"Move parameters and buffers to the {name} device ``device``; returns self."
    return move


def _set(cls, attr, value, added):
    if hasattr(cls, attr):
        raise ValueError(f"the PrivateUse1 backend name would shadow {cls.__name__}.{attr}")
    setattr(cls, attr, value)
    added.append((cls, attr))


def install(name):
    """Add the device methods for backend ``name`` (it has just taken the PrivateUse1 slot)."""
    added = _INSTALLED[name] = []
    _set(Tensor, name, _tensor_method(name), added)
    _set(Tensor, f"is_{name}", _is_property(name), added)
    mod = sys.modules.get(_MODULE_PATH)
    if mod is not None:
        _set(mod.Module, name, _module_method(name), added)


def remove(name):
    """Remove what :func:`install` added for ``name`` (nothing if it added nothing)."""
    for cls, attr in _INSTALLED.pop(name, ()):
        delattr(cls, attr)


def install_module_methods(module_cls):
    """Called once by ``nn.modules.module``: the Module method of a backend renamed before nn loaded."""
    for name, added in _INSTALLED.items():
        _set(module_cls, name, _module_method(name), added)
