"""``tensorplug.fft``: discrete Fourier transforms, as ``torch.fft``.

Loaded on first use (``tensorplug.fft`` is a lazy submodule). Every transform pads
(with zeros) or trims its input to the requested sizes (``n``, ``s``) along the
transformed dims and calls one of three dispatcher primitives (``_fft_c2c``,
``_fft_r2c``, ``_fft_c2r``, :mod:`tensorplug.ops.fft_ops`), so autograd and vmap
apply through their rules. Real and integer inputs of complex transforms promote
(float32 to complex64, integers to the default dtype's complex type); float16
and bfloat16 raise, as on PyTorch's CPU. ``norm`` is ``"backward"`` (the default:
the forward transform is unscaled, the inverse scaled by ``1/n``), ``"ortho"``
(both by ``1/sqrt(n)``) or ``"forward"`` (the forward one by ``1/n``).
"""

from __future__ import annotations

import math

from . import dtypes as _dt
from .ops.complex_ops import conj_physical
from .ops.factories import arange, zeros_for
from .ops.fft_ops import _fft_c2c, _fft_r2c, _fft_c2r
from .ops.joining import cat
from .ops.promotion import _pt_name
from .ops.shape import roll
from .ops.views import narrow
from .tensor import Tensor, _wrap_dim

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def _norm_code(norm, forward):
    """ATen's normalization code of ``norm`` for a transform in the given direction."""
    if norm is None:
        norm = "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    i = _NORMS.index(norm)
    return i if forward else 2 - i


def _check_tensor(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _float_of(input):
    """The real dtype a transform of ``input`` computes in (PyTorch's promote_type_fft)."""
    d = input._dtype
    if d.category == _dt.COMPLEX:
        return d.to_real()
    if d.category < _dt.FLOATING:
        d = _dt.get_default_dtype()
    if d is not _dt.float32 and d is not _dt.float64:
        raise RuntimeError(f"Unsupported dtype {_pt_name(d)}")
    return d


def _as_complex(input):
    d = _float_of(input).to_complex()
    return input if input._dtype is d else input.to(d)


def _as_real(input, name):
    if input._dtype.category == _dt.COMPLEX:
        what = "real-valued" if name == "rfftn" else "real"  # PyTorch's words differ
        raise RuntimeError(f"{name} expects a {what} input tensor, but got {_pt_name(input._dtype)}")
    d = _float_of(input)
    return input if input._dtype is d else input.to(d)


def _resize(x, dims, sizes):
    """``x`` trimmed or zero-padded at the end of each of ``dims`` to ``sizes``."""
    for d, n in zip(dims, sizes):
        have = x._shape[d]
        if n < have:
            x = narrow(x, d, 0, n)
        elif n > have:
            pad = zeros_for(x._shape[:d] + (n - have,) + x._shape[d + 1:], x)
            x = cat([x, pad], d)
    return x


def _points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _wrap_one(input, dim):
    if not input._shape:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, len(input._shape))


def _one_dim(input, n, dim):
    d = _wrap_one(input, dim)
    return d, _points(input._shape[d] if n is None else n)


def _nd_params(input, s, dim):
    """``(dims, sizes)`` of an n-dimensional transform, with PyTorch's defaults and errors."""
    ndim = len(input._shape)
    if dim is not None:
        if isinstance(dim, int):
            dim = (dim,)
        dims = [_wrap_one(input, d) for d in dim]  # a 0-dim input has no dim to transform
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dim is None:
            if len(s) > ndim:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
            dims = list(range(ndim - len(s), ndim))
        elif len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        sizes = [input._shape[d] if n == -1 else _points(n) for d, n in zip(dims, s)]
    else:
        if dim is None:
            dims = list(range(ndim))
        sizes = [input._shape[d] for d in dims]
        for n in sizes:
            _points(n)
    return dims, sizes


def _c2c(input, dims, sizes, norm, forward, name):
    _check_tensor(input, name)
    x = _resize(_as_complex(input), dims, sizes)
    return _fft_c2c(x, dims, _norm_code(norm, forward), forward)


def _r2c(input, dims, sizes, norm, forward, name):
    x = _resize(_as_real(input, name), dims, sizes)
    out = _fft_r2c(x, dims, _norm_code(norm, forward), True)
    return out if forward else conj_physical(out)


def _c2r(input, dims, sizes, norm, forward):
    """A real output of ``sizes`` (the last one the full length) from a one-sided spectrum."""
    last = sizes[-1]
    x = _resize(_as_complex(input), dims, sizes[:-1] + [last // 2 + 1])
    if forward:
        x = conj_physical(x)
    return _fft_c2r(x, dims, _norm_code(norm, forward), last)


# -- one dimension ------------------------------------------------------------------------------------
def fft(input, n=None, dim=-1, norm=None):
    """The 1-d discrete Fourier transform of ``input`` along ``dim`` (``n`` points: trimmed or zero-padded)."""
    _check_tensor(input, "fft_fft")
    d, n = _one_dim(input, n, dim)
    return _c2c(input, [d], [n], norm, True, "fft_fft")


def ifft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`fft`."""
    _check_tensor(input, "fft_ifft")
    d, n = _one_dim(input, n, dim)
    return _c2c(input, [d], [n], norm, False, "fft_ifft")


def rfft(input, n=None, dim=-1, norm=None):
    """The 1-d transform of a real ``input``: the ``n // 2 + 1`` non-negative frequencies."""
    _check_tensor(input, "fft_rfft")
    d, n = _one_dim(input, n, dim)
    return _r2c(input, [d], [n], norm, True, "rfft")


def irfft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`rfft`: a real output of ``n`` points (default ``2 * (m - 1)``)."""
    _check_tensor(input, "fft_irfft")
    d = _wrap_one(input, dim)
    n = _points(2 * (input._shape[d] - 1) if n is None else n)
    return _c2r(input, [d], [n], norm, False)


def hfft(input, n=None, dim=-1, norm=None):
    """The transform of a Hermitian-symmetric signal given by its first half: a real output of ``n`` points."""
    _check_tensor(input, "fft_hfft")
    d = _wrap_one(input, dim)
    n = _points(2 * (input._shape[d] - 1) if n is None else n)
    return _c2r(input, [d], [n], norm, True)


def ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`hfft`: the one-sided spectrum of a real ``input``."""
    _check_tensor(input, "fft_ihfft")
    d, n = _one_dim(input, n, dim)
    return _r2c(input, [d], [n], norm, False, "ihfft")


# -- n dimensions ---------------------------------------------------------------------------------------
def fftn(input, s=None, dim=None, norm=None):
    """The n-d transform over ``dim`` (default: all dims, or the last ``len(s)``), sizes ``s``."""
    _check_tensor(input, "fft_fftn")
    dims, sizes = _nd_params(input, s, dim)
    return _c2c(input, dims, sizes, norm, True, "fft_fftn")


def ifftn(input, s=None, dim=None, norm=None):
    """The inverse of :func:`fftn`."""
    _check_tensor(input, "fft_ifftn")
    dims, sizes = _nd_params(input, s, dim)
    return _c2c(input, dims, sizes, norm, False, "fft_ifftn")


def rfftn(input, s=None, dim=None, norm=None):
    """The n-d transform of a real ``input``, one-sided in the last of ``dim``."""
    _check_tensor(input, "fft_rfftn")
    dims, sizes = _nd_params(input, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    return _r2c(input, dims, sizes, norm, True, "rfftn")


def irfftn(input, s=None, dim=None, norm=None):
    """The inverse of :func:`rfftn`; the last output size defaults to ``2 * (m - 1)``."""
    _check_tensor(input, "fft_irfftn")
    dims, sizes = _nd_params(input, s, dim)
    if not dims:
        raise RuntimeError("irfftn must transform at least one axis")
    if s is None or (list([s] if isinstance(s, int) else s)[-1] == -1):
        sizes[-1] = _points(2 * (input._shape[dims[-1]] - 1))
    return _c2r(input, dims, sizes, norm, False)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """The 2-d transform (:func:`fftn` over the last two dims)."""
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """The inverse of :func:`fft2`."""
    return ifftn(input, s, dim, norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    """The 2-d transform of a real input (:func:`rfftn` over the last two dims)."""
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    """The inverse of :func:`rfft2`."""
    return irfftn(input, s, dim, norm)


def hfftn(input, s=None, dim=None, norm=None):
    """The n-d transform of a Hermitian-symmetric signal given by its half along the last of ``dim``: a
    real output; the last size defaults to ``2 * (m - 1)``."""
    _check_tensor(input, "fft_hfftn")
    dims, sizes = _nd_params(input, s, dim)
    if not dims:
        raise RuntimeError("hfftn must transform at least one axis")
    if s is None or (list([s] if isinstance(s, int) else s)[-1] == -1):
        sizes[-1] = _points(2 * (input._shape[dims[-1]] - 1))
    return _c2r(input, dims, sizes, norm, True)


def ihfftn(input, s=None, dim=None, norm=None):
    """The inverse of :func:`hfftn`: the spectrum of a real ``input``, one-sided in the last of ``dim``."""
    _check_tensor(input, "fft_ihfftn")
    if input._dtype.category == _dt.COMPLEX:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {_pt_name(input._dtype)}")
    dims, sizes = _nd_params(input, s, dim)
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    return _r2c(input, dims, sizes, norm, False, "ihfftn")


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    """The 2-d :func:`hfftn` (over the last two dims)."""
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """The inverse of :func:`hfft2`."""
    return ihfftn(input, s, dim, norm)


# -- frequencies and shifts -----------------------------------------------------------------------------
def _freq_dtype(dtype, name):
    d = _dt.get_default_dtype() if dtype is None else dtype
    if d.category < _dt.FLOATING:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    return d


def _scale(out, n, d):
    # 1 / (n * d): an empty spectrum's scale is inf, as in PyTorch (rfftfreq(0) is [nan])
    return out * (1.0 / (n * d) if n * d else math.inf)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    out = arange(n, dtype=_freq_dtype(dtype, "fftfreq"), device=device)
    if n > 1:
        out = roll(out - (n // 2), -(n // 2))
    out = _scale(out, n, d)
    return out.requires_grad_(True) if requires_grad else out


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The non-negative sample frequencies of an ``n``-point real transform: ``[0, ..., n // 2] / (d * n)``."""
    out = arange(n // 2 + 1, dtype=_freq_dtype(dtype, "rfftfreq"), device=device)
    out = _scale(out, n, d)
    return out.requires_grad_(True) if requires_grad else out


def _shift_dims(input, dim):
    if dim is None:
        return list(range(len(input._shape)))
    return [dim] if isinstance(dim, int) else list(dim)


def fftshift(input, dim=None):
    """The zero frequency moved to the centre of ``dim`` (default: every dim)."""
    dims = _shift_dims(input, dim)
    if not dims:
        return input.clone()
    return roll(input, [input._shape[_wrap_dim(d, len(input._shape))] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`."""
    dims = _shift_dims(input, dim)
    if not dims:
        return input.clone()
    return roll(input, [(input._shape[_wrap_dim(d, len(input._shape))] + 1) // 2 for d in dims], dims)


from .ops import out as _out  # noqa: E402

_out.install(globals(), "fft")  # PyTorch's out=
