"""``tensorplug.backends.cuda``: CUDA matmul switches (read by a cuda backend plugin)."""

from __future__ import annotations

from .. import backend as _backend

__all__ = ["is_built", "matmul", "preferred_linalg_library", "enable_flash_sdp", "flash_sdp_enabled",
           "enable_mem_efficient_sdp", "mem_efficient_sdp_enabled", "enable_math_sdp", "math_sdp_enabled"]


class cuBLASModule:
    """``tensorplug.backends.cuda.matmul``: ``allow_tf32`` (False), ``allow_fp16_reduced_precision_reduction``
    and ``allow_bf16_reduced_precision_reduction`` (True)."""

    _FLAGS = {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True,
              "allow_bf16_reduced_precision_reduction": True}

    def __init__(self):
        object.__setattr__(self, "_values", dict(self._FLAGS))

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name not in self._values:
            raise AttributeError("Unknown attribute " + name)
        if not isinstance(value, bool):
            raise TypeError(f"{name} expects a bool, got {type(value).__name__}")
        self._values[name] = value


matmul = cuBLASModule()

_SDP = {"flash": True, "mem_efficient": True, "math": True}
_LINALG = ["default"]


def is_built():
    """Whether a cuda backend is registered (PyTorch: whether it was built with CUDA)."""
    return "cuda" in _backend.BACKENDS


def preferred_linalg_library(backend=None):
    """Get or set the preferred linear algebra library name (a setting only)."""
    if backend is not None:
        if backend not in ("default", "cusolver", "magma"):
            raise RuntimeError("Unknown input value. Choose from: default, cusolver, magma.")
        _LINALG[0] = backend
    return _LINALG[0]


def enable_flash_sdp(enabled):
    _SDP["flash"] = bool(enabled)


def flash_sdp_enabled():
    return _SDP["flash"]


def enable_mem_efficient_sdp(enabled):
    _SDP["mem_efficient"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _SDP["mem_efficient"]


def enable_math_sdp(enabled):
    _SDP["math"] = bool(enabled)


def math_sdp_enabled():
    return _SDP["math"]
