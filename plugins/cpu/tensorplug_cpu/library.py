"""One kernel library for numpy-like array modules.

The kernel modules of this package compute with the array module ``xp`` they import from their
package's ``xp`` module (see ``xp.py``). :func:`kernel_library` instantiates them a second time, as
the submodules of a new package whose ``xp`` module the caller provides: the same source, with
``xp`` bound to another array module (cupy) and results wrapped as tensors of another backend. The
CPU's own modules are untouched, so its kernels lose nothing to the indirection: ``xp`` is a module
global, looked up exactly as ``np`` was.

A backend built this way overrides the kernels where its array module differs from numpy (and
registers its own memory kernels: ``empty``, ``copy_``, ``_to_copy``, ``as_strided``); docs/cuda.md
lists what tensorplug-cuda overrides.
"""

from __future__ import annotations

import importlib
import importlib.util
import importlib.machinery
import os
import sys
import types

# the kernel modules, in registration order; each exports KERNELS = {op overload name: kernel}
KERNEL_MODULE_NAMES = ("kernels", "elementwise", "reductions", "indexing", "random", "getitem", "views", "linalg",
                       "linalg_factor", "conv", "special", "statistics", "complex", "fft", "attention", "nn_extra",
                       "index_extra", "optim", "special_bessel", "special_more")

_HERE = os.path.dirname(os.path.abspath(__file__))


def merge_kernels(modules, what="CPU"):
    """``{op overload name: kernel}`` over ``modules``' KERNELS tables; an op in two tables is an error."""
    table = {}
    for mod in modules:
        for name, fn in mod.KERNELS.items():
            if name in table:
                raise RuntimeError(f"two {what} kernels for {name}")
            table[name] = fn
    return table


def kernel_library(package, *, xp, backend, device, wrap, host_rng, from_host):
    """Instantiate this package's kernel modules as ``package.<module>``, computing with ``xp``.

    ``xp`` is a numpy-like array module (cupy, or numpy itself); ``backend`` the
    :class:`tensorplug.plugin_api.Backend` record the kernels serve; ``device`` the device fresh
    results get when a kernel does not say; ``wrap(native, dtype[, dev])`` builds a fresh tensor of
    that backend around a native array (``tensorplug.plugin_api.tensor_maker`` makes one);
    ``host_rng(generator)`` the numpy ``Generator`` random kernels draw from (the device's default
    generator when ``generator`` is None); ``from_host(values)`` a host numpy array (the draws) as a
    native array.

    Returns ``(table, modules)``: the merged ``{op overload name: kernel}`` table and
    ``{module name: module}``, so the caller can read helpers (``modules["elementwise"].quiet``).
    A package name can be instantiated once per process; a second call returns the first result.
    """
    pkg = sys.modules.get(package)
    if pkg is not None:
        if getattr(pkg, "_kernel_library", None) is None:
            raise ValueError(f"kernel_library: {package!r} is an existing module, not a kernel library")
        return pkg._kernel_library
    spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
    spec.submodule_search_locations = [_HERE]
    pkg = importlib.util.module_from_spec(spec)
    pkg.__doc__ = f"tensorplug-cpu's kernel library instantiated with xp = {getattr(xp, '__name__', xp)!r}"
    ctx = types.ModuleType(f"{package}.xp", f"The context of the kernel library {package!r}.")
    ctx.xp, ctx.BACKEND, ctx.DEVICE, ctx.wrap = xp, backend, device, wrap
    ctx.host_rng, ctx.from_host = host_rng, from_host
    ctx.__all__ = ["xp", "BACKEND", "DEVICE", "wrap", "host_rng", "from_host"]
    sys.modules[package] = pkg
    sys.modules[ctx.__name__] = ctx
    pkg.xp = ctx
    try:
        mods = {name: importlib.import_module(f"{package}.{name}") for name in KERNEL_MODULE_NAMES}
    except BaseException:
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]
        raise
    result = (merge_kernels(mods.values(), what=package), mods)
    pkg._kernel_library = result
    return result
