"""Composite operators: defined once, as decompositions into primitives.

Each is a CompositeImplicitAutograd kernel, so every backend gets it for free
and autograd (and any transform) differentiates it through its pieces. Every
argument check runs in the op's ``check``, once, before dispatch, so all
backends raise PyTorch's errors (its CPU messages, kernel names included).

float16 and bfloat16 inputs of reductions and multi-step activations compute
in float32 and round once at the end, as PyTorch's CPU kernels do (their
"opmath" type): a float16 sum of squares overflows at 256, and each rounding
of an intermediate would cost accuracy PyTorch does not lose.

Decompositions keep their gradients finite: a ``where`` whose unused branch
overflows (exp of a large input) would multiply a zero gradient by inf, so
such branches see clamped inputs, and square roots of zero take the gradient
PyTorch gives (0). relu, hardtanh and elu have backward formulas of their own,
as in PyTorch: through ``maximum``, ``clamp`` and ``expm1`` their gradients at
the kinks and in the tail would differ from PyTorch's.
"""

from __future__ import annotations

import math
import warnings

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..dispatch.keys import REGISTRY
from ..tensor import Tensor, _wrap_dim
from ._lib import defop, public, attach
from .arithmetic import maximum, add_
from .comparison import clamp, clamp_max, clamp_tensor_, where_fn as _where
from .factories import arange, zeros, ones
from .indexing import cat, index_select
from .linalg import matmul
from .memory import _to_copy, clone
from .pointwise import scalar_tensor, not_implemented, check_binary
from .promotion import result_type, promote_types, _pt_name
from .reductions import reduce_dims, sum as _sum, amax, amin
from .views import narrow, select, squeeze, unsqueeze, reshape, view, t as _t

_F16, _BF16, _F32 = _dt.float16, _dt.bfloat16, _dt.float32
_INF = math.inf


def _opmath(x):
    """``x`` in the dtype PyTorch computes in: float32 for float16 and bfloat16, else its own."""
    d = x._dtype
    return _to_copy(x, dtype=_F32) if d is _F16 or d is _BF16 else x


def _as(x, dtype):
    return x if x._dtype is dtype else _to_copy(x, dtype=dtype)


def _sqrt(x):
    """sqrt(x) whose gradient is 0, not NaN, where x is 0 (PyTorch's std and norm backward)."""
    zero = x == 0
    return _where(zero, 0.0, _where(zero, 1.0, x).sqrt())


def _count(shape, dims):
    """Number of elements each output element reduces over (1 for a 0-dim input)."""
    n = 1
    if shape:
        for d in dims:
            n *= shape[d]
    return n


def _dims(dim):
    """``dim`` as the entries take it: an int or a list becomes a tuple."""
    c = dim.__class__
    if c is int:
        return (dim,)
    if c is list:
        return tuple(dim)
    return dim


def _document(entry, text):
    entry.__doc__ = f"{text}\n\n{entry.__doc__}"
    return entry


def _float_only(kernel_name):
    """Check for activations PyTorch implements for floating dtypes only."""
    def check(self, *rest):
        if not self._dtype.is_floating_point:
            raise not_implemented(kernel_name, self._dtype)
    return check


# -- mean, var, std ----------------------------------------------------------------------------
def _check_mean(self, dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        if not dtype.is_floating_point:
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either a floating "
                               f"point or complex dtype. Got: {_pt_name(dtype)}")
    elif not self._dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {_pt_name(self._dtype)}")
    reduce_dims(self, dim)


def _mean(self, dim=None, keepdim=False, dtype=None):
    out = self._dtype if dtype is None else dtype
    dims = reduce_dims(self, dim)
    total = _sum(self, dims, keepdim, dtype=_F32 if out is _F16 or out is _BF16 else out)
    return _as(total / _count(self._shape, dims), out)


mean = defop("mean.dim(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
             check=_check_mean, composite=_mean)


def _check_statistic(name):
    def check(self, dim=None, correction=None, keepdim=False):
        if not self._dtype.is_floating_point:
            raise RuntimeError(f"{name} only support floating point and complex dtypes")
        reduce_dims(self, dim)
    return check


def _moments(name, self, dim, correction, keepdim):
    """(variance, mean) of ``self`` over ``dim``, in the compute dtype: two passes, mean first."""
    x = _opmath(self)
    dims = reduce_dims(x, dim)
    n = _count(x._shape, dims)
    mu = _sum(x, dims, True) / n
    dev = x - mu
    dof = n - (1 if correction is None else correction)
    if dof <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning)
    var = _sum(dev * dev, dims, keepdim) / max(dof, 0)
    return var, (mu if keepdim else squeeze(mu, dims))


def _var(self, dim=None, correction=None, keepdim=False):
    return _as(_moments("var", self, dim, correction, keepdim)[0], self._dtype)


def _std(self, dim=None, correction=None, keepdim=False):
    return _as(_sqrt(_moments("std", self, dim, correction, keepdim)[0]), self._dtype)


def _var_mean(self, dim=None, correction=None, keepdim=False):
    var, mu = _moments("var_mean", self, dim, correction, keepdim)
    return _as(var, self._dtype), _as(mu, self._dtype)


def _std_mean(self, dim=None, correction=None, keepdim=False):
    var, mu = _moments("std_mean", self, dim, correction, keepdim)
    return _as(_sqrt(var), self._dtype), _as(mu, self._dtype)


_STAT_ARGS = "(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)"
_check_var = _check_statistic("std and var")
var = defop(f"var.correction{_STAT_ARGS} -> Tensor", check=_check_var, composite=_var)
std = defop(f"std.correction{_STAT_ARGS} -> Tensor", check=_check_var, composite=_std)
var_mean = defop(f"var_mean.correction{_STAT_ARGS} -> (Tensor, Tensor)", check=_check_statistic("var_mean"),
                 composite=_var_mean)
std_mean = defop(f"std_mean.correction{_STAT_ARGS} -> (Tensor, Tensor)", check=_check_statistic("std_mean"),
                 composite=_std_mean)


def _statistic(name, entry, what):
    """PyTorch's overloads: ``f(input, unbiased)``, ``f(input, dim, unbiased, keepdim)`` and
    ``f(input, dim, *, correction, keepdim)``."""
    def fn(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if dim.__class__ is bool and unbiased is None:
            dim, unbiased = None, dim
        if unbiased is not None:
            if unbiased.__class__ is not bool:
                raise TypeError(f"{name}() received an invalid combination of arguments - unbiased must be "
                                f"a bool, not {type(unbiased).__name__}")
            if correction is not None:
                raise TypeError(f"{name}() received an invalid combination of arguments - got both unbiased "
                                "and correction")
            correction = 1 if unbiased else 0
        return entry(input, _dims(dim), correction=correction, keepdim=keepdim)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{what} over ``dim`` (an int, a tuple, or None for all dims) with Bessel's ``correction`` "
                  "(1 by default; ``unbiased=False`` is 0). Floating point inputs only.")
    return fn


def mean_fn(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim`` (an int, a tuple, or None for all dims); floating point inputs, or give ``dtype``."""
    return mean(input, _dims(dim), keepdim, dtype=dtype)


# -- logsumexp, softmax, log_softmax -----------------------------------------------------------
def _check_logsumexp(self, dim, keepdim=False):
    reduce_dims(self, dim)


def _logsumexp(self, dim, keepdim=False):
    out = self._dtype if self._dtype.is_floating_point else _dt.get_default_dtype()
    x = _opmath(_as(self, out))
    dims = reduce_dims(x, dim)
    if 0 in x._shape:  # nothing to shift by (amax refuses empty slices); empty sums give -inf
        return _as(_sum(x.exp(), dims, keepdim).log(), out)
    m = amax(x, dims, True)
    # an infinite max would turn x - m into NaN; shifting by 0 gives the right +-inf instead
    m = _where(m.abs() == _INF, 0.0, m)
    s = _sum((x - m).exp(), dims, keepdim).log()
    return _as(s + (m if keepdim else squeeze(m, dims)), out)


logsumexp = defop("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", check=_check_logsumexp,
                  composite=_logsumexp)


def logsumexp_fn(input, dim, keepdim=False):
    """log(sum(exp(input))) over ``dim``, computed without overflow; integers give the default float dtype."""
    return logsumexp(input, _dims(dim), keepdim)


def _check_softmax(name):
    def check(self, dim, dtype=None):
        n = len(self._shape)
        d = _wrap_dim(dim, n)
        computed = self._dtype if dtype is None else dtype
        # PyTorch returns empty inputs before picking a kernel, whatever the dtype
        if not computed.is_floating_point and 0 not in self._shape:
            kernel = "lastdim_kernel_impl" if d == max(n - 1, 0) else "kernel_impl"
            raise not_implemented(f"{name}_{kernel}", computed)
    return check


def _softmax(self, dim, dtype=None):
    x = self if dtype is None else _as(self, dtype)
    if 0 in x._shape:
        return x if x is not self else clone(x)
    y = _opmath(x)
    e = (y - amax(y, (dim,), True)).exp()
    return _as(e / _sum(e, (dim,), True), x._dtype)


def _log_softmax(self, dim, dtype=None):
    x = self if dtype is None else _as(self, dtype)
    if 0 in x._shape:
        return x if x is not self else clone(x)
    y = _opmath(x)
    # unlike logsumexp, an infinite max gives NaN here, as in PyTorch
    s = y - amax(y, (dim,), True)
    return _as(s - _sum(s.exp(), (dim,), True).log(), x._dtype)


softmax = _document(defop("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                          check=_check_softmax("softmax"), composite=_softmax),
                    "exp(x) / sum(exp(x)) along ``dim`` (computed in ``dtype`` when given).")
log_softmax = _document(defop("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                              check=_check_softmax("log_softmax"), composite=_log_softmax),
                        "log(softmax(x)) along ``dim``, computed stably (in ``dtype`` when given).")


# A composite with a formula of its own: a backend may register one fused kernel for it (the CPU
# does; cross-entropy runs it every step), and autograd records one node instead of six.
@derivative("log_softmax.int")
def _(grad, dim, result):
    return grad - result.exp() * grad.sum((dim,), keepdim=True)


# -- activations -------------------------------------------------------------------------------
_ZEROS: dict = {}      # (dtype, device) -> 0-dim zero
_LAST_ZERO: dict = {}  # dtype -> the zero last used, checked against the device: one dict lookup


def _zero_of(self):
    """A cached 0-dim zero of ``self``'s dtype and device (never written to)."""
    z = _LAST_ZERO.get(self._dtype)
    if z is None or z._device is not self._device:
        key = (self._dtype, self._device)
        z = _ZEROS.get(key)
        if z is None:
            z = _ZEROS[key] = scalar_tensor(False if self._dtype is _dt.bool else 0, self._dtype, self._device)
        _LAST_ZERO[self._dtype] = z
    return z


def _forget_zeros():
    _ZEROS.clear()
    _LAST_ZERO.clear()


REGISTRY.listeners.append(_forget_zeros)  # a backend that moved slots needs zeros with its new key set


def _check_relu(self):
    if self._dtype is _dt.bool:
        raise RuntimeError("Boolean inputs not supported for relu")


def _relu(self):
    # one primitive call, the fastest decomposition: maximum propagates NaN like PyTorch's relu, and with
    # the zero first it returns x at ties, so relu(-0.0) is -0.0 as in PyTorch
    return maximum(_zero_of(self), self)


relu = _document(defop("relu(Tensor self) -> Tensor", check=_check_relu, composite=_relu),
                 "max(x, 0) elementwise (NaN stays NaN); keeps the dtype, bool is not supported.")
relu_ = _document(defop("relu_(Tensor(a!) self) -> Tensor(a!)", check=_check_relu,
                        composite=lambda self: clamp_tensor_(self, _zero_of(self), None)),
                  "In-place relu.")


def _check_threshold_backward(grad_output, self, threshold):
    if grad_output._shape != self._shape:
        raise RuntimeError(f"grad_output and self must have the same shape, got {list(grad_output._shape)} and "
                           f"{list(self._shape)}")


# PyTorch's threshold_backward: the gradient where self > threshold, else 0. A composite every backend
# gets, with a formula of its own, that a backend may fuse (the CPU masks the bits in one pass; a
# where() over a random mask costs ten times more there).
threshold_backward = defop("threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
                           check=_check_threshold_backward,
                           composite=lambda grad_output, self, threshold: _where(self <= threshold, 0.0,
                                                                                   grad_output))


@derivative("threshold_backward")
def _(grad, self, threshold):
    return threshold_backward(grad, self, threshold), None


@derivative("relu")
@derivative("relu_")
def _(grad, result):
    # no gradient where the output is 0 (maximum would split the tie at 0)
    return threshold_backward(grad, result, 0)


def _leaky_relu(self, negative_slope=0.01):
    return _where(self > 0, self, self * negative_slope)


leaky_relu = _document(defop("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
                             check=_float_only("leaky_relu_cpu"), composite=_leaky_relu),
                       "x where x > 0, else negative_slope * x.")


def _check_gelu(self, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only("GeluKernelImpl")(self)


_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu(self, approximate="none"):
    x = _opmath(self)
    if approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI
        y = x * (inner.tanh() + 1.0) * 0.5
    else:
        y = x * ((x * _SQRT_HALF).erf() + 1.0) * 0.5
    return _as(y, self._dtype)


gelu = _document(defop("gelu(Tensor self, *, str approximate='none') -> Tensor", check=_check_gelu,
                       composite=_gelu),
                 "x * Phi(x), Phi the standard normal CDF; ``approximate='tanh'`` uses the tanh formula.")
def _silu(self):
    x = _opmath(self)
    return _as(x * x.sigmoid(), self._dtype)


silu = _document(defop("silu(Tensor self) -> Tensor", check=_float_only("silu_cpu"), composite=_silu),
                 "x * sigmoid(x) (also called swish).")


def _elu(self, alpha=1, scale=1, input_scale=1):
    x = _opmath(self)
    pos = x if scale == 1 else x * scale
    neg = (x if input_scale == 1 else x * input_scale).expm1()
    if alpha * scale != 1:
        neg = neg * (alpha * scale)
    return _as(_where(x > 0, pos, neg), self._dtype)


elu = _document(defop("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
                      check=_float_only("elu_cpu"), composite=_elu),
                "scale * x where x > 0, else alpha * scale * (exp(input_scale * x) - 1).")


@derivative("elu")
def _(grad, self, alpha, scale, input_scale):
    # PyTorch's elu_backward: the derivative of expm1 through its result (expm1(x) + 1) cancels to 0 in
    # float32 below x = -17; exp of the clamped input stays accurate, and finite for double backward
    neg = (clamp_max(self * input_scale, 0).exp() * (alpha * scale * input_scale))
    return grad * _where(self > 0, scale, neg)


def _soft(x, beta=1, threshold=20):
    bx = x if beta == 1 else x * beta
    soft = clamp_max(bx, threshold).exp().log1p()
    if beta != 1:
        soft = soft / beta
    return _where(bx > threshold, x, soft)


def _softplus(self, beta=1, threshold=20):
    return _as(_soft(_opmath(self), beta, threshold), self._dtype)


softplus = _document(defop("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
                           check=_float_only("softplus_cpu"), composite=_softplus),
                     "log(1 + exp(beta * x)) / beta, or x itself where beta * x > threshold.")


def _mish(self):
    # PyTorch's mish has no threshold; past 20, tanh of either is 1 to float64 precision
    x = _opmath(self)
    return _as(x * _soft(x).tanh(), self._dtype)


mish = _document(defop("mish(Tensor self) -> Tensor", check=_float_only("mish_cpu"), composite=_mish),
                 "x * tanh(log(1 + exp(x))).")


def _check_hardtanh(self, min_val=-1, max_val=1):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    d = self._dtype
    if d is _dt.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if d is _dt.uint8 and (int(min_val) < 0 or int(max_val) < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")


def _hardtanh(self, min_val=-1, max_val=1):
    if not self._dtype.is_floating_point:  # integer inputs keep their dtype: the limits are truncated
        min_val, max_val = int(min_val), int(max_val)
    return clamp(self, min_val, max_val)


hardtanh = _document(defop("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
                           check=_check_hardtanh, composite=_hardtanh),
                     "clamp(x, min_val, max_val), keeping the dtype (integer inputs truncate the limits).")


@derivative("hardtanh")
def _(grad, self, min_val, max_val):
    # PyTorch's hardtanh_backward: no gradient at the limits either (clamp's would pass it there)
    return _where((self <= min_val) | (self >= max_val), 0.0, grad)


relu6 = _document(defop("relu6(Tensor self) -> Tensor", check=lambda self: _check_hardtanh(self, 0, 6),
                        composite=lambda self: hardtanh(self, 0, 6)),
                  "min(max(x, 0), 6): hardtanh(x, 0, 6).")


def _check_one_hot(self, num_classes=-1):
    if self._dtype is not _dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes <= 0 and 0 in self._shape:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")


def _one_hot(self, num_classes=-1):
    if 0 in self._shape:
        return zeros(self._shape + (num_classes,), dtype=_dt.int64, device=self._device)
    # only the values can tell: PyTorch reads them back too
    if amin(self).item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    top = amax(self).item()
    if num_classes == -1:
        num_classes = top + 1
    elif top >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = arange(num_classes, device=self._device)
    return _to_copy(unsqueeze(self, -1) == classes, dtype=_dt.int64)


one_hot = _document(defop("one_hot(Tensor self, int num_classes=-1) -> Tensor", check=_check_one_hot,
                          composite=_one_hot),
                    "int64 indices to int64 one-hot vectors along a new last dim of size ``num_classes`` "
                    "(max + 1 by default).")


def _check_logaddexp(self, other):
    check_binary(self, other)
    d = result_type(self, other)
    if not d.is_floating_point:
        raise not_implemented("logaddexp_cpu", d)


def _logaddexp(self, other):
    d = result_type(self, other)
    a, b = _opmath(_as(self, d)), _opmath(_as(other, d))
    out = maximum(a, b) + (-(a - b).abs()).exp().log1p()
    # inf - inf would be NaN: equal infinities are their own result
    return _as(_where((a == b) & (a.abs() == _INF), a, out), d)


logaddexp = _document(defop("logaddexp(Tensor self, Tensor other) -> Tensor", check=_check_logaddexp,
                            composite=_logaddexp),
                      "log(exp(x) + exp(y)) without overflow; floating point results only.")


# -- linear, addmm, outer ----------------------------------------------------------------------
def _check_expandable(t, size):
    """``t`` broadcasts to ``size`` without growing: PyTorch's expand errors otherwise."""
    shape = t._shape
    n, m = len(shape), len(size)
    if n > m:
        raise RuntimeError(f"expand({t._dtype}{{{list(shape)}}}, size={list(size)}): the number of sizes "
                           f"provided ({m}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({n})")
    for i in reversed(range(n)):
        have, want = shape[i], size[m - n + i]
        if have != want and have != 1:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the existing size ({have}) "
                               f"at non-singleton dimension {m - n + i}.  Target sizes: {list(size)}.  "
                               f"Tensor sizes: {list(shape)}")


def _check_addmm(self, mat1, mat2, beta=1, alpha=1):
    if self._dtype is not mat2._dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_pt_name(self._dtype)} and "
                           f"{_pt_name(mat2._dtype)}")
    if mat1._dtype is not mat2._dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_pt_name(mat1._dtype)} and "
                           f"{_pt_name(mat2._dtype)}")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if len(m._shape) != 2:
            raise RuntimeError(f"{name} must be a matrix, got {len(m._shape)}-D tensor")
    (n, k), (k2, p) = mat1._shape, mat2._shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{p})")
    _check_expandable(self, (n, p))
    if self._dtype is _dt.bool and n * p:
        if k:
            raise not_implemented("addmm_impl_cpu_", _dt.bool)
        if beta != 0 and beta.__class__ is not bool:  # PyTorch scales self in place by the number
            raise RuntimeError(f"result type {'Float' if beta.__class__ is float else 'Long'} can't be cast to "
                               "the desired output type Bool")


def _addmm(self, mat1, mat2, beta=1, alpha=1):
    d = self._dtype
    if not d.is_floating_point:  # integer results truncate the factors, as PyTorch does
        beta, alpha = int(beta), int(alpha)
    # a zero factor skips its operand entirely, so its NaNs and infs do not leak (as in BLAS)
    if alpha == 0 or mat1._shape[1] == 0:
        out = zeros((mat1._shape[0], mat2._shape[1]), dtype=d, device=self._device)
    else:
        out = matmul(_opmath(mat1), _opmath(mat2))
        if alpha != 1:
            out = out * alpha
    if beta != 0:
        out = out + (_opmath(self) if beta == 1 else _opmath(self) * beta)
    return _as(out, d)


addmm = _document(defop("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) "
                        "-> Tensor", check=_check_addmm, composite=_addmm),
                  "beta * self + alpha * (mat1 @ mat2), self broadcast to the product's shape; one dtype for "
                  "all three.")


def _check_linear(input, weight, bias=None):
    ni, nw = len(input._shape), len(weight._shape)
    if ni == 0 or nw == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {ni}D and {nw}D")
    if nw > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nw}D")


def _fusable_bias(bias):
    """PyTorch's test for folding the bias into an addmm: one non-trivial dim, contiguous."""
    return sum(1 for s in bias._shape if s != 1) == 1 and bias.is_contiguous()


def _linear(input, weight, bias=None):
    wt = _t(weight)
    if bias is not None:
        shape = input._shape
        if len(shape) == 2:
            return addmm(bias, input, wt)
        # PyTorch folds the leading dims of a contiguous input into one addmm (so addmm's rules apply)
        if _fusable_bias(bias) and input.is_contiguous():
            rows = _count(shape, range(len(shape) - 1))
            out = addmm(bias, reshape(input, (rows, shape[-1])), wt)
            return view(out, shape[:-1] + (out._shape[1],))
    out = matmul(input, wt)
    # in place, as in PyTorch: the bias may neither widen the dtype nor the shape of the product
    return out if bias is None else add_(out, bias)


linear = _document(defop("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
                         check=_check_linear, composite=_linear),
                   "input @ weight.T + bias (weight: out_features x in_features).")


def _check_outer(self, vec2):
    for name, v in (("self", self), ("vec2", vec2)):
        if len(v._shape) != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {len(v._shape)}-D")


outer = _document(defop("outer(Tensor self, Tensor vec2) -> Tensor", check=_check_outer,
                        composite=lambda self, vec2: unsqueeze(self, 1) * vec2),
                  "The outer product of two 1-D tensors (dtypes promote).")


# -- joining and splitting ----------------------------------------------------------------------
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


# -- tril, triu, flip, roll --------------------------------------------------------------------------
def _check_tri(name):
    def check(self, diagonal=0):
        if len(self._shape) < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return check


def _tri_keep(self, diagonal, upper):
    """Bool (rows, cols) mask of the elements tril (``upper`` False) or triu keeps."""
    rows, cols = self._shape[-2], self._shape[-1]
    offset = arange(cols, device=self._device) - unsqueeze(arange(rows, device=self._device), 1)
    return offset >= diagonal if upper else offset <= diagonal


tril = _document(defop("tril(Tensor self, int diagonal=0) -> Tensor", check=_check_tri("tril"),
                       composite=lambda self, diagonal=0: _where(_tri_keep(self, diagonal, False), self,
                                                                 _zero_of(self))),
                 "The lower triangle (j - i <= diagonal) of the last two dims; the rest zeroed.")
triu = _document(defop("triu(Tensor self, int diagonal=0) -> Tensor", check=_check_tri("triu"),
                       composite=lambda self, diagonal=0: _where(_tri_keep(self, diagonal, True), self,
                                                                 _zero_of(self))),
                 "The upper triangle (j - i >= diagonal) of the last two dims; the rest zeroed.")


def _check_flip(self, dims):
    n = len(self._shape)
    seen = set()
    for d in dims:
        w = _wrap_dim(d, n)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)


def _flip(self, dims):
    out = self
    n = len(self._shape)
    for d in dims:
        d = _wrap_dim(d, n)
        size = self._shape[d] if n else 1
        if size > 1:
            out = index_select(out, d, arange(size - 1, -1, -1, device=self._device))
    return clone(self) if out is self else out


flip = _document(defop("flip(Tensor self, int[] dims) -> Tensor", check=_check_flip, composite=_flip),
                 "A copy with the order of elements reversed along each of ``dims``.")


def _check_roll(self, shifts, dims=()):
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if 0 in self._shape:  # PyTorch returns a copy of an empty tensor before looking at dims
        return
    n = len(self._shape)
    for d in dims:
        if n == 0:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        _wrap_dim(d, n)


def _roll(self, shifts, dims=()):
    if 0 in self._shape:
        return clone(self)
    if not dims:
        return view(_roll(reshape(self, (-1,)), shifts, (0,)), self._shape)
    out = self
    for s, d in zip(shifts, dims):
        d = _wrap_dim(d, len(self._shape))
        n = self._shape[d]
        s %= n
        if s:
            out = cat([narrow(out, d, n - s, s), narrow(out, d, 0, n - s)], d)
    return clone(self) if out is self else out


roll = defop("roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor", check=_check_roll, composite=_roll)


def roll_fn(input, shifts, dims=None):
    """Elements shifted by ``shifts`` along ``dims`` (ints or tuples), wrapping around; without ``dims``
    the flattened tensor is rolled and the shape restored."""
    return roll(input, _dims(shifts), () if dims is None else _dims(dims))


def _flip_method(self, *dims):
    if not dims:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    return flip(self, dims)


_flip_method.__doc__ = "``x.flip(0, 1)`` or ``x.flip((0, 1))``: " + flip.__doc__


# -- isclose, allclose, isnan, isinf, isfinite -------------------------------------------------------
def _check_isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if self._dtype is not other._dtype:
        raise RuntimeError(f"{_pt_name(self._dtype)} did not match {_pt_name(other._dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    check_binary(self, other)


def _isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = self == other
    floating = self._dtype.is_floating_point
    if equal_nan and floating:
        close = close | ((self != self) & (other != other))
    if rtol == 0 and atol == 0:
        return close
    # PyTorch's formula: integers compare in the default float dtype (uint8 differences would wrap)
    a = self if self._dtype is not _dt.bool else _to_copy(self, dtype=_dt.get_default_dtype())
    b = other if floating else _to_copy(other, dtype=_dt.get_default_dtype())
    allowed = (b * rtol).abs() + atol
    actual = (a - b).abs()
    return close | (isfinite(actual) & (actual <= allowed))


isclose = _document(defop("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
                          "bool equal_nan=False) -> Tensor", check=_check_isclose, composite=_isclose),
                    "|self - other| <= atol + rtol * |other| elementwise (equal infinities are close; NaNs "
                    "only with ``equal_nan``); both of one dtype.")


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of ``input`` is close to ``other`` (see :func:`isclose`)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def _isinf(self):
    if not self._dtype.is_floating_point:
        return zeros(self._shape, dtype=_dt.bool, device=self._device)
    return self.abs() == _INF


def _isfinite(self):
    if not self._dtype.is_floating_point:
        return ones(self._shape, dtype=_dt.bool, device=self._device)
    return (self - self) == 0  # inf - inf and NaN - NaN are NaN


isnan = _document(defop("isnan(Tensor self) -> Tensor", composite=lambda self: self != self),
                  "True where the element is NaN.")
isinf = _document(defop("isinf(Tensor self) -> Tensor", composite=_isinf), "True where the element is +-inf.")
isfinite = _document(defop("isfinite(Tensor self) -> Tensor", composite=_isfinite),
                     "True where the element is neither NaN nor +-inf.")


# -- norm -------------------------------------------------------------------------------------
def _check_vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    if not self._dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_pt_name(self._dtype)}")
    if dtype is not None:
        if not dtype.is_floating_point:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                               f"{_pt_name(dtype)}")
        if promote_types(self._dtype, dtype) is not dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_pt_name(self._dtype)}) should be "
                               f"convertible without narrowing to the specified dtype ({_pt_name(dtype)})")
    if (ord < 0 or ord == _INF) and 0 in self._shape:
        what = f"the {ord:g} norm"
        if not dim:
            raise RuntimeError(f"linalg.vector_norm cannot compute {what} on an empty tensor because the "
                               "operation does not have an identity")
        for d in dim:
            if self._shape[_wrap_dim(d, len(self._shape))] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute {what} on the dimension {d}because this "
                                   "dimension is empty and the operation does not have an identity")
    reduce_dims(self, dim)


def _vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    out = self._dtype if dtype is None else dtype
    x = _opmath(_as(self, out))
    dims = reduce_dims(x, dim)
    if ord == 2:
        r = _sqrt(_sum(x * x, dims, keepdim))
    elif ord == _INF:
        r = amax(x.abs(), dims, keepdim)
    elif ord == -_INF:
        r = amin(x.abs(), dims, keepdim)
    elif ord == 0:
        r = _sum(x != 0, dims, keepdim, dtype=x._dtype)
    elif ord == 1:
        r = _sum(x.abs(), dims, keepdim)
    else:
        total = _sum(x.abs() ** ord, dims, keepdim)
        if ord > 0:  # a zero norm's gradient is 0, as in PyTorch, not inf * 0
            zero = total == 0
            r = _where(zero, 0.0, _where(zero, 1.0, total) ** (1.0 / ord))
        else:
            r = total ** (1.0 / ord)
    return _as(r, out)


vector_norm = defop("linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
                    "ScalarType? dtype=None) -> Tensor", check=_check_vector_norm, composite=_vector_norm)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector ``p``-norm over ``dim`` (all dims by default): p a number (inf, -inf and 0 included),
    "fro" or None for 2. Floating point inputs only; ``dtype`` computes in a wider dtype."""
    dim = _dims(dim)
    if p.__class__ is str:
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype)
        dims = tuple(range(input.dim())) if dim is None else dim
        if len(dims) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
        if p != "nuc":
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        raise NotImplementedError("linalg.matrix_norm: the nuclear norm needs a singular value decomposition, "
                                  "which tensorplug does not implement")
    return vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype)


# -- Tensor methods and tensorplug.* functions -------------------------------------------------------
_var_fn = _statistic("var", var, "Variance")
_std_fn = _statistic("std", std, "Standard deviation")
for _name, _fn in {"mean": mean_fn, "var": _var_fn, "std": _std_fn, "logsumexp": logsumexp_fn,
                   "softmax": softmax, "log_softmax": log_softmax, "relu": relu, "relu_": relu_,
                   "split": split, "split_with_sizes": split_with_sizes, "chunk": chunk, "unbind": unbind,
                   "tril": tril, "triu": triu, "roll": roll_fn, "isclose": isclose, "allclose": allclose,
                   "outer": outer, "addmm": addmm, "norm": norm, "isnan": isnan, "isinf": isinf,
                   "isfinite": isfinite, "logaddexp": logaddexp}.items():
    attach(_name, _fn)
    public(_name, _fn)
attach("flip", _flip_method)

for _name, _fn in {"flip": flip, "stack": stack, "hstack": hstack, "vstack": vstack, "dstack": dstack,
                   "atleast_1d": atleast_1d, "atleast_2d": atleast_2d, "atleast_3d": atleast_3d,
                   "var_mean": _statistic("var_mean", var_mean, "(variance, mean)"),
                   "std_mean": _statistic("std_mean", std_mean, "(standard deviation, mean)"),
                   "linear": linear, "leaky_relu": leaky_relu, "gelu": gelu, "silu": silu, "elu": elu,
                   "softplus": softplus, "mish": mish, "hardtanh": hardtanh, "relu6": relu6,
                   "one_hot": one_hot}.items():
    public(_name, _fn)
