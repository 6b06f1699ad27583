"""CPU kernels on numpy: memory, views and arithmetic.

Conventions for every kernel in this package:

* arguments arrive positionally in schema order, already checked by the core
  (shapes broadcast, devices agree, dtypes are allowed);
* they compute with the array module ``xp`` (``from .xp import xp``): numpy here, and whatever
  :func:`tensorplug_cpu.kernel_library` is given when another backend instantiates the same
  modules (cupy for tensorplug-cuda); ``np`` is kept for host-only names (``np.errstate``,
  ``np.dtype``, ``np.finfo``);
* ``t._data`` is the native (numpy) view of a tensor; results are wrapped with
  :func:`wrap` (fresh memory) or ``make_view`` (``tensorplug.plugin_api.wrap_view``, views);
* the result dtype is the core's (``binary_dtype``, ``result_type``), never
  numpy's own promotion, which differs from PyTorch's.
"""

from __future__ import annotations

import tensorplug
from tensorplug import plugin_api as _api
from tensorplug.plugin_api import wrap_view as make_view

from . import halfcast
from .xp import xp, BACKEND, DEVICE as CPU, wrap


def cast(t, dtype):
    """The numpy values of ``t`` in ``dtype`` (no copy when already there)."""
    a = t._data
    return a if t._dtype is dtype else halfcast.astype(a, dtype.np)


def write(self, values):
    """Store ``values`` (broadcast, cast to self's dtype) into ``self`` in place."""
    xp.copyto(self._data, values, casting="unsafe")
    return self


# -- random state --------------------------------------------------------------------
# -- memory ----------------------------------------------------------------------------
def empty(size, dtype=None, device=None):
    d = dtype or tensorplug.get_default_dtype()
    return wrap(xp.empty(size, dtype=d.np), d)


def fill_(self, value):
    self._data.fill(value if self._dtype.category >= _api.FLOATING or isinstance(value, bool) else int(value))
    return self


def copy_(self, src, non_blocking=False):
    if src._device is not CPU:
        # a device tensor copied to host: its backend's copy_ kernel wins dispatch, so this
        # runs only for cpu->cpu; anything else is a bug in the backend registration
        raise RuntimeError(f"cpu copy_ kernel got a {src._device} source")
    xp.copyto(self._data, src._data, casting="unsafe")
    return self


def _to_copy(self, dtype=None, device=None, non_blocking=False):
    """A cast (or copy) on the CPU in one numpy pass; another device goes through its backend's copy_."""
    d = self._dtype if dtype is None else dtype
    if device is not None and device.type != "cpu":
        return tensorplug.empty(self._shape, dtype=d, device=device).copy_(self, non_blocking)
    if d is self._dtype:
        return wrap(self._data.copy(), d)
    out = halfcast.astype(self._data, d.np)
    return wrap(out if out.flags.c_contiguous else out.copy(), d)


def as_strided(self, size, stride, storage_offset=None):
    st = self._get_storage()
    if storage_offset is None:
        storage_offset = self.storage_offset()
    arr = BACKEND.as_strided(st.root, size, stride, storage_offset, self._dtype)
    out = make_view(self, arr)
    out._storage_offset0 = storage_offset
    return out


KERNELS = {
    "empty": empty, "fill_.Scalar": fill_, "copy_": copy_, "_to_copy": _to_copy, "as_strided": as_strided,
}
