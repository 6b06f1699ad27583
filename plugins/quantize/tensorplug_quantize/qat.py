"""Modules for quantization-aware training (PyTorch's ``torch.ao.nn.qat`` and ``torch.ao.nn.intrinsic.qat``):
float Linear and Conv2d layers whose weight passes through ``weight_fake_quant`` (a
:class:`~tensorplug_quantize.fake_quantize.FakeQuantize`) on every call, so training sees the
rounding of the int8 weights; the gradient flows straight through."""

from __future__ import annotations

from tensorplug import nn
from tensorplug.nn import functional as F

from .fused import ConvReLU2d as _FloatConvReLU2d
from .fused import LinearReLU as _FloatLinearReLU


def _need_qconfig(qconfig):
    if not qconfig:
        raise AssertionError("qconfig must be provided for QAT module")


def _float_layer(cls, mod, fused):
    """The float layer of ``mod`` for ``cls.from_float`` (the first child of a ``fused`` module), after
    PyTorch's checks of its type and qconfig."""
    if type(mod) is not cls._FLOAT_MODULE:
        raise AssertionError(f"qat.{cls.__name__}.from_float only works for {cls._FLOAT_MODULE.__name__}")
    if not hasattr(mod, "qconfig") or not mod.qconfig:
        raise AssertionError("Input float module must have a valid qconfig")
    return mod[0] if isinstance(mod, fused) else mod


class Linear(nn.Linear):
    """``nn.Linear`` with a fake-quantized weight (``torch.ao.nn.qat.Linear``)."""

    _FLOAT_MODULE = nn.Linear

    def __init__(self, in_features, out_features, bias=True, qconfig=None):
        super().__init__(in_features, out_features, bias)
        _need_qconfig(qconfig)
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The QAT version of float ``mod`` (sharing its parameters); ``mod.qconfig`` must be set."""
        linear = _float_layer(cls, mod, _FloatLinearReLU)
        qat = cls(linear.in_features, linear.out_features, bias=linear.bias is not None, qconfig=mod.qconfig)
        qat.weight = linear.weight
        qat.bias = linear.bias
        return qat


class LinearReLU(Linear):
    """Fused Linear + ReLU for QAT (``torch.ao.nn.intrinsic.qat.LinearReLU``)."""

    _FLOAT_MODULE = _FloatLinearReLU

    def forward(self, input):
        return F.relu(F.linear(input, self.weight_fake_quant(self.weight), self.bias))


class Conv2d(nn.Conv2d):
    """``nn.Conv2d`` with a fake-quantized weight (``torch.ao.nn.qat.Conv2d``)."""

    _FLOAT_MODULE = nn.Conv2d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", qconfig=None):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation,
                         groups=groups, bias=bias, padding_mode=padding_mode)
        _need_qconfig(qconfig)
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def _conv(self, input):
        if self.padding_mode != "zeros":
            raise NotImplementedError("QAT Conv2d supports padding_mode='zeros' only")
        return F.conv2d(input, self.weight_fake_quant(self.weight), self.bias, self.stride, self.padding,
                        self.dilation, self.groups)

    def forward(self, input):
        return self._conv(input)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The QAT version of float ``mod`` (sharing its parameters); ``mod.qconfig`` must be set."""
        conv = _float_layer(cls, mod, _FloatConvReLU2d)
        qat = cls(conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride, padding=conv.padding,
                  dilation=conv.dilation, groups=conv.groups, bias=conv.bias is not None,
                  padding_mode=conv.padding_mode, qconfig=mod.qconfig)
        qat.weight = conv.weight
        qat.bias = conv.bias
        return qat


class ConvReLU2d(Conv2d):
    """Fused Conv2d + ReLU for QAT (``torch.ao.nn.intrinsic.qat.ConvReLU2d``)."""

    _FLOAT_MODULE = _FloatConvReLU2d

    def forward(self, input):
        return F.relu(self._conv(input))


__all__ = ["Linear", "LinearReLU", "Conv2d", "ConvReLU2d"]
