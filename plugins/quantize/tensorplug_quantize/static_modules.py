"""Statically quantized modules: what :func:`~tensorplug_quantize.static.convert` puts in place of the
observed float layers (``tensorplug.ao.nn.quantized``).

- :class:`Quantize` / :class:`DeQuantize`: float32 in, ``quint8`` out with the calibrated scale and
  zero point, and back;
- :class:`Linear`, :class:`Conv2d` and the fused :class:`LinearReLU`, :class:`ConvReLU2d` (PyTorch has
  these two under ``torch.ao.nn.intrinsic.quantized``): a ``quint8`` quantized input, a ``qint8``
  weight (per tensor or per output channel, from the weight observer), exact integer accumulation
  (:mod:`tensorplug_quantize.gemm`; a convolution is an im2col of the integer values and one GEMM),
  the float32 bias added, and the result requantized to the module's output ``scale`` and
  ``zero_point`` (from the observer after the layer): a ``quint8`` quantized tensor out. The ReLU
  variants clamp the output at its zero point.

Computation is on the CPU; tensors on other devices are computed on the host and moved back.
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug import nn
from tensorplug.nn import functional as F
from tensorplug.plugin_api import native, wrap

from . import gemm
from .fused import ConvReLU2d as _FloatConvReLU2d
from .fused import LinearReLU as _FloatLinearReLU
from .modules import _QuantizedLinearBase
from .qtensor import (QuantizedTensor, _quantize_np, make_quantized, per_channel_affine_float_qparams,
                      per_tensor_affine, per_tensor_symmetric, qint8, quantize_per_channel, quantize_per_tensor,
                      quint8)

_F32 = tensorplug.float32
_CPU = tensorplug.device("cpu")


def _host(t):
    t = t.detach()
    return native(t.cpu()) if t._device.type != "cpu" else native(t)


def _quantized_input(x, who):
    if not isinstance(x, QuantizedTensor):
        raise RuntimeError(f"Could not run 'quantized::{who}' with arguments from the 'CPU' backend: the input of a "
                           f"static quantized module must be a quantized tensor (put a QuantStub before it)")
    if x._scales is not None or x._dtype is not quint8:
        raise RuntimeError(f"quantized::{who}: expected a quint8 tensor quantized per tensor, got {x._dtype!r} "
                           f"with qscheme {x._qscheme!r}")
    return _host(x._int), x._scale, x._zero_point


def _weight_params(w):
    """``(int values, zero points, float32 scales)``: per tensor numbers or per output channel arrays."""
    wi = _host(w._int)
    if w._scales is None:
        return wi, int(w._zero_point), np.float32(w._scale)
    if w._axis != 0:
        raise RuntimeError(f"quantized weights must be quantized per output channel (axis 0), got axis {w._axis}")
    return wi, _host(w._zero_points).astype(np.int64), _host(w._scales).astype(np.float32)


def _quantize_weight(float_wt, observer):
    """The ``qint8`` weight from a weight observer that has seen it, as PyTorch's ``_quantize_weight``."""
    wt_scale, wt_zp = observer.calculate_qparams()
    if observer.dtype is not qint8:
        raise AssertionError(f"Weight observer must have dtype tensorplug.qint8, got {observer.dtype!r}")
    if observer.qscheme in (per_tensor_symmetric, per_tensor_affine):
        return quantize_per_tensor(float_wt, float(wt_scale.item()), int(wt_zp.item()), qint8)
    if observer.qscheme is per_channel_affine_float_qparams:
        raise NotImplementedError("float zero points (per_channel_affine_float_qparams) are not supported for "
                                  "quantized Linear and Conv2d weights")
    return quantize_per_channel(float_wt, wt_scale.to(tensorplug.float64), wt_zp.to(tensorplug.int64),
                                getattr(observer, "ch_axis", 0), qint8)


def _observers(mod, fused_type):
    """``(float module, weight observer, activation observer)`` of a float, fused or QAT module."""
    if hasattr(mod, "weight_fake_quant"):
        weight_post_process = mod.weight_fake_quant
        float_mod = mod
    else:
        float_mod = mod[0] if isinstance(mod, fused_type) else mod
        if not hasattr(mod, "qconfig") or mod.qconfig is None:
            raise AssertionError("Input float module must have qconfig defined")
        weight_post_process = mod.qconfig.weight()
    if not hasattr(mod, "activation_post_process"):
        raise AssertionError("Input float module must have activation_post_process attached: run prepare() and "
                             "calibrate first")
    weight_post_process(float_mod.weight.detach())
    return float_mod, weight_post_process, mod.activation_post_process


class _OutputQParams:
    """The output ``scale`` (float) and ``zero_point`` (int), kept in the ``state_dict`` as tensors."""

    def _requantize(self, out, lead):
        inv = np.float32(1.0) / np.float32(self.scale)
        q = _quantize_np(np.ascontiguousarray(out, np.float32), inv, int(self.zero_point), quint8)
        if self._RELU:
            np.maximum(q, np.uint8(self.zero_point), out=q)
        return q

    def _wrap_out(self, q, x):
        t = wrap(q, tensorplug.uint8, _CPU)
        if x._device.type != "cpu":
            t = t.to(x._device)
        return make_quantized(t, quint8, float(self.scale), int(self.zero_point))

    def _save_qparams(self, destination, prefix):
        destination[prefix + "scale"] = tensorplug.tensor(float(self.scale))
        destination[prefix + "zero_point"] = tensorplug.tensor(int(self.zero_point))

    def _load_qparams(self, state_dict, prefix, strict, missing_keys):
        rest = dict(state_dict)
        for name in ("scale", "zero_point"):
            key = prefix + name
            if key in rest:
                v = rest.pop(key)
                setattr(self, name, float(v.item()) if name == "scale" else int(v.item()))
            elif strict:
                missing_keys.append(key)
        return rest


class Linear(_OutputQParams, _QuantizedLinearBase):
    """Static quantized linear (``torch.ao.nn.quantized.Linear``): ``quint8`` in, ``quint8`` out."""

    _RELU = False
    _FLOAT_TYPES = (nn.Linear,)

    def __init__(self, in_features, out_features, bias_=True, dtype=qint8):
        super().__init__(in_features, out_features, bias_)
        if dtype is not qint8:
            raise NotImplementedError(f"quantized Linear supports dtype tensorplug.qint8 weights, got {dtype!r}")
        self.scale = 1.0
        self.zero_point = 0
        self._set_weight(quantize_per_tensor(tensorplug.zeros(out_features, in_features), 1.0, 0, qint8))

    def _set_weight(self, w):
        self._qweight = w
        self._w_int, self._zp_w, self._s_w = _weight_params(w)
        self._w_int_t = np.ascontiguousarray(self._w_int.T)

    def set_weight_bias(self, w, b):
        """Replace the quantized weight and the float bias."""
        self._set_weight(w)
        self._set_bias(b)

    def forward(self, x):
        a, sx, zx = _quantized_input(x, "linear_relu" if self._RELU else "linear")
        self._check(a)
        lead = a.shape[:-1]
        a2 = a.reshape(-1, self.in_features)
        acc = gemm.affine_matmul(a2, zx, self._w_int_t, self._zp_w, 255, 128)
        out = acc.astype(np.float32) * (np.float32(sx) * self._s_w)
        b = self._bias()
        if b is not None:
            out += b
        q = self._requantize(out, lead)
        return self._wrap_out(q.reshape(tuple(lead) + (self.out_features,)), x)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized version of an observed float (or QAT) module, after calibration."""
        float_mod, wpp, app = _observers(mod, _FloatLinearReLU)
        q = cls(float_mod.in_features, float_mod.out_features, float_mod.bias is not None)
        q.set_weight_bias(_quantize_weight(float_mod.weight.detach().to(_F32), wpp), float_mod.bias)
        scale, zp = app.calculate_qparams()
        q.scale, q.zero_point = float(scale.item()), int(zp.item())
        return q

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        self._save_qparams(destination, prefix)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        rest = self._load_qparams(state_dict, prefix, strict, missing_keys)
        super()._load_from_state_dict(rest, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def _get_name(self):
        return "QuantizedLinearReLU" if self._RELU else "QuantizedLinear"

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
                f"zero_point={self.zero_point}, qscheme={self._qweight.qscheme()!r}")


class LinearReLU(Linear):
    """Static quantized Linear + ReLU (``torch.ao.nn.intrinsic.quantized.LinearReLU``)."""

    _RELU = True


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (int(v), int(v))


class Conv2d(_OutputQParams, nn.Module):
    """Static quantized 2-d convolution (``torch.ao.nn.quantized.Conv2d``): ``quint8`` in, ``quint8`` out;
    zero padding (the input's zero point)."""

    _RELU = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", dtype=qint8):
        super().__init__()
        if padding_mode != "zeros":
            raise NotImplementedError("quantized Conv2d supports padding_mode='zeros' only")
        if in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.groups, self.padding_mode = int(groups), padding_mode
        self.scale, self.zero_point = 1.0, 0
        self.bias = tensorplug.zeros(out_channels) if bias else None
        w = tensorplug.zeros(out_channels, in_channels // groups, *self.kernel_size)
        self._set_weight(quantize_per_tensor(w, 1.0, 0, qint8))

    def _set_weight(self, w):
        self._qweight = w
        wi, self._zp_w, self._s_w = _weight_params(w)
        o, g = self.out_channels, self.groups
        og = o // g
        flat = wi.reshape(o, -1)
        zps = np.broadcast_to(np.asarray(self._zp_w, np.int64), (o,))
        self._groups_w = [(np.ascontiguousarray(flat[i * og:(i + 1) * og].T), zps[i * og:(i + 1) * og])
                          for i in range(g)]

    def weight(self):
        """The quantized weight."""
        return self._qweight

    def set_weight_bias(self, w, b):
        """Replace the quantized weight and the float bias."""
        self._set_weight(w)
        self.bias = None if b is None else b.detach().to(_F32).clone()

    def forward(self, x):
        a, sx, zx = _quantized_input(x, "conv2d_relu" if self._RELU else "conv2d")
        if a.ndim != 4:
            raise ValueError(f"Input shape must be `(N, C, H, W)`, got {tuple(a.shape)}")
        if a.shape[1] != self.in_channels:
            raise RuntimeError(f"Given groups={self.groups}, weight of size {tuple(self._qweight.shape)}, expected "
                               f"input{tuple(a.shape)} to have {self.in_channels} channels, but got {a.shape[1]} "
                               f"channels instead")
        n, _, h, w = a.shape
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = self.kernel_size, self.stride, self.padding, self.dilation
        ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        wo = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        # im2col of the integers shifted by the zero point: zero padding is then the value 0.0, and every
        # value is an integer in [-255, 255], which float32 unfold keeps exact
        shifted = wrap(a.astype(np.float32) - np.float32(zx), _F32, _CPU)
        cols = _host(F.unfold(shifted, self.kernel_size, dilation=self.dilation, padding=self.padding,
                              stride=self.stride))
        cols = np.ascontiguousarray(cols.transpose(0, 2, 1)).astype(np.int16)  # (N, L, C*kh*kw)
        ck = cols.shape[-1] // self.groups
        parts = [gemm.affine_matmul(cols[..., i * ck:(i + 1) * ck], 0, wg, zg, 255, 128)
                 for i, (wg, zg) in enumerate(self._groups_w)]
        acc = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)  # (N, L, O)
        out = acc.astype(np.float32) * (np.float32(sx) * self._s_w)
        if self.bias is not None:
            out += _host(self.bias).astype(np.float32)
        q = self._requantize(out, None)
        q = np.ascontiguousarray(q.reshape(n, ho, wo, self.out_channels).transpose(0, 3, 1, 2))
        return self._wrap_out(q, x)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized version of an observed float (or QAT) module, after calibration."""
        float_mod, wpp, app = _observers(mod, _FloatConvReLU2d)
        q = cls(float_mod.in_channels, float_mod.out_channels, float_mod.kernel_size, float_mod.stride,
                float_mod.padding, float_mod.dilation, float_mod.groups, float_mod.bias is not None,
                float_mod.padding_mode)
        q.set_weight_bias(_quantize_weight(float_mod.weight.detach().to(_F32), wpp), float_mod.bias)
        scale, zp = app.calculate_qparams()
        q.scale, q.zero_point = float(scale.item()), int(zp.item())
        return q

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        destination[prefix + "weight"] = self._qweight
        if self.bias is not None:
            destination[prefix + "bias"] = self.bias
        self._save_qparams(destination, prefix)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        rest = self._load_qparams(state_dict, prefix, strict, missing_keys)
        if prefix + "weight" in rest:
            w = rest[prefix + "weight"]
            if not isinstance(w, QuantizedTensor) or w.shape != self._qweight.shape:
                error_msgs.append(f'While copying the parameter named "{prefix}weight", expected a quantized '
                                  f"tensor of shape {tuple(self._qweight.shape)}")
            else:
                self._set_weight(w)
        elif strict:
            missing_keys.append(prefix + "weight")
        if self.bias is not None:
            if prefix + "bias" in rest:
                self.bias = rest[prefix + "bias"].detach().to(_F32).clone()
            elif strict:
                missing_keys.append(prefix + "bias")
        if strict:
            for key in rest:
                if key.startswith(prefix) and key[len(prefix):] not in ("weight", "bias"):
                    unexpected_keys.append(key)

    def _get_name(self):
        return "QuantizedConvReLU2d" if self._RELU else "QuantizedConv2d"

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
             f"scale={self.scale}, zero_point={self.zero_point}")
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class ConvReLU2d(Conv2d):
    """Static quantized Conv2d + ReLU (``torch.ao.nn.intrinsic.quantized.ConvReLU2d``)."""

    _RELU = True


class Quantize(nn.Module):
    """Quantizes float32 input with fixed parameters (``torch.ao.nn.quantized.Quantize``): what a calibrated
    ``QuantStub`` becomes."""

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        super().__init__()
        self.register_buffer("scale", tensorplug.tensor([float(scale)]))
        self.register_buffer("zero_point", tensorplug.tensor([int(zero_point)], dtype=tensorplug.int64))
        self.dtype = dtype

    def forward(self, X):
        return quantize_per_tensor(X, float(self.scale.item()), int(self.zero_point.item()), self.dtype)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if not hasattr(mod, "activation_post_process"):
            raise AssertionError("QuantStub must have activation_post_process attached: run prepare() first")
        scale, zp = mod.activation_post_process.calculate_qparams()
        return cls(float(scale.item()), int(zp.item()), mod.activation_post_process.dtype)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(nn.Module):
    """Dequantizes its quantized input to float32 (``torch.ao.nn.quantized.DeQuantize``)."""

    def forward(self, Xq):
        return Xq.dequantize()

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls()


__all__ = ["Linear", "LinearReLU", "Conv2d", "ConvReLU2d", "Quantize", "DeQuantize"]
