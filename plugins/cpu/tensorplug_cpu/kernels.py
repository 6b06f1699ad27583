"""CPU kernels on numpy: memory, views and arithmetic.

Conventions for every kernel in this package:

* arguments arrive positionally in schema order, already checked by the core
  (shapes broadcast, devices agree, dtypes are allowed);
* ``t._data`` is the numpy view of a tensor; results are wrapped with
  :func:`wrap` (fresh memory) or :func:`tensorplug.tensor.make_view` (views);
* the result dtype is the core's (``binary_dtype``, ``result_type``), never
  numpy's own promotion, which differs from PyTorch's.
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug.tensor import Tensor, make_view
from tensorplug.ops.promotion import binary_dtype
from tensorplug.ops.reductions import reduce_dims, sum_dtype

from .backend import CPU

_new = object.__new__
_ndarray = np.ndarray
_asarray = np.asarray
KS = [0]  # set when the backend is registered


def wrap(arr, dtype):
    """A fresh CPU tensor around ``arr`` (numpy scalars become 0-d arrays)."""
    if arr.__class__ is not _ndarray:
        arr = _asarray(arr)
    t = _new(Tensor)
    t._data = arr
    t._shape = arr.shape
    t._dtype = dtype
    t._device = CPU
    t._ks = KS[0]
    return t


def cast(t, dtype):
    """The numpy values of ``t`` in ``dtype`` (no copy when already there)."""
    a = t._data
    return a if t._dtype is dtype else a.astype(dtype.np)


def write(self, values):
    """Store ``values`` (broadcast, cast to self's dtype) into ``self`` in place."""
    np.copyto(self._data, values, casting="unsafe")
    return self


# -- random state --------------------------------------------------------------------
_rng = [np.random.Generator(np.random.PCG64(0))]


def seed(s):
    _rng[0] = np.random.Generator(np.random.PCG64(s))


def rng():
    return _rng[0]


# -- memory ----------------------------------------------------------------------------
def empty(size, dtype=None, device=None):
    d = dtype or tensorplug.get_default_dtype()
    return wrap(np.empty(size, dtype=d.np), d)


def fill_(self, value):
    self._data.fill(value if self._dtype.is_floating_point or isinstance(value, bool) else int(value))
    return self


def copy_(self, src, non_blocking=False):
    if src._device is not CPU:
        # a device tensor copied to host: its backend's copy_ kernel wins dispatch, so this
        # runs only for cpu->cpu; anything else is a bug in the backend registration
        raise RuntimeError(f"cpu copy_ kernel got a {src._device} source")
    np.copyto(self._data, src._data, casting="unsafe")
    return self


def as_strided(self, size, stride, storage_offset=None):
    st = self._get_storage()
    if storage_offset is None:
        storage_offset = self.storage_offset()
    from .backend import CPUBackend
    arr = CPUBackend.as_strided(None, st.root, size, stride, storage_offset, self._dtype)
    return make_view(self, arr)


# -- arithmetic --------------------------------------------------------------------------
def add(self, other, alpha=1):
    dt = binary_dtype(self, other)
    b = cast(other, dt)
    if alpha != 1:
        b = b * np.asarray(alpha, dtype=dt.np)
    return wrap(np.add(cast(self, dt), b), dt)


def sub(self, other, alpha=1):
    dt = binary_dtype(self, other)
    b = cast(other, dt)
    if alpha != 1:
        b = b * np.asarray(alpha, dtype=dt.np)
    return wrap(np.subtract(cast(self, dt), b), dt)


def mul(self, other):
    dt = binary_dtype(self, other)
    if dt is tensorplug.bool:
        return wrap(np.logical_and(self._data, other._data), dt)
    return wrap(np.multiply(cast(self, dt), cast(other, dt)), dt)


def _inplace(fn):
    def kernel(self, *args):
        return write(self, fn(self, *args)._data)
    kernel.__name__ = fn.__name__ + "_"
    return kernel


def neg(self):
    if self._dtype is tensorplug.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return wrap(np.negative(self._data), self._dtype)


def exp(self):
    d = self._dtype if self._dtype.is_floating_point else tensorplug.get_default_dtype()
    return wrap(np.exp(cast(self, d)), d)


# -- reductions ---------------------------------------------------------------------------
def sum(self, dim=None, keepdim=False, dtype=None):
    dims = reduce_dims(self, dim)
    d = sum_dtype(self, dtype)
    return wrap(np.sum(self._data, axis=dims, dtype=d.np, keepdims=keepdim), d)


# -- matmul -------------------------------------------------------------------------------
def matmul(self, other):
    return wrap(np.matmul(self._data, other._data), self._dtype)


KERNELS = {
    "empty": empty, "fill_.Scalar": fill_, "copy_": copy_, "as_strided": as_strided,
    "add.Tensor": add, "sub.Tensor": sub, "mul.Tensor": mul,
    "add_.Tensor": _inplace(add), "sub_.Tensor": _inplace(sub), "mul_.Tensor": _inplace(mul),
    "neg": neg, "exp": exp, "sum.dim_IntList": sum, "matmul": matmul,
}
