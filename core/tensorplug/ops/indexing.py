"""Indexing operators: ``index_select``, ``gather``, ``scatter``, advanced indexing
(``index.Tensor`` and ``index_put``) and ``masked_fill``, with their checks and formulas.

Backend primitives: ``index_select``, ``gather``, ``scatter_.src``,
``scatter_add_``, ``index.Tensor``, ``index_put_`` and ``masked_fill_.Tensor``.
The functional forms (``scatter``, ``scatter_add``, ``index_put``,
``masked_fill``) decompose into ``clone`` plus the in-place primitive, and the
``.value``/``.Scalar`` overloads wrap the scalar in a tensor. ``tensor[key]``
and ``tensor[key] = value`` (:mod:`.getitem`) reach the advanced-indexing ops.

Every check that needs only shapes and dtypes runs here, so all backends raise
the same errors. Checks that need index *values* (bounds, and the shapes that
bool masks give) are the backend's, which raises the errors built by
:func:`index_bounds_error`, :func:`index_select_range_error` and
:func:`check_index_put_shapes` so that the messages still agree (``index.Tensor``
checks its bounds here, reading the indices back).

Gradients scattered into zeros are written with the in-place primitives on a
fresh buffer, whose own formulas make them differentiable again (double backward).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from ..tensor import Tensor, _wrap_dim
from ._common import document
from ._lib import DYNAMIC_SHAPE, POINTWISE, defop, attach, public
from .comparison import where_scalar_other
from .factories import zeros_for as _zeros
from .joining import cat
from .memory import same_device, clone
from .pointwise import scalar_tensor
from .promotion import broadcast_shapes, _pt_name
from .views import expand

_INDEX_DTYPES = (_dt.int64, _dt.int32)
_MASK_DTYPES = (_dt.bool, _dt.uint8)

# dtype names as PyTorch's C++ checks print them
_C_TYPES = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
            "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
            "float64": "double"}
# -- errors shared with the backends ------------------------------------------------------
def index_bounds_error(value, dim, size, exc=RuntimeError):
    """The error for an index outside its dimension (gather/scatter: RuntimeError; index_put: IndexError)."""
    return exc(f"index {value} is out of bounds for dimension {dim} with size {size}")


def index_select_range_error(value, dim, ndim, size):
    """index_select's error for an index outside ``[0, size)`` (PyTorch words it differently along dim 1)."""
    if dim == 1 and ndim > 1:
        return RuntimeError(f"INDICES element is out of DATA bounds, id={value} axis_dim={size}")
    return IndexError("index out of range in self")


def _shape_str(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def advanced_index_shape(self_shape, entries):
    """Shape of an advanced-indexing result, with PyTorch's (numpy's) placement rule.

    ``entries`` lists, per index, None (a whole dim is kept) or ``(shape, covers)``:
    an integer index array of ``shape`` that covers ``covers`` dims of ``self_shape``
    (1, or 0 for a zero-dim bool mask). A bool mask of k dims with c true elements
    is k entries ``((c,), 1)``. The index arrays broadcast together; their shape
    replaces the dims they cover when they are adjacent, and goes first otherwise.
    """
    shapes = [e[0] for e in entries if e is not None]
    try:
        bshape = broadcast_shapes(*shapes)
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(_shape_str(s) for s in shapes)) from None
    before, after, state, d = [], [], 0, 0  # state: 0 before the index arrays, 1 among them, 2 after
    adjacent = True
    for e in entries:
        if e is None:
            if state == 0:
                before.append(self_shape[d])
            else:
                after.append(self_shape[d])
                state = 2
            d += 1
        else:
            if state == 2:
                adjacent = False
            state = 1
            d += e[1]
    after.extend(self_shape[d:])
    if adjacent:
        return tuple(before) + bshape + tuple(after)
    return bshape + tuple(before) + tuple(after)


def check_index_put_shapes(self_shape, entries, values_shape):
    """Raise PyTorch's error unless ``values_shape`` broadcasts to the indexed result."""
    result = advanced_index_shape(self_shape, entries)
    n = len(values_shape)
    if n > len(result) or any(v != 1 and v != r for v, r in zip(values_shape, result[len(result) - n:])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_str(values_shape)} cannot be "
                           f"broadcast to indexing result of shape {_shape_str(result)}")


# -- scalars written into tensors ------------------------------------------------------------
_INT_RANGES = {"int8": (-2 ** 7, 2 ** 7 - 1), "int16": (-2 ** 15, 2 ** 15 - 1),
               "int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1), "uint8": (0, 255)}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}


def check_scalar_fits(value, dtype):
    """PyTorch's check when a Scalar is stored into a tensor (fill-like ops): no silent overflow."""
    if dtype.category == _dt.BOOL or isinstance(value, bool):
        return
    name = dtype.name
    if dtype.category == _dt.INTEGRAL:
        lo, hi = _INT_RANGES.get(name, (-math.inf, math.inf))
        if isinstance(value, int) and name == "uint8":
            lo = -255  # PyTorch lets negative ints wrap into unsigned types
        fits = lo <= value <= hi if not isinstance(value, float) or math.isfinite(value) else False
    else:
        top = _FLOAT_MAX.get(name)
        fits = top is None or not (isinstance(value, int) or math.isfinite(value)) or -top <= value <= top
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES.get(name, name)} without overflow")


def scalar_as_tensor(value, dtype, device):
    """A zero-dim tensor holding ``value`` converted to ``dtype`` as PyTorch converts Scalars."""
    if dtype is _dt.bool:
        value = bool(value)
    return scalar_tensor(value, dtype, device)


def _same_device(name, self, *others):
    for t in others:
        if t._device is not self._device:
            same_device(name, self, t)


# -- index_select -----------------------------------------------------------------------------
def _check_index_select(self, dim, index):
    dim = _wrap_dim(dim, len(self._shape))
    if len(index._shape) > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._dtype not in _INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    _same_device("index_select", self, index)
    if not self._shape and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
    if self._shape and self._shape[dim] == 0 and index.numel():
        raise RuntimeError("index_select(): self indexing axis dim should be positive")


index_select = defop("index_select(Tensor self, int dim, Tensor index) -> Tensor", check=_check_index_select)
attach("index_select", document(index_select, "The slices of ``self`` at ``index`` (a 1-D int tensor) along "
                                              "``dim``."))


@derivative("index_select")
def _(grad, self_shape, dim, index):
    if not self_shape:
        return grad, None
    d = _wrap_dim(dim, len(self_shape))
    # duplicate indices add up
    return index_put_(_zeros(self_shape, grad, index), [None] * d + [index.reshape(-1)], grad, True), None


# -- gather -------------------------------------------------------------------------------------
def _nonempty_shape(t):
    return t._shape or (1,)


def _check_gather(self, dim, index, sparse_grad=False):
    dim = _wrap_dim(dim, len(self._shape))
    if index._dtype not in _INDEX_DTYPES:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    _same_device("gather", self, index)
    if index.numel() == 0:
        return
    ss, si = _nonempty_shape(self), _nonempty_shape(index)
    if len(ss) != len(si):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d, (a, b) in enumerate(zip(si, ss)):
        if d != dim and a > b:
            raise RuntimeError(f"Size does not match at dimension {d} expected index {_shape_str(index._shape)}"
                               f" to be no larger than self {_shape_str(self._shape)} apart from dimension {dim}")


gather = defop("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
               check=_check_gather)
attach("gather", document(gather, "Values along ``dim`` at ``index``: ``out[i][j] = self[i][index[i][j]]`` "
                                  "for dim 1 (``sparse_grad`` is accepted and ignored: the gradient is dense)."))


@derivative("gather")
def _(grad, self_shape, dim, index):
    return scatter_add_(_zeros(self_shape, grad, index), dim, index, grad), None


# -- scatter, scatter_add -----------------------------------------------------------------------
def _check_scatter(self, dim, index, src=None):
    dim = _wrap_dim(dim, len(self._shape))
    if index._dtype not in _INDEX_DTYPES:
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if src is not None:
        if src._dtype is not self._dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        _same_device("scatter", self, index, src)
    else:
        _same_device("scatter", self, index)
    if index.numel() == 0:
        return
    ss, si = _nonempty_shape(self), _nonempty_shape(index)
    if len(ss) != len(si):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and len(_nonempty_shape(src)) != len(si):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    bad = any(d != dim and a > b for d, (a, b) in enumerate(zip(si, ss)))
    msg = (f"Expected index {_shape_str(index._shape)} to be no larger than self {_shape_str(self._shape)} "
           f"apart from dimension {dim}")
    if src is not None:
        bad = bad or any(a > b for a, b in zip(si, _nonempty_shape(src)))
        msg += f" and to be no larger size than src {_shape_str(src._shape)}"
    if bad:
        raise RuntimeError(msg)


def _check_scatter_value(self, dim, index, value):
    _check_scatter(self, dim, index)
    check_scalar_fits(value, self._dtype)


def _scatter_value_impl(self, dim, index, value):
    src = expand(scalar_as_tensor(value, self._dtype, self._device), index._shape)
    return scatter_(self, dim, index, src)


def _out_of_place(inplace):
    """Functional form of an in-place primitive: the primitive applied to a copy."""
    call = inplace._op.positional

    def impl(self, *args):
        return call(clone(self), *args)
    return impl


scatter_ = defop("scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
                 check=_check_scatter)
scatter_value_ = defop("scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)",
                       check=_check_scatter_value, composite=_scatter_value_impl)
scatter = defop("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
                check=_check_scatter, composite=_out_of_place(scatter_))
scatter_value = defop("scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
                      check=_check_scatter_value, composite=_out_of_place(scatter_value_))
scatter_add_ = defop("scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
                     check=_check_scatter)
scatter_add = defop("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
                    check=_check_scatter, composite=_out_of_place(scatter_add_))


def _scatter(inplace):
    src_op, value_op = (scatter_, scatter_value_) if inplace else (scatter, scatter_value)
    name = "scatter_" if inplace else "scatter"

    def fn(input, dim, index, src=None, *, value=None):
        if src is None:
            if value is None:
                raise TypeError(f"{name}(): expected a src tensor or a value")
            return value_op(input, dim, index, value)
        if value is not None:
            raise TypeError(f"{name}(): src and value cannot both be given")
        if isinstance(src, Tensor):
            return src_op(input, dim, index, src)
        return value_op(input, dim, index, src)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Write ``src`` (a tensor, or a number as ``value``) into {'self' if inplace else 'a copy'} at "
                  f"the positions ``index`` gives along ``dim``: ``out[i][index[i][j]] = src[i][j]`` for "
                  f"dim 1.")
    return fn


attach("scatter", _scatter(False))
attach("scatter_", _scatter(True))
attach("scatter_add", document(scatter_add, "A copy of ``self`` with ``src`` added at the positions ``index`` "
                                            "gives along ``dim``; duplicate indices add up."))
attach("scatter_add_", document(scatter_add_, "In place: ``src`` added at the positions ``index`` gives along "
                                              "``dim``; duplicate indices add up."))


def _grad_src(grad, dim, index, src):
    """Gradient for the ``src`` of scatter/scatter_add: ``grad`` at the scattered positions.

    Only the leading ``index.shape`` block of ``src`` is read; the rest gets zeros
    (padded with cat rather than written into a view, so it stays differentiable).
    """
    g = gather(grad, dim, index)
    shape = src._shape
    if len(g._shape) != len(shape):  # a zero-dim index or src counts as one element
        g = g.reshape((1,) * len(shape))
    for d, (n, m) in enumerate(zip(g._shape, shape)):
        if n != m:
            g = cat([g, _zeros(g._shape[:d] + (m - n,) + g._shape[d + 1:], g)], d)
    return g


@derivative("scatter_.src")
def _(grad, dim, index, src, needs_input_grad):
    # the written positions of self were overwritten
    return (scatter_value(grad, dim, index, 0) if needs_input_grad[0] else None, None,
            _grad_src(grad, dim, index, src) if needs_input_grad[2] else None)


@derivative("scatter_add_")
def _(grad, dim, index, src, needs_input_grad):
    return grad, None, _grad_src(grad, dim, index, src) if needs_input_grad[2] else None


# -- index.Tensor: advanced indexing -----------------------------------------------------------
def _check_index(self, indices):
    shape = self._shape
    dim = 0
    shapes = []
    bounds = []
    for t in indices:
        if t is None:
            dim += 1
            continue
        d = t._dtype
        if d in _MASK_DTYPES:
            if d is _dt.uint8:
                warnings.warn("indexing with dtype tensorplug.uint8 is now deprecated, please use a dtype "
                              "tensorplug.bool instead.", UserWarning, stacklevel=3)
            for j, n in enumerate(t._shape[:len(shape) - dim]):
                if n != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {list(t._shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {list(shape)} at index {dim + j}")
            dim += len(t._shape)
            shapes.append(None)
        elif d in _INDEX_DTYPES:
            if dim < len(shape):
                bounds.append((t, dim))
            dim += 1
            shapes.append(t._shape)
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if dim > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {dim})")
    if not shapes:
        raise IndexError("index(): expected at least one index tensor, got only None")
    if any(s is None for s in shapes):
        # masks become 1-D index tensors of their number of True elements
        shapes = [(int(np.count_nonzero(t._host("boolean-mask indexing"))),) if t is not None and t._dtype in _MASK_DTYPES else t._shape
                  for t in indices if t is not None]
    if len(shapes) > 1:
        try:
            broadcast_shapes(*shapes)
        except RuntimeError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                             + ", ".join(str(list(s)) for s in shapes)) from None
    for t, d in bounds:
        if t.numel():
            _check_bounds(t._check_values(), d, shape[d])


def _check_bounds(values, dim, size):
    lo, hi = values.min(), values.max()
    if lo < -size or hi >= size:
        bad = lo if lo < -size else hi
        raise IndexError(f"index {int(bad)} is out of bounds for dimension {dim} with size {size}")


index = defop("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", check=_check_index, tags=DYNAMIC_SHAPE)


def bool_masks(indices):
    """``indices`` with uint8 masks as bool, for backward: the forward call has already warned about them."""
    return [i.to(_dt.bool) if i is not None and i._dtype is _dt.uint8 else i for i in indices]


@derivative("index.Tensor")
def _(grad, self_shape, indices):
    indices = bool_masks(indices)
    # an element picked several times gets the sum of its gradients
    return index_put_(_zeros(self_shape, grad, *indices), indices, grad, True), None


# -- index_put ------------------------------------------------------------------------------------
def _check_index_put(self, indices, values, accumulate=False):
    if not isinstance(indices, (list, tuple)):
        raise TypeError(f"index_put_(): argument 'indices' (position 2) must be tuple of Tensors, "
                        f"not {type(indices).__name__}")
    n = len(self._shape)
    count, masks = 0, False
    for i, ix in enumerate(indices):
        if ix is None:
            count += 1
        elif not isinstance(ix, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got {type(ix).__name__}")
        elif ix._dtype is _dt.bool or ix._dtype is _dt.uint8:
            count += len(ix._shape) or 1
            masks = True
        elif ix._dtype in _INDEX_DTYPES:
            count += 1
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if count > n:
        raise IndexError(f"too many indices for tensor of dimension {n} (got {count})")
    if all(ix is None for ix in indices):
        raise IndexError("index_put_(): at least one of the indices must be a tensor")
    if values._dtype is not self._dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_pt_name(self._dtype)} for the destination and {_pt_name(values._dtype)} "
                           f"for the source.")
    _same_device("index_put_", self, values)
    entries, d = [], 0
    for ix in indices:
        if ix is None:
            entries.append(None)
            d += 1
        elif ix._dtype is _dt.bool or ix._dtype is _dt.uint8:
            if ix._dtype is _dt.uint8:
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                              "torch.bool instead.", UserWarning, stacklevel=3)
            for j, s in enumerate(ix._shape):
                if s != self._shape[d + j]:
                    raise IndexError(f"The shape of the mask {_shape_str(ix._shape)} at index {j} does not "
                                     f"match the shape of the indexed tensor {_shape_str(self._shape)} at "
                                     f"index {d + j}")
            d += len(ix._shape)
        else:
            if ix._device is not self._device and ix._device.type != "cpu":
                same_device("index_put_", self, ix)
            if self._shape[d] == 0 and ix.numel():
                raise IndexError("index is out of bounds for dimension with size 0")
            entries.append((ix._shape, 1))
            d += 1
    if not masks:
        check_index_put_shapes(self._shape, entries, values._shape)


index_put_ = defop("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False)"
                   " -> Tensor(a!)", check=_check_index_put)
index_put = defop("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
                  check=_check_index_put, composite=_out_of_place(index_put_))
attach("index_put", document(index_put, "A copy of ``self`` with ``self[indices] = values`` under advanced "
                                        "indexing (None keeps a dim, bool tensors are masks); with ``accumulate`` "
                                        "duplicate indices add up."))
attach("index_put_", document(index_put_, "In place: ``self[indices] = values`` under advanced indexing (None "
                                          "keeps a dim, bool tensors are masks); with ``accumulate`` duplicate "
                                          "indices add up."))


@derivative("index_put_")
def _(grad, indices, values, accumulate, needs_input_grad):
    indices = bool_masks(indices)
    g_self = g_values = None
    if needs_input_grad[0]:
        g_self = grad if accumulate else index_put(grad, indices, _zeros((), grad), False)
    if needs_input_grad[2]:
        g_values = sum_to(index(grad, indices), values._shape)
    return g_self, None, g_values


# -- masked_fill -----------------------------------------------------------------------------------
def _check_mask(self, mask, inplace):
    if mask._dtype is not _dt.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_dt.c_type_name(mask._dtype)}")
    _same_device("masked_fill_", self, mask)
    if mask._shape != self._shape:
        if inplace:
            shape = broadcast_shapes(self._shape, mask._shape)
            if shape != self._shape:
                raise RuntimeError(f"output with shape {_shape_str(self._shape)} doesn't match the broadcast "
                                   f"shape {_shape_str(shape)}")
        else:
            broadcast_shapes(mask._shape, self._shape)


def _check_value_tensor(value):
    if value._shape:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{len(value._shape)} dimension(s).")


def _check_masked_fill_(self, mask, value):
    _check_mask(self, mask, True)
    _check_value_tensor(value)


def _check_masked_fill_scalar_(self, mask, value):
    _check_mask(self, mask, True)
    check_scalar_fits(value, self._dtype)


def _check_masked_fill(self, mask, value):
    _check_mask(self, mask, False)
    _check_value_tensor(value)


def _check_masked_fill_scalar(self, mask, value):
    _check_mask(self, mask, False)
    check_scalar_fits(value, self._dtype)


def _masked_fill_scalar_impl(self, mask, value):
    return masked_fill_(self, mask, scalar_as_tensor(value, self._dtype, self._device))


def _broadcast_copy(inplace):
    """Functional masked_fill: self broadcast against the mask, copied, then filled in place."""
    call = inplace._op.positional

    def impl(self, mask, value):
        shape = broadcast_shapes(self._shape, mask._shape)
        return call(clone(self if shape == self._shape else expand(self, shape)), mask, value)
    return impl


masked_fill_ = defop("masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)",
                     check=_check_masked_fill_)
masked_fill_scalar_ = defop("masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
                            check=_check_masked_fill_scalar_, composite=_masked_fill_scalar_impl)
masked_fill = defop("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
                    check=_check_masked_fill, composite=_broadcast_copy(masked_fill_))
masked_fill_scalar = defop("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
                           check=_check_masked_fill_scalar, composite=_broadcast_copy(masked_fill_scalar_), tags=POINTWISE)


def _masked_fill(t_op, s_op, name):
    def fn(input, mask, value):
        if isinstance(value, Tensor):
            return t_op(input, mask, value)
        return s_op(input, mask, value)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Set the elements where the bool ``mask`` (broadcast) is True to ``value`` (a number or a "
                  f"0-dim tensor){' in place' if name.endswith('_') else ', in a copy'}.")
    return fn


attach("masked_fill", _masked_fill(masked_fill, masked_fill_scalar, "masked_fill"))
attach("masked_fill_", _masked_fill(masked_fill_, masked_fill_scalar_, "masked_fill_"))


@derivative("masked_fill_.Tensor")
def _(grad, mask, value, needs_input_grad):
    return (masked_fill_scalar(grad, mask, 0) if needs_input_grad[0] else None, None,
            where_scalar_other(mask, grad, 0).sum() if needs_input_grad[2] else None)


# tensorplug.* has the functional forms only (and index_put_), like torch.*
for _name in ("index_select", "gather", "scatter", "scatter_add", "index_put", "index_put_", "masked_fill"):
    public(_name, getattr(Tensor, _name))
