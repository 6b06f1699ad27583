"""``tensorplug.ao.nn.quantized``: quantized modules (Linear, Conv2d, ReLU, QuantStub results, FloatFunctional).

Every name here comes from the tensorplug-quantize plugin: while it is disabled or not installed,
each raises an AttributeError that names it and says how to enable it. See docs/quantization.md.
"""

from __future__ import annotations

from ....plugins import plugin_name
from . import dynamic  # a submodule, as torch.ao.nn.quantized.dynamic


def __getattr__(name):
    return plugin_name("ao.nn.quantized", name)
