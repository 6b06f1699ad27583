"""A functionality key ``Logging`` at priority 12, between Autograd (24) and Dense (8).

Its boxed fallback appends ``(thread name, op qualname, key set)`` to
:data:`LOG` for every op that reaches the key and redispatches below it. A
thread switches it on with ``tensorplug.logging_mode()`` (the TLS include
set); a tensor switches it on by carrying the key (:func:`tag`).
"""

from __future__ import annotations

TENSORPLUG_API = (1, 0)  # the plugin API this toy plugin is written for

import threading

import tensorplug
from tensorplug.dispatch import FunctionalityKey, include_keys, REGISTRY

__version__ = "0.0.1"

PRIORITY = 12
LOG: list = []


def log_and_redispatch(op, ks, *args):
    """The boxed fallback: one function for every operator."""
    LOG.append((threading.current_thread().name, op.qualname, ks))
    return op.redispatch(ks, *args)


def logging_mode():
    """Log every op this thread runs inside the ``with`` block."""
    return include_keys("Logging")


def tag(t):
    """Give tensor ``t`` the Logging key, so every op on it is logged."""
    t._ks |= REGISTRY.functionality["Logging"].bit
    return t


@tensorplug.hookimpl
def tensorplug_functionality_keys():
    return [FunctionalityKey("Logging", PRIORITY)]


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    library("tensorplug", "IMPL").fallback(log_and_redispatch, "Logging")


@tensorplug.hookimpl
def tensorplug_namespace():
    return {"logging_mode": logging_mode}
