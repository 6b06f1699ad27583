"""Reductions over dimensions and the statistics built on them: schemas, checks, functions, formulas.

Backend primitives: ``sum.dim_IntList``, ``prod.dim_int``, ``amax``, ``amin``,
``argmax``, ``argmin``, ``any.dims``, ``all.dims`` and ``cumsum``. The rest
decompose: ``prod`` (full) over ``prod.dim_int``, ``max``/``min`` (full) over
``amax``/``amin``, ``max.dim``/``min.dim`` over ``argmax``/``argmin`` and
``gather``, ``max.other``/``min.other`` over the elementwise ``maximum`` and
``minimum``; the statistics ``mean``, ``var``, ``std``, ``var_mean``,
``std_mean`` and ``logsumexp`` over ``sum`` and ``amax`` (float16 and bfloat16
inputs in float32, rounded once at the end, as PyTorch's CPU kernels do).
Every check (dims, empty inputs, dtypes) runs here, once, so all backends
raise PyTorch's errors.

argmax, argmin, any and all give integer or bool results: nothing to
differentiate. The other primitives have backward formulas, next to them.
"""

from __future__ import annotations

import builtins as _builtins
import math
import warnings
from collections import namedtuple

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.helpers import unsqueeze_dims
from ..tensor import Tensor, _wrap_dim
from ._common import document, dims_arg as _dims, opmath as _opmath, as_dtype as _as, cj
from ._lib import POINTWISE, defop, attach, public
from .arithmetic import maximum, minimum
from .pointwise import not_implemented
from .comparison import where_fn as _where
from .indexing import gather
from .joining import cat
from .memory import _to_copy, full as _full
from .promotion import _pt_name
from .shape import flip
from .views import reshape, squeeze

_F16, _BF16, _F32 = _dt.float16, _dt.bfloat16, _dt.float32
_INF = math.inf


def reduce_dims(self, dim):
    """Normalised, sorted, unique dims for ``dim`` (None or () means all dims)."""
    n = len(self._shape)
    if not dim:
        return tuple(range(n))
    if len(dim) == 1:
        d = dim[0]
        return dim if 0 <= d < n else (_wrap_dim(d, n),)
    out = sorted({_wrap_dim(d, n) for d in dim})
    if len(out) != len(dim):
        seen = set()
        for d in dim:
            w = _wrap_dim(d, n)
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.add(w)
    return tuple(out)


def sum_dtype(self, dtype=None):
    """sum/prod/cumsum accumulate bool and integer inputs in int64, as in PyTorch."""
    if dtype is not None:
        return dtype
    d = self._dtype
    return _dt.int64 if d.category < _dt.FLOATING else d


def any_dtype(self):
    """any/all give bool, except for uint8 inputs, which keep uint8 (PyTorch's legacy rule)."""
    return _dt.uint8 if self._dtype is _dt.uint8 else _dt.bool


def _check_nonempty(name, self, dims, full):
    """Reductions without an identity (max, argmax...) refuse empty slices, as PyTorch does.

    ``dims`` are reported as given: amax names the dim the caller wrote, max/argmax a wrapped one.
    """
    shape = self._shape
    if full and 0 in shape:
        extra = "" if name.startswith("arg") else " Specify the reduction dim with the 'dim' argument."
        exc = IndexError if name.startswith("arg") else RuntimeError
        raise exc(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{extra}")
    for d in dims:
        if shape and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _restore(t, self, dims, keepdim):
    """``t`` (reduced over ``dims``) with the reduced dims back as size 1, to broadcast against ``self``."""
    if keepdim or not self._shape:
        return t
    return unsqueeze_dims(t, dims, len(self._shape))


def count(shape, dims):
    """Number of elements each output element reduces over (1 for a 0-dim input)."""
    n = 1
    if shape:
        for d in dims:
            n *= shape[d]
    return n


def safe_sqrt(x):
    """sqrt(x) whose gradient is 0, not NaN, where x is 0 (PyTorch's std and norm backward)."""
    zero = x == 0
    return _where(zero, 0.0, _where(zero, 1.0, x).sqrt())


# -- sum, prod, cumsum ------------------------------------------------------------------
def _check_sum(self, dim=None, keepdim=False, dtype=None):
    reduce_dims(self, dim)


sum = defop("sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)"
            " -> Tensor", check=_check_sum)
attach("sum", document(sum, "Sum over ``dim`` (an int, a tuple, or None for all); bool and integer inputs give "
                            "int64."))
public("sum", sum)


@derivative("sum.dim_IntList")
def _(grad, self_shape, dim, keepdim):
    n = len(self_shape)
    if not keepdim and n:
        dims = range(n) if not dim else sorted(d % n for d in dim)
        for d in dims:
            grad = grad.unsqueeze(d)
    return grad.expand(self_shape)


def _check_prod_dim(self, dim, keepdim=False, dtype=None):
    _wrap_dim(dim, len(self._shape))


prod_dim = defop("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                 check=_check_prod_dim)


def _prod_impl(self, dtype=None):
    return prod_dim(reshape(self, (-1,)), 0, False, dtype=dtype)


prod_full = defop("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", composite=_prod_impl)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements, or over ``dim``; bool and integer inputs give int64."""
    if dim is None:
        if keepdim:
            raise TypeError("prod() received an invalid combination of arguments: keepdim needs dim")
        return prod_full(input, dtype=dtype)
    return prod_dim(input, dim, keepdim, dtype=dtype)


attach("prod", prod)
public("prod", prod)


def _scan_product(x, d, reverse):
    """Inclusive cumulative product of ``x`` along ``d`` (from the end if ``reverse``).

    A doubling scan (log2(n) steps of narrow, mul and cat) so that it stays
    differentiable to any order without a cumprod primitive.
    """
    n = x._shape[d]
    s = 1
    while s < n:
        if reverse:
            x = cat([x.narrow(d, 0, n - s) * x.narrow(d, s, n - s), x.narrow(d, n - s, s)], d)
        else:
            x = cat([x.narrow(d, 0, s), x.narrow(d, s, n - s) * x.narrow(d, 0, n - s)], d)
        s *= 2
    return x


def _product_of_others(x, d):
    """For each element of ``x``, the product of the other elements of its slice along ``d``.

    Exclusive prefix times exclusive suffix products: exact when ``x`` has zeros,
    unlike ``prod / x`` (PyTorch's prod_safe_zeros_backward).
    """
    n = x._shape[d]
    if n == 1:
        return _full(x._shape, 1, dtype=x._dtype, device=x._device)
    ones = _full(x._shape[:d] + (1,) + x._shape[d + 1:], 1, dtype=x._dtype, device=x._device)
    before = _scan_product(cat([ones, x.narrow(d, 0, n - 1)], d), d, False)
    after = _scan_product(cat([x.narrow(d, 1, n - 1), ones], d), d, True)
    return before * after


@derivative("prod.dim_int")
def _(grad, self, dim, keepdim, result):
    if not self._shape:
        return grad
    d = _wrap_dim(dim, len(self._shape))
    grad, result = _restore(grad, self, (d,), keepdim), _restore(result, self, (d,), keepdim)
    x = self if self._dtype is grad._dtype else _to_copy(self, dtype=grad._dtype)
    # like PyTorch, one zero anywhere (a host sync) switches every slice to the exact path
    if not (x == 0).any().item():
        return grad * cj(result / x)
    return grad * cj(_product_of_others(x, d))


def _check_cumsum(self, dim, dtype=None):
    _wrap_dim(dim, len(self._shape))


cumsum = defop("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", check=_check_cumsum)
attach("cumsum", document(cumsum, "Cumulative sum along ``dim``; bool and integer inputs give int64."))
public("cumsum", cumsum)


@derivative("cumsum")
def _(grad, dim):
    if not grad._shape:
        return grad
    d = _wrap_dim(dim, len(grad._shape))
    if grad._shape[d] <= 1:
        return grad
    # each input element feeds every later output: a cumulative sum from the end
    return flip(cumsum(flip(grad, (d,)), d), (d,))


# -- amax, amin, argmax, argmin --------------------------------------------------------
def _no_complex(self, kernel):
    if self._dtype.category == _dt.COMPLEX:  # complex numbers have no order
        raise not_implemented(kernel, self._dtype)


def _check_extreme(name):
    kernel = "max_values_cpu" if name == "amax" else "min_values_cpu"

    def check(self, dim=(), keepdim=False):
        _no_complex(self, kernel)
        reduce_dims(self, dim)
        _check_nonempty(name, self, dim, not dim)
    return check


amax = defop("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", check=_check_extreme("amax"))
amin = defop("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", check=_check_extreme("amin"))


def _extreme_backward(grad, self, dim, keepdim, result):
    """amax/amin: the gradient split evenly among the elements equal to the extreme (PyTorch's rule)."""
    dims = reduce_dims(self, dim)
    grad, result = _restore(grad, self, dims, keepdim), _restore(result, self, dims, keepdim)
    mask = self == result
    # a NaN extreme matches nothing: 0 / 0 makes the whole slice's gradient NaN, as in PyTorch
    return (grad / sum(mask, dims, True)) * mask


derivative("amax")(_extreme_backward)
derivative("amin")(_extreme_backward)


def _check_arg_extreme(name):
    def check(self, dim=None, keepdim=False):
        if self._dtype is _dt.bool:
            raise RuntimeError(f"{name}(): does not support bool input")
        if self._dtype.category == _dt.COMPLEX:
            raise RuntimeError(f"{name}(): does not support complex input")
        dims = () if dim is None else (_wrap_dim(dim, len(self._shape)),)
        _check_nonempty(name, self, dims, dim is None)
    return check


argmax = defop("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
               check=_check_arg_extreme("argmax"))
argmin = defop("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
               check=_check_arg_extreme("argmin"))

for _name, _fn, _doc in (
        ("amax", amax, "Largest values over ``dim`` (an int or a tuple; all dims by default); NaN propagates."),
        ("amin", amin, "Smallest values over ``dim`` (an int or a tuple; all dims by default); NaN propagates."),
        ("argmax", argmax, "int64 index of the first largest value over ``dim``, or in the flattened input."),
        ("argmin", argmin, "int64 index of the first smallest value over ``dim``, or in the flattened input.")):
    attach(_name, document(_fn, _doc))
    public(_name, _fn)


# -- max / min ---------------------------------------------------------------------------
max_result = namedtuple("max", ["values", "indices"])
min_result = namedtuple("min", ["values", "indices"])


def _check_full(name):
    def check(self):
        _no_complex(self, f"{name}_all")
        _check_nonempty(name, self, (), True)
    return check


def _check_dim(name):
    def check(self, dim, keepdim=False):
        if self._dtype.category == _dt.COMPLEX:
            raise RuntimeError(f"{name}(): does not support complex input")
        _check_nonempty(name, self, (_wrap_dim(dim, len(self._shape)),), False)
    return check


def _with_values(arg_entry):
    """max.dim/min.dim: the indices from argmax/argmin, the values gathered at them."""
    def impl(self, dim, keepdim=False):
        # argmax refuses bool but max does not; uint8 orders False < True the same way
        idx = arg_entry(self if self._dtype is not _dt.bool else _to_copy(self, dtype=_dt.uint8), dim, True)
        values = gather(self, dim, idx)
        if keepdim or not self._shape:
            return values, idx
        return squeeze(values, (dim,)), squeeze(idx, (dim,))
    return impl


max_full = defop("max(Tensor self) -> Tensor", check=_check_full("max"), composite=amax)
min_full = defop("min(Tensor self) -> Tensor", check=_check_full("min"), composite=amin)
max_dim = defop("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                check=_check_dim("max"), composite=_with_values(argmax))
min_dim = defop("min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                check=_check_dim("min"), composite=_with_values(argmin))
max_other = defop("max.other(Tensor self, Tensor other) -> Tensor", composite=maximum, tags=POINTWISE)
min_other = defop("min.other(Tensor self, Tensor other) -> Tensor", composite=minimum, tags=POINTWISE)


def _max_or_min(name, full, by_dim, other, result):
    def fn(input, dim=None, keepdim=False):
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments: keepdim needs dim")
            return full(input)
        if isinstance(dim, Tensor):
            return other(input, dim)
        return result(*by_dim(input, dim, keepdim))
    fn.__name__ = fn.__qualname__ = name
    return fn


max = _max_or_min("max", max_full, max_dim, max_other, max_result)
max.__doc__ = """``max(input)``: the largest element (NaN if any); ``max(input, dim, keepdim=False)``: a
``(values, indices)`` named tuple over ``dim`` (first occurrence wins); ``max(input, other)``: the
elementwise maximum."""
min = _max_or_min("min", min_full, min_dim, min_other, min_result)
min.__doc__ = """``min(input)``: the smallest element (NaN if any); ``min(input, dim, keepdim=False)``: a
``(values, indices)`` named tuple over ``dim`` (first occurrence wins); ``min(input, other)``: the
elementwise minimum."""
for _name, _fn in (("max", max), ("min", min)):
    attach(_name, _fn)
    public(_name, _fn)


# -- any / all ----------------------------------------------------------------------------
def _check_logical(self, dim=None, keepdim=False):
    reduce_dims(self, dim)


any = defop("any.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor", check=_check_logical)
all = defop("all.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor", check=_check_logical)
for _name, _fn, _doc in (
        ("any", any, "Whether any element over ``dim`` is nonzero (bool; uint8 for uint8 inputs)."),
        ("all", all, "Whether every element over ``dim`` is nonzero (bool; uint8 for uint8 inputs).")):
    attach(_name, document(_fn, _doc))
    public(_name, _fn)


# -- mean, var, std ----------------------------------------------------------------------------
def _check_mean(self, dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        if dtype.category < _dt.FLOATING:
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either a floating "
                               f"point or complex dtype. Got: {_pt_name(dtype)}")
    elif self._dtype.category < _dt.FLOATING:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {_pt_name(self._dtype)}")
    reduce_dims(self, dim)


def _mean(self, dim=None, keepdim=False, dtype=None):
    out = self._dtype if dtype is None else dtype
    dims = reduce_dims(self, dim)
    total = sum(self, dims, keepdim, dtype=_F32 if out is _F16 or out is _BF16 else out)
    return _as(total / count(self._shape, dims), out)


mean = defop("mean.dim(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
             check=_check_mean, composite=_mean)


def _check_statistic(name):
    def check(self, dim=None, correction=None, keepdim=False):
        if self._dtype.category < _dt.FLOATING:
            raise RuntimeError(f"{name} only support floating point and complex dtypes")
        reduce_dims(self, dim)
    return check


def _moments(name, self, dim, correction, keepdim):
    """(variance, mean) of ``self`` over ``dim``, in the compute dtype: two passes, mean first."""
    x = _opmath(self)
    dims = reduce_dims(x, dim)
    n = count(x._shape, dims)
    mu = sum(x, dims, True) / n
    dev = x - mu
    dof = n - (1 if correction is None else correction)
    if dof <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning)
    if dev._dtype.category == _dt.COMPLEX:
        dev = dev.abs()  # the variance of complex values is the mean squared distance: real
    var = sum(dev * dev, dims, keepdim) / _builtins.max(dof, 0)
    return var, (mu if keepdim else squeeze(mu, dims))


def _var(self, dim=None, correction=None, keepdim=False):
    return _as(_moments("var", self, dim, correction, keepdim)[0], self._dtype.to_real())


def _std(self, dim=None, correction=None, keepdim=False):
    return _as(safe_sqrt(_moments("std", self, dim, correction, keepdim)[0]), self._dtype.to_real())


def _var_mean(self, dim=None, correction=None, keepdim=False):
    var, mu = _moments("var_mean", self, dim, correction, keepdim)
    return _as(var, self._dtype.to_real()), _as(mu, self._dtype)


def _std_mean(self, dim=None, correction=None, keepdim=False):
    var, mu = _moments("std_mean", self, dim, correction, keepdim)
    return _as(safe_sqrt(var), self._dtype.to_real()), _as(mu, self._dtype)


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


var_fn = _statistic("var", var, "Variance")
std_fn = _statistic("std", std, "Standard deviation")
var_mean_fn = _statistic("var_mean", var_mean, "(variance, mean)")
std_mean_fn = _statistic("std_mean", std_mean, "(standard deviation, mean)")
for _name, _fn in {"mean": mean_fn, "var": var_fn, "std": std_fn}.items():
    attach(_name, _fn)
    public(_name, _fn)
public("var_mean", var_mean_fn)
public("std_mean", std_mean_fn)


# -- logsumexp --------------------------------------------------------------------------------
def _check_logsumexp(self, dim, keepdim=False):
    if self._dtype.category == _dt.COMPLEX:  # the real-valued shift below would be wrong for them
        raise NotImplementedError("logsumexp of complex tensors is not supported by tensorplug")
    reduce_dims(self, dim)


def _logsumexp(self, dim, keepdim=False):
    out = self._dtype if self._dtype.is_floating_point else _dt.get_default_dtype()
    x = _opmath(_as(self, out))
    dims = reduce_dims(x, dim)
    if 0 in x._shape:  # nothing to shift by (amax refuses empty slices); empty sums give -inf
        return _as(sum(x.exp(), dims, keepdim).log(), out)
    m = amax(x, dims, True)
    # an infinite max would turn x - m into NaN; shifting by 0 gives the right +-inf instead
    m = _where(m.abs() == _INF, 0.0, m)
    s = sum((x - m).exp(), dims, keepdim).log()
    return _as(s + (m if keepdim else squeeze(m, dims)), out)


logsumexp = defop("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", check=_check_logsumexp,
                  composite=_logsumexp)


def logsumexp_fn(input, dim, keepdim=False):
    """log(sum(exp(input))) over ``dim``, computed without overflow; integers give the default float dtype."""
    return logsumexp(input, _dims(dim), keepdim)


attach("logsumexp", logsumexp_fn)
public("logsumexp", logsumexp_fn)
