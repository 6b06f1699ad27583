"""Quantized Linear modules: what the workflows put in place of ``nn.Linear``.

Each keeps its weight as a quantized tensor (``weight`` in its ``state_dict``: int8 or packed 4-bit
values with their scales and zero points, which :func:`tensorplug.save` stores as such) and a
float32 bias, and computes on the CPU with exact integer products (:mod:`tensorplug_quantize.gemm`):

- :class:`DynamicLinear` (``tensorplug.ao.nn.quantized.dynamic.Linear``): PyTorch's dynamic int8
  linear: per-tensor symmetric int8 weight; each call quantizes its input to 7-bit ``quint8`` from
  the input's own min and max (PyTorch's ``reduce_range``), accumulates in int32, returns float32;
- :class:`Int8DynamicLinear`: per-channel symmetric int8 weight and per-token (per-row) asymmetric
  int8 activations (torchao's ``Int8DynamicActivationInt8Weight``, whose activations are symmetric):
  a grid fitted to each row, so a smaller error;
- :class:`Int8WeightOnlyLinear`: per-channel int8 weight, float activations;
- :class:`Int4WeightOnlyLinear`: unsigned 4-bit weights, two per byte, with a scale and zero point
  for each group of ``group_size`` input features.

Tensors on other devices are computed on the host and the result moved back.
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug import nn
from tensorplug.plugin_api import native, wrap

from . import gemm
from .int4 import pack_int4, unpack_int4
from .qparams import EPS32, calculate_qparams, choose_qparams
from .qtensor import (QuantizedTensor, _quantize_np, make_quantized, per_channel_symmetric, per_tensor_symmetric,
                      qint8, quint4x2, quint8, quantize_per_channel, quantize_per_tensor)

_F32 = tensorplug.float32
_CPU = tensorplug.device("cpu")


def _host(t):
    return native(t) if t._device.type == "cpu" else native(t.detach().cpu())


def _float_input(x, who):
    if isinstance(x, QuantizedTensor):
        raise RuntimeError(f"{who}: expected a float input, got a quantized tensor (dequantize() it first)")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{who}: expected a floating point input, got {x.dtype!r}")
    a = _host(x)
    return a if a.dtype == np.float32 else a.astype(np.float32)


def _result(out, x, lead):
    t = wrap(out.reshape(tuple(lead) + out.shape[-1:]), _F32, _CPU)
    t = t if x._device.type == "cpu" else t.to(x._device)
    return t if x.dtype is _F32 else t.to(x.dtype)


class _QuantizedLinearBase(nn.Module):
    """Common parts: ``in_features``, ``out_features``, the float32 ``bias`` and the ``weight()`` accessor."""

    _FLOAT_NAME = "Linear"

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.bias = tensorplug.zeros(out_features) if bias else None

    def _set_bias(self, b):
        self.bias = None if b is None else b.detach().to(_F32).clone()

    def _bias(self):
        return None if self.bias is None else _host(self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"

    def _check(self, a):
        if a.shape[-1] != self.in_features:
            lead = int(np.prod(a.shape[:-1])) if a.ndim > 1 else 1
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({lead}x{a.shape[-1]} and "
                               f"{self.in_features}x{self.out_features})")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        destination[prefix + "weight"] = self.weight()
        if self.bias is not None:
            destination[prefix + "bias"] = self.bias

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for name in ("weight",) + (("bias",) if self.bias is not None else ()):
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if name == "bias":
                self._set_bias(value)
            elif not isinstance(value, QuantizedTensor) or value.dtype is not self._qweight.dtype:
                error_msgs.append(f'While copying the parameter named "{key}", expected a quantized tensor of '
                                  f"{self._qweight.dtype!r}, got {getattr(value, 'dtype', type(value))!r}")
            elif value.shape != self._qweight.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} from "
                                  f"checkpoint, the shape in current model is {tuple(self._qweight.shape)}.")
            else:
                self._set_weight(value)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key[len(prefix):] not in ("weight", "bias"):
                    unexpected_keys.append(key)

    def weight(self):
        """The quantized weight (a :class:`QuantizedTensor`)."""
        return self._qweight


class DynamicLinear(_QuantizedLinearBase):
    """Dynamically quantized linear, as ``torch.ao.nn.quantized.dynamic.Linear``: int8 weight, the input
    quantized on each call from its own range, float32 out."""

    def __init__(self, in_features, out_features, bias_=True, dtype=qint8):
        super().__init__(in_features, out_features, bias_)
        if dtype is not qint8:
            raise NotImplementedError(f"dynamic quantized Linear supports dtype tensorplug.qint8, got {dtype!r}")
        self._set_weight(quantize_per_tensor(tensorplug.zeros(out_features, in_features), 1.0, 0, qint8))

    def _set_weight(self, w):
        self._qweight = w
        wi = _host(w._int)
        self._zp_w = w._zero_point if w._scales is None else _host(w._zero_points).astype(np.int64)
        self._s_w = np.float32(w._scale) if w._scales is None else _host(w._scales).astype(np.float32)
        self._w_int = wi
        self._colsum = wi.sum(axis=1, dtype=np.int64).astype(np.float32)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The dynamic quantized version of float ``mod`` (an ``nn.Linear``), with PyTorch's default
        weight quantization: per tensor, symmetric, int8."""
        w = mod.weight.detach().to(_F32)
        a = _host(w)
        scale, zp = calculate_qparams(a.min() if a.size else 0.0, a.max() if a.size else 0.0, -128, 127,
                                      symmetric=True)
        q = cls(mod.in_features, mod.out_features, mod.bias is not None)
        q._set_weight(quantize_per_tensor(w, float(scale), int(zp), qint8))
        q._set_bias(mod.bias)
        return q

    def forward(self, x):
        a = _float_input(x, "DynamicQuantizedLinear")
        self._check(a)
        lead = a.shape[:-1]
        a2 = a.reshape(-1, self.in_features)
        mn = float(a2.min()) if a2.size else 0.0
        mx = float(a2.max()) if a2.size else 0.0
        scale, zp = choose_qparams(mn, mx, 0, 127)  # PyTorch's reduce_range: 7-bit activations
        xq = _quantize_np(a2, np.float32(1.0) / np.float32(scale), zp, quint8, as_float=True)
        acc = gemm.int_matmul(xq, self._w_int.T, 127, 128, out_float=True)
        if zp:
            acc -= np.float32(zp) * self._colsum
        out = acc * (np.float32(scale) * self._s_w)
        b = self._bias()
        if b is not None:
            out += b
        return _result(out, x, lead)

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        return super().extra_repr() + f", dtype={self._qweight.dtype!r}, qscheme={self._qweight.qscheme()!r}"


class Int8DynamicLinear(_QuantizedLinearBase):
    """Symmetric int8 weight, per output channel or (``group_size``) per group of input features of each
    output channel; per-token asymmetric int8 activations (torchao's ``Int8DynamicActivationInt8Weight``);
    float out."""

    def __init__(self, in_features, out_features, bias=True, group_size=None):
        super().__init__(in_features, out_features, bias)
        self.group_size = None if group_size is None else int(group_size)

    def _set_weight(self, w):
        self._qweight = w
        self._w_int = _host(w._int)
        n, k = self.out_features, self.in_features
        if w._packing is None:
            self._groups = [(0, k)]
            self._s_w = _host(w._scales).astype(np.float32).reshape(n, 1)
        else:
            g = w._packing[1]
            self._groups = [(i, min(i + g, k)) for i in range(0, k, g)]
            self._s_w = _host(w._scales).astype(np.float32).reshape(n, -1)
        # per group: each output channel's sum of integer weights (for the activations' zero points)
        colsum = np.stack([self._w_int[:, lo:hi].sum(axis=1, dtype=np.int64) for lo, hi in self._groups], axis=1)
        self._colsum_s = (colsum * self._s_w).astype(np.float32)  # times each group's weight scale

    @classmethod
    def from_float(cls, mod, group_size=None):
        q = cls(mod.in_features, mod.out_features, mod.bias is not None, group_size)
        q._set_weight(_symmetric_int8(mod.weight, group_size))
        q._set_bias(mod.bias)
        return q

    def _grouped_product(self, a, bound_a):
        """Sum over weight groups of ``(a_g @ w_g.T) * scale_g`` (exact integer products when ``a`` is integer)."""
        wt = self._w_int.T.astype(np.float32)
        parts = []
        for lo, hi in self._groups:
            blk = a[:, lo:hi]
            parts.append(gemm.int_matmul(blk, wt[lo:hi], bound_a, 127, out_float=True) if bound_a
                         else gemm.matmul(blk, wt[lo:hi]))
        return parts

    def forward(self, x):
        a = _float_input(x, "Int8DynamicLinear")
        self._check(a)
        lead = a.shape[:-1]
        a2 = a.reshape(-1, self.in_features)
        xq, s, zp = _per_token_int8(a2)
        parts = self._grouped_product(xq, 128)
        if len(parts) == 1:
            # (acc - zp colsum) * s_w * s + b, as acc * s_w - zp (colsum s_w), then * s, + b
            out = parts[0]
            out *= self._s_w[:, 0]
            out -= np.multiply.outer(zp, self._colsum_s[:, 0])
        else:
            out = None
            for gi, acc in enumerate(parts):
                acc *= self._s_w[:, gi]
                acc -= np.multiply.outer(zp, self._colsum_s[:, gi])
                out = acc if out is None else out.__iadd__(acc)
        out *= s[:, None]
        b = self._bias()
        if b is not None:
            out += b
        return _result(out, x, lead)

    def extra_repr(self):
        g = f", group_size={self.group_size}" if self.group_size else ""
        return super().extra_repr() + g

    def _get_name(self):
        return "Int8DynamicActivationInt8WeightLinear"


def _per_token_int8(a2):
    """Per-token (per-row) asymmetric int8 quantization of the float32 matrix ``a2``: the row's own
    [min, max] (widened to hold 0) onto [-128, 127], so a row of ReLU outputs uses all 256 levels.

    Returns ``(xq, s, zp)``: the integers in [-128, 127] kept in float32 for the BLAS product, and
    each row's float32 scale and zero point (``x ~ (xq - zp) * s``).
    """
    mn = a2.min(axis=1, initial=0.0)  # float32, <= 0
    s = a2.max(axis=1, initial=0.0)
    s -= mn
    s /= np.float32(255)
    np.maximum(s, np.float32(EPS32), out=s)
    inv = np.float32(1) / s
    zp = mn * inv  # in [-255, 0], so -128 - rint(.) lies in [-128, 127]
    np.rint(zp, out=zp)
    np.subtract(np.float32(-128), zp, out=zp)
    xq = a2 * inv[:, None]
    xq += zp[:, None]
    np.rint(xq, out=xq)
    np.clip(xq, -128, 127, out=xq)  # the row's max can round to 128
    return xq, s, zp


def _symmetric_int8(weight, group_size=None):
    """int8 on [-127, 127] with scale ``max|w| / 127`` per output channel, or per output channel and group of
    ``group_size`` input features (a grouped quantized tensor: ``packing=(k, group_size)``)."""
    w = weight.detach().to(_F32).cpu()
    a = native(w)
    n, k = a.shape
    if group_size is None:
        amax = np.abs(a).max(axis=1, initial=0.0)
        scales = np.maximum(amax / np.float32(127), np.float32(EPS32)).astype(np.float64)
        q = quantize_per_channel(w, tensorplug.tensor(scales), tensorplug.zeros(n, dtype=tensorplug.int64), 0, qint8)
        q._qscheme = per_channel_symmetric
        return q
    if group_size <= 0:
        raise ValueError(f"group_size must be positive, got {group_size}")
    groups = [(i, min(i + group_size, k)) for i in range(0, k, group_size)]
    scales = np.empty((n, len(groups)), np.float32)
    q = np.empty((n, k), np.int8)
    for gi, (lo, hi) in enumerate(groups):
        blk = a[:, lo:hi]
        sc = np.maximum(np.abs(blk).max(axis=1) / np.float32(127), np.float32(EPS32)).astype(np.float32)
        q[:, lo:hi] = np.clip(np.rint(blk / sc[:, None]), -127, 127)
        scales[:, gi] = sc
    return make_quantized(wrap(q, tensorplug.int8, _CPU), qint8, scales=tensorplug.tensor(scales.reshape(-1)),
                          zero_points=tensorplug.zeros(n * len(groups), dtype=tensorplug.uint8), axis=0,
                          scheme=per_channel_symmetric, packing=(k, group_size))


class Int8WeightOnlyLinear(Int8DynamicLinear):
    """Symmetric int8 weight per output channel (or per group), float activations (torchao's ``Int8WeightOnly``)."""

    def forward(self, x):
        a = _float_input(x, "Int8WeightOnlyLinear")
        self._check(a)
        lead = a.shape[:-1]
        parts = self._grouped_product(a.reshape(-1, self.in_features), None)
        out = None
        for gi, acc in enumerate(parts):
            acc = acc * self._s_w[:, gi]
            out = acc if out is None else out.__iadd__(acc)
        b = self._bias()
        if b is not None:
            out += b
        return _result(out, x, lead)

    def _get_name(self):
        return "Int8WeightOnlyLinear"


class Int4WeightOnlyLinear(_QuantizedLinearBase):
    """4-bit weights (two per byte) with a float32 scale and an integer zero point per group of
    ``group_size`` input features of each output feature; float activations (torchao's
    ``Int4WeightOnly``)."""

    def __init__(self, in_features, out_features, bias=True, group_size=128):
        super().__init__(in_features, out_features, bias)
        self.group_size = int(group_size)

    def _set_weight(self, w):
        if w.dtype is not quint4x2:
            raise RuntimeError("Int4WeightOnlyLinear: the weight must be a quint4x2 quantized tensor")
        self._qweight = w
        self._packed = _host(w._int)
        g = self.group_size
        scales = _host(w._scales).astype(np.float32).reshape(self.out_features, -1)
        zps = _host(w._zero_points).astype(np.float32).reshape(self.out_features, -1)
        self._s = scales
        self._zs = zps * scales
        self._groups = [(i, min(i + g, self.in_features)) for i in range(0, self.in_features, g)]

    @classmethod
    def from_float(cls, mod, group_size=128):
        q = cls(mod.in_features, mod.out_features, mod.bias is not None, group_size)
        q._set_weight(quantize_int4(mod.weight, group_size))
        q._set_bias(mod.bias)
        return q

    def dequantized_weight(self):
        """The float32 weight the 4-bit values stand for."""
        wq = unpack_int4(self._packed, self.in_features)
        out = np.empty_like(wq)
        for gi, (a, b) in enumerate(self._groups):
            out[:, a:b] = wq[:, a:b] * self._s[:, gi:gi + 1] - self._zs[:, gi:gi + 1]
        return wrap(out, _F32, _CPU)

    def forward(self, x):
        a = _float_input(x, "Int4WeightOnlyLinear")
        self._check(a)
        lead = a.shape[:-1]
        a2 = a.reshape(-1, self.in_features)
        wq = unpack_int4(self._packed, self.in_features)  # one gather: the 4-bit values as float32
        out = None
        sums = np.empty((a2.shape[0], len(self._groups)), np.float32)
        for gi, (lo, hi) in enumerate(self._groups):
            part = gemm.matmul(a2[:, lo:hi], wq[:, lo:hi].T) * self._s[:, gi]
            out = part if out is None else out.__iadd__(part)
            sums[:, gi] = a2[:, lo:hi].sum(axis=1)
        out -= sums @ self._zs.T   # the zero points: sum over groups of (x_g . 1) * zp_g * s_g
        b = self._bias()
        if b is not None:
            out += b
        return _result(out, x, lead)

    def extra_repr(self):
        return super().extra_repr() + f", group_size={self.group_size}"

    def _get_name(self):
        return "Int4WeightOnlyLinear"


def quantize_int4(weight, group_size=128):
    """A quint4x2 quantized tensor of the 2-d ``weight``: per row and group of ``group_size`` columns, an
    asymmetric 4-bit grid (``scale = (max - min) / 15``, integer zero point). Its ``int_repr()`` is the
    packed bytes; its per-channel scales and zero points are per (row, group), row-major."""
    if weight.dim() != 2:
        raise RuntimeError(f"Int4WeightOnly: expected a 2-d weight, got {weight.dim()} dims")
    if group_size <= 0:
        raise ValueError(f"Int4WeightOnly: group_size must be positive, got {group_size}")
    a = _host(weight.detach().to(_F32))
    n, k = a.shape
    groups = [(i, min(i + group_size, k)) for i in range(0, k, group_size)]
    q = np.empty((n, k), np.uint8)
    scales = np.empty((n, len(groups)), np.float32)
    zps = np.empty((n, len(groups)), np.int64)
    for gi, (lo, hi) in enumerate(groups):
        blk = a[:, lo:hi]
        mn = np.minimum(blk.min(axis=1), 0).astype(np.float32)
        mx = np.maximum(blk.max(axis=1), 0).astype(np.float32)
        s = np.maximum((mx - mn) / np.float32(15), np.float32(EPS32)).astype(np.float32)
        z = np.clip(np.rint(-mn / s), 0, 15).astype(np.int64)
        q[:, lo:hi] = np.clip(np.rint(blk / s[:, None] + z[:, None]), 0, 15).astype(np.uint8)
        scales[:, gi], zps[:, gi] = s, z
    packed = wrap(pack_int4(q), tensorplug.uint8, _CPU)
    # group parameters stay compact (float32 scales, uint8 zero points): at 4 bits a weight, float64 and int64
    # ones would add a third to the file
    return make_quantized(packed, quint4x2, scales=tensorplug.tensor(scales.reshape(-1)),
                          zero_points=tensorplug.tensor(zps.reshape(-1).astype(np.uint8)), axis=0,
                          packing=(k, group_size))


__all__ = ["DynamicLinear", "Int8DynamicLinear", "Int8WeightOnlyLinear", "Int4WeightOnlyLinear", "quantize_int4"]
