"""The discrete Fourier transform primitives, as PyTorch's ATen has them.

``_fft_c2c(self, dim, normalization, forward)`` (complex to complex),
``_fft_r2c(self, dim, normalization, onesided)`` (real to complex, the last of ``dim``
halved when ``onesided``) and ``_fft_c2r(self, dim, normalization, last_dim_size)``
(Hermitian complex to real). ``normalization`` is ATen's code: 0 leaves the
transform unscaled, 1 scales it by ``1/sqrt(n)``, 2 by ``1/n`` (``n`` the number of
points transformed); inverse transforms are unscaled at 0, so the adjoint of a
transform is the opposite direction with the same code, which the backward
formulas use. The user-facing functions (``tensorplug.fft``) pad or trim the
input and call these; backends own the three kernels.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..tensor import _wrap_dim
from ._lib import defop
from .complex_ops import real
from .arithmetic import mul
from .factories import tensor, zeros_for
from .joining import cat
from .promotion import _pt_name

_COMPLEX = _dt.COMPLEX


def fft_dims(self, dim):
    """``dim`` wrapped for ``self``, with PyTorch's errors (out of range, repeated)."""
    n = len(self._shape)
    dims = [_wrap_dim(d, n) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    return dims


def _check_kind(self, want_complex, name):
    d = self._dtype
    if want_complex and d.category != _COMPLEX:
        raise RuntimeError(f"{name} expects a complex input tensor, but got {_pt_name(d)}")
    if not want_complex and d is not _dt.float32 and d is not _dt.float64:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_pt_name(d)}")


def _check_c2c(self, dim, normalization, forward):
    _check_kind(self, True, "_fft_c2c")
    fft_dims(self, dim)


def _check_r2c(self, dim, normalization, onesided):
    _check_kind(self, False, "_fft_r2c")
    fft_dims(self, dim)


def _check_c2r(self, dim, normalization, last_dim_size):
    _check_kind(self, True, "_fft_c2r")
    fft_dims(self, dim)
    if last_dim_size < 1:
        raise RuntimeError(f"Invalid number of data points ({last_dim_size}) specified")


_fft_c2c = defop("_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor", check=_check_c2c)
_fft_r2c = defop("_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor", check=_check_r2c)
_fft_c2r = defop("_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor",
                 check=_check_c2r)


@derivative("_fft_c2c")
def _(grad, dim, normalization, forward):
    return _fft_c2c(grad, dim, normalization, not forward)


def _wrap_all(dim, ndim):
    return [_wrap_dim(d, ndim) for d in dim]


@derivative("_fft_r2c")
def _(grad, self_shape, dim, normalization, onesided):
    dims = _wrap_all(dim, len(self_shape))
    if onesided:
        last = dims[-1]
        have, full = grad._shape[last], self_shape[last]
        if have != full:
            # the half spectrum's gradient is that of the full spectrum with zeros for the dropped half
            z = zeros_for(grad._shape[:last] + (full - have,) + grad._shape[last + 1:], grad)
            grad = cat([grad, z], last)
    return real(_fft_c2c(grad, dims, normalization, False))


@derivative("_fft_c2r")
def _(grad, dim, normalization):
    dims = _wrap_all(dim, len(grad._shape))
    g = _fft_r2c(grad, dims, normalization, True)
    last = dims[-1]
    m = g._shape[last]
    doubled = grad._shape[last] - m
    if doubled > 0:
        # the bins the real output reads twice (as themselves and as their mirrored conjugates) count twice
        w = [1.0] * m
        w[1:1 + doubled] = [2.0] * doubled
        shape = [1] * len(g._shape)
        shape[last] = m
        g = mul(g, tensor(w, dtype=grad._dtype, device=grad._device).reshape(shape))
    return g
