"""Reductions over dimensions: schemas, argument checks and result dtypes.

Backend primitives: ``sum.dim_IntList``, ``prod.dim_int``, ``amax``, ``amin``,
``argmax``, ``argmin``, ``any.dims``, ``all.dims`` and ``cumsum``. The rest
decompose: ``prod`` (full) over ``prod.dim_int``, ``max``/``min`` (full) over
``amax``/``amin``, ``max.dim``/``min.dim`` over ``argmax``/``argmin`` and
``gather``, ``max.other``/``min.other`` over the elementwise ``maximum`` and
``minimum``. Every check (dims, empty inputs, dtypes) runs here, once, so all
backends raise PyTorch's errors.
"""

from __future__ import annotations

from collections import namedtuple

from .. import dtypes as _dt
from ..tensor import Tensor, _wrap_dim
from ._lib import defop, attach, public
from .memory import _to_copy
from .views import reshape, squeeze


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
    return _dt.int64 if d.category != _dt.FLOATING else d


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


# -- sum, prod, cumsum ------------------------------------------------------------------
def _check_sum(self, dim=None, keepdim=False, dtype=None):
    reduce_dims(self, dim)


sum = defop("sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)"
            " -> Tensor", check=_check_sum)


def _check_prod_dim(self, dim, keepdim=False, dtype=None):
    _wrap_dim(dim, len(self._shape))


prod_dim = defop("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                 check=_check_prod_dim)


def _prod_impl(self, dtype=None):
    return prod_dim(reshape(self, (-1,)), 0, False, dtype=dtype)


prod_full = defop("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", composite=_prod_impl)


def _check_cumsum(self, dim, dtype=None):
    _wrap_dim(dim, len(self._shape))


cumsum = defop("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", check=_check_cumsum)


# -- amax, amin, argmax, argmin --------------------------------------------------------
def _check_extreme(name):
    def check(self, dim=(), keepdim=False):
        reduce_dims(self, dim)
        _check_nonempty(name, self, dim, not dim)
    return check


amax = defop("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", check=_check_extreme("amax"))
amin = defop("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", check=_check_extreme("amin"))


def _check_arg_extreme(name):
    def check(self, dim=None, keepdim=False):
        if self._dtype is _dt.bool:
            raise RuntimeError(f"{name}(): does not support bool input")
        dims = () if dim is None else (_wrap_dim(dim, len(self._shape)),)
        _check_nonempty(name, self, dims, dim is None)
    return check


argmax = defop("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
               check=_check_arg_extreme("argmax"))
argmin = defop("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
               check=_check_arg_extreme("argmin"))


# -- max / min ---------------------------------------------------------------------------
max_result = namedtuple("max", ["values", "indices"])
min_result = namedtuple("min", ["values", "indices"])


def _check_full(name):
    def check(self):
        _check_nonempty(name, self, (), True)
    return check


def _check_dim(name):
    def check(self, dim, keepdim=False):
        _check_nonempty(name, self, (_wrap_dim(dim, len(self._shape)),), False)
    return check


def _with_values(arg_entry):
    """max.dim/min.dim: the indices from argmax/argmin, the values gathered at them."""
    def impl(self, dim, keepdim=False):
        from .indexing import gather  # indexing imports this module
        # argmax refuses bool but max does not; uint8 orders False < True the same way
        idx = arg_entry(self if self._dtype is not _dt.bool else _to_copy(self, dtype=_dt.uint8), dim, True)
        values = gather(self, dim, idx)
        if keepdim or not self._shape:
            return values, idx
        return squeeze(values, (dim,)), squeeze(idx, (dim,))
    return impl


def _elementwise(name):
    """max.other/min.other: looked up at call time, since the elementwise module defines them."""
    def impl(self, other):
        from .. import ops
        return getattr(ops.tensorplug, name)(self, other)
    return impl


max_full = defop("max(Tensor self) -> Tensor", check=_check_full("max"), composite=amax)
min_full = defop("min(Tensor self) -> Tensor", check=_check_full("min"), composite=amin)
max_dim = defop("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                check=_check_dim("max"), composite=_with_values(argmax))
min_dim = defop("min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                check=_check_dim("min"), composite=_with_values(argmin))
max_other = defop("max.other(Tensor self, Tensor other) -> Tensor", composite=_elementwise("maximum"))
min_other = defop("min.other(Tensor self, Tensor other) -> Tensor", composite=_elementwise("minimum"))


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


# -- any / all ----------------------------------------------------------------------------
def _check_logical(self, dim=None, keepdim=False):
    reduce_dims(self, dim)


any = defop("any.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor", check=_check_logical)
all = defop("all.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor", check=_check_logical)


# -- Tensor methods and tensorplug.* functions -------------------------------------------
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements, or over ``dim``; bool and integer inputs give int64."""
    if dim is None:
        if keepdim:
            raise TypeError("prod() received an invalid combination of arguments: keepdim needs dim")
        return prod_full(input, dtype=dtype)
    return prod_dim(input, dim, keepdim, dtype=dtype)


def document(entry, text):
    """Put a user-facing sentence in front of an entry function's schema docstring."""
    entry.__doc__ = f"{text}\n\n{entry.__doc__}"
    return entry


for _name, _fn, _doc in (
        ("sum", sum, "Sum over ``dim`` (an int, a tuple, or None for all); bool and integer inputs give int64."),
        ("cumsum", cumsum, "Cumulative sum along ``dim``; bool and integer inputs give int64."),
        ("amax", amax, "Largest values over ``dim`` (an int or a tuple; all dims by default); NaN propagates."),
        ("amin", amin, "Smallest values over ``dim`` (an int or a tuple; all dims by default); NaN propagates."),
        ("argmax", argmax, "int64 index of the first largest value over ``dim``, or in the flattened input."),
        ("argmin", argmin, "int64 index of the first smallest value over ``dim``, or in the flattened input."),
        ("any", any, "Whether any element over ``dim`` is nonzero (bool; uint8 for uint8 inputs)."),
        ("all", all, "Whether every element over ``dim`` is nonzero (bool; uint8 for uint8 inputs).")):
    attach(_name, document(_fn, _doc))
    public(_name, _fn)
for _name, _fn in (("prod", prod), ("max", max), ("min", min)):
    attach(_name, _fn)
    public(_name, _fn)


# -- backward formulas ----------------------------------------------------------------
# argmax, argmin, any and all give integer or bool results: nothing to differentiate.
from ..autograd.formulas import derivative  # noqa: E402
from ..autograd.helpers import unsqueeze_dims  # noqa: E402
from .memory import full as _full  # noqa: E402


def _restore(t, self, dims, keepdim):
    """``t`` (reduced over ``dims``) with the reduced dims back as size 1, to broadcast against ``self``."""
    if keepdim or not self._shape:
        return t
    return unsqueeze_dims(t, dims, len(self._shape))


@derivative("sum.dim_IntList")
def _(grad, self_shape, dim, keepdim):
    n = len(self_shape)
    if not keepdim and n:
        dims = range(n) if not dim else sorted(d % n for d in dim)
        for d in dims:
            grad = grad.unsqueeze(d)
    return grad.expand(self_shape)


def _scan_product(x, d, reverse):
    """Inclusive cumulative product of ``x`` along ``d`` (from the end if ``reverse``).

    A doubling scan (log2(n) steps of narrow, mul and cat) so that it stays
    differentiable to any order without a cumprod primitive.
    """
    from .indexing import cat  # indexing imports this module
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
    from .indexing import cat
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
        return grad * (result / x)
    return grad * _product_of_others(x, d)


@derivative("cumsum")
def _(grad, dim):
    if not grad._shape:
        return grad
    d = _wrap_dim(dim, len(grad._shape))
    if grad._shape[d] <= 1:
        return grad
    from .composite import flip  # composite imports this module
    # each input element feeds every later output: a cumulative sum from the end
    return flip(cumsum(flip(grad, (d,)), d), (d,))


def _extreme_backward(grad, self, dim, keepdim, result):
    """amax/amin: the gradient split evenly among the elements equal to the extreme (PyTorch's rule)."""
    dims = reduce_dims(self, dim)
    grad, result = _restore(grad, self, dims, keepdim), _restore(result, self, dims, keepdim)
    mask = self == result
    # a NaN extreme matches nothing: 0 / 0 makes the whole slice's gradient NaN, as in PyTorch
    return (grad / sum(mask, dims, True)) * mask


derivative("amax")(_extreme_backward)
derivative("amin")(_extreme_backward)
