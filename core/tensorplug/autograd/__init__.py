"""Reverse-mode automatic differentiation in the core.

Recording happens at the Autograd dispatch key (see ``formulas.py``); the
graph and saved tensors are in ``graph.py``; ``engine.py`` runs backward.
"""

from __future__ import annotations

from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled)
from .function import Function, FunctionCtx
from .graph import Node, _anomaly
from .formulas import derivative
from .gradcheck import gradcheck, gradgradcheck, GradcheckError
from . import engine as _engine

__all__ = ["backward", "grad", "Function", "FunctionCtx", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "is_grad_enabled", "gradcheck", "gradgradcheck", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled", "derivative", "Node"]


def _tensors(x):
    from ..tensor import Tensor
    if x is None:
        return None
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _make_grads(outputs, grads, create_graph):
    from ..ops.factories import ones
    out = []
    grads = grads if grads is not None else [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs; got {len(grads)} gradients "
                           f"for {len(outputs)} outputs")
    for t, g in zip(outputs, grads):
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{t.dtype}")
            g = ones(t.shape, dtype=t.dtype, device=t.device)
        elif g.shape != t.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {g.shape} and output[0] has a "
                               f"shape of {t.shape}.")
        out.append(g)
    return out


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (or of ``inputs``)."""
    tensors = _tensors(tensors)
    grad_tensors = _tensors(grad_tensors)
    inputs = _tensors(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _make_grads(tensors, grad_tensors, create_graph)
    if inputs is None:
        _engine.run_backward(tensors, grads, retain_graph, create_graph)
        return
    captured = _engine.run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=False,
                                    allow_unused=True)
    for t, g in zip(inputs, captured):
        if g is not None:
            _engine._accumulate(t, g, create_graph) if t.is_leaf else _set_nonleaf_grad(t, g, create_graph)


def _set_nonleaf_grad(t, g, create_graph):
    g = g if create_graph else g.detach()
    t._grad = g if t._grad is None else t._grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs`` (a tuple), without touching ``.grad``."""
    outputs = _tensors(outputs)
    inputs = _tensors(inputs)
    grads = _make_grads(outputs, _tensors(grad_outputs), create_graph)
    if allow_unused is None:
        allow_unused = materialize_grads
    res = _engine.run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, accumulate=False,
                               allow_unused=allow_unused)
    if materialize_grads:
        from ..ops.factories import zeros_like
        res = [r if r is not None else zeros_like(i) for r, i in zip(res, inputs)]
    return tuple(res)


class detect_anomaly:
    """Context manager: check every backward output for NaN and report the forward stack of the failing node."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self.prev = _anomaly[0]
        _anomaly[0] = bool(self.check_nan)
        return self

    def __exit__(self, *exc):
        _anomaly[0] = self.prev
        return False


class set_detect_anomaly(detect_anomaly):
    """``set_detect_anomaly(True)`` as a call or a context manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = _anomaly[0]
        _anomaly[0] = bool(mode) and check_nan

    def __enter__(self):
        return self


def is_anomaly_enabled():
    return _anomaly[0]
