"""``tensorplug.ao.quantization``: PyTorch's eager quantization workflows (quantize_dynamic, observers, QConfig, prepare / convert, fake quantization).

Every name here comes from the tensorplug-quantize plugin: while it is disabled or not installed,
each raises an AttributeError that names it and says how to enable it. See docs/quantization.md.
"""

from __future__ import annotations

from ...plugins import plugin_name


def __getattr__(name):
    return plugin_name("ao.quantization", name)
