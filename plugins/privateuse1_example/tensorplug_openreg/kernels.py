"""openreg's native kernels: thin Python over the C++ loops in ``_C``.

Each kernel receives its arguments positionally in schema order, already
checked by the core. It decides the result dtype with the core's promotion
rules, allocates the result on the input's device and calls one ``_C``
function, which releases the GIL while it loops. The C++ loops compute in
float32, float64 and int64 (plus bool for comparisons and where); for another
dtype a kernel hands the call to the CPU fallback, with the same once-per-op
warning.
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug import plugin_api as _api
from tensorplug.plugin_api import (Tensor, wrap_view as make_view, float_dtype, index_bounds_error,
                                   index_select_range_error, matmul_shape, binary_dtype, broadcast_shapes,
                                   sum_dtype, lookup_op, backend as _backend)

from . import _C
from . import backend as _b
from .fallback import warn_once

_new = object.__new__
_code = _b.code
_COMPUTE = frozenset((tensorplug.int64, tensorplug.float32, tensorplug.float64))
_LOGICAL = _COMPUTE | {tensorplug.bool}
_CASTABLE = frozenset(d for d in _api.all_dtypes() if _C.can_cast(_code(d), _code(tensorplug.int64)))

ADD, SUB, MUL, DIV, MAXIMUM, DIV_TRUNC, DIV_FLOOR = range(7)
NEG, EXP, LOG = range(3)


wrap = _api.tensor_maker(_b.BACKEND)
"""``wrap(native, dtype, device)``: a fresh openreg tensor around device array ``native``."""


def new(shape, dtype, device):
    """An uninitialised dense device array."""
    return _C.empty(shape, _code(dtype), dtype.itemsize, device.index)


def not_native(qualname, args, dtype):
    """Run the call on the CPU (the kernel has no C++ loop for ``dtype``), through the registered
    fallback so that conformance reports it as such."""
    warn_once(qualname, f" for {dtype.name}")
    return lookup_op(qualname).call_fallback("PrivateUse1", *args)


# -- memory ----------------------------------------------------------------------------------------
def empty(size, dtype=None, device=None):
    d = dtype or tensorplug.get_default_dtype()
    dev = _b.BACKEND.normalize_device(device or _b.DEVICES[_b.current_device()])
    return wrap(new(size, d, dev), d, dev)


def fill_(self, value):
    # numpy converts the Python scalar exactly as the CPU backend stores it (wrapping, rounding)
    v = np.empty((), self._dtype.np)
    v.fill(value if self._dtype.is_floating_point or isinstance(value, bool) else int(value))
    _C.fill_(self._data, v.tobytes())
    return self


def copy_(self, src, non_blocking=False):
    # the higher backend bit wins dispatch, so host->device and device->host copies land here too
    dst_dev, src_dev = self._device.type == "openreg", src._device.type == "openreg"
    if dst_dev and src_dev and (self._dtype is src._dtype or (self._dtype in _CASTABLE and src._dtype in _CASTABLE)):
        _C.copy_(self._data, src._data)
        return self
    host = src._host()  # a download from openreg, the array itself from the cpu
    if not dst_dev:
        if self._device.type == "cpu":
            np.copyto(self._data, host, casting="unsafe")
        else:  # another device below openreg's bit: its own copy_ takes the values from a host tensor
            lookup_op("tensorplug::copy_").redispatch(_backend(self._device).ks, self,
                                                tensorplug.tensor(host, dtype=src._dtype), non_blocking)
        return self
    values = np.empty(self._shape, self._dtype.np)
    with np.errstate(all="ignore"):
        np.copyto(values, host, casting="unsafe")  # numpy's casts for the dtypes C++ only moves as bytes
    _C.upload(self._data, _b.host_bytes(values))
    return self


def as_strided(self, size, stride, storage_offset=None):
    off = self._data.offset if storage_offset is None else storage_offset
    out = make_view(self, _C.Array(self._data.root, size, stride, off, _code(self._dtype), self._dtype.itemsize))
    out._storage_offset0 = off
    return out


# -- elementwise -----------------------------------------------------------------------------------
def _binary(op_code, qualname, result=None, has_alpha=False):
    def kernel(self, other, alpha=1):
        d = self._dtype
        if d is not other._dtype:
            d = binary_dtype(self, other)
        if result is not None:
            d = result(d)
        if d not in _COMPUTE or self._dtype not in _CASTABLE or other._dtype not in _CASTABLE:
            return not_native(qualname, (self, other, alpha) if has_alpha else (self, other), d)
        shape = self._shape if self._shape == other._shape else broadcast_shapes(self._shape, other._shape)
        out = new(shape, d, self._device)
        if d.is_floating_point:
            _C.binary(op_code, out, self._data, other._data, alpha, 1)
        else:
            _C.binary(op_code, out, self._data, other._data, 1.0, alpha)
        return wrap(out, d, self._device)
    return kernel


def div_mode(self, other, rounding_mode=None):
    if rounding_mode is None:
        return div(self, other)
    d = binary_dtype(self, other)
    if d not in _COMPUTE or self._dtype not in _CASTABLE or other._dtype not in _CASTABLE:
        return not_native("tensorplug::div.Tensor_mode", (self, other, rounding_mode), d)
    out = new(broadcast_shapes(self._shape, other._shape), d, self._device)
    _C.binary(DIV_FLOOR if rounding_mode == "floor" else DIV_TRUNC, out, self._data, other._data)
    return wrap(out, d, self._device)


add = _binary(ADD, "tensorplug::add.Tensor", has_alpha=True)
sub = _binary(SUB, "tensorplug::sub.Tensor", has_alpha=True)
mul = _binary(MUL, "tensorplug::mul.Tensor")
div = _binary(DIV, "tensorplug::div.Tensor", float_dtype)
maximum = _binary(MAXIMUM, "tensorplug::maximum")


def _unary(op_code, qualname, result=None):
    def kernel(self):
        d = self._dtype if result is None else result(self._dtype)
        if d not in _COMPUTE or self._dtype not in _CASTABLE:
            return not_native(qualname, (self,), d)
        out = new(self._shape, d, self._device)
        _C.unary(op_code, out, self._data)
        return wrap(out, d, self._device)
    return kernel


neg = _unary(NEG, "tensorplug::neg")
exp = _unary(EXP, "tensorplug::exp", float_dtype)
log = _unary(LOG, "tensorplug::log", float_dtype)


def _comparison(op_code, qualname):
    def kernel(self, other):
        d = self._dtype
        if d is not other._dtype:
            d = binary_dtype(self, other)
        if d not in _LOGICAL or self._dtype not in _CASTABLE or other._dtype not in _CASTABLE:
            return not_native(qualname, (self, other), d)
        shape = self._shape if self._shape == other._shape else broadcast_shapes(self._shape, other._shape)
        out = new(shape, tensorplug.bool, self._device)
        _C.compare(op_code, out, self._data, other._data, _code(d))
        return wrap(out, tensorplug.bool, self._device)
    return kernel


def where(condition, self, other):
    d = binary_dtype(self, other)
    if self._dtype not in _CASTABLE or other._dtype not in _CASTABLE or d not in _CASTABLE:
        return not_native("tensorplug::where.self", (condition, self, other), d)
    out = new(broadcast_shapes(condition._shape, self._shape, other._shape), d, self._device)
    _C.where(out, condition._data, self._data, other._data)
    return wrap(out, d, self._device)


def threshold_backward(grad_output, self, threshold):
    d = grad_output._dtype
    if d not in _COMPUTE or self._dtype not in _COMPUTE:
        return not_native("tensorplug::threshold_backward", (grad_output, self, threshold), d)
    out = new(grad_output._shape, d, self._device)
    _C.threshold_backward(out, grad_output._data, self._data, threshold)
    return wrap(out, d, self._device)


def inplace(kernel):
    """The in-place variant of ``kernel``: compute, then store (cast) into self through its strides."""
    def run(self, *args):
        r = kernel(self, *args)
        if r._dtype is self._dtype or (r._dtype in _CASTABLE and self._dtype in _CASTABLE):
            _C.copy_(self._data, r._data)
            return self
        return copy_(self, r)
    run.__name__ = kernel.__name__ + "_"
    return run


# -- reductions ------------------------------------------------------------------------------------
def _reduced_shape(shape, dims, keepdim):
    if not dims:
        return tuple(1 for _ in shape) if keepdim else ()
    dims = {d % len(shape) for d in dims}
    return tuple(1 if i in dims else s for i, s in enumerate(shape) if keepdim or i not in dims)


def sum(self, dim=None, keepdim=False, dtype=None):
    d = sum_dtype(self, dtype)
    if d not in _COMPUTE or self._dtype not in _CASTABLE:
        return not_native("tensorplug::sum.dim_IntList", (self, dim, keepdim, dtype), d)
    dims = tuple(dim) if dim and self._shape else ()
    out = new(_reduced_shape(self._shape, dims, keepdim), d, self._device)
    _C.reduce("sum", out, self._data, dims)
    return wrap(out, d, self._device)


def amax(self, dim=(), keepdim=False):
    d = self._dtype
    if d not in _COMPUTE:
        return not_native("tensorplug::amax", (self, dim, keepdim), d)
    dims = tuple(dim) if dim and self._shape else ()
    out = new(_reduced_shape(self._shape, dims, keepdim), d, self._device)
    _C.reduce("amax", out, self._data, dims)
    return wrap(out, d, self._device)


# -- matmul ----------------------------------------------------------------------------------------
def _matrix(arr, row):
    """(shape, strides) of ``arr`` with a vector taken as a (1, K) row or a (K, 1) column."""
    if len(arr.shape) > 1:
        return arr.shape, arr.strides
    (k,), (s,) = arr.shape, arr.strides
    return ((1, k), (0, s)) if row else ((k, 1), (s, 0))


def _operand(arr, row, shape):
    """``arr`` as a matrix broadcast to ``shape`` (batch dims it lacks or has as 1 repeat with stride 0)."""
    own, strides = _matrix(arr, row)
    lead = len(shape) - len(own)
    st = (0,) * lead + tuple(0 if n == 1 and m != 1 else s for n, m, s in zip(own, shape[lead:], strides))
    return _C.Array(arr.root, shape, st, arr.offset, arr.dtype, arr.itemsize)


def matmul(self, other):
    d = self._dtype
    if d not in _COMPUTE:
        return not_native("tensorplug::matmul", (self, other), d)
    sa, sb = _matrix(self._data, True)[0], _matrix(other._data, False)[0]
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    m, k, n = sa[-2], sa[-1], sb[-1]
    out = new(batch + (m, n), d, self._device)
    _C.matmul(out, _operand(self._data, True, batch + (m, k)), _operand(other._data, False, batch + (k, n)))
    final = tuple(matmul_shape(self, other))
    if final != out.shape:  # a vector operand: its unit dim leaves the dense result
        out = _C.Array(out.root, final, _dense(final), 0, out.dtype, out.itemsize)
    return wrap(out, d, self._device)


def _dense(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


# -- indexing --------------------------------------------------------------------------------------
def index_select(self, dim, index):
    if not self._shape:
        return wrap(_copy_of(self), self._dtype, self._device)
    idx = index._data if index._dtype is tensorplug.int64 else _cast_array(index, tensorplug.int64)
    if index._shape == ():
        idx = _C.Array(idx.root, (1,), (1,), idx.offset, idx.dtype, idx.itemsize)
    dim %= len(self._shape)
    shape = self._shape[:dim] + (idx.shape[0],) + self._shape[dim + 1:]
    out = new(shape, self._dtype, self._device)
    bad = _C.index_select(out, self._data, dim, idx)
    if bad is not None:
        raise index_select_range_error(bad, dim, len(self._shape), self._shape[dim])
    return wrap(out, self._dtype, self._device)


def gather(self, dim, index, sparse_grad=False):
    src, idx = self._data, index._data
    if not self._shape:  # a 0-dim tensor is handled as a one-element vector
        src = _C.Array(src.root, (1,), (1,), src.offset, src.dtype, src.itemsize)
    if not index._shape:
        idx = _C.Array(idx.root, (1,), (1,), idx.offset, idx.dtype, idx.itemsize)
    out = new(idx.shape, self._dtype, self._device)
    dim %= len(src.shape)
    bad = _C.gather(out, src, dim, idx)
    if bad is not None:
        raise index_bounds_error(bad, dim, src.shape[dim])
    if not index._shape:
        out = _C.Array(out.root, (), (), 0, out.dtype, out.itemsize)
    return wrap(out, self._dtype, self._device)


def _copy_of(t):
    out = new(t._shape, t._dtype, t._device)
    _C.copy_(out, t._data)
    return out


def _cast_array(t, dtype):
    out = new(t._shape, dtype, t._device)
    _C.copy_(out, t._data)
    return out


# -- random ----------------------------------------------------------------------------------------
def uniform_(self, from_=0.0, to=1.0, generator=None):
    # an explicit Generator is a host stream (its state is saved and restored on the host): draw there
    if generator is not None or self._dtype not in (tensorplug.float32, tensorplug.float64):
        return _host_random("tensorplug::uniform_", (self, from_, to, generator))
    _C.uniform_(self._data, from_, to)
    return self


def normal_(self, mean=0.0, std=1.0, generator=None):
    if generator is not None or self._dtype not in (tensorplug.float32, tensorplug.float64):
        return _host_random("tensorplug::normal_", (self, mean, std, generator))
    _C.normal_(self._data, mean, std)
    return self


def _host_random(qualname, args):
    # an explicit Generator's stream (or a dtype without a C++ sampler) lives on the host
    return lookup_op(qualname).call_fallback("PrivateUse1", *args)


KERNELS = {
    "empty": empty, "fill_.Scalar": fill_, "copy_": copy_, "as_strided": as_strided,
    "add.Tensor": add, "sub.Tensor": sub, "mul.Tensor": mul, "div.Tensor": div, "div.Tensor_mode": div_mode,
    "maximum": maximum, "neg": neg, "exp": exp, "log": log,
    "add_.Tensor": inplace(add), "sub_.Tensor": inplace(sub), "mul_.Tensor": inplace(mul),
    "div_.Tensor": inplace(div), "div_.Tensor_mode": inplace(div_mode),
    "neg_": inplace(neg), "exp_": inplace(exp), "log_": inplace(log),
    "eq.Tensor": _comparison(0, "tensorplug::eq.Tensor"), "ne.Tensor": _comparison(1, "tensorplug::ne.Tensor"),
    "lt.Tensor": _comparison(2, "tensorplug::lt.Tensor"), "le.Tensor": _comparison(3, "tensorplug::le.Tensor"),
    "gt.Tensor": _comparison(4, "tensorplug::gt.Tensor"), "ge.Tensor": _comparison(5, "tensorplug::ge.Tensor"),
    "where.self": where, "threshold_backward": threshold_backward,
    "sum.dim_IntList": sum, "amax": amax, "matmul": matmul,
    "index_select": index_select, "gather": gather,
    "uniform_": uniform_, "normal_": normal_,
}
