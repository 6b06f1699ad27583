"""tensorplug: a PyTorch-style tensor framework whose backends and transforms are plugins.

The core holds dtypes, devices, the dispatcher, tensor metadata and the
operator definitions; kernels come from plugins found through entry points
in the group ``tensorplug.plugins`` (``tensorplug-cpu`` provides the CPU
backend). See docs/architecture.md.
"""

from __future__ import annotations

from ._version import __version__

from .dtypes import (dtype, bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
                    complex64, complex128, promote_types, get_default_dtype, set_default_dtype)
import importlib as _importlib
import sys as _sys

import numpy as _np

from .dtypes import float16 as half, float32 as float, float64 as double, int64 as long  # noqa: F401
from .dtypes import int32 as int, int16 as short  # noqa: F401
from .dtypes import complex64 as cfloat, complex128 as cdouble  # noqa: F401
from . import _state
from .device import device
from .tensor import Tensor
from .hookspecs import hookimpl
from .dispatch import library as library
_sys.modules[__name__ + ".library"] = library  # so `from tensorplug.library import Library` works
from .dispatch.dispatcher import FALLTHROUGH as fallthrough_kernel  # noqa: F401
from .dispatch.tags import Tag
from . import ops
# the op modules: importing one defines its operators, tensorplug.* functions and Tensor methods
from .ops import memory as _memory, views as _views, shape as _shape  # noqa: F401
from .ops import comparison as _comparison, arithmetic as _arithmetic, math_ops as _math_ops  # noqa: F401
from .ops import joining as _joining, indexing as _indexing, getitem as _getitem  # noqa: F401
from .ops import sorting as _sorting, reductions as _reductions, linalg as _linalg  # noqa: F401
from .ops import activations as _activations, random as _random, methods as _methods  # noqa: F401
from .ops import nn_ops as _nn_ops  # noqa: F401
from .ops.factories import dlpack_import as _dlpack_import
from .ops import linalg_decomp as _linalg_decomp, linalg_functions as _linalg_fns, products as _products  # noqa: F401
from .ops import nn_conv_extra as _nn_conv_extra  # noqa: F401
from .ops import linalg_factor as _linalg_factor, linalg_composites as _linalg_composites  # noqa: F401
from .ops import special_ops as _special_ops, statistics as _statistics  # noqa: F401
from .ops import complex_ops as _complex_ops, fft_ops as _fft_ops  # noqa: F401
from .ops import nn_extra as _nn_extra, ctc as _ctc  # noqa: F401
from .ops import shape_extra as _shape_extra, index_extra as _index_extra  # noqa: F401
from .ops import optim_ops as _optim_ops  # noqa: F401
from .ops import special_bessel as _special_bessel  # noqa: F401
from .ops import special_more as _special_more  # noqa: F401
from .ops import shape_more as _shape_more  # noqa: F401
from .ops import nn_more as _nn_more  # noqa: F401
from .ops.factories import (tensor, as_tensor, from_numpy, empty, zeros, ones, full, empty_like, zeros_like,
                            ones_like, full_like, arange, linspace, eye)
from .ops.promotion import result_type, broadcast_shapes_fn as broadcast_shapes
from .ops._lib import PUBLIC as _PUBLIC
from ._printing import set_printoptions
from . import autograd
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled
from .autograd.grad_mode import is_inference_mode_enabled
from . import func
from .serialization import save, load
from . import _codecache, plugins
from ._legacy import (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor,  # noqa: F401
                      ShortTensor, CharTensor, ByteTensor, BoolTensor, set_default_device)

globals().update({k: v for k, v in _PUBLIC.items() if k not in globals()})
from .ops import out as _out  # noqa: E402
_out.install(globals(), "")  # PyTorch's out= on the functions that have it (not on the Tensor methods)

import builtins as _builtins  # noqa: E402

is_tensor = lambda obj: _builtins.isinstance(obj, Tensor)  # noqa: E731


def from_dlpack(ext_tensor):
    """A tensor sharing memory with any object that implements ``__dlpack__`` (zero-copy).

    Host memory becomes a CPU tensor; device memory becomes a tensor of the enabled backend whose
    ``dlpack_device_type`` is the object's DLPack device type (tensorplug-cuda's for a cupy array),
    on the object's device. ``BufferError`` when no enabled backend holds that kind of memory.
    """
    t = _dlpack_import(ext_tensor)
    return from_numpy(_np.from_dlpack(ext_tensor)) if t is None else t


def get_default_device():
    return _state.default_device


_LAZY_SUBMODULES = ("nn", "optim", "utils",  # imported on first use: they cost import time
                    "cuda", "amp", "accelerator", "backends", "distributed", "distributions", "testing", "linalg", "special", "fft", "signal",
                    "ao", "quantization")

# what a user sees: the names defined above, the ops' public functions, and the lazy submodules
__all__ = sorted({k for k in globals() if not k.startswith("_") and k != "annotations"} | set(_LAZY_SUBMODULES))


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    from .plugins import public  # lazy: the manager is imported by then; a name miss is rare
    return public(name)


plugins.discover()
_codecache.save()  # the generated code of this import, for the next one (see _codecache)
