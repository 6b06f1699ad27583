"""A test backend: device type ``testdev``, dispatch key ``TestDev``, memory in numpy.

It implements four kernels (``empty``, ``add.Tensor``, ``mul.Tensor``,
``neg``) and records each call in :data:`CALLS`, so a test can see that its
kernel, and not another backend's, ran.
"""

from __future__ import annotations

TENSORPLUG_API = (1, 0)  # the plugin API this toy plugin is written for

import numpy as np

import tensorplug
from tensorplug.backend import Backend, BACKENDS
from tensorplug.ops.promotion import binary_dtype
from tensorplug.tensor import make_tensor

__version__ = "0.0.1"

DEVICE = tensorplug.device("testdev")
CALLS: list = []  # names of the kernels that ran, in order


class NumpyTestBackend(Backend):
    """Host memory in numpy arrays, copied on the way in so it is the backend's own."""

    name = "testdev"
    key_name = "TestDev"
    slot = 7  # a fixed slot: the bit stays the same when the plugin is disabled and enabled again

    def normalize_device(self, dev):
        return DEVICE

    def empty(self, shape, dtype, device):
        return np.empty(shape, dtype=dtype.np)

    def from_numpy(self, array, device):
        return np.array(array, copy=True)

    def to_numpy(self, native):
        return native

    def strides(self, native):
        return tuple(s // native.itemsize for s in native.strides)

    def storage(self, native):
        root = native
        while isinstance(root.base, np.ndarray):
            root = root.base
        addr = native.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return root, addr // native.itemsize

    def as_strided(self, root, shape, strides, offset, dtype):
        isz = dtype.itemsize
        return np.ndarray(shape, dtype=dtype.np, buffer=root, offset=offset * isz,
                          strides=tuple(s * isz for s in strides))

    def storage_nbytes(self, root):
        return root.nbytes


def result(arr, dtype):
    """A fresh testdev tensor around ``arr``."""
    return make_tensor(np.asarray(arr), dtype, DEVICE, BACKENDS["testdev"].ks)


def empty(size, dtype=None, device=None):
    CALLS.append("empty")
    d = dtype or tensorplug.get_default_dtype()
    return result(np.empty(size, dtype=d.np), d)


def add(self, other, alpha=1):
    CALLS.append("add")
    dt = binary_dtype(self, other)
    return result(self._data.astype(dt.np) + other._data.astype(dt.np) * alpha, dt)


def mul(self, other):
    CALLS.append("mul")
    dt = binary_dtype(self, other)
    return result(self._data.astype(dt.np) * other._data.astype(dt.np), dt)


def neg(self):
    CALLS.append("neg")
    return result(-self._data, self._dtype)


KERNELS = {"empty": empty, "add.Tensor": add, "mul.Tensor": mul, "neg": neg}


def testdev_synchronize():
    """The public name this plugin adds: ``tensorplug.testdev_synchronize()``."""
    return "synchronized"


@tensorplug.hookimpl
def tensorplug_backends():
    return [NumpyTestBackend()]


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    lib = library("tensorplug", "IMPL", "TestDev")
    for name, fn in KERNELS.items():
        lib.impl(name, fn)


@tensorplug.hookimpl
def tensorplug_namespace():
    return {"testdev_synchronize": testdev_synchronize}
