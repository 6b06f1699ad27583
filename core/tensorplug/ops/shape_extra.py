"""More shape ops: repeating, broadcasting, splitting, diagonals, rotations, grids and fills.

``repeat``, ``tile``, ``repeat_interleave`` (int repeats), ``broadcast_to``,
``broadcast_tensors``, ``diff``, ``diag``, ``diag_embed``, ``trace``,
``take_along_dim``, ``tensor_split`` (and ``hsplit``/``vsplit``/``dsplit``),
``ravel``, ``rot90``, ``fliplr``/``flipud``, ``meshgrid``, ``fill`` and the
``new_*`` factories are CompositeImplicitAutograd: they decompose into views
(``expand``, ``reshape``, ``narrow``, ``permute``), ``cat``, ``where``, ``flip``,
``gather`` and ``index_select``, so autograd and vmap come from those pieces.
``broadcast_to``, ``ravel`` of a contiguous tensor, and the pieces of
``tensor_split`` are views. Thin ones (``broadcast_to``, ``ravel``, ``fliplr``/``flipud``,
``rot90``, ``meshgrid``, ``tile``) are plain functions over those ops rather than operators of their
own: each operator costs import time. The one primitive is ``repeat_interleave.Tensor``
(the indices ``repeats`` gives, an output shape read from the data), which
``repeat_interleave`` with a tensor of repeats feeds to ``index_select``.
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..tensor import Tensor, _wrap_dim
from ._common import document as _document, dims_arg as _dims
from ._lib import DYNAMIC_SHAPE, defop, attach, public
from .comparison import where_fn as _where, with_zero_grad
from .factories import arange, zeros, ones, full, empty, tensor as _tensor
from .indexing import index_select, gather
from .joining import cat
from .memory import clone, contiguous, _to_copy
from .pointwise import zero_of as _zero_of
from .promotion import broadcast_shapes
from .shape import flip
from .views import expand, reshape, narrow, unsqueeze, transpose, diagonal, movedim

_INDEX = (_dt.int64, _dt.int32)


def _shape_str(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _sizes(args, name):
    """``*sizes`` of a method (``x.repeat(2, 3)`` or ``x.repeat((2, 3))``) as a tuple."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    for a in args:
        if not isinstance(a, int) or isinstance(a, bool):
            raise TypeError(f"{name}(): argument 'repeats' must be tuple of ints, but found element of type "
                            f"{type(a).__name__}")
    return tuple(args)


# -- repeat, tile -----------------------------------------------------------------------------------
def _check_repeat(self, repeats):
    if len(repeats) < len(self._shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                           "of tensor")
    shape = (1,) * (len(repeats) - len(self._shape)) + self._shape
    out = [r * s for r, s in zip(repeats, shape)]
    for n in out:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {_shape_str(out)}")


def _repeat(self, repeats):
    shape = (1,) * (len(repeats) - len(self._shape)) + self._shape
    out = tuple(r * s for r, s in zip(repeats, shape))
    if all(r == 1 for r in repeats):
        return clone(reshape(self, out))
    pairs = [n for s in shape for n in (1, s)]
    wide = [n for r, s in zip(repeats, shape) for n in (r, s)]
    return reshape(expand(reshape(self, pairs), wide), out)


repeat = _document(defop("repeat(Tensor self, SymInt[] repeats) -> Tensor", check=_check_repeat, composite=_repeat),
                   "``self`` repeated ``repeats[d]`` times along each dim (leading new dims for extra repeats).")


def _repeat_method(self, *repeats):
    return repeat(self, _sizes(repeats, "repeat"))


_repeat_method.__doc__ = "``x.repeat(2, 3)`` or ``x.repeat((2, 3))``: " + repeat.__doc__


def tile(input, dims):
    """``input`` repeated ``dims[d]`` times along each dim; fewer ``dims`` than dims of ``input`` are padded
    with leading ones (``repeat`` needs as many as the tensor has)."""
    dims = _dims(dims)
    return repeat(input, (1,) * (len(input._shape) - len(dims)) + tuple(dims))


def _tile_method(self, *dims):
    return tile(self, _sizes(dims, "tile"))


_tile_method.__doc__ = tile.__doc__


# -- repeat_interleave --------------------------------------------------------------------------------
def _check_ri_tensor(repeats, output_size=None):
    if repeats._dtype not in _INDEX:
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_dt.scalar_type_name(repeats._dtype)}'")
    if len(repeats._shape) != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")


repeat_interleave_index = _document(
    defop("repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor",
          check=_check_ri_tensor, tags=DYNAMIC_SHAPE),
    "``[0] * repeats[0] + [1] * repeats[1] + ...``: the indices that repeat element i ``repeats[i]`` times.")


def _flat_dim(self, dim):
    if dim is None:
        return reshape(self, (-1,)), 0
    return self, _wrap_dim(dim, len(self._shape))


def _check_ri_int(self, repeats, dim=None, output_size=None):
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    x, d = (reshape(self, (-1,)), 0) if dim is None else (self, _wrap_dim(dim, len(self._shape)))
    if output_size is not None:
        expected = (x._shape[d] if x._shape else 1) * repeats
        if output_size != expected:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {expected} but got "
                               f"{output_size}")


def _ri_int(self, repeats, dim=None, output_size=None):
    x, d = _flat_dim(self, dim)
    if not x._shape:
        x = reshape(x, (1,))
    shape = x._shape
    y = expand(unsqueeze(x, d + 1), shape[:d + 1] + (repeats,) + shape[d + 1:])
    return reshape(y, shape[:d] + (shape[d] * repeats,) + shape[d + 1:])


def _check_ri_self_tensor(self, repeats, dim=None, output_size=None):
    if len(repeats._shape) > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats._dtype not in _INDEX:
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_dt.scalar_type_name(repeats._dtype)}'")
    n = (self.numel() if dim is None else
         (self._shape[_wrap_dim(dim, len(self._shape))] if self._shape else 1))
    if repeats.numel() != 1 and repeats.numel() != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats.numel()} and input.size({0 if dim is None else dim}) = {n}")


def _ri_self_tensor(self, repeats, dim=None, output_size=None):
    x, d = _flat_dim(self, dim)
    if not x._shape:
        x = reshape(x, (1,))
    n = x._shape[d]
    if repeats.numel() == 1 and n != 1:
        repeats = expand(reshape(repeats, (1,)), (n,))
    return index_select(x, d, repeat_interleave_index(reshape(repeats, (-1,)), output_size=output_size))


repeat_interleave_int = defop("repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, "
                              "SymInt? output_size=None) -> Tensor", check=_check_ri_int, composite=_ri_int)
repeat_interleave_tensor = defop("repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, "
                                 "SymInt? output_size=None) -> Tensor", check=_check_ri_self_tensor,
                                 composite=_ri_self_tensor)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element of ``input`` repeated ``repeats`` times (an int, or a tensor of one count per element)
    along ``dim`` (over the flattened input when ``dim`` is None). With a tensor as the only argument:
    the indices ``repeats_interleave(arange(n), that tensor)`` gives."""
    if repeats is None:
        if dim is not None:
            raise TypeError("repeat_interleave(): missing the argument 'repeats'")
        return repeat_interleave_index(input, output_size=output_size)
    if isinstance(repeats, Tensor):
        return repeat_interleave_tensor(input, repeats, dim, output_size=output_size)
    return repeat_interleave_int(input, repeats, dim, output_size=output_size)


# -- broadcast_to, broadcast_tensors ------------------------------------------------------------------
def broadcast_to(input, size):
    """A view of ``input`` expanded to ``size`` (-1 keeps a dim), as broadcasting would (``expand``)."""
    return expand(input, _dims(size))


def _broadcast_tensors(tensors):
    shape = broadcast_shapes(*[t._shape for t in tensors])
    return [t if t._shape == shape else expand(t, shape) for t in tensors]


def broadcast_tensors(*tensors):
    """Views of ``tensors`` expanded to their common broadcast shape, as a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return tuple(_broadcast_tensors(list(tensors)))


# -- diff -----------------------------------------------------------------------------------------------
def _check_diff(self, n=1, dim=-1, prepend=None, append=None):
    if not self._shape:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, len(self._shape))
    for t in (prepend, append):
        if t is None:
            continue
        if len(t._shape) != len(self._shape):
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for i, (a, b) in enumerate(zip(self._shape, t._shape)):
            if i != d and a != b:
                raise RuntimeError(f"diff expects the shape of tensor to prepend or append to match that of input "
                                   f"except along the differencing dimension; input.size({i}) = {a}, but got "
                                   f"tensor.size({i}) = {b}")


def _diff(self, n=1, dim=-1, prepend=None, append=None):
    d = _wrap_dim(dim, len(self._shape))
    parts = [t for t in (prepend, self, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else self
    if n == 0:
        return clone(x)
    for _ in range(n):
        size = x._shape[d]
        if size == 0:
            break
        hi, lo = narrow(x, d, 1, size - 1), narrow(x, d, 0, size - 1)
        x = (hi != lo) if x._dtype is _dt.bool else hi - lo
    return x


diff = _document(defop("diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor",
                       check=_check_diff, composite=_diff),
                 "The ``n``-th forward difference along ``dim`` (``x[i+1] - x[i]``; ``!=`` for bool), after "
                 "``prepend`` and ``append`` are concatenated to ``self`` along ``dim``.")


# -- diag_embed, diag, trace -------------------------------------------------------------------------
def _check_diag_embed(self, offset=0, dim1=-2, dim2=-1):
    n = len(self._shape) + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")


def _diag_embed(self, offset=0, dim1=-2, dim2=-1):
    x = reshape(self, (1,)) if not self._shape else self
    k = abs(offset)
    m = x._shape[-1] + k
    if k:
        x = cat([x, zeros(x._shape[:-1] + (k,), dtype=x._dtype, device=x._device)], -1)
    lead = x._shape[:-1]
    cols = arange(m, device=x._device)
    rows = unsqueeze(cols, 1)
    if offset >= 0:
        values = expand(unsqueeze(x, -1), lead + (m, m))
        mask = (cols - rows) == offset
    else:
        values = expand(unsqueeze(x, -2), lead + (m, m))
        mask = (rows - cols) == k
    out = _where(mask, values, _zero_of(self))
    n = len(out._shape)
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if (d1, d2) != (n - 2, n - 1):
        out = contiguous(movedim(out, (n - 2, n - 1), (d1, d2)))
    return out


diag_embed = _document(defop("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor",
                             check=_check_diag_embed, composite=_diag_embed),
                       "A tensor whose diagonals (``offset``, in the dims ``dim1``/``dim2`` of the result) are the "
                       "last dim of ``self``; zero elsewhere.")


def _check_diag(self, diagonal=0):
    if len(self._shape) not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {len(self._shape)}D")


def _diag(self, diagonal_=0):
    if len(self._shape) == 1:
        return _diag_embed(self, diagonal_)
    return clone(diagonal(self, diagonal_))


diag = _document(defop("diag(Tensor self, int diagonal=0) -> Tensor", check=_check_diag, composite=_diag),
                 "For a 1-D ``self``, the square matrix with ``self`` on diagonal ``diagonal``; for a 2-D "
                 "``self``, a copy of that diagonal.")


def _check_trace(self):
    if len(self._shape) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {len(self._shape)}")
    if self._dtype is _dt.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")


trace = _document(defop("trace(Tensor self) -> Tensor", check=_check_trace,
                        composite=lambda self: diagonal(self).sum()),
                  "The sum of the main diagonal of a matrix (integers sum to int64).")


# -- take_along_dim -----------------------------------------------------------------------------------
def _check_take_along_dim(self, indices, dim=None):
    if indices._dtype is not _dt.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_dt.scalar_type_name(indices._dtype)}")
    if dim is not None:
        _wrap_dim(dim, len(self._shape))
        if len(self._shape) != len(indices._shape):
            raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of "
                               f"dimensions, but got {len(self._shape)} dimensions for input, and "
                               f"{len(indices._shape)} dimensions for indices")


def _take_along_dim(self, indices, dim=None):
    if dim is None:
        return gather(reshape(self, (-1,)), 0, reshape(indices, (-1,)))
    n = len(self._shape)
    if n == 0:
        return gather(self, 0, indices)
    d = _wrap_dim(dim, n)
    s, i = list(self._shape), list(indices._shape)
    s[d] = i[d] = 1
    b = list(broadcast_shapes(tuple(s), tuple(i)))
    bs, bi = list(b), list(b)
    bs[d], bi[d] = self._shape[d], indices._shape[d]
    src = self if tuple(bs) == self._shape else expand(self, bs)
    idx = indices if tuple(bi) == indices._shape else expand(indices, bi)
    return gather(src, d, idx)


take_along_dim = _document(defop("take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor",
                                 check=_check_take_along_dim, composite=_take_along_dim),
                           "``gather`` after broadcasting ``self`` and ``indices`` on every dim but ``dim`` (on the "
                           "flattened tensors when ``dim`` is None), like numpy's ``take_along_axis``.")


# -- tensor_split, hsplit, vsplit, dsplit ------------------------------------------------------------
def _check_split_common(self, dim):
    if not self._shape:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    _wrap_dim(dim, len(self._shape))


def _check_ts_sections(self, sections, dim=0):
    _check_split_common(self, dim)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")


def _pieces(self, d, bounds):
    """The views ``self[b[i-1]:b[i]]`` along ``d`` for the split indices ``bounds`` (Python slice rules)."""
    n = self._shape[d]

    def norm(b):
        return max(min(b + n if b < 0 else b, n), 0)
    out, start = [], 0
    for b in list(bounds) + [n]:
        lo, hi = norm(start), norm(b)
        out.append(narrow(self, d, lo, max(hi - lo, 0)))
        start = b
    return out


def _ts_sections(self, sections, dim=0):
    d = _wrap_dim(dim, len(self._shape))
    n = self._shape[d]
    size, extra = divmod(n, sections)
    bounds, pos = [], 0
    for k in range(sections - 1):
        pos += size + (1 if k < extra else 0)
        bounds.append(pos)
    return _pieces(self, d, bounds)


def _check_ts_indices(self, indices, dim=0):
    _check_split_common(self, dim)


def _ts_indices(self, indices, dim=0):
    return _pieces(self, _wrap_dim(dim, len(self._shape)), indices)


def _check_ts_tensor(self, tensor_indices_or_sections, dim=0):
    t = tensor_indices_or_sections
    if t._dtype is not _dt.int64:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{_dt.scalar_type_name(t._dtype)}")
    if len(t._shape) > 1:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {len(t._shape)} dims")
    _check_split_common(self, dim)
    if not t._shape:
        _check_ts_sections(self, int(t.item()), dim)


def _ts_tensor(self, tensor_indices_or_sections, dim=0):
    t = tensor_indices_or_sections
    if not t._shape:
        return _ts_sections(self, int(t.item()), dim)
    return _ts_indices(self, [int(v) for v in t.tolist()], dim)


ts_sections = defop("tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]",
                    check=_check_ts_sections, composite=_ts_sections)
ts_indices = defop("tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[]",
                   check=_check_ts_indices, composite=_ts_indices)
ts_tensor = defop("tensor_split.tensor_indices_or_sections(Tensor(a -> *) self, Tensor tensor_indices_or_sections, "
                  "int dim=0) -> Tensor(a)[]", check=_check_ts_tensor, composite=_ts_tensor)


def tensor_split(input, indices_or_sections, dim=0):
    """Views of ``input`` along ``dim``: ``sections`` (an int) pieces of nearly equal size (the first
    ``size % sections`` one longer), or the pieces between the split ``indices`` (a list or a 1-D int64
    tensor; a 0-dim tensor counts as sections). Returns a tuple."""
    s = indices_or_sections
    if isinstance(s, Tensor):
        return tuple(ts_tensor(input, s, dim))
    if isinstance(s, int) and not isinstance(s, bool):
        return tuple(ts_sections(input, s, dim))
    return tuple(ts_indices(input, _dims(s), dim))


def _hvd_split(name, min_dims, dim_of):
    def fn(input, indices_or_sections):
        n = len(input._shape)
        if n < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                               f"with {n} dimensions!")
        d = dim_of(n)
        s = indices_or_sections
        if not isinstance(s, (int, list, tuple, Tensor)) or isinstance(s, bool):
            t = type(s).__name__
            raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, {t}), but "
                            f"expected one of:\n * (Tensor input, int sections)\n      didn't match because some "
                            f"of the arguments have invalid types: (Tensor, !{t}!)\n * (Tensor input, tuple of ints "
                            f"indices)\n      didn't match because some of the arguments have invalid types: "
                            f"(Tensor, !{t}!)\n")
        if isinstance(s, int):
            size = input._shape[d]
            if s == 0 or size % s:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {size} is not divisible by the split_size {s}!")
        return tensor_split(input, s, d)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``tensor_split`` along dim {dim_of(3)}" + (" (dim 0 of a 1-D tensor)" if name == "hsplit" else "")
                  + ": an int must divide that dim's size. Returns a tuple of views.")
    return fn


hsplit = _hvd_split("hsplit", 1, lambda n: 1 if n > 1 else 0)
vsplit = _hvd_split("vsplit", 2, lambda n: 0)
dsplit = _hvd_split("dsplit", 3, lambda n: 2)


# -- ravel, rot90, fliplr, flipud ---------------------------------------------------------------------
def ravel(input):
    """The elements as a 1-D tensor: a view when ``input`` is contiguous, else a copy (``reshape(-1)``)."""
    return reshape(input, (-1,))


def _check_rot90(self, k=1, dims=(0, 1)):
    n = len(self._shape)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == n:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    _wrap_dim(dims[0], n)
    _wrap_dim(dims[1], n)


def _rot90(self, k=1, dims=(0, 1)):
    d0, d1 = dims
    k %= 4
    if k == 1:
        return transpose(flip(self, (d1,)), d0, d1)
    if k == 2:
        return flip(self, (d0, d1))
    if k == 3:
        return transpose(flip(self, (d0,)), d0, d1)
    return clone(self)


def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by 90 degrees ``k`` times in the plane of ``dims``, from the first towards the second
    (``flip`` and ``transpose``)."""
    dims = _dims(dims)
    _check_rot90(input, k, dims)
    return _rot90(input, k, dims)


def _check_fliplr(self):
    if len(self._shape) < 2:
        raise RuntimeError("Input must be >= 2-d.")


def _check_flipud(self):
    if len(self._shape) < 1:
        raise RuntimeError("Input must be >= 1-d.")


def fliplr(input):
    """A copy with dim 1 reversed (left and right swapped)."""
    _check_fliplr(input)
    return flip(input, (1,))


def flipud(input):
    """A copy with dim 0 reversed (up and down swapped)."""
    _check_flipud(input)
    return flip(input, (0,))


# -- meshgrid -----------------------------------------------------------------------------------------
def _check_meshgrid(tensors, indexing):
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if len(t._shape) > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                               f"shape {_shape_str(t._shape)}")
    for t in tensors[1:]:
        if t._dtype is not tensors[0]._dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t._device is not tensors[0]._device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")


def _meshgrid(tensors, indexing):
    n = len(tensors)
    order = list(range(n))
    if indexing == "xy" and n >= 2:
        order[0], order[1] = 1, 0
    sizes = [t.numel() for t in tensors]
    shape = tuple(sizes[o] for o in order)
    out = []
    for i, t in enumerate(tensors):
        pos = order.index(i)
        v = reshape(t, (1,) * pos + (sizes[i],) + (1,) * (n - pos - 1))
        out.append(expand(v, shape))
    return out


MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.")


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-D ``tensors`` (views): with ``indexing='ij'`` output i varies along dim i; with
    ``'xy'`` the first two dims are swapped (Cartesian). Without ``indexing`` it is ``'ij'``, with a warning
    as in PyTorch."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    if indexing is None:
        warnings.warn(MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    tensors = list(tensors)
    _check_meshgrid(tensors, indexing)
    return tuple(_meshgrid(tensors, indexing))


# -- tril_indices, triu_indices -----------------------------------------------------------------------
def _tri_indices(name, upper):
    def fn(row, col, offset=0, *, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=False):
        dtype = _dt.int64 if dtype is None else dtype
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        if dtype not in _INDEX:
            raise NotImplementedError(f"\"{name}\" not implemented for '{_dt.scalar_type_name(dtype)}'")
        rows, cols = [], []
        for i in range(row):
            if upper:
                js = range(max(i + offset, 0), col)
            else:
                js = range(0, max(min(i + offset + 1, col), 0))
            rows.extend([i] * len(js))
            cols.extend(js)
        out = _tensor([rows, cols], dtype=dtype, device=device) if rows else empty((2, 0), dtype=dtype, device=device)
        return out
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The (2, N) row and column indices of the {'upper' if upper else 'lower'} triangle of a "
                  f"``row`` x ``col`` matrix (``offset`` shifts the diagonal), in row-major order.")
    return fn


tril_indices = _tri_indices("tril_indices", False)
triu_indices = _tri_indices("triu_indices", True)


# -- fill, new_* ----------------------------------------------------------------------------------------
def _check_fill(self, value):
    if value._shape:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{len(value._shape)} dimensions.")


def _fill_tensor(self, value):
    v = value if value._dtype is self._dtype else _to_copy(value, dtype=self._dtype)
    return clone(expand(v, self._shape))


fill_tensor = defop("fill.Tensor(Tensor self, Tensor value) -> Tensor", check=_check_fill, composite=_fill_tensor)


def fill(input, value):
    """A new tensor of ``input``'s shape, dtype and device filled with ``value`` (a number or a 0-dim tensor,
    which gets the gradient)."""
    out = (fill_tensor(input, value) if isinstance(value, Tensor)
           else full(input._shape, value, dtype=input._dtype, device=input._device))
    return with_zero_grad(out, input)  # PyTorch's result is differentiable in input too, with a zero gradient


def _new(name, make):
    def method(self, *args, dtype=None, device=None, requires_grad=False, **kwargs):
        t = make(self, args, dtype if dtype is not None else self._dtype,
                 device if device is not None else self._device, kwargs)
        if requires_grad:
            t.requires_grad_(True)
        return t
    method.__name__ = method.__qualname__ = name
    return method


def _size_of(args, name):
    if "size" in args[1]:
        if args[0]:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        return tuple(args[1].pop("size"))
    return _sizes(args[0], name) if args[0] else ()


def _no_kwargs(kwargs, name):
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")


def _new_zeros(self, args, dtype, device, kwargs):
    size = _size_of((args, kwargs), "new_zeros")
    _no_kwargs(kwargs, "new_zeros")
    return zeros(size, dtype=dtype, device=device)


def _new_ones(self, args, dtype, device, kwargs):
    size = _size_of((args, kwargs), "new_ones")
    _no_kwargs(kwargs, "new_ones")
    return ones(size, dtype=dtype, device=device)


def _new_empty(self, args, dtype, device, kwargs):
    size = _size_of((args, kwargs), "new_empty")
    _no_kwargs(kwargs, "new_empty")
    return empty(size, dtype=dtype, device=device)


def _new_full(self, args, dtype, device, kwargs):
    if len(args) != 2:
        raise TypeError("new_full() missing required arguments: 'size' and 'fill_value'")
    _no_kwargs(kwargs, "new_full")
    return full(tuple(args[0]), args[1], dtype=dtype, device=device)


def _new_tensor(self, args, dtype, device, kwargs):
    if len(args) != 1:
        raise TypeError("new_tensor() takes one positional argument: 'data'")
    _no_kwargs(kwargs, "new_tensor")
    data = args[0]
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                      UserWarning, stacklevel=3)
        return _to_copy(data.detach(), dtype=dtype, device=device).clone()
    return _tensor(data, dtype=dtype, device=device)


new_zeros = _new("new_zeros", _new_zeros)
new_ones = _new("new_ones", _new_ones)
new_empty = _new("new_empty", _new_empty)
new_full = _new("new_full", _new_full)
new_tensor = _new("new_tensor", _new_tensor)
new_zeros.__doc__ = "A zero-filled tensor of ``size`` with ``self``'s dtype and device (unless given)."
new_ones.__doc__ = "A tensor of ones of ``size`` with ``self``'s dtype and device (unless given)."
new_empty.__doc__ = "An uninitialized tensor of ``size`` with ``self``'s dtype and device (unless given)."
new_full.__doc__ = "``new_full(size, fill_value)``: a tensor of ``size`` filled with ``fill_value``, with " \
                   "``self``'s dtype and device (unless given)."
new_tensor.__doc__ = "A tensor of ``data`` (copied) with ``self``'s dtype and device (unless given)."


def _split_method(fn):
    def method(self, *args):
        if len(args) > 1 and all(isinstance(a, int) for a in args):
            args = (list(args),)
        return fn(self, *args)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


# -- Tensor methods and tensorplug.* functions -------------------------------------------------------
attach("repeat", _repeat_method)
attach("tile", _tile_method)
public("tile", tile)
for _name, _fn in {"repeat_interleave": repeat_interleave, "broadcast_to": broadcast_to, "diff": diff,
                   "diag": diag, "diag_embed": diag_embed, "trace": trace, "take_along_dim": take_along_dim,
                   "tensor_split": tensor_split, "ravel": ravel, "rot90": rot90, "fliplr": fliplr,
                   "flipud": flipud}.items():
    attach(_name, _fn)
    public(_name, _fn)
for _name, _fn in {"hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit}.items():
    attach(_name, _split_method(_fn))
    public(_name, _fn)
for _name, _fn in {"broadcast_tensors": broadcast_tensors, "meshgrid": meshgrid, "tril_indices": tril_indices,
                   "triu_indices": triu_indices, "fill": fill}.items():
    public(_name, _fn)
for _name, _fn in {"new_zeros": new_zeros, "new_ones": new_ones, "new_empty": new_empty, "new_full": new_full,
                   "new_tensor": new_tensor}.items():
    attach(_name, _fn)
public("zero_", Tensor.zero_)
