"""Joining and splitting: ``cat``, ``stack``, ``hstack``/``vstack``/``dstack``, ``atleast_*d``,
``split``, ``split_with_sizes``, ``chunk`` and ``unbind``.

``cat`` is the backend primitive, checked here with PyTorch's errors
(:func:`cat_plan`, which backends use too). The rest decompose: ``stack`` into
``unsqueeze`` + ``cat``, the splits into ``narrow`` and ``unbind`` into ``select``
views, the ``*stack`` functions into reshapes + ``cat``.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..tensor import Tensor, _wrap_dim
from ._common import document as _document, dims_arg as _dims
from ._lib import defop, attach, public
from .factories import zeros_for
from .memory import same_device
from .views import narrow, select, unsqueeze, reshape


# -- cat -------------------------------------------------------------------------------------------------
def cat_plan(tensors, dim):
    """``(tensors that take part, wrapped dim, result dtype)`` for ``cat``, raising PyTorch's errors.

    As in PyTorch, 1-D empty tensors are skipped whatever the other shapes (a
    legacy rule), but still take part in type promotion.
    """
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"cat(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__ if not isinstance(tensors, Tensor) else 'Tensor'}")
    if not tensors:
        raise ValueError("cat(): expected a non-empty list of Tensors")
    dtype = ref = None
    kept = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if not t._shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        dtype = t._dtype if dtype is None else _dt.promote_types(dtype, t._dtype)
        if t._shape == (0,):
            continue
        if ref is None:
            ref = t
            dim = _wrap_dim(dim, len(t._shape))
        else:
            if t._device is not ref._device:
                same_device("cat", ref, t)
            if len(t._shape) != len(ref._shape):
                raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref._shape)} "
                                   f"and {len(t._shape)}")
            for d, (a, b) in enumerate(zip(ref._shape, t._shape)):
                if d != dim and a != b:
                    raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected size "
                                       f"{a} but got size {b} for tensor number {i} in the list.")
        kept.append(t)
    if ref is None:
        dim = _wrap_dim(dim, 1)
    return kept, dim, dtype


def _check_cat(tensors, dim=0):
    cat_plan(tensors, dim)


cat = defop("cat(Tensor[] tensors, int dim=0) -> Tensor", check=_check_cat)


def _cat_fn(name):
    def fn(tensors, dim=0, *, axis=None):
        return cat(tensors, dim if axis is None else axis)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = ("Join ``tensors`` along the existing dimension ``dim``; the result has their promoted "
                  "dtype. All sizes but ``dim`` must match (1-D empty tensors are skipped).")
    return fn


for _name in ("cat", "concat", "concatenate"):
    public(_name, _cat_fn(_name))


@derivative("cat")
def _(grad, tensors, dim):
    d = _wrap_dim(dim, len(grad._shape))
    out, offset = [], 0
    for t in tensors:
        if t._shape == (0,):
            out.append(zeros_for((0,), grad))  # skipped by cat (PyTorch's legacy rule for 1-D empties)
            continue
        n = t._shape[d]
        out.append(narrow(grad, d, offset, n))
        offset += n
    return out


# -- stack, hstack, vstack, dstack, atleast_*d ----------------------------------------------------------
def _check_stack(tensors, dim=0):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tensors[0]._shape
    for i, t in enumerate(tensors):
        if t._shape != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(s0)} at entry 0 "
                               f"and {list(t._shape)} at entry {i}")
    _wrap_dim(dim, len(s0) + 1)


def _stack(tensors, dim=0):
    d = _wrap_dim(dim, len(tensors[0]._shape) + 1)
    return cat([unsqueeze(t, d) for t in tensors], d)


stack = _document(defop("stack(Tensor[] tensors, int dim=0) -> Tensor", check=_check_stack, composite=_stack),
                  "Join equal-shaped tensors along a new dimension ``dim`` (dtypes promote).")


def _at_least_shape(shape, ndim):
    """PyTorch's layouts: 0-d -> (1,), (1, 1) or (1, 1, 1); (n,) -> (1, n) or (1, n, 1); (m, n) -> (m, n, 1)."""
    if len(shape) >= ndim:
        return shape
    if not shape:
        return (1,) * ndim
    if len(shape) == 1:
        return (1,) + shape + (1,) * (ndim - 2)
    return shape + (1,)


def _at_least(ndim, name):
    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            t = tensors[0]
            return reshape(t, _at_least_shape(t._shape, ndim))
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        return tuple(reshape(t, _at_least_shape(t._shape, ndim)) for t in tensors)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Each tensor viewed with at least {ndim} dimension{'s' if ndim > 1 else ''}, size-1 dims "
                  "added as PyTorch does; one tensor in, one out, else a tuple.")
    return fn


atleast_1d = _at_least(1, "atleast_1d")
atleast_2d = _at_least(2, "atleast_2d")
atleast_3d = _at_least(3, "atleast_3d")


def _tensor_list(name, tensors):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def hstack(tensors):
    """Concatenate along the columns: dim 1, or dim 0 for 1-D tensors (0-d tensors become 1-D)."""
    _tensor_list("hstack", tensors)
    ts = atleast_1d(list(tensors))
    return cat(list(ts), 0 if len(ts[0]._shape) == 1 else 1)


def vstack(tensors):
    """Concatenate along the rows (dim 0), 0-d and 1-D tensors made 2-D first."""
    _tensor_list("vstack", tensors)
    return cat(list(atleast_2d(list(tensors))), 0)


def dstack(tensors):
    """Concatenate along the depth (dim 2), tensors made 3-D first."""
    _tensor_list("dstack", tensors)
    return cat(list(atleast_3d(list(tensors))), 2)


# -- split, split_with_sizes, chunk, unbind --------------------------------------------------------------
def _check_split(self, split_size, dim=0):
    if not self._shape:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    n = self._shape[_wrap_dim(dim, len(self._shape))]
    if split_size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")


def _split(self, split_size, dim=0):
    d = _wrap_dim(dim, len(self._shape))
    n = self._shape[d]
    if n == 0:
        return [narrow(self, d, 0, 0)]
    return [narrow(self, d, s, min(split_size, n - s)) for s in range(0, n, split_size)]


def _check_split_with_sizes(self, split_sizes, dim=0):
    if not self._shape:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    n = self._shape[_wrap_dim(dim, len(self._shape))]
    if any(s < 0 for s in split_sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={list(split_sizes)}")
    if sum(split_sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {dim}), but got split_sizes={list(split_sizes)}")


def _split_with_sizes(self, split_sizes, dim=0):
    d = _wrap_dim(dim, len(self._shape))
    out, start = [], 0
    for s in split_sizes:
        out.append(narrow(self, d, start, s))
        start += s
    return out


split_op = defop("split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[]",
                 check=_check_split, composite=_split)
split_with_sizes_op = defop("split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) "
                            "-> Tensor(a)[]", check=_check_split_with_sizes, composite=_split_with_sizes)


def split(tensor, split_size_or_sections, dim=0):
    """Views of ``tensor`` along ``dim``: chunks of ``split_size_or_sections`` elements (the last may be
    smaller), or one per size in a list of sizes that sum to the dimension's size. Returns a tuple."""
    if isinstance(split_size_or_sections, int):
        return tuple(split_op(tensor, split_size_or_sections, dim))
    return split_with_sizes(tensor, split_size_or_sections, dim)


def split_with_sizes(input, split_sizes, dim=0):
    """Views of ``input`` along ``dim``, one per size in ``split_sizes`` (which must sum to the dim's size)."""
    return tuple(split_with_sizes_op(input, _dims(split_sizes), dim))


def _check_chunk(self, chunks, dim=0):
    if not self._shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    _wrap_dim(dim, len(self._shape))


def _chunk(self, chunks, dim=0):
    d = _wrap_dim(dim, len(self._shape))
    n = self._shape[d]
    size = (n + chunks - 1) // chunks
    if size == 0:  # an empty dim still gives ``chunks`` pieces
        return _split_with_sizes(self, (0,) * chunks, d)
    return _split(self, size, d)


chunk_op = defop("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", check=_check_chunk,
                 composite=_chunk)


def chunk(input, chunks, dim=0):
    """At most ``chunks`` views of ``input`` along ``dim``, each of ceil(size / chunks) elements but the last.
    Returns a tuple."""
    return tuple(chunk_op(input, chunks, dim))


def _check_unbind(self, dim=0):
    _wrap_dim(dim, len(self._shape))
    if not self._shape:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")


def _unbind(self, dim=0):
    return [select(self, dim, i) for i in range(self._shape[_wrap_dim(dim, len(self._shape))])]


unbind_op = defop("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", check=_check_unbind,
                  composite=_unbind)


def unbind(input, dim=0):
    """The slices of ``input`` along ``dim`` (views, that dim removed), as a tuple."""
    return tuple(unbind_op(input, dim))


# -- Tensor methods and tensorplug.* functions -------------------------------------------------------
for _name, _fn in {"split": split, "split_with_sizes": split_with_sizes, "chunk": chunk,
                   "unbind": unbind}.items():
    attach(_name, _fn)
    public(_name, _fn)
for _name, _fn in {"stack": stack, "hstack": hstack, "vstack": vstack, "dstack": dstack,
                   "atleast_1d": atleast_1d, "atleast_2d": atleast_2d, "atleast_3d": atleast_3d}.items():
    public(_name, _fn)
