"""Tensor methods and Python operators for the core's ops.

Methods whose first schema argument is ``self`` are the op's entry function
itself (no wrapper, so ``x.t()`` costs one call). Each op module attaches the
methods of its own ops; the pointwise ones also attach their Python operators
(``+`` in :mod:`.arithmetic`, ``<`` and ``~`` in :mod:`.comparison`, ``**`` in
:mod:`.math_ops`).
"""

from __future__ import annotations

import weakref

from .. import dtypes as _dt
from ..autograd import backward as _backward
from ..backend import canonical_device
from ..device import device as _device
from ..autograd.graph import check_hook_result
from ..dispatch.argcheck import check_no_internal_overlap
from ..dispatch.keys import Autograd
from .._warn import warn_user
from ..tensor import Tensor, make_view
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


def _or_keyword(name, keyword, args, value):
    """The sizes given as ``*args`` or, as PyTorch also takes them, as the keyword (``x.view(size=(2, 3))``)."""
    if value is None:
        return args
    if args:
        raise TypeError(f"{name}() got multiple values for argument '{keyword}'")
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{name}(): argument '{keyword}' must be tuple of ints, not {type(value).__name__}")
    return (value,)


attach("view", lambda self, *args, size=None: _view_or_dtype(self, _or_keyword("view", "size", args, size)))
attach("reshape", lambda self, *args, shape=None: V.reshape(self, _sizes(_or_keyword("reshape", "shape", args, shape))))
attach("permute", lambda self, *args, dims=None: V.permute(self, _sizes(_or_keyword("permute", "dims", args, dims))))
attach("expand", lambda self, *args, size=None: V.expand(self, _sizes(_or_keyword("expand", "size", args, size))))
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
def fill_(self, value):
    """Fill with ``value``: a Python number or a 0-dim tensor.

    As in PyTorch, a number may fill a tensor whose elements share memory (an expanded view); a
    tensor value may not (PyTorch's ``fill_.Tensor`` rejects it like every other in-place op).
    """
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.dim()} dimensions.")
        if self._storage is not None:
            check_no_internal_overlap(self)
        value = value.item()
    return M.fill_(self, value)


attach("fill_", fill_)


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
T_WARNED = [False]  # PyTorch warns once per process (TORCH_WARN_ONCE)
T_WARNING = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will "
             "throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
             "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")


def _T(self):
    n = len(self._shape)
    if n != 2 and n and not T_WARNED[0]:
        T_WARNED[0] = True
        warn_user(T_WARNING)
    return V.permute(self, tuple(range(n - 1, -1, -1)))


Tensor.T = property(_T)  # the dims reversed (a matrix's transpose)
_SWAP_LAST = {n: tuple(range(n - 2)) + (n - 1, n - 2) for n in range(2, 9)}


def _mT(self):
    n = len(self._shape)
    if n < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {n}-D tensor.")
    dims = _SWAP_LAST.get(n) or tuple(range(n - 2)) + (n - 1, n - 2)
    return V.permute(self, dims)  # transpose(-2, -1) without its extra dispatch


def _conj(t):
    return t.conj() if t._dtype.category == _dt.COMPLEX else t


def _H(self):
    n = len(self._shape)
    if n == 2:
        return _conj(V.permute(self, (1, 0)))
    if n == 0:
        return _conj(self)
    raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor."
                       + (" For batches of matrices, consider using tensor.mH" if n > 2 else ""))


def _mH(self):
    n = len(self._shape)
    if n < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {n}-D tensor.")
    return _conj(_mT(self))


Tensor.mT = property(_mT)
Tensor.H = property(_H)  # the conjugate transpose of a matrix
Tensor.mH = property(_mH)  # the conjugate transpose of the last two dims


def zero_(self):
    return M.fill_(self, 0)


attach("zero_", zero_)


# -- conversions ------------------------------------------------------------------------
def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other_tensor)``; returns self if nothing changes.

    ``non_blocking`` reaches the backend's copy (tensorplug-cuda queues copies from and to pinned host
    memory on the current stream); ``memory_format`` is accepted for PyTorch compatibility and ignored:
    tensors are always row-major.
    """
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
        device = canonical_device(_device(device))
    same_dtype = dtype is None or dtype is self._dtype
    same_dev = device is None or device == self._device
    if same_dtype and same_dev and not copy:
        return self
    return M._to_copy(self, dtype=dtype, device=device, non_blocking=bool(non_blocking))


attach("to", to)
attach("type_as", lambda self, other: to(self, other.dtype))
attach("cpu", lambda self, memory_format=None: to(self, "cpu"))


def cuda(self, device=None, non_blocking=False, memory_format=None):
    """A copy on a CUDA device (the current one when ``device`` is None; ``self`` if already there).

    Needs a plugin serving ``"cuda"`` (tensorplug-cuda); its error says what is missing otherwise.
    """
    if device is None:
        dev = _device("cuda")
    elif isinstance(device, int) and not isinstance(device, bool):
        dev = _device("cuda", device)
    else:
        dev = _device(device)
        if dev.type != "cuda":
            raise RuntimeError(f"Invalid device, must be cuda device, got {dev}")
    return to(self, dev, non_blocking=non_blocking)


def _cuda_runtime(name):
    from ..cuda import _runtime_fn  # lazy: tensorplug.cuda loads on first use, not with the methods
    return _runtime_fn(name)


def pin_memory(self, device=None):
    """A copy of this CPU tensor in page-locked host memory (needs a CUDA backend, as in PyTorch)."""
    impl = _cuda_runtime("pin_memory")
    if impl is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self._device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self._device.type}' memory: only CPU memory can be pinned")
    return impl(self)


def is_pinned(self, device=None):
    """Whether this tensor lives in page-locked host memory (False without a CUDA backend)."""
    impl = _cuda_runtime("is_pinned")
    return False if impl is None or self._device.type != "cpu" else bool(impl(self))


attach("cuda", cuda)
attach("pin_memory", pin_memory)
attach("is_pinned", is_pinned)
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
    if requires_grad and self._dtype.category < _dt.FLOATING:
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
    own = getattr(self.__class__, "_detach", None)
    if own is not None:
        return own(self)  # a transform's wrapper (vmap's batched tensor) detaches what it wraps
    # not the alias op: that one is recorded by autograd, and a detached tensor has no history
    out = make_view(self, self._data)
    out.__dict__.pop("_base", None)
    off = self._storage_offset0
    if off is not None:
        out._storage_offset0 = off
    return out


attach("detach", detach)


Tensor.requires_grad = property(lambda self: self._requires_grad,
                                lambda self, v: requires_grad_(self, v) and None)


# -- autograd ---------------------------------------------------------------------------
def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the ``.grad`` of the leaves it depends on."""
    _backward([self], [gradient] if gradient is not None else None, retain_graph, create_graph, inputs)


def retain_grad(self):
    """Keep ``.grad`` for this non-leaf tensor after backward."""
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self._grad_fn is None or self._retains_grad:
        return
    node, nr = self._grad_fn, self._output_nr
    ref = weakref.ref(self)

    def keep(grads):
        t = ref()
        if t is not None and grads[nr] is not None:
            g = grads[nr].detach()
            t._grad = g.clone() if t._grad is None else t._grad + g
    node.register_prehook(keep)
    self._retains_grad = True


def register_hook(self, hook):
    """``hook(grad)`` runs when this tensor's gradient is computed; a non-None result replaces it."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._grad_fn is None:
        hooks = self.__dict__.get("_backward_hooks")
        if hooks is None:
            hooks = self._backward_hooks = {}
        key = object()
        hooks[key] = hook
        return _DictHandle(hooks, key)
    nr = self._output_nr

    def pre(grads):
        if grads[nr] is None:
            return None
        r = hook(grads[nr])
        if r is None:
            return None
        out = list(grads)
        out[nr] = check_hook_result(hook, grads[nr], r)
        return tuple(out)
    return self._grad_fn.register_prehook(pre)


def register_post_accumulate_grad_hook(self, hook):
    """``hook(tensor)`` runs after a leaf's ``.grad`` has been updated."""
    if self._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = self.__dict__.get("_post_accumulate_hooks")
    if hooks is None:
        hooks = self._post_accumulate_hooks = {}
    key = object()
    hooks[key] = hook
    return _DictHandle(hooks, key)


class _DictHandle:
    def __init__(self, d, key):
        self._d, self._key = d, key

    def remove(self):
        self._d.pop(self._key, None)


def detach_(self):
    """Detach this tensor from its graph in place (it becomes a leaf)."""
    if self._base is not None and self._base._requires_grad:
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    self._grad_fn = None
    self._requires_grad = False
    self._ks &= ~Autograd.bit
    return self


attach("backward", backward)
attach("retain_grad", retain_grad)
attach("register_hook", register_hook)
attach("register_post_accumulate_grad_hook", register_post_accumulate_grad_hook)
attach("detach_", detach_)
Tensor.retains_grad = property(lambda self: self._retains_grad)
def _get_data(self):
    """``t.data``: the same memory without history and with a version counter of its own, as in PyTorch
    (writes through it are invisible to autograd's checks: that is what ``.data`` is for)."""
    out = detach(self)
    if out.__class__ is Tensor or getattr(out.__class__, "_detach", None) is None:
        out._storage = self._get_storage().with_new_version_counter()
    return out


Tensor.data = property(_get_data, lambda self, v: _set_data(self, v))


def _set_data(self, value):
    if value._shape != self._shape or value._dtype is not self._dtype or value._device is not self._device:
        self._shape, self._dtype, self._device = value._shape, value._dtype, value._device
        self._ks = (value._ks & ~Autograd.bit) | (self._ks & Autograd.bit)
    self._data = value._data
    self.__dict__.pop("_storage_offset0", None)
    self.__dict__.pop("_no_internal_overlap", None)  # a new layout: the next write looks at it again
    self._storage = value._get_storage()
