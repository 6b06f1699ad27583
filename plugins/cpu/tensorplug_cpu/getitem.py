"""CPU kernel for ``index.Tensor``: numpy advanced indexing.

The core has checked dtypes, mask shapes, broadcasting and bounds; numpy's
rules for a tuple of arrays and full slices are PyTorch's ``index`` rules.
"""

from __future__ import annotations


import tensorplug

from .kernels import wrap
from .xp import xp

_FULL = slice(None)
_ndarray = xp.ndarray


def index(self, indices):
    key = tuple(_FULL if i is None else (i._data.astype(bool) if i._dtype is tensorplug.uint8 else i._data)
                for i in indices)
    out = self._data[key]
    if out.__class__ is _ndarray and not out.flags.c_contiguous:
        out = xp.ascontiguousarray(out)
    return wrap(out, self._dtype)


KERNELS = {"index.Tensor": index}
