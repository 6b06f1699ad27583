"""``tensorplug.signal.windows``: window functions, as ``torch.signal.windows``.

Each returns a 1-D window of ``M`` points, symmetric by default (``sym=False``: periodic, for spectral
analysis), computed in ``dtype`` (float32 or float64; the default float dtype when None) from a
``linspace`` as PyTorch computes it, so float32 windows agree with PyTorch's to the last bits.
The keyword arguments are PyTorch's: ``sym``, ``dtype``, ``layout`` (strided only), ``device`` and
``requires_grad``.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..ops.factories import empty, ones, linspace, tensor, arange

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _dtype_name(dtype):
    return "torch." + (dtype.name if isinstance(dtype, _dt.dtype) else str(dtype).split(".")[-1])


def _checks(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout).split(".")[-1] != "strided":
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype is not _dt.float32 and dtype is not _dt.float64:
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {_dtype_name(dtype)}")


def _dtype(dtype):
    return _dt.get_default_dtype() if dtype is None else dtype


def _empty(dtype, device, requires_grad):
    return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)


def _ones(dtype, device, requires_grad):
    return ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The exponential (Poisson) window exp(-|n - center| / tau); ``center`` defaults to the middle and must
    be None for a symmetric window."""
    dtype = _dtype(dtype)
    _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / tau
    k = linspace(-center * c, (-center + (M - 1)) * c, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return (-k.abs()).exp()


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The cosine (sine) window sin(pi (n + 1/2) / M)."""
    dtype = _dtype(dtype)
    _checks("cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    c = math.pi / (M + 1 if not sym and M > 1 else M)
    k = linspace(0.5 * c, (0.5 + (M - 1)) * c, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return k.sin()


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Gaussian window exp(-(n - (M-1)/2)^2 / (2 std^2))."""
    dtype = _dtype(dtype)
    _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    k = linspace(start * c, (start + (M - 1)) * c, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return (-k ** 2).exp()


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Kaiser window I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta)."""
    dtype = _dtype(dtype)
    _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    b = tensor(beta, dtype=dtype, device=device)
    start = -b
    c = 2.0 * b / (M if not sym else M - 1)
    end = b.minimum(start + (M - 1) * c)
    k = linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return (b * b - k.pow(2)).sqrt().i0() / b.i0()


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The generalized cosine window sum_i (-1)^i a_i cos(2 pi i n / (M - 1)) for the coefficients ``a``
    (a list or tuple)."""
    dtype = _dtype(dtype)
    _checks("general_cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    if not isinstance(a, (list, tuple)) and not hasattr(a, "__iter__"):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    c = 2 * math.pi / (M if not sym else M - 1)
    k = linspace(0, (M - 1) * c, M, dtype=dtype, device=device, requires_grad=requires_grad)
    a_i = tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype, requires_grad=requires_grad)
    i = arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * (i.unsqueeze(-1) * k).cos()).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The generalized Hamming window alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hamming window: :func:`general_hamming` with alpha 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window: :func:`general_hamming` with alpha 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window: :func:`general_cosine` with a = [0.42, 0.5, 0.08]."""
    dtype = _dtype(dtype)
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Bartlett (triangular) window 1 - |2n / (M - 1) - 1|."""
    dtype = _dtype(dtype)
    _checks("bartlett", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    c = 2 / (M if not sym else M - 1)
    k = linspace(-1, -1 + (M - 1) * c, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return 1 - k.abs()


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris (Nuttall) window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
