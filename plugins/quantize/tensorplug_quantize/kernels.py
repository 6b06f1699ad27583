"""The Quantized kernels: one generic kernel per operator, for every backend at once.

Each kernel is registered at the per-backend ``Quantized`` key for all backends (QuantizedCPU,
QuantizedOpenReg, ...). Kernels that only move or select elements (views, ``clone``, ``cat``) run
the operator itself on the integer representation, through the backend's own integer kernels, and
keep the quantization parameters (tracking the channel axis of a per-channel tensor); ``relu``
clamps the integers at the zero point; ``linear`` and ``matmul`` accumulate the integer products
exactly (:mod:`tensorplug_quantize.gemm`) and return float32. The ``quantized::`` operators
(``add``, ``add_relu``, ``mul``, ``cat``) requantize their result to a given scale and zero point,
as ``torch.ops.quantized``. Every other operator has no Quantized kernel and raises the
dispatcher's "Could not run ... 'QuantizedCPU' backend" error.
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug import Tensor
from tensorplug.plugin_api import lookup_op, native, warn_user, wrap, wrap_dim

from . import gemm
from .qtensor import KEY_NAME, QuantizedTensor, _check_scale, _check_zero_point, like, make_quantized, quantize_values

_F32 = tensorplug.float32
_SHARED_PARAMS_WARNING = ("All inputs of this cat operator must share the same quantization parameters. "
                          "Otherwise large numerical inaccuracies may occur.")


def _per_tensor_only(q, op):
    if q._scales is not None:
        raise RuntimeError(f"{op}: Setting strides is possible only on uniformly quantized tensor (this one is "
                           f"quantized per channel along axis {q._axis})")


# -- views and copies ----------------------------------------------------------------------------
_KEEP_PACKING = ("tensorplug::clone", "tensorplug::alias", "tensorplug::_to_copy")


def _run(name, q, *args, **kwargs):
    if q._packing is not None and name not in _KEEP_PACKING:
        raise RuntimeError(f"{name.split('::')[1]}: group-quantized tensors (one scale per group of columns) "
                           f"support no views; dequantize() first")
    return lookup_op(name)(q._int, *args, **kwargs)


def view(q, size):
    r = _run("tensorplug::view", q, size)
    if q._scales is not None:
        a = q._axis
        if tuple(r._shape[:a + 1]) != tuple(q._shape[:a + 1]):
            _per_tensor_only(q, "view")
    return like(q, r)


def _unsafe_view(q, size):
    r = _run("tensorplug::_unsafe_view", q, size)
    if q._scales is not None and tuple(r._shape[:q._axis + 1]) != tuple(q._shape[:q._axis + 1]):
        _per_tensor_only(q, "view")
    return like(q, r)


def permute(q, dims):
    r = _run("tensorplug::permute", q, dims)
    if q._scales is None:
        return like(q, r)
    wrapped = [wrap_dim(d, q.dim()) for d in dims]
    return like(q, r, axis=wrapped.index(q._axis))


def transpose(q, dim0, dim1):
    n = q.dim()
    perm = list(range(n))
    if n:
        d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return permute(q, perm)


def t(q):
    if q.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {q.dim()}D")
    return transpose(q, 0, -1) if q.dim() == 2 else q


def select(q, dim, index):
    r = _run("tensorplug::select.int", q, dim, index)
    if q._scales is None:
        return like(q, r)
    d = wrap_dim(dim, q.dim())
    if d == q._axis:
        # one channel: a per-tensor quantized tensor with that channel's parameters (as PyTorch)
        i = index + q._shape[d] if index < 0 else index
        return make_quantized(r, q._dtype, float(q._scales[i].item()), int(q._zero_points[i].item()))
    return like(q, r, axis=q._axis - (d < q._axis))


def slice_(q, dim=0, start=None, end=None, step=1):
    r = _run("tensorplug::slice.Tensor", q, dim, start, end, step)
    if q._scales is None:
        return like(q, r)
    d = wrap_dim(dim, q.dim())
    if d != q._axis:
        return like(q, r)
    return make_quantized(r, q._dtype, scales=q._scales[start:end:step].clone(),
                          zero_points=q._zero_points[start:end:step].clone(), axis=q._axis, scheme=q._qscheme)


def squeeze(q, dim=None):
    r = _run("tensorplug::squeeze.dims", q, dim)
    if q._scales is None:
        return like(q, r)
    n = q.dim()
    dims = range(n) if dim is None else [wrap_dim(d, n) for d in ((dim,) if isinstance(dim, int) else dim)]
    gone = {d for d in dims if q._shape[d] == 1}
    if q._axis in gone:
        _per_tensor_only(q, "squeeze")
    return like(q, r, axis=q._axis - sum(1 for d in gone if d < q._axis))


def unsqueeze(q, dim):
    r = _run("tensorplug::unsqueeze", q, dim)
    if q._scales is None:
        return like(q, r)
    d = wrap_dim(dim, q.dim() + 1)
    return like(q, r, axis=q._axis + (d <= q._axis))


def expand(q, size, *, implicit=False):
    r = _run("tensorplug::expand", q, size, implicit=implicit)
    return like(q, r, axis=None if q._scales is None else q._axis + r.dim() - q.dim())


def clone(q, memory_format=None):
    return like(q, _run("tensorplug::clone", q, memory_format=memory_format))


def alias(q):
    return like(q, _run("tensorplug::alias", q))


def contiguous(q, memory_format=None):
    return q if q.is_contiguous() else clone(q)


def to_copy(q, *, dtype=None, device=None, non_blocking=False):
    if dtype is not None and dtype is not q._dtype:
        raise RuntimeError(f"cannot convert a quantized tensor of {q._dtype!r} to {dtype!r}: call dequantize() "
                           f"for float values, or quantize again for another quantized dtype")
    r = _run("tensorplug::_to_copy", q, device=device, non_blocking=non_blocking)
    return like(q, r)


def _check_all_quantized(tensors, op):
    for i, x in enumerate(tensors):
        if not isinstance(x, QuantizedTensor):
            raise RuntimeError(f"{op}: expected every input to be quantized, but input {i} is a "
                               f"{x._dtype!r} tensor")


def cat(tensors, dim=0):
    tensors = list(tensors)
    _check_all_quantized(tensors, "cat")
    first = tensors[0]
    for x in tensors:
        if x._scales is not None:
            raise RuntimeError("Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.")
        if x._dtype is not first._dtype:
            raise RuntimeError(f"cat: expected every input to have dtype {first._dtype!r}, got {x._dtype!r}")
    ints = []
    mixed = False
    for x in tensors:
        if x._scale != first._scale or x._zero_point != first._zero_point:
            mixed = True
            ints.append(quantize_values(x.dequantize(), first._dtype, first._scale, first._zero_point))
        else:
            ints.append(x._int)
    if mixed:
        warn_user(_SHARED_PARAMS_WARNING)
    return like(first, tensorplug.cat(ints, dim))


# -- pointwise -----------------------------------------------------------------------------------
def _zero_point_array(q):
    if q._scales is None:
        return q._zero_point
    shape = [1] * q.dim()
    shape[q._axis] = q._scales.numel()
    return q._zero_points.to(q._int._dtype).reshape(shape).to(q._device)


def relu(q):
    return like(q, tensorplug.maximum(q._int, _as_tensor(_zero_point_array(q), q)))


def relu_(q):
    if q._scales is None:
        q._int.clamp_(min=q._zero_point)
    else:
        q._int.copy_(tensorplug.maximum(q._int, _zero_point_array(q)))
    return q


def _as_tensor(v, q):
    return v if isinstance(v, Tensor) else tensorplug.tensor(v, dtype=q._int._dtype, device=q._device)


# -- products ------------------------------------------------------------------------------------
def _params(q):
    """``(zero points, scales)`` as numpy: ints/floats per tensor, arrays per channel."""
    if q._scales is None:
        return q._zero_point, np.float32(q._scale)
    return native(q._zero_points.cpu()).astype(np.int64), native(q._scales.cpu()).astype(np.float32)


def _int_product(qa, qb_t):
    """``(qa - za) @ (qb_t - zb).T`` exactly as int64 numpy, with qb_t (N, K) per tensor or per channel axis 0."""
    a = native(qa._int.cpu()) if qa._device.type != "cpu" else native(qa._int)
    b = native(qb_t._int.cpu()) if qb_t._device.type != "cpu" else native(qb_t._int)
    za, _ = _params(qa)
    zb, _ = _params(qb_t)
    return gemm.affine_matmul(a, za, b.T, zb, gemm.bound(a), gemm.bound(b))


def linear(input, weight, bias=None):
    if not isinstance(weight, QuantizedTensor):
        raise RuntimeError("linear: a quantized input needs a quantized weight (got a "
                           f"{weight._dtype!r} weight); dequantize() the input for a float linear")
    if weight.dim() != 2:
        raise RuntimeError(f"linear: expected a 2-d quantized weight, got {weight.dim()} dims")
    if weight._scales is not None and weight._axis != 0:
        raise RuntimeError(f"linear: a per-channel quantized weight must have its channels on axis 0 (the output "
                           f"features), got axis {weight._axis}")
    k = weight._shape[1]
    if input._shape[-1] != k:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({int(np.prod(input._shape[:-1]))}x"
                           f"{input._shape[-1]} and {k}x{weight._shape[0]})")
    _, sw = _params(weight)
    if isinstance(input, QuantizedTensor):
        if input._scales is not None:
            raise RuntimeError("linear: the quantized input must be quantized per tensor")
        acc = _int_product(input, weight)
        out = acc.astype(np.float32) * (np.float32(input._scale) * sw)
    else:
        # weight-only: float input times the integer weight, the weight's scale applied to the output
        x = native(input.detach().cpu()).astype(np.float32, copy=False)
        wi = native(weight._int.cpu()).astype(np.float32)
        zw, _ = _params(weight)
        if np.any(zw):
            wi -= np.asarray(zw, np.float32).reshape(-1, 1) if np.ndim(zw) else np.float32(zw)
        out = (x @ wi.T) * sw
    if bias is not None:
        if isinstance(bias, QuantizedTensor):
            raise RuntimeError("linear: the bias of a quantized linear must be a float tensor, got a quantized one")
        out = out + native(bias.detach().cpu()).astype(np.float32)
    return wrap(out.astype(np.float32, copy=False), _F32, tensorplug.device("cpu")).to(input._device)


def matmul(a, b):
    for x, name in ((a, "self"), (b, "other")):
        if not isinstance(x, QuantizedTensor):
            raise RuntimeError(f"matmul: both operands must be quantized, {name} is a {x._dtype!r} tensor")
        if x._scales is not None:
            raise RuntimeError("matmul: quantized operands must be quantized per tensor")
    if a.dim() == 2 and b.dim() == 2:
        if a._shape[1] != b._shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._shape[0]}x{a._shape[1]} and "
                               f"{b._shape[0]}x{b._shape[1]})")
        acc = _int_product(a, permute(b, [1, 0])).astype(np.float32)
    else:
        # other shapes (vectors, batches): float64 holds every integer product sum exactly
        x = native(a._int.cpu()).astype(np.float64) - a._zero_point
        y = native(b._int.cpu()).astype(np.float64) - b._zero_point
        acc = np.asarray(np.matmul(x, y)).astype(np.float32)
    out = acc * (np.float32(a._scale) * np.float32(b._scale))
    return wrap(np.asarray(out, np.float32), _F32, tensorplug.device("cpu")).to(a._device)


# -- quantized:: operators (requantizing) ------------------------------------------------------------
def _requantize(x, like_q, scale, zero_point):
    _check_scale(scale, "quantized")
    _check_zero_point(zero_point, like_q._dtype, "quantized")
    return make_quantized(quantize_values(x, like_q._dtype, scale, zero_point), like_q._dtype, scale, zero_point)


def q_add(qa, qb, scale, zero_point):
    _check_all_quantized([qa, qb], "quantized::add")
    return _requantize(qa.dequantize() + qb.dequantize(), qa, scale, zero_point)


def q_add_relu(qa, qb, scale, zero_point):
    _check_all_quantized([qa, qb], "quantized::add_relu")
    return _requantize(tensorplug.relu(qa.dequantize() + qb.dequantize()), qa, scale, zero_point)


def q_mul(qa, qb, scale, zero_point):
    _check_all_quantized([qa, qb], "quantized::mul")
    return _requantize(qa.dequantize() * qb.dequantize(), qa, scale, zero_point)


def q_cat(qx, dim, scale=None, zero_point=None):
    qx = list(qx)
    _check_all_quantized(qx, "quantized::cat")
    if scale is None:
        scale, zero_point = qx[0]._scale, qx[0]._zero_point
    return _requantize(tensorplug.cat([x.dequantize() for x in qx], dim), qx[0], scale, zero_point)


QUANTIZED_SCHEMAS = {
    "add": "add(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor",
    "add_relu": "add_relu(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor",
    "mul": "mul(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor",
    "cat": "cat(Tensor[] qx, int dim, float? scale=None, int? zero_point=None) -> Tensor",
}
QUANTIZED_KERNELS = {"add": q_add, "add_relu": q_add_relu, "mul": q_mul, "cat": q_cat}

KERNELS = {
    "view": view, "_unsafe_view": _unsafe_view, "permute": permute, "transpose.int": transpose, "t": t,
    "select.int": select, "slice.Tensor": slice_, "squeeze.dims": squeeze, "unsqueeze": unsqueeze,
    "expand": expand, "clone": clone, "alias": alias, "contiguous": contiguous, "_to_copy": to_copy,
    "cat": cat, "relu": relu, "relu_": relu_, "linear": linear, "matmul": matmul,
}
"""Operator overload name -> its Quantized kernel (the table conformance reads)."""


def install(library_factory):
    """Register every kernel with the plugin's libraries (called from the kernel hook)."""
    lib = library_factory("tensorplug", "IMPL")
    for name, fn in KERNELS.items():
        lib.impl(name, fn, KEY_NAME)
    qlib = library_factory("quantized", "DEF")
    for name, schema in QUANTIZED_SCHEMAS.items():
        qlib.define(schema)
        qlib.impl(name, QUANTIZED_KERNELS[name], KEY_NAME)


