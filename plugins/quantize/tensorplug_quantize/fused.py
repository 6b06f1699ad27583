"""Fused float modules (PyTorch's ``torch.ao.nn.intrinsic``): what :func:`fuse_modules` puts in place of a
Linear or Conv2d followed by a ReLU, so that quantization treats the pair as one layer."""

from __future__ import annotations

from tensorplug import nn


class _FusedModule(nn.Sequential):
    """A sequence of modules quantized as one (the observer goes after the last)."""


class LinearReLU(_FusedModule):
    """``Linear`` then ``ReLU`` (``torch.ao.nn.intrinsic.LinearReLU``)."""

    def __init__(self, linear, relu):
        if not (isinstance(linear, nn.Linear) and isinstance(relu, nn.ReLU)):
            raise AssertionError(f"Incorrect types for input modules{type(linear)}{type(relu)}")
        super().__init__(linear, relu)


class ConvReLU2d(_FusedModule):
    """``Conv2d`` then ``ReLU`` (``torch.ao.nn.intrinsic.ConvReLU2d``)."""

    def __init__(self, conv, relu):
        if not (isinstance(conv, nn.Conv2d) and isinstance(relu, nn.ReLU)):
            raise AssertionError(f"Incorrect types for input modules{type(conv)}{type(relu)}")
        super().__init__(conv, relu)


__all__ = ["LinearReLU", "ConvReLU2d"]
