"""CPU kernels of the FFT primitives on ``numpy.fft``.

numpy computes in complex128 (and float64); results of single-precision inputs
are cast back to complex64 (float32), as PyTorch's are single precision. ATen's
normalization code maps to numpy's ``norm``: a forward transform unscaled (0) is
numpy's "backward", an inverse one unscaled is numpy's "forward".
"""

from __future__ import annotations


import tensorplug

from .kernels import wrap
from .xp import xp

_COMPLEX_OF = {tensorplug.float32: tensorplug.complex64, tensorplug.float64: tensorplug.complex128}
_REAL_OF = {v: k for k, v in _COMPLEX_OF.items()}
_FORWARD_NORM = ("backward", "ortho", "forward")
_INVERSE_NORM = ("forward", "ortho", "backward")


def _result(r, dtype):
    return wrap(xp.ascontiguousarray(r, dtype=dtype.np), dtype)


def _fft_c2c(self, dim, normalization, forward):
    a = self._data
    if not dim:
        return _result(a, self._dtype)
    if forward:
        r = xp.fft.fftn(a, axes=dim, norm=_FORWARD_NORM[normalization])
    else:
        r = xp.fft.ifftn(a, axes=dim, norm=_INVERSE_NORM[normalization])
    return _result(r, self._dtype)


def _fft_r2c(self, dim, normalization, onesided):
    a = self._data
    out = _COMPLEX_OF[self._dtype]
    norm = _FORWARD_NORM[normalization]
    if onesided:
        r = xp.fft.rfftn(a, axes=dim, norm=norm)
    else:
        r = xp.fft.fftn(a, axes=dim, norm=norm)
    return _result(r, out)


def _fft_c2r(self, dim, normalization, last_dim_size):
    a = self._data
    out = _REAL_OF[self._dtype]
    # numpy's irfftn takes the output length of every axis; only the last one changes
    sizes = [a.shape[d] for d in dim[:-1]] + [last_dim_size]
    r = xp.fft.irfftn(a, s=sizes, axes=dim, norm=_INVERSE_NORM[normalization])
    return _result(r, out)


KERNELS = {"_fft_c2c": _fft_c2c, "_fft_r2c": _fft_r2c, "_fft_c2r": _fft_c2r}
