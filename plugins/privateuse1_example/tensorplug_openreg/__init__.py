"""tensorplug-openreg: a simulated accelerator in C++, on the PrivateUse1 slot renamed ``openreg``.

Memory is allocated and owned by the C++ runtime (``_C``, built with pybind11);
values cross to the host only through explicit copies. A core set of kernels
runs in C++ (``kernels.py``); every other operator is served by a boxed
fallback to the CPU (``fallback.py``). The device module is
``tensorplug.openreg`` (``api.py``). docs/openreg.md is the user page.
"""

from __future__ import annotations

import tensorplug
from tensorplug.plugin_api import initial_seed

from . import _C, api, kernels
from .backend import BACKEND
from .fallback import cpu_fallback

__version__ = "0.2.0"
TENSORPLUG_API = (1, 0)  # the plugin API this plugin is written for (tensorplug.plugin_api)

Array = _C.Array
api.manual_seed_all(initial_seed())  # fresh processes start alike, as the other backends do


@tensorplug.hookimpl
def tensorplug_backends():
    return [BACKEND]


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    lib = library("tensorplug", "IMPL", "PrivateUse1")
    for name, fn in kernels.KERNELS.items():
        lib.impl(name, fn)
    lib.fallback(cpu_fallback)


@tensorplug.hookimpl
def tensorplug_namespace():
    return {"openreg": api}


@tensorplug.hookimpl
def tensorplug_conformance():
    return {"backend": "openreg"}
