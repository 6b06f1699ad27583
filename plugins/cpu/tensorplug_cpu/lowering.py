"""The CPU's lowering for tensorplug-compile: elementwise ops as direct numpy calls into a buffer.

A compiled program calls these functions on native arrays instead of the kernels on tensors, so an
intermediate costs no Tensor object, and the program can hand each a buffer it reuses from call to
call (fresh multi-megabyte temporaries pay page faults every time). Each function computes exactly
what the op's kernel in :mod:`.elementwise` computes for the arguments it accepts (the same ufuncs,
in the same order, in the same dtype), so a lowered program gives the kernel's bits. It accepts only
float32 and float64 tensors of one dtype, the result's, on the host, with a result of at least one
dimension; everything else is left to the kernels (``lower`` returns None).
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug.plugin_api import TensorSpec

from . import fusion
from .elementwise import _IGNORE, _quiet_off, _quiet_on

_FLOATS = (tensorplug.float32, tensorplug.float64)
_UINT = {4: np.uint32, 8: np.uint64}


def _binary(ufunc):
    def make(args, out):
        return lambda a, b, out=None: ufunc(a, b, out=out)
    return make


def _unary(ufunc):
    def make(args, out):
        return lambda a, out=None: ufunc(a, out=out)
    return make


def _add_sub(ufunc):
    def make(args, out):
        if args[2] != 1:  # alpha
            return None
        return lambda a, b, out=None: ufunc(a, b, out=out)
    return make


def _tanh_backward(args, out):
    g, y = args
    if g.shape != out.shape or y.shape != out.shape:
        return None

    def fn(g, y, out=None):  # g * (1 - y * y), as the kernel
        t = np.multiply(y, y, out=out)
        np.subtract(1, t, out=t)
        return np.multiply(g, t, out=t)
    return fn


def _threshold_backward(args, out):
    g, x, threshold = args
    if g.shape != out.shape or x.shape != out.shape or not g.shape or threshold.__class__ not in (int, float):
        return None
    u = _UINT[out.dtype.itemsize]

    def fn(g, x, out=None):  # the gradient's bits times a 0/1 mask, as the kernel
        keep = np.less_equal(x, threshold)
        np.logical_not(keep, out=keep)
        if out is None:
            out = np.empty(g.shape, g.dtype)
        np.multiply(keep, g.view(u), out=out.view(u))
        return out
    return fn


_RULES = {
    "tensorplug::add.Tensor": _add_sub(np.add), "tensorplug::sub.Tensor": _add_sub(np.subtract),
    "tensorplug::mul.Tensor": _binary(np.multiply), "tensorplug::div.Tensor": _binary(np.true_divide),
    "tensorplug::maximum": _binary(np.maximum), "tensorplug::minimum": _binary(np.minimum),
    "tensorplug::neg": _unary(np.negative),
    # in place (the compiled program passes self's array as ``out``): the kernels' same-dtype paths
    "tensorplug::add_.Tensor": _add_sub(np.add), "tensorplug::sub_.Tensor": _add_sub(np.subtract),
    "tensorplug::mul_.Tensor": _binary(np.multiply),
    "tensorplug::tanh_backward": _tanh_backward, "tensorplug::threshold_backward": _threshold_backward,
}
for _name, _ufunc in (("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("sin", np.sin), ("cos", np.cos),
                      ("tanh", np.tanh), ("log1p", np.log1p), ("expm1", np.expm1)):
    _RULES[f"tensorplug::{_name}"] = _unary(_ufunc)


class NumpyLowering:
    """``CPUBackend.compile_lowering``: see the module docstring and docs/compile.md."""

    def lower(self, op_name, args, out):
        """A function ``fn(*arrays, out=None)`` computing ``op_name`` on the arrays of the tensor
        arguments (in order) into ``out`` (or a new array), returning it; None when not lowered.
        ``args`` are the op's arguments with each tensor as a :class:`TensorSpec`; ``out`` the
        result's spec. For an in-place op (``add_``) ``out`` is self's spec and the caller passes
        self's array as ``out``."""
        rule = _RULES.get(op_name)
        # (0-dim results stay with the kernels: numpy's ufuncs return scalars, not arrays, for them)
        if rule is None or out.dtype not in _FLOATS or out.device.type != "cpu" or not out.shape:
            return None
        specs = [a for a in args if a.__class__ is TensorSpec]
        if not specs or any(s.dtype is not out.dtype or s.device.type != "cpu" for s in specs):
            return None
        if np.broadcast_shapes(*(s.shape for s in specs)) != out.shape:
            return None
        return rule(args, out)

    def fusable(self, op_name):
        """Whether :meth:`fuse` can take ``op_name`` into a fused loop (numba installed)."""
        return fusion.fusable(op_name) and fusion.available()

    def fuse(self, steps, shape, dtype, outputs):
        """One pass over memory for a chain of lowered elementwise calls (numba): :func:`.fusion.fuse`."""
        return fusion.fuse(steps, shape, dtype, outputs)

    def empty(self, shape, dtype):
        """A buffer for results of ``shape`` and ``dtype``."""
        return np.empty(shape, dtype.np)

    def enter(self):
        """Before a program's lowered calls: numpy's floating-point warnings off (as every kernel)."""
        return _quiet_on(_IGNORE)

    def exit(self, token):
        """After them: the warnings as they were."""
        _quiet_off(token)


LOWERING = NumpyLowering()
