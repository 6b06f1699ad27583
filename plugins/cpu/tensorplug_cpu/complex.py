"""CPU kernels of the complex-number primitives: conjugation and angle. (``view_as_real`` and
``view_as_complex`` are the core's, over the backend record's ``as_strided``.)"""

from __future__ import annotations

import math


import tensorplug
from tensorplug.plugin_api import float_dtype

from .elementwise import quiet
from .kernels import wrap, cast
from .xp import xp

_REAL = {tensorplug.complex64: tensorplug.float32, tensorplug.complex128: tensorplug.float64}


def conj_physical(self):
    a = self._data
    return wrap(xp.conj(a) if a.dtype.kind == "c" else a.copy(), self._dtype)


def conj_physical_(self):
    if self._data.dtype.kind == "c":
        xp.conjugate(self._data, out=self._data)
    return self


def angle(self):
    d = self._dtype
    if d in _REAL:
        return wrap(xp.angle(self._data), _REAL[d])
    d = float_dtype(d)
    a = cast(self, d)
    # 0 for x >= 0 (-0.0 included: numpy's arctan2 gives pi there), pi below, NaN stays
    r = xp.where(a < 0, xp.array(math.pi, d.np), xp.zeros((), d.np))
    return wrap(xp.where(xp.isnan(a), a, r).astype(d.np, copy=False), d)


KERNELS = {
    "conj_physical": quiet(conj_physical), "conj_physical_": conj_physical_, "angle": quiet(angle),
}
