"""View operators: metadata changes over shared storage.

Every view op is CompositeExplicitAutograd over one backend primitive,
``as_strided``: the core computes the new shape, strides and offset (and
raises PyTorch's errors), the backend only builds a native view. A backend may
still register faster kernels for individual view ops.
"""

from __future__ import annotations

from ..autograd.views import _buffer, _region, _geometry
from ..tensor import _wrap_dim, make_tensor
from ._lib import defop, public
from .factories import arange, zeros_for
from .memory import clone


def _infer_size(size, numel):
    """``size`` with its one ``-1`` resolved for ``numel`` elements (PyTorch's infer_size)."""
    infer = None
    known = 1
    for i, s in enumerate(size):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(size)}")
        else:
            known *= s
    if infer is None:
        if known != numel:
            raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
        return tuple(size)
    if known == 0:
        if numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(size)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
        raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
    if numel % known:
        raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
    out = list(size)
    out[infer] = numel // known
    return tuple(out)


def _view_strides(oldshape, oldstride, newshape):
    """Strides for viewing (oldshape, oldstride) as newshape, or None (PyTorch's computeStride)."""
    if not oldshape:
        return (1,) * len(newshape)
    numel = 1
    for s in oldshape:
        numel *= s
    if numel == 0:
        if oldshape == newshape:
            return tuple(oldstride)
        out, st = [0] * len(newshape), 1
        for i in range(len(newshape) - 1, -1, -1):
            out[i] = st
            st *= max(newshape[i], 1)
        return tuple(out)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1] if oldstride else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# -- the primitive ------------------------------------------------------------
def _check_as_strided(self, size, stride, storage_offset=None):
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    for n in size:
        if n < 0:
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                               f"strides={list(stride)}")
    for s in stride:
        if s < 0:
            raise RuntimeError("as_strided: Negative strides are not supported at the moment, "
                               f"got strides: {list(stride)}")
    if storage_offset is not None and storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    # the last element the view can reach must lie inside the storage (an empty view reaches none)
    reach = 1
    for n, s in zip(size, stride):
        if not n:
            return
        reach += (n - 1) * s
    offset = self.storage_offset() if storage_offset is None else storage_offset
    isz = self._dtype.itemsize
    have = self._get_storage().nbytes()
    if (offset + reach) * isz > have:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
                           f"and itemsize {isz} requiring a storage size of {(offset + reach) * isz} are out of "
                           f"bounds for storage of size {have}")


as_strided = defop("as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None)"
                   " -> Tensor(a)", check=_check_as_strided)


def _restride(self, size, stride, extra_offset=0):
    if extra_offset and not _numel(size):
        extra_offset = 0  # an empty view may not point past the end of its storage
    return as_strided(self, size, stride, self.storage_offset() + extra_offset)


# -- view family --------------------------------------------------------------
def _view_impl(self, size):
    size, st = view_strides(self, size)
    return _restride(self, size, st)


def view_strides(self, size):
    """(size, strides) of ``self.view(size)`` with PyTorch's errors; the checks every backend shares."""
    size = _infer_size(size, self.numel())
    st = _view_strides(self._shape, self.stride(), size)
    if st is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return size, st


view = defop("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", check=view_strides, explicit=_view_impl)


def _unsafe_view_impl(self, size):
    v = _view_impl(self, size)
    return make_tensor(v._data, v._dtype, v._device, v._ks)


_unsafe_view = defop("_unsafe_view(Tensor self, SymInt[] size) -> Tensor", explicit=_unsafe_view_impl)


def _reshape_impl(self, shape):
    size = _infer_size(shape, self.numel())
    st = _view_strides(self._shape, self.stride(), size)
    if st is not None:
        return view(self, size)
    # the copy is private to this call, so the result owns it rather than being a view of it
    return _unsafe_view(clone(self), size)


reshape = defop("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", composite=_reshape_impl)


def permute_dims(self, dims):
    """Wrapped dims of ``self.permute(dims)``, with PyTorch's errors."""
    n = len(self._shape)
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match "
                           f"the length of the desired ordering of dimensions i.e. input.dim() = {n} is not "
                           f"equal to len(dims) = {len(dims)}")
    d = [_wrap_dim(x, n) for x in dims]
    if len(set(d)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return d


def _permute_impl(self, dims):
    d = permute_dims(self, dims)
    st = self.stride()
    return _restride(self, tuple(self._shape[i] for i in d), tuple(st[i] for i in d))


permute = defop("permute(Tensor(a) self, int[] dims) -> Tensor(a)", check=permute_dims, explicit=_permute_impl)


def _transpose_impl(self, dim0, dim1):
    n = len(self._shape)
    if n == 0:
        _wrap_dim(dim0, 0), _wrap_dim(dim1, 0)
        return alias(self)
    dims = list(range(n))
    a, b = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    dims[a], dims[b] = dims[b], dims[a]
    return permute(self, tuple(dims))


transpose = defop("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", composite=_transpose_impl)


def _t_impl(self):
    n = len(self._shape)
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return permute(self, (1, 0)) if n == 2 else alias(self)  # transpose(0, 1), one dispatch fewer


t = defop("t(Tensor(a) self) -> Tensor(a)", composite=_t_impl)


def _alias_impl(self):
    return _restride(self, self._shape, self.stride())


alias = defop("alias(Tensor(a) self) -> Tensor(a)", explicit=_alias_impl)


def _expand_impl(self, size, implicit=False):
    n, m = len(self._shape), len(size)
    if m < n:
        raise RuntimeError(f"expand({self._dtype}{{{list(self._shape)}}}, size=[{', '.join(map(str, size))}]): "
                           f"the number of sizes provided ({m}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({n})")
    st = self.stride()
    out_size, out_stride = [], []
    for i in range(m):
        j = i - (m - n)
        want = size[i]
        if j < 0:
            if want < 0:
                raise RuntimeError(f"The expanded size of the tensor ({want}) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            out_size.append(want)
            out_stride.append(0)
            continue
        have = self._shape[j]
        if want == -1:
            want = have
        if have == want:
            out_size.append(have)
            out_stride.append(st[j])
        elif have == 1:
            out_size.append(want)
            out_stride.append(0)
        else:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the existing size ({have}) "
                               f"at non-singleton dimension {i}.  Target sizes: {list(size)}.  "
                               f"Tensor sizes: {list(self._shape)}")
    return _restride(self, tuple(out_size), tuple(out_stride))


expand = defop("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
               explicit=_expand_impl)


def _squeeze_impl(self, dim=None):
    dims = squeeze_dims(self, dim)
    st = self.stride()
    keep = [i for i in range(len(self._shape)) if i not in dims]
    return _restride(self, tuple(self._shape[i] for i in keep), tuple(st[i] for i in keep))


def squeeze_dims(self, dim=None):
    """The dims ``squeeze`` removes (size-1 ones among ``dim``, or all)."""
    n = len(self._shape)
    if dim is None:
        return tuple(i for i, s in enumerate(self._shape) if s == 1)
    return tuple(sorted({d for d in (_wrap_dim(x, n) for x in dim) if n and self._shape[d] == 1}))


squeeze = defop("squeeze.dims(Tensor(a) self, int[]? dim=None) -> Tensor(a)", check=squeeze_dims,
                explicit=_squeeze_impl)


def _unsqueeze_impl(self, dim):
    n = len(self._shape)
    d = _wrap_dim(dim, n + 1)
    shape, st = list(self._shape), list(self.stride())
    new_st = st[d] * shape[d] if d < n else 1
    shape.insert(d, 1)
    st.insert(d, new_st)
    return _restride(self, tuple(shape), tuple(st))


unsqueeze = defop("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
                  check=lambda self, dim: _wrap_dim(dim, len(self._shape) + 1), explicit=_unsqueeze_impl)


def select_index(self, dim, index):
    """(dim, index) of ``self.select(dim, index)`` made non-negative, with PyTorch's errors."""
    n = len(self._shape)
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, n)
    size = self._shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(self._shape)} "
                         f"at dimension {d}")
    return d, index + size if index < 0 else index


def _select_impl(self, dim, index):
    d, index = select_index(self, dim, index)
    st = self.stride()
    return _restride(self, self._shape[:d] + self._shape[d + 1:], st[:d] + st[d + 1:], index * st[d])


select = defop("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", check=select_index,
               explicit=_select_impl)


def slice_bounds(self, dim=0, start=None, end=None, step=1):
    """(dim, start, end, step) of a slice, clamped as PyTorch does, with its errors."""
    n = len(self._shape)
    if n == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, n)
    if step <= 0:
        raise ValueError("slice step must be positive")
    size = self._shape[d]
    start = 0 if start is None else start
    end = size if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    return d, start, min(max(end, start), size), step


def _slice_impl(self, dim=0, start=None, end=None, step=1):
    d, start, end, step = slice_bounds(self, dim, start, end, step)
    length = (end - start + step - 1) // step
    st = self.stride()
    shape = self._shape[:d] + (length,) + self._shape[d + 1:]
    stride = st[:d] + (st[d] * step,) + st[d + 1:]
    return _restride(self, shape, stride, start * st[d] if length else 0)


slice = defop("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1)"
              " -> Tensor(a)", check=slice_bounds, explicit=_slice_impl)


def _narrow_impl(self, dim, start, length):
    n = len(self._shape)
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:  # checked before the dim and the start, as in PyTorch
        raise RuntimeError("narrow(): length must be non-negative.")
    d = _wrap_dim(dim, n)
    size = self._shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return slice(self, d, start, start + length)


narrow = defop("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
               composite=_narrow_impl)


def _flatten_impl(self, start_dim=0, end_dim=-1):
    n = len(self._shape)
    if n == 0:
        return reshape(self, (1,))
    s, e = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return self
    shape = self._shape[:s] + (_numel(self._shape[s:e + 1]),) + self._shape[e + 1:]
    return reshape(self, shape)


flatten = defop("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
                composite=_flatten_impl)


def _unflatten_impl(self, dim, sizes):
    n = len(self._shape)
    d = _wrap_dim(dim, n)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = self._shape[d]
    known = _numel(s for s in sizes if s != -1)
    if (known != size) if -1 not in sizes else (known and size % known):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({size}) in the input tensor")
    return view(self, self._shape[:d] + _infer_size(sizes, size) + self._shape[d + 1:])


unflatten = defop("unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)",
                  composite=_unflatten_impl)


def _diagonal_impl(self, offset=0, dim1=0, dim2=1):
    n = len(self._shape)
    a, b = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    st = self.stride()
    if offset >= 0:
        length = max(min(self._shape[a], self._shape[b] - offset), 0)
        extra = offset * st[b]
    else:
        length = max(min(self._shape[a] + offset, self._shape[b]), 0)
        extra = -offset * st[a]
    if length == 0:
        extra = 0
    keep = [i for i in range(n) if i not in (a, b)]
    shape = tuple(self._shape[i] for i in keep) + (length,)
    stride = tuple(st[i] for i in keep) + (st[a] + st[b],)
    return _restride(self, shape, stride, extra)


diagonal = defop("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
                 explicit=_diagonal_impl)


def _unfold_impl(self, dimension, size, step):
    n = len(self._shape)
    d = _wrap_dim(dimension, n)
    dsize = self._shape[d] if n else 1
    if size > dsize:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {dsize} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not n:
        return _restride(self, (size,), (1,))
    st = self.stride()
    shape = list(self._shape) + [size]
    stride = list(st) + [st[d]]
    shape[d] = (dsize - size) // step + 1
    stride[d] = st[d] * step
    return _restride(self, tuple(shape), tuple(stride))


unfold = defop("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)", explicit=_unfold_impl)


def movedim(self, source, destination):
    """Move dims ``source`` to positions ``destination`` (ints or sequences)."""
    n = len(self._shape)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
                           f"the same number of dims as destination ({dst} dims)")
    src = [_wrap_dim(s, n) for s in src]
    dst = [_wrap_dim(s, n) for s in dst]
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o is not None else next(rest) for o in order]
    return permute(self, order)


def _squeeze_fn(input, dim=None):
    """``squeeze(input, dim=None)``: drop size-1 dims (all, one int, or a tuple of dims)."""
    return squeeze(input, (dim,) if isinstance(dim, int) else dim)


for _name, _fn in {"reshape": reshape, "permute": permute, "transpose": transpose, "swapaxes": transpose,
                   "swapdims": transpose, "t": t, "squeeze": _squeeze_fn, "unsqueeze": unsqueeze,
                   "flatten": flatten, "unflatten": unflatten, "narrow": narrow, "select": select,
                   "diagonal": diagonal, "movedim": movedim, "moveaxis": movedim,
                   "as_strided": as_strided}.items():
    public(_name, _fn)


# -- backward formulas ----------------------------------------------------------------
from ..autograd.formulas import derivative  # noqa: E402
from ..autograd.helpers import sum_to  # noqa: E402


@derivative("view")
def _(grad, self_shape):
    return grad.reshape(self_shape)


@derivative("_unsafe_view")
def _(grad, self_shape):
    return grad.reshape(self_shape)


@derivative("alias")
def _(grad):
    return grad


@derivative("permute")
def _(grad, dims):
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n if n else 0] = i
    return grad.permute(tuple(inv))


@derivative("expand")
def _(grad, self_shape):
    return sum_to(grad, self_shape)


@derivative("squeeze.dims")
def _(grad, self_shape):
    return grad.reshape(self_shape)


@derivative("unsqueeze")
def _(grad, dim):
    return grad.squeeze(dim)


def _scatter_into_zeros(grad, shape, view_fn):
    out = zeros_for(shape, grad)
    view_fn(out).copy_(grad)
    return out


@derivative("select.int")
def _(grad, self_shape, dim, index):
    return _scatter_into_zeros(grad, self_shape, lambda z: z.select(dim, index))


@derivative("slice.Tensor")
def _(grad, self_shape, dim, start, end, step):
    return _scatter_into_zeros(grad, self_shape, lambda z: slice(z, dim, start, end, step))


@derivative("diagonal")
def _(grad, self_shape, offset, dim1, dim2):
    return _scatter_into_zeros(grad, self_shape, lambda z: z.diagonal(offset, dim1, dim2))


@derivative("unfold")
def _(grad, self_shape, dimension, size, step):
    out = zeros_for(self_shape, grad)
    n = len(self_shape)
    if n == 0:
        return grad.sum().reshape(())
    d = dimension % n
    # windows may overlap: add each window's gradient into its slice
    for w in range(grad._shape[d]):
        region = slice(out, d, w * step, w * step + size)
        region.add_(grad.select(d, w).movedim(-1, d))
    return out


@derivative("as_strided")
def _(grad, self, size, stride, storage_offset):
    # the view may overlap itself (stride 0, or windows): add each element's gradient at
    # its storage position, then read the input's elements back out of storage order
    base_geom = _geometry(self)
    offset = self.storage_offset() if storage_offset is None else storage_offset
    view_geom = (tuple(size), tuple(stride), offset)
    buf = _buffer(grad, base_geom, view_geom)
    pos = arange(offset, offset + 1, device=grad._device).reshape(())
    for n, st in zip(size, stride):
        pos = pos.unsqueeze(-1) + arange(n, device=grad._device) * st
    buf.index_put_([pos.reshape(-1)], grad.reshape(-1), True)
    return _region(buf, base_geom).clone()
