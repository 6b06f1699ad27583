"""The CPU backend record: memory is numpy; a tensor's native value is an ndarray view."""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug.plugin_api import Backend

CPU = tensorplug.device("cpu")


def _root(arr):
    base = arr
    while isinstance(base.base, np.ndarray):
        base = base.base
    return base


def _addr(arr):
    return arr.__array_interface__["data"][0]


class CPUBackend(Backend):
    """Host memory through numpy. Views are numpy views of one root array."""

    name = "cpu"
    key_name = "CPU"
    slot = 0

    def normalize_device(self, dev):
        if dev.index not in (None, 0):
            raise RuntimeError(f"CPU device index must be 0, got {dev.index}")
        return CPU

    def empty(self, shape, dtype, device):
        return np.empty(shape, dtype=dtype.np)

    def from_numpy(self, array, device):
        return array

    def to_numpy(self, native):
        return native

    def strides(self, native):
        isz = native.itemsize
        st = native.strides
        n = len(st)
        # unrolled for the common ranks: stride() sits on every view's check
        if n == 2:
            return (st[0] // isz, st[1] // isz)
        if n == 1:
            return (st[0] // isz,)
        return tuple([s // isz for s in st])

    def storage(self, native):
        if native.base is None:  # owns its memory: the common case, no address arithmetic
            return native, 0
        root = _root(native)
        return root, (_addr(native) - _addr(root)) // native.itemsize

    def as_strided(self, root, shape, strides, offset, dtype):
        isz = dtype.itemsize
        if not (root.flags.c_contiguous or root.flags.f_contiguous):
            # dense memory in a permuted order (numpy keeps the input's layout): ordering
            # its axes by stride gives a C-contiguous view of the same block
            root = root.transpose(np.argsort(root.strides)[::-1])
            if not root.flags.c_contiguous:
                raise RuntimeError("as_strided: the storage's memory is not one dense block")
        flat = root.reshape(-1, order="A").view(np.uint8)
        if 0 in shape:
            offset = 0  # an empty view addresses no memory; its offset may point past a 0-byte buffer
        return np.ndarray(shape, dtype=dtype.np, buffer=flat, offset=offset * isz,
                          strides=tuple(s * isz for s in strides))

    def storage_nbytes(self, root):
        return root.nbytes


BACKEND = CPUBackend()  # one record for the life of the process: kernels read its key set
