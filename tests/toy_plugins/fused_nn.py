"""A toy backend that owns two nn operators: device ``fusedev``, dispatch key ``FuseDev``.

It registers native kernels for ``conv2d`` and ``layer_norm`` under its Dense
key and nothing else. Each kernel records its call in :data:`CALLS` and
returns a known value (conv2d: the output shape filled with 7, layer_norm:
the input's shape filled with -1), so a test can tell them from the
CompositeImplicitAutograd decomposition, which every other backend runs.
"""

from __future__ import annotations

TENSORPLUG_API = (1, 0)  # the plugin API this toy plugin is written for

import numpy as np

import tensorplug
from tensorplug.backend import BACKENDS
from tensorplug.tensor import make_tensor

from .testdev import NumpyTestBackend

__version__ = "0.0.1"

DEVICE = tensorplug.device("fusedev")
CALLS: list = []  # (kernel name, argument summary) of each call, in order


class FuseDevBackend(NumpyTestBackend):
    """Host memory in numpy arrays, like ``testdev``, under its own device type and key."""

    name = "fusedev"
    key_name = "FuseDev"
    slot = 11

    def normalize_device(self, dev):
        return DEVICE


def _result(arr, dtype):
    return make_tensor(np.asarray(arr, dtype=dtype.np), dtype, DEVICE, BACKENDS["fusedev"].ks)


def conv2d(input, weight, bias, stride, padding, dilation, groups):
    """The output's shape (batched input only), filled with 7."""
    CALLS.append(("conv2d", tuple(stride), tuple(padding), tuple(dilation), groups, bias is not None))
    n, _, h, w = input._shape
    out_c, _, kh, kw = weight._shape
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    return _result(np.full((n, out_c, ho, wo), 7.0), input._dtype)


def layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable):
    """The input's shape filled with -1."""
    CALLS.append(("layer_norm", tuple(normalized_shape), eps))
    return _result(np.full(input._shape, -1.0), input._dtype)


@tensorplug.hookimpl
def tensorplug_backends():
    return [FuseDevBackend()]


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    lib = library("tensorplug", "IMPL", "FuseDev")
    lib.impl("conv2d", conv2d)
    lib.impl("layer_norm", layer_norm)
