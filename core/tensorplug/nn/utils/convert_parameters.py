"""``parameters_to_vector`` and ``vector_to_parameters``."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
import tensorplug as _tp

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """All ``parameters`` flattened and concatenated into one 1-D tensor (differentiable)."""
    return _tp.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` (in place), the inverse of
    :func:`parameters_to_vector`."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected tensorplug.Tensor, but got: {type(vec).__name__}")
    offset = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset:offset + n].view_as(p))
            offset += n
