"""Utilities outside the tensor core: :mod:`tensorplug.utils.data` (datasets and the DataLoader) and
:mod:`tensorplug.utils.checkpoint` (activation checkpointing, loaded on first use)."""

from __future__ import annotations

import importlib

from . import data

__all__ = ["data", "checkpoint"]


def __getattr__(name):
    if name == "checkpoint":
        return importlib.import_module(f"{__name__}.checkpoint")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
