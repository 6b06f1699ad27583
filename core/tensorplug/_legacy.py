"""PyTorch's legacy tensor constructors (``Tensor(...)``, ``FloatTensor``...) and the ``Tensor.is_*`` flags.

``Tensor(*sizes)`` and the typed ``FloatTensor(*sizes)`` make uninitialised
tensors, ``Tensor(sequence)`` copies data, ``Tensor()`` is empty. The typed
classes fix the dtype (``LongTensor`` is int64); ``Tensor`` takes the default
dtype. ``isinstance(x, tensorplug.FloatTensor)`` is true for float32 CPU
tensors.
"""

from __future__ import annotations

import builtins

import numpy as np

from . import _state
from . import dtypes as _dt
from .device import device as _device
from .ops import factories as _f
from .tensor import Tensor, LEGACY_NEW

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
           "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "set_default_device"]

_TYPE_NAMES = {_dt.float32: "Float", _dt.float64: "Double", _dt.float16: "Half", _dt.bfloat16: "BFloat16",
               _dt.int64: "Long", _dt.int32: "Int", _dt.int16: "Short", _dt.int8: "Char", _dt.uint8: "Byte",
               _dt.bool: "Bool"}


def _is_int(x):
    return isinstance(x, (builtins.int, np.integer)) and not isinstance(x, (builtins.bool, np.bool_))


def legacy_new(dtype, args, kwargs, name):
    """What ``Tensor(*args, **kwargs)`` (``dtype`` None: the default dtype) or ``FloatTensor(...)`` builds."""
    device = kwargs.pop("device", None)
    if kwargs:
        key = next(iter(kwargs))
        raise TypeError(f"new() received an invalid combination of arguments - got an unexpected keyword "
                        f"argument '{key}'")
    dt = _dt.get_default_dtype() if dtype is None else dtype
    if device is not None and not isinstance(device, _device):
        device = _device(device)
    if device is not None and device.type != "cpu" and dtype is not None:
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {device.type} was "
                           f"passed")
    if not args:
        return _f.empty(0, dtype=dt, device=device)
    if builtins.all(_is_int(a) for a in args):
        for a in args:
            if a < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {builtins.int(a)}: "
                                   f"[{', '.join(str(builtins.int(s)) for s in args)}]")
        return _f.empty(*[builtins.int(a) for a in args], dtype=dt, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, Tensor):
            if dtype is not None and data.dtype is not dt:
                raise TypeError(f"expected {_TYPE_NAMES.get(dt, dt)} (got {_TYPE_NAMES.get(data.dtype, data.dtype)})")
            return data.detach()
        if isinstance(data, (list, tuple, np.ndarray)):
            return _f.tensor(data, dtype=dt, device=device)
        if isinstance(data, (builtins.float, builtins.bool, builtins.complex, np.generic)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
    got = ", ".join(type(a).__name__ for a in args)
    raise TypeError(f"new() received an invalid combination of arguments - got ({got})")


LEGACY_NEW[0] = legacy_new


class _LegacyTensorType(type):
    """The metaclass of the typed constructors: calling one builds a tensor of its dtype."""

    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.dtype, args, dict(kwargs), cls.__name__)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __repr__(cls):
        return f"<class 'tensorplug.{cls.__name__}'>"


def _typed(name, dtype):
    return _LegacyTensorType(name, (), {"dtype": dtype, "is_cuda": False, "__module__": "tensorplug",
                                        "__doc__": f"Legacy constructor of {dtype} CPU tensors: "
                                                   f"``{name}(data)`` or ``{name}(*sizes)``."})


FloatTensor = _typed("FloatTensor", _dt.float32)
DoubleTensor = _typed("DoubleTensor", _dt.float64)
HalfTensor = _typed("HalfTensor", _dt.float16)
BFloat16Tensor = _typed("BFloat16Tensor", _dt.bfloat16)
LongTensor = _typed("LongTensor", _dt.int64)
IntTensor = _typed("IntTensor", _dt.int32)
ShortTensor = _typed("ShortTensor", _dt.int16)
CharTensor = _typed("CharTensor", _dt.int8)
ByteTensor = _typed("ByteTensor", _dt.uint8)
BoolTensor = _typed("BoolTensor", _dt.bool)


def set_default_device(device):
    """Make ``device`` (a device, string, or None for the CPU) where factories create tensors by default."""
    _state.default_device = _device("cpu") if device is None else (
        device if isinstance(device, _device) else _device(device))


def _flag(name, doc):
    prop = property(lambda self: False, doc=doc)
    if not hasattr(Tensor, name):
        setattr(Tensor, name, prop)


_flag("is_sparse", "Whether the tensor uses a sparse layout: always False (tensorplug tensors are strided).")
_flag("is_quantized", "Whether the tensor is quantized: False here; the tensorplug-quantize plugin's "
                      "quantized tensors say True.")
_flag("is_mkldnn", "Whether the tensor is an MKL-DNN tensor: always False.")
_flag("is_nested", "Whether the tensor is a nested tensor: always False.")


def _not_quantized(op):
    def method(self, *args, **kwargs):
        backend = self._device.type.upper() if self._device.type == "cpu" else self._device.type
        raise NotImplementedError(f"Could not run 'tensorplug::{op}' with arguments from the '{backend}' backend: "
                                  f"{op}() needs a quantized tensor (tensorplug.quantize_per_tensor, from the "
                                  f"tensorplug-quantize plugin, makes one)")
    method.__name__ = op
    method.__doc__ = f"``{op}()`` of a quantized tensor; a plain tensor raises PyTorch's NotImplementedError."
    return method


for _name in ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales", "q_per_channel_zero_points",
              "q_per_channel_axis", "qscheme"):
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _not_quantized(_name))


def _dequantize(self):
    """The float values of a quantized tensor; a tensor that is not quantized is returned as it is."""
    return self


if not hasattr(Tensor, "dequantize"):
    Tensor.dequantize = _dequantize
Tensor.is_meta = property(lambda self: self._device.type == "meta", doc="Whether the tensor is on the meta device.")
for _name in ("xpu", "mps"):
    if not hasattr(Tensor, f"is_{_name}"):
        setattr(Tensor, f"is_{_name}", property(lambda self, _t=_name: self._device.type == _t,
                                                 doc=f"Whether the tensor is stored on a {_name} device."))
del _name
