"""Scans, order statistics and NaN-aware reductions: ``cumprod``, ``cummax``/``cummin``,
``logcumsumexp``, ``aminmax``, ``median``/``nanmedian``, ``mode``, ``kthvalue``,
``quantile``/``nanquantile``, ``nansum``/``nanmean``, with ``logspace`` and the Tensor overloads
of ``clamp_min``/``clamp_max``.

Backend primitives: ``cumprod``, ``cummax``, ``cummin``, ``logcumsumexp``, ``median``,
``median.dim``, ``nanmedian``, ``nanmedian.dim``, ``mode`` and ``kthvalue``, each with a backward
formula here (the value-selecting ones scatter the gradient to the chosen indices; ``cumprod``'s
is exact with zeros in the input). The rest are CompositeImplicitAutograd: ``quantile`` sorts and
interpolates, ``nansum``/``nanmean`` mask NaN with ``where``, ``aminmax`` is ``amin`` and ``amax``.
"""

from __future__ import annotations

import math
from collections import namedtuple

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..tensor import Tensor, _wrap_dim
from ._common import document, as_dtype as _as
from ._lib import POINTWISE, defop, attach, public
from .comparison import where_fn as _where, clamp_tensor, clamp_tensor_, clamp_min as _clamp_min_s, \
    clamp_max as _clamp_max_s, clamp_min_ as _clamp_min_s_, clamp_max_ as _clamp_max_s_
from .factories import linspace, check_0d_ends
from .indexing import gather, scatter_add
from .joining import cat
from .memory import full as _full
from .pointwise import not_implemented, is_tensor
from .promotion import _pt_name
from .reductions import reduce_dims, _check_nonempty, _restore, amax, amin, sum as _sum
from .shape import flip
from .sorting import sort as _sort
from .views import reshape, squeeze

_FLOATING = _dt.FLOATING


def _zeros_like(t, dtype=None):
    return _full(t._shape, 0, dtype=dtype or t._dtype, device=t._device)


def _ones(shape, like):
    return _full(shape, 1, dtype=like._dtype, device=like._device)


# -- cumprod ----------------------------------------------------------------------------------
def _check_scan(self, dim, dtype=None):
    _wrap_dim(dim, len(self._shape))


cumprod = defop("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", check=_check_scan)


def _shift(x, d, step, fill):
    """``x`` along ``d`` moved ``step`` places towards the start, the freed end filled with ``fill``."""
    n = x._shape[d]
    if step >= n:
        return _full(x._shape, fill, dtype=x._dtype, device=x._device)
    pad_shape = x._shape[:d] + (step,) + x._shape[d + 1:]
    return cat([x.narrow(d, step, n - step), _full(pad_shape, fill, dtype=x._dtype, device=x._device)], d)


@derivative("cumprod")
def _(grad, self, dim, result):
    if not self._shape:
        return grad
    d = _wrap_dim(dim, len(self._shape))
    n = self._shape[d]
    if n <= 1:
        return grad
    x = self if self._dtype is grad._dtype else _as(self, grad._dtype)
    # d out_j / d x_i = prod_{k<=j, k!=i} x_k: the exclusive prefix product times the sum
    # S_i = sum_{j>=i} g_j prod_{i<k<=j} x_k, which is the recurrence S_i = g_i + x_{i+1} S_{i+1},
    # solved by a doubling scan: no division, so exact where the input has zeros
    s, a = grad, _shift(x, d, 1, 0)
    step = 1
    while step < n:
        s = s + a * _shift(s, d, step, 0)
        a = a * _shift(a, d, step, 0)
        step *= 2
    ones = _ones(x._shape[:d] + (1,) + x._shape[d + 1:], x)
    before = cat([ones, cumprod(x, d).narrow(d, 0, n - 1)], d)
    return before * s


# -- cummax / cummin -------------------------------------------------------------------------------
cummax_result = namedtuple("cummax", ["values", "indices"])
cummin_result = namedtuple("cummin", ["values", "indices"])

_cummax = defop("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)", check=_check_scan)
_cummin = defop("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)", check=_check_scan)


def _scatter_to_indices(grad, self, dim, indices):
    """The gradient of a value-selecting op: each output's gradient added at the index it took."""
    if not self._shape:
        return grad
    return scatter_add(_zeros_like(self, grad._dtype), _wrap_dim(dim, len(self._shape)), indices, grad)


@derivative("cummax")
def _(grads, self, dim, result1):
    return _scatter_to_indices(grads[0], self, dim, result1)


@derivative("cummin")
def _(grads, self, dim, result1):
    return _scatter_to_indices(grads[0], self, dim, result1)


def cummax(input, dim):
    """Running maximum along ``dim``: ``(values, indices)``, ties and NaN taking the latest index."""
    return cummax_result(*_cummax(input, dim))


def cummin(input, dim):
    """Running minimum along ``dim``: ``(values, indices)``, ties and NaN taking the latest index."""
    return cummin_result(*_cummin(input, dim))


# -- logcumsumexp ---------------------------------------------------------------------------------------
def _check_logcumsumexp(self, dim):
    _wrap_dim(dim, len(self._shape))
    if self._dtype.category != _FLOATING:
        raise not_implemented("logcumsumexp_out_cpu", self._dtype)


logcumsumexp = defop("logcumsumexp(Tensor self, int dim) -> Tensor", check=_check_logcumsumexp)


@derivative("logcumsumexp")
def _(grad, self, dim, result):
    if not self._shape:
        return grad
    d = _wrap_dim(dim, len(self._shape))
    # grad_i = sum_{j>=i} g_j exp(x_i - y_j): reverse log-cumsum-exps of log|g| - y, split by the sign of g
    neg_inf = -math.inf
    lg = (grad.abs()).log() - result
    pos = _where(grad > 0, lg, neg_inf)
    neg = _where(grad < 0, lg, neg_inf)
    rev_pos = flip(logcumsumexp(flip(pos, (d,)), d), (d,))
    rev_neg = flip(logcumsumexp(flip(neg, (d,)), d), (d,))
    return (rev_pos + self).exp() - (rev_neg + self).exp()


# -- aminmax ------------------------------------------------------------------------------------------------
aminmax_result = namedtuple("aminmax", ["min", "max"])


def _check_aminmax(self, dim=None, keepdim=False):
    if dim is None:
        if 0 in self._shape:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                               "no identity.")
    else:
        d = _wrap_dim(dim, len(self._shape))
        if self._shape and self._shape[d] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {d} to have non-zero size.")


def _aminmax(self, dim=None, keepdim=False):
    dims = () if dim is None else (dim,)
    if dim is None and keepdim:
        # PyTorch keeps every dim as 1
        return amin(self, dims, False).reshape((1,) * len(self._shape)), \
            amax(self, dims, False).reshape((1,) * len(self._shape))
    return amin(self, dims, keepdim), amax(self, dims, keepdim)


_aminmax_op = defop("aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
                    check=_check_aminmax, composite=_aminmax)


def aminmax(input, *, dim=None, keepdim=False):
    """The smallest and largest values (over ``dim``, or all of them) as a ``(min, max)`` named tuple."""
    return aminmax_result(*_aminmax_op(input, dim=dim, keepdim=keepdim))


# -- median, nanmedian, mode, kthvalue -------------------------------------------------------------------------
median_result = namedtuple("median", ["values", "indices"])
nanmedian_result = namedtuple("nanmedian", ["values", "indices"])
mode_result = namedtuple("mode", ["values", "indices"])
kthvalue_result = namedtuple("kthvalue", ["values", "indices"])


def _check_order_dim(name, bool_ok=False):
    def check(self, dim=-1, keepdim=False):
        d = _wrap_dim(dim, len(self._shape))
        if self._dtype is _dt.bool and not bool_ok:
            raise not_implemented("median_out", self._dtype)  # nanmedian's kernel is median's
        _check_nonempty(name, self, (d,), False)
    return check


def _check_order_full(name):
    def check(self):
        if self._dtype is _dt.bool:
            raise not_implemented("median_cpu", self._dtype)
    return check


_median_full = defop("median(Tensor self) -> Tensor", check=_check_order_full("median"))
_nanmedian_full = defop("nanmedian(Tensor self) -> Tensor", check=_check_order_full("nanmedian"))
_median_dim = defop("median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                    check=_check_order_dim("median"))
_nanmedian_dim = defop("nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                       check=_check_order_dim("nanmedian"))
_mode = defop("mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
              check=_check_order_dim("mode", bool_ok=True))


def _check_kthvalue(self, k, dim=-1, keepdim=False):
    d = _wrap_dim(dim, len(self._shape))
    n = self._shape[d] if self._shape else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if self._dtype is _dt.bool:
        raise not_implemented("kthvalue_cpu", self._dtype)


_kthvalue = defop("kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, "
                  "Tensor indices)", check=_check_kthvalue)


def _selecting_backward(grads, self, dim, keepdim, result1):
    grad, idx = grads[0], result1
    if self._shape:
        d = _wrap_dim(dim, len(self._shape))
        grad, idx = _restore(grad, self, (d,), keepdim), _restore(idx, self, (d,), keepdim)
    return _scatter_to_indices(grad, self, dim, idx)


for _name in ("median.dim", "nanmedian.dim", "mode"):
    derivative(_name)(_selecting_backward)


@derivative("kthvalue")
def _(grads, self, dim, keepdim, result1):
    return _selecting_backward(grads, self, dim, keepdim, result1)


def _evenly(grad, self, result):
    """median()/nanmedian(): the gradient shared evenly by the elements equal to the result (PyTorch's)."""
    mask = _where(result.isnan(), self.isnan(), self == result)
    return _where(mask, grad / _sum(mask), 0.0)


derivative("median")(_evenly)
derivative("nanmedian")(_evenly)


def _order_fn(name, full, by_dim, result):
    def fn(input, dim=None, keepdim=False):
        if dim is None:
            return full(input)
        return result(*by_dim(input, dim, keepdim))
    fn.__name__ = fn.__qualname__ = name
    return fn


median = _order_fn("median", _median_full, _median_dim, median_result)
median.__doc__ = """The lower median of all elements (NaN if any is NaN), or ``(values, indices)`` over ``dim``."""
nanmedian = _order_fn("nanmedian", _nanmedian_full, _nanmedian_dim, nanmedian_result)
nanmedian.__doc__ = """:func:`median` ignoring NaN (NaN only where a slice is all NaN)."""


def mode(input, dim=-1, keepdim=False):
    """The most frequent value of each slice along ``dim`` (the smallest among ties) and its last index."""
    return mode_result(*_mode(input, dim, keepdim))


def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest value (1-based) of each slice along ``dim`` and its index."""
    return kthvalue_result(*_kthvalue(input, k, dim, keepdim))


# -- quantile ----------------------------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_quantile(self, q, dim=None, keepdim=False, interpolation="linear"):
    if self._dtype is not _dt.float32 and self._dtype is not _dt.float64:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if is_tensor(q):
        if len(q._shape) > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q._dtype is not self._dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    if self.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if dim is not None:
        _wrap_dim(dim, len(self._shape))
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")


def _quantile_impl(ignore_nan):
    def impl(self, q, dim=None, keepdim=False, interpolation="linear"):
        scalar_q = not is_tensor(q)
        # a transform's tensor subclass (vmap's batched tensor) has no values to look at here
        if not scalar_q and q.__class__ is Tensor and not bool(((q >= 0) & (q <= 1)).all().item()):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        qt = _full((1,), q, dtype=self._dtype, device=self._device) if scalar_q else reshape(q, (-1,))
        if dim is None:
            x, d = reshape(self, (-1,)), 0
        else:
            d = _wrap_dim(dim, len(self._shape))
            x = self if self._shape else reshape(self, (1,))
        x = x.movedim(d, -1)
        n = x._shape[-1]
        srt = _sort(x, -1).values  # NaN sorts last
        nan = x.isnan()
        if ignore_nan:
            valid = _sum((~nan).to(self._dtype), (-1,), True)
        else:
            # a slice with NaN takes its last element (a NaN) for every q
            valid = _where(nan.any(-1, keepdim=True), math.nan, float(n))
        ranks = (qt * (valid - 1)).clamp(min=0)
        ranks = _where(ranks.isnan(), float(n - 1), ranks)
        if interpolation == "nearest":
            ranks = ranks.round()
        lo = ranks.floor().to(_dt.int64)
        hi = ranks.ceil().to(_dt.int64).clamp(max=n - 1)
        lo = lo.clamp(max=n - 1)
        v_lo, v_hi = gather(srt, -1, lo), gather(srt, -1, hi)
        if interpolation in ("lower", "nearest"):
            out = v_lo
        elif interpolation == "higher":
            out = v_hi
        elif interpolation == "midpoint":
            out = (v_lo + v_hi) * 0.5
        else:
            out = v_lo.lerp(v_hi, ranks - lo.to(self._dtype))
        out = out.movedim(-1, 0)  # (q, ...rest)
        if keepdim:
            if dim is None:
                out = reshape(out, (out._shape[0],) + (1,) * len(self._shape))
            elif self._shape:
                out = out.unsqueeze(d + 1)
        if scalar_q:
            out = squeeze(out, (0,))
        return out
    return impl


quantile_op = defop("quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation="
                    "'linear') -> Tensor", check=_check_quantile, composite=_quantile_impl(False))
quantile_scalar = defop("quantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, str "
                        "interpolation='linear') -> Tensor", check=_check_quantile, composite=_quantile_impl(False))
nanquantile_op = defop("nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str "
                       "interpolation='linear') -> Tensor", check=_check_quantile, composite=_quantile_impl(True))
nanquantile_scalar = defop("nanquantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, str "
                           "interpolation='linear') -> Tensor", check=_check_quantile,
                           composite=_quantile_impl(True))


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles (a number or a 1-D tensor in [0, 1]) over ``dim`` or all elements; a tensor
    ``q`` adds a leading dim. ``interpolation``: linear, lower, higher, midpoint or nearest."""
    if is_tensor(q):
        return quantile_op(input, q, dim, keepdim, interpolation=interpolation)
    return quantile_scalar(input, q, dim, keepdim, interpolation=interpolation)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` ignoring NaN (NaN only where a slice is all NaN)."""
    if is_tensor(q):
        return nanquantile_op(input, q, dim, keepdim, interpolation=interpolation)
    return nanquantile_scalar(input, q, dim, keepdim, interpolation=interpolation)


# -- nansum, nanmean ----------------------------------------------------------------------------------------
def _nansum_impl(self, dim=None, keepdim=False, dtype=None):
    x = _where(self.isnan(), 0, self) if self._dtype.category == _FLOATING else self
    return _sum(x, dim, keepdim, dtype=dtype)


def _check_nansum(self, dim=None, keepdim=False, dtype=None):
    reduce_dims(self, dim)


def _check_nanmean(self, dim=None, keepdim=False, dtype=None):
    d = dtype or self._dtype
    if d.category != _FLOATING:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_pt_name(d)}")
    reduce_dims(self, dim)


def _nanmean_impl(self, dim=None, keepdim=False, dtype=None):
    x = self if dtype is None else _as(self, dtype)
    not_nan = ~x.isnan()
    return _nansum_impl(x, dim, keepdim) / _sum(not_nan, dim, keepdim).to(x._dtype)


nansum = defop("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
               check=_check_nansum, composite=_nansum_impl)
nanmean = defop("nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                check=_check_nanmean, composite=_nanmean_impl)


# -- count_nonzero ------------------------------------------------------------------------------------------------
def _count_nonzero(self, dim=None):
    return _sum(self != 0, dim)


count_nonzero = defop("count_nonzero(Tensor self, int[1]? dim=None) -> Tensor", check=_check_nansum,
                      composite=_count_nonzero)


def count_nonzero_fn(input, dim=None):
    """The number of non-zero elements (int64), over ``dim`` (an int or a tuple) or all of them."""
    return count_nonzero(input, (dim,) if dim.__class__ is int else dim)


# -- logspace --------------------------------------------------------------------------------------------------
def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in the exponent."""
    check_0d_ends("logspace", start, end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = dtype or _dt.get_default_dtype()
    exps = linspace(start, end, steps, dtype=_dt.float64, device=device)
    out = _full((), float(base), dtype=_dt.float64, device=exps._device).pow(exps)
    out = out.to(d)
    return out.requires_grad_(True) if requires_grad else out


# -- clamp_min / clamp_max with tensor bounds --------------------------------------------------------------------
clamp_min_tensor = defop("clamp_min.Tensor(Tensor self, Tensor min) -> Tensor",
                         composite=lambda self, min: clamp_tensor(self, min), tags=POINTWISE)
clamp_max_tensor = defop("clamp_max.Tensor(Tensor self, Tensor max) -> Tensor",
                         composite=lambda self, max: clamp_tensor(self, None, max), tags=POINTWISE)
clamp_min_tensor_ = defop("clamp_min_.Tensor(Tensor(a!) self, Tensor min) -> Tensor(a!)",
                          composite=lambda self, min: clamp_tensor_(self, min), tags=POINTWISE)
clamp_max_tensor_ = defop("clamp_max_.Tensor(Tensor(a!) self, Tensor max) -> Tensor(a!)",
                          composite=lambda self, max: clamp_tensor_(self, None, max), tags=POINTWISE)


def _bounded(name, t_entry, s_entry):
    def fn(input, bound):
        if is_tensor(bound):
            return t_entry(input, bound)
        return s_entry(input, bound)
    fn.__name__ = fn.__qualname__ = name
    return fn


clamp_min_fn = _bounded("clamp_min", clamp_min_tensor, _clamp_min_s)
clamp_min_fn.__doc__ = "clamp(input, min=min); ``min`` a Python number or a tensor (broadcast)."
clamp_max_fn = _bounded("clamp_max", clamp_max_tensor, _clamp_max_s)
clamp_max_fn.__doc__ = "clamp(input, max=max); ``max`` a Python number or a tensor (broadcast)."
clamp_min_inplace = _bounded("clamp_min_", clamp_min_tensor_, _clamp_min_s_)
clamp_min_inplace.__doc__ = "In-place clamp_min."
clamp_max_inplace = _bounded("clamp_max_", clamp_max_tensor_, _clamp_max_s_)
clamp_max_inplace.__doc__ = "In-place clamp_max."


# -- public functions and methods ------------------------------------------------------------------------------
for _name, _fn in (("cumprod", document(cumprod, "Cumulative product along ``dim``; bool and integer inputs give "
                                                  "int64.")),
                   ("cummax", cummax), ("cummin", cummin),
                   ("logcumsumexp", document(logcumsumexp, "log(cumsum(exp(x))) along ``dim``, without overflow.")),
                   ("aminmax", aminmax), ("median", median), ("nanmedian", nanmedian), ("mode", mode),
                   ("kthvalue", kthvalue), ("quantile", quantile), ("nanquantile", nanquantile),
                   ("nansum", document(nansum, "Sum treating NaN as zero.")), ("count_nonzero", count_nonzero_fn),
                   ("nanmean", document(nanmean, "Mean of the non-NaN elements (floating point only).")),
                   ("clamp_min", clamp_min_fn), ("clamp_max", clamp_max_fn)):
    public(_name, _fn)
    attach(_name, _fn)
attach("clamp_min_", clamp_min_inplace)
attach("clamp_max_", clamp_max_inplace)
public("logspace", logspace)
