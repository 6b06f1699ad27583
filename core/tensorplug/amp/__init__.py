"""``tensorplug.amp``: automatic mixed precision, as ``torch.amp``.

* :class:`autocast` (also ``tensorplug.autocast``) is a context manager and
  decorator. The core casts nothing: entering it asks the autocast handler a
  plugin installed with :func:`set_autocast_handler`; with none installed it
  checks its arguments as PyTorch does and then does nothing.
* :class:`GradScaler` scales the loss, unscales gradients, skips steps with
  infinite gradients and adapts the scale, as ``torch.amp.GradScaler``; when
  disabled (or its device is not available) every method passes through.

See docs/runtime.md.
"""

from __future__ import annotations

from .autocast_mode import (autocast, is_autocast_available, is_autocast_enabled, get_autocast_dtype,
                            set_autocast_handler, get_autocast_handler, custom_fwd, custom_bwd)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "set_autocast_handler", "get_autocast_handler", "custom_fwd", "custom_bwd"]
