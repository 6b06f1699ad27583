"""``tensorplug.backends.cudnn``: cuDNN switches (``enabled``, ``benchmark``, ``deterministic``, ``allow_tf32``).

They are settings a cuda backend plugin may honour; without one,
``is_available()`` is False and ``version()`` None, as in PyTorch's CPU build.
"""

from __future__ import annotations

import contextlib
import sys

from .. import backend as _backend

__all__ = ["is_available", "version", "flags", "enabled", "benchmark", "deterministic", "allow_tf32",
           "benchmark_limit"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def _runtime():
    b = _backend.BACKENDS.get("cuda")
    return getattr(b, "runtime", None) if b is not None else None


def is_available():
    """Whether cuDNN can be used: only when the cuda backend's runtime says so."""
    fn = getattr(_runtime(), "cudnn_is_available", None)
    return bool(fn()) if fn is not None else False


def version():
    """The cuDNN version, or None without one."""
    fn = getattr(_runtime(), "cudnn_version", None)
    return fn() if fn is not None else None


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Set the flags for the duration of a ``with`` block, then restore them."""
    mod = sys.modules[__name__]
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    saved = {n: getattr(mod, n) for n in names}
    new = {"enabled": enabled, "benchmark": benchmark, "benchmark_limit": benchmark_limit,
           "deterministic": deterministic, "allow_tf32": allow_tf32}
    for n, v in new.items():
        setattr(mod, n, v)
    try:
        yield
    finally:
        for n, v in saved.items():
            setattr(mod, n, v)


