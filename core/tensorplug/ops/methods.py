"""Tensor methods and Python operators for the core's ops.

Methods whose first schema argument is ``self`` are the op's entry function
itself (no wrapper, so ``x.exp()`` costs one call). Operators that accept a
Tensor or a Python scalar pick the ``.Tensor`` or ``.Scalar`` overload.
"""

from __future__ import annotations

import numbers

from .. import dtypes as _dt
from ..device import device as _device
from ..dispatch.keys import Autograd
from ..tensor import Tensor
from . import elementwise as E
from . import memory as M
from . import views as V
from . import reductions as R
from . import linalg as L


def attach(name, fn):
    """Make ``fn`` the Tensor method ``name``."""
    setattr(Tensor, name, fn)


def binary_method(t_entry, s_entry):
    """Method/operator taking a Tensor or a Python number (``x.add(y)``, ``x + 2``)."""
    def method(self, other, *args, **kwargs):
        if type(other) is Tensor or isinstance(other, Tensor):
            return t_entry(self, other, *args, **kwargs)
        if isinstance(other, numbers.Number):
            return s_entry(self, other, *args, **kwargs)
        return NotImplemented
    return method


def binary_method_strict(t_entry, s_entry, name):
    method = binary_method(t_entry, s_entry)

    def strict(self, other, *args, **kwargs):
        out = method(self, other, *args, **kwargs)
        if out is NotImplemented:
            raise TypeError(f"{name}(): argument 'other' must be Tensor or Number, not {type(other).__name__}")
        return out
    return strict


def reflected(t_entry, s_entry):
    """``2 - x``: the scalar becomes the left operand."""
    def method(self, other):
        if isinstance(other, numbers.Number):
            return t_entry(E.scalar_tensor(other, _result(self, other), self._device), self)
        return NotImplemented
    return method


def _result(self, other):
    from .promotion import result_type
    return result_type(self, other)


for _name, (_t, _s, _ti, _si) in {"add": (E.add, E.add_scalar, E.add_, E.add_scalar_),
                                  "sub": (E.sub, E.sub_scalar, E.sub_, E.sub_scalar_),
                                  "mul": (E.mul, E.mul_scalar, E.mul_, E.mul_scalar_)}.items():
    attach(_name, binary_method_strict(_t, _s, _name))
    attach(_name + "_", binary_method_strict(_ti, _si, _name + "_"))
    attach(f"__{_name}__", binary_method(_t, _s))
    attach(f"__i{_name}__", binary_method(_ti, _si))

Tensor.__radd__ = Tensor.__add__
Tensor.__rmul__ = Tensor.__mul__
Tensor.__rsub__ = reflected(E.sub, E.sub_scalar)
Tensor.subtract = Tensor.sub
Tensor.multiply = Tensor.mul
attach("neg", E.neg)
attach("negative", E.neg)
attach("__neg__", E.neg)
attach("exp", E.exp)


def __matmul__(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return L.matmul(self, other)


attach("__matmul__", __matmul__)
attach("matmul", L.matmul)


def _sum(self, dim=None, keepdim=False, *, dtype=None):
    if isinstance(dim, int):
        dim = (dim,)
    return R.sum(self, dim, keepdim, dtype=dtype)


attach("sum", _sum)


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
Tensor.mT = property(lambda self: V.transpose(self, -2, -1))
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


def _type(self, dtype=None):
    if dtype is None:
        return f"tensorplug.{self._dtype.name}"
    return to(self, dtype)


attach("type", _type)


def requires_grad_(self, requires_grad=True):
    """Start (or stop) recording operations on this tensor for autograd."""
    if requires_grad and not (self._dtype.is_floating_point):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if not requires_grad and self._grad_fn is not None:
        raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                           "computed variable in a subgraph that doesn't require differentiation use "
                           "var_no_grad = var.detach().")
    self._requires_grad = bool(requires_grad)
    self._ks = (self._ks | Autograd.bit) if requires_grad else (self._ks & ~Autograd.bit)
    return self


attach("requires_grad_", requires_grad_)


def detach(self):
    """A view of the same data that does not require grad."""
    out = V.alias(self)
    return out


attach("detach", detach)


Tensor.requires_grad = property(lambda self: self._requires_grad,
                                lambda self, v: requires_grad_(self, v) and None)
