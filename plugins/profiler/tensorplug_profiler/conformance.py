"""The profiler's conformance check: ``tensorplug conformance profiler``.

For every op of the database, one sample in one dtype is called under a
profile with shapes recorded. The call must show up exactly once at top
level, under one of the overloads the OpInfo lists (``OpInfo.aten``), with the
shapes of the sample's tensors.
"""

from __future__ import annotations

from collections import Counter

import tensorplug as tp
from tensorplug import Tensor
from tensorplug.plugin_api import all_dtypes
from tensorplug.testing import Skip, call, move_sample, register_transform_check


def _pick_dtype(opinfo):
    return tp.float32 if tp.float32 in opinfo.dtypes else opinfo.dtypes[0]


def _tensor_shapes(obj, out):
    if isinstance(obj, Tensor):
        out.append(list(obj._shape))
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _tensor_shapes(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _tensor_shapes(x, out)
    return out


def check_recorded_once(device_type, opinfo, dtype):
    """A call under ``profile`` is recorded once at top level with the right name and shapes."""
    dtype = dtype or _pick_dtype(opinfo)
    samples = opinfo.sample_inputs(device_type, dtype, False) if opinfo.sample_inputs else ()
    sample = next(iter(samples), None)
    if sample is None:
        raise Skip("no sample input")
    sample = move_sample(sample, device_type)
    with tp.profiler.profile(record_shapes=True) as prof:
        call(opinfo, sample)
    top = [e for e in prof.events() if e.parent is None]
    names = [e.name for e in top]
    if len(top) != 1 and getattr(opinfo.op, "_op", None) is None:
        raise Skip(f"a Python function of {len(top)} operator calls, not one operator: {names[:4]}")
    assert len(top) == 1, f"expected one top-level event, got {len(top)}: {names}"
    allowed = {f"tensorplug::{a}" for a in opinfo.aten}
    assert not allowed or top[0].name in allowed, (
        f"top-level event {top[0].name!r} is none of the listed overloads {sorted(allowed)}")
    if getattr(opinfo.op, "_op", None) is None:
        return  # a Python function: its one operator call may take other tensors (view_as: a shape)
    want = Counter(map(repr, _tensor_shapes((sample.input, sample.args, sample.kwargs), [])))
    tensor_types = {d.name for d in all_dtypes()}
    got = Counter()
    for shape, t in zip(top[0].input_shapes, top[0].input_types):
        if t in tensor_types:
            got[repr(shape)] += 1
        elif t == "TensorList":
            got.update(map(repr, shape))
    # the op may see more tensors than the sample holds: Python scalars wrapped as 0-dim tensors
    extra = got - want
    assert not (want - got) and set(extra) <= {"[]"}, (
        f"recorded input shapes {sorted(got.elements())} differ from the sample's tensors {sorted(want.elements())}")


def register():
    """Register the check with the conformance kit (idempotent)."""
    register_transform_check("profiler", "recorded_once", check_recorded_once, per_dtype=False)
