"""Plugins that register a key and a fallback, then raise SystemExit or KeyboardInterrupt.

Entry points name the objects: ``toy_plugins.exits:SYSTEM_EXIT`` and ``toy_plugins.exits:INTERRUPT``.
Loading must contain them like any failure (a KeyboardInterrupt is re-raised once undone).
"""

from __future__ import annotations

import tensorplug
from tensorplug.dispatch import FunctionalityKey

__version__ = "0.0.1"


class _Exits:
    TENSORPLUG_API = (1, 0)  # the plugin API this toy plugin is written for

    def __init__(self, key, priority, error):
        self.key, self.priority, self.error = key, priority, error

    @tensorplug.hookimpl
    def tensorplug_functionality_keys(self):
        return [FunctionalityKey(self.key, self.priority)]

    @tensorplug.hookimpl
    def tensorplug_register_kernels(self, library):
        library("tensorplug", "IMPL").fallback(tensorplug.fallthrough_kernel, self.key)
        raise self.error


SYSTEM_EXIT = _Exits("Exits", 46, SystemExit(3))
INTERRUPT = _Exits("Interrupts", 47, KeyboardInterrupt())
