"""CPU reductions and matmul on numpy.

float16 and bfloat16 sums, products and matmuls accumulate in float32 and
round once at the end, as PyTorch's CPU kernels do for sums and matmuls
(numpy would accumulate in the narrow type); ml_dtypes' bfloat16 lacks
NaN-aware min/max loops, so extremes go through float32 too.
"""

from __future__ import annotations

import numpy as np

import tensorplug
from tensorplug import plugin_api as _api
from tensorplug.plugin_api import sum_dtype, any_dtype

from . import elementwise as _ew, halfcast
from .elementwise import quiet
from .kernels import wrap, cast
from .xp import xp

_f32 = np.dtype(xp.float32)
_int64 = tensorplug.int64
_HALF = (tensorplug.float16, tensorplug.bfloat16)
_BF16 = tensorplug.bfloat16


def _axes(self, dim):
    """numpy axes for the core's (already checked) dims: None for all, and for a 0-dim tensor."""
    return dim if dim and self._shape else None


def _accumulate(ufunc, self, axis, keepdim, d):
    """``ufunc.reduce`` of self's values in dtype ``d``, through float32 for half types."""
    if d in _HALF:
        return ufunc.reduce(cast(self, d), axis=axis, dtype=_f32, keepdims=keepdim).astype(d.np)
    return ufunc.reduce(self._data, axis=axis, dtype=d.np, keepdims=keepdim)


_GEMV_DTYPES = (np.dtype(xp.float32), np.dtype(xp.float64))
_GEMV_MAX_INNER = 4096  # a trailing-axis sum longer than this keeps numpy's pairwise summation
_ONES: dict = {}


def _ones(n, dt):
    v = _ONES.get((n, dt))
    if v is None:
        v = xp.ones(n, dt)
        if len(_ONES) < 64:
            _ONES[(n, dt)] = v
    return v


def _sum_by_gemv(a, dims, keepdim):
    """A float sum over the leading or the trailing dims of a C-contiguous array, as a product with
    a vector of ones (one BLAS call), or None for any other case.

    numpy's reduce pays a fixed cost per output row: summing the 64 features of each of 1024 rows
    takes 40-50 us, the matrix-vector product 4-5. Over leading dims numpy adds rows in order, as
    the product does; over trailing dims it sums pairwise, so the product is used there only up to
    ``_GEMV_MAX_INNER`` terms (BLAS keeps 16 and more partial sums per dot, so its error grows
    slowly up to that length). NaN and inf propagate as in a sum.
    """
    nd = a.ndim
    if nd < 2 or a.dtype not in _GEMV_DTYPES or not a.flags.c_contiguous or not a.size:
        return None
    dims = sorted(x % nd for x in dims)
    k = len(dims)
    if k == nd or dims != list(range(dims[0], dims[0] + k)):
        return None
    shape = a.shape
    if dims[0] == 0:  # leading dims
        m = 1
        for s in shape[:k]:
            m *= s
        out = _ones(m, a.dtype) @ a.reshape(m, -1)
        rest = shape[k:]
    elif dims[-1] == nd - 1:  # trailing dims
        n = 1
        for s in shape[nd - k:]:
            n *= s
        if n > _GEMV_MAX_INNER:
            return None
        out = a.reshape(-1, n) @ _ones(n, a.dtype)
        rest = shape[:nd - k]
    else:
        return None
    if keepdim:
        return out.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))
    return out.reshape(rest)


def sum(self, dim=None, keepdim=False, dtype=None):
    d = sum_dtype(self, dtype)
    if dim and d.np is self._data.dtype:
        out = _sum_by_gemv(self._data, dim, keepdim)
        if out is not None:
            return wrap(out, d)
    return wrap(_accumulate(xp.add, self, _axes(self, dim), keepdim, d), d)


def prod(self, dim, keepdim=False, dtype=None):
    # PyTorch multiplies half types in their own precision, rounding at every step in an order
    # set by its vector width; one rounding of the float32 product is at least as accurate
    d = sum_dtype(self, dtype)
    return wrap(_accumulate(xp.multiply, self, dim if self._shape else None, keepdim, d), d)


def cumsum(self, dim, dtype=None):
    d = sum_dtype(self, dtype)
    a = self._data
    if not self._shape:
        return wrap(a.astype(d.np), d)
    if d in _HALF:
        return wrap(xp.cumsum(cast(self, d), axis=dim, dtype=_f32).astype(d.np), d)
    return wrap(xp.cumsum(a, axis=dim, dtype=d.np), d)


def _extreme(ufunc):
    """amax/amin: xp.maximum/xp.minimum propagate NaN, as PyTorch does."""
    def kernel(self, dim=(), keepdim=False):
        a = self._data
        if self._dtype is _BF16:
            return wrap(ufunc.reduce(a.astype(_f32), axis=_axes(self, dim), keepdims=keepdim).astype(a.dtype), _BF16)
        return wrap(ufunc.reduce(a, axis=_axes(self, dim), keepdims=keepdim), self._dtype)
    kernel.__name__ = ufunc.__name__
    return kernel


def _arg_extreme(fn):
    def kernel(self, dim=None, keepdim=False):
        a = self._data
        if self._dtype is _BF16:
            a = a.astype(_f32)
        out = fn(a, axis=dim if self._shape else None, keepdims=keepdim)
        return wrap(out.astype(xp.int64, copy=False), _int64)
    kernel.__name__ = fn.__name__
    return kernel


def _logical(fn):
    def kernel(self, dim=None, keepdim=False):
        out = fn(self._data, axis=_axes(self, dim), keepdims=keepdim)
        d = any_dtype(self)
        return wrap(out if d is tensorplug.bool else out.astype(d.np), d)
    kernel.__name__ = fn.__name__
    return kernel


def _transposed_product(a, b):
    """Whether ``a @ b`` is better computed as ``(b.T @ a.T).T``.

    OpenBLAS is slow on a few rows (a single row keeps the direct product: its copy would carry
    numpy's strides for a size-1 dim) times a transposed wide matrix (x @ w.T in linear at small batch):
    the product transposed, (w @ x.T).T, plus a copy back to PyTorch's row-major layout costs a third less.
    """
    return (a.ndim == 2 and b.ndim == 2 and 1 < a.shape[0] <= 64 and b.shape[1] >= 128 and a.flags.c_contiguous
            and b.flags.f_contiguous and not b.flags.c_contiguous)


def matmul(self, other):
    d = self._dtype
    a, b = self._data, other._data
    if d in _HALF:
        return wrap(halfcast.astype(xp.matmul(halfcast.to_float32(a), halfcast.to_float32(b)), d.np), d)
    if _transposed_product(a, b):
        return wrap(xp.ascontiguousarray(xp.matmul(b.T, a.T).T), d)
    return wrap(xp.matmul(a, b), d)


_FAST_ADDMM = (np.dtype(xp.float32), np.dtype(xp.float64))
_I64 = np.dtype(xp.int64)


def addmm(self, mat1, mat2, beta=1, alpha=1):
    """``beta * self + alpha * (mat1 @ mat2)`` in one kernel (linear's forward).

    The common case (float32/float64, both factors 1) adds ``self`` into the fresh product in
    place, in the same pass that brings a transposed product back to row-major. Every other case
    takes the steps of the core's composite: integer results truncate the factors, a zero factor
    skips its operand (its NaNs do not leak), half types compute in float32 and round once.
    """
    d = self._dtype
    a, b, s = mat1._data, mat2._data, self._data
    n, k = a.shape
    p = b.shape[1]
    dn = d.np
    if dn in _FAST_ADDMM and k and alpha == 1 and beta == 1:
        if _transposed_product(a, b):
            out = xp.empty((n, p), dn)
            xp.add(xp.matmul(b.T, a.T).T, s, out=out)
        else:
            out = xp.matmul(a, b)
            xp.add(out, s, out=out)
        return wrap(out, d)
    if d.category < _api.FLOATING:
        beta, alpha = int(beta), int(alpha)
    c = _f32 if d in _HALF else dn
    if alpha == 0 or k == 0:
        out = xp.zeros((n, p), dn)
    else:
        if c is not dn:
            a, b = halfcast.to_float32(a), halfcast.to_float32(b)
        out = xp.ascontiguousarray(xp.matmul(b.T, a.T).T) if _transposed_product(a, b) else xp.matmul(a, b)
        if alpha != 1:
            out = out * xp.array(alpha).astype(c)
    if beta != 0:
        sc = s if c is dn else halfcast.to_float32(s)
        out = out + (sc if beta == 1 else sc * xp.array(beta).astype(c))
    return wrap(out if out.dtype == dn else halfcast.astype(out, dn), d)


# inf - inf and 0 * inf give NaN silently in PyTorch; numpy would warn
def log_softmax(self, dim, dtype=None):
    """Fused log_softmax (the core's composite takes six dispatches): computed in float32 for
    half types and rounded once, like the composite; an infinite max gives NaN, as in PyTorch."""
    d, a, axis = _softmax_operand(self, dim, dtype)
    if not a.size:
        return wrap(a.copy(), d)
    s = a - a.max(axis=axis, keepdims=True)
    out = s - xp.log(xp.exp(s).sum(axis=axis, keepdims=True))
    return wrap(out if out.dtype == d.np else out.astype(d.np), d)


def _softmax_operand(self, dim, dtype):
    """(result dtype, values to compute with: float32 for half types, the reduced axis: None for 0-d)."""
    d = dtype or self._dtype
    a = cast(self, d)
    if d in _HALF and a.size:
        a = a.astype(_f32)
    return d, a, (None if a.ndim == 0 else (dim + a.ndim if dim < 0 else dim))


def softmax(self, dim, dtype=None):
    """Fused softmax: the steps of the core's composite (max, exp, sum, divide) in one kernel, in
    float32 for half types and rounded once."""
    d, a, axis = _softmax_operand(self, dim, dtype)
    if not a.size:
        return wrap(a.copy(), d)
    e = xp.exp(a - a.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)
    return wrap(e if e.dtype == d.np else e.astype(d.np), d)


def _backward_operands(grad_output, output, dim):
    g, y = grad_output._data, output._data
    if output._dtype in _HALF:
        g, y = g.astype(_f32), y.astype(_f32)
    if y.ndim == 0:  # numpy answers a 0-dim array's arithmetic with scalars: work on 1-element views
        return g.reshape(1), y.reshape(1), 0
    return g, y, (dim + y.ndim if dim < 0 else dim)


def log_softmax_backward(grad_output, output, dim, input_dtype):
    """``g - exp(y) * sum(g)`` along ``dim`` from log_softmax's output ``y``."""
    g, y, axis = _backward_operands(grad_output, output, dim)
    out = xp.exp(y)
    out *= g.sum(axis=axis, keepdims=True)
    xp.subtract(g, out, out=out)
    out = out.reshape(output._shape)
    return wrap(out if out.dtype == input_dtype.np else out.astype(input_dtype.np), input_dtype)


def softmax_backward(grad_output, output, dim, input_dtype):
    """``y * (g - sum(g * y))`` along ``dim`` from softmax's output ``y``."""
    g, y, axis = _backward_operands(grad_output, output, dim)
    gy = g * y
    out = y * gy.sum(axis=axis, keepdims=True)
    xp.subtract(gy, out, out=out)
    out = out.reshape(output._shape)
    return wrap(out if out.dtype == input_dtype.np else out.astype(input_dtype.np), input_dtype)


def _nll_targets(target, ignore_index):
    """(ignored mask, target with ignored entries as class 0, as int64 indices)."""
    t = target._data
    ignored = t == ignore_index
    return ignored, xp.where(ignored, 0, t).astype(xp.int64, copy=False)


def nll_loss(self, target, weight=None, reduction=1, ignore_index=-100):
    """The picked log-probabilities in one gather, then the core composite's steps as this
    backend's own kernels, called directly (the same dtypes and roundings, without the dispatches)."""
    d = self._dtype
    x = self._data
    t = target._data
    if weight is None and reduction == 1 and x.ndim == 2 and x.dtype in _FAST_ADDMM and t.dtype == _I64 \
            and 0 < t.size < 1 << 24:
        # the common case (cross-entropy's mean, no weights), when nothing is ignored: the same sum
        # and division as below (-sum(picked) is sum(-picked) exactly), without their temporaries
        lo, hi = t.min(), t.max()
        if lo >= 0 and hi < x.shape[1] and (ignore_index < 0 or ignore_index >= x.shape[1]):
            picked = x[xp.arange(t.shape[0]), t]
            return wrap(xp.true_divide(xp.negative(xp.add.reduce(picked)), x.dtype.type(t.shape[0])), d)
    ignored, safe = _nll_targets(target, ignore_index)
    c = x.shape[0 if x.ndim == 1 else 1]
    bad = (safe < 0) | (safe >= c)
    if bad.any():
        raise IndexError(f"Target {int(safe[bad][0])} is out of bounds.")
    picked = x[safe] if x.ndim == 1 else xp.take_along_axis(x, xp.expand_dims(safe, 1), 1).squeeze(1)
    kept = wrap((~ignored).astype(d.np), d)
    w = kept if weight is None else _ew.mul(wrap(weight._data[safe], weight._dtype), kept)
    loss = _ew.mul(_ew.neg(wrap(picked, d)), w)
    if reduction == 0:
        return loss
    if reduction == 2:
        return sum(loss)
    return _ew.div(sum(loss), sum(w))


def nll_loss_backward(grad_output, self, target, weight=None, reduction=1, ignore_index=-100):
    """nll_loss's gradient in one pass over the picked entries: ``-(g * w)`` at each target's class
    (``g`` the output gradient, over the total weight for the mean), 0 elsewhere and where ignored;
    the steps of the core's composite, in self's dtype (sums of half types accumulate in float32)."""
    d = self._dtype
    dn = d.np
    t = target._data
    if weight is None and reduction == 1 and self._data.ndim == 2 and dn in _FAST_ADDMM and t.dtype == _I64 \
            and 0 < t.size < 1 << 24 and (ignore_index < 0 or ignore_index >= self._shape[1]) and t.min() >= 0 \
            and t.max() < self._shape[1]:
        # the forward's common case (no target can be ignored): -(g / n) at each target's class
        out = xp.zeros(self._shape, dn)
        out[xp.arange(t.shape[0]), t] = xp.negative(xp.true_divide(grad_output._data, dn.type(t.shape[0])))
        return wrap(out, d)
    ignored, safe = _nll_targets(target, ignore_index)
    w = (~ignored).astype(dn)
    if weight is not None:
        w = weight._data[safe] * w
    g = grad_output._data
    if reduction == 1:
        total = xp.add.reduce(w, axis=None, dtype=_f32 if d in _HALF else dn)
        g = xp.true_divide(g, total.astype(dn))
    axis = 0 if self._data.ndim == 1 else 1
    out = xp.zeros(self._shape, dn)
    # an ignored target gets no gradient (0, not 0 times an infinite mean when all are ignored)
    vals = xp.where(ignored, xp.zeros((), dn), xp.negative(xp.multiply(g, w).astype(dn, copy=False)))
    xp.put_along_axis(out, xp.expand_dims(safe, axis), xp.expand_dims(vals, axis), axis)
    return wrap(out, d)


sum, prod, cumsum, matmul, addmm = quiet(sum), quiet(prod), quiet(cumsum), quiet(matmul), quiet(addmm)
log_softmax, softmax = quiet(log_softmax), quiet(softmax)

KERNELS = {
    "sum.dim_IntList": sum, "prod.dim_int": prod, "cumsum": cumsum,
    "amax": _extreme(xp.maximum), "amin": _extreme(xp.minimum),
    "argmax": _arg_extreme(xp.argmax), "argmin": _arg_extreme(xp.argmin),
    "any.dims": _logical(xp.any), "all.dims": _logical(xp.all),
    "matmul": matmul, "addmm": addmm, "log_softmax.int": log_softmax, "nll_loss_backward": quiet(nll_loss_backward),
    "softmax.int": softmax, "_log_softmax_backward_data": quiet(log_softmax_backward),
    "_softmax_backward_data": quiet(softmax_backward),
    "nll_loss": quiet(nll_loss),
}
