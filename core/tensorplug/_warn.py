"""Warnings that point at the user's line, not at tensorplug's internals.

A warning raised deep in a dispatch (a device fallback, a vmap slow path) is
attributed by ``warnings.warn``'s ``stacklevel`` to one fixed frame; the
number of tensorplug frames in between varies (generated op entries,
Autograd kernels, composites). :func:`warn_user` walks up to the first frame
outside the core, its plugins and the generated entries instead.
"""

from __future__ import annotations

import os
import sys
import warnings

_CORE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _internal(filename, plugin_dirs):
    return filename.startswith("<tensorplug") or filename.startswith(_CORE) or filename.startswith(plugin_dirs)


def _plugin_dirs():
    dirs = []
    for name, mod in list(sys.modules.items()):
        if name.startswith("tensorplug_") and "." not in name:
            f = getattr(mod, "__file__", None)
            if f:
                dirs.append(os.path.dirname(os.path.abspath(f)) + os.sep)
    return tuple(dirs)


def warn_user(message, category=UserWarning):
    """``warnings.warn(message, category)`` attributed to the first frame outside tensorplug."""
    plugin_dirs = _plugin_dirs()
    frame, level = sys._getframe(0), 1
    while frame is not None and _internal(os.path.abspath(frame.f_code.co_filename)
                                          if not frame.f_code.co_filename.startswith("<")
                                          else frame.f_code.co_filename, plugin_dirs):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
