"""Static post-training quantization and quantization-aware training, as PyTorch's eager
``torch.ao.quantization``:

1. mark where tensors enter and leave the quantized region with :class:`QuantStub` / :class:`DeQuantStub`;
2. optionally :func:`fuse_modules` (Linear + ReLU, Conv2d + ReLU, Conv2d + BatchNorm2d (+ ReLU));
3. set ``model.qconfig`` (:data:`default_qconfig`, :func:`get_default_qconfig`,
   :func:`get_default_qat_qconfig`) and :func:`prepare` (observers after each quantizable layer) or
   :func:`prepare_qat` (layers with fake-quantized weights, fake quantization after them);
4. calibrate (run data through) or train;
5. :func:`convert`: quantized modules with the observed parameters.
"""

from __future__ import annotations

import copy
import warnings
from collections import namedtuple

import tensorplug
from tensorplug import nn

from . import qat
from .fake_quantize import FakeQuantize, FakeQuantizeBase, default_per_channel_weight_fake_quant
from .fake_quantize import (FusedMovingAvgObsFakeQuantize, default_fake_quant, default_fused_per_channel_wt_fake_quant,
                            default_fused_wt_fake_quant, default_weight_fake_quant)
from .fused import ConvReLU2d, LinearReLU, _FusedModule
from .observers import (HistogramObserver, MovingAverageMinMaxObserver, ObserverBase, default_observer,
                        default_per_channel_weight_observer, default_weight_observer)
from .static_modules import Conv2d as QConv2d
from .static_modules import ConvReLU2d as QConvReLU2d
from .static_modules import DeQuantize, Quantize
from .static_modules import Linear as QLinear
from .static_modules import LinearReLU as QLinearReLU


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """How to observe a module's output (``activation``) and its weight (``weight``): two factories
    (observer classes or ``Observer.with_args(...)``), as ``torch.ao.quantization.QConfig``."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, nn.Module) or isinstance(weight, nn.Module):
            raise ValueError("QConfig received observer instance, please pass observer class instead. Use "
                             "MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
"""MinMax observers: ``quint8`` activations on PyTorch's reduced range [0, 127], per-tensor symmetric
``qint8`` weights."""
default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)
default_per_channel_qconfig = QConfig(activation=default_observer, weight=default_per_channel_weight_observer)

_BACKENDS = ["fbgemm", "x86", "qnnpack", "onednn"]


def _check_backend(backend):
    if backend not in _BACKENDS:
        raise AssertionError(f"backend: {backend} not supported. backend must be one of {_BACKENDS}")


def get_default_qconfig(backend="x86", version=0):
    """The default post-training qconfig for ``backend``, as PyTorch's: a ``HistogramObserver`` for
    activations (range reduced to [0, 127] for ``x86`` and ``fbgemm``) and per-channel symmetric
    ``qint8`` weights (per tensor for ``qnnpack``)."""
    _check_backend(backend)
    if version != 0:
        raise AssertionError(f"Version number: {version} in get_default_qconfig is not supported. Version number "
                             f"must be 0")
    if backend in ("x86", "fbgemm"):
        return QConfig(activation=HistogramObserver.with_args(reduce_range=True),
                       weight=default_per_channel_weight_observer)
    if backend == "qnnpack":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False), weight=default_weight_observer)
    return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                   weight=default_per_channel_weight_observer)


def get_default_qat_qconfig(backend="x86", version=1):
    """The default quantization-aware training qconfig for ``backend``, as PyTorch's: moving-average
    fake quantization of activations (``quint8``, reduced range for ``x86`` / ``fbgemm``) and per-channel
    symmetric ``qint8`` weights (per tensor for ``qnnpack``). ``version=1`` (the default) uses
    ``FusedMovingAvgObsFakeQuantize`` (PyTorch's fused kernel's parameters), ``version=0`` ``FakeQuantize``."""
    _check_backend(backend)
    if version not in (0, 1):
        raise AssertionError(f"Version number: {version} in get_default_qat_qconfig is not supported. Version "
                             f"number must be 0 or 1")
    reduce = backend in ("x86", "fbgemm")
    kw = {} if backend == "onednn" else {"reduce_range": reduce}
    if version == 0:
        act = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, **kw)
        weight = default_weight_fake_quant if backend == "qnnpack" else default_per_channel_weight_fake_quant
    else:
        act = FusedMovingAvgObsFakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0,
                                                      quant_max=255, **kw)
        weight = default_fused_wt_fake_quant if backend == "qnnpack" else default_fused_per_channel_wt_fake_quant
    return QConfig(activation=act, weight=weight)


class QuantStub(nn.Module):
    """Where float tensors enter the quantized region: the identity until :func:`convert` makes it a
    ``Quantize`` with the observed parameters (``torch.ao.quantization.QuantStub``)."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(nn.Module):
    """Where tensors leave the quantized region: the identity until :func:`convert` makes it a
    ``DeQuantize`` (``torch.ao.quantization.DeQuantStub``)."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


# -- fusion --------------------------------------------------------------------------------------------
def _fold_bn(conv, bn):
    """A copy of ``conv`` with eval-mode ``bn`` folded into its weight and bias."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    with tensorplug.no_grad():
        w = conv.weight.detach()
        b = conv.bias.detach() if conv.bias is not None else tensorplug.zeros(conv.out_channels)
        mean, var = bn.running_mean.detach(), bn.running_var.detach()
        gamma = bn.weight.detach() if bn.weight is not None else tensorplug.ones(bn.num_features)
        beta = bn.bias.detach() if bn.bias is not None else tensorplug.zeros(bn.num_features)
        factor = gamma * tensorplug.rsqrt(var + bn.eps)
        fused.weight = nn.Parameter(w * factor.reshape(-1, 1, 1, 1), conv.weight.requires_grad)
        fused.bias = nn.Parameter((b - mean) * factor + beta, conv.weight.requires_grad)
    return fused


def _fuse_linear_relu(linear, relu):
    return LinearReLU(linear, relu)


def _fuse_conv_relu(conv, relu):
    return ConvReLU2d(conv, relu)


def _fuse_conv_bn(conv, bn):
    if conv.training != bn.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if bn.num_features != conv.out_channels:
        raise AssertionError("Output channel of Conv2d must match num_features of BatchNorm2d.")
    if conv.training:
        raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn)} (QAT Conv + BatchNorm is not "
                                  f"provided: call model.eval() before fuse_modules)")
    return _fold_bn(conv, bn)


def _fuse_conv_bn_relu(conv, bn, relu):
    if conv.training != bn.training or bn.training != relu.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if conv.training:
        raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn, relu)} (QAT Conv + BatchNorm is not "
                                  f"provided: call model.eval() before fuse_modules)")
    return ConvReLU2d(_fold_bn(conv, bn), relu)


_FUSERS = {
    (nn.Linear, nn.ReLU): _fuse_linear_relu,
    (nn.Conv2d, nn.ReLU): _fuse_conv_relu,
    (nn.Conv2d, nn.BatchNorm2d): _fuse_conv_bn,
    (nn.Conv2d, nn.BatchNorm2d, nn.ReLU): _fuse_conv_bn_relu,
}


def _get_module(model, name):
    for part in name.split("."):
        model = getattr(model, part)
    return model


def _set_module(model, name, new):
    parent, _, last = name.rpartition(".")
    setattr(_get_module(model, parent) if parent else model, last, new)


def _fuse_known_modules(mod_list):
    types = tuple(type(m) for m in mod_list)
    fuser = _FUSERS.get(types)
    if fuser is None:
        raise AssertionError(f"did not find fuser method for: {types} ")
    fused = fuser(*mod_list)
    out = [fused] + [nn.Identity() for _ in mod_list[1:]]
    for m in out[1:]:
        m.training = mod_list[0].training
    return out


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=None, fuse_custom_config_dict=None):
    """Fuse each list of submodule names in ``modules_to_fuse`` (or one list) into one module, as
    ``torch.ao.quantization.fuse_modules``: the first becomes the fused module (``LinearReLU``,
    ``ConvReLU2d``, or a Conv2d with an eval-mode BatchNorm2d folded in), the others ``nn.Identity``.
    ``inplace=False`` works on a deep copy."""
    if fuse_custom_config_dict is not None:
        raise NotImplementedError("fuse_modules: fuse_custom_config_dict is not supported")
    fuser_func = fuser_func or _fuse_known_modules
    if not inplace:
        model = copy.deepcopy(model)
    groups = modules_to_fuse
    if all(isinstance(g, str) for g in groups):
        groups = [groups]
    for names in groups:
        mods = [_get_module(model, n) for n in names]
        new = fuser_func(mods)
        for n, m in zip(names, new):
            _set_module(model, n, m)
    return model


# -- prepare / convert -------------------------------------------------------------------------------
DEFAULT_STATIC_QUANT_MODULE_MAPPINGS = {
    QuantStub: Quantize, DeQuantStub: DeQuantize,
    nn.Linear: QLinear, nn.Conv2d: QConv2d, LinearReLU: QLinearReLU, ConvReLU2d: QConvReLU2d,
    qat.Linear: QLinear, qat.Conv2d: QConv2d, qat.LinearReLU: QLinearReLU, qat.ConvReLU2d: QConvReLU2d,
}
"""Float (or QAT) module type -> its static quantized module."""
DEFAULT_QAT_MODULE_MAPPINGS = {nn.Linear: qat.Linear, nn.Conv2d: qat.Conv2d, LinearReLU: qat.LinearReLU,
                               ConvReLU2d: qat.ConvReLU2d}
"""Float module type -> its quantization-aware training module."""

_OBSERVED = (QuantStub, nn.Linear, nn.Conv2d, LinearReLU, ConvReLU2d)


def _is_observer(m):
    return isinstance(m, (ObserverBase, FakeQuantizeBase))


def propagate_qconfig_(module, qconfig_dict=None):
    """Give every submodule without a ``qconfig`` its parent's (in place)."""
    def walk(m, parent_qconfig):
        qc = getattr(m, "qconfig", parent_qconfig)
        if qconfig_dict is not None:
            qc = qconfig_dict.get(type(m), qc)
        m.qconfig = qc
        for child in m.children():
            if not _is_observer(child):
                walk(child, qc)
    walk(module, None)


def _observer_forward_hook(self, input, output):
    return self.activation_post_process(output)


def _add_observers(module):
    for child in module.children():
        if _is_observer(child):
            continue
        if isinstance(child, _OBSERVED) and getattr(child, "qconfig", None) is not None:
            if not hasattr(child, "activation_post_process"):
                child.activation_post_process = child.qconfig.activation()
                child._observer_forward_hook_handle = child.register_forward_hook(_observer_forward_hook)
        if not isinstance(child, (_FusedModule, qat.Linear, qat.Conv2d)):
            _add_observers(child)


def prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """Attach an observer (``qconfig.activation()``, as ``activation_post_process``, run by a forward
    hook) after every ``QuantStub``, ``Linear``, ``Conv2d`` and fused module that has a ``qconfig``
    (set ``model.qconfig``; submodules inherit it), as ``torch.ao.quantization.prepare``. Then run
    calibration data through the model and :func:`convert` it."""
    if prepare_custom_config_dict is not None or allow_list is not None:
        raise NotImplementedError("prepare: allow_list and prepare_custom_config_dict are not supported")
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    if not any(getattr(m, "qconfig", None) is not None for m in model.modules()):
        warnings.warn("None of the submodule got qconfig applied. Make sure you passed correct configuration "
                      "through `qconfig_dict` or by assigning the `.qconfig` attribute directly on submodules",
                      stacklevel=2)
    if isinstance(model, _OBSERVED) and model.qconfig is not None and not hasattr(model, "activation_post_process"):
        model.activation_post_process = model.qconfig.activation()
        model._observer_forward_hook_handle = model.register_forward_hook(_observer_forward_hook)
    _add_observers(model)
    return model


def _swap(module, mapping):
    for name, child in list(module.named_children()):
        if _is_observer(child):
            continue
        new = child
        if getattr(child, "qconfig", None) is not None and type(child) in mapping:
            new = mapping[type(child)].from_float(child)
        else:
            if not isinstance(child, _FusedModule):
                _swap(child, mapping)
        if new is not child:
            setattr(module, name, new)


def _remove_qconfig(module):
    for m in module.modules():
        if "qconfig" in m.__dict__:
            del m.__dict__["qconfig"]


def convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
            convert_custom_config_dict=None):
    """Swap every observed (or QAT) module for its quantized version, as
    ``torch.ao.quantization.convert``: ``QuantStub`` -> ``Quantize``, ``DeQuantStub`` -> ``DeQuantize``,
    ``Linear`` / ``Conv2d`` / ``LinearReLU`` / ``ConvReLU2d`` -> ``tensorplug.ao.nn.quantized.*`` with
    ``qint8`` weights and the output scale and zero point of the observer after them."""
    if is_reference or convert_custom_config_dict is not None:
        raise NotImplementedError("convert: reference models and custom configs are not supported")
    if not inplace:
        module = copy.deepcopy(module)
    mapping = DEFAULT_STATIC_QUANT_MODULE_MAPPINGS if mapping is None else mapping
    if getattr(module, "qconfig", None) is not None and type(module) in mapping:
        module = mapping[type(module)].from_float(module)
    else:
        _swap(module, mapping)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


def prepare_qat(model, mapping=None, inplace=False):
    """Swap ``Linear`` / ``Conv2d`` (and the fused modules) for versions with fake-quantized weights, then
    attach ``qconfig.activation()`` fake quantization after them, as
    ``torch.ao.quantization.prepare_qat``. Train the result, then :func:`convert` it."""
    if not model.training:
        raise AssertionError("prepare_qat only works on models in training mode")
    mapping = DEFAULT_QAT_MODULE_MAPPINGS if mapping is None else mapping
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    model = convert(model, mapping=mapping, inplace=True, remove_qconfig=False)
    prepare(model, inplace=True)
    return model


__all__ = ["QConfig", "default_qconfig", "default_qat_qconfig", "default_per_channel_qconfig", "get_default_qconfig",
           "get_default_qat_qconfig", "QuantStub", "DeQuantStub", "fuse_modules", "prepare", "convert",
           "prepare_qat", "propagate_qconfig_", "LinearReLU", "ConvReLU2d", "DEFAULT_STATIC_QUANT_MODULE_MAPPINGS",
           "DEFAULT_QAT_MODULE_MAPPINGS"]
