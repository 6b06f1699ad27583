"""Elementwise chains fused into one loop with numba, for tensorplug-compile (optional: the ``numba``
extra, ``pip install 'tensorplug-cpu[numba]'``).

A compiled program whose lowered elementwise calls follow one another on large arrays of one shape
asks :meth:`.lowering.NumpyLowering.fuse` for one function doing them all in a single pass: each
element is read once, intermediates stay in registers, and only the values the rest of the program
needs are stored. numpy's own loops run one op at a time over memory, so a chain of ``k`` ops costs
``k`` passes; the fused loop costs one. Arithmetic (``+ - * /``, ``maximum``, the relu and tanh
backward) rounds as numpy does, in the arrays' dtype; transcendental functions come from numba's
math library rather than numpy's SIMD loops and may differ from them in the last bit, which is why
fusion only applies to results of at least :data:`MIN_ELEMENTS` elements (a compiled program of
small tensors keeps the kernels' bits) and compiled-against-eager comparisons use a tolerance there.

numba is imported on the first fusion, never by ``import tensorplug``; ``TENSORPLUG_COMPILE_NUMBA=0``
turns fusion off.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np

MIN_ELEMENTS = 1 << 16
"""Fuse only chains whose results have at least this many elements (below it a pass is cheap)."""

_EXPR = {
    "tensorplug::add.Tensor": "({0} + {1})", "tensorplug::sub.Tensor": "({0} - {1})",
    "tensorplug::mul.Tensor": "({0} * {1})", "tensorplug::div.Tensor": "({0} / {1})",
    "tensorplug::add_.Tensor": "({0} + {1})", "tensorplug::sub_.Tensor": "({0} - {1})",
    "tensorplug::mul_.Tensor": "({0} * {1})",
    "tensorplug::maximum": "np.maximum({0}, {1})", "tensorplug::minimum": "np.minimum({0}, {1})",
    "tensorplug::neg": "(-{0})", "tensorplug::exp": "np.exp({0})", "tensorplug::log": "np.log({0})",
    "tensorplug::sqrt": "np.sqrt({0})", "tensorplug::sin": "np.sin({0})", "tensorplug::cos": "np.cos({0})",
    "tensorplug::tanh": "np.tanh({0})", "tensorplug::log1p": "np.log1p({0})", "tensorplug::expm1": "np.expm1({0})",
    "tensorplug::tanh_backward": "({0} * (ONE - {1} * {1}))",
    "tensorplug::threshold_backward": "(ZERO if {1} <= T{step} else {0})",
}
_CACHE: dict = {}  # (source, dtype) -> the jitted loop


_FOUND: list = []  # [whether numba is importable], looked up once


def available():
    """Whether fusion can run here: numba importable and not switched off."""
    if os.environ.get("TENSORPLUG_COMPILE_NUMBA", "") == "0":
        return False
    if not _FOUND:
        _FOUND.append(importlib.util.find_spec("numba") is not None)
    return _FOUND[0]


def fusable(op_name):
    """Whether ``op_name`` has a scalar form for a fused loop."""
    return op_name in _EXPR


def fuse(steps, shape, dtype, outputs):
    """One function computing ``steps`` in a single pass, or None.

    ``steps``: ``(op_name, operands)`` in order, each operand ``("input", j)`` (the ``j``-th input
    array, of ``shape``), ``("scalar", j)`` (the ``j``-th input, of one element), ``("step", i)`` (an earlier step's value) or a Python number
    (``threshold_backward``'s threshold; ``add``'s alpha, 1). ``outputs``: the steps whose values are
    stored, in order. The function is ``fn(*inputs, outs=(...))``, writing into arrays of ``shape`` and
    ``dtype`` (an in-place step's output is its self's array).
    """
    if not available() or int(np.prod(shape)) < MIN_ELEMENTS:
        return None
    n_in = 1 + max((o[1] for _, ops in steps for o in ops if o.__class__ is tuple and o[0] in ("input", "scalar")),
                   default=-1)
    consts = {"ONE": dtype.np.type(1), "ZERO": dtype.np.type(0)}
    scalar_inputs = set()
    body = []
    for i, (name, operands) in enumerate(steps):
        refs = []
        for o in operands:
            if o.__class__ is tuple and o[0] == "input":
                refs.append(f"x{o[1]}[k]")
            elif o.__class__ is tuple and o[0] == "step":
                refs.append(f"v{o[1]}")
            elif o.__class__ is tuple and o[0] == "scalar":
                scalar_inputs.add(o[1])
                refs.append(f"s{o[1]}")
        if name == "tensorplug::threshold_backward":
            consts[f"T{i}"] = dtype.np.type(operands[2])
        body.append(f"        v{i} = {_EXPR[name].format(*refs, step=i)}")
    body += [f"        y{j}[k] = v{i}" for j, i in enumerate(outputs)]
    args = [f"x{j}" for j in range(n_in)] + [f"y{j}" for j in range(len(outputs))]
    head = [f"def loop(n, {', '.join(args)}):"]
    head += [f"    s{j} = x{j}[0]" for j in sorted(scalar_inputs)]
    src = "\n".join(head + ["    for k in range(n):"] + body) + "\n"
    key = (src, dtype.np.str, tuple(sorted((k, float(v)) for k, v in consts.items())))
    loop = _CACHE.get(key)
    if loop is None:
        import numba  # lazy: optional (the numba extra), and slow to import
        ns = {"np": np, **consts}
        exec(compile(src, "<tensorplug-cpu fused loop>", "exec"), ns)
        loop = _CACHE[key] = numba.njit(nogil=True)(ns["loop"])
    size = int(np.prod(shape))

    one = tuple(j in scalar_inputs for j in range(n_in))

    def fn(*inputs, outs):
        # a one-element input (a broadcast scalar) passes its first element, not a flattened copy; an
        # output that is not contiguous (an in-place write into a transposed .grad) goes through a copy
        flat = [o.reshape(-1) if o.flags.c_contiguous else np.empty(size, o.dtype) for o in outs]
        loop(size, *(x.flat[0:1] if s else x.reshape(-1) for x, s in zip(inputs, one)), *flat)
        for o, f in zip(outs, flat):
            if not o.flags.c_contiguous:
                o[...] = f.reshape(o.shape)
        return outs
    return fn
