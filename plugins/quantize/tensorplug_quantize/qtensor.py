"""Quantized tensors: integer values with a scale and a zero point, per tensor or per channel.

A :class:`QuantizedTensor` wraps a plain integer tensor of its backend (``int8`` for ``qint8``,
``uint8`` for ``quint8`` and the packed ``quint4x2``, ``int32`` for ``qint32``): what
``int_repr()`` returns. Its key set is the backend's bit with the ``Quantized`` functionality
bit instead of ``Dense``, so every operator called on it dispatches to the plugin's Quantized
kernels (:mod:`tensorplug_quantize.kernels`), and one without a kernel raises the dispatcher's
"Could not run ... 'QuantizedCPU' backend" error: nothing is dequantized silently.

The arithmetic follows PyTorch's CPU kernels bit for bit (an oracle test checks it):

- quantize: ``q = clamp(round_half_even(x * (1 / scale) + zero_point), qmin, qmax)`` with
  ``1 / scale`` rounded to float32 and, for the 8-bit types, the multiply-add fused (one rounding,
  as the vectorized kernel's FMA); ``qint32`` rounds the product first;
- dequantize: ``(float32(q) - zero_point) * float32(scale)``.
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug import Tensor
from tensorplug.plugin_api import INTEGRAL, key_bit, key_set, new_wrapper, native, wrap

from .int4 import unpack_int4
from .qparams import choose_qparams

KEY_NAME = "Quantized"
PRIORITY = 16


class qscheme:
    """A quantization scheme: ``tensorplug.per_tensor_affine`` and friends (PyTorch's ``torch.qscheme``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"tensorplug.{self.name}"

    def __reduce__(self):
        return (getattr, (tensorplug, self.name))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self  # a singleton, as torch's qschemes (modules holding one deep-copy)


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")
QSCHEMES = (per_tensor_affine, per_channel_affine, per_tensor_symmetric, per_channel_symmetric,
            per_channel_affine_float_qparams)


def _qdtype(name, npdt, rank, signed):
    d = tensorplug.dtype(name, npdt, INTEGRAL, rank, factory_error=(
        f"cannot create a plain tensor of dtype tensorplug.{name}: quantized tensors are made by "
        f"tensorplug.quantize_per_tensor / quantize_per_channel (empty_strided not supported on quantized "
        f"tensors yet, as PyTorch says)"))
    d.is_signed = signed
    return d


qint8 = _qdtype("qint8", np.int8, 1, True)
quint8 = _qdtype("quint8", np.uint8, 1, False)
qint32 = _qdtype("qint32", np.int32, 3, True)
quint4x2 = _qdtype("quint4x2", np.uint8, 1, False)
"""Two unsigned 4-bit values per byte, for packed weights (:mod:`tensorplug_quantize.int4`)."""
QDTYPES = (qint8, quint8, qint32, quint4x2)

INT_DTYPE = {qint8: tensorplug.int8, quint8: tensorplug.uint8, qint32: tensorplug.int32, quint4x2: tensorplug.uint8}
RANGE = {qint8: (-128, 127), quint8: (0, 255), qint32: (-(1 << 31), (1 << 31) - 1), quint4x2: (0, 15)}
_TORCH_NAME = {qint8: "QInt8", quint8: "QUInt8", qint32: "QInt32", quint4x2: "QUInt4x2"}


def _keys(dev):
    return (key_set(dev.type) & ~key_bit("Dense")) | key_bit(KEY_NAME)


class QuantizedTensor(Tensor):
    """A quantized tensor: ``int_repr()`` values with ``q_scale()`` / ``q_zero_point()`` (per tensor) or
    ``q_per_channel_scales()`` / ``q_per_channel_zero_points()`` along ``q_per_channel_axis()``."""

    __slots__ = ("_int", "_qscheme", "_scale", "_zero_point", "_axis", "_scales", "_zero_points", "_packing")

    is_quantized = True

    # the integer tensor's native array: strides, storage and data_ptr are the integer tensor's
    @property
    def _data(self):
        return self._int._data

    @property
    def _version(self):
        return self._int._version

    def stride(self, dim=None):
        """Strides in elements, as the integer representation's."""
        return self._int.stride(dim)

    def storage_offset(self):
        """Offset of the first element in the storage, in elements."""
        return self._int.storage_offset()

    def is_contiguous(self, memory_format=None):
        """Whether the values are laid out densely in row-major order."""
        return self._int.is_contiguous()

    def _get_storage(self):
        return self._int._get_storage()

    def data_ptr(self):
        """An integer identifying the address of the first element (equal for aliasing views)."""
        return self._int.data_ptr()

    def element_size(self):
        """Bytes per element (1 for the 8-bit types and for ``quint4x2``'s bytes)."""
        return self._int.element_size()

    # -- quantization parameters -----------------------------------------------------------------
    def qscheme(self):
        """The quantization scheme (``tensorplug.per_tensor_affine`` or ``per_channel_affine``)."""
        return self._qscheme

    def q_scale(self):
        """The scale of a per-tensor quantized tensor (a Python float)."""
        if self._scales is not None:
            raise RuntimeError("Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.")
        return self._scale

    def q_zero_point(self):
        """The zero point of a per-tensor quantized tensor (a Python int)."""
        if self._scales is not None:
            raise RuntimeError("Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.")
        return self._zero_point

    def _per_channel(self):
        if self._scales is None:
            raise RuntimeError("Expected quantizer->qscheme() == kPerChannelAffine || quantizer->qscheme() == "
                               "kPerChannelAffineFloatQParams to be true, but got false.")

    def q_per_channel_scales(self):
        """The scales of a per-channel quantized tensor (a float64 tensor, one per channel)."""
        self._per_channel()
        return self._scales.clone()

    def q_per_channel_zero_points(self):
        """The zero points of a per-channel quantized tensor (an int64 tensor)."""
        self._per_channel()
        return self._zero_points.clone()

    def q_per_channel_axis(self):
        """The dimension the per-channel parameters run along."""
        self._per_channel()
        return self._axis

    # -- values ------------------------------------------------------------------------------------
    def int_repr(self):
        """The integer values (a new tensor of int8, uint8 or int32)."""
        return self._int.clone()

    def dequantize(self):
        """The float32 values ``(q - zero_point) * scale``."""
        return dequantize_values(self._int, self)

    def numpy(self, *, force=False):
        raise TypeError(f"Got unsupported ScalarType {_TORCH_NAME[self._dtype]}")

    def _host(self):
        return self.dequantize()._host()

    def tolist(self):
        """The dequantized values as (nested) lists of Python floats."""
        return self.dequantize().tolist()

    def item(self):
        """The dequantized value of a one-element tensor."""
        return self.dequantize().item()

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"Got unsupported ScalarType {_TORCH_NAME[self._dtype]}")

    def __reduce_ex__(self, protocol):
        raise RuntimeError("pickling quantized tensors is not supported: tensorplug.save stores them as "
                           "safetensors (integer values, scales and zero points)")

    def _tensorplug_save_(self):
        """What :func:`tensorplug.save` stores: the integer values, the per-channel parameters as tensors, the
        rest as metadata (:func:`rebuild` reads them back)."""
        meta = {"dtype": self._dtype.name, "qscheme": self._qscheme.name}
        parts = {"int_repr": self._int.contiguous()}
        if self._scales is None:
            meta.update(scale=self._scale, zero_point=self._zero_point)
        else:
            meta["axis"] = self._axis
            parts.update(scales=self._scales, zero_points=self._zero_points)
        if self._packing is not None:
            meta["packing"] = list(self._packing)
        return "quantized", parts, meta

    def __dlpack__(self, stream=None, **kwargs):
        raise BufferError("quantized tensors cannot be exported through DLPack; export t.int_repr()")

    def _detach(self):
        return self

    def _alias_without_history(self):
        return self

    def __repr__(self):
        body = repr(self.dequantize())
        if body.endswith(")"):
            body = body[:-1]
        suffixes = [f"size={tuple(self._shape)}", f"dtype={self._dtype!r}",
                    f"quantization_scheme={self._qscheme!r}"]
        if self._scales is None:
            suffixes += [f"scale={self._scale!r}", f"zero_point={self._zero_point!r}"]
        else:
            suffixes += [f"scale={self._scales!r}", f"zero_point={self._zero_points!r}", f"axis={self._axis}"]
        return _add_suffixes(body, suffixes, len("tensor(")) + ")"


def _add_suffixes(text, suffixes, indent, width=80):
    """Append ``", suffix"`` pieces, breaking lines at ``width`` as PyTorch's printer does."""
    for s in suffixes:
        last = text.rsplit("\n", 1)[-1]
        if "\n" in s or len(last) + len(s) + 2 > width:
            text += ",\n" + " " * indent + s.replace("\n", "\n" + " " * indent)
        else:
            text += ", " + s
    return text


# -- building ----------------------------------------------------------------------------------------
def make_quantized(int_t, qdtype, scale=None, zero_point=None, *, scales=None, zero_points=None, axis=None,
                   scheme=None, packing=None):
    """A :class:`QuantizedTensor` over the integer tensor ``int_t`` (not copied) with the given parameters.

    Per tensor: ``scale`` (float) and ``zero_point`` (int). Per channel: ``scales`` (float64 tensor),
    ``zero_points`` (int64 tensor) and ``axis``. ``packing=(k, group_size)``: a ``(rows, k)`` matrix with
    one scale and zero point per row and group of ``group_size`` columns (row-major); for ``quint4x2``,
    ``int_t`` holds two 4-bit values per byte and the tensor's shape is the logical ``(rows, k)``.
    """
    shape = int_t._shape if packing is None or qdtype is not quint4x2 else (int_t._shape[0], packing[0])
    t = new_wrapper(QuantizedTensor, shape, qdtype, int_t._device, _keys(int_t._device))
    t._int = int_t
    t._packing = packing
    if scales is None:
        t._qscheme = scheme or per_tensor_affine
        t._scale, t._zero_point = float(scale), int(zero_point)
        t._axis = t._scales = t._zero_points = None
    else:
        t._qscheme = scheme or per_channel_affine
        t._scale = t._zero_point = None
        t._scales, t._zero_points, t._axis = scales, zero_points, axis
    return t


def like(q, int_t, axis=None):
    """A quantized tensor with ``q``'s parameters over ``int_t`` (a result computed on ``q``'s values);
    ``axis``: the channel axis in ``int_t`` for a per-channel ``q``."""
    if q._packing is not None:
        if int_t._shape != q._int._shape:
            raise RuntimeError("operators on group-quantized tensors keep their shape: dequantize() first")
        return make_quantized(int_t, q._dtype, scales=q._scales, zero_points=q._zero_points, axis=q._axis,
                              scheme=q._qscheme, packing=q._packing)
    if q._scales is None:
        return make_quantized(int_t, q._dtype, q._scale, q._zero_point, scheme=q._qscheme)
    return make_quantized(int_t, q._dtype, scales=q._scales, zero_points=q._zero_points,
                          axis=q._axis if axis is None else axis, scheme=q._qscheme)


def _is_cpu(t):
    return t._device.type == "cpu"


def _channel_shape(ndim, axis, n):
    shape = [1] * ndim
    shape[axis] = n
    return tuple(shape)


def _quantize_np(x, inv, zp, qdtype, as_float=False):
    """numpy kernel: ``x`` float32 array, ``inv`` float32 (scalar or array), ``zp`` int (or array). With
    ``as_float`` the integers come back as float32 (what a float BLAS product takes next)."""
    lo, hi = RANGE[qdtype]
    x = np.asarray(x)  # a 0-d tensor's native may be a numpy scalar: in-place ufuncs need arrays
    if qdtype is qint32:
        v = np.asarray(np.rint(np.float32(zp) + x * inv) if np.ndim(zp) == 0 else
                       np.rint(zp.astype(np.float32) + x * inv), np.float32)
    else:
        # the 8-bit kernels fuse the multiply-add: in float64 the product of two float32s is exact, and
        # the sum is rounded once, to float32
        w = np.array(x, np.float64)
        w *= np.asarray(inv, np.float64)
        w += zp
        v = w.astype(np.float32)
        np.rint(v, out=v)
    np.clip(v, lo, hi, out=v)
    return v if as_float else v.astype(INT_DTYPE[qdtype].np)


def quantize_values(x, qdtype, scale, zero_point, axis=None):
    """The integer tensor of ``x`` (float32) quantized with per-tensor or (``axis``) per-channel parameters."""
    if axis is None:
        inv = np.float32(1.0) / np.float32(scale)
        zp = int(zero_point)
    else:
        s = native(scale.cpu()) if scale._device.type != "cpu" else native(scale)
        z = native(zero_point.cpu()) if zero_point._device.type != "cpu" else native(zero_point)
        shape = _channel_shape(x.dim(), axis, s.shape[0])
        inv = (np.float32(1.0) / s.astype(np.float32)).reshape(shape)
        zp = z.astype(np.int64).reshape(shape)
    if _is_cpu(x):
        arr = native(x)
        return wrap(_quantize_np(arr, inv, zp, qdtype), INT_DTYPE[qdtype], x._device)
    # any other backend: the same arithmetic through its own kernels
    lo, hi = RANGE[qdtype]
    inv_t = tensorplug.tensor(inv, device=x._device)
    zp_t = tensorplug.tensor(zp, device=x._device)
    if qdtype is qint32:
        v = tensorplug.round(zp_t.to(tensorplug.float32) + x * inv_t)
    else:
        v = tensorplug.round((x.double() * inv_t.double() + zp_t.double()).float())
    return v.clamp(lo, hi).to(INT_DTYPE[qdtype])


def dequantize_values(int_t, q):
    """float32 ``(q - zero_point) * scale`` of the integer tensor ``int_t`` with ``q``'s parameters."""
    if q._packing is not None:
        k, g = q._packing
        ints = native(int_t.cpu())
        vals = unpack_int4(ints, k) if q._dtype is quint4x2 else ints.astype(np.float32)
        n = vals.shape[0]
        s = native(q._scales.cpu()).astype(np.float32).reshape(n, -1)
        z = native(q._zero_points.cpu()).astype(np.float32).reshape(n, -1)
        cols = np.arange(k) // g
        out = (vals - z[:, cols]) * s[:, cols]
        return wrap(out.astype(np.float32), tensorplug.float32, tensorplug.device("cpu")).to(int_t._device)
    if q._scales is None:
        zp, s = np.float32(q._zero_point), np.float32(q._scale)
    else:
        # per channel, PyTorch multiplies by the float64 scales and rounds once
        shape = _channel_shape(int_t.dim(), q._axis, q._scales.numel())
        s = native(q._scales.cpu()).astype(np.float64).reshape(shape)
        zp = native(q._zero_points.cpu()).astype(np.float64).reshape(shape)
    if _is_cpu(int_t):
        out = (native(int_t).astype(s.dtype) - zp) * s
        return wrap(out.astype(np.float32, copy=False), tensorplug.float32, int_t._device)
    zp_t = tensorplug.tensor(zp, device=int_t._device)
    s_t = tensorplug.tensor(s, device=int_t._device)
    return ((int_t.to(zp_t.dtype) - zp_t) * s_t).to(tensorplug.float32)


def rebuild(parts, meta):
    """A quantized tensor from what :meth:`QuantizedTensor._tensorplug_save_` stored (for :func:`tensorplug.load`)."""
    dtype = {d.name: d for d in QDTYPES}[meta["dtype"]]
    scheme = {s.name: s for s in QSCHEMES}[meta["qscheme"]]
    int_t = parts["int_repr"]
    if int_t.dtype is not INT_DTYPE[dtype]:
        raise ValueError(f"int_repr has dtype {int_t.dtype!r}, expected {INT_DTYPE[dtype]!r}")
    packing = tuple(meta["packing"]) if "packing" in meta else None
    if "axis" in meta:
        return make_quantized(int_t, dtype, scales=parts["scales"], zero_points=parts["zero_points"],
                              axis=int(meta["axis"]), scheme=scheme, packing=packing)
    return make_quantized(int_t, dtype, float(meta["scale"]), int(meta["zero_point"]), scheme=scheme)


# -- the user API ----------------------------------------------------------------------------------
def _check_qdtype(dtype):
    if dtype not in QDTYPES:
        raise RuntimeError(f"Creation of quantized tensor requires quantized dtype like tensorplug.quint8, got "
                           f"{dtype!r}")


def _check_float_input(x):
    if not isinstance(x, Tensor):
        raise TypeError(f"quantize: expected a Tensor, got {type(x).__name__}")
    if getattr(x, "is_quantized", False):
        raise RuntimeError("Quantize only works on Float Tensor, got a quantized tensor")
    if x._dtype is not tensorplug.float32:
        name = {tensorplug.float64: "Double", tensorplug.float16: "Half", tensorplug.bfloat16: "BFloat16",
                tensorplug.int64: "Long", tensorplug.int32: "Int", tensorplug.int16: "Short",
                tensorplug.int8: "Char", tensorplug.uint8: "Byte", tensorplug.bool: "Bool"}.get(x._dtype, str(x._dtype))
        raise RuntimeError(f"Quantize only works on Float Tensor, got {name}")


def _check_scale(scale, fn):
    # PyTorch accepts these and returns garbage (a scale of 0 gives all-zero values, NaN gives NaN):
    # tensorplug refuses, since that is a silent wrong result
    if not (scale > 0 and np.isfinite(scale)):
        raise RuntimeError(f"{fn}: scale must be a positive finite number, got {scale!r}")


def _check_zero_point(zp, qdtype, fn):
    lo, hi = RANGE[qdtype]
    if zp > hi:
        raise RuntimeError(f"{fn} zero_point {zp} is above upper bound.")
    if zp < lo:
        raise RuntimeError(f"{fn} zero_point {zp} is below lower bound.")


def _scalar(v, kind):
    if isinstance(v, Tensor):
        if v.numel() != 1:
            raise RuntimeError(f"quantize_per_tensor: {kind} must be a one-element tensor, got shape {tuple(v._shape)}")
        v = v.item()
        return float(np.float32(v)) if kind == "scale" else int(v)
    return float(v) if kind == "scale" else int(v)


def quantize_per_tensor(input, scale, zero_point, dtype):
    """Quantize float32 ``input`` with one ``scale`` and ``zero_point`` into ``dtype`` (``qint8``, ``quint8``,
    ``qint32``), rounding half to even and saturating, as ``torch.quantize_per_tensor``.

    ``input`` may also be a list of tensors with tensors of scales and zero points (one per tensor):
    a list of quantized tensors comes back. A scale that is not positive and finite raises (PyTorch
    returns meaningless values for it).
    """
    if isinstance(input, (list, tuple)):
        scales, zps = scale.tolist(), zero_point.tolist()
        if len(scales) != len(input) or len(zps) != len(input):
            raise RuntimeError("quantize_per_tensor: expected one scale and one zero point per tensor")
        return [quantize_per_tensor(x, float(np.float32(s)), int(z), dtype) for x, s, z in zip(input, scales, zps)]
    _check_qdtype(dtype)
    _check_float_input(input)
    scale, zero_point = _scalar(scale, "scale"), _scalar(zero_point, "zero_point")
    _check_scale(scale, "quantize_per_tensor")
    _check_zero_point(zero_point, dtype, "quantize_tensor_per_tensor_affine")
    return make_quantized(quantize_values(input, dtype, scale, zero_point), dtype, scale, zero_point)


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """Quantize float32 ``input`` with one scale and zero point per slice along ``axis``, as
    ``torch.quantize_per_channel``; the parameters are kept as float64 and int64 tensors."""
    _check_qdtype(dtype)
    _check_float_input(input)
    if not isinstance(scales, Tensor) or not isinstance(zero_points, Tensor):
        raise TypeError("quantize_per_channel: scales and zero_points must be tensors")
    ndim = input.dim()
    if not 0 <= axis < max(ndim, 1) or ndim == 0:
        raise RuntimeError(f"Channel axis out of range in per channel affine quantization. Got: {axis}Expected: "
                           f"[0, {ndim})")
    n = input._shape[axis]
    if scales.numel() != n:
        raise RuntimeError(f"length of scales must equal to channel, expected {n} got, {scales.numel()}")
    if zero_points.numel() != n:
        raise RuntimeError(f"length of zero_points must equal to channel expected {n} got, {zero_points.numel()}")
    s = scales.detach().reshape(-1).to(tensorplug.float64).cpu()
    z = zero_points.reshape(-1).to(tensorplug.int64).cpu()
    sv = native(s)
    if not (np.all(sv > 0) and np.all(np.isfinite(sv))):
        raise RuntimeError("quantize_per_channel: every scale must be a positive finite number")
    zv = native(z)
    lo, hi = RANGE[dtype]
    if n and zv.max() > hi:
        raise RuntimeError(f"quantize_tensor_per_channel_affine zero_point {int(zv.max())} is above upper bound.")
    if n and zv.min() < lo:
        raise RuntimeError(f"quantize_tensor_per_channel_affine zero_point {int(zv.min())} is below lower bound.")
    return make_quantized(quantize_values(input, dtype, s, z, axis), dtype, scales=s, zero_points=z, axis=axis)


def quantize_per_tensor_dynamic(input, dtype, reduce_range):
    """Quantize ``input`` per tensor with parameters chosen from its own min and max (``quint8`` or
    ``qint8``), as ``torch.quantize_per_tensor_dynamic``."""
    _check_float_input(input)
    if dtype not in (quint8, qint8):
        raise RuntimeError(f"dtype {dtype!r} is not supported in quantize_per_tensor_dynamic")
    x = native(input.cpu()) if not _is_cpu(input) else native(input)
    lo, hi = (0, 255) if dtype is quint8 else (-128, 127)
    if reduce_range:
        lo, hi = lo // 2, hi // 2 if dtype is qint8 else 127
    mn = float(x.min()) if x.size else 0.0
    mx = float(x.max()) if x.size else 0.0
    scale, zp = choose_qparams(mn, mx, lo, hi)
    return quantize_per_tensor(input, scale, zp, dtype)


def dequantize(t):
    """``t.dequantize()`` of a quantized tensor, or each of a list; a float tensor is returned as it is."""
    if isinstance(t, (list, tuple)):
        return [dequantize(x) for x in t]
    return t.dequantize()


def int_repr(t):
    """``t.int_repr()``."""
    return t.int_repr()


def is_quantized(t):
    """Whether ``t`` is a quantized tensor."""
    return isinstance(t, QuantizedTensor)



__all__ = ["QuantizedTensor", "qscheme", "quantize_per_tensor", "quantize_per_channel",
           "quantize_per_tensor_dynamic", "dequantize", "int_repr", "is_quantized", "make_quantized",
           "qint8", "quint8", "qint32", "quint4x2", "per_tensor_affine", "per_channel_affine",
           "per_tensor_symmetric", "per_channel_symmetric", "per_channel_affine_float_qparams"]
