"""Op database entries of the shape, indexing and set-like tensor ops (:mod:`tensorplug.ops.shape_extra`,
:mod:`tensorplug.ops.index_extra`).

:mod:`tensorplug.testing.op_db` adds :data:`ENTRIES` to the database at its end (this module does not
import it, so the two stay out of an import cycle; the few helpers it needs are its own). Each sample is
built by a small maker ``(dtype, requires_grad, seed) -> SampleInput``; tensor arguments of a
case are makers too (:func:`_ten`, :func:`_idx`), so every case is one line. Ops whose result
shape depends on the data are expected failures under vmap, which refuses them as PyTorch's does.
"""

from __future__ import annotations

import numpy as np

import tensorplug as tp
from tensorplug import Tensor

from . import samples as S
from .opinfo import OpInfo, SampleInput
from .samples import small_when_grad, ALL, INTEGRAL, FLOATING, NO_BOOL, make_tensor, index_tensor, bool_tensor
from .samples import error_input as _err, errors_of as _errors

ENTRIES: list = []
"""The entries of this module, in order; :mod:`.op_db` appends them to the database."""

_DIM_RANGE = r"Dimension out of range \(expected to be in range of \[-?\d+, -?\d+\], but got -?\d+\)"
_T = {"transposed": True}
_NC = {"noncontiguous": True}


def _copy(x):
    return np.array(x, copy=True)


def _add(name, op, ref, dtypes, samples, **kw):
    info = OpInfo(name=name, op=op, ref=ref, dtypes=tuple(dtypes), sample_inputs=small_when_grad(samples), **kw)
    ENTRIES.append(info)
    return info


def _t(shape, dtype=tp.float32, seed=0, **kw):
    return make_tensor(shape, dtype, seed=seed, **kw)


def _method(name):
    return getattr(Tensor, name)


def _on_copy(method_name):
    """A functional form of an in-place-only method: it acts on a clone of its input."""
    fn = getattr(Tensor, method_name)

    def op(input, *args, **kwargs):
        return fn(input.clone(), *args, **kwargs)
    op.__name__ = op.__qualname__ = method_name
    op.__doc__ = f"``Tensor.{method_name}`` applied to a clone of the input."
    return op

_DYNAMIC = {"vmap": "the output shape depends on the data: vmap refuses the op, as PyTorch's does"}
_DYN_ERR = "vmap: We do not support batching operators that can output dynamic shape"


# -- sample makers ----------------------------------------------------------------------------------------
def _ten(shape, dtype=None, grad=True, **kw):
    """A tensor argument: the sample's dtype unless ``dtype``; it requires grad with the sample when ``grad``."""
    def make(d, rg, seed):
        return make_tensor(shape, dtype or d, seed=seed + 50, requires_grad=rg and grad and dtype is None, **kw)
    return make


def _idx(values, dtype=tp.int64):
    return lambda d, rg, seed: index_tensor(values, dtype)


def _mask(shape):
    return lambda d, rg, seed: bool_tensor(shape, seed=seed + 70)


def _resolve(a, d, rg, seed):
    if callable(a) and not isinstance(a, (type, Tensor)):
        return a(d, rg, seed)
    if isinstance(a, list) and any(callable(v) for v in a):
        return [_resolve(v, d, rg, seed + k) for k, v in enumerate(a)]
    return a


def _case(name, shape, *args, mk=None, grad=True, **kwargs):
    """One sample: input of ``shape`` (make_tensor keywords ``mk``), then ``args``/``kwargs`` (makers resolved)."""
    def make(d, rg, seed):
        t = make_tensor(shape, d, seed=seed, requires_grad=rg and grad, **(mk or {}))
        return SampleInput(t, tuple(_resolve(a, d, rg, seed) for a in args),
                           {k: _resolve(v, d, rg, seed) for k, v in kwargs.items()}, name=name)
    make.grad = grad
    return make


def _samples(*cases):
    def sample_inputs(device, dtype, requires_grad):
        for i, c in enumerate(cases):
            if requires_grad and not c.grad:
                continue
            yield c(dtype, requires_grad, i)
    return sample_inputs


def _entry(name, op, ref, dtypes, cases, errors=(), **kw):
    return _add(name, op, ref, dtypes, _samples(*cases), error_inputs=_errors(*errors) if errors else None, **kw)


def _f64(x):
    return x.astype(np.float64) if S.is_float(x.dtype) else x


# -- repeat, tile, repeat_interleave --------------------------------------------------------------------
_entry("repeat", _method("repeat"), lambda x, *r: np.tile(x, r[0] if len(r) == 1 and isinstance(r[0], tuple) else r),
       ALL, (_case("dims", (2, 3), 2, 3), _case("new_dims", (2, 3), 2, 1, 2), _case("tuple", (3,), (2, 2), mk=_NC),
             _case("ones", (2, 3), 1, 1, mk=_T), _case("scalar", (), 3), _case("zero", (2, 3), 0, 2)),
       aten=("repeat",),
       errors=(lambda: _err(RuntimeError, "Number of dimensions of repeat dims can not be smaller than number of "
                                          "dimensions of tensor", _t((3, 4)), 2),
               lambda: _err(RuntimeError, r"Trying to create tensor with negative dimension -3: \[-3, 8\]",
                            _t((3, 4)), -1, 2)))
_entry("tile", tp.tile, lambda x, dims: np.tile(x, dims), ALL,
       (_case("short", (2, 3), (2,)), _case("long", (2, 3), (2, 1, 2), mk=_T), _case("same", (3,), (3,)),
        _case("scalar", (), (2, 2))),
       aten=("repeat",),
       errors=(lambda: _err(RuntimeError, "negative dimension", _t((3, 4)), (-1, 2)),))


def _ri_ref(x, repeats=None, dim=None, *, output_size=None):
    if repeats is None:
        return np.repeat(np.arange(x.size, dtype=x.dtype), x)
    if isinstance(repeats, np.ndarray) and repeats.ndim == 0:
        repeats = int(repeats)
    return np.repeat(x if dim is not None else x.reshape(-1), repeats, axis=0 if dim is None else dim)


_entry("repeat_interleave", tp.repeat_interleave, _ri_ref, ALL,
       (_case("flat", (2, 3), 2), _case("dim0", (2, 3), 3, 0), _case("dim_neg", (2, 3), 2, -1, mk=_T),
        _case("output_size", (2, 3), 2, 1, output_size=6), _case("scalar", (), 3), _case("zero", (2, 3), 0, 1)),
       aten=("repeat_interleave.self_int",),
       errors=(lambda: _err(RuntimeError, "Repeats must be non-negative", _t((3, 4)), -1),
               lambda: _err(RuntimeError, r"repeat_interleave: Invalid output_size, expected 6 but got 5", _t((3, 4)),
                            2, 0, output_size=5)))
_entry("repeat_interleave.tensor", tp.repeat_interleave, _ri_ref, ALL,
       (_case("dim0", (3, 2), _idx([1, 0, 2]), 0), _case("dim1", (2, 3), _idx([2, 1, 1]), 1, mk=_NC),
        _case("flat", (2, 2), _idx([1, 2, 0, 1])), _case("zero_dim_repeats", (2, 3), _idx(2), 1),
        _case("int32", (3,), _idx([3, 0, 1], tp.int32), 0), _case("output_size", (3,), _idx([1, 1, 2]), 0,
                                                                     output_size=4)),
       aten=("repeat_interleave.self_Tensor", "repeat_interleave.Tensor"), xfails=_DYNAMIC,
       errors=(lambda: _err(RuntimeError, r"repeats must have the same size as input along dim, but got "
                                          r"repeats.size\(0\) = 2 and input.size\(0\) = 3", _t((3, 4)),
                            index_tensor([1, 2]), 0),
               lambda: _err(RuntimeError, "repeats can not be negative", _t((3, 4)), index_tensor([1, -2, 1]), 0),
               lambda: _err(RuntimeError, "repeats must be 0-dim or 1-dim tensor", _t((3, 4)),
                            index_tensor([[1, 2]]), 0),
               lambda: _err(NotImplementedError, "\"repeat_interleave_cpu\" not implemented for 'Float'",
                            _t((3, 4)), _t((3,)), 0),
               lambda: _err(RuntimeError, "allocated size does not match required size", _t((3, 4)),
                            index_tensor([1, 2, 1]), 0, output_size=5)))


def _ri_index_samples(device, dtype, requires_grad):
    yield SampleInput(index_tensor([1, 3, 0, 2], dtype), name="vector")
    yield SampleInput(index_tensor([2], dtype), name="one")
    yield SampleInput(index_tensor(np.zeros(0, np.int64), dtype), name="empty")
    yield SampleInput(index_tensor([1, 2], dtype), (), {"output_size": 3}, name="output_size")


_add("repeat_interleave.repeats_only", tp.repeat_interleave, _ri_ref, (tp.int64, tp.int32), _ri_index_samples,
     supports_autograd=False, aten=("repeat_interleave.Tensor",), xfails=_DYNAMIC,
     error_inputs=_errors(lambda: _err(RuntimeError, "repeat_interleave only accept 1D vector as repeat",
                                       index_tensor([[1, 2]]))))


# -- broadcast_to, broadcast_tensors, meshgrid ---------------------------------------------------------
_entry("broadcast_to", tp.broadcast_to, lambda x, size: _copy(np.broadcast_to(x, tuple(
    s if s != -1 else x.shape[i - (len(size) - x.ndim)] for i, s in enumerate(size)))), ALL,
       (_case("new_dims", (3, 1), (2, 3, 4)), _case("keep", (3, 1), (-1, 5), mk=_NC), _case("scalar", (), (2, 3)),
        _case("same", (3, 4), (3, 4), mk=_T)),
       is_view=True, aten=("expand",),
       errors=(lambda: _err(RuntimeError, r"the number of sizes provided \(1\) must be greater or equal to the number "
                                          r"of dimensions in the tensor \(2\)", _t((3, 4)), (2,)),
               lambda: _err(RuntimeError, r"The expanded size of the tensor \(5\) must match the existing size \(3\)",
                            _t((3, 4)), (5, 4))))


def _tensors_fn(fn):
    def op(*tensors, **kw):
        return fn(*tensors, **kw)
    op.__name__ = op.__qualname__ = fn.__name__
    op.__doc__ = fn.__doc__
    return op


_add("broadcast_tensors", _tensors_fn(tp.broadcast_tensors),
     lambda *xs: tuple(_copy(a) for a in np.broadcast_arrays(*xs)), ALL,
     _samples(_case("pair", (3, 1), _ten((4,))), _case("three", (2, 1, 3), _ten((4, 1)), _ten(())),
              _case("same", (3, 4), _ten((3, 4)), mk=_T), _case("one", (2, 3))),
     aten=("expand",),
     error_inputs=_errors(lambda: _err(RuntimeError, r"The size of tensor a \(4\) must match the size of tensor b "
                                                     r"\(2\) at non-singleton dimension 1", _t((3, 4)), _t((2,)))))


def _meshgrid_ref(*xs, indexing="ij"):
    return tuple(_copy(a) for a in np.meshgrid(*[x.reshape(-1) for x in xs], indexing=indexing))


_add("meshgrid", _tensors_fn(tp.meshgrid), _meshgrid_ref, ALL,
     _samples(_case("ij", (3,), _ten((2,)), _ten((4,)), indexing="ij"),
              _case("xy", (3,), _ten((2,)), _ten((4,)), indexing="xy"),
              _case("xy_pair", (3,), _ten((2,)), indexing="xy"), _case("one", (3,), indexing="ij"),
              _case("zero_dim", (), _ten((2,)), indexing="ij")),
     aten=("expand",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"meshgrid: Expected 0D or 1D tensor in the tensor list", _t((2, 2)), _t((2,)),
                      indexing="ij"),
         lambda: _err(RuntimeError, r"meshgrid: indexing must be one of \"xy\" or \"ij\", but received: bad",
                      _t((2,)), indexing="bad"),
         lambda: _err(RuntimeError, "meshgrid expects all tensors to have the same dtype", _t((2,)),
                      _t((2,), tp.int64), indexing="ij")))


# -- nonzero, argwhere, masked_select ------------------------------------------------------------------
def _nz_cases():
    return (_case("2d", (3, 4), grad=False), _case("3d", (2, 3, 2), mk=_NC, grad=False),
            _case("vector", (7,), mk={"low": 0, "high": 1}, grad=False), _case("scalar", (), grad=False),
            _case("zero_size", (0, 3), grad=False), _case("transposed", (3, 4), mk=_T, grad=False))


def _sparse_input(fn):
    """``fn`` applied to its input with a third of the elements zeroed, so that zeros occur in every dtype."""
    def op(input, *args, **kwargs):
        return fn(input * (tp.arange(input.numel(), device=input.device).reshape(input.shape) % 3 != 0).to(
            input.dtype), *args, **kwargs)
    op.__name__ = op.__qualname__ = fn.__name__
    op.__doc__ = fn.__doc__
    return op


def _sparse_np(x):
    keep = (np.arange(x.size).reshape(x.shape) % 3 != 0)
    return x * keep.astype(x.dtype) if x.dtype != np.bool_ else x & keep


def _argwhere_ref(x):
    r = np.argwhere(_sparse_np(x))
    return r.astype(np.int64).reshape(r.shape[0], x.ndim)


_entry("nonzero", _sparse_input(tp.nonzero), lambda x: _argwhere_ref(x),
       ALL, _nz_cases(), supports_autograd=False, aten=("nonzero",), xfails=_DYNAMIC)
_entry("nonzero.as_tuple", _sparse_input(lambda x: tp.nonzero(x, as_tuple=True)),
       lambda x: tuple(a.astype(np.int64) for a in np.nonzero(np.atleast_1d(_sparse_np(x)))), ALL, _nz_cases(),
       supports_autograd=False, aten=("nonzero",), xfails=_DYNAMIC)
_entry("argwhere", _sparse_input(tp.argwhere),
       lambda x: _argwhere_ref(x), ALL, _nz_cases(),
       supports_autograd=False, aten=("nonzero",), xfails=_DYNAMIC)


def _masked_select_ref(x, mask):
    a, m = np.broadcast_arrays(x, mask)
    return _copy(a[m])


_entry("masked_select", tp.masked_select, _masked_select_ref, ALL,
       (_case("same", (3, 4), _mask((3, 4))), _case("broadcast_mask", (3, 4), _mask((4,)), mk=_T),
        _case("broadcast_self", (4,), _mask((3, 4))), _case("scalar", (), _mask(())),
        _case("zero_size", (0, 3), _mask((0, 3)))),
       aten=("masked_select",), xfails=_DYNAMIC,
       errors=(lambda: _err(RuntimeError, "masked_select: expected BoolTensor for mask", _t((3, 4)), _t((3, 4))),
               lambda: _err(RuntimeError, r"The size of tensor a \(2\) must match the size of tensor b \(3\)",
                            _t((3, 4)), bool_tensor((2, 4)))))


# -- unique, unique_consecutive ------------------------------------------------------------------------
def _small_ints(d):
    return {"low": 0, "high": 3} if d is not tp.bool else {}


def _u_case(name, shape, **kw):
    def make(d, rg, seed):
        vals = np.random.default_rng(seed).integers(0, 3, shape)
        t = make_tensor(shape, d, values=vals.astype(bool) if d is tp.bool else vals)
        return SampleInput(t, (), kw, name=name)
    make.grad = False
    return make


def _keys(x):
    return x.astype(np.float64) if S.is_float(x.dtype) else x


def _unique_ref(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    k = _keys(x)
    if dim is not None and x.shape[dim] == 0:
        vals, inv, cnt = x, np.zeros(0, np.int64), np.zeros(0, np.int64)
    elif dim is None:
        vals, inv, cnt = np.unique(k.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(x.shape)
    else:
        vals, inv, cnt = np.unique(k, return_inverse=True, return_counts=True, axis=dim)
        inv = inv.reshape(-1)
    vals = vals.astype(x.dtype)
    out = (vals,) + ((inv.astype(np.int64),) if return_inverse else ()) + ((cnt.astype(np.int64),) if return_counts
                                                                           else ())
    return out if len(out) > 1 else vals


_entry("unique", tp.unique, _unique_ref, ALL,
       (_u_case("plain", (3, 4)), _u_case("inverse", (3, 4), return_inverse=True),
        _u_case("counts", (2, 5), return_counts=True),
        _u_case("both", (7,), return_inverse=True, return_counts=True), _u_case("scalar", (), return_inverse=True),
        _u_case("zero_size", (0, 3), return_counts=True), _u_case("unsorted", (6,), sorted=False)),
       supports_autograd=False, aten=("_unique2",), xfails=_DYNAMIC)
_entry("unique.dim", tp.unique, _unique_ref, ALL,
       (_u_case("dim0", (4, 2), dim=0, return_inverse=True, return_counts=True),
        _u_case("dim1", (2, 5), dim=1, return_inverse=True, return_counts=True),
        _u_case("dim_neg", (3, 2, 2), dim=-1), _u_case("zero_size", (0, 3), dim=0, return_counts=True)),
       supports_autograd=False, aten=("unique_dim",), xfails=_DYNAMIC,
       errors=(lambda: _err(IndexError, _DIM_RANGE, _t((3, 4)), dim=5),
               lambda: _err(RuntimeError, "There are 0 sized dimensions, and they aren't selected, so unique cannot "
                                          "be applied", _t((3, 0)), dim=0)))


def _uc_ref(x, return_inverse=False, return_counts=False, dim=None):
    k = _keys(x)
    if dim is None:
        flat = k.reshape(-1)
        new = np.ones(flat.size, bool)
        new[1:] = flat[1:] != flat[:-1]
        vals = x.reshape(-1)[new]
        inv = (np.cumsum(new) - 1).reshape(x.shape)
    else:
        m = np.moveaxis(k, dim, 0).reshape(k.shape[dim], -1)
        new = np.ones(m.shape[0], bool)
        new[1:] = np.any(m[1:] != m[:-1], axis=1)
        vals = np.compress(new, x, axis=dim)
        inv = np.cumsum(new) - 1
    cnt = np.diff(np.append(np.flatnonzero(new), new.size))
    out = (_copy(vals),) + ((inv.astype(np.int64),) if return_inverse else ()) + \
          ((cnt.astype(np.int64),) if return_counts else ())
    return out if len(out) > 1 else out[0]


_entry("unique_consecutive", tp.unique_consecutive, _uc_ref, ALL,
       (_u_case("plain", (9,)), _u_case("both", (3, 4), return_inverse=True, return_counts=True),
        _u_case("dim0", (5, 2), dim=0, return_inverse=True, return_counts=True),
        _u_case("dim1", (2, 6), dim=1, return_counts=True), _u_case("scalar", ()), _u_case("zero_size", (0,))),
       supports_autograd=False, aten=("unique_consecutive",), xfails=_DYNAMIC,
       errors=(lambda: _err(IndexError, _DIM_RANGE, _t((3, 4)), dim=5),))


# -- diff, diag, diag_embed, trace ---------------------------------------------------------------------
def _diff_ref(x, n=1, dim=-1, prepend=None, append=None):
    return np.diff(x, n, axis=dim, **({"prepend": prepend} if prepend is not None else {}),
                   **({"append": append} if append is not None else {}))


_entry("diff", tp.diff, _diff_ref, ALL,
       (_case("last", (3, 4)), _case("n2_dim0", (4, 3), 2, 0, mk=_T), _case("prepend", (3, 4), 1, 1, _ten((3, 2))),
        _case("append", (3, 4), 1, 0, None, _ten((1, 4)), mk=_NC), _case("n_large", (3, 4), 5),
        _case("n0", (3, 4), 0), _case("vector", (6,), 3)),
       aten=("diff",),
       errors=(lambda: _err(RuntimeError, "order must be non-negative but got -1", _t((3, 4)), -1),
               lambda: _err(RuntimeError, "diff expects input to be at least one-dimensional", _t(())),
               lambda: _err(RuntimeError, r"diff expects the shape of tensor to prepend or append to match that of "
                                          r"input except along the differencing dimension; input.size\(0\) = 3, but "
                                          r"got tensor.size\(0\) = 2", _t((3, 4)), 1, -1, _t((2, 2)))))
_entry("diag", tp.diag, lambda x, diagonal=0: np.diag(x, diagonal).copy(), ALL,
       (_case("vector", (3,)), _case("vector_offset", (3,), 1), _case("vector_neg", (2,), -2),
        _case("matrix", (3, 4), mk=_T), _case("matrix_offset", (3, 4), 2, mk=_NC), _case("matrix_neg", (4, 3), -1),
        _case("far", (3, 4), 5)),
       aten=("diag",),
       errors=(lambda: _err(RuntimeError, r"diag\(\): Supports 1D or 2D tensors. Got 3D", _t((2, 2, 2))),))


def _diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    x = x.reshape(1) if not x.ndim else x
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), dtype=x.dtype)
    i = np.arange(x.shape[-1])
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., rows, cols] = x
    nd = out.ndim
    return _copy(np.moveaxis(out, (nd - 2, nd - 1), (dim1 % nd, dim2 % nd)))


_entry("diag_embed", tp.diag_embed, _diag_embed_ref, ALL,
       (_case("vector", (3,)), _case("batch", (2, 3), mk=_T), _case("offset", (2, 3), 1),
        _case("neg_offset_dims", (2, 3), -2, 0, 2, mk=_NC), _case("dims_swapped", (2, 3), 0, -1, 0)),
       aten=("diag_embed",),
       errors=(lambda: _err(RuntimeError, "diagonal dimensions cannot be identical 0, 0", _t((3, 4)), 0, 0, 0),
               lambda: _err(IndexError, _DIM_RANGE, _t((3, 4)), 0, 0, 3)))


def _trace_ref(x):
    t = np.trace(_f64(x))
    return np.asarray(t).astype(x.dtype if S.is_float(x.dtype) else np.int64)


_entry("trace", tp.trace, _trace_ref, NO_BOOL,
       (_case("square", (3, 3)), _case("wide", (2, 4), mk=_T), _case("tall", (4, 2), mk=_NC),
        _case("zero_size", (0, 3))),
       aten=("trace",),
       errors=(lambda: _err(RuntimeError, "trace: expected a matrix, but got tensor with dim 3", _t((2, 2, 2))),
               lambda: _err(RuntimeError, "trace: expected a matrix, but got tensor with dim 1", _t((2,)))))


# -- take_along_dim, tensor_split, hsplit/vsplit/dsplit, ravel ------------------------------------------
def _tad_ref(x, indices, dim=None):
    if dim is None:
        return np.take_along_axis(x.reshape(-1), indices.reshape(-1), 0)
    s, i = list(x.shape), list(indices.shape)
    s[dim], i[dim] = 1, 1
    b = np.broadcast_shapes(tuple(s), tuple(i))
    bs, bi = list(b), list(b)
    bs[dim], bi[dim] = x.shape[dim], indices.shape[dim]
    return np.take_along_axis(np.broadcast_to(x, bs), np.broadcast_to(indices, bi), dim)


_entry("take_along_dim", tp.take_along_dim, _tad_ref, ALL,
       (_case("dim1", (3, 4), _idx([[0], [2], [1]]), 1), _case("broadcast", (3, 4), _idx([[0, 3]]), 1, mk=_T),
        _case("broadcast_self", (1, 4), _idx([[0], [1], [3]]), 1), _case("flat", (3, 4), _idx([0, 11, 5]), mk=_NC),
        _case("dim_neg", (2, 3), _idx([[2, 0], [1, 1]]), -1)),
       aten=("gather",),
       errors=(lambda: _err(RuntimeError, r"take_along_dim\(\): dtype of indices should be Long but got Float",
                            _t((3, 4)), _t((1, 1)), 1),
               lambda: _err(RuntimeError, r"take_along_dim\(\): input and indices should have the same number of "
                                          r"dimensions, but got 2 dimensions for input, and 1 dimensions for indices",
                            _t((3, 4)), index_tensor([0]), 1),
               lambda: _err(IndexError, _DIM_RANGE, _t((3, 4)), index_tensor([[0]]), 5)))


def _ts_ref(x, s, dim=0):
    if isinstance(s, np.ndarray):
        s = int(s) if s.ndim == 0 else list(s)
    return tuple(_copy(a) for a in (np.array_split(x, s, axis=dim) if isinstance(s, int) else
                                    np.split(x, s, axis=dim)))


_entry("tensor_split", tp.tensor_split, _ts_ref, ALL,
       (_case("sections", (7, 2), 3), _case("sections_dim1", (2, 5), 2, 1, mk=_T), _case("more_sections", (2,), 4),
        _case("indices", (7, 2), [1, 5]), _case("indices_odd", (7,), [5, 1, 9, -2])),
       is_view=True, aten=("tensor_split.sections", "tensor_split.indices",
                           "tensor_split.tensor_indices_or_sections"),
       errors=(lambda: _err(RuntimeError, "number of sections must be larger than 0, got 0", _t((3, 4)), 0),
               lambda: _err(RuntimeError, "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
                                          "with 0 dims", _t(()), 2),
               lambda: _err(RuntimeError, "tensor_split expected tensor_indices_or_sections to have dtype of long, "
                                          "but got Float", _t((3, 4)), _t((1,))),
               lambda: _err(RuntimeError, "tensor_split expected tensor_indices_or_sections to be a zero-dimensional "
                                          "or one-dimensional tensor, but got a tensor with 2 dims", _t((3, 4)),
                            index_tensor([[1]]))))
_entry("tensor_split.tensor", tp.tensor_split, _ts_ref, ALL,
       (_case("tensor_indices", (3, 4), _idx([1, 3]), 1, mk=_NC), _case("tensor_sections", (5,), _idx(2)),
        _case("tensor_indices_dim0", (6, 2), _idx([2]))),
       is_view=True, aten=("tensor_split.tensor_indices_or_sections",),
       xfails={"vmap": "the split points are read from the indices tensor (.tolist()): each example would split "
                       "differently; PyTorch's vmap refuses it too"})
for _n, _np_fn, _shape, _min in (("hsplit", np.hsplit, (3, 4), 1), ("vsplit", np.vsplit, (4, 3), 2),
                                 ("dsplit", np.dsplit, (2, 3, 4), 3)):
    _entry(_n, getattr(tp, _n), lambda x, s, f=_np_fn: tuple(_copy(a) for a in f(x, s)), ALL,
           (_case("sections", _shape, 2), _case("indices", _shape, [1, 3], mk=_T), _case("one", _shape, 1, mk=_NC))
           + ((_case("vector", (6,), 3),) if _n == "hsplit" else ()),
           is_view=True, aten=("tensor_split.sections", "tensor_split.indices"),
           errors=(lambda n=_n, m=_min: _err(RuntimeError, rf"{n} requires a tensor with at least {m} dimension, but "
                                                          rf"got a tensor with {m - 1} dimensions!",
                                             _t((2,) * (m - 1)), 2),
                   lambda n=_n, s=_shape: _err(RuntimeError, rf"{n} attempted to split along dimension \d, but the size "
                                                             rf"of the dimension \d is not divisible by the split_size 3!",
                                               _t(s), 3)))
_entry("ravel", tp.ravel, lambda x: _copy(np.ravel(x)), ALL,
       (_case("contiguous", (3, 4)), _case("transposed", (3, 4), mk=_T), _case("stepped", (2, 3), mk=_NC),
        _case("scalar", ()), _case("zero_size", (0, 3))),
       aten=("view", "_unsafe_view"))


# -- rot90, fliplr, flipud -----------------------------------------------------------------------------
_entry("rot90", tp.rot90, lambda x, k=1, dims=(0, 1): _copy(np.rot90(x, k, tuple(dims))), ALL,
       (_case("once", (3, 4)), _case("twice", (3, 4), 2, mk=_T), _case("thrice", (2, 3, 4), 3, [2, 0]),
        _case("zero", (3, 4), 0), _case("negative", (3, 4), -1, [1, 0], mk=_NC), _case("many", (2, 3), 6)),
       aten=("flip",),
       errors=(lambda: _err(RuntimeError, "expected total rotation dims == 2, but got dims = 1", _t((3, 4)), 1, [0]),
               lambda: _err(RuntimeError, "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0",
                            _t((3, 4)), 1, [0, 0]),
               lambda: _err(RuntimeError, "expected total dims >= 2, but got total dims = 1", _t((3,)), 1, [0, 1])))
_entry("fliplr", tp.fliplr, lambda x: _copy(np.fliplr(x)), ALL,
       (_case("2d", (3, 4)), _case("3d", (2, 3, 2), mk=_T)), aten=("flip",),
       errors=(lambda: _err(RuntimeError, r"Input must be >= 2-d.", _t((3,))),))
_entry("flipud", tp.flipud, lambda x: _copy(np.flipud(x)), ALL,
       (_case("2d", (3, 4), mk=_NC), _case("1d", (5,))), aten=("flip",),
       errors=(lambda: _err(RuntimeError, r"Input must be >= 1-d.", _t(())),))


# -- tril_indices, triu_indices --------------------------------------------------------------------------
def _tri_op(fn):
    def op(like, row, col, offset=0):
        return fn(row, col, offset, dtype=like.dtype, device=like.device)
    op.__name__ = op.__qualname__ = fn.__name__
    op.__doc__ = fn.__doc__ + " (the dtype and device of a tensor given first)"
    return op


for _n, _np_fn in (("tril_indices", np.tril_indices), ("triu_indices", np.triu_indices)):
    _entry(_n, _tri_op(getattr(tp, _n)),
           lambda like, row, col, offset=0, f=_np_fn: np.stack(f(row, offset, col)).astype(like.dtype).reshape(2, -1),
           (tp.int64, tp.int32),
           (_case("square", (), 3, 3, grad=False), _case("wide", (), 3, 5, 1, grad=False),
            _case("tall", (), 5, 3, -2, grad=False), _case("far", (), 3, 4, 9, grad=False),
            _case("empty", (), 0, 3, grad=False)),
           supports_autograd=False, aten=(),
           errors=(lambda n=_n: _err(RuntimeError, "row must be non-negative, got-1", _t((), tp.int64), -1, 3),
                   lambda n=_n: _err(RuntimeError, "col must be non-negative, got-1", _t((), tp.int64), 3, -1),
                   lambda n=_n: _err(NotImplementedError, rf"\"{n}\" not implemented for 'Float'", _t(()), 3, 3)))


# -- new_*, fill, zero_ -----------------------------------------------------------------------------------
def _new_case(name, *args, **kwargs):
    return _case(name, (2, 3), *args, grad=False, **kwargs)


def _np_of(dtype, like):
    return like if dtype is None else S.np_dtype(dtype)


_entry("new_zeros", _method("new_zeros"), lambda x, *size, dtype=None: np.zeros(
    size[0] if len(size) == 1 else size, dtype=x.dtype if dtype is None else S.np_dtype(dtype)), ALL,
       (_new_case("tuple", (4, 2)), _new_case("varargs", 3, 1), _new_case("dtype", (2,), dtype=tp.float64),
        _new_case("empty", (0,))), supports_autograd=False)
_entry("new_ones", _method("new_ones"), lambda x, *size, dtype=None: np.ones(
    size[0] if len(size) == 1 else size, dtype=x.dtype if dtype is None else S.np_dtype(dtype)), ALL,
       (_new_case("tuple", (4, 2)), _new_case("varargs", 3, 1), _new_case("dtype", (2,), dtype=tp.int32)),
       supports_autograd=False)
_entry("new_full", _method("new_full"), lambda x, size, value, dtype=None: np.full(
    size, value, dtype=x.dtype if dtype is None else S.np_dtype(dtype)), ALL,
       (_new_case("int", (4, 2), 1), _new_case("dtype", (2,), 2.5, dtype=tp.float64)), supports_autograd=False)


def _new_empty_zeroed(input, *args, **kwargs):
    """``new_empty`` then ``zero_``: the shape, dtype and device are the op's, the values are not."""
    return input.new_empty(*args, **kwargs).zero_()


_entry("new_empty", _new_empty_zeroed, lambda x, *size, dtype=None: np.zeros(
    size[0] if len(size) == 1 else size, dtype=x.dtype if dtype is None else S.np_dtype(dtype)), ALL,
       (_new_case("tuple", (4, 2)), _new_case("varargs", 3, 1), _new_case("dtype", (2,), dtype=tp.int16)),
       supports_autograd=False)
_entry("new_tensor", _method("new_tensor"), lambda x, data, dtype=None: np.array(
    data, dtype=x.dtype if dtype is None else S.np_dtype(dtype)), ALL,
       (_new_case("list", [[1, 0], [1, 1]]), _new_case("scalar", 1), _new_case("dtype", [1, 2], dtype=tp.int64)),
       supports_autograd=False)


def _fill_ref(x, value):
    return np.full_like(x, value.item() if isinstance(value, np.ndarray) else value)


_entry("fill", tp.fill, _fill_ref, ALL,
       (_case("scalar_value", (3, 4), 1, grad=False), _case("tensor_value", (3, 4), _ten(())),
        _case("other_dtype_value", (2, 3), _ten((), tp.float64), mk=_T, grad=False),
        _case("zero_dim", (), _ten(()))),
       aten=("full", "fill.Tensor"),
       errors=(lambda: _err(RuntimeError, "fill_ only supports 0-dimension value tensor but got tensor with 1 "
                                          "dimensions.", _t((3, 4)), _t((2,))),))
# zero_ (Tensor.zero_, also tensorplug.zero_) has its entry in op_db already


# -- index_add, index_copy, index_fill ----------------------------------------------------------------
def _along_ref(x, dim, index, fn):
    out = _copy(x).reshape(x.shape or (1,))
    moved = np.moveaxis(out, dim, 0)
    fn(moved, np.atleast_1d(index).astype(np.int64))
    return out.reshape(x.shape)


def _index_add_ref(x, dim, index, source, *, alpha=1):
    def fn(m, idx):
        src = np.moveaxis(source.reshape(np.moveaxis(m, 0, dim).shape[:dim] + (idx.size,) +
                                         np.moveaxis(m, 0, dim).shape[dim + 1:]), dim, 0)
        if S.is_float(x.dtype):
            acc = m.astype(np.float64)
            np.add.at(acc, idx, src.astype(np.float64) * alpha)
            m[...] = acc.astype(m.dtype)
        elif x.dtype == np.bool_:
            np.logical_or.at(m, idx, src)
        else:
            np.add.at(m, idx, (src * alpha).astype(m.dtype))
    return _along_ref(x, dim, index, fn)


_entry("index_add", tp.index_add, _index_add_ref, ALL,
       (_case("dim0", (3, 4), 0, _idx([0, 2, 0]), _ten((3, 4))), _case("dim1", (3, 4), 1, _idx([3]), _ten((3, 1)),
                                                                        mk=_T),
        _case("alpha", (3, 4), 0, _idx([1, 1]), _ten((2, 4)), alpha=2, mk=_NC),
        _case("scalar", (), 0, _idx([0]), _ten(())), _case("int32_index", (4,), 0, _idx([3, 0], tp.int32), _ten((2,))),
        _case("empty_index", (3, 4), 1, _idx(np.zeros(0, np.int64)), _ten((3, 0)))),
       inplace=_method("index_add_"), aten=("index_put_",),
       errors=(lambda: _err(RuntimeError, r"index_add_\(\): self \(Float\) and source \(Double\) must have the same "
                                          r"scalar type", _t((3, 4)), 0, index_tensor([0]), _t((1, 4), tp.float64)),
               lambda: _err(RuntimeError, r"index_add_\(\): Expected dtype int32/int64 for index but got: Float",
                            _t((3, 4)), 0, _t((1,)), _t((1, 4))),
               lambda: _err(IndexError, r"index_add_\(\): Index is supposed to be a vector", _t((3, 4)), 0,
                            index_tensor([[0]]), _t((1, 4))),
               lambda: _err(RuntimeError, r"index_add_\(\): Number of indices \(1\) should be equal to source.size\(dim\)"
                                          r": \(2\), for dim: 0", _t((3, 4)), 0, index_tensor([0]), _t((2, 4))),
               lambda: _err(RuntimeError, r"source tensor shape must match self tensor shape, excluding the specified "
                                          r"dimension. Got self.shape = \[3, 4\] source.shape = \[1, 5\]", _t((3, 4)),
                            0, index_tensor([0]), _t((1, 5))),
               lambda: _err(RuntimeError, "index 5 is out of bounds for dimension 0 with size 3", _t((3, 4)), 0,
                            index_tensor([5]), _t((1, 4))),
               lambda: _err(RuntimeError, "index -1 is out of bounds for dimension 0 with size 3", _t((3, 4)), 0,
                            index_tensor([-1]), _t((1, 4)))))


def _index_copy_ref(x, dim, index, source):
    def fn(m, idx):
        shape = np.moveaxis(m, 0, dim).shape
        m[idx] = np.moveaxis(source.reshape(shape[:dim] + (idx.size,) + shape[dim + 1:]), dim, 0)
    return _along_ref(x, dim, index, fn)


_entry("index_copy", tp.index_copy, _index_copy_ref, ALL,
       (_case("dim0", (3, 4), 0, _idx([2, 0]), _ten((2, 4))), _case("dim1", (3, 4), 1, _idx([3, 1]), _ten((3, 2)),
                                                                    mk=_T),
        _case("scalar", (), 0, _idx([0]), _ten(())), _case("stepped", (2, 5), 1, _idx([4]), _ten((2, 1)), mk=_NC)),
       inplace=_method("index_copy_"), aten=("index_put_",),
       errors=(lambda: _err(RuntimeError, r"index_copy_\(\): self and source expected to have the same dtype, but got "
                                          r"\(self\) Float and \(source\) Double", _t((3, 4)), 0, index_tensor([0]),
                            _t((1, 4), tp.float64)),
               lambda: _err(RuntimeError, r"index_copy_\(\): Expected a long tensor for index, but got Float",
                            _t((3, 4)), 0, _t((1,)), _t((1, 4))),
               lambda: _err(IndexError, r"index_copy_\(\): index 5 is out of bounds for dimension 0 with size 3",
                            _t((3, 4)), 0, index_tensor([5]), _t((1, 4))),
               lambda: _err(IndexError, r"index_copy_\(\): Number of indices \(1\) should be equal to source.size\(dim\) "
                                        r"\(2\)", _t((3, 4)), 0, index_tensor([0]), _t((2, 4))),
               lambda: _err(RuntimeError, r"index_copy_\(\): Source/destination tensor must have same slice shapes",
                            _t((3, 4)), 0, index_tensor([0]), _t((1, 5)))))


def _index_fill_ref(x, dim, index, value):
    v = value.item() if isinstance(value, np.ndarray) else value

    def fn(m, idx):
        m[idx] = v
    return _along_ref(x, dim, index, fn)


_entry("index_fill", tp.index_fill, _index_fill_ref, ALL,
       (_case("dim0", (3, 4), 0, _idx([2, 0]), 1), _case("dim1_neg_index", (3, 4), 1, _idx([3, -1, 0]), 0, mk=_T),
        _case("tensor_value", (3, 4), 0, _idx([1]), _ten((), grad=False), mk=_NC), _case("scalar", (), 0, _idx([0]), 1)),
       inplace=_method("index_fill_"), aten=("index_put_",),
       errors=(lambda: _err(IndexError, "index 5 is out of bounds for dimension 0 with size 3", _t((3, 4)), 0,
                            index_tensor([5]), 1.0),
               lambda: _err(IndexError, r"index_fill_\(\): Expected dtype int64 for index.", _t((3, 4)), 0, _t((1,)),
                            1.0),
               lambda: _err(RuntimeError, r"index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                                          r"with 1 dimension\(s\).", _t((3, 4)), 0, index_tensor([0]), _t((2,))),
               lambda: _err(RuntimeError, "Index has to be a vector/scalar", _t((3, 4)), 0, index_tensor([[0]]), 1)))


# -- scatter with reduce=, scatter_reduce ---------------------------------------------------------------
_IDX2 = [[0, 1, 2, 0], [0, 0, 2, 2]]


def _scatter_reduce_ref(x, dim, index, src, reduce, *, include_self=True):
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    out = _f64(_copy(x)) if reduce != "mean" or S.is_float(x.dtype) else _copy(x).astype(np.int64)
    if x.dtype == np.bool_:
        out = out.astype(np.int64)
    d = dim % max(x.ndim, 1)
    out = out.reshape(x.shape or (1,))
    idx = index.reshape(index.shape or (1,))
    s = _f64(src.reshape(src.shape or (1,)))
    groups = {}
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[d] = int(idx[pos])
        groups.setdefault(tuple(tgt), []).append(s[pos])
    for tgt, vals in groups.items():
        members = ([out[tgt]] if include_self else []) + vals
        if reduce in ("sum", "mean"):
            r = sum(members[1:], members[0])
            if reduce == "mean":
                r = r / len(members) if S.is_float(x.dtype) else np.floor_divide(r, len(members))
        elif reduce == "prod":
            r = members[0]
            for v in members[1:]:
                r = r * v
        else:
            r = (max if reduce == "amax" else min)(members)
            if S.is_float(x.dtype) and any(np.isnan(m) for m in members):
                r = np.nan
        out[tgt] = r
    out = out.reshape(x.shape)
    return out.astype(bool) if x.dtype == np.bool_ else S.cast(out, x.dtype)


def _sr_cases():
    cases = []
    for red in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            cases.append(_case(f"{red}_{'self' if inc else 'noself'}", (3, 4), 0, _idx(_IDX2), _ten((2, 4)), red,
                               include_self=inc, mk={"low": 0.5, "high": 2}))
    cases += [_case("dim1", (2, 3), 1, _idx([[2, 2], [0, 1]]), _ten((2, 2)), "amax", mk=_T),
              _case("scalar", (), 0, _idx(0), _ten(()), "sum"),
              _case("alias_max", (3,), 0, _idx([0, 0]), _ten((2,)), "max", grad=False)]
    return cases


def _sr_dtype_filter(gen):
    def sample_inputs(device, dtype, requires_grad):
        for s in gen(device, dtype, requires_grad):
            if dtype is tp.bool and "mean" in s.args:
                continue
            yield s
    return sample_inputs


_add("scatter_reduce", tp.scatter_reduce, _scatter_reduce_ref, ALL, _sr_dtype_filter(_samples(*_sr_cases())),
     inplace=_method("scatter_reduce_"), aten=("scatter_reduce.two", "scatter_reduce_.two"),
     error_inputs=_errors(
         lambda: _err(RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, got bad",
                      _t((3, 4)), 0, index_tensor([[0]]), _t((1, 1)), "bad"),
         lambda: _err(RuntimeError, r"scatter\(\): Expected self.dtype to be equal to src.dtype", _t((3, 4)), 0,
                      index_tensor([[0]]), _t((1, 1), tp.float64), "sum"),
         lambda: _err(RuntimeError, "index 7 is out of bounds for dimension 1 with size 4", _t((3, 4)), 1,
                      index_tensor([[7]]), _t((1, 1)), "amax"),
         lambda: _err(NotImplementedError, "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'",
                      _t((3,), tp.bool), 0, index_tensor([0]), _t((1,), tp.bool), "mean")))


def _scatter_red_ref(x, dim, index, src=None, *, value=None, reduce):
    v = src if src is not None else value
    if not isinstance(v, np.ndarray):
        v = S.cast(np.full(index.shape, v), x.dtype)
    return _scatter_reduce_ref(x, dim, index, v, "sum" if reduce == "add" else "prod")


_entry("scatter.reduce", tp.scatter, _scatter_red_ref, ALL,
       (_case("add", (3, 4), 0, _idx(_IDX2), _ten((2, 4)), reduce="add"),
        _case("multiply", (3, 4), 0, _idx(_IDX2), _ten((2, 4)), reduce="multiply", mk=_T),
        _case("add_value", (3, 4), 1, _idx([[0, 0], [3, 1]]), value=2, reduce="add"),
        _case("multiply_value", (3, 4), 1, _idx([[0, 0], [3, 1]]), value=2, reduce="multiply", mk=_NC)),
       inplace=_method("scatter_"), supports_autograd=False,
       aten=("scatter_add_", "scatter_reduce_.two"),
       errors=(lambda: _err(RuntimeError, "reduce argument must be either add or multiply.", _t((3, 4)), 0,
                            index_tensor([[0]]), _t((1, 1)), reduce="max"),))


# -- searchsorted, bucketize, bincount, histc ----------------------------------------------------------
def _sorted_seq(shape):
    def make(d, rg, seed):
        lo = 0 if d is tp.uint8 else -9
        vals = np.sort(np.random.default_rng(seed + 90).integers(lo, 10, shape), axis=-1)
        return make_tensor(shape, d, values=vals)
    return make


def _ss_ref(seq, values, *, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    seq, values = _keys(seq), _keys(values) if isinstance(values, np.ndarray) else values
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, -1)
    v = np.asarray(values, dtype=np.float64 if S.is_float(seq.dtype) or isinstance(values, float) else None)
    if seq.ndim == 1:
        out = np.searchsorted(seq, v, side=side)
    else:
        out = np.stack([np.searchsorted(r, x, side=side) for r, x in
                        zip(seq.reshape(-1, seq.shape[-1]), v.reshape(seq.size // seq.shape[-1], -1))]).reshape(v.shape)
    return np.asarray(out, dtype=np.int32 if out_int32 else np.int64)


def _ss_case(name, seq_shape, vshape, **kw):
    def make(d, rg, seed):
        return SampleInput(_sorted_seq(seq_shape)(d, rg, seed), (make_tensor(vshape, d, seed=seed),),
                           dict(kw), name=name)
    make.grad = False
    return make


def _ss_sorter_case(d, rg, seed):
    vals = np.random.default_rng(seed).permutation(5)
    seq = make_tensor((5,), d, values=vals)
    return SampleInput(seq, (make_tensor((4,), d, values=np.array([0, 2, 3, 4])),),
                       {"sorter": index_tensor(np.argsort(vals, kind="stable"))}, name="sorter")


_ss_sorter_case.grad = False
_SS = (_ss_case("1d", (6,), (3, 4)), _ss_case("right", (6,), (5,), right=True),
       _ss_case("side_right", (6,), (5,), side="right", out_int32=True), _ss_case("batched", (2, 5), (2, 3)),
       _ss_case("zero_size", (4,), (0,)), _ss_sorter_case)
_add("searchsorted", tp.searchsorted, _ss_ref, NO_BOOL, _samples(*_SS), supports_autograd=False,
     aten=("searchsorted.Tensor",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"searchsorted\(\): side and right can't be set to opposites, got side of left "
                                    r"while right was True", _t((3,)), _t((2,)), side="left", right=True),
         lambda: _err(RuntimeError, r"searchsorted\(\): side can only be 'left' or 'right' but got bad", _t((3,)),
                      _t((2,)), side="bad"),
         lambda: _err(RuntimeError, r"searchsorted\(\): boundaries tensor should be 1 dimension or the first N-1 "
                                    r"dimensions of boundaries tensor and input value tensor must match",
                      _t((2, 3)), _t((3, 3))),
         lambda: _err(RuntimeError, r"searchsorted\(\): sorter index out of range", _t((3,)), _t((2,)),
                      sorter=index_tensor([0, 1, 5])),
         lambda: _err(RuntimeError, r"searchsorted\(\): sorter must be a tensor of long dtype but got dtype Float",
                      _t((3,)), _t((2,)), sorter=_t((3,)))))


def _ss_scalar(seq, value, **kw):
    return tp.searchsorted(seq, value.item(), **kw)


_ss_scalar.__doc__ = "``searchsorted`` with a Python number (the sample's 0-dim tensor's value) as the value."
_SCALAR_ITEM = {"vmap": "the sample's value becomes a Python number through .item(): data-dependent, nothing to "
                        "batch (searchsorted and isin with tensors are checked under vmap)"}
_add("searchsorted.scalar", _ss_scalar, lambda seq, v, **kw: _ss_ref(seq, v, **kw), NO_BOOL,
     _samples(_ss_case("scalar", (6,), ()), _ss_case("scalar_right", (6,), (), right=True)),
     supports_autograd=False, aten=("searchsorted.Tensor",), xfails=_SCALAR_ITEM)
_add("bucketize", tp.bucketize, lambda x, b, *, out_int32=False, right=False: _ss_ref(b, x, out_int32=out_int32,
                                                                                       right=right), NO_BOOL,
     lambda device, d, rg: iter([
         SampleInput(make_tensor((3, 4), d, seed=1), (_sorted_seq((5,))(d, rg, 1),), name="2d"),
         SampleInput(make_tensor((6,), d, seed=2), (_sorted_seq((5,))(d, rg, 2),), {"right": True}, name="right"),
         SampleInput(make_tensor((), d, seed=3), (_sorted_seq((5,))(d, rg, 3),), {"out_int32": True},
                     name="scalar")]),
     supports_autograd=False, aten=("searchsorted.Tensor",),
     error_inputs=_errors(lambda: _err(RuntimeError, r"boundaries tensor must be 1 dimension, but got dim\(2\)",
                                       _t((3,)), _t((3, 3)))))


def _bincount_ref(x, weights=None, minlength=0):
    if weights is None:
        return np.bincount(x.astype(np.int64), minlength=minlength).astype(np.int64)
    out = np.bincount(x.astype(np.int64), weights=weights.astype(np.float64), minlength=minlength)
    return out.astype(np.float32 if weights.dtype == np.float32 else np.float64)


def _bincount_samples(device, dtype, requires_grad):
    vals = np.random.default_rng(3).integers(0, 6, 10)
    yield SampleInput(make_tensor((10,), dtype, values=vals), name="plain")
    yield SampleInput(make_tensor((10,), dtype, values=vals), (None, 9), name="minlength")
    for wd in (tp.float32, tp.float64, tp.int64):
        yield SampleInput(make_tensor((10,), dtype, values=vals), (make_tensor((10,), wd, seed=4),),
                          name=f"weights_{wd.name}")
    yield SampleInput(make_tensor((0,), dtype), name="empty")


_add("bincount", tp.bincount, _bincount_ref, INTEGRAL, _bincount_samples, supports_autograd=False,
     aten=("bincount",), xfails=_DYNAMIC,
     error_inputs=_errors(
         lambda: _err(RuntimeError, "bincount only supports 1-d non-negative integral inputs.", index_tensor([-1, 2])),
         lambda: _err(RuntimeError, "bincount only supports 1-d non-negative integral inputs.",
                      index_tensor([[1, 2]])),
         lambda: _err(NotImplementedError, "\"bincount_cpu\" not implemented for 'Float'", _t((2,))),
         lambda: _err(RuntimeError, "minlength should be >= 0", index_tensor([1, 2]), None, -1),
         lambda: _err(RuntimeError, "weights should be 1-d and have the same length as input", index_tensor([1, 2]),
                      _t((3,)))))


def _histc_ref(x, bins=100, min=0, max=0):
    work = x.astype(np.float32) if x.dtype.name in ("float16", "bfloat16") else x
    lo, hi = float(min), float(max)
    if lo == hi and work.size:
        lo, hi = float(work.min()), float(work.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    v = work.reshape(-1)
    v = v[(v >= lo) & (v <= hi)]
    t = work.dtype.type
    pos = np.minimum(((v - t(lo)) * t(bins) / (t(hi) - t(lo))).astype(np.int64), bins - 1)
    return np.bincount(pos, minlength=bins).astype(x.dtype)


_entry("histc", tp.histc, _histc_ref, FLOATING,
       (_case("default", (5, 6), grad=False), _case("bins", (20,), 7, grad=False),
        _case("range", (4, 5), 4, -3, 3, mk=_T, grad=False), _case("constant", (4,), 3, mk={"low": 2, "high": 2},
                                                                      grad=False),
        _case("empty", (0,), 5, grad=False)),
       supports_autograd=False, aten=("histc",),
       errors=(lambda: _err(NotImplementedError, "\"histogram_cpu\" not implemented for 'Long'", index_tensor([1, 2]),
                            3),
               lambda: _err(RuntimeError, r"histogram\(\): bins must be > 0, but got 0 for dimension 0", _t((2,)), 0),
               lambda: _err(RuntimeError, "histc: max must be larger than min", _t((2,)), 3, 3, 1)))


# -- equal, isin ------------------------------------------------------------------------------------------
def _equal_ref(x, y):
    return bool(x.shape == y.shape and np.array_equal(_f64(x), _f64(y)))


def _equal_samples(device, dtype, requires_grad):
    x = make_tensor((3, 4), dtype, seed=1)
    yield SampleInput(x, (x.clone(),), name="same")
    yield SampleInput(x, (make_tensor((3, 4), dtype, seed=2),), name="different")
    yield SampleInput(x, (x[:2].clone(),), name="other_shape")
    yield SampleInput(x, (x.to(tp.float64),), name="other_dtype")
    yield SampleInput(make_tensor((3, 4), dtype, seed=1, noncontiguous=True), (x.clone(),), name="stepped")


_add("equal", tp.equal, _equal_ref, ALL, _equal_samples, supports_autograd=False, aten=("eq.Tensor", "all.dims"),
     xfails={"vmap": "returns a Python bool computed from the data (.item()): data-dependent, cannot be vmapped"})


def _isin_ref(x, t, *, assume_unique=False, invert=False):
    if not isinstance(t, np.ndarray):
        t = np.asarray(t)
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    return np.isin(_f64(x), _f64(t), invert=invert)


_entry("isin", tp.isin, _isin_ref, NO_BOOL,
       (_case("plain", (3, 4), _ten((5,)), mk={"low": 0, "high": 5}, grad=False),
        _case("invert", (3, 4), _ten((2, 2)), invert=True, mk={"low": 0, "high": 5}, grad=False),
        _case("other_dtype", (3, 4), _idx([1, 3]), mk={"low": 0, "high": 5}, grad=False),
        _case("scalar_test", (3, 4), 2, mk={"low": 0, "high": 5}, grad=False),
        _case("many_tests", (3, 4), _ten((40,)), mk={"low": 0, "high": 5}, grad=False),
        _case("empty_test", (3,), _ten((0,)), grad=False), _case("assume_unique", (4,), _ten((3,)),
                                                                 assume_unique=True, grad=False)),
       supports_autograd=False, aten=("eq.Tensor", "any.dims"),
       errors=(lambda: _err(RuntimeError, r"Unsupported input type encountered for isin\(\): Bool",
                            _t((2,), tp.bool), _t((2,))),))
_add("isin.scalar_elements", lambda x, t, **kw: tp.isin(x.item(), t, **kw),
     lambda x, t, **kw: np.asarray(_isin_ref(x, t, **kw)), NO_BOOL,
     _samples(_case("scalar", (), _ten((5,)), mk={"low": 0, "high": 3}, grad=False)), supports_autograd=False,
     aten=("eq.Tensor", "any.dims"), xfails=_SCALAR_ITEM)
