"""No bad input is caught by numpy itself: on cupy the same call would not raise (out-of-bounds
integer indices wrap, for one) or would raise something else.

Every error input of the op database is run on cuda; its exception must come from the core's
checks or from an explicit check in a kernel, never from inside the array module. In the simulated
mode the array module is numpy, so a kernel that leaned on numpy's own IndexError shows here.
"""

from __future__ import annotations

import traceback

import tensorplug as tp
from tensorplug.testing import load_op_db, move_sample

from tensorplug_cuda.testing import needs_cuda, simulated

pytestmark = needs_cuda


def _leak(err):
    """Where the array module raised ``err``, or None when a ``raise`` of the core or of a kernel did.

    An error numpy raises in C (an out-of-bounds index) has no frame of its own: its innermost frame is
    the kernel line that called into numpy, which is not a ``raise``.
    """
    import os
    import numpy
    import tensorplug_cpu
    import tensorplug_cuda
    modules = [os.path.dirname(numpy.__file__)]
    if not simulated():
        import cupy  # lazy: a real GPU run, where cupy's own frames count too
        modules.append(os.path.dirname(cupy.__file__))
    kernels = (os.path.dirname(tensorplug_cpu.__file__), os.path.dirname(tensorplug_cuda.__file__))
    frames = traceback.extract_tb(err.__traceback__)
    inside = [f for f in frames if f.filename.startswith(tuple(modules))]
    if inside:
        return f"{inside[-1].filename}:{inside[-1].lineno}"
    last = frames[-1]
    if last.filename.startswith(kernels) and not (last.line or "").lstrip().startswith("raise"):
        return f"{last.filename}:{last.lineno} ({last.line.strip()})"
    return None


def test_every_error_input_is_caught_before_the_array_module_sees_it():
    dev = tp.device("cuda", 0)
    leaks, checked = [], 0
    for op in load_op_db():
        if op.error_inputs is None:
            continue
        for n, ei in enumerate(op.error_inputs("cpu")):
            sample = move_sample(ei.sample, dev, requires_grad=None)
            try:
                op.op(sample.input, *sample.args, **sample.kwargs)
            except Exception as err:  # noqa: BLE001 - which frame raised is what is checked
                checked += 1
                where = _leak(err)
                if where is not None:
                    leaks.append(f"{op.name} error input {n}: {type(err).__name__} from {where}")
    assert checked > 200, checked
    assert not leaks, "errors raised inside the array module: " + "; ".join(leaks)
