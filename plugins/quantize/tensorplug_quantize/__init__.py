"""tensorplug-quantize: quantized tensors under a per-backend ``Quantized`` dispatch key.

The plugin declares the ``Quantized`` functionality key (priority 16, per backend: QuantizedCPU,
QuantizedOpenReg, ... for every backend without any code of theirs) and the dtypes ``qint8``,
``quint8``, ``qint32`` and ``quint4x2``; registers generic Quantized kernels
(:mod:`tensorplug_quantize.kernels`) and the ``quantized::`` operators; and provides
``tensorplug.quantize_per_tensor`` and friends, ``tensorplug.ao.quantization`` (PyTorch's eager
workflows: ``quantize_dynamic``, observers, ``prepare``/``convert``, fake quantization) and
``tensorplug.quantization`` (``quantize_`` with torchao-style configs, and ``report``).
See docs/quantization.md.
"""

from __future__ import annotations

import tensorplug
from tensorplug.plugin_api import FunctionalityKey, register_tensor_kind

from . import kernels, qtensor
from .qtensor import KEY_NAME, PRIORITY, QDTYPES

__version__ = "0.2.0"
TENSORPLUG_API = (1, 2)  # the plugin API this plugin is written for (tensorplug.plugin_api)


@tensorplug.hookimpl
def tensorplug_functionality_keys():
    return [FunctionalityKey(KEY_NAME, PRIORITY, per_backend=True, composite=True)]


@tensorplug.hookimpl
def tensorplug_dtypes():
    return list(QDTYPES)


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    kernels.install(library)
    register_tensor_kind("quantized", qtensor.rebuild, "quantize")


@tensorplug.hookimpl
def tensorplug_namespace():
    from . import api  # lazy: the workflows (observers, modules) load with the namespace, not with the key
    return api.namespace()


@tensorplug.hookimpl
def tensorplug_conformance():
    from .conformance import register  # lazy: the cases load only when the conformance kit asks
    register()
    return [{"transform": "quantize", "backend": "cpu"},
            {"name": "quantize:openreg", "transform": "quantize", "backend": "openreg"}]
