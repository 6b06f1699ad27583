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
from .engine import backward, grad

__all__ = ["backward", "grad", "Function", "FunctionCtx", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "is_grad_enabled", "gradcheck", "gradgradcheck", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled", "derivative", "Node"]


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
