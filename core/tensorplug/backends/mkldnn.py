"""``tensorplug.backends.mkldnn``: the oneDNN switch (a setting; the numpy CPU kernels do not use oneDNN)."""

from __future__ import annotations

__all__ = ["is_available", "enabled"]

enabled = True


def is_available():
    """Whether oneDNN kernels are used: False (the CPU backend computes with numpy)."""
    return False
