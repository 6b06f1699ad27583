"""``tensorplug.amp``: automatic mixed precision, as ``torch.amp``.

* :class:`GradScaler` scales the loss, unscales gradients, skips steps with infinite gradients and
  adapts the scale, as ``torch.amp.GradScaler``, through ordinary operators (so on every backend);
  when disabled (or its device is not available) every method passes through.
* ``autocast``, ``custom_fwd``, ``custom_bwd``, ``is_autocast_available``, and tensorplug's own
  ``policy`` (the op tables, per device type, as data) and ``cache_info`` come from the
  tensorplug-autocast plugin: while it is disabled or not installed they raise an AttributeError
  that names it and says how to enable it.

See docs/autocast.md.
"""

from __future__ import annotations

from ..plugins import plugin_name
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_fwd", "custom_bwd", "is_autocast_available", "policy", "cache_info"]


def __getattr__(name):
    return plugin_name("amp", name)
