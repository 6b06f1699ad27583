"""Op database entries of the tensor and shape ops of :mod:`tensorplug.ops.shape_more` and the matrix
properties ``T``, ``H``, ``mT``, ``mH``.

Imported at the end of :mod:`.op_db`; entries go straight into :data:`~.opinfo.OP_DB`. References are
numpy (the ``*_scatter`` family, ``index_reduce``, ``renorm``, ``block_diag`` written out here). The
sample makers of :mod:`.op_db_tensorops` (``_case``, ``_samples``, ``_ten``, ``_idx``) build the samples.
The strided factories are random entries (uninitialized memory): checked by shape and dtype.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

import tensorplug as tp
from tensorplug import Tensor

from . import samples as S
from .opinfo import OP_DB, OpInfo, SampleInput
from .samples import ALL, FLOATING, NO_BOOL, make_tensor, index_tensor, small_when_grad
from .samples import error_input as _err, errors_of as _errors

_HOST = tp.device("cpu")  # a factory sample's device: the suite moves it to the device under test
from .op_db_tensorops import _case, _samples, _ten, _idx, _on_copy, _T, _NC

_FL = (tp.float32, tp.float64)
_DYNAMIC = {"vmap": "the output shape depends on the data: vmap refuses the op, as PyTorch's does"}
_READS = {"vmap": "the op reads index values to check their bounds (or the weights' signs), which a batched "
                  "tensor cannot give"}


def _add(name, op, ref, dtypes, samples, **kw):
    info = OpInfo(name=name, op=op, ref=ref, dtypes=tuple(dtypes), sample_inputs=small_when_grad(samples), **kw)
    OP_DB.append(info)
    return info


def _entry(name, op, ref, dtypes, cases, errors=(), **kw):
    return _add(name, op, ref, dtypes, _samples(*cases), error_inputs=_errors(*errors) if errors else None, **kw)


def _t(shape, dtype=tp.float32, seed=0, **kw):
    return make_tensor(shape, dtype, seed=seed, **kw)


def _copy(x):
    return np.array(x, copy=True)


def _method(name):
    return getattr(Tensor, name)


# -- matrix properties ---------------------------------------------------------------------------------
def _prop(name):
    def op(x):
        return getattr(x, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``x.{name}``."
    return op


_MATS = (_case("square", (3, 3)), _case("wide", (2, 4), mk=_T), _case("noncontiguous", (3, 2), mk=_NC))
_BATCHES = (_case("batch", (2, 3, 4)), _case("matrix", (3, 2), mk=_T), _case("4d", (2, 1, 2, 3), mk=_NC))
_entry("T", _prop("T"), lambda x: _copy(x.T), ALL, _MATS + (_case("scalar", ()),), is_view=True, aten=("permute",))
_entry("H", _prop("H"), lambda x: _copy(x.T.conj()), ALL, _MATS + (_case("scalar", ()),), is_view=True,
       aten=("permute",), errors=(lambda: _err(RuntimeError, r"tensor.H is only supported on matrices \(2-D tensors\). "
                                                              r"Got 3-D tensor. For batches of matrices, consider "
                                                              r"using tensor.mH", _t((2, 3, 4))),
                                  lambda: _err(RuntimeError, r"Got 1-D tensor.$", _t((3,)))))
_entry("mT", _prop("mT"), lambda x: _copy(np.swapaxes(x, -1, -2)), ALL, _BATCHES, is_view=True, aten=("permute",),
       errors=(lambda: _err(RuntimeError, "tensor.mT is only supported on matrices or batches of matrices. Got 1-D",
                            _t((3,))),))
_entry("mH", _prop("mH"), lambda x: _copy(np.swapaxes(x, -1, -2).conj()), ALL, _BATCHES, is_view=True,
       aten=("permute",),
       errors=(lambda: _err(RuntimeError, "tensor.mH is only supported on matrices or batches of matrices. Got 0-D",
                            _t(())),))

# -- conversions ------------------------------------------------------------------------------------------
_CONV = (_case("matrix", (2, 3)), _case("scalar", ()), _case("transposed", (3, 2), mk=_T))
_entry("cdouble", _method("cdouble"), lambda x, **kw: S.f64(x).astype(np.complex128) if x.dtype != np.bool_
       else x.astype(np.complex128), ALL, _CONV, aten=("_to_copy",), supports_autograd=False)
_entry("cfloat", _method("cfloat"), lambda x, **kw: S.f64(x).astype(np.complex64) if x.dtype != np.bool_
       else x.astype(np.complex64), ALL, _CONV, aten=("_to_copy",), supports_autograd=False)
_entry("resolve_neg", tp.resolve_neg, _copy, ALL, (_case("matrix", (3, 4)), _case("scalar", ())), is_view=True)


def _scalar_tensor_samples(device, dtype, requires_grad):
    for i, v in enumerate((-5, 0, 1, 2.5)):
        if dtype is tp.bool or not dtype.is_floating_point and isinstance(v, float):
            v = int(v)
        yield SampleInput(v, (), {"dtype": dtype, "device": _HOST}, name=str(i))
    yield SampleInput(3, (), {"device": _HOST}, name="default_dtype")


_add("scalar_tensor", tp.scalar_tensor, lambda s, dtype=None: S.cast(s, S.np_dtype(dtype) if dtype is not None
                                                                   else np.float32),
     ALL, _scalar_tensor_samples, supports_autograd=False, aten=("full",),
     error_inputs=_errors(lambda: _err(RuntimeError, "value cannot be converted to type float without overflow",
                                       1 + 2j)))


# -- stacking -----------------------------------------------------------------------------------------
def _list_fn(fn, star):
    def op(tensors, **kw):
        return fn(*tensors, **kw) if star else fn(tensors, **kw)
    op.__name__ = op.__qualname__ = fn.__name__
    op.__doc__ = fn.__doc__
    return op


def _lists(*shape_lists, dtype_of=None):
    def sample_inputs(device, dtype, requires_grad):
        for i, shapes in enumerate(shape_lists):
            ts = [make_tensor(s, dtype, seed=10 * i + k, requires_grad=requires_grad,
                              **(_T if k == 1 and len(s) == 2 else {})) for k, s in enumerate(shapes)]
            yield SampleInput(ts, name=str(shapes))
    return sample_inputs


def _column_stack_ref(xs):
    return np.column_stack(xs)


_add("column_stack", tp.column_stack, _column_stack_ref, ALL,
     _lists([(5, 2), (5, 3)], [(5,), (5, 4)], [(), (1, 5)], [(3,), (3,)]), aten=("cat",),
     error_inputs=_errors(lambda: _err(RuntimeError, "column_stack expects a non-empty TensorList", [])))


def _block_diag_ref(xs):
    mats = [x.reshape(1, 1) if x.ndim == 0 else x.reshape(1, -1) if x.ndim == 1 else x for x in xs]
    dt = np.result_type(*mats) if mats else np.float32
    out = np.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)) if mats else (1, 0), dt)
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


_add("block_diag", _list_fn(tp.block_diag, True), _block_diag_ref, ALL,
     _lists([(1, 5), (2, 5), (3, 5)], [(5, 1), (5, 2)], [(1,), (2,), ()], [(2, 3), (4,)], [(2, 2)], []),
     aten=("copy_",),
     error_inputs=_errors(lambda: _err(RuntimeError, "torch.block_diag: Input tensors must have 2 or fewer "
                                                     "dimensions. Input 1 has 3 dimensions",
                                       [_t((2, 2)), _t((2, 2, 2))])))


def _cartesian_ref(xs):
    if len(xs) == 1:
        return _copy(xs[0])
    rows = list(itertools.product(*[x.tolist() for x in xs]))
    return np.array(rows, dtype=xs[0].dtype).reshape(len(rows), len(xs))


_add("cartesian_prod", _list_fn(tp.cartesian_prod, True), _cartesian_ref, ALL,
     _lists([(3,)], [(2,), (3,)], [(2,), (1,), (3,)], [(0,), (2,)]), aten=("stack",),
     error_inputs=_errors(lambda: _err(RuntimeError, r"Expect a 1D vector, but got shape \[2, 2\]",
                                       [_t((2, 2)), _t((2,))])))


def _combinations_ref(x, r=2, with_replacement=False):
    if r == 0:
        return np.empty((0,), x.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = [list(c) for c in pick(x.tolist(), r)]
    return np.array(rows, dtype=x.dtype).reshape(len(rows), r)


_entry("combinations", tp.combinations, _combinations_ref, ALL,
       (_case("pairs", (4,)), _case("triples", (4,), 3), _case("replacement", (3,), with_replacement=True),
        _case("one", (3,), 1), _case("too_many", (2,), 3), _case("zero", (3,), 0, grad=False)),
       aten=("index_select",),
       errors=(lambda: _err(RuntimeError, r"Expect a 1D vector, but got shape \[\]", _t(())),
               lambda: _err(RuntimeError, "Expect a non-negative number, but got -1", _t((3,)), -1)))
_entry("diagflat", tp.diagflat, lambda x, offset=0: np.diagflat(x, offset), ALL,
       (_case("vector", (3,)), _case("matrix", (2, 2), mk=_T), _case("scalar", ()), _case("upper", (2,), 1),
        _case("lower", (3,), -2)), aten=("diag",))

# -- products, norms, statistics ----------------------------------------------------------------------
_entry("inner", tp.inner, lambda a, b: _copy(np.inner(a, b)), NO_BOOL,
       (_case("vectors", (5,), _ten((5,))), _case("matrices", (2, 3), _ten((4, 3))),
        _case("scalar", (), _ten((2, 3))), _case("batched", (2, 2, 3), _ten((3,)), mk=_T)),
       aten=("tensordot",), atol=1e-4, rtol=1e-4,
       errors=(lambda: _err(RuntimeError, r"inner\(\) the last dimension must match on both input tensors but got "
                                          r"shapes \[2, 3\] and \[2, 4\]", _t((2, 3)), _t((2, 4))),))


def _vdot_ref(a, b):
    return _copy(np.asarray(np.vdot(a, b), dtype=np.result_type(a, b)))


_entry("vdot", tp.vdot, _vdot_ref, NO_BOOL, (_case("vectors", (5,), _ten((5,))), _case("empty", (0,), _ten((0,)))),
       aten=("dot",), atol=1e-4, rtol=1e-4,
       errors=(lambda: _err(RuntimeError, "dot : expected both vectors to have same dtype, but found Float and Half",
                            _t((3,)), _t((3,), tp.float16)),
               lambda: _err(RuntimeError, "1D tensors expected, but got 2D and 1D tensors", _t((1, 1)), _t((3,))),
               lambda: _err(RuntimeError, "inconsistent tensor size", _t((9,)), _t((3,)))))
_entry("msort", tp.msort, lambda x: np.sort(x, axis=0) if x.ndim else _copy(x), ALL,
       (_case("matrix", (4, 3)), _case("3d", (3, 2, 2), mk=_NC), _case("scalar", ())), aten=("sort",))


def _dist_ref(a, b, p=2):
    d = S.f64(a) - S.f64(b)
    d = np.abs(d).reshape(-1)
    if p == math.inf:
        v = d.max() if d.size else 0.0
    elif p == -math.inf:
        v = d.min() if d.size else math.inf
    elif p == 0:
        v = float(np.count_nonzero(d))
    else:
        v = (d ** p).sum() ** (1.0 / p)
    return S.cast(np.asarray(v), np.result_type(a, b))


_entry("dist", tp.dist, _dist_ref, FLOATING,
       (_case("p2", (3, 4), _ten((3, 4))), _case("p1", (3, 4), _ten((4,)), 1), _case("p3", (2, 3), _ten(()), 3),
        _case("inf", (2, 3), _ten((2, 1)), math.inf), _case("p0", (2, 3), _ten((2, 3)), 0, grad=False)),
       aten=("linalg_vector_norm",), atol=1e-2, rtol=1e-2,
       errors=(lambda: _err(RuntimeError, "norm\\(\\): input dtype should be either floating point or complex. Got "
                                          "Long instead.", _t((3,), tp.int64), _t((3,), tp.int64)),))


def _renorm_ref(x, p, dim, maxnorm):
    v = S.f64(x)
    d = dim % x.ndim
    axes = tuple(i for i in range(x.ndim) if i != d)
    a = np.abs(v)
    norm = a.max(axis=axes, keepdims=True) if p == math.inf else (a ** p).sum(axis=axes, keepdims=True) ** (1 / p)
    factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return S.cast(v * factor, x.dtype)


_entry("renorm", tp.renorm, _renorm_ref, FLOATING,
       (_case("p2", (3, 4, 2), 2, 1, 5.0), _case("neg_dim", (3, 4), 2, -1, 4.0, mk=_T),
        _case("p1", (3, 3), 1, 0, 10.0), _case("inf", (2, 3), math.inf, 0, 3.0),
        _case("none_scaled", (2, 3), 2, 0, 1e4)),
       inplace=_method("renorm_"), aten=("linalg_vector_norm",), atol=1e-2, rtol=1e-2,
       errors=(lambda: _err(RuntimeError, "renorm: input needs at least 2 dimensions, got 0 dimensions",
                            _t(()), 0.5, 0, 1.0),
               lambda: _err(RuntimeError, "renorm: non-positive-norm not supported", _t((2, 2)), 0, 0, 1.0),
               lambda: _err(RuntimeError, "renorm: expected maxnorm to be >= 0 but got -1", _t((2, 2)), 2, 0, -1.0)))


def _aweights(d, rg, seed):
    return make_tensor((4,), d if d.is_floating_point else tp.float32, low=0.5, high=2.0, seed=seed + 60)


def _cov_ref(x, correction=1, fweights=None, aweights=None):
    v = S.f64(x).reshape(1, -1) if x.ndim < 2 else S.f64(x)
    out = np.cov(v, ddof=correction, fweights=fweights, aweights=aweights)
    dt = x.dtype if S.is_float(x.dtype) else np.float32
    return S.cast(np.asarray(out).reshape(()) if v.shape[0] == 1 else out, dt)


_COV_CASES = (_case("rows", (3, 5)), _case("vector", (6,)), _case("correction0", (2, 4), correction=0),
              _case("fweights", (2, 4), fweights=_idx([1, 2, 0, 3])),
              _case("aweights", (3, 4), aweights=_aweights),
              _case("both", (2, 4), correction=2, fweights=_idx([1, 2, 1, 3]), aweights=_aweights),
              _case("transposed", (4, 3), mk=_T))
_entry("cov", tp.cov, _cov_ref, NO_BOOL, _COV_CASES, aten=("mm",), atol=1e-3, rtol=1e-3, xfails=_READS,
       errors=(lambda: _err(RuntimeError, "cov\\(\\): expected input to have two or fewer dimensions but got an input "
                                          "with 3 dimensions", _t((2, 2, 2))),
               lambda: _err(RuntimeError, "cov\\(\\): expected fweights to have integral dtype but got fweights with "
                                          "Float dtype", _t((5,)), fweights=_t((5,))),
               lambda: _err(RuntimeError, "cov\\(\\): expected aweights to have floating point dtype but got aweights "
                                          "with Long dtype", _t((5,)), aweights=_t((5,), tp.int64)),
               lambda: _err(RuntimeError, "cov\\(\\): expected fweights to have the same numel as there are "
                                          "observations in the input but got 1 != 5", _t((5,)),
                            fweights=index_tensor([1])),
               lambda: _err(RuntimeError, "cov\\(\\): fweights cannot be negative", _t((3,)),
                            fweights=index_tensor([1, -1, 2])),
               lambda: _err(RuntimeError, "cov\\(\\): expected aweights to have one or fewer dimensions but got "
                                          "aweights with 2 dimensions", _t((5,)), aweights=_t((5, 5)))))


def _corrcoef_ref(x):
    v = S.f64(x)
    out = np.corrcoef(v)
    dt = x.dtype if S.is_float(x.dtype) else np.float32
    return S.cast(np.clip(np.asarray(out), -1, 1), dt)


_entry("corrcoef", tp.corrcoef, _corrcoef_ref, NO_BOOL,
       (_case("rows", (3, 5)), _case("vector", (6,)), _case("pair", (2, 4), mk=_T)), aten=("mm",), atol=1e-3,
       rtol=1e-3)

# -- flat indexing ------------------------------------------------------------------------------------------
_OUT_OF_RANGE = r"out of range: tried to access index 9 on a tensor of 9 elements."
_entry("take", tp.take, lambda x, i: _copy(np.take(x, i)), ALL,
       (_case("matrix", (3, 3), _idx([0, 8, -1, 4])), _case("index_2d", (2, 5), _idx([[1, 2], [9, 0]]), mk=_T),
        _case("scalar", (), _idx(0)), _case("empty", (0,), _idx([])), _case("noncontiguous", (3, 4), _idx([5, 1]),
                                                                           mk=_NC)),
       aten=("index_select",), xfails=_READS,
       errors=(lambda: _err(IndexError, _OUT_OF_RANGE, _t((3, 3)), index_tensor([9])),
               lambda: _err(RuntimeError, "take\\(\\): Expected a long tensor for index, but got Int", _t((3,)),
                            index_tensor([1], tp.int32)),
               lambda: _err(IndexError, "take\\(\\): tried to take from an empty tensor", _t((0,)),
                            index_tensor([0]))))


def _put_ref(x, index, source, accumulate=False):
    out = _copy(x).reshape(-1)
    idx = index.reshape(-1) % max(out.size, 1)
    if accumulate:
        np.add.at(out, idx, source.reshape(-1))
    else:
        out[idx] = source.reshape(-1)
    return out.reshape(x.shape)


_entry("put", tp.put, _put_ref, ALL,
       (_case("matrix", (3, 3), _idx([0, 8, -2]), _ten((3,))),
        _case("accumulate", (3, 3), _idx([1, 1, 4]), _ten((3,)), True),
        _case("source_2d", (2, 4), _idx([7, 0, 3, 2]), _ten((2, 2)), mk=_T),
        _case("scalar", (), _idx(0), _ten((1,)), True), _case("empty_index", (3,), _idx([]), _ten((0,)))),
       inplace=_method("put_"), aten=("index_put_",), xfails=_READS,
       errors=(lambda: _err(IndexError, _OUT_OF_RANGE, _t((3, 3)), index_tensor([9]), _t((1,))),
               lambda: _err(RuntimeError, "put_\\(\\): Expected a long tensor for index, but got Int", _t((3,)),
                            index_tensor([1], tp.int32), _t((1,))),
               lambda: _err(IndexError, "put_\\(\\): Expected source and index to have the same number of elements, "
                                        "but got source.numel\\(\\) = 2, index.numel\\(\\) = 1", _t((3,)),
                            index_tensor([1]), _t((2,))),
               lambda: _err(RuntimeError, "put_\\(\\): self and source expected to have the same dtype, but got "
                                          "self.dtype = Float and source.dtype = Double", _t((3,)), index_tensor([1]),
                            _t((1,), tp.float64))))


def _unravel_ref(indices, shape):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not shape:
        return ()
    n = int(np.prod(shape))
    flat = np.asarray(indices, np.int64) % n if n else np.asarray(indices, np.int64)
    return tuple(np.asarray(c, np.int64) for c in np.unravel_index(flat, shape))


def _unravel_samples(device, dtype, requires_grad):
    for i, (vals, shape) in enumerate((([[5, 0, 11], [7, 3, 1]], (3, 4)), (4, (2, 3)), ([0, 1, 29], (2, 3, 5)),
                                       ([-1, -6], (2, 3)), ([3], 6), ([], (2, 2)))):
        yield SampleInput(index_tensor(vals, dtype), (shape,), name=str(i))


_add("unravel_index", tp.unravel_index, _unravel_ref, (tp.int64, tp.int32, tp.int16, tp.uint8), _unravel_samples,
     supports_autograd=False, aten=("floor_divide", "remainder"),
     error_inputs=_errors(
         lambda: _err(TypeError, "expected 'indices' to be integer dtype, but got", _t((2,)), (2, 3)),
         lambda: _err(ValueError, r"'shape' cannot have negative values, but got \(2, -3\)", index_tensor([1]),
                      (2, -3))))


def _nonzero_static_ref(x, *, size, fill_value=-1):
    nz = np.argwhere(x).astype(np.int64)
    if nz.shape[0] >= size:
        return _copy(nz[:size])
    pad = np.full((size - nz.shape[0], x.ndim), fill_value, np.int64)
    return np.concatenate([nz, pad], 0)


_entry("nonzero_static", tp.nonzero_static, _nonzero_static_ref, ALL,
       (_case("cut", (3, 4), size=2, grad=False), _case("pad", (2, 3), size=10, fill_value=7, grad=False, mk=_T),
        _case("scalar", (), size=3, grad=False), _case("zero", (4,), size=0, grad=False)),
       supports_autograd=False, xfails=_DYNAMIC,
       errors=(lambda: _err(RuntimeError, "nonzero_static: 'size' must be an non-negative integer", _t((2,)),
                            size=-1),))


def _sum_to_size_ref(x, *size):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    size = tuple(size)
    if not size:
        return np.asarray(x.sum(dtype=np.int64 if x.dtype.kind in "biu" else x.dtype))
    lead = x.ndim - len(size)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(size) if s == 1 and x.shape[i + lead] != 1)
    if not dims:
        return _copy(x)
    dt = np.int64 if x.dtype.kind in "biu" else x.dtype
    return S.cast(S.f64(x).sum(axis=dims, keepdims=True).reshape(size) if dt != np.int64
                  else x.astype(np.int64).sum(axis=dims, keepdims=True).reshape(size), dt)


_entry("sum_to_size", _method("sum_to_size"), _sum_to_size_ref, ALL,
       (_case("lead", (2, 3, 4), 3, 4), _case("keep_ones", (2, 3, 4), (1, 3, 1)), _case("list", (4, 3), [1, 3], mk=_T),
        _case("all", (3, 2), 1, 1), _case("same", (3, 2), 3, 2), _case("empty_size", (2,), ())),
       aten=("sum.dim_IntList",), atol=1e-4, rtol=1e-4,
       errors=(lambda: _err(RuntimeError, r"size \{\[10, 10\]\} is not expandable to size \{\[10, 5, 10\]\}.",
                            _t((10, 5, 10)), 10, 10),))


def _pad_ref(x, pad, value=0):
    pad = list(pad)
    out = _copy(x)
    for k in range(len(pad) // 2):
        d = x.ndim - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        sl = [slice(None)] * x.ndim
        sl[d] = slice(max(-lo, 0), out.shape[d] - max(-hi, 0))
        out = out[tuple(sl)]
        widths = [(0, 0)] * x.ndim
        widths[d] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=S.cast(value, x.dtype))
    return _copy(out)


_entry("constant_pad_nd", tp.constant_pad_nd, _pad_ref, ALL,
       (_case("last", (2, 3), (1, 2)), _case("two", (2, 3), (0, 2, 1, 1), 1),
        _case("negative", (5, 3), (-1, -1, 1, 1), 1, mk=_T),
        _case("empty", (0, 3), (1, 1), 1)), aten=("constant_pad_nd",),
       errors=(lambda: _err(RuntimeError, "Length of pad must be even but instead it equals 3", _t((2, 3)), (1, 2, 3)),
               lambda: _err(RuntimeError, "Length of pad should be no more than twice the number of dimensions of the "
                                          "input. Pad length is 6while the input has 2dimensions.", _t((2, 3)),
                            (1, 1, 1, 1, 1, 1))))


def _chunk_ref(x, chunks, dim=0):
    n = x.shape[dim]
    size = -(-n // chunks) if n else 0
    bounds = list(range(size, n, size)) if size else []
    return tuple(_copy(p) for p in np.split(x, bounds, axis=dim))


def _split_ref(x, split_size, dim=0):
    n = x.shape[dim]
    bounds = list(range(split_size, n, split_size))
    return tuple(_copy(p) for p in np.split(x, bounds, axis=dim))


_entry("unsafe_chunk", tp.unsafe_chunk, _chunk_ref, ALL,
       (_case("even", (4, 3), 2), _case("uneven", (5, 3), 2, 1, mk=_T), _case("neg_dim", (3, 5), 5, -1)),
       aten=("chunk",))
_entry("unsafe_split", tp.unsafe_split, _split_ref, ALL,
       (_case("even", (4, 3), 2), _case("uneven", (5, 3), 2, 1, mk=_T), _case("neg_dim", (3, 5), 3, -1)),
       aten=("split.Tensor",))


# -- the *_scatter family ---------------------------------------------------------------------------------
def _diag_scatter_ref(x, src, offset=0, dim1=0, dim2=1):
    out = _copy(x)
    moved = np.moveaxis(out, (dim1, dim2), (-2, -1))
    n, m = moved.shape[-2:]
    i = np.arange(max(min(n, m - offset) if offset >= 0 else min(n + offset, m), 0))
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    moved[..., r, c] = src
    return out


_entry("diagonal_scatter", tp.diagonal_scatter, _diag_scatter_ref, ALL,
       (_case("main", (4, 4), _ten((4,))), _case("upper", (3, 5), _ten((3,)), 2), _case("lower", (3, 5), _ten((2,)), -1,
                                                                                    mk=_T),
        _case("dims", (2, 3, 3), _ten((2, 2)), 1, 1, 2)),
       aten=("copy_",),
       errors=(lambda: _err(RuntimeError, r"expected src to have a size equal to the slice of self. src size = \[4\], "
                                          r"slice size = \[3\]", _t((3, 5)), _t((4,))),))


def _select_scatter_ref(x, src, dim, index):
    out = _copy(x)
    sl = [slice(None)] * x.ndim
    sl[dim] = index
    out[tuple(sl)] = src
    return out


_entry("select_scatter", tp.select_scatter, _select_scatter_ref, ALL,
       (_case("middle", (3, 4, 2), _ten((3, 2)), 1, 2), _case("neg", (3, 4), _ten((3,)), -1, -1, mk=_T),
        _case("vector", (5,), _ten(()), 0, 2)),
       aten=("copy_",),
       errors=(lambda: _err(RuntimeError, r"expected src to have a size equal to the slice of self. src size = \[4\], "
                                          r"slice size = \[5\]", _t((3, 5)), _t((4,)), 0, 0),))


def _slice_scatter_ref(x, src, dim=0, start=None, end=None, step=1):
    out = _copy(x)
    sl = [slice(None)] * x.ndim
    sl[dim] = slice(start, end, step)
    out[tuple(sl)] = src
    return out


_entry("slice_scatter", tp.slice_scatter, _slice_scatter_ref, ALL,
       (_case("rows", (6, 3), _ten((3, 3)), 0, 2, 5), _case("step", (4, 6), _ten((4, 2)), 1, 1, None, 3, mk=_T),
        _case("all", (3, 2), _ten((3, 2))), _case("negative", (3, 5), _ten((3, 3)), 1, -3)),
       aten=("copy_",),
       errors=(lambda: _err(RuntimeError, r"expected src to have a size equal to the slice of self. src size = "
                                          r"\[3, 2\], slice size = \[3, 3\]", _t((3, 5)), _t((3, 2)), 1, 0, 3),))


def _as_strided_scatter_ref(x, src, size, stride, storage_offset=None):
    out = _copy(x).reshape(-1)
    off = storage_offset or 0
    pos = np.full((), off, np.int64)
    for n, st in zip(size, stride):
        pos = pos[..., None] + np.arange(n) * st
    out[pos.reshape(-1)] = src.reshape(-1)
    return out.reshape(x.shape)


_entry("as_strided_scatter", tp.as_strided_scatter, _as_strided_scatter_ref, ALL,
       (_case("block", (3, 3), _ten((2, 2)), (2, 2), (1, 2)), _case("offset", (3, 3), _ten((2, 2)), (2, 2), (1, 2),
                                                                    storage_offset=1),
        _case("rows", (16,), _ten((2, 2, 2)), (2, 2, 2), (8, 4, 2)), _case("scalar", (1,), _ten(()), (), ())),
       aten=("as_strided", "copy_"), xfails={"vmap": "an as_strided view addresses one example's memory: vmap "
                                                     "does not batch it, as PyTorch's does not"},
       errors=(lambda: _err(RuntimeError, "out of bounds for storage of size 64", _t((4, 4)), _t((2, 2)), [2, 2],
                            [200, 200]),
               lambda: _err(RuntimeError, r"src size = \[3\], slice size = \[2, 2\]", _t((3, 5)), _t((3,)),
                            (2, 2), (1, 2))))


# -- index_reduce -------------------------------------------------------------------------------------------
def _index_reduce_ref(x, dim, index, source, reduce, include_self=True):
    shaped = x.reshape(1) if x.ndim == 0 else x
    src = source.reshape(1) if source.ndim == 0 else source
    out = S.f64(shaped).copy() if S.is_float(x.dtype) else shaped.astype(np.int64)
    s = S.f64(src) if S.is_float(x.dtype) else src.astype(np.int64)
    dim = dim % shaped.ndim
    outm, sm = np.moveaxis(out, dim, 0), np.moveaxis(s, dim, 0)
    groups = {}
    for j, i in enumerate(index.reshape(-1).tolist()):
        groups.setdefault(i, []).append(sm[j])
    for i, vals in groups.items():
        vals = ([outm[i].copy()] if include_self else []) + vals
        st = np.stack(vals)
        if reduce == "prod":
            v = st.prod(axis=0)
        elif reduce == "amax":
            v = st.max(axis=0)
        elif reduce == "amin":
            v = st.min(axis=0)
        else:
            v = st.sum(axis=0) / len(vals) if S.is_float(x.dtype) else st.sum(axis=0) // len(vals)
        outm[i] = v
    return S.cast(out.reshape(x.shape), x.dtype)


def _index_reduce_cases(reduce):
    return (_case("rows", (4, 3), 0, _idx([1, 3, 1]), _ten((3, 3)), reduce),
            _case("cols", (3, 4), 1, _idx([0, 0, 2]), _ten((3, 3)), reduce, include_self=False, mk=_T),
            _case("scalar", (), 0, _idx([0]), _ten(()), reduce),
            _case("int32_index", (5,), 0, _idx([4, 1], tp.int32), _ten((2,)), reduce, include_self=False))


for _r in ("prod", "mean", "amax", "amin"):
    _entry(f"index_reduce.{_r}", tp.index_reduce, _index_reduce_ref, NO_BOOL, _index_reduce_cases(_r),
           inplace=_method("index_reduce_"), aten=("scatter_reduce_.two",), xfails=_READS, atol=1e-3, rtol=1e-3,
           errors=(lambda: _err(RuntimeError, "index_reduce\\(\\): Expected reduce to be one of prod, mean, amax or "
                                              "amin but got sum.", _t((3,)), 0, index_tensor([0]), _t((1,)), "sum"),
                   lambda: _err(IndexError, "index out of range in self", _t((3,)), 0, index_tensor([5]), _t((1,)),
                                "prod"),
                   lambda: _err(RuntimeError, "index_reduce_\\(\\): self \\(Float\\) and source \\(Double\\) must have "
                                              "the same scalar type", _t((3,)), 0, index_tensor([0]),
                                _t((1,), tp.float64), "prod"),
                   lambda: _err(RuntimeError, "index_reduce_\\(\\): Number of indices \\(1\\) should be equal to "
                                              "source.size\\(dim\\): \\(2\\), for dim: 0", _t((3, 2)), 0,
                                index_tensor([0]), _t((2, 2)), "prod")))


# -- strided factories, resize ---------------------------------------------------------------------------
def _zeroed(fn, name):
    """``fn`` then ``zero_``: the shape, dtype and device are the factory's, the values are not."""
    def op(*args, **kwargs):
        return fn(*args, **kwargs).zero_()
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{name}`` then ``zero_`` (its memory is uninitialized)."
    return op


def _zeros_ref(size, *args, dtype=None):
    return np.zeros(size, S.np_dtype(dtype) if dtype is not None else np.float32)


def _factory_samples(device, dtype, requires_grad):
    for i, (size, stride) in enumerate((((2, 3), (1, 2)), ((4,), (2,)), ((), ()), ((2, 0, 3), (1, 1, 1)))):
        yield SampleInput(size, (stride,), {"dtype": dtype, "device": _HOST}, name=str(i))


_add("empty_strided", _zeroed(tp.empty_strided, "empty_strided"), _zeros_ref, ALL, _factory_samples,
     supports_autograd=False, aten=("empty.memory_format", "as_strided"),
     error_inputs=_errors(lambda: _err(RuntimeError, r"dimensionality of sizes \(2\) must match dimensionality of "
                                                     r"strides \(1\)", (2, 3), (1,))))


def _permuted_samples(device, dtype, requires_grad):
    for i, (size, order) in enumerate((((2, 3, 4), (2, 0, 1)), ((3,), (0,)), ((), ()), ((1, 3, 5), (1, 2, 0)))):
        yield SampleInput(size, (order,), {"dtype": dtype, "device": _HOST}, name=str(i))


_add("empty_permuted", _zeroed(tp.empty_permuted, "empty_permuted"), _zeros_ref, ALL, _permuted_samples,
     supports_autograd=False, aten=("empty.memory_format", "permute"),
     error_inputs=_errors(
         lambda: _err(RuntimeError, "Number of dimensions in size does not match the length of the physical_layout",
                      (2,), (0, 1)),
         lambda: _err(RuntimeError, "Dimension out of range", (2,), (3,)),
         lambda: _err(RuntimeError, "Duplicate dim not allowed", (2, 3), (0, 0))))


def _new_strided_samples(device, dtype, requires_grad):
    for i, (size, stride) in enumerate((((2, 3), (1, 2)), ((4,), (2,)), ((), ()))):
        yield SampleInput(make_tensor((2, 2), dtype, seed=i), (size, stride), name=str(i))
    yield SampleInput(make_tensor((2,), dtype), ((3,), (1,)), {"dtype": tp.int16}, name="dtype")


_add("new_empty_strided", _zeroed(_method("new_empty_strided"), "new_empty_strided"),
     lambda x, size, stride, dtype=None: np.zeros(size, x.dtype if dtype is None else S.np_dtype(dtype)), ALL,
     _new_strided_samples, supports_autograd=False, aten=("empty.memory_format", "as_strided"))


def _resize_ref(x, *size):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    n = int(np.prod(size))
    return _copy(x.reshape(-1)[:n].reshape(size))


_NO_VMAP_RESIZE = {"vmap": "resize_ replaces the tensor's memory in place: vmap does not batch it, as PyTorch's "
                           "does not"}
_entry("resize_", _on_copy("resize_"), _resize_ref, ALL,
       (_case("matrix", (5, 4), (4, 5), grad=False), _case("smaller", (5, 4), 2, 3, grad=False),
        _case("scalar", (), (1, 1), grad=False), _case("same", (3, 2), (3, 2), grad=False)),
       supports_autograd=False, aten=("as_strided",), xfails=_NO_VMAP_RESIZE,
       errors=(lambda: _err(RuntimeError, "cannot resize variables that require grad",
                            _t((3,), requires_grad=True), (2,)),
               lambda: _err(RuntimeError, r"Trying to create tensor with negative dimension -1: \[-1\]", _t((3,)),
                            (-1,))))
_entry("resize_as_", _on_copy("resize_as_"), lambda x, t: _copy(x.reshape(-1)[:t.size].reshape(t.shape)), ALL,
       (_case("matrix", (5, 4), _ten((4, 5), grad=False), grad=False),
        _case("smaller", (5, 4), _ten((2, 3), grad=False), grad=False),
        _case("scalar", (), _ten((), grad=False), grad=False)),
       supports_autograd=False, aten=("as_strided",), xfails=_NO_VMAP_RESIZE)
