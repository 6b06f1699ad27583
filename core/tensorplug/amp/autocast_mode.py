"""``autocast``: a context manager whose casting a plugin provides (the core's does nothing)."""

from __future__ import annotations

import functools
import warnings

from .. import dtypes as _dt
from .. import backend as _backend

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "set_autocast_handler", "get_autocast_handler", "custom_fwd", "custom_bwd"]

_HANDLER = [None]


def set_autocast_handler(handler):
    """Install the object that implements autocasting (``None`` removes it); returns the previous one.

    The handler is asked ``enter(device_type, dtype, enabled, cache_enabled)``
    when an :class:`autocast` region starts (its return value is passed back
    to ``exit(token)`` when the region ends), ``is_enabled(device_type)`` and
    ``is_available(device_type)``. An autocast plugin calls this when it is
    enabled and restores the previous handler when it is disabled.
    """
    previous = _HANDLER[0]
    _HANDLER[0] = handler
    return previous


def get_autocast_handler():
    """The installed autocast handler, or None."""
    return _HANDLER[0]


def _default_dtype(device_type):
    return _dt.float16 if device_type == "cuda" else _dt.bfloat16


def is_autocast_available(device_type):
    """Whether ``device_type`` can autocast: only with an autocast handler that supports it."""
    handler = _HANDLER[0]
    return handler is not None and bool(handler.is_available(device_type))


def is_autocast_enabled(device_type=None):
    """Whether an autocast region is active for ``device_type`` (always False without a handler)."""
    handler = _HANDLER[0]
    return handler is not None and bool(handler.is_enabled(device_type))


def get_autocast_dtype(device_type):
    """The dtype autocast regions on ``device_type`` cast to by default (float16 on cuda, bfloat16 elsewhere)."""
    handler = _HANDLER[0]
    get = getattr(handler, "get_dtype", None)
    return get(device_type) if get is not None else _default_dtype(device_type)


def _device_available(device_type):
    if device_type == "cpu":
        return True
    b = _backend.BACKENDS.get(device_type)
    return b is not None and bool(b.is_available()) and b.device_count() > 0


class autocast:
    """Run a region in mixed precision: ``with tensorplug.autocast(device_type="cpu", dtype=tensorplug.bfloat16):``.

    Arguments are PyTorch's (``device_type``, ``dtype=None``, ``enabled=True``,
    ``cache_enabled=None``); ``dtype`` defaults to float16 on cuda and
    bfloat16 elsewhere. Usable as a decorator too. Without an autocast
    handler (see :func:`set_autocast_handler`) the region runs unchanged.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if enabled and not _device_available(device_type):
            what = "CUDA is not available or torch_xla is imported" if device_type == "cuda" else \
                f"device type '{device_type}' is not available"
            warnings.warn(f"{what}. Disabling autocast.", UserWarning, stacklevel=2)
            enabled = False
        if enabled and device_type == "cpu" and self.fast_dtype not in (_dt.bfloat16, _dt.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                          UserWarning, stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)
        self._token = None

    def __enter__(self):
        handler = _HANDLER[0]
        if handler is not None:
            self._token = handler.enter(self.device, self.fast_dtype, self._enabled, self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        handler = _HANDLER[0]
        if handler is not None:
            token, self._token = self._token, None
            handler.exit(token)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's ``forward`` (as ``torch.amp.custom_fwd``): runs it unchanged here."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's ``backward`` (as ``torch.amp.custom_bwd``): runs it unchanged here."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
