"""Observers, as ``torch.ao.quantization``: modules that record the range of what flows through them and
turn it into a scale and a zero point (:meth:`calculate_qparams`), with PyTorch's float32 arithmetic.

- :class:`MinMaxObserver`: the running min and max, per tensor;
- :class:`MovingAverageMinMaxObserver`: an exponential moving average of each batch's min and max;
- :class:`PerChannelMinMaxObserver` / :class:`MovingAveragePerChannelMinMaxObserver`: the same per
  slice along ``ch_axis`` (for weights);
- :class:`HistogramObserver`: a histogram of the values, and the range that minimizes its L2
  quantization error (PyTorch's default for activations).

Every observer's ``forward`` returns its input unchanged. ``Observer.with_args(**kwargs)`` is a factory
with some arguments bound (what a :class:`QConfig` holds).
"""

from __future__ import annotations

import bisect
import warnings

import numpy as np

import tensorplug
from tensorplug import nn
from tensorplug.plugin_api import native

from .qparams import EPS32, calculate_qparams
from .qtensor import (per_channel_affine, per_channel_affine_float_qparams, per_channel_symmetric,
                      per_tensor_affine, per_tensor_symmetric, qint8, qint32, quint8)

_F32 = tensorplug.float32


class _PartialWrapper:
    """``cls`` with keyword arguments bound (``Observer.with_args(...)``): calling it makes an instance."""

    def __init__(self, p, kwargs):
        self.p = p
        self.kwargs = dict(kwargs)

    def __call__(self, *args, **kwargs):
        return self.p(*args, **{**self.kwargs, **kwargs})

    def with_args(self, **kwargs):
        return _PartialWrapper(self.p, {**self.kwargs, **kwargs})

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"functools.partial({self.p!r}, {args}){{}}"


class _classproperty_with_args:
    def __get__(self, obj, owner):
        def with_args(**kwargs):
            return _PartialWrapper(owner, kwargs)
        return with_args


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range):
    """The quantized range an observer maps onto, as ``torch.ao.quantization.utils.calculate_qmin_qmax``."""
    if has_customized_qrange:
        if dtype is qint32:
            lo, hi = 0, 2 ** 32 - 1
        else:
            lo, hi = 0, 255
        if quant_min is not None and quant_max is not None:
            lo, hi = quant_min, quant_max
        qrange_len = hi - lo + 1
        if dtype is qint8:
            if not 0 < qrange_len <= 256:
                raise AssertionError("quantization range should be positive and not exceed the maximum bit range "
                                     "(=256).")
        elif dtype is qint32:
            if not 0 < qrange_len <= 2 ** 32:
                raise AssertionError("quantization range should be positive and not exceed the maximum bit range "
                                     "(=4294967296).")
        if reduce_range:
            quant_min, quant_max = quant_min // 2, quant_max // 2
    elif dtype is qint8:
        quant_min, quant_max = (-64, 63) if reduce_range else (-128, 127)
    elif dtype is quint8:
        quant_min, quant_max = (0, 127) if reduce_range else (0, 255)
    elif dtype is qint32:
        quant_min, quant_max = -1 * (2 ** 31), (2 ** 31) - 1
    else:
        quant_min, quant_max = 0, 15
    return quant_min, quant_max


class ObserverBase(nn.Module):
    """Base of the observers: ``dtype`` and the ``with_args`` factory."""

    with_args = _classproperty_with_args()

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype


class UniformQuantizationObserverBase(ObserverBase):
    """The quantization range checks and PyTorch's ``_calculate_qparams``."""

    _SCHEMES = (per_tensor_affine, per_tensor_symmetric, per_channel_affine, per_channel_symmetric,
                per_channel_affine_float_qparams)

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None, quant_max=None,
                 eps=EPS32):
        super().__init__(dtype)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn("Please use quant_min and quant_max to specify the range for observers. reduce_range "
                          "will be deprecated in a future release of PyTorch.", stacklevel=3)
        self.reduce_range = reduce_range
        self.eps = float(np.float32(eps))
        if qscheme not in self._SCHEMES:
            raise AssertionError("Default Observer only works for per_tensor_affine, per_tensor_symmetric, "
                                 "per_channel_affine, per_channel_symmetric and per_channel_float_qparams "
                                 "quantization scheme")
        if dtype not in (qint8, quint8, qint32):
            raise AssertionError("Default Observer only works for qint8, quint8 and quint4x2 data type")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            if not quant_min <= 0 <= quant_max:
                raise AssertionError("Used-specified quantization range must include 0.")
            if not quant_min < quant_max:
                raise AssertionError("qmin must be strictly less than qmax for user-specified quantization range.")
        self.quant_min, self.quant_max = calculate_qmin_qmax(quant_min, quant_max, self.has_customized_qrange,
                                                             dtype, reduce_range)

    def _calculate_qparams(self, min_val, max_val):
        """``(scale float32 tensor, zero_point int64 tensor)`` from float32 numpy ``min_val`` / ``max_val``."""
        min_val = np.asarray(min_val, np.float32)
        max_val = np.asarray(max_val, np.float32)
        if min_val.ndim == 0 and (np.isinf(min_val) or np.isinf(max_val)) or (
                min_val.ndim and (np.isinf(min_val).any() or np.isinf(max_val).any())):
            warnings.warn("must run observer before calling calculate_qparams. Returning default values.",
                          stacklevel=3)
            if self.qscheme is per_channel_affine_float_qparams:
                return tensorplug.tensor([1.0]), tensorplug.tensor([0.0])
            return tensorplug.tensor([1.0]), tensorplug.tensor([0])
        if np.any(min_val > max_val):
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
        symmetric = self.qscheme in (per_tensor_symmetric, per_channel_symmetric)
        float_qparams = self.qscheme is per_channel_affine_float_qparams
        scale, zp = calculate_qparams(min_val, max_val, self.quant_min, self.quant_max, symmetric=symmetric,
                                      unsigned=self.dtype is quint8, float_qparams=float_qparams)
        if self.eps != EPS32 and not float_qparams:
            # a user eps: the scale's floor, and the zero point from the floored scale (as PyTorch)
            mn = np.minimum(min_val, np.float32(0))
            mx = np.maximum(max_val, np.float32(0))
            eps = np.float32(self.eps)
            if symmetric:
                scale = np.maximum((np.maximum(-mn, mx) / np.float32((self.quant_max - self.quant_min) / 2))
                                   .astype(np.float32), eps)
            else:
                scale = np.maximum(((mx - mn) / np.float32(self.quant_max - self.quant_min)).astype(np.float32), eps)
                zp = np.clip(self.quant_min - np.rint(mn / scale).astype(np.int64), self.quant_min,
                             self.quant_max).astype(np.int64)
        if symmetric and self.dtype is quint8:
            zp = np.full(np.shape(scale), (self.quant_min + self.quant_max) // 2 if self.has_customized_qrange
                         else 128, np.int64)
        scale = np.atleast_1d(np.asarray(scale, np.float32))
        zp = np.atleast_1d(np.asarray(zp))
        zp_t = tensorplug.tensor(zp.astype(np.float32 if float_qparams else np.int64))
        return tensorplug.tensor(scale), zp_t

    def _host(self, x):
        x = x.detach()
        if getattr(x, "is_quantized", False):
            x = x.dequantize()
        a = native(x.cpu()) if x.device.type != "cpu" else native(x)
        return a.astype(np.float32, copy=False)

    def reset_min_max_vals(self):
        """Forget what was observed."""
        self.min_val = tensorplug.tensor(float("inf"))
        self.max_val = tensorplug.tensor(float("-inf"))


class MinMaxObserver(UniformQuantizationObserverBase):
    """The running minimum and maximum of every tensor seen (``torch.ao.quantization.MinMaxObserver``)."""

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps=EPS32, is_dynamic=False, **kwargs):
        if is_dynamic:
            raise NotImplementedError("MinMaxObserver's is_dynamic flag is not supported")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        if qscheme is per_tensor_symmetric and reduce_range and dtype is quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")
        self.register_buffer("min_val", tensorplug.tensor(float("inf")))
        self.register_buffer("max_val", tensorplug.tensor(float("-inf")))

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        mn, mx, old_mn, old_mx = self._ranges(x_orig)
        self.min_val = tensorplug.tensor(np.minimum(mn, old_mn))
        self.max_val = tensorplug.tensor(np.maximum(mx, old_mx))
        return x_orig

    def _ranges(self, x):
        """``(min, max)`` of ``x`` and the running ``(min, max)`` so far, as float32 numbers."""
        a = self._host(x)
        return (np.float32(a.min()), np.float32(a.max()), np.float32(self.min_val.item()),
                np.float32(self.max_val.item()))

    def calculate_qparams(self):
        """``(scale, zero_point)``: a float32 tensor and an int64 tensor of one element each."""
        return self._calculate_qparams(self.min_val.item(), self.max_val.item())

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class MovingAverageMinMaxObserver(MinMaxObserver):
    """An exponential moving average of each tensor's min and max:
    ``min = min + averaging_constant * (batch_min - min)`` (the first tensor sets them)."""

    def __init__(self, averaging_constant=0.01, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, eps=EPS32, is_dynamic=False, **kwargs):
        self.averaging_constant = averaging_constant
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        mn, mx, old_mn, old_mx = self._ranges(x_orig)
        if np.isinf(old_mn) and np.isinf(old_mx):
            new_mn, new_mx = mn, mx
        else:
            c = np.float32(self.averaging_constant)
            new_mn = np.float32(old_mn + np.float32(c * np.float32(mn - old_mn)))
            new_mx = np.float32(old_mx + np.float32(c * np.float32(mx - old_mx)))
        self.min_val = tensorplug.tensor(new_mn)
        self.max_val = tensorplug.tensor(new_mx)
        return x_orig


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """The running min and max of each slice along ``ch_axis``
    (``torch.ao.quantization.PerChannelMinMaxObserver``)."""

    def __init__(self, ch_axis=0, dtype=quint8, qscheme=per_channel_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=EPS32, is_dynamic=False, **kwargs):
        if qscheme not in (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams):
            raise NotImplementedError("PerChannelMinMaxObserver expects a per-channel qscheme")
        if is_dynamic:
            raise NotImplementedError("PerChannelMinMaxObserver's is_dynamic flag is not supported")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", tensorplug.tensor([], dtype=_F32))
        self.register_buffer("max_val", tensorplug.tensor([], dtype=_F32))

    def _batch_min_max(self, a):
        axis = self.ch_axis % a.ndim
        y = np.moveaxis(a, axis, 0).reshape(a.shape[axis], -1)
        return y.min(axis=1).astype(np.float32), y.max(axis=1).astype(np.float32)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        a = self._host(x_orig)
        mn, mx = self._batch_min_max(a)
        old_mn, old_mx = native(self.min_val.detach().cpu()), native(self.max_val.detach().cpu())
        if old_mn.size == 0 or old_mx.size == 0:
            new_mn, new_mx = mn, mx
        else:
            new_mn, new_mx = self._update(old_mn.astype(np.float32), old_mx.astype(np.float32), mn, mx)
        self.min_val = tensorplug.tensor(np.asarray(new_mn, np.float32))
        self.max_val = tensorplug.tensor(np.asarray(new_mx, np.float32))
        return x_orig

    def _update(self, old_mn, old_mx, mn, mx):
        return np.minimum(old_mn, mn), np.maximum(old_mx, mx)

    def calculate_qparams(self):
        """``(scales, zero_points)``: a float32 and an int64 tensor with one element per channel."""
        mn = native(self.min_val.detach().cpu())
        mx = native(self.max_val.detach().cpu())
        if mn.size == 0:
            warnings.warn("must run observer before calling calculate_qparams. Returning default values.",
                          stacklevel=2)
            return tensorplug.tensor([1.0]), tensorplug.tensor([0])
        return self._calculate_qparams(mn, mx)

    def reset_min_max_vals(self):
        self.min_val = tensorplug.tensor([], dtype=_F32)
        self.max_val = tensorplug.tensor([], dtype=_F32)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per channel, an exponential moving average of each tensor's min and max."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=quint8, qscheme=per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=EPS32, is_dynamic=False, **kwargs):
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def _update(self, old_mn, old_mx, mn, mx):
        c = np.float32(self.averaging_constant)
        return ((old_mn + (c * (mn - old_mn)).astype(np.float32)).astype(np.float32),
                (old_mx + (c * (mx - old_mx)).astype(np.float32)).astype(np.float32))


def _histc(x, bins, mn, mx):
    """``torch.histc`` of float32 ``x`` on ``[mn, mx]`` (float32 arithmetic, as PyTorch's CPU kernel)."""
    mn, mx = float(mn), float(mx)
    if mn == mx and x.size:
        mn, mx = float(x.min()), float(x.max())
    if mn == mx:
        mn, mx = mn - 1, mx + 1
    lo, hi = np.float32(mn), np.float32(mx)
    v = x[(x >= lo) & (x <= hi)]
    pos = ((v - lo) * np.float32(bins) / (hi - lo)).astype(np.float32).astype(np.int64)
    pos[pos == bins] = bins - 1
    return np.bincount(pos, minlength=bins).astype(np.float32)


def _linspace(start, end, steps):
    """``torch.linspace`` in float32 (a float32 step, each value one fused multiply-add from the nearer end)."""
    a, b = np.float32(start), np.float32(end)
    step = np.float64(np.float32((b - a) / np.float32(steps - 1)))
    i = np.arange(steps)
    lo = (np.float64(a) + step * i).astype(np.float32)
    hi = (np.float64(b) - step * (steps - 1 - i)).astype(np.float32)
    return np.where(i < steps // 2, lo, hi)


class HistogramObserver(UniformQuantizationObserverBase):
    """A histogram of the values seen (``bins`` bins over the running range, rebinned as it grows); the
    range used is the one that minimizes the L2 quantization error of the histogram, searched as
    ``torch.ao.quantization.HistogramObserver`` does (per tensor only)."""

    def __init__(self, bins=2048, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=EPS32, is_dynamic=False, **kwargs):
        if qscheme not in (per_tensor_affine, per_tensor_symmetric):
            raise NotImplementedError("HistogramObserver's qscheme only support torch.per_tensor_symmetric and "
                                      "torch.per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.bins = int(bins)
        self.register_buffer("histogram", tensorplug.zeros(self.bins))
        self.register_buffer("min_val", tensorplug.tensor(float("inf")))
        self.register_buffer("max_val", tensorplug.tensor(float("-inf")))
        self.dst_nbins = 2 ** 8 if dtype in (qint8, quint8) else 2 ** 32
        self.upsample_rate = 16

    def _upscale_histogram(self, hist, orig_min, orig_max, update_min, update_max):
        rate, bins = self.upsample_rate, self.bins
        h = (np.repeat(hist, rate) / np.float32(rate)).astype(np.float32)
        bin_size = np.float32((orig_max - orig_min) / np.float32(bins * rate))
        mids = (_linspace(orig_min, orig_max, bins * rate + 1)[:-1] + np.float32(0.5) * bin_size).astype(np.float32)
        bounds = _linspace(update_min, update_max, bins + 1)
        idx = np.clip(np.searchsorted(bounds, mids, side="right") - 1, 0, bins - 1)
        out = np.zeros(bins, np.float32)
        np.add.at(out, idx, h)  # in order, in float32, as torch.bincount with float32 weights
        return out

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = self._host(x_orig).reshape(-1)
        if np.isinf(x).any():
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[np.abs(x) != np.inf]
            if x.size == 0:
                return x_orig
        x_min, x_max = np.float32(x.min()), np.float32(x.max())
        cur_min, cur_max = np.float32(self.min_val.item()), np.float32(self.max_val.item())
        hist = native(self.histogram.detach().cpu()).astype(np.float32)
        if np.isinf(cur_min) or np.isinf(cur_max):
            new_min, new_max = x_min, x_max
            hist = _histc(x, self.bins, x_min, x_max)
        else:
            new_min, new_max = min(cur_min, x_min), max(cur_max, x_max)
            update = _histc(x, self.bins, new_min, new_max)
            if new_min == cur_min and new_max == cur_max:
                hist = hist + update
            elif cur_min == cur_max:
                hist = _histc(np.array([cur_min], np.float32), self.bins, new_min, new_max) * hist.sum(
                    dtype=np.float32) + update
            else:
                hist = update + self._upscale_histogram(hist, cur_min, cur_max, new_min, new_max)
        self.histogram = tensorplug.tensor(hist.astype(np.float32))
        self.min_val = tensorplug.tensor(np.float32(new_min))
        self.max_val = tensorplug.tensor(np.float32(new_max))
        return x_orig

    def _compute_quantization_error(self, hist, next_start_bin, next_end_bin):
        f = np.float32
        bin_width = (float(self.max_val.item()) - float(self.min_val.item())) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        src_bin = np.arange(self.bins)
        begin = ((src_bin - next_start_bin).astype(f) * f(bin_width)).astype(f)
        end = (begin + f(bin_width)).astype(f)
        dbw = f(dst_bin_width)
        of_begin = np.clip(np.floor_divide(begin, dbw), 0, self.dst_nbins - 1).astype(f)
        of_begin_center = ((of_begin + f(0.5)) * dbw).astype(f)
        of_end = np.clip(np.floor_divide(end, dbw), 0, self.dst_nbins - 1).astype(f)
        density = (hist / f(bin_width)).astype(f)

        def norm_of(db, de):
            return density * (((de * de * de - db * db * db) / f(3)).astype(f))
        half = f(dst_bin_width / 2)
        norm = np.zeros(self.bins, f)
        norm += norm_of((begin - of_begin_center).astype(f), np.full(self.bins, half, f))
        norm += (of_end - of_begin - f(1)) * norm_of(f(-half), half)
        of_end_center = (of_end * dbw + half).astype(f)
        norm += norm_of(f(-half), (end - of_end_center).astype(f))
        return float(norm.sum(dtype=f))

    def _non_linear_param_search(self):
        hist = native(self.histogram.detach().cpu()).astype(np.float32)
        mn, mx = np.float32(self.min_val.item()), np.float32(self.max_val.item())
        bin_width = np.float32((mx - mn) / np.float32(self.bins))
        total = float(hist.sum(dtype=np.float32))
        csum = np.cumsum(hist, dtype=np.float32).tolist()
        stepsize, alpha, beta = 1e-5, 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + stepsize, beta - stepsize
            lo_t, hi_t = float(np.float32(next_alpha * total)), float(np.float32(next_beta * total))
            # the cumulative sums never decrease: bisection finds where PyTorch's linear scans stop
            left = bisect.bisect_left(csum, lo_t, start_bin, end_bin)
            right = bisect.bisect_right(csum, hi_t, start_bin + 1, end_bin + 1) - 1
            next_start_bin, next_end_bin = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):
                next_start_bin = left
                alpha = next_alpha
            else:
                next_end_bin = right
                beta = next_beta
            if next_start_bin == start_bin and next_end_bin == end_bin:
                continue
            norm = self._compute_quantization_error(hist, next_start_bin, next_end_bin)
            if norm > norm_min:
                break
            norm_min = norm
            start_bin, end_bin = next_start_bin, next_end_bin
        new_min = np.float32(mn + np.float32(bin_width * np.float32(start_bin)))
        new_max = np.float32(mn + np.float32(bin_width * np.float32(end_bin + 1)))
        return new_min, new_max

    def calculate_qparams(self):
        """``(scale, zero_point)`` of the range that minimizes the histogram's quantization error."""
        if np.isinf(self.min_val.item()) and np.isinf(self.max_val.item()):
            warnings.warn("must run observer before calling calculate_qparams. Returning default scale and zero "
                          "point ", stacklevel=2)
            return tensorplug.tensor([1.0]), tensorplug.tensor([0])
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
"""The default activation observer: ``quint8`` on [0, 127] (PyTorch's reduced range)."""
default_weight_observer = MinMaxObserver.with_args(dtype=qint8, qscheme=per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(dtype=qint8, qscheme=per_channel_symmetric)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)

__all__ = ["HistogramObserver", "MinMaxObserver", "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver",
           "MovingAveragePerChannelMinMaxObserver", "default_observer", "default_weight_observer",
           "default_per_channel_weight_observer", "default_histogram_observer", "calculate_qmin_qmax"]
