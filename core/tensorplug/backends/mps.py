"""``tensorplug.backends.mps``: Apple's Metal backend: available only when a plugin serves ``"mps"``."""

from __future__ import annotations

from .. import backend as _backend

__all__ = ["is_available", "is_built"]


def is_built():
    """Whether an mps backend is registered."""
    return "mps" in _backend.BACKENDS


def is_available():
    """Whether an mps device can be used."""
    b = _backend.BACKENDS.get("mps")
    return b is not None and bool(b.is_available())
