"""tensorplug-minimal: a complete backend plugin in pure Python (docs/writing-a-backend.md).

The device ``minimal`` keeps every tensor in a ``bytearray`` that it owns; values move
between it and the host only through explicit copies. It implements a few kernels
natively and serves every other operator through a boxed fallback to the CPU.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

import tensorplug
from tensorplug.plugin_api import (Backend, Tensor, binary_dtype, sum_dtype, key_set, tensor_maker, wrap, wrap_view,
                                   written_arguments)

__version__ = "0.2.0"
TENSORPLUG_API = (1, 0)  # the plugin API this plugin is written for (tensorplug.plugin_api)

DEVICE = tensorplug.device("minimal", 0)  # the one device: minimal:0, as cuda:0 for cuda
CPU = tensorplug.device("cpu")


class Array:
    """The native array: a strided window (in elements) on a ``bytearray`` root buffer."""

    __slots__ = ("root", "shape", "strides", "offset", "dtype")

    def __init__(self, root, shape, strides, offset, dtype):
        self.root, self.shape, self.strides, self.offset, self.dtype = root, tuple(shape), tuple(strides), offset, dtype


def contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.insert(0, step)
        step *= max(n, 1)
    return tuple(strides)


def view(a):
    """A numpy window on the device memory, for the kernels to compute with (never handed out)."""
    isz = a.dtype.itemsize
    off = 0 if 0 in a.shape else a.offset * isz  # an empty view addresses no memory
    return np.ndarray(a.shape, a.dtype, buffer=a.root, offset=off, strides=[s * isz for s in a.strides])


def upload(values):
    """Copy host values into fresh device memory."""
    values = np.asarray(values)
    a = Array(bytearray(values.nbytes), values.shape, contiguous_strides(values.shape), 0, values.dtype)
    view(a)[...] = values
    return a


class MinimalBackend(Backend):
    """The backend record: memory and metadata of the ``minimal`` device."""

    name = "minimal"
    key_name = "Minimal"
    slot = 12  # fixed, so the key bit is the same each time the plugin is enabled

    def normalize_device(self, dev):
        if dev.index not in (None, 0):
            raise RuntimeError(f"minimal device index must be 0, got {dev.index}")
        return DEVICE

    def empty(self, shape, dtype, device):
        return Array(bytearray(math.prod(shape) * dtype.itemsize), shape, contiguous_strides(shape), 0, dtype.np)

    def from_numpy(self, array, device):
        return upload(array)

    def to_numpy(self, native):
        return view(native).copy()  # a host copy: device memory is never shared with numpy users

    def strides(self, native):
        return native.strides

    def storage(self, native):
        return native.root, native.offset

    def as_strided(self, root, shape, strides, offset, dtype):
        return Array(root, shape, strides, offset, dtype.np)

    def storage_nbytes(self, root):
        return len(root)


# -- native kernels: arguments positionally in schema order, already checked by the core --
BACKEND = MinimalBackend()  # one record for the life of the process: make() reads its key set
make = tensor_maker(BACKEND, DEVICE)


def result(values, dtype):
    return make(upload(np.asarray(values).astype(dtype.np, copy=False)), dtype)


def values(t, dtype=None):
    """A numpy array over ``t``'s memory (cpu or minimal), in ``dtype`` if given."""
    a = view(t._data) if t._device.type == "minimal" else t._data
    return a if dtype is None else a.astype(dtype.np, copy=False)


def compute_dtype(d):  # half types compute in float32 and round once, as PyTorch's CPU does
    return tensorplug.float32 if d in (tensorplug.float16, tensorplug.bfloat16) else d


def empty(size, dtype=None, device=None):
    d = dtype or tensorplug.get_default_dtype()
    return make(BACKEND.empty(size, d, DEVICE), d)


def fill_(self, value):
    values(self).fill(value if self._dtype.is_floating_point or isinstance(value, bool) else int(value))
    return self


def copy_(self, src, non_blocking=False):
    # host->device, device->host and device->device all land here: the higher backend bit wins
    with np.errstate(all="ignore"):
        np.copyto(values(self), values(src), casting="unsafe")
    return self


def as_strided(self, size, stride, storage_offset=None):
    off = self.storage_offset() if storage_offset is None else storage_offset
    return wrap_view(self, Array(self._data.root, size, stride, off, self._dtype.np), storage_offset=off)


def add(self, other, alpha=1):
    d = binary_dtype(self, other)
    c = compute_dtype(d)
    b = values(other, c) if alpha == 1 else values(other, c) * np.asarray(alpha).astype(c.np)
    with np.errstate(all="ignore"):
        return result(values(self, c) + b, d)


def mul(self, other):
    d = binary_dtype(self, other)
    c = compute_dtype(d)
    with np.errstate(all="ignore"):
        return result(values(self, c) * values(other, c), d)


def neg(self):
    return result(np.negative(values(self)), self._dtype)


def sum(self, dim=None, keepdim=False, dtype=None):
    d = sum_dtype(self, dtype)
    axis = dim if dim and self._shape else None
    return result(np.add.reduce(values(self, d), axis=axis, dtype=compute_dtype(d).np, keepdims=keepdim), d)


def inplace(kernel):
    """The in-place variant of ``kernel``: compute out of place, then store into ``self``."""
    return lambda self, *args: copy_(self, kernel(self, *args))


KERNELS = {"empty": empty, "fill_.Scalar": fill_, "copy_": copy_, "as_strided": as_strided,
           "add.Tensor": add, "mul.Tensor": mul, "neg": neg, "sum.dim_IntList": sum,
           "add_.Tensor": inplace(add), "mul_.Tensor": inplace(mul), "neg_": inplace(neg)}


# -- the boxed fallback: every other operator runs on the CPU --------------------------
_warned = set()


def to_host(x, copies):
    """``x`` with minimal tensors copied to the CPU (recorded in ``copies``) and the device replaced."""
    if isinstance(x, Tensor) and x._device.type == "minimal":
        host = wrap(view(x._data).copy(), x._dtype, CPU)
        copies[id(host)] = (host, x)
        return host
    if isinstance(x, (list, tuple)):
        return type(x)(to_host(v, copies) for v in x)
    return CPU if x == DEVICE else x


def to_device(x, copies):
    """A result back on the device: a written input becomes its device original again."""
    if isinstance(x, Tensor):
        return copies[id(x)][1] if id(x) in copies else result(x._data, x._dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, copies) for v in x)
    return x


def cpu_fallback(op, keyset, *args):
    """Copy tensor arguments to the CPU, run ``op`` there, copy results and written arguments back.

    Only the arguments the schema marks as written (``Tensor(a!)``) are copied
    back. Every argument gets a host copy of its own, so when two arguments
    alias the same device memory, reads see the values from before the write
    and the written argument's values are the ones that end up on the device.
    """
    if op.qualname not in _warned:
        _warned.add(op.qualname)
        warnings.warn(f"{op.qualname} is not implemented natively for 'minimal'; falling back to the CPU",
                      stacklevel=2)
    copies = {}
    host_args = [to_host(a, copies) for a in args]
    out = op.redispatch(key_set("cpu"), *host_args)
    for i in written_arguments(op):
        written = host_args[i] if isinstance(host_args[i], (list, tuple)) else (host_args[i],)
        for host in written:
            if isinstance(host, Tensor) and id(host) in copies:
                copy_(copies[id(host)][1], host)  # the op wrote into the host copy
    return to_device(out, copies)


@tensorplug.hookimpl
def tensorplug_backends():
    return [BACKEND]


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    lib = library("tensorplug", "IMPL", "Minimal")
    for name, fn in KERNELS.items():
        lib.impl(name, fn)
    lib.fallback(cpu_fallback)


@tensorplug.hookimpl
def tensorplug_conformance():
    return {"backend": "minimal"}
