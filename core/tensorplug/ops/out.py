"""``out=``: PyTorch's functions write their result into a given tensor (a tuple of them for several results).

One mechanism for every public function that has an out variant in PyTorch (:data:`OUT_FUNCTIONS`):
:func:`install` replaces ``tensorplug.<name>`` (and ``tensorplug.linalg/special/fft.<name>``) by a wrapper
that calls the function as it is when ``out`` is None, so the call without ``out=`` costs one frame and
one comparison; Tensor methods take no ``out=`` (as in PyTorch) and are not wrapped.

With ``out=`` given, as PyTorch:

* a function with out= records no autograd history: with grad mode on, an input or an out tensor that
  requires grad raises ``"<name>(): functions with out=... arguments don't support automatic
  differentiation, but one of the arguments requires grad."``;
* the result is computed, then each out tensor is checked: the same device; no two elements at one memory
  location (an expanded out); no memory shared with an input (pointwise ops allow the very same elements,
  which they read before writing); its dtype: by default the result must cast to it ("result type Float
  can't be cast to the desired output type Long"), the ops of :data:`_SAME_DTYPE` want the result's dtype
  itself, each with PyTorch's message;
* an out of another shape is resized (a deprecation warning when it had elements), then the result is
  copied in and ``out`` itself is returned (a tuple of the out tensors, of the result's type).
"""

from __future__ import annotations

import inspect

from .. import dtypes as _dt
from .._warn import warn_user
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..dispatch.argcheck import has_internal_overlap, _INTERNAL_OVERLAP, _dense_span
from ..tensor import Tensor


def _can_cast(result, out):
    return result.category <= out.category  # as check_can_cast: no float into int, no complex into float

_FACTORIES = ("arange empty empty_like eye full full_like linspace logspace normal ones ones_like rand rand_like "
              "randint randint_like randn randn_like randperm tril_indices triu_indices zeros zeros_like")

OUT_FUNCTIONS = {
    # namespace: the functions PyTorch gives out= (its schemas' .out overloads, less the factories, whose
    # out= also picks the dtype, and the few whose Python binding has none)
    "": set((
        "abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax angle any "
        "arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort asin asinh atan atan2 atanh "
        "baddbmm bernoulli bincount bitwise_and bitwise_not bitwise_or bitwise_xor bmm bucketize cat cholesky "
        "clamp clamp_max clamp_min clip complex concat concatenate conj_physical copysign cos cosh cross cummax "
        "cummin cumprod cumsum deg2rad diag diag_embed diff digamma div divide dot dstack eq erf erfc erfinv exp "
        "exp2 expm1 fix float_power floor floor_divide fmax fmin fmod frac gather gcd ge ger greater "
        "greater_equal gt histc hstack hypot i0 index_add index_copy index_select inverse isin kron kthvalue "
        "lcm le lerp less less_equal lgamma log log10 log1p log2 log_softmax logaddexp logaddexp2 logcumsumexp "
        "logical_and logical_not logical_or logical_xor logit logsumexp lt masked_select matmul matrix_power "
        "max maximum mean median min minimum mm mode mul multinomial multiply mv nan_to_num nanmean nanmedian "
        "nanquantile nansum ne neg negative nonzero norm not_equal outer polar polygamma pow prod qr quantile "
        "rad2deg reciprocal remainder repeat_interleave round rsqrt scatter scatter_add scatter_reduce "
        "searchsorted sgn sigmoid sign signbit sin sinc sinh softmax sort sqrt square stack std std_mean sub "
        "subtract sum svd take_along_dim tan tanh tensordot topk tril triu true_divide trunc unique_consecutive "
        "var var_mean vstack where xlogy").split()),
    "linalg": set((
        "cholesky cholesky_ex cross det eigh eigvalsh inv inv_ex lstsq matrix_exp matrix_norm matrix_power "
        "matrix_rank multi_dot norm pinv qr slogdet solve solve_ex solve_triangular svd svdvals vecdot "
        "vector_norm").split()),
    "special": set((
        "digamma entr erf erfc erfcx erfinv exp2 expit expm1 gammaln i0 i0e i1 i1e log1p log_ndtr logit "
        "logsumexp multigammaln ndtr ndtri polygamma psi round sinc xlog1py xlogy zeta").split()),
    "fft": set("fft fft2 fftn hfft ifft ifft2 ifftn ihfft irfft irfft2 irfftn rfft rfft2 rfftn".split()),
}
assert not set(_FACTORIES.split()) & OUT_FUNCTIONS[""]


def _c(d):
    return _dt.c_type_name(d)


def _s(d):
    return _dt.scalar_type_name(d)


def _expected_out(name, res, out, inputs):
    return RuntimeError(f"Expected out tensor to have dtype {_c(res)}, but got {_c(out)} instead")


def _input_dtype(inputs, res):
    return inputs[0]._dtype if inputs else res


# ops whose out must have the result's dtype: name -> the error (name, result dtype, out dtype, inputs)
_SAME_DTYPE = {n: _expected_out for n in (
    "mm bmm matmul addmm addbmm baddbmm addmv addr mv sort argsort topk max min argmax argmin scatter "
    "scatter_add scatter_reduce take_along_dim gather aminmax softmax log_softmax cummax cummin mode median "
    "nanmedian").split()}
_SAME_DTYPE.update({
    "amax": lambda name, res, out, inputs: RuntimeError(
        f"Expected the dtype for input and out to match, but got {_s(_input_dtype(inputs, res))} for input's "
        f"dtype and {_s(out)} for out's dtype."),
    "amin": lambda name, res, out, inputs: RuntimeError(
        f"Expected the dtype for input and out to match, but got {_s(_input_dtype(inputs, res))} for input's "
        f"dtype and {_s(out)} for out's dtype."),
    "index_select": lambda name, res, out, inputs: RuntimeError(
        "index_select(): self and result must have the same scalar type"),
    "masked_select": lambda name, res, out, inputs: RuntimeError(
        "masked_select(): self and result must have the same scalar type"),
    "complex": lambda name, res, out, inputs: RuntimeError(
        f"Expected object of scalar type {_s(res)} but got scalar type {_s(out)} for argument 'out'"),
    "polar": lambda name, res, out, inputs: RuntimeError(
        f"Expected object of scalar type {_s(res)} but got scalar type {_s(out)} for argument 'out'"),
    "multinomial": lambda name, res, out, inputs: RuntimeError(
        f"multinomial expects Long tensor out, got: {_s(out)}"),
    "kthvalue": lambda name, res, out, inputs: RuntimeError("output values must be of same type as input"),
    "where": lambda name, res, out, inputs: RuntimeError(f"Expected out type to be {_s(res)} but got {_s(out)}"),
    "nonzero": lambda name, res, out, inputs: RuntimeError(
        f"nonzero: Expected out tensor to have scalar type Long but got scalar type{_s(out)}"),
    "dot": lambda name, res, out, inputs: RuntimeError(
        f"result dtype {_s(out)} does not match input dtype {_s(res)}"),
})

# the ones whose result-to-out cast check has its own message
_CAST_ERRORS = {
    "cat": lambda res, out: TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                                      f"{_s(out)}"),
}
_CAST_ERRORS["concat"] = _CAST_ERRORS["concatenate"] = _CAST_ERRORS["cat"]


def _tensors(v, acc):
    if isinstance(v, Tensor):
        acc.append(v)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _tensors(x, acc)
    return acc


def _overlap_error(out, t, full_ok):
    """PyTorch's check that ``out`` shares no memory with the input ``t`` (for pointwise ops, the very
    same elements are allowed: each is read before it is written)."""
    if out._get_storage() is not t._get_storage():
        return
    same = (out._shape == t._shape and out.stride() == t.stride() and out.storage_offset() == t.storage_offset())
    if same:
        if full_ok:
            return
    else:
        a, b = _dense_span(out), _dense_span(t)
        if a is None or b is None or not (a[0] <= b[1] and b[0] <= a[1]):
            return  # disjoint, or a layout PyTorch does not analyse either
    raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                       "refer to a single memory location. Please clone() the tensor before performing the "
                       "operation.")


# PyTorch's pointwise ops (their aten ops carry Tag.pointwise) and their aliases: an out that is an input
# itself is allowed there
_POINTWISE = set((
    "abs acos acosh add addcdiv addcmul angle asin asinh atan atan2 atanh bitwise_and bitwise_not bitwise_or "
    "bitwise_xor clamp clamp_max clamp_min clip conj_physical copysign cos cosh deg2rad digamma div eq erf erfc "
    "erfinv exp exp2 expm1 float_power floor fmax fmin fmod frac gcd ge gt hypot i0 lcm le lerp lgamma log "
    "log10 log1p log2 logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logit lt max maximum "
    "min minimum mul nan_to_num ne neg polygamma pow rad2deg reciprocal remainder round rsqrt sgn sigmoid sign "
    "signbit sin sinc sinh sqrt square sub tan tanh true_divide trunc where xlogy "
    "absolute arccos arccosh arcsin arcsinh arctan arctan2 arctanh divide multiply subtract greater "
    "greater_equal less less_equal not_equal negative fix").split())
_POINTWISE |= {"special_" + n for n in OUT_FUNCTIONS["special"] - {"logsumexp"}}


def _write(name, fn, args, kwargs, out):
    inputs = _tensors(kwargs.values(), _tensors(args, []))
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(o).__name__}")
    if is_grad_enabled() and any(t.requires_grad for t in inputs + outs):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    result = fn(*args, **kwargs)
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    if isinstance(out, (tuple, list)) != isinstance(result, (tuple, list)) or len(outs) != len(results):
        want = f"a tuple of {len(results)} Tensors" if isinstance(result, (tuple, list)) else "Tensor"
        raise TypeError(f"{name}(): argument 'out' must be {want}, not "
                        f"{type(out).__name__ if not isinstance(out, (tuple, list)) else f'{len(outs)} Tensors'}")
    full_ok = name in _POINTWISE
    same = _SAME_DTYPE.get(name)
    cast_error = _CAST_ERRORS.get(name)
    for r, o in zip(results, outs):
        if o._device != r._device:
            raise RuntimeError(f"Expected out tensor to have device {r._device}, but got {o._device} instead")
        if has_internal_overlap(o):
            raise RuntimeError(_INTERNAL_OVERLAP)
        for t in inputs:
            _overlap_error(o, t, full_ok)
        if same is not None:
            if o._dtype is not r._dtype:
                raise same(name, r._dtype, o._dtype, inputs)
        elif not _can_cast(r._dtype, o._dtype):
            if cast_error is not None:
                raise cast_error(r._dtype, o._dtype)
            raise RuntimeError(f"result type {_s(r._dtype)} can't be cast to the desired output type {_s(o._dtype)}")
    with no_grad():
        for r, o in zip(results, outs):
            if o._shape != r._shape:
                if o.numel():
                    warn_user(f"An output with one or more elements was resized since it had shape "
                              f"{list(o._shape)}, which does not match the required output shape "
                              f"{list(r._shape)}. This behavior is deprecated, and in a future PyTorch release "
                              f"outputs will not be resized unless they have zero elements. You can explicitly "
                              f"reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).")
                o.data = r.detach().to(o._dtype).clone()
            else:
                o.copy_(r)
    if not isinstance(result, (tuple, list)):
        return out
    if hasattr(result, "_fields"):
        return type(result)(*outs)
    return type(result)(outs) if isinstance(result, list) else tuple(outs)


def with_out(name, fn):
    """``fn`` taking PyTorch's ``out=`` keyword (``name`` is the function's name in PyTorch's messages)."""
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return _write(name, fn, args, kwargs, out)
    wrapper.__name__ = getattr(fn, "__name__", name)
    wrapper.__qualname__ = getattr(fn, "__qualname__", name)
    wrapper.__doc__ = fn.__doc__
    wrapper.__module__ = getattr(fn, "__module__", __name__)
    wrapper.__wrapped__ = fn
    wrapper._out_name = name
    if hasattr(fn, "_op"):
        wrapper._op = fn._op
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    if sig is not None and "out" not in sig.parameters:
        params = list(sig.parameters.values())
        at = len(params)
        if params and params[-1].kind is inspect.Parameter.VAR_KEYWORD:
            at -= 1
        params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None,
                                            annotation="Optional[Any]"))
        try:
            wrapper.__signature__ = sig.replace(parameters=params)
        except ValueError:
            pass
    return wrapper


def install(namespace, which):
    """Wrap the functions of ``OUT_FUNCTIONS[which]`` found in the dict ``namespace`` (a module's globals)."""
    prefix = which + "_" if which else ""
    for n in sorted(OUT_FUNCTIONS[which]):
        fn = namespace.get(n)
        if fn is None or isinstance(fn, type) or not callable(fn) or hasattr(fn, "_out_name"):
            continue
        namespace[n] = with_out(prefix + n, fn)
