"""Autocast's conformance check: ``tensorplug conformance autocast`` (and ``autocast:openreg``).

For every op of the database with float32 samples, each sample is run outside and inside an
autocast region on the backend. Inside, the output dtype must be what the device type's policy
says for the operator the entry calls (the region's dtype for ``lower_precision_fp``, float32 for
the float32 lists, the inputs' dtype for unlisted ops), and the values must match the float32
result within the region dtype's tolerance.
"""

from __future__ import annotations

import numpy as np

import tensorplug as tp
from tensorplug import Tensor
from tensorplug.testing import Skip, call, leaves, move_sample, register_transform_check, tolerance

from . import policies

DTYPE = {"cpu": tp.bfloat16}   # other devices: float16


def _operator_name(opinfo):
    op = getattr(opinfo.op, "_op", None)
    if op is None or op.namespace != "tensorplug":
        return None
    return op.qualname.split("::", 1)[1]


def _expected(category, ref_dtype, lower):
    if not ref_dtype.is_floating_point or ref_dtype is tp.float64:
        return {ref_dtype}
    if category == "lower_precision_fp":
        return {lower}
    if category in ("fp32", "fp32_append_dtype", "fp32_set_opt_dtype"):
        return {tp.float32}
    return {ref_dtype}


def check_autocast_policy(device_type, opinfo, dtype):
    """Under autocast, each output has the dtype the policy gives and the float32 values, within tolerance."""
    if tp.float32 not in opinfo.dtypes or opinfo.random or opinfo.sample_inputs is None:
        raise Skip("no float32 samples of a deterministic op")
    lower = DTYPE.get(device_type, tp.float16)
    name = _operator_name(opinfo)
    category = policies.policy(device_type).category(name) if name else None
    atol, rtol = tolerance(opinfo, lower)
    ran = 0
    for sample in list(opinfo.sample_inputs("cpu", tp.float32, False))[:3]:
        sample = move_sample(sample, device_type)
        try:
            ref = call(opinfo, sample)
        except Exception as e:  # the sample is an error case on this backend: nothing to compare
            raise Skip(f"the float32 call raises {type(e).__name__}") from None
        with tp.autocast(device_type, dtype=lower):
            got = call(opinfo, sample)
        for r, g in zip(leaves(ref), leaves(got)):
            if not isinstance(r, Tensor):
                continue
            want = _expected(category, r.dtype, lower)
            if name is None:  # a Python function of several operators: any of them may be cast
                want = want | {lower} if r.dtype is tp.float32 else want
            assert g.dtype in want, (f"{opinfo.name} ({sample.name}): {g.dtype.name} under autocast, the policy "
                                     f"({category or 'unlisted'}) gives {sorted(d.name for d in want)}")
            if r.dtype.is_floating_point:
                a = g.float().cpu().numpy()
                b = r.float().cpu().numpy()
                scale = max(1.0, float(np.abs(b).max())) if b.size else 1.0
                np.testing.assert_allclose(a, b, rtol=rtol * 4, atol=atol * scale * 4,
                                           err_msg=f"{opinfo.name} ({sample.name}) under autocast")
            elif g.dtype is r.dtype and category is None:
                np.testing.assert_array_equal(g.cpu().numpy(), r.cpu().numpy())
        ran += 1
    if not ran:
        raise Skip("no sample")


def register():
    """Register the check with the conformance kit (idempotent)."""
    register_transform_check("autocast", "policy_dtypes", check_autocast_policy, per_dtype=False)
