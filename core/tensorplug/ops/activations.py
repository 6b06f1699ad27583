"""Activations and the other ``nn.functional`` pointwise ops: ``relu``, ``leaky_relu``, ``gelu``,
``silu``, ``elu``, ``softplus``, ``mish``, ``hardtanh``, ``relu6``, ``softmax``, ``log_softmax``
and ``one_hot``.

Each is a CompositeImplicitAutograd kernel, so every backend gets it for free
and autograd (and any transform) differentiates it through its pieces. Every
argument check runs in the op's ``check``, once, before dispatch, so all
backends raise PyTorch's errors (its CPU messages, kernel names included).
float16 and bfloat16 inputs of the multi-step activations compute in float32
and round once at the end, as PyTorch's CPU kernels do.

Decompositions keep their gradients finite: a ``where`` whose unused branch
overflows (exp of a large input) would multiply a zero gradient by inf, so
such branches see clamped inputs. relu, hardtanh, elu and softplus have backward
formulas of their own, as in PyTorch: through ``maximum``, ``clamp``, ``expm1`` and
the clamped ``exp`` their gradients at the kinks, in the tail and at NaN would
differ from PyTorch's;
``threshold_backward`` (relu's) and ``log_softmax`` have one so that a backend
may fuse them.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor, _wrap_dim
from ._common import document as _document, opmath as _opmath, as_dtype as _as
from ._lib import DYNAMIC_SHAPE, POINTWISE, defop, attach, public
from .arithmetic import maximum
from .comparison import clamp, clamp_max, clamp_tensor_, where_fn as _where
from .factories import arange, zeros
from .memory import _to_copy, clone
from .pointwise import not_implemented, zero_of as _zero_of
from .reductions import sum as _sum, amax, amin
from .views import unsqueeze


def _float_only(kernel_name):
    """Check for activations PyTorch implements for floating dtypes only."""
    def check(self, *rest):
        if not self._dtype.is_floating_point:
            raise not_implemented(kernel_name, self._dtype)
    return check


# -- relu, threshold_backward --------------------------------------------------------------------
def _refuse_complex_clamp(self):
    if self._dtype.category == _dt.COMPLEX:  # PyTorch's relu and hardtanh are clamps
        raise NotImplementedError("clamp is not supported for complex types")


def _check_relu(self):
    if self._dtype is _dt.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    _refuse_complex_clamp(self)


def _relu(self):
    # one primitive call, the fastest decomposition: maximum propagates NaN like PyTorch's relu, and with
    # the zero first it returns x at ties, so relu(-0.0) is -0.0 as in PyTorch
    return maximum(_zero_of(self), self)


relu = _document(defop("relu(Tensor self) -> Tensor", check=_check_relu, composite=_relu, tags=POINTWISE),
                 "max(x, 0) elementwise (NaN stays NaN); keeps the dtype, bool is not supported.")
relu_ = _document(defop("relu_(Tensor(a!) self) -> Tensor(a!)", check=_check_relu,
                        composite=lambda self: clamp_tensor_(self, _zero_of(self), None), tags=POINTWISE),
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
                                                                                   grad_output), tags=POINTWISE)


@derivative("threshold_backward")
def _(grad, self, threshold):
    return threshold_backward(grad, self, threshold), None


@derivative("relu")
@derivative("relu_")
def _(grad, result):
    # no gradient where the output is 0 (maximum would split the tie at 0)
    return threshold_backward(grad, result, 0)


# -- leaky_relu, gelu, silu, elu, softplus, mish -------------------------------------------------
def _leaky_relu(self, negative_slope=0.01):
    return _where(self > 0, self, self * negative_slope)


leaky_relu = _document(defop("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
                             check=_float_only("leaky_relu_cpu"), composite=_leaky_relu, tags=POINTWISE),
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
                       composite=_gelu, tags=POINTWISE),
                 "x * Phi(x), Phi the standard normal CDF; ``approximate='tanh'`` uses the tanh formula.")


def _gelu_backward(grad_output, self, approximate="none"):
    x = _opmath(self)
    if approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI
        th = inner.tanh()
        dinner = (x * x * (3 * 0.044715) + 1.0) * _SQRT_2_OVER_PI
        dy = (th + 1.0) * 0.5 + x * (1.0 - th * th) * dinner * 0.5
    else:
        dy = ((x * _SQRT_HALF).erf() + 1.0) * 0.5 + x * (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return _as(_opmath(grad_output) * dy, grad_output._dtype)


# gelu's gradient as one pointwise op (PyTorch's gelu_backward), which a backend with a gelu kernel
# owns too; the decomposition serves the others and create_graph
gelu_backward = defop("gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor",
                      composite=_gelu_backward, tags=POINTWISE)


@derivative("gelu")
def _(grad, self, approximate):
    if is_grad_enabled() or grad.__class__ is not Tensor or self.__class__ is not Tensor:
        return _gelu_backward(grad, self, approximate)
    return gelu_backward(grad, self, approximate=approximate)


# For training, exact GELU keeps the normal CDF it computed for the forward (one tensor of the input's
# size, as scaled_dot_product_attention keeps its weights): the backward, g * (Phi(x) + x phi(x)), then
# needs only phi's exp instead of Phi again (on the CPU about a third of the passes)
def _fused_gelu_composite(self):
    x = _opmath(self)
    cdf = ((x * _SQRT_HALF).erf() + 1.0) * 0.5
    return _as(x * cdf, self._dtype), _as(cdf, self._dtype)


_fused_gelu = defop("_fused_gelu(Tensor self) -> (Tensor, Tensor)", composite=_fused_gelu_composite)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def _fused_gelu_backward_composite(grad, self, cdf):
    return grad * (cdf + self * (self * self * -0.5).exp() * _INV_SQRT_2PI)


_fused_gelu_backward = defop("_fused_gelu_backward(Tensor grad, Tensor self, Tensor cdf) -> Tensor",
                             composite=_fused_gelu_backward_composite)


@derivative("_fused_gelu", nondiff_outputs=(1,))
def _(grads, self, result1):
    g = grads[0]
    if g is None:
        return None
    if is_grad_enabled() or g.__class__ is not Tensor:
        return _gelu_backward(g, self, "none")  # create_graph: a decomposition with gradients of its own
    return _fused_gelu_backward(g, self, result1)


_FUSED_GELU_DTYPES = (_dt.float32, _dt.float64)


def gelu_fn(input, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF; ``approximate='tanh'`` uses the tanh formula.

    A plain float32/float64 input that requires grad goes through ``_fused_gelu``, which keeps Phi(x)
    for the backward; everything else is the ``gelu`` operator.
    """
    if (approximate == "none" and input.__class__ is Tensor and input._dtype in _FUSED_GELU_DTYPES
            and input.requires_grad and is_grad_enabled()):
        return _fused_gelu(input)[0]
    return gelu(input, approximate=approximate)


def _silu(self):
    x = _opmath(self)
    return _as(x * x.sigmoid(), self._dtype)


silu = _document(defop("silu(Tensor self) -> Tensor", check=_float_only("silu_cpu"), composite=_silu, tags=POINTWISE),
                 "x * sigmoid(x) (also called swish).")


def _elu(self, alpha=1, scale=1, input_scale=1):
    x = _opmath(self)
    pos = x if scale == 1 else x * scale
    neg = (x if input_scale == 1 else x * input_scale).expm1()
    if alpha * scale != 1:
        neg = neg * (alpha * scale)
    return _as(_where(x > 0, pos, neg), self._dtype)


elu = _document(defop("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
                      check=_float_only("elu_cpu"), composite=_elu, tags=POINTWISE),
                "scale * x where x > 0, else alpha * scale * (exp(input_scale * x) - 1).")


@derivative("elu")
def _(grad, self, alpha, scale, input_scale):
    # PyTorch's elu_backward: the derivative of expm1 through its result (expm1(x) + 1) cancels to 0 in
    # float32 below x = -17; exp of the clamped input stays accurate, and finite for double backward
    neg = (clamp_max(self * input_scale, 0).exp() * (alpha * scale * input_scale))
    # ``x <= 0`` picks the exponential branch, so a NaN input has the linear slope (PyTorch's choice)
    return grad * _where(self <= 0, neg, scale)


def _soft(x, beta=1, threshold=20):
    bx = x if beta == 1 else x * beta
    soft = clamp_max(bx, threshold).exp().log1p()
    if beta != 1:
        soft = soft / beta
    return _where(bx > threshold, x, soft)


def _softplus(self, beta=1, threshold=20):
    return _as(_soft(_opmath(self), beta, threshold), self._dtype)


softplus = _document(defop("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
                           check=_float_only("softplus_cpu"), composite=_softplus, tags=POINTWISE),
                     "log(1 + exp(beta * x)) / beta, or x itself where beta * x > threshold.")


@derivative("softplus")
def _(grad, self, beta, threshold):
    # PyTorch's softplus_backward: 1 past the threshold, else sigmoid(beta * x); a NaN input gives a NaN
    # gradient (through the decomposition, clamp_max's backward would turn it into 0)
    x = _opmath(self)
    bx = x if beta == 1 else x * beta
    return grad * _as(_where(bx > threshold, 1.0, bx.sigmoid()), self._dtype)


def _mish(self):
    # PyTorch's mish has no threshold; past 20, tanh of either is 1 to float64 precision
    x = _opmath(self)
    return _as(x * _soft(x).tanh(), self._dtype)


mish = _document(defop("mish(Tensor self) -> Tensor", check=_float_only("mish_cpu"), composite=_mish, tags=POINTWISE),
                 "x * tanh(log(1 + exp(x))).")


# -- hardtanh, relu6 ------------------------------------------------------------------------------
def _check_hardtanh(self, min_val=-1, max_val=1):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    d = self._dtype
    if d is _dt.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    _refuse_complex_clamp(self)
    if d is _dt.uint8 and (int(min_val) < 0 or int(max_val) < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")


def _hardtanh(self, min_val=-1, max_val=1):
    if not self._dtype.is_floating_point:  # integer inputs keep their dtype: the limits are truncated
        min_val, max_val = int(min_val), int(max_val)
    return clamp(self, min_val, max_val)


hardtanh = _document(defop("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
                           check=_check_hardtanh, composite=_hardtanh, tags=POINTWISE),
                     "clamp(x, min_val, max_val), keeping the dtype (integer inputs truncate the limits).")


@derivative("hardtanh")
def _(grad, self, min_val, max_val):
    # PyTorch's hardtanh_backward: no gradient at the limits either (clamp's would pass it there)
    return _where((self <= min_val) | (self >= max_val), 0.0, grad)


relu6 = _document(defop("relu6(Tensor self) -> Tensor", check=lambda self: _check_hardtanh(self, 0, 6),
                        composite=lambda self: hardtanh(self, 0, 6), tags=POINTWISE),
                  "min(max(x, 0), 6): hardtanh(x, 0, 6).")


# -- softmax, log_softmax ----------------------------------------------------------------------
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


# Composites with a formula of their own: a backend may register one fused kernel for each (the CPU
# does; cross-entropy runs log_softmax every step), and autograd records one node instead of six. Their
# backward formulas are ops too, PyTorch's _softmax_backward_data and _log_softmax_backward_data, so a
# backend can fuse the backward as well (computed in float32 for half types, rounded once).
def _log_softmax_backward(grad_output, output, dim, input_dtype):
    g = _opmath(grad_output)
    return _as(g - _opmath(output).exp() * _sum(g, (dim,), True), input_dtype)


def _softmax_backward(grad_output, output, dim, input_dtype):
    y = _opmath(output)
    gy = _opmath(grad_output) * y
    return _as(gy - y * _sum(gy, (dim,), True), input_dtype)


_log_softmax_backward_data = defop("_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, "
                                   "ScalarType input_dtype) -> Tensor", composite=_log_softmax_backward)
_softmax_backward_data = defop("_softmax_backward_data(Tensor grad_output, Tensor output, int dim, "
                               "ScalarType input_dtype) -> Tensor", composite=_softmax_backward)


@derivative("log_softmax.int")
def _(grad, dim, result):
    if is_grad_enabled() or grad.__class__ is not Tensor:  # create_graph, or a transform's wrapper:
        return _log_softmax_backward(grad, result, dim, result._dtype)  # the ops, with gradients of their own
    return _log_softmax_backward_data(grad, result, dim, result._dtype)


@derivative("softmax.int")
def _(grad, dim, result):
    if is_grad_enabled() or grad.__class__ is not Tensor:
        return _softmax_backward(grad, result, dim, result._dtype)
    return _softmax_backward_data(grad, result, dim, result._dtype)


# -- one_hot --------------------------------------------------------------------------------------
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
                          composite=_one_hot, tags=DYNAMIC_SHAPE),
                    "int64 indices to int64 one-hot vectors along a new last dim of size ``num_classes`` "
                    "(max + 1 by default).")


# -- Tensor methods and tensorplug.* functions -------------------------------------------------------
for _name, _fn in {"softmax": softmax, "log_softmax": log_softmax, "relu": relu, "relu_": relu_}.items():
    attach(_name, _fn)
    public(_name, _fn)
for _name, _fn in {"leaky_relu": leaky_relu, "gelu": gelu_fn, "silu": silu, "elu": elu, "softplus": softplus,
                   "mish": mish, "hardtanh": hardtanh, "relu6": relu6, "one_hot": one_hot}.items():
    public(_name, _fn)
