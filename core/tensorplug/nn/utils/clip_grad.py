"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_`` (``foreach`` is accepted and ignored)."""

from __future__ import annotations

import math

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
import tensorplug as _tp

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _tensors(x):
    return [x] if isinstance(x, Tensor) else list(x)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` taken together (as if concatenated), a 0-dim tensor."""
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _tp.tensor(0.0)
    with no_grad():
        norms = _tp.stack([_tp.norm(t, norm_type) for t in tensors])
        total = _tp.norm(norms, norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place by min(1, max_norm / (total_norm + 1e-6))."""
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp_max(1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescale the gradients of ``parameters`` in place so that their total ``norm_type``-norm is at most
    ``max_norm``; returns the total norm before clipping (a 0-dim tensor). ``error_if_nonfinite`` raises if
    that norm is NaN or infinite."""
    parameters = _tensors(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)
