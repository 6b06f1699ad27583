"""A plugin that declares a key and a backend, registers a kernel and a fallback, then raises.

Enabling it must fail cleanly: everything it registered is removed again.
"""

from __future__ import annotations

TENSORPLUG_API = (1, 0)  # the plugin API this toy plugin is written for

import tensorplug
from tensorplug.backend import Backend
from tensorplug.dispatch import FunctionalityKey

__version__ = "0.0.1"


class BrokenBackend(Backend):
    name = "brokendev"
    key_name = "BrokenDev"


@tensorplug.hookimpl
def tensorplug_functionality_keys():
    return [FunctionalityKey("Broken", 44)]


@tensorplug.hookimpl
def tensorplug_backends():
    return [BrokenBackend()]


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    lib = library("tensorplug", "IMPL")
    lib.impl("neg", lambda self: self, "BrokenDev")
    lib.fallback(tensorplug.fallthrough_kernel, "Broken")
    raise RuntimeError("boom: the broken plugin fails on purpose")
