"""More tensor and shape ops: stacking, products of vectors, statistics of variables, flat indexing,
the ``*_scatter`` family, ``index_reduce`` and strided factories.

Every function here is a plain function over existing operators (``cat``, ``index_select``,
``index_put_``, ``scatter_reduce_``, ``copy_`` into a view of a clone, ``linalg.vector_norm``...), so
autograd and vmap come from those pieces and no operator or kernel of its own is registered:

* ``column_stack``, ``block_diag``, ``cartesian_prod``, ``combinations``, ``diagflat``;
* ``inner``, ``vdot``, ``msort``, ``dist``, ``renorm`` (+``renorm_``), ``cov``, ``corrcoef``;
* ``take``, ``put`` (+``put_``), ``unravel_index``, ``nonzero_static``, ``sum_to_size``,
  ``constant_pad_nd``, ``unsafe_chunk``, ``unsafe_split``;
* ``diagonal_scatter``, ``select_scatter``, ``slice_scatter``, ``as_strided_scatter``: a clone of the
  input with the view (``diagonal``, ``select``, ``slice``, ``as_strided``) overwritten by ``src``;
* ``index_reduce`` (+``index_reduce_``): ``scatter_reduce`` with the index spread along ``dim``;
* ``empty_strided``, ``empty_permuted``, ``Tensor.new_empty_strided``, ``scalar_tensor``,
  ``resolve_neg`` and the ``cfloat``/``cdouble`` conversions.
"""

from __future__ import annotations

import itertools

from ..dispatch.argcheck import bump_version
from .. import dtypes as _dt
from .._warn import warn_user
from ..tensor import Tensor, _wrap_dim
from ._lib import attach, public, PUBLIC as _P
from .factories import arange, empty, zeros, ones, full, tensor as _tensor
from .joining import cat, stack, hstack, split as _split, chunk as _chunk
from .indexing import index_select
from .memory import _to_copy
from .nn_ops import constant_pad as _constant_pad
from .sorting import sort as _sort
from .views import reshape, expand, narrow, select, slice as _slice, as_strided, diagonal, permute
from .out import with_out

_INDEX = (_dt.int64, _dt.int32)


def _name(d):
    return _dt.scalar_type_name(d)


def _shape_str(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _is_float(d):
    return d.is_floating_point or d.category == _dt.COMPLEX


# -- conversions and trivial ops ---------------------------------------------------------------------
def _cdouble(self, memory_format=None):
    """``self`` converted to complex128 (``self.to(torch.cdouble)``)."""
    return self.to(_dt.complex128)


def _cfloat(self, memory_format=None):
    """``self`` converted to complex64 (``self.to(torch.cfloat)``)."""
    return self.to(_dt.complex64)


def resolve_neg(input):
    """``input`` itself: tensorplug has no lazy negation bit, so every tensor is already resolved."""
    return input


_INT_RANGE = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-2 ** 15, 2 ** 15 - 1),
              "int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1)}


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """A 0-dim tensor holding the number ``s``, of the default float dtype unless ``dtype`` is given."""
    if isinstance(s, Tensor):
        raise TypeError("scalar_tensor(): argument 's' must be Number, not Tensor")
    d = _dt.get_default_dtype() if dtype is None else dtype
    if isinstance(s, complex) and d.category != _dt.COMPLEX:
        raise RuntimeError(f"value cannot be converted to type {_dt._C_TYPE_NAMES.get(d.name, d.name)} without "
                           f"overflow")
    if d.category == _dt.INTEGRAL and isinstance(s, (int, float)) and not isinstance(s, bool):
        lo, hi = _INT_RANGE[d.name]
        if d is _dt.uint8 and -hi <= s < 0:
            s = int(s) % 256  # PyTorch wraps a negative number into an unsigned type
        elif not lo <= s <= hi:
            raise RuntimeError(f"value cannot be converted to type {d.name}_t without overflow")
    t = full((), s, dtype=d, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


# -- stacking ----------------------------------------------------------------------------------------
def column_stack(tensors):
    """The tensors side by side as columns: 0-D and 1-D tensors become columns (``(n, 1)``), the others
    are concatenated along dim 1 (``hstack``)."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"column_stack(): argument 'tensors' must be tuple of Tensors, not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    cols = [reshape(t, (t.numel(), 1)) if len(t._shape) <= 1 else t for t in tensors]
    return hstack(cols)


def block_diag(*tensors):
    """The block-diagonal matrix of ``tensors`` (0-D: 1x1, 1-D: one row, 2-D as is), zero elsewhere; the
    dtype is the promotion of theirs."""
    for i, t in enumerate(tensors):
        if len(t._shape) > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{len(t._shape)} dimensions")
    if not tensors:
        return empty((1, 0), dtype=_dt.get_default_dtype())
    mats = [reshape(t, (1, 1)) if not t._shape else reshape(t, (1, t._shape[0])) if len(t._shape) == 1 else t
            for t in tensors]
    dtype = mats[0]._dtype
    for m in mats[1:]:
        dtype = _dt.promote_types(dtype, m._dtype)
    for m in mats[1:]:
        if m._device != mats[0]._device:
            raise RuntimeError("torch.block_diag: input tensors must all be on the same device")
    device = mats[0]._device
    mats = [m if m._dtype is dtype else _to_copy(m, dtype=dtype) for m in mats]
    cols = sum(m._shape[1] for m in mats)
    rows, c = [], 0
    for m in mats:  # each block row: zeros, the block, zeros (out of place, so vmap batches it)
        h, w = m._shape
        parts = [zeros((h, c), dtype=dtype, device=device), m, zeros((h, cols - c - w), dtype=dtype, device=device)]
        rows.append(cat(parts, 1))
        c += w
    return cat(rows, 0)


def _check_vector(t):
    if len(t._shape) != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_shape_str(t._shape)}")


def cartesian_prod(*tensors):
    """The Cartesian product of 1-D ``tensors``: one row per combination (the last tensor varies fastest);
    a single tensor is returned as it is."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = _P["meshgrid"](*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of the 1-D ``input`` (Python's
    ``itertools.combinations``, or ``combinations_with_replacement``), one per row."""
    _check_vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty((0,), dtype=input._dtype, device=input._device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = [i for combo in pick(range(input._shape[0]), r) for i in combo]
    if not idx:
        return empty((0, r), dtype=input._dtype, device=input._device)
    sel = index_select(input, 0, _tensor(idx, dtype=_dt.int64, device=input._device))
    return reshape(sel, (len(idx) // r, r))


def diagflat(input, offset=0):
    """The square matrix with the flattened ``input`` on diagonal ``offset``."""
    return _P["diag"](reshape(input, (-1,)), offset)


# -- products, norms, statistics ---------------------------------------------------------------------
def inner(input, other):
    """The inner product over the last dim (``tensordot`` of the last dims); a 0-D operand multiplies."""
    if not input._shape or not other._shape:
        return input * other
    if input._dtype is not other._dtype:
        raise RuntimeError("both inputs should have same dtype")
    if input._shape[-1] != other._shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{_shape_str(input._shape)} and {_shape_str(other._shape)}")
    if len(input._shape) == 1 and len(other._shape) == 1:
        return _P["dot"](input, other)  # as PyTorch, whose autocast leaves a vector product (dot) in float32
    return _P["tensordot"](input, other, ([len(input._shape) - 1], [len(other._shape) - 1]))


def vdot(input, other):
    """The dot product of two 1-D tensors, the first conjugated when complex."""
    a = input
    if a._dtype.category == _dt.COMPLEX and other._dtype is a._dtype:
        a = a.conj()
    return _P["dot"](a, other)


def msort(input):
    """``input`` sorted along dim 0 (the values of ``sort(input, 0)``)."""
    return _sort(input, 0)[0]


def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast), a 0-dim tensor."""
    for t in (input, other):
        if not _is_float(t._dtype):
            raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                               f"{_name(t._dtype)} instead.")
    return _vector_norm()(input - other, p)


def _vector_norm():
    from . import linalg_functions  # lazy: linalg_functions' import cost is paid by the linalg namespace
    return linalg_functions.vector_norm


def _check_renorm(input, p, dim, maxnorm):
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be a real number")
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    n = len(input._shape)
    if n <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {n} dimensions")
    return _wrap_dim(dim, n)


def renorm(input, p, dim, maxnorm):
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to norm
    ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``, as PyTorch)."""
    d = _check_renorm(input, p, dim, maxnorm)
    dims = tuple(i for i in range(len(input._shape)) if i != d)
    acc = _dt.float32 if input._dtype in (_dt.float16, _dt.bfloat16) else None
    norm = _vector_norm()(input, p, dims, True, dtype=acc)
    factor = _P["where"](norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    out = input * factor
    return out if out._dtype is input._dtype else _to_copy(out, dtype=input._dtype)


def _renorm_(self, p, dim, maxnorm):
    """In place: :func:`renorm`."""
    return self.copy_(renorm(self, p, dim, maxnorm))


def _check_weights(name, w, n, integral):
    if len(w._shape) > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{len(w._shape)} dimensions")
    if integral and (w._dtype.is_floating_point or w._dtype.category in (_dt.COMPLEX, _dt.BOOL)):
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{_name(w._dtype)} dtype")
    if not integral and not w._dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} with "
                           f"{_name(w._dtype)} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                           f"input but got {w.numel()} != {n}")
    if w.numel() and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (a 1-D input is one variable),
    observations in the columns, optionally weighted by integer frequencies ``fweights`` and float
    ``aweights``; ``correction`` is subtracted from the (weighted) number of observations."""
    if len(input._shape) > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{len(input._shape)} dimensions")
    if input._dtype is _dt.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = reshape(input, (1, -1)) if len(input._shape) < 2 else input
    n = x._shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = _tensor(n, dtype=_dt.int64, device=x._device)
    else:
        w_sum = w.sum()
        if not bool(w_sum != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is None or correction == 0:
        norm_factor = w_sum - correction
    elif aweights is None:
        norm_factor = w_sum - correction
    else:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    if bool(norm_factor <= 0):
        warn_user("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                  "observations.")
        norm_factor = norm_factor * 0
    xm = x - avg.unsqueeze(1)
    c = _P["mm"](xm, (xm if w is None else xm * w).t().conj())
    return _P["true_divide"](c, norm_factor).squeeze()


def corrcoef(input):
    """The Pearson correlation coefficients of the variables in the rows of ``input``: ``cov`` divided by
    the products of the standard deviations, clipped to [-1, 1]."""
    c = cov(input)
    if not c._shape:
        return c / c
    d = diagonal(c)
    std = (d.real if d._dtype.category == _dt.COMPLEX else d).sqrt()
    c = c / reshape(std, (-1, 1))
    c = c / reshape(std, (1, -1))
    if c._dtype.category == _dt.COMPLEX:
        return _P["complex"](c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# -- flat indexing -----------------------------------------------------------------------------------
def _check_flat_bounds(index, n):
    if not index.numel():
        return
    lo, hi = int(index.min()), int(index.max())
    for v in (lo, hi):
        if v >= n or v < -n:
            raise IndexError(f"out of range: tried to access index {v} on a tensor of {n} elements.")


def _wrapped(index, n):
    return _P["where"](index < 0, index + n, index) if index.numel() else index


def _take(input, index):
    """The elements of ``input`` (read as 1-D, row-major) at ``index`` (int64, negatives count from the
    end), in ``index``'s shape."""
    if index._dtype is not _dt.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_name(index._dtype)}")
    n = input.numel()
    if n == 0 and index.numel():
        raise IndexError("take(): tried to take from an empty tensor")
    _check_flat_bounds(index, n)
    flat = reshape(input, (-1,))
    picked = index_select(flat, 0, reshape(_wrapped(index, n), (-1,)))
    return reshape(picked, index._shape)


take = with_out("take", _take)


def _put_(self, index, source, accumulate=False):
    """In place: ``source``'s elements written (added with ``accumulate``) at the flat positions
    ``index`` of ``self`` (read as 1-D, row-major; negatives count from the end)."""
    if index._dtype is not _dt.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_name(index._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_name(self._dtype)} and source.dtype = {_name(source._dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = self.numel()
    if n == 0 and index.numel():
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    _check_flat_bounds(index, n)
    if not index.numel():
        bump_version(self)  # an in-place op writes self even with nothing to put, as in PyTorch
        return self
    idx = reshape(_wrapped(index, n), (-1,))
    values = reshape(source, (-1,))
    if not self._shape:
        reshape(self, (1,)).index_put_([idx], values, accumulate)
        return self
    coords = _coords(idx, self._shape)
    self.index_put_(list(coords), values, accumulate)
    return self


def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source``'s elements at the flat positions ``index`` (see ``put_``)."""
    return _put_(input.clone(), index, source, accumulate)


def _coords(flat, shape):
    """The per-dim coordinates of the flat (row-major, non-negative) indices ``flat`` in ``shape``."""
    out, rest = [], flat
    for s in reversed(shape[1:]):
        out.append(rest % s)
        rest = rest // s
    out.append(rest)
    return tuple(reversed(out))


def unravel_index(indices, shape):
    """The coordinates in ``shape`` of the flat (row-major) ``indices``, one tensor per dim; negative
    indices count from the end and indices wrap around ``numel`` as PyTorch's floor division and
    remainder make them."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices).__name__}")
    if indices._dtype.category != _dt.INTEGRAL:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices._dtype}")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    elif not isinstance(shape, (list, tuple)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape).__name__}")
    for s in shape:
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(s).__name__}")
    shape = tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if not shape:
        return ()
    coefs, acc = [], 1
    for s in reversed(shape):
        coefs.append(acc)
        acc *= s
    coefs.reverse()
    x = _to_copy(indices, dtype=_dt.int64) if indices._dtype is not _dt.int64 else indices
    x = x.unsqueeze(-1)
    res = (x // _tensor(coefs, dtype=_dt.int64, device=x._device)) % _tensor(list(shape), dtype=_dt.int64,
                                                                              device=x._device)
    return tuple(res.unbind(-1))


def nonzero_static(input, *, size, fill_value=-1):
    """The indices of the non-zero elements (``nonzero``), cut or padded with ``fill_value`` to exactly
    ``size`` rows."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    nz = _P["nonzero"](input)
    k, nd = nz._shape
    if k >= size:
        return narrow(nz, 0, 0, size).clone()
    pad = full((size - k, nd), fill_value, dtype=_dt.int64, device=input._device)
    return cat([nz, pad], 0)


def _sum_to_size(self, *size):
    """``self`` summed down to ``size`` (the reverse of ``expand``): dims ``size`` lacks or has as 1 are
    summed."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    size = tuple(size)
    if not size:
        return self.sum()
    shape = self._shape
    ok = len(size) <= len(shape) and all(s == t or s == 1 for s, t in zip(size[::-1], shape[::-1]))
    if not ok:
        raise RuntimeError(f"size {{{_shape_str(size)}}} is not expandable to size {{{_shape_str(shape)}}}.")
    lead = len(shape) - len(size)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(size) if s == 1 and shape[i + lead] != 1)
    if not dims:
        return self
    out = self.sum(dims, keepdim=True)
    return reshape(out, size) if out._shape != size else out


def constant_pad_nd(input, pad, value=0):
    """``input`` padded by ``value``: ``pad`` gives (before, after) pairs for the last dims, last dim first;
    negative amounts cut."""
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > len(input._shape):
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)}while the input has {len(input._shape)}dimensions.")
    out = _constant_pad(input, pad, value)
    return input.clone() if out is input else out


def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` (tensorplug tracks no view relation it could skip)."""
    return _chunk(input, chunks, dim)


def unsafe_split(tensor, split_size, dim=0):
    """``split`` (tensorplug tracks no view relation it could skip)."""
    return _split(tensor, split_size, dim)


# -- the *_scatter family --------------------------------------------------------------------------
# diagonal/select/slice_scatter are out of place: ``where`` of a mask of the view's positions between
# ``src`` spread to the input's shape and the input (so vmap batches them when only ``src`` is batched)
def _check_src(view_shape, src):
    if view_shape != src._shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_shape_str(src._shape)}, slice size = {_shape_str(view_shape)}")


def _along_dim(v, d, n):
    """The 1-D ``v`` shaped to broadcast along dim ``d`` of an ``n``-dim tensor."""
    return reshape(v, (1,) * d + (-1,) + (1,) * (n - d - 1))


def _cast_src(src, input):
    return src if src._dtype is input._dtype else _to_copy(src, dtype=input._dtype)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` whose diagonal (``offset``, ``dim1``, ``dim2``) is ``src``."""
    _check_src(diagonal(input, offset, dim1, dim2)._shape, src)
    n = len(input._shape)
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    n1, n2 = input._shape[d1], input._shape[d2]
    src = _cast_src(src, input)
    m = src._shape[-1] + abs(offset)
    full_ = _P["diag_embed"](src, offset, -2, -1)                      # (..., m, m), the diagonal in place
    full_ = constant_pad_nd(full_, (0, n2 - m, 0, n1 - m)) if (m, m) != (n1, n2) else full_  # cut or pad
    full_ = _P["movedim"](full_, (-2, -1), (d1, d2)) if (d1, d2) != (n - 2, n - 1) else full_
    rows = _along_dim(arange(n1, device=input._device), d1, n)
    cols = _along_dim(arange(n2, device=input._device), d2, n)
    return _P["where"]((cols - rows) == offset, full_, input)


def select_scatter(input, src, dim, index):
    """A copy of ``input`` whose slice ``index`` along ``dim`` is ``src``."""
    _check_src(select(input, dim, index)._shape, src)
    n = len(input._shape)
    d = _wrap_dim(dim, n)
    size = input._shape[d]
    i = index + size if index < 0 else index
    mask = _along_dim(arange(size, device=input._device) == i, d, n)
    return _P["where"](mask, _cast_src(src, input).unsqueeze(d), input)


def _slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` whose slice ``start:end:step`` along ``dim`` is ``src``."""
    view = _slice(input, dim, start, end, step)
    _check_src(view._shape, src)
    n = len(input._shape)
    d = _wrap_dim(dim, n)
    k = view._shape[d]
    if k == 0 or src.numel() == 0:
        return input.clone()
    size = input._shape[d]
    lo = 0 if start is None else (max(start + size, 0) if start < 0 else min(start, size))
    pos = arange(size, device=input._device)
    rel = pos - lo
    mask = (rel >= 0) & (rel % step == 0) & (rel // step < k)
    which = (rel // step).clamp(0, k - 1)
    spread = index_select(_cast_src(src, input), d, which)
    return _P["where"](_along_dim(mask, d, n), spread, input)


slice_scatter = with_out("slice_scatter", _slice_scatter)


def _dense_like(input):
    """A copy of ``input`` laid out in memory as ``input`` is (the order of its strides), dense."""
    st = input.stride()
    n = len(st)
    if n < 2 or input.is_contiguous():
        return input.clone()
    order = sorted(range(n), key=lambda i: (-st[i], i))
    inv = [order.index(i) for i in range(n)]
    return permute(permute(input, order).contiguous(), inv) if order != list(range(n)) else input.clone()


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` (its memory layout kept) whose elements under ``as_strided(size, stride,
    storage_offset)`` are ``src``."""
    out = _dense_like(input)
    if out._data is input._data:
        out = input.clone()
    view = as_strided(out, tuple(size), tuple(stride), storage_offset)
    if view._shape != src._shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_shape_str(src._shape)}, slice size = {_shape_str(view._shape)}")
    view.copy_(src)
    return out


# -- index_reduce -------------------------------------------------------------------------------------
_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce_args(self, dim, index, source, reduce):
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
                           f"{reduce}.")
    d = _wrap_dim(dim, len(self._shape))
    if len(index._shape) > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {len(index._shape)} "
                         f"with type: {_name(index._dtype)} and size: {_shape_str(index._shape)}")
    if index._dtype not in _INDEX:
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {_name(index._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"index_reduce_(): self ({_name(self._dtype)}) and source ({_name(source._dtype)}) "
                           f"must have the same scalar type")
    target = reshape(self, (1,)) if not self._shape else self
    src = reshape(source, (1,)) if not source._shape else source
    n = index.numel()
    src_n = src._shape[d] if len(src._shape) > d else 1
    if n != src_n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to source.size(dim): "
                           f"({src_n}), for dim: {dim}")
    want = target._shape[:d] + (n,) + target._shape[d + 1:]
    if src._shape != want:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {_shape_str(self._shape)} source.shape = {_shape_str(source._shape)}")
    if n:
        lo, hi = int(index.min()), int(index.max())
        if lo < 0 or hi >= target._shape[d]:
            raise IndexError("index out of range in self")
    idx = reshape(index, (1,) * d + (n,) + (1,) * (len(src._shape) - d - 1))
    if idx._dtype is not _dt.int64:
        idx = _to_copy(idx, dtype=_dt.int64)
    return target, d, expand(idx, src._shape), src


def _check_complex_reduce(dtype, reduce, include_self):
    """PyTorch's CPU kernels: ``include_self=False`` is not for bool or complex tensors, and complex ones
    reduce by ``prod`` and ``mean`` only."""
    if dtype is not _dt.bool and dtype.category != _dt.COMPLEX:
        return
    if not include_self:
        kernel = "index_reduce_func_exclude_input_init"
    elif dtype is _dt.bool or reduce in ("prod", "mean"):
        return
    else:
        kernel = "maximum_cpu" if reduce == "amax" else "minimum_cpu"
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{_name(dtype)}'")


def _complex_mean(target, d, idx, src, include_self):
    """``mean`` of complex values: a ``sum`` reduction over the counts of the reduced elements."""
    real = _dt.float32 if target._dtype is _dt.complex64 else _dt.float64
    count = zeros(target._shape, dtype=real, device=target._device).scatter_add(
        d, idx, ones(src._shape, dtype=real, device=src._device))
    if include_self:
        count = count + 1
    total = target.scatter_reduce(d, idx, src, "sum", include_self=include_self)
    return _P["where"](count > 0, total / count.clamp(min=1), target)


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """In place: ``source``'s slices reduced (``prod``, ``mean``, ``amax``, ``amin``) into the slices of
    ``self`` at ``index`` along ``dim``; ``include_self`` says whether ``self``'s values take part."""
    target, d, idx, src = _index_reduce_args(self, dim, index, source, reduce)
    _check_complex_reduce(self._dtype, reduce, include_self)
    if reduce == "mean" and self._dtype.category == _dt.COMPLEX:
        target.copy_(_complex_mean(target, d, idx, src, include_self))
        return self
    target.scatter_reduce_(d, idx, src, reduce, include_self=include_self)
    return self


def _index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """A copy of ``input`` with ``source``'s slices reduced into those at ``index`` along ``dim`` (see
    ``index_reduce_``)."""
    target, d, idx, src = _index_reduce_args(input, dim, index, source, reduce)
    _check_complex_reduce(input._dtype, reduce, include_self)
    if reduce == "mean" and input._dtype.category == _dt.COMPLEX:
        out = _complex_mean(target, d, idx, src, include_self)
    else:
        out = target.scatter_reduce(d, idx, src, reduce, include_self=include_self)
    return reshape(out, input._shape) if out._shape != input._shape else out


index_reduce = with_out("index_reduce", _index_reduce)


# -- strided factories -------------------------------------------------------------------------------
def _strided(size, stride, dtype, device):
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {_shape_str(size)}")
    for s in stride:
        if s < 0:
            raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                               f"{_shape_str(stride)}")
    n = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    buf = empty((n,), dtype=dtype, device=device)
    return as_strided(buf, size, stride, 0)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """An uninitialized tensor of ``size`` whose elements lie at ``stride`` (elements) in its memory."""
    t = _strided(size, stride, _dt.get_default_dtype() if dtype is None else dtype, device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, pin_memory=False,
                   requires_grad=False):
    """An uninitialized tensor of ``size`` laid out in memory in the dim order ``physical_layout``
    (outermost first): ``empty([size[p] for p in physical_layout]).permute(inverse)``."""
    size, order = tuple(size), tuple(physical_layout)
    n = len(size)
    if len(order) != n:
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout")
    seen = set()
    for p in order:
        try:
            q = _wrap_dim(p, n)
        except IndexError as e:
            raise RuntimeError(str(e)) from None
        if q in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(q)
    order = tuple(p % n for p in order)
    buf = empty(tuple(size[p] for p in order), dtype=_dt.get_default_dtype() if dtype is None else dtype, device=device)
    inv = [order.index(i) for i in range(n)]
    t = permute(buf, inv) if n else buf
    if requires_grad:
        t.requires_grad_(True)
    return t


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                       requires_grad=False):
    """An uninitialized tensor of ``size`` and ``stride`` with ``self``'s dtype and device (unless given)."""
    t = _strided(size, stride, self._dtype if dtype is None else dtype, self._device if device is None else device)
    if requires_grad:
        t.requires_grad_(True)
    return t


# -- resize_, resize_as_ -------------------------------------------------------------------------------
def _contiguous_strides(size):
    out, acc = [], 1
    for s in reversed(size):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))


def _resize_(self, *size, memory_format=None):
    """In place: ``self`` made a contiguous tensor of ``size`` over its memory from its storage offset on,
    the memory grown (old contents kept) when it is too small; new elements are uninitialized."""
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    size = tuple(size)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {_shape_str(size)}")
    if size == self._shape:
        return self
    n = 1
    for s in size:
        n *= s
    item = self._dtype.itemsize
    off = self.storage_offset()
    cap = self.untyped_storage().nbytes() // item
    base = self.detach()
    strides = _contiguous_strides(size)
    if off + n > cap:
        grown = empty((off + n,), dtype=self._dtype, device=self._device)
        if cap:
            narrow(grown, 0, 0, cap).copy_(as_strided(base, (cap,), (1,), 0))
        base = grown
    self.data = as_strided(base, size, strides, off)
    return self


def _resize_as_(self, the_template, *, memory_format=None):
    """In place: :meth:`resize_` to ``the_template``'s shape."""
    return _resize_(self, the_template._shape)


# -- Tensor methods and tensorplug.* functions -------------------------------------------------------
attach("cdouble", _cdouble)
attach("cfloat", _cfloat)
attach("put_", _put_)
attach("put", put)
attach("renorm_", _renorm_)
attach("index_reduce_", _index_reduce_)
attach("index_reduce", _index_reduce)
attach("sum_to_size", _sum_to_size)
attach("new_empty_strided", _new_empty_strided)
attach("take", _take)
attach("slice_scatter", _slice_scatter)
attach("resize_", _resize_)
attach("resize_as_", _resize_as_)
public("resize_as_", _resize_as_)
for _name_, _fn in {"resolve_neg": resolve_neg, "diagflat": diagflat, "inner": inner, "vdot": vdot,
                    "msort": msort, "dist": dist, "renorm": renorm, "cov": cov, "corrcoef": corrcoef,
                    "nonzero_static": nonzero_static, "unsafe_chunk": unsafe_chunk, "unsafe_split": unsafe_split,
                    "diagonal_scatter": diagonal_scatter, "select_scatter": select_scatter,
                    "as_strided_scatter": as_strided_scatter}.items():
    attach(_name_, _fn)
    public(_name_, _fn)
for _name_ in ("inner", "vdot", "msort", "renorm", "column_stack"):  # PyTorch's functions with out=
    public(_name_, with_out(_name_, globals()[_name_]))
for _name_, _fn in {"scalar_tensor": scalar_tensor, "block_diag": block_diag,
                    "cartesian_prod": cartesian_prod, "combinations": combinations, "take": take, "put": put,
                    "unravel_index": unravel_index, "constant_pad_nd": constant_pad_nd,
                    "slice_scatter": slice_scatter, "index_reduce": index_reduce, "empty_strided": empty_strided,
                    "empty_permuted": empty_permuted}.items():
    public(_name_, _fn)
