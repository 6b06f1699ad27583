"""tensorplug-cpu: the CPU backend, with kernels on numpy.

Hook implementations only; the backend record is in ``backend.py`` and the
kernels in the modules beside it, each exporting a ``KERNELS`` table
``{op overload name: kernel}``. The kernels compute with an array module ``xp``
(``xp.py``); :func:`kernel_library` instantiates them again with another one
(tensorplug-cuda does, with cupy).
"""

from __future__ import annotations

import tensorplug

from .backend import BACKEND
from . import allocator
# the kernel modules, by name in KERNEL_MODULE_NAMES order (KERNEL_MODULES reads them from this namespace)
from . import kernels, elementwise, reductions, indexing, random, getitem, views  # noqa: F401
from . import linalg, linalg_factor  # noqa: F401
from . import conv  # noqa: F401
from . import special, statistics  # noqa: F401
from . import complex, fft  # noqa: F401
from . import attention  # noqa: F401
from . import nn_extra  # noqa: F401
from . import index_extra  # noqa: F401
from . import optim  # noqa: F401
from . import special_bessel  # noqa: F401
from . import special_more  # noqa: F401
from .library import kernel_library, merge_kernels, KERNEL_MODULE_NAMES
from .lowering import LOWERING

__version__ = "0.2.0"
__all__ = ["BACKEND", "KERNEL_MODULES", "KERNEL_MODULE_NAMES", "LOWERING", "all_kernels", "kernel_library", "merge_kernels"]
TENSORPLUG_API = (1, 3)  # the plugin API this plugin is written for (tensorplug.plugin_api)
BACKEND.compile_lowering = LOWERING  # tensorplug-compile's direct numpy calls (lowering.py)

KERNEL_MODULES = tuple(globals()[name] for name in KERNEL_MODULE_NAMES)


def all_kernels():
    """The CPU's ``{op overload name: kernel}`` table."""
    return merge_kernels(KERNEL_MODULES)


@tensorplug.hookimpl
def tensorplug_backends():
    allocator.tune()  # large temporaries stay in glibc's heap (see allocator.py)
    return [BACKEND]


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    lib = library("tensorplug", "IMPL", "CPU")
    for name, fn in all_kernels().items():
        lib.impl(name, fn)


@tensorplug.hookimpl
def tensorplug_conformance():
    """The CPU is the reference backend: every op of the database, in every dtype, with no xfails."""
    return {"backend": "cpu", "xfail": {}, "skip": {}}
