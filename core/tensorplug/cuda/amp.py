"""``tensorplug.cuda.amp``: PyTorch's deprecated spellings of ``tensorplug.amp.autocast("cuda")`` and ``GradScaler("cuda")``."""

from __future__ import annotations

import warnings

from .. import amp as _amp
from .. import dtypes as _dt

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


def autocast(enabled=True, dtype=_dt.float16, cache_enabled=True):
    """``tensorplug.amp.autocast("cuda", ...)`` with a FutureWarning, as ``torch.cuda.amp.autocast``
    (the autocast plugin provides it)."""
    warnings.warn("`tensorplug.cuda.amp.autocast(args...)` is deprecated. Please use "
                  "`tensorplug.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
    return _amp.autocast("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``tensorplug.amp.GradScaler("cuda", ...)`` with a FutureWarning, as ``torch.cuda.amp.GradScaler``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`tensorplug.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`tensorplug.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``tensorplug.amp.custom_fwd(device_type="cuda")``."""
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """``tensorplug.amp.custom_bwd(device_type="cuda")``."""
    return _amp.custom_bwd(bwd, device_type="cuda")
