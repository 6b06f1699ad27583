"""A plugin that needs another plugin's backend: an operator with a kernel for ``TestDev`` only.

Its name sorts before any name given to :mod:`.testdev` in the tests, so discovery in name order
would enable it before the backend exists.
"""

from __future__ import annotations

TENSORPLUG_API = (1, 0)  # the plugin API this toy plugin is written for

import tensorplug

from .testdev import result

__version__ = "0.0.1"


def double(x):
    return result(x._data * 2, x._dtype)


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    lib = library("testdev_extras", "DEF")
    lib.define("double(Tensor x) -> Tensor")
    lib.impl("double", double, "TestDev")
