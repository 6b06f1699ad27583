"""The operators autograd itself calls: zeros for gradients nobody produced, clone for snapshots,
ones for the implicit gradient of a scalar, normal samples for gradgradcheck.

They are defined in ``tensorplug.ops``, a layer above autograd (every op
there registers its formula here), so autograd reaches them through the
operator registry by name, as PyTorch's autograd calls ``at::zeros`` through
the dispatcher. The lookup happens at the first call, when the ops exist.
"""

from __future__ import annotations

from ..dispatch.dispatcher import OPS


def full(shape, value, dtype, device):
    """A tensor of ``shape`` filled with ``value`` (the ``full`` op, which a backend may own)."""
    return OPS["tensorplug::full"](tuple(shape), value, dtype=dtype, device=device)


def zeros(shape, dtype, device):
    """A tensor of zeros."""
    return full(shape, 0, dtype, device)


def randn(shape, dtype, device):
    """Standard normal samples (``normal_`` on fresh zeros), from the global generator."""
    return OPS["tensorplug::normal_"](zeros(shape, dtype, device), 0.0, 1.0)


def real(t):
    """The real part of a complex ``t`` (the ``real`` op: the gradient of a real input is real)."""
    return OPS["tensorplug::real"](t)


def view_as_real(t):
    """The ``view_as_real`` op: a complex tensor as real pairs (gradcheck of complex functions)."""
    return OPS["tensorplug::view_as_real"](t)


def view_as_complex(t):
    """The ``view_as_complex`` op: real pairs as a complex tensor."""
    return OPS["tensorplug::view_as_complex"](t)


def clone(t):
    """``t.clone()`` through the ``clone`` op (so it is recorded when ``t`` requires grad)."""
    return OPS["tensorplug::clone"](t)
