"""Quantize's conformance check: ``tensorplug conformance quantize`` (and ``quantize:openreg``).

For every op of the database with float32 samples, each floating tensor argument of a sample is
quantized per tensor (``quint8``, parameters from its min and max) and the op runs on the quantized
arguments on the backend.

- An op with a Quantized kernel (:data:`tensorplug_quantize.kernels.KERNELS`) must give, for a
  quantized result, ``quantize(op(dequantize(x)))`` within one quantization step; for a float
  result (``linear``, ``matmul``), ``op(dequantize(x))`` within float32 rounding.
- Any other op must refuse quantized arguments with the dispatcher's error naming the Quantized
  key (never compute on silently dequantized values).
"""

from __future__ import annotations

import numpy as np

import tensorplug as tp
from tensorplug import Tensor
from tensorplug.testing import SampleInput, Skip, call, leaves, map_tensors, move_sample, register_transform_check

from .kernels import KERNELS
from .qparams import choose_qparams
from .qtensor import QuantizedTensor, quantize_per_tensor, quint8


def _operator_name(opinfo):
    op = getattr(opinfo.op, "_op", None)
    if op is None or op.namespace != "tensorplug":
        return None
    return op.qualname.split("::", 1)[1]


def _quantize(t):
    if not isinstance(t, Tensor) or t.dtype is not tp.float32 or t.numel() == 0:
        return t
    v = t.detach().cpu().numpy()
    if not np.isfinite(v).all():
        return t  # no scale holds a NaN or an infinity: the tensor stays float
    scale, zp = choose_qparams(float(v.min()), float(v.max()), 0, 255)
    return quantize_per_tensor(t.detach(), scale, zp, quint8)


def _map_sample(sample, fn, nargs=None):
    args = tuple(sample.args)
    keep = args[nargs:] if nargs is not None else ()
    args = args[:nargs] if nargs is not None else args
    return SampleInput(map_tensors(sample.input, fn), map_tensors(args, fn) + keep,
                       dict(sample.kwargs), sample.name)


def _dequantized(sample):
    return _map_sample(sample, lambda t: t.dequantize() if isinstance(t, QuantizedTensor) else t)


# operators whose later arguments stay float (a float bias beside quantized input and weight)
_QUANTIZED_ARGS = {"linear": 1}


def check_quantized_kernels(device_type, opinfo, dtype):
    """Quantized kernels agree with the float op on dequantized values; other ops refuse quantized input."""
    if tp.float32 not in opinfo.dtypes or opinfo.random or opinfo.sample_inputs is None:
        raise Skip("no float32 samples of a deterministic op")
    name = _operator_name(opinfo)
    ran = 0
    for sample in list(opinfo.sample_inputs("cpu", tp.float32, False))[:3]:
        sample = move_sample(sample, device_type)
        qsample = _map_sample(sample, _quantize, _QUANTIZED_ARGS.get(name))
        found = []
        map_tensors((qsample.input, qsample.args), lambda t: found.append(isinstance(t, QuantizedTensor)))
        if not any(found):
            continue
        fsample = _dequantized(qsample)
        try:
            ref = call(opinfo, fsample)
        except Exception as e:  # an error case on dequantized values: nothing to compare
            raise Skip(f"the float32 call raises {type(e).__name__}") from None
        if name not in KERNELS:
            # no kernel of its own: a refusal, or a decomposition into operators that have one
            try:
                got = call(opinfo, qsample)
            except NotImplementedError:
                ran += 1
                continue
            except (RuntimeError, TypeError, ValueError, IndexError):
                ran += 1  # refused by the operator's checks (a quantized dtype is not a float one)
                continue
        else:
            got = call(opinfo, qsample)
        for r, g in zip(leaves(ref), leaves(got)):
            if not isinstance(r, Tensor):
                continue
            b = r.detach().float().cpu().numpy()
            if isinstance(g, QuantizedTensor):
                step = g.q_scale() if g.qscheme() is tp.per_tensor_affine else float(g.q_per_channel_scales().max())
                want = quantize_per_tensor(r.detach().float().cpu(), g.q_scale(), g.q_zero_point(),
                                           g.dtype).dequantize().numpy() if g._scales is None else b
                a = g.dequantize().cpu().numpy()
                np.testing.assert_allclose(a, want, rtol=0, atol=step * 1.0001,
                                           err_msg=f"{opinfo.name} ({sample.name}): quantized result")
            else:
                a = g.detach().float().cpu().numpy()
                scale = max(1.0, float(np.abs(b).max())) if b.size else 1.0
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * scale,
                                           err_msg=f"{opinfo.name} ({sample.name}): float result")
        ran += 1
    if not ran:
        raise Skip("no sample with a float32 tensor argument")


def _has_kernel(device_type, opinfo, dtype):
    return None if _operator_name(opinfo) in KERNELS else "no Quantized kernel of its own"


def _has_no_kernel(device_type, opinfo, dtype):
    return "has a Quantized kernel" if _operator_name(opinfo) in KERNELS else None


def register():
    """Register the checks with the conformance kit (idempotent): ``quantized_kernel`` for the ops with a
    Quantized kernel, ``refuses_or_decomposes`` for the others, so the table shows which are native."""
    register_transform_check("quantize", "quantized_kernel", check_quantized_kernels, per_dtype=False,
                             applies=_has_kernel)
    register_transform_check("quantize", "refuses_or_decomposes", check_quantized_kernels, per_dtype=False,
                             applies=_has_no_kernel)
