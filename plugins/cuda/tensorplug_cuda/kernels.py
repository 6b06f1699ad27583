"""The CUDA kernels: tensorplug-cpu's kernel library instantiated with ``xp = cupy``, plus overrides.

:func:`build` runs once, at the first use of a cuda device (the driver is known then):

* the kernel library (:func:`tensorplug_cpu.kernel_library`) is instantiated as the package
  ``tensorplug_cuda._lib`` with the driver's array module (cupy; numpy in the simulated mode), this
  backend's record and a ``wrap`` that puts results on the current device;
* the memory kernels are this plugin's own: allocation through the driver (counted for the memory
  statistics, out-of-memory reported as :class:`tensorplug.cuda.OutOfMemoryError`) and copies
  between host and device and between devices;
* random kernels draw from the device's own generator (:mod:`tensorplug_cuda.random`);
* ``matmul`` and ``addmm`` call cuBLAS in the operands' dtype (:func:`products`);
* the fused kernels of :mod:`tensorplug_cuda.fused` replace chains of library kernels;
* the ops in :data:`HOST_OPS` run on the host (a copy down, the CPU kernel, a copy up, a warning
  once per op): their library kernels use numpy-only routines;
* with more than one device every kernel runs under the guard of its arguments' device, so results
  land there.
"""

from __future__ import annotations

import functools

import numpy as np

import tensorplug
from tensorplug.plugin_api import Tensor, tensor_maker, wrap as wrap_any, lookup_op, run_on_host, warn_user

from .backend import BACKEND, check_dtype
from . import fused, random as _random

CPU = tensorplug.device("cpu")

# ops whose library kernels call routines cupy lacks (numpy.linalg's LAPACK-only factorizations, host
# sampling loops): they run on the host, correctly but through copies, and say so once
HOST_OPS = ("multinomial", "linalg_eig", "linalg_lu_factor_ex", "linalg_ldl_factor_ex", "linalg_ldl_solve", "geqrf")

_STATE = {}  # "lib", "mods", "wrap": filled by build()


def make_wrap(drv):
    """``wrap(native, dtype, dev=None)``: a fresh cuda tensor; ``dev`` defaults to the current device."""
    xp = drv.xp
    devices = BACKEND.devices
    make = tensor_maker(BACKEND, devices[0], native_type=drv.native_type, convert=xp.asarray)
    current = drv.current_device
    if drv.simulated:
        track = drv.track

        def wrap(native, dtype, dev=None):
            if dev is None:
                dev = devices[current()]
            t = make(native, dtype, dev)
            track(t._data, dev.index)
            return t
    elif len(devices) == 1:
        wrap = make  # one device: results are on it, with no device lookup per result
    else:
        def wrap(native, dtype, dev=None):
            return make(native, dtype, devices[current()] if dev is None else dev)
    return wrap


# -- memory ----------------------------------------------------------------------------------------
def empty(size, dtype=None, device=None):
    d = dtype or tensorplug.get_default_dtype()
    check_dtype(d)
    idx = BACKEND.index_of(device)
    return _STATE["wrap"](BACKEND.drv.empty(tuple(size), d.np, idx), d, BACKEND.devices[idx])


def _native_on(t, index, non_blocking=False):
    """``t``'s values as a native array on device ``index`` (the same array when already there)."""
    drv = BACKEND.drv
    if t._device.type == "cuda":
        if t._device.index == index:
            return t._data
        with drv.using(index):  # device to device
            return drv.xp.array(t._data, copy=True)
    return drv.upload(t._data, index, non_blocking)


def copy_(self, src, non_blocking=False):
    drv = BACKEND.drv
    if self._device.type == "cpu":  # device -> host (a host destination is written at once)
        np.copyto(self._data, drv.download(src._data), casting="unsafe")
        return self
    check_dtype(self._dtype)
    idx = self._device.index
    with drv.using(idx):
        drv.xp.copyto(self._data, _native_on(src, idx, non_blocking), casting="unsafe")
    return self


def _to_copy(self, dtype=None, device=None, non_blocking=False):
    d = self._dtype if dtype is None else dtype
    drv = BACKEND.drv
    if device is not None and device.type == "cpu":
        host = drv.download(self._data, non_blocking and d is self._dtype)
        if host.dtype != d.np:
            host = host.astype(d.np)
        return wrap_any(host, d, CPU)
    if device is not None and device.type != "cuda":
        return tensorplug.empty(self._shape, dtype=d, device=device).copy_(self)
    check_dtype(d)
    idx = self._device.index if device is None or device.index is None else device.index
    with drv.using(idx):
        arr = _native_on(self, idx, non_blocking)
        arr = arr.astype(d.np, copy=True) if arr is self._data or arr.dtype != d.np else arr
        return _STATE["wrap"](arr, d, BACKEND.devices[idx])


# -- ops on the host -------------------------------------------------------------------------------
_warned: set = set()


def on_host(name):
    """A kernel for op ``name`` (``"multinomial"``, ``"add.Tensor"``) that runs the CPU kernel on host
    copies of its arguments (``tensorplug.plugin_api.run_on_host``), warning once."""
    op = lookup_op(name if "::" in name else f"tensorplug::{name}")
    drv = BACKEND.drv

    def kernel(*args):
        if name not in _warned:
            _warned.add(name)
            warn_user(f"{name} runs on the host for 'cuda' (copies to and from the device)")
        return run_on_host(op, args, "cuda", download=lambda t: drv.download(t._data),
                           upload=lambda values, dtype, dev: drv.upload(values, dev.index), copy_back=copy_,
                           default_device=lambda: BACKEND.devices[drv.current_device()])

    kernel.__name__ = f"{name}_on_host"
    return kernel


# -- products --------------------------------------------------------------------------------------
_GEMM = frozenset({"float16", "float32", "float64"})


def products(drv, lib):
    """``matmul`` and ``addmm`` straight to cuBLAS (``xp.matmul``) in the operands' float dtype: float16
    on the tensor cores with float32 accumulation, where the library widens half types to float32 on
    the host's BLAS and reorders a few-rows product for OpenBLAS. The simulated mode keeps the
    library's kernels for float16 (numpy's float16 product is neither fast nor accumulated in float32)."""
    xp = drv.xp
    floats = _GEMM - {"float16"} if drv.simulated else _GEMM
    wrap = _STATE["wrap"]
    lib_matmul, lib_addmm = lib["matmul"], lib["addmm"]

    def matmul(self, other):
        if self._dtype.name not in floats:
            return lib_matmul(self, other)
        return wrap(xp.matmul(self._data, other._data), self._dtype)

    def addmm(self, mat1, mat2, beta=1, alpha=1):
        d = self._dtype
        if d.name not in floats or beta != 1 or alpha != 1 or mat1._shape[1] == 0:
            return lib_addmm(self, mat1, mat2, beta, alpha)
        out = xp.matmul(mat1._data, mat2._data)
        out += self._data
        return wrap(out, d)

    return {"matmul": matmul, "addmm": addmm}


# -- the device guard ------------------------------------------------------------------------------
def _args_device(args):
    """The index of the first cuda device among ``args`` (tensors, devices, lists of tensors), or None."""
    for a in args:
        dev = a._device if isinstance(a, Tensor) else (a if isinstance(a, tensorplug.device) else None)
        if dev is None and isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            dev = a[0]._device
        if dev is not None and dev.type == "cuda" and dev.index is not None:
            return dev.index
    return None


def guarded(fn):
    """``fn`` run with its arguments' device current (several devices only)."""
    drv = BACKEND.drv

    @functools.wraps(fn)
    def run(*args, **kwargs):
        idx = _args_device(args)
        if idx is None or idx == drv.current_device():
            return fn(*args, **kwargs)
        with drv.using(idx):
            return fn(*args, **kwargs)
    return run


# -- the table -------------------------------------------------------------------------------------
def build(drv):
    """The cuda kernel table for driver ``drv``: ``{op overload name: kernel}``."""
    from tensorplug_cpu import kernel_library  # lazy: the library is instantiated at the first device use

    wrap = _STATE["wrap"] = make_wrap(drv)
    lib, mods = kernel_library("tensorplug_cuda._lib", xp=drv.xp, backend=BACKEND, device=BACKEND.devices[0],
                               wrap=wrap, host_rng=_random.host_rng, from_host=drv.xp.asarray)
    _STATE["lib"], _STATE["mods"] = lib, mods
    table = dict(lib)
    table.update({"empty": empty, "copy_": copy_, "_to_copy": _to_copy})
    table.update(products(drv, lib))
    table.update(fused.kernels(drv, mods, wrap))
    for name in HOST_OPS:
        if name in table:
            table[name] = on_host(name)
    if drv.device_count() > 1:
        table = {name: guarded(fn) for name, fn in table.items()}
    return table
