"""The kernel library's context: the array module its kernels compute with and the backend they serve.

Every kernel module of this package takes from here ``xp`` (the numpy-like array module),
``BACKEND`` (the backend record), ``DEVICE`` (the device of fresh results), ``wrap``
(``wrap(native, dtype)``: a fresh tensor of that backend), ``host_rng`` (``host_rng(generator)``: the
numpy ``Generator`` random kernels draw from, the device's default one for None) and ``from_host``
(a host numpy array as a native array: the identity here). For tensorplug-cpu this module binds them to numpy and the
CPU record. :func:`tensorplug_cpu.kernel_library` instantiates the same kernel modules again in a
package of another name whose ``xp`` module binds them to another array module and backend
(tensorplug-cuda: cupy and the CUDA record), so one library of kernels serves both.
"""

from __future__ import annotations

import numpy as xp

from tensorplug.plugin_api import tensor_maker, host_rng

from .backend import BACKEND, CPU as DEVICE

wrap = tensor_maker(BACKEND, DEVICE, native_type=xp.ndarray, convert=xp.asarray)
"""``wrap(arr, dtype)``: a fresh CPU tensor around ``arr`` (numpy scalars become 0-d arrays)."""



def from_host(values):
    """Host values as a native array: numpy's own arrays here."""
    return values


__all__ = ["xp", "BACKEND", "DEVICE", "wrap", "host_rng", "from_host"]
