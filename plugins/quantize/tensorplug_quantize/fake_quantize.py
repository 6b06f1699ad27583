"""Fake quantization, as PyTorch: float values rounded onto the quantized grid and back, with a
straight-through gradient.

``fake_quantize_per_tensor_affine(x, scale, zero_point, quant_min, quant_max)`` computes, as PyTorch's
CPU kernel, ``q = round_half_even(x * float32(1 / scale)) + zero_point`` and returns
``(clamp(q, quant_min, quant_max) - zero_point) * scale`` in float32; its gradient is the incoming one
where ``quant_min <= q <= quant_max`` and zero elsewhere. :class:`FakeQuantize` pairs an observer with
it (what quantization-aware training puts after weights and activations).
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug import Tensor, nn
from tensorplug.autograd import Function

from .observers import (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver,
                        _classproperty_with_args)
from .qparams import choose_qparams
from .qtensor import (RANGE, per_channel_affine, per_channel_affine_float_qparams, per_channel_symmetric,
                      per_tensor_affine, per_tensor_symmetric, qint8, quint8)

_F32 = tensorplug.float32


def _fake_quant(x, scale, inv_scale, zero_point, quant_min, quant_max):
    """``(values, mask)`` with tensorplug ops; the parameters broadcast against ``x`` (float32 tensors)."""
    q = tensorplug.round(x * inv_scale) + zero_point
    mask = (q >= quant_min) & (q <= quant_max)
    out = (q.clamp(quant_min, quant_max) - zero_point) * scale
    return out, mask


class _FakeQuantizeFunction(Function):
    @staticmethod
    def forward(ctx, x, scale, inv_scale, zero_point, quant_min, quant_max):
        out, mask = _fake_quant(x, scale, inv_scale, zero_point, quant_min, quant_max)
        ctx.save_for_backward(mask)
        return out

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad * mask.to(grad.dtype), None, None, None, None, None


def _check_range(quant_min, quant_max):
    if not quant_min <= quant_max:
        raise RuntimeError("`quant_min` should be less than or equal to `quant_max`.")


def _check_float(x, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if x.dtype is not _F32:
        raise RuntimeError(f"{fn}: expected a float32 input, got {x.dtype!r}")


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """``dequantize(quantize(input))`` on the grid ``scale * (k - zero_point)``, ``k`` in
    ``[quant_min, quant_max]``, with a straight-through gradient, as ``torch.fake_quantize_per_tensor_affine``.
    ``scale`` and ``zero_point`` are numbers or one-element tensors."""
    _check_float(input, "fake_quantize_per_tensor_affine")
    if isinstance(scale, Tensor):
        scale = scale.item()
    if isinstance(zero_point, Tensor):
        zero_point = zero_point.item()
    quant_min, quant_max, zero_point = int(quant_min), int(quant_max), int(round(zero_point))
    _check_range(quant_min, quant_max)
    if not quant_min <= zero_point <= quant_max:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    s = np.float32(scale)
    inv = np.float32(1.0) / s
    dev = input.device
    return _FakeQuantizeFunction.apply(input, tensorplug.tensor(s, device=dev), tensorplug.tensor(inv, device=dev),
                                       tensorplug.tensor(np.float32(zero_point), device=dev), quant_min, quant_max)


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """Per-channel fake quantization along ``axis`` (one scale and zero point per slice), as
    ``torch.fake_quantize_per_channel_affine``."""
    _check_float(input, "fake_quantize_per_channel_affine")
    if scale.dim() != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.dim() != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    ndim = input.dim()
    if not 0 <= axis <= ndim:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    if scale.numel() != input.shape[axis]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input tensor")
    quant_min, quant_max = int(quant_min), int(quant_max)
    _check_range(quant_min, quant_max)
    zp = np.asarray(zero_point.detach().cpu().tolist(), np.float64)
    if zp.size and (np.rint(zp).min() < quant_min or np.rint(zp).max() > quant_max):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    shape = [1] * ndim
    shape[axis] = scale.numel()
    s = np.asarray(scale.detach().cpu().tolist(), np.float32)
    inv = (np.float32(1.0) / s).astype(np.float32)
    dev = input.device
    as_t = lambda a: tensorplug.tensor(np.asarray(a, np.float32).reshape(shape), device=dev)  # noqa: E731
    return _FakeQuantizeFunction.apply(input, as_t(s), as_t(inv), as_t(np.rint(zp)), quant_min, quant_max)


_PER_CHANNEL = (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams)
_PER_TENSOR = (per_tensor_affine, per_tensor_symmetric)


class FakeQuantizeBase(nn.Module):
    """The switches of a fake quantize module: ``enable_fake_quant`` / ``disable_fake_quant`` and
    ``enable_observer`` / ``disable_observer`` (buffers ``fake_quant_enabled`` and ``observer_enabled``)."""

    with_args = _classproperty_with_args()

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", tensorplug.tensor([1], dtype=tensorplug.uint8))
        self.register_buffer("observer_enabled", tensorplug.tensor([1], dtype=tensorplug.uint8))

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled = tensorplug.tensor([1 if enabled else 0], dtype=tensorplug.uint8)
        return self

    def disable_fake_quant(self):
        return self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled = tensorplug.tensor([1 if enabled else 0], dtype=tensorplug.uint8)
        return self

    def disable_observer(self):
        return self.enable_observer(False)


class FakeQuantize(FakeQuantizeBase):
    """An observer followed by fake quantization with the parameters it gives
    (``torch.ao.quantization.FakeQuantize``): ``observer(**observer_kwargs)`` becomes
    ``activation_post_process``; ``scale`` and ``zero_point`` are buffers updated on every call while
    the observer is enabled."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None, is_dynamic=False,
                 **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            dtype = observer_kwargs.get("dtype", quint8)
            if hasattr(observer, "p"):
                dtype = getattr(observer, "kwargs", {}).get("dtype", dtype)
            lo, hi = RANGE[dtype]
            if lo > quant_min:
                raise AssertionError("quant_min out of bound")
            if quant_max > hi:
                raise AssertionError("quant_max out of bound")
            observer_kwargs.update({"quant_min": quant_min, "quant_max": quant_max})
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        app = self.activation_post_process
        self.quant_min, self.quant_max = app.quant_min, app.quant_max
        self.is_dynamic = is_dynamic
        self.register_buffer("scale", tensorplug.tensor([1.0]))
        zp_dtype = _F32 if app.qscheme is per_channel_affine_float_qparams else tensorplug.int64
        self.register_buffer("zero_point", tensorplug.tensor([0], dtype=zp_dtype))
        self.dtype = app.dtype
        self.qscheme = app.qscheme
        self.ch_axis = getattr(app, "ch_axis", -1)
        if self.qscheme not in _PER_CHANNEL + _PER_TENSOR:
            raise AssertionError("Only per channel and per tensor quantization are supported in fake quantize got "
                                 f"qscheme: {self.qscheme}")
        self.is_per_channel = self.qscheme in _PER_CHANNEL

    def calculate_qparams(self):
        """The observer's ``(scale, zero_point)``."""
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):
        if int(self.observer_enabled[0].item()) == 1:
            self.activation_post_process(X.detach())
            scale, zp = self.calculate_qparams()
            self.scale, self.zero_point = scale.to(X.device), zp.to(X.device)
        if int(self.fake_quant_enabled[0].item()) == 1:
            if self.is_per_channel:
                X = fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis, self.quant_min,
                                                     self.quant_max)
            else:
                X = fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, self.quant_min, self.quant_max)
        return X

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"quant_min={self.quant_min}, quant_max={self.quant_max}, dtype={self.dtype}, "
                f"qscheme={self.qscheme}, ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")


def _fused_qparams(mn, mx, qmin, qmax, symmetric):
    """The scale and zero point PyTorch's fused observer + fake quantize kernel picks for one range
    (its ``ChooseQuantizationParams``; ``symmetric``: its ``preserve_sparsity``)."""
    mn, mx = np.float32(mn), np.float32(mx)
    sparse = symmetric and mn < 0 < mx
    if sparse:
        sym_min = -((qmax - qmin) // 2 + 1)
        sym_max = (qmax - qmin) // 2
        max_scale = max(abs(float(mn) / sym_min), abs(float(mx) / sym_max))
        mn, mx = np.float32(max_scale * sym_min), np.float32(max_scale * sym_max)
    scale, zp = choose_qparams(float(mn), float(mx), qmin, qmax)
    if sparse:
        zp = int(np.clip(np.rint((qmin + qmax) / 2), qmin, qmax))
    return scale, zp


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """PyTorch's fused observer + fake quantize module (what ``get_default_qat_qconfig(backend, version=1)``,
    the default, uses): a moving-average observer, and fake quantization with the parameters of
    PyTorch's fused kernel, which differ from the observer's in how they round: a symmetric range
    ``[-a, a]`` gets the scale ``a / 128`` (not ``a / 127.5``) when the negative end is the larger, and
    the affine scale is computed in float64. ``calculate_qparams()`` (what :func:`convert` uses) is the
    observer's, as PyTorch."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        self.is_symmetric_quant = self.qscheme in (per_tensor_symmetric, per_channel_symmetric)

    def forward(self, X):
        if int(self.observer_enabled[0].item()) == 1:
            app = self.activation_post_process
            app(X.detach())
            mn = np.atleast_1d(np.asarray(app.min_val.tolist(), np.float32))
            mx = np.atleast_1d(np.asarray(app.max_val.tolist(), np.float32))
            params = [_fused_qparams(a, b, self.quant_min, self.quant_max, self.is_symmetric_quant)
                      for a, b in zip(mn, mx)]
            self.scale = tensorplug.tensor(np.array([p[0] for p in params], np.float32)).to(X.device)
            self.zero_point = tensorplug.tensor(np.array([p[1] for p in params], np.int64)).to(X.device)
        if int(self.fake_quant_enabled[0].item()) == 1:
            if self.is_per_channel:
                return fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis,
                                                        self.quant_min, self.quant_max)
            return fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, self.quant_min, self.quant_max)
        return X


default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8, qscheme=per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_channel_symmetric)


default_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                            dtype=quint8, qscheme=per_tensor_affine, reduce_range=True)
"""Activations: ``quint8`` affine per tensor, moving-average range, PyTorch's reduced range [0, 127]."""
default_weight_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128,
                                                   quant_max=127, dtype=qint8, qscheme=per_tensor_symmetric,
                                                   reduce_range=False)
"""Weights: ``qint8`` symmetric per tensor."""
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_channel_symmetric, reduce_range=False, ch_axis=0)
"""Weights: ``qint8`` symmetric per output channel."""

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine", "FakeQuantize",
           "FakeQuantizeBase", "default_fake_quant", "default_weight_fake_quant",
           "default_per_channel_weight_fake_quant", "FusedMovingAvgObsFakeQuantize", "default_fused_act_fake_quant",
           "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant"]
