"""The openreg backend record: devices, memory and the host exchange, all through ``_C``.

A tensor's native value is a ``_C.Array``: a strided window (shape, strides and
offset in elements) on a ``_C.Buffer`` that the C++ runtime allocated on one
device. The record never hands out device memory: ``to_numpy`` downloads into a
fresh host array and ``from_numpy`` uploads a copy.
"""

from __future__ import annotations

import os

import numpy as np

import tensorplug
from tensorplug import plugin_api as _api
from tensorplug.plugin_api import Backend

from . import _C

DEVICE_COUNT_ENV = "TENSORPLUG_OPENREG_DEVICES"


def _configured_device_count():
    raw = os.environ.get(DEVICE_COUNT_ENV, "2")
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise RuntimeError(f"{DEVICE_COUNT_ENV} must be a positive integer, got {raw!r}")
    return n


_C.init(_configured_device_count())
DEVICES = tuple(tensorplug.device("openreg", i) for i in range(_C.device_count()))

# dtype codes of the runtime (csrc/runtime.h); other dtypes get codes past these and move as bytes
_CODES = {"bool": 0, "uint8": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "float16": 6, "bfloat16": 7,
          "float32": 8, "float64": 9}
_CODE_OF: dict = {}     # tensorplug dtype -> code
_DTYPE_OF: dict = {}    # code -> tensorplug dtype
_BY_NUMPY: dict = {}    # numpy dtype -> tensorplug dtype


def code(dtype):
    """The runtime's code for ``dtype`` (assigned on first use for dtypes it only moves as bytes)."""
    c = _CODE_OF.get(dtype)
    if c is None:
        c = _CODES.get(dtype.name)
        if c is None:
            c = max([9, *_DTYPE_OF]) + 1
        _CODE_OF[dtype] = c
        _DTYPE_OF[c] = dtype
    return c


for _d in _api.all_dtypes():
    code(_d)
    if _d.name != "bfloat16":  # bfloat16.np imports ml_dtypes: from_host resolves it on first use
        _BY_NUMPY.setdefault(np.dtype(_d.np), _d)



def _dtype_of_numpy(npdt):
    """The tensorplug dtype of a numpy dtype missing from ``_BY_NUMPY`` (bfloat16's, once ml_dtypes is loaded)."""
    for d in _api.all_dtypes():
        if np.dtype(d.np) == npdt:
            _BY_NUMPY[npdt] = d
            return d
    raise TypeError(f"openreg: no tensorplug dtype for numpy dtype {npdt}")


_current = [0]


def current_device():
    """Index of the openreg device used when none is given."""
    return _current[0]


def set_device(index):
    """Make ``index`` (an int or an openreg device) the current device."""
    if isinstance(index, (str, tensorplug.device)):
        index = tensorplug.device(index).index or 0
    if not 0 <= index < len(DEVICES):
        raise RuntimeError(f"openreg device index {index} is out of range (device_count() is {len(DEVICES)})")
    _current[0] = index


def index_of(device):
    """Device index of an openreg ``device`` (None means the current one)."""
    return _current[0] if device is None or device.index is None else device.index


def host_bytes(arr):
    """A flat uint8 view of a contiguous host array: the runtime copies bytes, whatever the dtype."""
    return arr.reshape(-1).view(np.uint8)


def download(native):
    """A new host array with the values of device array ``native``."""
    host = np.empty(native.shape, dtype=_DTYPE_OF[native.dtype].np)
    _C.download(native, host_bytes(host))
    return host


def upload(values, device_index, dtype=None):
    """A new device array on ``device_index`` holding host ``values`` (in ``dtype`` if given)."""
    values = np.asarray(values)
    if not values.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-dim array 1-dim)
        values = values.copy(order="C")
    d = dtype or _BY_NUMPY.get(values.dtype) or _dtype_of_numpy(values.dtype)
    if values.dtype != d.np:
        values = values.astype(d.np)
    native = _C.empty(values.shape, code(d), d.itemsize, device_index)
    _C.upload(native, host_bytes(values))
    return native


class OpenRegBackend(Backend):
    """Simulated accelerator devices ``openreg:0`` .. ``openreg:N-1`` on the PrivateUse1 slot."""

    name = "openreg"
    key_name = "PrivateUse1"
    slot = 15  # PrivateUse1's fixed slot: the key bit is the same each time the plugin is enabled

    def device_count(self):
        return len(DEVICES)

    def normalize_device(self, dev):
        idx = _current[0] if dev.index is None else dev.index
        if idx >= len(DEVICES):
            raise RuntimeError(f"openreg device index {idx} is out of range (device_count() is {len(DEVICES)})")
        return DEVICES[idx]

    def empty(self, shape, dtype, device):
        return _C.empty(shape, code(dtype), dtype.itemsize, index_of(device))

    def from_numpy(self, array, device):
        return upload(array, index_of(device))

    def to_numpy(self, native):
        return download(native)  # a host copy: device memory is never shared with numpy

    def strides(self, native):
        return native.strides

    def storage(self, native):
        return native.root, native.offset

    def as_strided(self, root, shape, strides, offset, dtype):
        return _C.Array(root, shape, strides, offset, code(dtype), dtype.itemsize)

    def storage_nbytes(self, root):
        return root.nbytes

    def synchronize(self, device=None):
        _C.synchronize(index_of(device))

    def manual_seed(self, seed):
        for i in range(len(DEVICES)):
            _C.manual_seed(i, seed)


BACKEND = OpenRegBackend()  # one record for the life of the process: kernels read its key set
