"""The quantization workflows: PyTorch's ``quantize_dynamic`` and torchao-style ``quantize_(model, config)``."""

from __future__ import annotations

import copy

import tensorplug
from tensorplug import nn

from .modules import DynamicLinear, Int4WeightOnlyLinear, Int8DynamicLinear, Int8WeightOnlyLinear
from .qtensor import qint8


def _swap(model, make, wanted, prefix=""):
    """Replace, depth first, every child ``c`` with ``wanted(c, name)`` true by ``make(c)``; returns the count."""
    n = 0
    for name, child in list(model.named_children()):
        full = f"{prefix}.{name}" if prefix else name
        if wanted(child, full):
            setattr(model, name, make(child))
            n += 1
        else:
            n += _swap(child, make, wanted, full)
    return n


def _spec_matcher(qconfig_spec):
    if qconfig_spec is None:
        return lambda m, name: type(m) is nn.Linear
    if isinstance(qconfig_spec, dict):
        keys = set(qconfig_spec)
    else:
        keys = set(qconfig_spec)
    types = {k for k in keys if isinstance(k, type)}
    names = {k for k in keys if isinstance(k, str)}
    for t in types:
        if not issubclass(t, nn.Linear):
            raise NotImplementedError(f"quantize_dynamic: only nn.Linear has a dynamic quantized module here, got "
                                      f"{t.__name__}")

    def wanted(m, name):
        if not isinstance(m, nn.Linear) or isinstance(m, DynamicLinear):
            return False
        return type(m) in types or any(name == n or name.startswith(n + ".") for n in names)
    return wanted


def quantize_dynamic(model, qconfig_spec=None, dtype=qint8, mapping=None, inplace=False):
    """Replace the ``nn.Linear`` layers of ``model`` by dynamic int8 ones, as
    ``torch.ao.quantization.quantize_dynamic``.

    ``qconfig_spec``: a set of module types (``{nn.Linear}``, the default) or of submodule names, or a
    dict keyed by them. ``dtype``: ``tensorplug.qint8`` (float16 dynamic quantization is not provided).
    Unlike PyTorch, a bare ``nn.Linear`` passed as ``model`` is quantized too (PyTorch returns it
    unchanged, unquantized). ``inplace=False`` works on a deep copy.
    """
    if dtype is not qint8:
        raise NotImplementedError(f"quantize_dynamic: dtype {dtype!r} is not supported; use tensorplug.qint8")
    if mapping is not None:
        raise NotImplementedError("quantize_dynamic: custom mappings are not supported")
    if not inplace:
        model = copy.deepcopy(model)
    wanted = _spec_matcher(qconfig_spec)
    if wanted(model, ""):
        return DynamicLinear.from_float(model)
    _swap(model, DynamicLinear.from_float, wanted)
    return model


def _group(group_size, who):
    if group_size is not None and int(group_size) <= 0:
        raise ValueError(f"{who}: group_size must be positive, got {group_size}")
    return None if group_size is None else int(group_size)


class Int8DynamicActivationInt8Weight:
    """torchao's int8 dynamic config: symmetric int8 weights per output channel (or, with ``group_size``,
    per group of that many input features: a finer grid, smaller errors), per-token int8 activations
    chosen on each call (asymmetric: each row's own range, where torchao's are symmetric), exact int32
    accumulation, float out."""

    def __init__(self, group_size=None):
        self.group_size = _group(group_size, "Int8DynamicActivationInt8Weight")

    def make(self, linear):
        return Int8DynamicLinear.from_float(linear, self.group_size)

    def __repr__(self):
        return "Int8DynamicActivationInt8Weight(" + (f"group_size={self.group_size}" if self.group_size else "") + ")"


class Int8WeightOnly:
    """Symmetric int8 weights per output channel (or per group of ``group_size`` input features);
    activations stay float."""

    def __init__(self, group_size=None):
        self.group_size = _group(group_size, "Int8WeightOnly")

    def make(self, linear):
        return Int8WeightOnlyLinear.from_float(linear, self.group_size)

    def __repr__(self):
        return "Int8WeightOnly(" + (f"group_size={self.group_size}" if self.group_size else "") + ")"


class Int4WeightOnly:
    """4-bit weights, two per byte, with an asymmetric scale and zero point per ``group_size`` input
    features; activations stay float."""

    def __init__(self, group_size=128):
        if int(group_size) <= 0:
            raise ValueError(f"Int4WeightOnly: group_size must be positive, got {group_size}")
        self.group_size = int(group_size)

    def make(self, linear):
        return Int4WeightOnlyLinear.from_float(linear, self.group_size)

    def __repr__(self):
        return f"Int4WeightOnly(group_size={self.group_size})"


# torchao's older function-style names
Int8DynamicActivationInt8WeightConfig = Int8DynamicActivationInt8Weight
Int8WeightOnlyConfig = Int8WeightOnly
Int4WeightOnlyConfig = Int4WeightOnly


def quantize_(model, config, filter_fn=None, device=None):
    """Quantize the ``nn.Linear`` layers of ``model`` in place with ``config`` (torchao's ``quantize_``).

    ``filter_fn(module, fqn)`` selects the layers (default: every ``nn.Linear``). Returns ``None``, as
    torchao; a bare ``nn.Linear`` cannot be replaced in place and raises.
    """
    if not hasattr(config, "make"):
        raise TypeError(f"quantize_: unsupported config {config!r}: use Int8DynamicActivationInt8Weight(), "
                        f"Int8WeightOnly() or Int4WeightOnly(group_size=...)")
    if filter_fn is None:
        def filter_fn(m, fqn):
            return type(m) is nn.Linear
    if isinstance(model, nn.Linear):
        raise TypeError("quantize_ replaces submodules in place: pass the model holding the Linear layer")
    _swap(model, config.make, filter_fn)
    return None


__all__ = ["quantize_dynamic", "quantize_", "Int8DynamicActivationInt8Weight", "Int8WeightOnly", "Int4WeightOnly"]
