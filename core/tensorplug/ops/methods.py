"""Tensor methods and Python operators for the core's ops.

Methods whose first schema argument is ``self`` are the op's entry function
itself (no wrapper, so ``x.t()`` costs one call). Elementwise methods and
their Python operators (``+``, ``<``, ``~``...) are attached by :mod:`.elementwise`.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..device import device as _device
from ..dispatch.keys import Autograd
from ..tensor import Tensor
from . import memory as M
from . import views as V


def attach(name, fn):
    """Make ``fn`` the Tensor method ``name``."""
    setattr(Tensor, name, fn)


# -- views ---------------------------------------------------------------------------
def _sizes(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return args


attach("view", lambda self, *shape: _view_or_dtype(self, shape))
attach("reshape", lambda self, *shape: V.reshape(self, _sizes(shape)))
attach("permute", lambda self, *dims: V.permute(self, _sizes(dims)))
attach("expand", lambda self, *sizes: V.expand(self, _sizes(sizes)))
attach("transpose", V.transpose)
attach("swapaxes", V.transpose)
attach("swapdims", V.transpose)
attach("t", V.t)
attach("as_strided", V.as_strided)
attach("narrow", V.narrow)
attach("select", V.select)
attach("unflatten", V.unflatten)
attach("flatten", V.flatten)
attach("diagonal", V.diagonal)
attach("unfold", V.unfold)
attach("movedim", V.movedim)
attach("moveaxis", V.movedim)
attach("unsqueeze", V.unsqueeze)
attach("contiguous", M.contiguous)
attach("clone", M.clone)
attach("copy_", M.copy_)
attach("fill_", M.fill_)


def _view_or_dtype(self, shape):
    if len(shape) == 1 and isinstance(shape[0], _dt.dtype):
        raise NotImplementedError("view(dtype) is not supported; use .to(dtype)")
    return V.view(self, _sizes(shape))


def _squeeze(self, dim=None):
    if isinstance(dim, int):
        dim = (dim,)
    return V.squeeze(self, dim)


attach("squeeze", _squeeze)
attach("expand_as", lambda self, other: V.expand(self, other.shape))
attach("view_as", lambda self, other: V.view(self, other.shape))
attach("reshape_as", lambda self, other: V.reshape(self, other.shape))
Tensor.T = property(lambda self: V.permute(self, tuple(range(self.dim() - 1, -1, -1))))
def _mT(self):
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return V.transpose(self, -2, -1)


Tensor.mT = property(_mT)
Tensor.H = Tensor.T
Tensor.mH = Tensor.mT


def zero_(self):
    return M.fill_(self, 0)


attach("zero_", zero_)


# -- conversions ------------------------------------------------------------------------
def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other_tensor)``; returns self if nothing changes."""
    for a in args:
        if isinstance(a, _dt.dtype):
            dtype = a
        elif isinstance(a, (str, _device)):
            device = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, bool):
            non_blocking = a
        elif isinstance(a, int):
            device = _device("cpu", a)
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {type(a).__name__}")
    if device is not None:
        from ..backend import backend_for
        dev = _device(device)
        device = backend_for(dev).normalize_device(dev)
    same_dtype = dtype is None or dtype is self._dtype
    same_dev = device is None or device == self._device
    if same_dtype and same_dev and not copy:
        return self
    return M._to_copy(self, dtype=dtype, device=device)


attach("to", to)
attach("type_as", lambda self, other: to(self, other.dtype))
attach("cpu", lambda self: to(self, "cpu"))
for _n, _d in {"float": _dt.float32, "double": _dt.float64, "half": _dt.float16, "bfloat16": _dt.bfloat16,
               "long": _dt.int64, "int": _dt.int32, "short": _dt.int16, "char": _dt.int8, "byte": _dt.uint8,
               "bool": _dt.bool}.items():
    attach(_n, (lambda d: lambda self: to(self, d))(_d))


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def _type(self, dtype=None):
    if dtype is None:
        return f"tensorplug.{_TYPE_NAMES[self._dtype.name]}"
    return to(self, dtype)


attach("type", _type)


def requires_grad_(self, requires_grad=True):
    """Start (or stop) recording operations on this tensor for autograd."""
    if requires_grad and not (self._dtype.is_floating_point):
        raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
    if not requires_grad and self._grad_fn is not None:
        raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                           "computed variable in a subgraph that doesn't require differentiation use "
                           "var_no_grad = var.detach().")
    self._requires_grad = bool(requires_grad)
    self._ks = (self._ks | Autograd.bit) if requires_grad else (self._ks & ~Autograd.bit)
    return self


attach("requires_grad_", requires_grad_)


def detach(self):
    """The same data (storage and version counter shared) without autograd history.

    As in PyTorch the result is not reported as a view (``_base`` is None).
    """
    out = V.alias(self)
    out.__dict__.pop("_base", None)
    return out


attach("detach", detach)


Tensor.requires_grad = property(lambda self: self._requires_grad,
                                lambda self, v: requires_grad_(self, v) and None)
