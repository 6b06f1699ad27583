"""The op database: one :class:`OpInfo` per public op of the core, primitive or composite, and
per layer and loss of ``tensorplug.nn.functional`` (named ``nn.functional.<name>``).

Importing this module fills :data:`tensorplug.testing.opinfo.OP_DB`. Entries
are built by family constructors (:func:`unary`, :func:`binary`, and per
section small ones for reductions, products, indexing, views, conversions,
random ops and Python operators) so that the table stays a table; each gives

* ``op``: the public function (or the Tensor method for method-only ops),
  called as ``op(sample.input, *sample.args, **sample.kwargs)``;
* ``ref``: a numpy reference called with the sample's tensors as numpy arrays
  (also inside lists and kwargs), Python numbers as they are. It returns
  arrays of the exact result dtype PyTorch gives (bfloat16 as ml_dtypes'),
  a tuple or list of them for multi-output ops, or a Python value;
* ``dtypes``: the dtypes PyTorch's CPU backend supports for the op (checked
  against PyTorch when the table was written), ``sample_inputs(device, dtype,
  requires_grad)``: samples with tensors on the CPU (with ``requires_grad``
  only samples where the op is smooth, no special values), and
  ``error_inputs(device)``: bad calls with PyTorch's exception type and a
  message regex (accepting PyTorch's kernel names where the core's differ).

Names are the public names; variants of one public function that differ in
their results' structure carry a suffix after a dot (``max.binary``,
``div.floor_rounding``). Public names that are the same function as an
entry's (``arccos`` for ``acos``) are listed in :data:`ALIASES` instead of
being tested twice. In-place-only methods (``fill_``, ``uniform_``) have an
``op`` that acts on a clone and the method itself as ``inplace``.

Gradient samples (``requires_grad=True``) hold at most
:data:`GRAD_SAMPLE_MAX_NUMEL` elements that require grad, keep off kinks and
discontinuities, and pass float64 gradcheck (tests/test_op_db.py).
"""

from __future__ import annotations

import math
import importlib as _importlib
import sys as _sys

import numpy as np

import tensorplug as tp
from tensorplug import Tensor

from . import samples as S
from .opinfo import OP_DB, OpInfo, SampleInput
from .samples import (small_when_grad as _small_when_grad, ALL, INTEGRAL, FLOATING, NO_BOOL, INTEGRAL_AND_BOOL, SIGNED, make_tensor,
                      index_tensor, bool_tensor, error_input as _err, errors_of as _errors)

__all__ = ["OP_DB", "ALIASES", "op_db", "get_opinfo"]

del OP_DB[:]  # a re-import must not append every entry twice

# public names (functions and Tensor methods) that are another name of an entry's op
ALIASES: dict = {}


def op_db():
    """Every :class:`OpInfo` of the database."""
    return OP_DB


def get_opinfo(name):
    """The entry called ``name`` (or the entry an alias names); KeyError if there is none."""
    name = ALIASES.get(name, name)
    for info in OP_DB:
        if info.name == name:
            return info
    raise KeyError(f"no OpInfo named {name!r}")


def _add(name, op, ref, dtypes, samples, **kw):
    info = OpInfo(name=name, op=op, ref=ref, dtypes=tuple(dtypes), sample_inputs=_small_when_grad(samples), **kw)
    OP_DB.append(info)
    return info


def _alias(entry_name, *names):
    for n in names:
        ALIASES[n] = entry_name


def _method(name):
    """The Tensor method ``name`` as a plain function (``Tensor.add_``)."""
    return getattr(Tensor, name)


def _on_copy(method_name):
    """A functional form of an in-place-only method: it acts on a clone of its input."""
    fn = getattr(Tensor, method_name)

    def op(input, *args, **kwargs):
        return fn(input.clone(), *args, **kwargs)
    op.__name__ = op.__qualname__ = method_name
    op.__doc__ = f"``Tensor.{method_name}`` applied to a clone of the input."
    return op


def _t(shape, dtype=tp.float32, seed=0, **kw):
    return make_tensor(shape, dtype, seed=seed, **kw)


def _not_impl(kernel, dtype_name):
    """Regex of PyTorch's dtype error: the core names the op, PyTorch's CPU kernel adds ``_cpu`` or ``_vml_cpu``."""
    return f'"{kernel}(_vml)?(_cpu)?" not implemented for \'{dtype_name}\''


_BCAST = r"The size of tensor a \(\d+\) must match the size of tensor b \(\d+\) at non-singleton dimension \d"
_DIM_RANGE = r"Dimension out of range \(expected to be in range of \[-?\d+, -?\d+\], but got -?\d+\)"


# -- references: small numpy building blocks ----------------------------------------------------------
def _float_ref(np_fn):
    """Reference of a floating op: float64 math, the result in the op's float dtype."""
    def ref(x):
        return S.cast(np_fn(S.f64(x)), S.float_dtype(x.dtype))
    return ref


def _same_ref(np_fn, int_fn=None):
    """Reference of a dtype-keeping op: float64 math for floats, ``int_fn`` (or ``np_fn``) in the dtype otherwise."""
    def ref(x):
        if S.is_float(x.dtype):
            return S.cast(np_fn(S.f64(x)), x.dtype)
        return S.cast((int_fn or np_fn)(x), x.dtype)
    return ref


def _bool_ref(np_fn):
    def ref(x):
        return np.asarray(np_fn(S.f64(x) if S.is_float(x.dtype) else x), dtype=np.bool_)
    return ref


def _promoted(*xs):
    """The operands cast to their PyTorch result dtype, and that dtype."""
    out = S.result_dtype(*xs)
    return [None if x is None else S.cast(x, out) for x in xs], out


def _promote_ref(np_fn, int_fn=None):
    """Reference of a promoting op: float64 math on the promoted values, or ``int_fn`` in the integer dtype."""
    def ref(*xs, **kw):
        vals, out = _promoted(*xs)
        if S.is_float(out):
            return S.cast(np_fn(*[S.f64(v) for v in vals], **kw), out)
        return S.cast((int_fn or np_fn)(*vals, **kw), out)
    return ref


def _float_binary_ref(np_fn):
    def ref(a, b):
        vals, out = _promoted(a, b)
        return S.cast(np_fn(S.f64(vals[0]), S.f64(vals[1])), S.float_dtype(out))
    return ref


def _compare_ref(np_fn):
    def ref(a, b):
        vals, out = _promoted(a, b)
        if S.is_float(out):
            vals = [S.f64(v) for v in vals]
        return np.asarray(np_fn(*vals), dtype=np.bool_)
    return ref


def _truth(x):
    return np.asarray(x) != 0


def _logical_ref(np_fn):
    def ref(a, b):
        return np.asarray(np_fn(_truth(a), _truth(b)), dtype=np.bool_)
    return ref


_ERF = np.frompyfunc(math.erf, 1, 1)


def _erf(x):
    return np.asarray(_ERF(x), dtype=np.float64)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _torch_sign(x):
    return np.where(np.isnan(x), 0.0, np.sign(x))


# -- unary ---------------------------------------------------------------------------------------------
def _unary_samples(low=None, high=None, extra=None, exclude_zero=False, avoid_zero=False):
    """Every layout of :data:`samples.LAYOUTS`, then special values (floats, not for gradients) and
    ``extra(dtype, requires_grad)``; ``avoid_zero``: gradient samples keep off a kink at 0."""
    def sample_inputs(device, dtype, requires_grad):
        for s in S.unary_layouts(dtype, requires_grad, low, high, exclude_zero=exclude_zero):
            if requires_grad and avoid_zero:
                s.input = _away_from_zero(s.input, 0.1)
            yield s
        if dtype.is_floating_point and not requires_grad:
            yield SampleInput(S.special_tensor(dtype), name="special_values")
        if extra is not None:
            yield from extra(dtype, requires_grad)
    return sample_inputs


def _away_from_zero(t, gap):
    """A tensor like ``t`` (a leaf if ``t`` requires grad) with every |value| at least ``gap``:
    finite differences across a kink fail."""
    v = S.to_numpy(t).astype(np.float64)
    v = np.where(np.abs(v) < gap, np.where(v < 0, -gap, gap), v)
    out = make_tensor(v.shape, t.dtype, values=v)
    return out.requires_grad_(True) if t.requires_grad else out


def unary(name, np_fn, *, kind="float", dtypes=ALL, int_fn=None, low=None, high=None, inplace=True, grad=True,
          errors=None, extra=None, exclude_zero=False, avoid_zero=False, op=None, aten=None, **kw):
    """An elementwise op of one tensor, the reference ``np_fn`` (``int_fn`` for integer inputs).

    ``kind``: "float" (integer and bool inputs give the default float dtype),
    "same" (the result keeps the input dtype) or "bool" (bool result).
    ``low``/``high`` bound the sampled values (domains); ``inplace``: True for
    the method ``name_``; ``errors``: the ``error_inputs`` function.
    """
    ref = {"float": lambda: _float_ref(np_fn), "same": lambda: _same_ref(np_fn, int_fn),
           "bool": lambda: _bool_ref(np_fn)}[kind]()
    if op is None:
        op = getattr(tp, name)
    if inplace is True:
        inplace = _method(name + "_")
    return _add(name, op, ref, dtypes,
                _unary_samples(low, high, extra, exclude_zero, avoid_zero),
                error_inputs=errors, supports_autograd=grad, inplace=inplace or None,
                aten=aten or ((name, name + "_") if inplace else (name,)), **kw)


def _not_a_tensor(name):
    """``op(3)``: the argument parser's TypeError (the core names the schema's argument, PyTorch 'input')."""
    regex = name + r"(\.\w+)?\(\): argument '(input|self)' \(position 1\) must be Tensor, not int"
    return lambda: _err(TypeError, regex, 3)


_FLOAT_UNARY = [
    # name, numpy function, value range (low, high) or None for the default
    ("exp", np.exp, None), ("exp2", np.exp2, None), ("expm1", np.expm1, None),
    ("log", np.log, (0.1, 9)), ("log2", np.log2, (0.1, 9)), ("log10", np.log10, (0.1, 9)),
    ("log1p", np.log1p, (-0.9, 9)), ("sqrt", np.sqrt, (0.1, 9)), ("rsqrt", lambda x: 1 / np.sqrt(x), (0.1, 9)),
    ("sin", np.sin, None), ("cos", np.cos, None), ("tan", np.tan, (-1.4, 1.4)),
    ("asin", np.arcsin, (-0.95, 0.95)), ("acos", np.arccos, (-0.95, 0.95)), ("atan", np.arctan, None),
    ("sinh", np.sinh, None), ("cosh", np.cosh, None), ("tanh", np.tanh, None), ("sigmoid", _sigmoid, None),
    ("erf", _erf, None), ("reciprocal", lambda x: 1 / x, None),
]
for _name, _fn, _range in _FLOAT_UNARY:
    _lo, _hi = _range or (None, None)
    unary(_name, _fn, low=_lo, high=_hi, exclude_zero=_name == "reciprocal", errors=_errors(_not_a_tensor(_name)))
_alias("asin", "arcsin", "arcsin_")
_alias("acos", "arccos", "arccos_")
_alias("atan", "arctan", "arctan_")

unary("abs", np.abs, kind="same", dtypes=NO_BOOL, avoid_zero=True,
      errors=_errors(lambda: _err(NotImplementedError, _not_impl("abs", "Bool"), _t((3,), tp.bool))))
_alias("abs", "absolute", "absolute_")
unary("neg", np.negative, kind="same", dtypes=NO_BOOL,
      errors=_errors(lambda: _err(RuntimeError, r"Negation, the `-` operator, on a bool tensor is not supported",
                                  _t((3,), tp.bool))))
_alias("neg", "negative", "negative_")
unary("sign", _torch_sign, kind="same", int_fn=lambda x: np.sign(x.astype(np.int64)), avoid_zero=True)
for _name, _fn in (("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc)):
    unary(_name, _fn, kind="same", dtypes=NO_BOOL, int_fn=lambda x: x,
          errors=_errors(lambda n=_name: _err(NotImplementedError, _not_impl(n, "Bool"), _t((3,), tp.bool))))
_alias("trunc", "fix", "fix_")
unary("frac", lambda x: x - np.trunc(x), kind="same", dtypes=FLOATING,
      errors=_errors(lambda: _err(NotImplementedError, _not_impl("frac", "Long"), _t((3,), tp.int64))))


def _round_extra(dtype, requires_grad):
    # halves round to even
    if dtype.is_floating_point and not requires_grad:
        yield SampleInput(make_tensor((8,), dtype, values=np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.49, -2.51, 7.5])),
                          name="halves")
        for d in (1, 2, -1):
            yield SampleInput(make_tensor((3, 4), dtype, seed=d + 10, low=-90, high=90), kwargs={"decimals": d},
                              name=f"decimals_{d}")


def _round_ref(x, decimals=0):
    if not S.is_float(x.dtype):
        return x.copy()
    return S.cast(np.round(S.f64(x), decimals), x.dtype)


_add("round", tp.round, _round_ref, NO_BOOL,
     _unary_samples(extra=_round_extra), inplace=_method("round_"), aten=("round", "round.decimals", "round_"),
     error_inputs=_errors(
         lambda: _err(NotImplementedError, _not_impl("round", "Bool"), _t((3,), tp.bool)),
         lambda: _err(NotImplementedError, _not_impl("round", "Int"), _t((3,), tp.int32), decimals=1)))
unary("logical_not", np.logical_not, kind="bool", grad=False)
unary("bitwise_not", np.invert, kind="same", dtypes=INTEGRAL_AND_BOOL, grad=False,
      errors=_errors(lambda: _err(NotImplementedError, _not_impl("bitwise_not", "Float"), _t((3,)))))


def _square_ref(x):
    out = np.dtype(np.int64) if x.dtype == np.bool_ else x.dtype
    if S.is_float(out):
        return S.cast(S.f64(x) ** 2, out)
    v = S.cast(x, out)
    return v * v


_add("square", tp.square, _square_ref, ALL, _unary_samples(), inplace=_method("square_"),
     aten=("square", "pow.Tensor_Scalar"))
unary("positive", lambda x: x, kind="same", inplace=False, dtypes=NO_BOOL,
      errors=_errors(lambda: _err(RuntimeError, r"The `\+` operator, on a bool tensor is not supported",
                                  _t((3,), tp.bool))))
unary("isnan", np.isnan, kind="bool", inplace=False, grad=False)
unary("isinf", np.isinf, kind="bool", inplace=False, grad=False)
unary("isfinite", np.isfinite, kind="bool", inplace=False, grad=False)


# -- activations ---------------------------------------------------------------------------------------
def _act_ref(fn):
    """Reference of a floating, dtype-keeping activation with keyword parameters."""
    def ref(x, *args, **kwargs):
        return S.cast(fn(S.f64(x), *args, **kwargs), x.dtype)
    return ref


def _act_samples(kwarg_sets, avoid_zero=False):
    """The unary samples, then one (3, 4) sample per set of keyword arguments.

    ``avoid_zero``: gradient samples keep off 0, where relu-like activations have a kink (other
    kinks, at hardtanh's limits, are hit with probability 0 by random values).
    """
    def extra(dtype, requires_grad):
        for i, kw in enumerate(kwarg_sets):
            t = make_tensor((3, 4), dtype, seed=20 + i, requires_grad=requires_grad)
            yield SampleInput(_away_from_zero(t, 0.1) if requires_grad and avoid_zero else t, kwargs=dict(kw),
                              name="kwargs")
    return _unary_samples(extra=extra, avoid_zero=avoid_zero)


def _relu_ref(x):
    if S.is_float(x.dtype):
        return S.cast(np.where(np.isnan(x), x, np.maximum(S.f64(x), 0.0)), x.dtype)
    return np.maximum(x, 0).astype(x.dtype)


def _hardtanh_ref(x, min_val=-1, max_val=1):
    if S.is_float(x.dtype):
        f = S.f64(x)
        return S.cast(np.where(np.isnan(f), f, np.clip(f, min_val, max_val)), x.dtype)
    return np.clip(x, int(min_val), int(max_val)).astype(x.dtype)


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return np.where(x > 0, scale * x, alpha * scale * np.expm1(np.minimum(x, 0) * input_scale))


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(np.minimum(x * beta, threshold))) / beta)


def _leaky_relu(x, negative_slope=0.01):
    return np.where(x > 0, x, x * negative_slope)


def _mish(x):
    return x * np.tanh(np.logaddexp(0.0, x))


_add("relu", tp.relu, _relu_ref, NO_BOOL, _act_samples((), avoid_zero=True), inplace=tp.relu_,
     aten=("relu", "relu_"),
     error_inputs=_errors(lambda: _err(RuntimeError, "Boolean inputs not supported for relu", _t((3,), tp.bool))))
_alias("relu", "relu_")  # tensorplug.relu_ and Tensor.relu_ are the entry's in-place form
_add("relu6", tp.relu6, lambda x: _hardtanh_ref(x, 0, 6), NO_BOOL, _act_samples((), avoid_zero=True),
     aten=("relu6", "hardtanh"))
_add("hardtanh", tp.hardtanh, _hardtanh_ref, SIGNED + FLOATING,
     _act_samples(({"min_val": -2, "max_val": 3}, {"min_val": 0.5, "max_val": 0.75})),
     aten=("hardtanh",),
     error_inputs=_errors(lambda: _err(RuntimeError, "cannot do hardtanh on an unsigned type with negative limits",
                                       _t((3,), tp.uint8))))
_FLOAT_ACTS = [
    # name, reference, keyword argument sets
    ("silu", lambda x: x * _sigmoid(x), ()),
    ("gelu", _gelu, ({"approximate": "tanh"},)),
    ("elu", _elu, ({"alpha": 0.5}, {"alpha": 2.0, "scale": 1.5, "input_scale": 0.5})),
    ("softplus", _softplus, ({"beta": 2.0}, {"beta": 0.5, "threshold": 2.0})),
    ("leaky_relu", _leaky_relu, ({"negative_slope": 0.2},)),
    ("mish", _mish, ()),
]
for _name, _fn, _kws in _FLOAT_ACTS:
    _kernel = {"gelu": "GeluKernelImpl"}.get(_name, _name)
    _add(_name, getattr(tp, _name), _act_ref(_fn), FLOATING,
         _act_samples(_kws, avoid_zero=_name in ("elu", "leaky_relu")),
         aten=(_name,),
         error_inputs=_errors(lambda k=_kernel: _err(NotImplementedError, _not_impl(k, "Long"), _t((3,), tp.int64))))


# -- binary ---------------------------------------------------------------------------------------------
_BROADCASTS = (
    # (lhs shape, rhs shape)
    ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 1, 4), (3, 1)), ((3, 4), ()), ((), (3, 4)), ((0, 4), (4,)),
    ((1,), (0, 1)),
)


def _binary_samples(*, rhs_low=None, rhs_high=None, rhs_nonzero=False, scalars=(), mixed=True, kwargs_sets=(),
                    grad_low=None, grad_high=None, extra=None):
    """Samples ``(lhs, rhs)`` of one dtype: equal layouts, broadcasts, Python-number and mixed-dtype rhs,
    special values.

    ``rhs_low``/``rhs_high``: the rhs range (exponents); ``rhs_nonzero``: divisors (integer division by
    zero raises). ``scalars``: Python numbers tried as rhs with a (3, 4) and a zero-dim lhs.
    ``mixed``: rhs (and a lhs) of another dtype, to exercise promotion. ``kwargs_sets``: keyword sets
    tried on a (3, 4) pair (or a function of the dtype giving them). ``grad_low``/``grad_high``: the
    lhs range of gradient samples (bases of pow).
    """
    def sample_inputs(device, dtype, requires_grad):
        lo, hi = (grad_low, grad_high) if requires_grad else (None, None)
        rlo, rhi = (rhs_low, rhs_high) if rhs_low is not None or rhs_high is not None else (lo, hi)
        rg = requires_grad

        def lhs(shape, seed, **kw):
            return make_tensor(shape, dtype, lo, hi, seed=seed, requires_grad=rg, **kw)

        def rhs(shape, seed, **kw):
            return make_tensor(shape, dtype, rlo, rhi, seed=seed + 100, requires_grad=rg,
                               exclude_zero=rhs_nonzero, **kw)
        for i, (name, shape, kw) in enumerate(S.LAYOUTS):
            yield SampleInput(lhs(shape, i, **kw), (rhs(shape, i, **kw),), name=name)
        for i, (a, b) in enumerate(_BROADCASTS):
            yield SampleInput(lhs(a, 20 + i), (rhs(b, 20 + i),), name=f"broadcast_{a}_{b}")
        for i, kw in enumerate(kwargs_sets(dtype) if callable(kwargs_sets) else kwargs_sets):
            yield SampleInput(lhs((3, 4), 40 + i), (rhs((3, 4), 40 + i),), dict(kw), name="kwargs")
        for i, s in enumerate(scalars):
            yield SampleInput(lhs((3, 4), 50 + i), (s,), name=f"python_{type(s).__name__}")
            yield SampleInput(lhs((), 60 + i), (s,), name=f"zero_dim_python_{type(s).__name__}")
        if mixed and not requires_grad:
            other = tp.float64 if dtype.is_floating_point else tp.int64
            yield SampleInput(lhs((3, 4), 70), (make_tensor((), other, rlo, rhi, seed=71, exclude_zero=rhs_nonzero),),
                              name="zero_dim_other_dtype")
            yield SampleInput(make_tensor((), other, seed=72), (rhs((3, 4), 73),), name="zero_dim_other_dtype_lhs")
            yield SampleInput(lhs((3, 4), 74), (make_tensor((4,), other, rlo, rhi, seed=75,
                                                            exclude_zero=rhs_nonzero),), name="other_dtype")
        if dtype.is_floating_point and not requires_grad:
            a, b = S.special_pair(dtype)
            yield SampleInput(a, (b,), name="special_values")
        if extra is not None:
            yield from extra(dtype, requires_grad)
    return sample_inputs


def binary(name, ref, dtypes, *, op=None, inplace=True, grad=True, errors=(), aten=None, fixed_kwargs=None,
           **sample_kw):
    """An elementwise op of two tensors (or a tensor and a Python number), broadcasting.

    ``name``'s part before a dot names the public function (``op``) and, with
    ``inplace=True``, the in-place method ``name_``. ``fixed_kwargs`` go into
    every sample (the ``rounding_mode`` of a ``div`` variant). A broadcast
    mismatch is always among the error inputs, before ``errors`` (functions
    building :class:`ErrorInput`); ``sample_kw`` go to :func:`_binary_samples`.
    """
    base = name.partition(".")[0]
    if op is None:
        op = getattr(tp, base)
    if inplace is True:
        inplace = _method(base + "_")
    gen = _binary_samples(**sample_kw)
    fixed = dict(fixed_kwargs or {})
    if fixed:
        inner = gen

        def gen(device, dtype, requires_grad):
            for s in inner(device, dtype, requires_grad):
                s.kwargs = {**fixed, **s.kwargs}
                yield s

    def bcast():
        return _err(RuntimeError, _BCAST, _t((3, 4)), _t((5,)), **fixed)
    return _add(name, op, ref, dtypes, gen, inplace=inplace or None, supports_autograd=grad,
                error_inputs=_errors(bcast, *errors), aten=aten or (base,))


def _add_ref(a, b, alpha=1):
    vals, out = _promoted(a, b)
    if S.is_float(out):
        return S.cast(S.f64(vals[0]) + alpha * S.f64(vals[1]), out)
    if out == np.bool_:
        return vals[0] | (vals[1] & bool(alpha))
    return vals[0] + vals[1] * S.cast(alpha, out)


def _sub_ref(a, b, alpha=1):
    vals, out = _promoted(a, b)
    if S.is_float(out):
        return S.cast(S.f64(vals[0]) - alpha * S.f64(vals[1]), out)
    return vals[0] - vals[1] * S.cast(alpha, out)


def _alpha_sets(ints, floats):
    return lambda dtype: floats if dtype.is_floating_point else (ints if dtype is not tp.bool else ())


def _int_zero_divisor(dtype, requires_grad):
    # true division of integers by zero is defined: inf, -inf or nan
    if not dtype.is_floating_point and dtype is not tp.bool and not requires_grad:
        yield SampleInput(make_tensor((5,), dtype, values=np.array([3, 0, 2, 0, 1]) * (1 if dtype is tp.uint8 else -1)),
                          (make_tensor((5,), dtype, values=np.array([0, 0, 1, 2, 0])),), name="int_zero_divisor")


def _trunc_div_int(a, b):
    q = np.floor_divide(a, b)
    return q + ((a - q * b != 0) & ((a < 0) != (b < 0))).astype(q.dtype)


def _div_mode_ref(a, b, rounding_mode=None):
    if rounding_mode == "trunc":
        return _promote_ref(lambda x, y: np.trunc(x / y), _trunc_div_int)(a, b)
    return _promote_ref(np.floor_divide)(a, b)


def _int_pow(a, b):
    e = b.astype(np.int64)
    res = np.power(a, np.where(e < 0, 0, e).astype(a.dtype))
    # integer bases to negative tensor exponents: 1 stays 1, -1 alternates, the rest truncate to 0
    odd = (e % 2) == 1
    neg = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)) if a.dtype != np.uint8 else \
        np.where(a == 1, 1, 0)
    return np.where(e < 0, neg, res).astype(a.dtype)


def _int_div_by_zero(**kwargs):
    return lambda: _err(RuntimeError, "ZeroDivisionError", _t((3,), tp.int64, low=1),
                        _t((3,), tp.int64, values=np.zeros(3)), **kwargs)


binary("add", _add_ref, ALL, scalars=(3, -2.5, True), kwargs_sets=_alpha_sets(({"alpha": 2},), ({"alpha": 0.5},)),
       aten=("add.Tensor", "add.Scalar", "add_.Tensor", "add_.Scalar"),
       errors=(lambda: _err(RuntimeError, "For integral input tensors, argument alpha must not be a floating point",
                            _t((3,), tp.int64), _t((3,), tp.int64), alpha=0.5),
               lambda: _err(RuntimeError, "Boolean alpha only supported for Boolean results",
                            _t((3,)), _t((3,)), alpha=True)))
binary("sub", _sub_ref, NO_BOOL, scalars=(3, -2.5), kwargs_sets=_alpha_sets(({"alpha": 2},), ({"alpha": 0.5},)),
       aten=("sub.Tensor", "sub.Scalar", "sub_.Tensor", "sub_.Scalar"),
       errors=(lambda: _err(RuntimeError, r"Subtraction, the `-` operator, with two bool tensors is not supported",
                            _t((3,), tp.bool), _t((3,), tp.bool)),
               lambda: _err(RuntimeError, r"Subtraction, the `-` operator, with a bool tensor is not supported",
                            _t((3,), tp.bool), 1)))
_alias("sub", "subtract", "subtract_")
binary("mul", _promote_ref(np.multiply, lambda a, b: a * b if a.dtype != np.bool_ else a & b), ALL,
       scalars=(3, -2.5, True), aten=("mul.Tensor", "mul.Scalar", "mul_.Tensor", "mul_.Scalar"))
_alias("mul", "multiply", "multiply_")
binary("div", _float_binary_ref(np.divide), ALL, scalars=(3, -2.5), rhs_nonzero=True, extra=_int_zero_divisor,
       aten=("div.Tensor", "div.Scalar", "div_.Tensor", "div_.Scalar"))
_alias("div", "divide", "divide_", "true_divide", "true_divide_")
binary("div.trunc_rounding", _div_mode_ref, NO_BOOL, op=tp.div,
       fixed_kwargs={"rounding_mode": "trunc"}, scalars=(3, -2.5), rhs_nonzero=True,
       aten=("div.Tensor_mode", "div.Scalar_mode", "div_.Tensor_mode", "div_.Scalar_mode"),
       errors=(_int_div_by_zero(rounding_mode="trunc"),
               lambda: _err(RuntimeError, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                                          "found 'bad'", _t((3,)), _t((3,)), rounding_mode="bad"),
               lambda: _err(NotImplementedError, _not_impl("div_trunc", "Bool"), _t((3,), tp.bool),
                            _t((3,), tp.bool), rounding_mode="trunc")))
binary("div.floor_rounding", _div_mode_ref, NO_BOOL, op=tp.div,
       fixed_kwargs={"rounding_mode": "floor"}, scalars=(3, -2.5), rhs_nonzero=True,
       aten=("div.Tensor_mode", "div.Scalar_mode", "div_.Tensor_mode", "div_.Scalar_mode"),
       errors=(_int_div_by_zero(rounding_mode="floor"),))
binary("floor_divide", _promote_ref(np.floor_divide), NO_BOOL, scalars=(3, -2.5), rhs_nonzero=True,
       aten=("floor_divide", "floor_divide.Scalar", "floor_divide_.Tensor", "floor_divide_.Scalar"),
       errors=(lambda: _err(RuntimeError, "ZeroDivisionError", _t((3,), tp.int32, low=1), 0),))
binary("remainder", _promote_ref(np.remainder), NO_BOOL, scalars=(3, -2.5), rhs_nonzero=True,
       aten=("remainder.Tensor", "remainder.Scalar", "remainder_.Tensor", "remainder_.Scalar"),
       errors=(_int_div_by_zero(),
               lambda: _err(NotImplementedError, _not_impl("remainder", "Bool"), _t((3,), tp.bool),
                            _t((3,), tp.bool))))
binary("fmod", _promote_ref(np.fmod), NO_BOOL, scalars=(3, -2.5), rhs_nonzero=True,
       aten=("fmod.Tensor", "fmod.Scalar", "fmod_.Tensor", "fmod_.Scalar"),
       errors=(lambda: _err(RuntimeError, "ZeroDivisionError", _t((3,), tp.int64, low=1), 0),))
binary("atan2", _float_binary_ref(np.arctan2), ALL, aten=("atan2", "atan2_"))
_alias("atan2", "arctan2", "arctan2_")
binary("maximum", _promote_ref(np.maximum), ALL, inplace=False)
binary("minimum", _promote_ref(np.minimum), ALL, inplace=False)
binary("pow", _promote_ref(np.power, _int_pow), NO_BOOL, rhs_low=-2, rhs_high=4, scalars=(2, 3, 0.5, -0.5),
       grad_low=0.5, grad_high=3, aten=("pow.Tensor_Tensor", "pow.Tensor_Scalar", "pow_.Tensor", "pow_.Scalar"),
       errors=(lambda: _err(RuntimeError, "Integers to negative integer powers are not allowed",
                            _t((3,), tp.int64), -2),
               lambda: _err(NotImplementedError, _not_impl("pow", "Bool"), _t((3,), tp.bool), _t((3,), tp.bool))))
binary("rsub", lambda a, b, alpha=1: _sub_ref(b, a, alpha), NO_BOOL, inplace=False, scalars=(3, -2.5),
       kwargs_sets=_alpha_sets(({"alpha": 2},), ({"alpha": 0.5},)), aten=("rsub.Tensor", "rsub.Scalar"))
binary("logaddexp", _float_binary_ref(np.logaddexp), FLOATING, inplace=False, mixed=False,
       errors=(lambda: _err(NotImplementedError, _not_impl("logaddexp_cpu", "Long"), _t((3,), tp.int64),
                            _t((3,), tp.int64)),))
for _name, _fn, _aliases in (("eq", np.equal, ()), ("ne", np.not_equal, ("not_equal",)),
                             ("lt", np.less, ("less",)), ("le", np.less_equal, ("less_equal",)),
                             ("gt", np.greater, ("greater",)), ("ge", np.greater_equal, ("greater_equal",))):
    binary(_name, _compare_ref(_fn), ALL, inplace=False, grad=False, scalars=(3, -2.5, True),
           aten=(f"{_name}.Tensor", f"{_name}.Scalar"))
    _alias(_name, *_aliases)
for _name, _fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)):
    binary(_name, _logical_ref(_fn), ALL, grad=False, aten=(_name, _name + "_"))
for _name, _fn in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                   ("bitwise_xor", np.bitwise_xor)):
    binary(_name, _promote_ref(_fn), INTEGRAL_AND_BOOL, grad=False, scalars=(3, -2, True),
           aten=(f"{_name}.Tensor", f"{_name}.Scalar", f"{_name}_.Tensor", f"{_name}_.Scalar"),
           errors=(lambda n=_name: _err(NotImplementedError, _not_impl(n, "Float"), _t((3,)), _t((3,))),))


def _swapped(fn, name):
    """``fn(number, tensor)`` as ``op(tensor, number)``, so that the sample's input stays the tensor."""
    def op(input, other):
        return fn(other, input)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{fn.__name__}(other, input)``: the Python number first."
    return op


def _scalar_lhs_samples(scalars, low=None, high=None):
    """A few layouts of nonzero values, each with every Python number of ``scalars`` as the other operand."""
    def sample_inputs(device, dtype, requires_grad):
        for i, s in enumerate(scalars):
            for j, (name, shape, kw) in enumerate(S.LAYOUTS[:4]):
                yield SampleInput(make_tensor(shape, dtype, low, high, seed=10 * i + j, requires_grad=requires_grad,
                                              exclude_zero=True, **kw), (s,), name=f"{name}_python_{s}")
    return sample_inputs


_add("remainder.scalar_tensor", _swapped(tp.remainder, "remainder"),
     lambda x, s: _promote_ref(np.remainder)(s, x), ALL, _scalar_lhs_samples((7, -2.5)),
     aten=("remainder.Scalar_Tensor",))
_add("pow.scalar_tensor", _swapped(tp.pow, "pow"), lambda x, s: _promote_ref(np.power, _int_pow)(s, x),
     ALL, _scalar_lhs_samples((2, 1.5), low=0, high=4), aten=("pow.Scalar",))


# -- where, clamp and other ternary elementwise ops ------------------------------------------------
def _where_ref(cond, x, y):
    vals, out = _promoted(x, y)
    return np.where(cond, vals[0], vals[1]).astype(out)


def _where_samples(device, dtype, requires_grad):
    rg = requires_grad
    for i, (name, shape, kw) in enumerate(S.LAYOUTS):
        yield SampleInput(bool_tensor(shape, seed=i, noncontiguous=kw.get("noncontiguous", False)),
                          (make_tensor(shape, dtype, seed=i + 10, requires_grad=rg, **kw),
                           make_tensor(shape, dtype, seed=i + 20, requires_grad=rg, **kw)), name=name)
    for i, (c, a, b) in enumerate((((3, 4), (4,), (3, 1)), ((3, 1), (3, 4), ()), ((), (2, 3), (2, 3)),
                                   ((2, 1, 4), (3, 1), (4,)), ((0, 4), (4,), (1, 4)))):
        yield SampleInput(bool_tensor(c, seed=30 + i), (make_tensor(a, dtype, seed=40 + i, requires_grad=rg),
                                                        make_tensor(b, dtype, seed=50 + i, requires_grad=rg)),
                          name=f"broadcast_{c}_{a}_{b}")
    for i, s in enumerate((2, -1.5, True)):
        yield SampleInput(bool_tensor((3, 4), seed=60 + i), (make_tensor((3, 4), dtype, seed=61 + i,
                                                                         requires_grad=rg), s), name="scalar_other")
        yield SampleInput(bool_tensor((3, 4), seed=70 + i), (s, make_tensor((3, 4), dtype, seed=71 + i,
                                                                            requires_grad=rg)), name="scalar_self")
    if not requires_grad:
        yield SampleInput(bool_tensor((3, 4), seed=80), (make_tensor((3, 4), dtype, seed=81),
                                                         make_tensor((4,), tp.float64, seed=82)), name="mixed_dtypes")
        yield SampleInput(bool_tensor((2, 3), seed=83), (1, 2.5), name="both_scalars")
        yield SampleInput(bool_tensor((2, 3), seed=84), (True, 3), name="both_scalars_bool_int")
    if dtype.is_floating_point and not requires_grad:
        v = S.special_tensor(dtype)
        yield SampleInput(bool_tensor(v.shape, seed=85), (v, make_tensor(v.shape, dtype, seed=86)), name="special")


_add("where", tp.where, _where_ref, ALL, _where_samples,
     aten=("where.self", "where.ScalarSelf", "where.ScalarOther", "where.Scalar"),
     error_inputs=_errors(
         lambda: _err(RuntimeError, "where expected condition to be a boolean tensor, but got a tensor with dtype "
                                    "Float", _t((3,)), _t((3,)), _t((3,))),
         lambda: _err(RuntimeError, _BCAST, bool_tensor((3,)), _t((4,)), _t((3,)))))


def _clamp_ref(x, min=None, max=None):
    vals, out = _promoted(x, min, max)
    v, lo, hi = vals
    if S.is_float(out):
        v, lo, hi = S.f64(v), None if lo is None else S.f64(lo), None if hi is None else S.f64(hi)
    r = v
    if lo is not None:
        r = np.maximum(r, lo)
    if hi is not None:
        r = np.minimum(r, hi)
    return S.cast(r, out)


def _clamp_samples(device, dtype, requires_grad):
    rg = requires_grad
    if dtype is tp.bool:
        # integer bounds make an int64 result; bool results (and tensor bounds) are refused
        for i, (lo, hi) in enumerate(((0, 1), (1, None), (None, 0), (-2, 5))):
            yield SampleInput(make_tensor((3, 4), dtype, seed=i), (lo, hi), name="int_bounds")
        return
    bounds = [(-3, 4), (2, None), (None, -1), (5, 2)]  # min > max: everything becomes max
    if dtype.is_floating_point:
        bounds += [(-2.5, 0.5)]
    elif not requires_grad:
        bounds += [(-2.5, 0.5)]  # float bounds promote integer tensors to the default dtype
    if dtype is tp.uint8:
        bounds = [(0 if lo is not None and lo < 0 else lo, hi if hi is None or hi >= 0 else 0) for lo, hi in bounds]
    for i, (name, shape, kw) in enumerate(S.LAYOUTS):
        lo, hi = bounds[i % len(bounds)]
        yield SampleInput(make_tensor(shape, dtype, seed=i, requires_grad=rg, **kw), (lo, hi), name=name)
    for i, (lo, hi) in enumerate(bounds):
        yield SampleInput(make_tensor((3, 4), dtype, seed=10 + i, requires_grad=rg), kwargs={"min": lo, "max": hi},
                          name="kwargs")
    # tensor bounds, broadcast
    yield SampleInput(make_tensor((3, 4), dtype, seed=20, requires_grad=rg),
                      (make_tensor((4,), dtype, seed=21, high=0), make_tensor((3, 1), dtype, seed=22, low=0)),
                      name="tensor_bounds")
    yield SampleInput(make_tensor((3, 4), dtype, seed=23, requires_grad=rg),
                      (None, make_tensor((3, 4), dtype, seed=24)),
                      name="tensor_max")
    yield SampleInput(make_tensor((3, 4), dtype, seed=25, requires_grad=rg), (make_tensor((), dtype, seed=26),),
                      name="zero_dim_tensor_min")
    if dtype.is_floating_point and not requires_grad:
        yield SampleInput(S.special_tensor(dtype), (-1.0, 2.0), name="special_values")
        yield SampleInput(make_tensor((3,), dtype, seed=27), (make_tensor((3,), dtype, values=np.array([np.nan, 0, 1])),
                                                              None), name="nan_bound")


_add("clamp", tp.clamp, _clamp_ref, ALL, _clamp_samples, inplace=_method("clamp_"),
     aten=("clamp", "clamp.Tensor", "clamp_", "clamp_.Tensor"),
     error_inputs=_errors(
         lambda: _err(RuntimeError, "clamp: At least one of 'min' or 'max' must not be None", _t((3,))),
         lambda: _err(RuntimeError, _BCAST, _t((3,)), _t((4,))),
         lambda: _err(NotImplementedError, _not_impl("clamp", "Bool"), _t((3,), tp.bool), _t((3,), tp.bool),
                      _t((3,), tp.bool))))
_alias("clamp", "clip", "clip_")


def _one_bound_samples(low, high):
    """Layouts with the bound ``low`` or ``high`` (alternating), special values and a float bound."""
    def sample_inputs(device, dtype, requires_grad):
        for i, (name, shape, kw) in enumerate(S.LAYOUTS):
            yield SampleInput(make_tensor(shape, dtype, seed=i, requires_grad=requires_grad, **kw),
                              (low if i % 2 else high,), name=name)
        if dtype is tp.bool:  # only integer bounds are accepted (the result is int64)
            return
        if dtype.is_floating_point and not requires_grad:
            yield SampleInput(S.special_tensor(dtype), (0.5,), name="special_values")
        if not requires_grad:
            yield SampleInput(make_tensor((3, 4), dtype, seed=20), (1.5,), name="float_bound")
    return sample_inputs


_add("clamp_min", tp.clamp_min, lambda x, m: _clamp_ref(x, m, None), ALL, _one_bound_samples(2, 0),
     inplace=_method("clamp_min_"), aten=("clamp_min", "clamp_min_"),
     error_inputs=_errors(lambda: _err(NotImplementedError, _not_impl("clamp(_min_scalar)?", "Bool"),
                                       _t((3,), tp.bool), True)))
_add("clamp_max", tp.clamp_max, lambda x, m: _clamp_ref(x, None, m), ALL, _one_bound_samples(2, 0),
     inplace=_method("clamp_max_"), aten=("clamp_max", "clamp_max_"))


def _ternary_samples(t2_nonzero=False, value_sets=()):
    """``(self, tensor1, tensor2)`` samples: layouts, broadcasts and keyword sets (``value_sets``, or a
    function of the dtype giving them); ``t2_nonzero``: ``tensor2`` is a divisor."""
    def sample_inputs(device, dtype, requires_grad):
        rg = requires_grad

        def mk(shape, seed, nonzero=False, **kw):
            return make_tensor(shape, dtype, seed=seed, requires_grad=rg, exclude_zero=nonzero, **kw)
        for i, (name, shape, kw) in enumerate(S.LAYOUTS):
            yield SampleInput(mk(shape, i, **kw), (mk(shape, i + 10, **kw), mk(shape, i + 20, t2_nonzero, **kw)),
                              name=name)
        for i, (a, b, c) in enumerate((((3, 4), (4,), (3, 1)), ((3, 1), (1, 4), ()), ((), (2, 3), (2, 3)))):
            yield SampleInput(mk(a, 30 + i), (mk(b, 40 + i), mk(c, 50 + i, t2_nonzero)), name="broadcast")
        for i, kw in enumerate(value_sets(dtype) if callable(value_sets) else value_sets):
            yield SampleInput(mk((3, 4), 60 + i), (mk((3, 4), 61 + i), mk((3, 4), 62 + i, t2_nonzero)), dict(kw),
                              name="kwargs")
    return sample_inputs


def _addcmul_ref(x, t1, t2, value=1):
    vals, out = _promoted(x, t1, t2)
    if S.is_float(out):
        a, b, c = (S.f64(v) for v in vals)
        return S.cast(a + value * b * c, out)
    a, b, c = vals
    return a + S.cast(int(value), out) * (b * c)


def _addcdiv_ref(x, t1, t2, value=1):
    vals, out = _promoted(x, t1, t2)
    a, b, c = (S.f64(v) for v in vals)
    return S.cast(a + value * (b / c), out)


def _value_sets(ints, floats):
    return lambda dtype: floats if dtype.is_floating_point else ints


_add("addcmul", tp.addcmul, _addcmul_ref, NO_BOOL,
     _ternary_samples(value_sets=_value_sets(({"value": 3},), ({"value": 0.5}, {"value": -2}))),
     inplace=_method("addcmul_"), aten=("addcmul", "addcmul_"),
     error_inputs=_errors(lambda: _err(RuntimeError, _BCAST, _t((3,)), _t((4,)), _t((3,)))))
_add("addcdiv", tp.addcdiv, _addcdiv_ref, FLOATING,
     _ternary_samples(t2_nonzero=True, value_sets=({"value": 0.5}, {"value": -2})),
     inplace=_method("addcdiv_"), aten=("addcdiv", "addcdiv_"),
     error_inputs=_errors(lambda: _err(RuntimeError, "Integer division with addcdiv is no longer supported",
                                       _t((3,)), _t((3,), tp.int64), _t((3,), tp.int64))))


def _lerp_ref(x, end, weight):
    out = x.dtype
    a, b, w = S.f64(x), S.f64(end), S.f64(weight)
    return S.cast(np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w)), out)


def _lerp_samples(device, dtype, requires_grad):
    rg = requires_grad
    for i, (name, shape, kw) in enumerate(S.LAYOUTS):
        w = (0.25, 0.75, -0.5, 1.5)[i % 4]
        yield SampleInput(make_tensor(shape, dtype, seed=i, requires_grad=rg, **kw),
                          (make_tensor(shape, dtype, seed=i + 10, requires_grad=rg, **kw), w), name=name)
    yield SampleInput(make_tensor((3, 4), dtype, seed=20, requires_grad=rg),
                      (make_tensor((4,), dtype, seed=21, requires_grad=rg),
                       make_tensor((3, 1), dtype, seed=22, low=-0.5, high=1.5, requires_grad=rg)), name="tensor_weight")
    yield SampleInput(make_tensor((3, 4), dtype, seed=23, requires_grad=rg),
                      (make_tensor((3, 4), dtype, seed=24, requires_grad=rg), 0.0), name="weight_0")
    yield SampleInput(make_tensor((3, 4), dtype, seed=25, requires_grad=rg),
                      (make_tensor((3, 4), dtype, seed=26, requires_grad=rg), 1.0), name="weight_1")
    if not requires_grad:
        a, b = S.special_pair(dtype)
        yield SampleInput(a, (b, 0.5), name="special_values")


_add("lerp", tp.lerp, _lerp_ref, FLOATING, _lerp_samples, inplace=_method("lerp_"),
     aten=("lerp.Scalar", "lerp.Tensor", "lerp_.Scalar", "lerp_.Tensor"),
     error_inputs=_errors(
         lambda: _err(NotImplementedError, _not_impl("lerp(_kernel_scalar)?", "Long"), _t((3,), tp.int64),
                      _t((3,), tp.int64), 0.5),
         lambda: _err(RuntimeError, "expected dtype float(32)? for `end` but got dtype (double|float64)", _t((3,)),
                      _t((3,), tp.float64), 0.5)))


def _isclose_ref(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if not S.is_float(a.dtype):
        x, y = a.astype(np.int64), b.astype(np.int64)
        return np.asarray(np.abs(x - y) <= atol + rtol * np.abs(y), dtype=np.bool_)
    x, y = S.f64(a), S.f64(b)
    close = (x == y) | (np.isfinite(x) & np.isfinite(y) & (np.abs(x - y) <= atol + rtol * np.abs(y)))
    if equal_nan:
        close |= np.isnan(x) & np.isnan(y)
    return np.asarray(close, dtype=np.bool_)


def _isclose_samples(device, dtype, requires_grad):
    for i, (name, shape, kw) in enumerate(S.LAYOUTS):
        a = make_tensor(shape, dtype, seed=i, **kw)
        # half of the elements equal, the others nearby or far
        b = S.to_numpy(a).astype(np.float64) + np.random.default_rng(i).choice([0, 0, 1e-6, 1e-3, 1], size=shape)
        yield SampleInput(a, (make_tensor(shape, dtype, values=b if dtype is not tp.bool else b > 0.5),), name=name)
    yield SampleInput(make_tensor((3, 4), dtype, seed=30), (make_tensor((4,), dtype, seed=31),), name="broadcast")
    yield SampleInput(make_tensor((3, 4), dtype, seed=32), (make_tensor((3, 4), dtype, seed=33),),
                      {"rtol": 0.5, "atol": 1}, name="loose")
    if dtype.is_floating_point:
        a, b = S.special_pair(dtype)
        yield SampleInput(a, (b,), name="special_values")
        yield SampleInput(a, (b,), {"equal_nan": True}, name="special_values_equal_nan")


_add("isclose", tp.isclose, _isclose_ref, ALL, _isclose_samples, supports_autograd=False, aten=("isclose",),
     error_inputs=_errors(lambda: _err(RuntimeError, "Float did not match Double", _t((3,)), _t((3,), tp.float64))))
_add("allclose", tp.allclose, lambda *a, **k: bool(_isclose_ref(*a, **k).all()), ALL, _isclose_samples,
     supports_autograd=False, aten=("isclose",),
     error_inputs=_errors(lambda: _err(RuntimeError, "Float did not match Double", _t((3,)), _t((3,), tp.float64))))


# -- reductions ----------------------------------------------------------------------------------------
_REDUCTION_CASES = (
    # (name, shape, make_tensor keywords, dim, keepdim); dim None: all dims
    ("scalar", (), {}, None, False), ("scalar_dim", (), {}, 0, True), ("scalar_dim_neg", (), {}, -1, False),
    ("vector", (5,), {}, None, False), ("vector_dim", (5,), {}, 0, False),
    ("matrix", (3, 4), {}, None, False), ("matrix_dim0", (3, 4), {}, 0, False),
    ("matrix_dim1_keepdim", (3, 4), {}, 1, True), ("matrix_dim_neg", (3, 4), {}, -1, False),
    ("matrix_dims", (3, 4), {}, (0, 1), False), ("transposed", (4, 3), {"transposed": True}, 0, False),
    ("stepped_slice", (3, 5), {"noncontiguous": True}, 1, True),
    ("transposed_stepped_dims", (2, 3, 4), {"transposed": True, "noncontiguous": True}, (0, 2), False),
    ("dims_neg_keepdim", (2, 3, 4), {}, (-1, 0), True), ("large_dim", (64, 65), {}, 1, False),
    ("large", (64, 65), {}, None, False),
    ("zero_size_kept_dim", (0, 3), {}, 1, False), ("zero_size_reduced", (0, 3), {}, 0, True),
    ("zero_size_all", (0, 3), {}, None, False),
)


def _reduction_samples(*, dims="multi", empty=True, low=None, high=None, special=True, extra=None,
                       grad_filter=None, distinct=False):
    """Samples ``(input, dim, keepdim=)`` over :data:`_REDUCTION_CASES`.

    ``dims``: "multi" (None, an int or a tuple), "optional" (None or an int), "int" (an int only,
    tuples become their first dim; full reductions skipped) or "none" (no dim argument).
    ``empty``: whether reducing over a zero-size dim is allowed (sums: yes; max: no).
    ``grad_filter(case name)``: which cases suit gradcheck. ``distinct``: values without ties.
    """
    def sample_inputs(device, dtype, requires_grad):
        for i, (name, shape, kw, dim, keepdim) in enumerate(_REDUCTION_CASES):
            if (dims == "none" and dim is not None) or (dims == "int" and dim is None):
                continue
            if isinstance(dim, tuple) and dims != "multi":
                dim = dim[0]
            if not empty and 0 in shape and (dim is None or shape[dim] == 0):
                continue
            if requires_grad and grad_filter is not None and not grad_filter(name):
                continue
            if distinct:
                t = _distinct_tensor(shape, dtype, seed=i, requires_grad=requires_grad, dim=dim or 0, **kw)
            else:
                t = make_tensor(shape, dtype, low, high, seed=i, requires_grad=requires_grad, **kw)
            if dim is None:
                yield SampleInput(t, name=name)
            else:
                yield SampleInput(t, (dim,), {"keepdim": keepdim}, name=name)
        if special and dtype.is_floating_point and not requires_grad:
            # NaN and infinities propagate (or not) per slice
            v = np.array([[np.nan, 1, 2, -np.inf, 0.5], [np.inf, -1, 3, 2, -0.0], [1, 2, 3, 4, 5]])
            yield SampleInput(make_tensor(v.shape, dtype, values=v), () if dims == "none" else (1,),
                              name="special_values")
        if extra is not None:
            yield from extra(dtype, requires_grad)
    return sample_inputs


def _distinct_tensor(shape, dtype, seed=0, requires_grad=False, dim=-1, **kw):
    """Values without ties along ``dim`` (shuffled ranges around 0, floats jittered; bool has ties)."""
    rng = np.random.default_rng(seed)
    if not shape or 0 in shape:
        return make_tensor(shape, dtype, seed=seed, requires_grad=requires_grad, **kw)
    d = dim % len(shape)
    n = shape[d]
    lo = 0 if dtype is tp.uint8 else -(n // 2)
    v = np.argsort(rng.random(shape), axis=d) + lo  # a random permutation of range(n) along d
    v = v.astype(np.float64)
    if dtype.is_floating_point:
        v = v + rng.uniform(-0.25, 0.25, size=shape)
    return make_tensor(shape, dtype, values=v, requires_grad=requires_grad, seed=seed, **kw)


def _axis(x, dim):
    """numpy's axis for a tensor dim argument (0-dim arrays: every dim is None)."""
    if x.ndim == 0 or dim is None:
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def _keep(r, x, dim, keepdim):
    """A full reduction's result with keepdim applied the way PyTorch does for 0-dim inputs."""
    r = np.asarray(r)
    if keepdim and dim is None and x.ndim:
        return r.reshape((1,) * x.ndim)
    return r


def _sum_dtype(x, dtype=None):
    if dtype is not None:
        return S.np_dtype(dtype)
    return x.dtype if S.is_float(x.dtype) else np.dtype(np.int64)


def _reduce_ref(np_fn, out_dtype):
    """Reference ``ref(x, dim=None, keepdim=False, dtype=None)`` of a numpy reduction.

    ``out_dtype(x, dtype)`` gives the result dtype; floats compute in float64, integers in the result
    dtype (sums of integers in int64, wrapping as PyTorch does).
    """
    def ref(x, dim=None, keepdim=False, dtype=None):
        out = out_dtype(x, dtype)
        v = S.f64(x) if S.is_float(out) or S.is_float(x.dtype) else x.astype(out)
        r = np_fn(v, axis=_axis(x, dim), keepdims=bool(keepdim) and x.ndim > 0)
        return S.cast(_keep(r, x, dim, keepdim), out)
    return ref


def _dtype_kwarg_extra(target):
    def extra(dtype, requires_grad):
        if not requires_grad:
            yield SampleInput(make_tensor((3, 4), dtype, seed=90), (1,), {"dtype": target}, name="dtype_kwarg")
    return extra


_add("sum", tp.sum, _reduce_ref(np.sum, _sum_dtype), ALL, _reduction_samples(extra=_dtype_kwarg_extra(tp.float64)),
     aten=("sum.dim_IntList",),
     error_inputs=_errors(lambda: _err(IndexError, _DIM_RANGE, _t((3, 4)), 2),
                          lambda: _err(RuntimeError, "dim 0 appears multiple times in the list of dims",
                                       _t((3, 4)), (0, 0))))


def _prod_samples(device, dtype, requires_grad):
    gen = _reduction_samples(dims="optional", low=0.5 if dtype.is_floating_point else -2,
                             high=1.5 if dtype.is_floating_point else 2, extra=_dtype_kwarg_extra(tp.float64))
    yield from gen(device, dtype, requires_grad)
    if not requires_grad:
        yield SampleInput(make_tensor((3, 4), dtype, values=np.array([[1, 0, 2, 3], [0, 0, 1, 1], [2, 2, 2, 2]])),
                          (1,), name="zeros")


_add("prod", tp.prod, _reduce_ref(np.prod, _sum_dtype), ALL, _prod_samples, aten=("prod", "prod.dim_int"),
     error_inputs=_errors(lambda: _err(IndexError, _DIM_RANGE, _t((3,)), 1)))


def _cumsum_ref(x, dim, dtype=None):
    out = _sum_dtype(x, dtype)
    v = S.f64(x) if S.is_float(out) else x.astype(out)
    if x.ndim == 0:
        return S.cast(v, out)
    return S.cast(np.cumsum(v, axis=dim), out)


def _cumsum_samples(device, dtype, requires_grad):
    for s in _reduction_samples(dims="int", special=False)(device, dtype, requires_grad):
        s.kwargs.pop("keepdim", None)
        yield s
    if dtype.is_floating_point and not requires_grad:
        yield SampleInput(S.special_tensor(dtype), (0,), name="special_values")
    if not requires_grad:
        yield SampleInput(make_tensor((3, 4), dtype, seed=90), (1,), {"dtype": tp.float64}, name="dtype_kwarg")


_add("cumsum", tp.cumsum, _cumsum_ref, ALL, _cumsum_samples, aten=("cumsum",),
     error_inputs=_errors(lambda: _err(IndexError, _DIM_RANGE, _t((3,)), 1)))


def _extreme_errors(name):
    return _errors(
        lambda: _err(RuntimeError, rf"{name}\(\): Expected reduction dim to be specified for input.numel\(\) == 0",
                     _t((0, 3))),
        lambda: _err(IndexError, rf"{name}\(\): Expected reduction dim 0 to have non-zero size", _t((0, 3)), 0))


for _name, _fn in (("amax", np.max), ("amin", np.min)):
    _add(_name, getattr(tp, _name), _reduce_ref(_fn, lambda x, d: x.dtype), ALL,
         _reduction_samples(empty=False), aten=(_name,), error_inputs=_extreme_errors(_name))


def _arg_ref(np_fn):
    def ref(x, dim=None, keepdim=False):
        v = S.f64(x) if S.is_float(x.dtype) else x.astype(np.int64)
        if dim is None or x.ndim == 0:
            r = np.asarray(np_fn(v.reshape(-1)) if v.size else 0)
            return _keep(r, x, dim, keepdim).astype(np.int64)
        r = np_fn(v, axis=dim)
        return np.asarray(np.expand_dims(r, dim) if keepdim else r, dtype=np.int64)
    return ref


for _name, _fn in (("argmax", np.argmax), ("argmin", np.argmin)):
    _add(_name, getattr(tp, _name), _arg_ref(_fn), NO_BOOL, _reduction_samples(dims="optional", empty=False),
         supports_autograd=False, aten=(_name,),
         error_inputs=_errors(
             lambda n=_name: _err(IndexError, rf"{n}\(\): Expected reduction dim to be specified for "
                                              r"input.numel\(\) == 0", _t((0, 3))),
             lambda n=_name: _err(IndexError, rf"{n}\(\): Expected reduction dim 0 to have non-zero size",
                                  _t((0, 3)), 0),
             lambda n=_name: _err(RuntimeError, rf"{n}\(\): does not support bool input", _t((3,), tp.bool))))


def _any_all_ref(np_fn):
    def ref(x, dim=None, keepdim=False):
        out = np.dtype(np.uint8) if x.dtype == np.uint8 else np.dtype(np.bool_)
        r = np_fn(x != 0, axis=_axis(x, dim), keepdims=bool(keepdim) and x.ndim > 0)
        return _keep(r, x, dim, keepdim).astype(out)
    return ref


def _sparse_extra(dtype, requires_grad):
    # mostly zeros, so any/all differ between rows
    v = np.zeros((4, 5))
    v[1, 2] = v[3, :] = 1
    yield SampleInput(make_tensor((4, 5), dtype, values=v), (1,), name="sparse")
    if dtype.is_floating_point:
        yield SampleInput(make_tensor((3,), dtype, values=np.array([np.nan, 0.0, -0.0])), name="nan_is_true")


for _name, _fn in (("any", np.any), ("all", np.all)):
    _add(_name, getattr(tp, _name), _any_all_ref(_fn), ALL,
         _reduction_samples(low=0, high=1, extra=_sparse_extra, special=False), supports_autograd=False,
         aten=(f"{_name}.dims",), error_inputs=_errors(lambda: _err(IndexError, _DIM_RANGE, _t((3, 4)), 2)))


def _mean_ref(x, dim=None, keepdim=False, dtype=None):
    out = S.np_dtype(dtype) if dtype is not None else x.dtype
    r = np.mean(S.f64(x), axis=_axis(x, dim), keepdims=bool(keepdim) and x.ndim > 0)
    return S.cast(_keep(r, x, dim, keepdim), out)


def _mean_extra(dtype, requires_grad):
    if not requires_grad:
        yield SampleInput(make_tensor((3, 4), dtype, seed=90), (1,), {"dtype": tp.float64}, name="dtype_kwarg")


_add("mean", tp.mean, _mean_ref, FLOATING, _reduction_samples(extra=_mean_extra), aten=("mean.dim",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"mean\(\): could not infer output dtype. Input dtype must be either a floating "
                                    r"point or complex dtype. Got: Long", _t((3,), tp.int64)),
         lambda: _err(RuntimeError, r"mean\(\): could not infer output dtype. Optional dtype must be either a "
                                    r"floating point or complex dtype. Got: Long", _t((3,)), dtype=tp.int64)))


def _moments(x, dim, correction, keepdim):
    v = S.f64(x)
    axis = _axis(x, dim)
    n = v.size if axis is None else int(np.prod([v.shape[a] for a in np.atleast_1d(axis)]))
    mean = np.mean(v, axis=axis, keepdims=True) if v.size else np.full([1] * v.ndim, np.nan)
    ss = np.sum((v - mean) ** 2, axis=axis, keepdims=bool(keepdim) and x.ndim > 0)
    with np.errstate(all="ignore"):
        var = ss / max(n - correction, 0)
    m = np.mean(v, axis=axis, keepdims=bool(keepdim) and x.ndim > 0)
    return _keep(var, x, dim, keepdim), _keep(m, x, dim, keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _stat_ref(kind):
    def ref(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
        var, mean = _moments(x, dim, _correction(unbiased, correction), keepdim)
        std = np.sqrt(var)
        out = {"var": var, "std": std, "var_mean": (var, mean), "std_mean": (std, mean)}[kind]
        if isinstance(out, tuple):
            return tuple(S.cast(o, x.dtype) for o in out)
        return S.cast(out, x.dtype)
    return ref


def _stat_samples(device, dtype, requires_grad):
    def smooth(name):  # one element (or none) per slice: the (un)biased estimate is NaN or inf
        return not name.startswith(("scalar", "zero_size"))
    yield from _reduction_samples(grad_filter=smooth)(device, dtype, requires_grad)
    for i, kw in enumerate(({"unbiased": False}, {"correction": 0}, {"correction": 2}, {"correction": 0.5})):
        yield SampleInput(make_tensor((3, 4), dtype, seed=80 + i, requires_grad=requires_grad), (1,), dict(kw),
                          name="correction")


for _name in ("var", "std", "var_mean", "std_mean"):
    _add(_name, getattr(tp, _name), _stat_ref(_name), FLOATING, _stat_samples,
         aten=(f"{_name}.correction",),
         error_inputs=_errors(lambda: _err(RuntimeError, "(std and var|var_mean|std_mean) only support floating "
                                                         "point and complex dtypes", _t((3,), tp.int32))))


def _logsumexp_ref(x, dim, keepdim=False):
    out = S.float_dtype(x.dtype)
    v = S.f64(x)
    axis = _axis(x, dim)
    m = np.max(v, axis=axis, keepdims=True, initial=-np.inf) if v.ndim else v
    m = np.where(np.isfinite(m), m, 0.0)
    r = np.log(np.sum(np.exp(v - m), axis=axis, keepdims=True)) + m
    if not (keepdim and x.ndim) and v.ndim:
        r = np.squeeze(r, axis=axis)
    return S.cast(r, out)


_add("logsumexp", tp.logsumexp, _logsumexp_ref, ALL, _reduction_samples(dims="int"), aten=("logsumexp",),
     error_inputs=_errors(lambda: _err(IndexError, _DIM_RANGE, _t((3,)), 1)))


def _softmax_ref(log):
    def ref(x, dim, dtype=None):
        out = S.np_dtype(dtype) if dtype is not None else x.dtype
        v = S.f64(x)
        if v.ndim == 0:
            return S.cast(np.zeros(()) if log else np.ones(()), out) if np.isfinite(v) else S.cast(v * np.nan, out)
        # like PyTorch, an infinite maximum makes the slice NaN (inf - inf)
        m = np.max(v, axis=dim, keepdims=True, initial=-np.inf)
        e = np.exp(v - m)
        s = np.sum(e, axis=dim, keepdims=True)
        return S.cast((v - m) - np.log(s) if log else e / s, out)
    return ref


def _softmax_samples(device, dtype, requires_grad):
    for s in _reduction_samples(dims="int", special=False)(device, dtype, requires_grad):
        s.kwargs.pop("keepdim", None)
        yield s
    if not requires_grad:
        v = np.array([[np.nan, 1, 2], [np.inf, 1, 2], [-np.inf, 1, 2], [-np.inf, -np.inf, 0]])
        yield SampleInput(make_tensor(v.shape, dtype, values=v), (1,), name="special_values")
        yield SampleInput(make_tensor((3, 4), dtype, seed=90, low=-100, high=100), (1,), name="wide_range")
        if dtype is not tp.float64:
            yield SampleInput(make_tensor((3, 4), dtype, seed=91), (0,), {"dtype": tp.float64}, name="dtype_kwarg")


for _name, _log in (("softmax", False), ("log_softmax", True)):
    _add(_name, getattr(tp, _name), _softmax_ref(_log), FLOATING, _softmax_samples, aten=(f"{_name}.int",),
         error_inputs=_errors(
             lambda n=_name: _err(NotImplementedError, _not_impl(f"{n}_lastdim_kernel_impl", "Long"),
                                  _t((3,), tp.int64), 0),
             lambda: _err(IndexError, _DIM_RANGE, _t((3,)), 1)))


def _norm_ref(x, p="fro", dim=None, keepdim=False, dtype=None):
    out = S.np_dtype(dtype) if dtype is not None else x.dtype
    v = np.abs(S.f64(x))
    axis = _axis(x, dim)
    kd = bool(keepdim) and x.ndim > 0
    p = 2 if p in ("fro", None) else p
    if p == math.inf:
        r = np.max(v, axis=axis, keepdims=kd, initial=0.0) if v.size or axis is not None else np.zeros(())
    elif p == -math.inf:
        r = np.min(v, axis=axis, keepdims=kd)
    elif p == 0:
        r = np.sum(v != 0, axis=axis, keepdims=kd).astype(np.float64)
    else:
        r = np.sum(v ** p, axis=axis, keepdims=kd) ** (1.0 / p)
    return S.cast(_keep(r, x, dim, keepdim), out)


def _norm_samples(device, dtype, requires_grad):
    rg = requires_grad
    for s in _reduction_samples(special=False, grad_filter=lambda n: "zero_size" not in n)(device, dtype, rg):
        dim = s.args[0] if s.args else None
        s.args, s.kwargs = ("fro", dim), {"keepdim": s.kwargs.get("keepdim", False)}
        yield s
    # p = 0 is sampled with gradients too: its result requires grad, with no gradient (as in PyTorch)
    for i, p in enumerate((1, 3, 0.5, math.inf, -math.inf, 0, -1)):
        if rg and p in (math.inf, -math.inf):
            continue
        yield SampleInput(make_tensor((3, 4), dtype, seed=70 + i, requires_grad=rg), (p,), name=f"p_{p}")
        yield SampleInput(make_tensor((3, 4), dtype, seed=80 + i, requires_grad=rg), (p, 1), {"keepdim": True},
                          name=f"p_{p}_dim")
    if not rg:
        yield SampleInput(make_tensor((3, 4), dtype, seed=90), (2, (0, 1)), {"dtype": tp.float64}, name="dtype")
        v = np.array([[np.nan, 1, 2], [np.inf, 1, 2], [0, 0, 0]])
        yield SampleInput(make_tensor(v.shape, dtype, values=v), (2, 1), name="special_values")
        zeros = make_tensor((2, 3), dtype, values=np.array([[1.5, 0, -2], [0, 0, 3]]))
        for p in (0.5, -1, 0):
            yield SampleInput(zeros, (p, 1), name=f"p_{p}_with_zeros")


_add("norm", tp.norm, _norm_ref, FLOATING, _norm_samples, aten=("linalg_vector_norm",),
     error_inputs=_errors(lambda: _err(RuntimeError, "linalg.vector_norm: Expected a floating point or complex "
                                                     "tensor as input. Got Long", _t((3,), tp.int64))))


# max and min: three ways to call them
def _extreme_dim_ref(np_arg):
    def ref(x, dim, keepdim=False):
        v = S.f64(x) if S.is_float(x.dtype) else x.astype(np.int64)
        if x.ndim == 0:
            return x.copy(), np.zeros((), dtype=np.int64)
        idx = np_arg(v, axis=dim)
        values = np.take_along_axis(x, np.expand_dims(idx, dim), dim)
        if not keepdim:
            values = np.squeeze(values, dim)
        return values, np.asarray(np.expand_dims(idx, dim) if keepdim else idx, dtype=np.int64)
    return ref


for _name, _np_red, _np_arg, _np_elt in (("max", np.max, np.argmax, np.maximum),
                                         ("min", np.min, np.argmin, np.minimum)):
    _add(f"{_name}.reduction_no_dim", getattr(tp, _name), _reduce_ref(_np_red, lambda x, d: x.dtype), ALL,
         _reduction_samples(dims="none", empty=False), aten=(_name, "amax" if _name == "max" else "amin"),
         error_inputs=_errors(lambda n=_name: _err(RuntimeError, rf"{n}\(\): Expected reduction dim to be specified "
                                                                 r"for input.numel\(\) == 0", _t((0, 3)))))
    _add(f"{_name}.reduction_with_dim", getattr(tp, _name), _extreme_dim_ref(_np_arg), ALL,
         _reduction_samples(dims="int", empty=False, distinct=True), aten=(f"{_name}.dim",),
         error_inputs=_errors(lambda n=_name: _err(IndexError, rf"{n}\(\): Expected reduction dim 0 to have non-zero "
                                                               r"size", _t((0, 3)), 0),
                              lambda: _err(IndexError, _DIM_RANGE, _t((3,)), 1)))
    binary(f"{_name}.binary", _promote_ref(_np_elt), ALL, op=getattr(tp, _name), inplace=False,
           aten=(f"{_name}.other",))


# -- matrix products -----------------------------------------------------------------------------------
_MATMUL_DTYPES = INTEGRAL + FLOATING


def _matmul_ref(a, b):
    out = a.dtype
    if S.is_float(out):
        return S.cast(np.matmul(S.f64(a), S.f64(b)), out)
    return S.cast(np.matmul(a.astype(np.int64), b.astype(np.int64)), out)


def _pairs_samples(pairs, low=-3, high=3, special=False):
    """Samples of a two-operand product from ``(name, a shape, b shape, a keywords, b keywords)``;
    ``special``: one of matrices with inf and NaN."""
    def sample_inputs(device, dtype, requires_grad):
        for i, (name, a, b, ka, kb) in enumerate(pairs):
            yield SampleInput(make_tensor(a, dtype, low, high, seed=i, requires_grad=requires_grad, **ka),
                              (make_tensor(b, dtype, low, high, seed=i + 50, requires_grad=requires_grad, **kb),),
                              name=name)
        if special and dtype.is_floating_point and not requires_grad:
            a = make_tensor((3, 2), dtype, values=np.array([[np.inf, 1], [np.nan, 0], [1, 2]]))
            yield SampleInput(a, (make_tensor((2, 2), dtype, seed=99),), name="special_values")
    return sample_inputs


_T = {"transposed": True}
_NC = {"noncontiguous": True}
_MATMUL_PAIRS = (
    ("dot", (5,), (5,), {}, {}), ("mv", (3, 4), (4,), {}, {}), ("vm", (4,), (4, 3), {}, {}),
    ("mm", (3, 4), (4, 2), {}, {}), ("mm_transposed", (3, 4), (4, 5), _T, _T),
    ("mm_stepped", (3, 4), (4, 5), _NC, {}), ("bmm", (2, 3, 4), (2, 4, 5), {}, {}),
    ("broadcast_batch", (2, 1, 3, 4), (5, 4, 2), {}, {}), ("batch_vector", (2, 3, 4), (4,), {}, {}),
    ("vector_batch", (4,), (2, 4, 3), {}, {}), ("zero_rows", (0, 3), (3, 2), {}, {}),
    ("zero_inner", (3, 0), (0, 2), {}, {}), ("large", (64, 65), (65, 33), {}, {}),
)
_add("matmul", tp.matmul, _matmul_ref, _MATMUL_DTYPES, _pairs_samples(_MATMUL_PAIRS, special=True),
     aten=("matmul",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"both arguments to matmul need to be at least 1D, but they are 0D and 1D",
                      _t(()), _t((3,))),
         lambda: _err(RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)", _t((2, 3)),
                      _t((4, 5))),
         lambda: _err(RuntimeError, r"expected m1 and m2 to have the same dtype, but got: float != double",
                      _t((2, 3)), _t((3, 2), tp.float64)),
         lambda: _err(NotImplementedError, _not_impl("addmm_impl_cpu_", "Bool"), _t((2, 3), tp.bool),
                      _t((3, 2), tp.bool))))
_add("mm", tp.mm, _matmul_ref, _MATMUL_DTYPES,
     _pairs_samples([p for p in _MATMUL_PAIRS if len(p[1]) == 2 and len(p[2]) == 2], special=True), aten=("mm",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, "self must be a matrix", _t((3,)), _t((3, 3))),
         lambda: _err(RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)", _t((2, 3)),
                      _t((4, 5)))))
_add("bmm", tp.bmm, _matmul_ref, _MATMUL_DTYPES,
     _pairs_samples((("tiny", (1, 2, 2), (1, 2, 1), {}, {}), ("bmm", (2, 3, 4), (2, 4, 5), {}, {}),
                     ("transposed", (2, 3, 4), (2, 4, 5), _T, _NC),
                     ("zero_batch", (0, 3, 4), (0, 4, 2), {}, {}), ("large", (4, 32, 33), (4, 33, 16), {}, {}))),
     aten=("bmm",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, "batch1 must be a 3D tensor", _t((2, 3)), _t((3, 2))),
         lambda: _err(RuntimeError, r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\] but "
                                    r"got: \[2, 4\].", _t((2, 2, 3)), _t((2, 4, 2)))))
_add("dot", tp.dot, _matmul_ref, _MATMUL_DTYPES,
     _pairs_samples((("dot", (5,), (5,), {}, {}), ("stepped", (7,), (7,), _NC, _NC), ("empty", (0,), (0,), {}, {}),
                     ("large", (1000,), (1000,), {}, {}))), aten=("dot",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"inconsistent tensor size, expected tensor \[3\] and src \[4\] to have the same "
                                    r"number of elements", _t((3,)), _t((4,))),
         lambda: _err(RuntimeError, "1D tensors expected, but got 2D and 1D tensors", _t((3, 1)), _t((3,)))))
_add("mv", tp.mv, _matmul_ref, _MATMUL_DTYPES,
     _pairs_samples((("mv", (3, 4), (4,), {}, {}), ("transposed", (3, 4), (4,), _T, _NC),
                     ("zero_rows", (0, 4), (4,), {}, {}), ("large", (64, 65), (65,), {}, {}))), aten=("mv",),
     error_inputs=_errors(lambda: _err(RuntimeError, r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)",
                                       _t((2, 3)), _t((4,)))))


def _outer_ref(a, b):
    vals, out = _promoted(a, b)
    if S.is_float(out):
        return S.cast(np.outer(S.f64(vals[0]), S.f64(vals[1])), out)
    if out == np.bool_:
        return np.outer(vals[0], vals[1]).astype(np.bool_)
    return S.cast(np.outer(vals[0].astype(np.int64), vals[1].astype(np.int64)), out)


def _outer_samples(device, dtype, requires_grad):
    rg = requires_grad
    for i, (a, b, ka) in enumerate((((3,), (4,), {}), ((5,), (1,), _NC), ((0,), (3,), {}), ((64,), (65,), {}))):
        yield SampleInput(make_tensor(a, dtype, seed=i, requires_grad=rg, **ka),
                          (make_tensor(b, dtype, seed=i + 10, requires_grad=rg),), name=f"{a}x{b}")
    if not requires_grad:
        yield SampleInput(make_tensor((3,), dtype, seed=20), (make_tensor((2,), tp.float64, seed=21),), name="mixed")


_add("outer", tp.outer, _outer_ref, ALL, _outer_samples, aten=("outer",),
     error_inputs=_errors(lambda: _err(RuntimeError, "outer: Expected 1-D argument self, but got 2-D", _t((2, 2)),
                                       _t((3,)))))


def _addmm_ref(x, m1, m2, beta=1, alpha=1):
    out = x.dtype
    if S.is_float(out):
        prod = np.matmul(S.f64(m1), S.f64(m2))
        base = np.zeros_like(prod) if beta == 0 else beta * S.f64(x)  # beta == 0 ignores self (NaN included)
        return S.cast(base + alpha * prod, out)
    prod = np.matmul(m1.astype(np.int64), m2.astype(np.int64))
    return S.cast(int(beta) * x.astype(np.int64) + int(alpha) * prod, out)


def _addmm_samples(device, dtype, requires_grad):
    rg = requires_grad

    def mk(shape, seed, **kw):
        return make_tensor(shape, dtype, -3, 3, seed=seed, requires_grad=rg, **kw)
    yield SampleInput(mk((3, 2), 0), (mk((3, 4), 1), mk((4, 2), 2)), name="plain")
    yield SampleInput(mk((2,), 3), (mk((3, 4), 4, **_T), mk((4, 2), 5, **_NC)), name="broadcast_self")
    yield SampleInput(mk((), 6), (mk((0, 4), 7), mk((4, 2), 8)), name="zero_rows")
    kws = ({"beta": 2, "alpha": 3}, {"beta": 0}) if not dtype.is_floating_point else \
        ({"beta": 0.5, "alpha": -2.0}, {"beta": 0})
    for i, kw in enumerate(kws):
        yield SampleInput(mk((3, 2), 10 + i), (mk((3, 4), 11 + i), mk((4, 2), 12 + i)), dict(kw), name="kwargs")
    if dtype.is_floating_point and not rg:
        nan_self = make_tensor((3, 2), dtype, values=np.full((3, 2), np.nan))
        yield SampleInput(nan_self, (mk((3, 4), 20), mk((4, 2), 21)), {"beta": 0}, name="beta_0_ignores_nan")


_add("addmm", tp.addmm, _addmm_ref, _MATMUL_DTYPES, _addmm_samples, aten=("addmm",),
     error_inputs=_errors(lambda: _err(RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x2\)",
                                       _t((2, 2)), _t((2, 3)), _t((4, 2)))))


def _linear_ref(x, w, b=None):
    out = x.dtype
    if S.is_float(out):
        r = np.matmul(S.f64(x), S.f64(w).T) + (0 if b is None else S.f64(b))
        return S.cast(r, out)
    r = np.matmul(x.astype(np.int64), w.astype(np.int64).T) + (0 if b is None else b.astype(np.int64))
    return S.cast(r, out)


def _linear_samples(device, dtype, requires_grad):
    rg = requires_grad

    def mk(shape, seed, **kw):
        return make_tensor(shape, dtype, -3, 3, seed=seed, requires_grad=rg, **kw)
    yield SampleInput(mk((1, 2), 17), (mk((2, 2), 18), mk((2,), 19)), name="tiny")
    yield SampleInput(mk((3, 4), 0), (mk((5, 4), 1), mk((5,), 2)), name="bias")
    yield SampleInput(mk((3, 4), 3), (mk((5, 4), 4),), name="no_bias")
    yield SampleInput(mk((2, 3, 4), 5, **_T), (mk((5, 4), 6, **_NC), mk((5,), 7)), name="batched")
    yield SampleInput(mk((4,), 8), (mk((5, 4), 9), mk((5,), 10)), name="vector_input")
    yield SampleInput(mk((0, 4), 11), (mk((5, 4), 12), mk((5,), 13)), name="zero_rows")
    yield SampleInput(mk((64, 65), 14), (mk((32, 65), 15), mk((32,), 16)), name="large")


_add("linear", tp.linear, _linear_ref, _MATMUL_DTYPES, _linear_samples, aten=("linear", "addmm", "matmul"),
     error_inputs=_errors(lambda: _err(RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 5x4\)",
                                       _t((2, 3)), _t((4, 5)))))


# -- indexing, joining, sorting ------------------------------------------------------------------------
def _index_select_ref(x, dim, index):
    if x.ndim == 0:
        return x.copy()
    return np.take(x, np.atleast_1d(index).astype(np.int64), axis=dim)


def _index_select_samples(device, dtype, requires_grad):
    rg = requires_grad
    cases = (
        ("dim0", (3, 4), {}, 0, [0, 2, 2]), ("dim1", (3, 4), {}, 1, [3, 0]), ("dim_neg", (2, 3, 4), {}, -1, [1]),
        ("transposed", (4, 3), _T, 0, [3, 1]), ("stepped", (3, 5), _NC, 1, [4, 0, 1]),
        ("empty_index", (3, 4), {}, 0, []), ("zero_size_self", (0, 4), {}, 1, [1, 2]),
        ("scalar_self", (), {}, 0, [0]), ("zero_dim_index", (3, 4), {}, 1, 2),
        ("large", (64, 65), {}, 1, list(np.random.default_rng(0).integers(0, 65, 100))),
    )
    for i, (name, shape, kw, dim, idx) in enumerate(cases):
        yield SampleInput(make_tensor(shape, dtype, seed=i, requires_grad=rg, **kw), (dim, index_tensor(idx)),
                          name=name)
    yield SampleInput(make_tensor((3, 4), dtype, seed=20, requires_grad=rg), (0, index_tensor([2, 0], tp.int32)),
                      name="int32_index")


_add("index_select", tp.index_select, _index_select_ref, ALL, _index_select_samples, aten=("index_select",),
     error_inputs=_errors(
         lambda: _err(IndexError, "index out of range in self", _t((3, 4)), 0, index_tensor([5])),
         lambda: _err(RuntimeError, r"INDICES element is out of DATA bounds, id=5 axis_dim=4", _t((3, 4)), 1,
                      index_tensor([5])),
         lambda: _err(RuntimeError, r"index_select\(\): Expected dtype int32 or int64 for index", _t((3, 4)), 0,
                      _t((1,))),
         lambda: _err(IndexError, r"index_select\(\): Index is supposed to be a vector", _t((3, 4)), 0,
                      index_tensor([[0]]))))


def _gather_ref(x, dim, index, sparse_grad=False):
    if x.ndim == 0:
        return x.copy() if index.ndim == 0 else np.broadcast_to(x, index.shape).copy()
    idx = index.astype(np.int64)
    # index may be smaller than self in the other dims: only that block of self is read
    block = tuple(slice(None) if d == dim % x.ndim else slice(0, n) for d, n in enumerate(idx.shape))
    return np.take_along_axis(x[block], idx, axis=dim)


def _index_like(shape, size, seed, unique_along=None):
    """An int64 index tensor of ``shape`` with values in ``[0, size)``; ``unique_along``: no repeats along
    that dim (scatter's result is undefined for repeated positions)."""
    rng = np.random.default_rng(seed)
    if unique_along is None or 0 in shape:
        return index_tensor(rng.integers(0, max(size, 1), size=shape) if size else np.zeros(shape))
    d = unique_along % len(shape)
    moved = (shape[d],) + tuple(s for i, s in enumerate(shape) if i != d)
    cols = int(np.prod(moved[1:], dtype=np.int64))
    v = np.stack([rng.permutation(size)[:shape[d]] for _ in range(cols)], axis=1).reshape(moved)
    return index_tensor(np.moveaxis(v, 0, d))


_GATHER_CASES = (
    # name, self shape, self keywords, dim, index shape
    ("dim0", (3, 4), {}, 0, (2, 4)), ("dim1_smaller", (3, 4), {}, 1, (2, 3)), ("dim_neg", (2, 3, 4), {}, -1, (2, 3, 6)),
    ("transposed", (4, 3), _T, 0, (4, 3)), ("stepped", (3, 5), _NC, 1, (3, 2)), ("empty_index", (3, 4), {}, 0, (0, 4)),
    ("scalar", (), {}, 0, ()), ("large", (64, 65), {}, 1, (64, 65)),
    # empty inputs, as PyTorch takes them: an empty self (its gathered dim or another), an index empty on
    # another dim than the gathered one
    ("empty_self", (0, 3), {}, 1, (0, 2)), ("empty_self_dim", (3, 0), {}, 0, (2, 0)),
    ("empty_index_dim1", (2, 3), {}, 1, (2, 0)),
)


def _gather_samples(device, dtype, requires_grad):
    for i, (name, shape, kw, dim, ishape) in enumerate(_GATHER_CASES):
        size = shape[dim] if shape else 1
        yield SampleInput(make_tensor(shape, dtype, seed=i, requires_grad=requires_grad, **kw),
                          (dim, _index_like(ishape, size, seed=i + 10)), name=name)


_add("gather", tp.gather, _gather_ref, ALL, _gather_samples, aten=("gather",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, "index 5 is out of bounds for dimension 1 with size 4", _t((3, 4)), 1,
                      index_tensor([[5]])),
         lambda: _err(RuntimeError, "Index tensor must have the same number of dimensions as input tensor",
                      _t((3, 4)), 1, index_tensor([0])),
         lambda: _err(RuntimeError, r"gather\(\): Expected dtype int32/int64 for index", _t((3, 4)), 1,
                      _t((1, 1)))))


def _scatter_ref(accumulate):
    def ref(x, dim, index, src=None, *, value=None):
        out = x.copy()
        if src is None or not isinstance(src, np.ndarray):
            src = np.full(index.shape, value if src is None else src)
            src = S.cast(src, x.dtype)
        if x.ndim == 0:
            if index.size:
                out[()] = out[()] + src.reshape(())[()] if accumulate else src.reshape(())[()]
            return out
        d = dim % x.ndim
        acc = S.f64(out) if accumulate and S.is_float(x.dtype) else out
        for pos in np.ndindex(*index.shape):
            tgt = list(pos)
            tgt[d] = int(index[pos])
            if accumulate:
                acc[tuple(tgt)] += S.f64(src[pos]) if S.is_float(x.dtype) else src[pos]
            else:
                acc[tuple(tgt)] = src[pos]
        return S.cast(acc, x.dtype)
    return ref


def _scatter_samples(value_form, accumulate):
    def sample_inputs(device, dtype, requires_grad):
        for i, (name, shape, kw, dim, ishape) in enumerate(_GATHER_CASES):
            if name in ("large", "dim_neg"):
                ishape = tuple(min(a, b) for a, b in zip(ishape, shape))
            size = shape[dim] if shape else 1
            index = _index_like(ishape, size, seed=i + 10, unique_along=None if accumulate or not shape else dim)
            t = make_tensor(shape, dtype, seed=i, requires_grad=requires_grad, **kw)
            if value_form:
                yield SampleInput(t, (dim, index), {"value": 3}, name=name)
            else:
                src = make_tensor(ishape if name != "dim1_smaller" else (3, 4), dtype, seed=i + 20,
                                  requires_grad=requires_grad)
                yield SampleInput(t, (dim, index, src), name=name)
        if value_form and not requires_grad:
            yield SampleInput(make_tensor((3, 4), dtype, seed=30), (1, _index_like((3, 2), 4, 31, 1), 1),
                              name="positional_value")
    return sample_inputs


def _scatter_errors(name):
    return _errors(
        lambda: _err(RuntimeError, rf"index 7 is out of bounds for dimension 1 with size 4", _t((3, 4)), 1,
                     index_tensor([[7]]), _t((1, 1))),
        lambda: _err(RuntimeError, r"scatter\(\): Expected self.dtype to be equal to src.dtype", _t((3, 4)), 1,
                     index_tensor([[0]]), _t((1, 1), tp.float64)),
        lambda: _err(RuntimeError, r"scatter\(\): Expected dtype int32/int64 for index", _t((3, 4)), 1,
                     _t((1, 1)), _t((1, 1))))


_add("scatter", tp.scatter, _scatter_ref(False), ALL, _scatter_samples(False, False), inplace=_method("scatter_"),
     aten=("scatter.src", "scatter_.src"), error_inputs=_scatter_errors("scatter"))
_add("scatter.value", tp.scatter, _scatter_ref(False), ALL, _scatter_samples(True, False), inplace=_method("scatter_"),
     supports_autograd=True, aten=("scatter.value", "scatter_.value"))
_add("scatter_add", tp.scatter_add, _scatter_ref(True), ALL, _scatter_samples(False, True),
     inplace=_method("scatter_add_"), aten=("scatter_add", "scatter_add_"), error_inputs=_scatter_errors("scatter_add"))


def _index_put_ref(x, indices, values, accumulate=False):
    out = S.f64(x) if accumulate and S.is_float(x.dtype) else x.copy()
    idx = tuple(slice(None) if i is None else (i if i.dtype == np.bool_ else i.astype(np.int64)) for i in indices)
    if accumulate:
        np.add.at(out, idx, S.f64(values) if S.is_float(x.dtype) else values)
    else:
        out[idx] = values
    return S.cast(out, x.dtype)


def _index_put_samples(device, dtype, requires_grad):
    rg = requires_grad

    def mk(shape, seed, **kw):
        return make_tensor(shape, dtype, seed=seed, requires_grad=rg, **kw)
    yield SampleInput(mk((3,), 19), ((index_tensor([0, 2]),), mk((2,), 20)), name="vector")
    yield SampleInput(mk((3, 4), 0), ((index_tensor([0, 2]),), mk((4,), 1)), name="rows")
    yield SampleInput(mk((3, 4), 2), ((index_tensor([0, 2, 1]), index_tensor([3, 0, 1])), mk((3,), 3)), name="points")
    yield SampleInput(mk((3, 4), 4, **_T), ((None, index_tensor([1, 3])), mk((3, 2), 5)), name="none_then_index")
    yield SampleInput(mk((2, 3, 4), 6), ((index_tensor([1]), None, index_tensor([0, 2])), mk((), 7)),
                      name="separated_indices")
    yield SampleInput(mk((3, 4), 8), ((bool_tensor((3, 4), seed=9),), mk((), 10)), name="bool_mask")
    yield SampleInput(mk((3, 4), 11, **_NC), ((index_tensor([[0], [2]], tp.int32),), mk((1, 4), 12)),
                      name="int32_2d_index")
    yield SampleInput(mk((3, 4), 13), ((index_tensor([], tp.int64),), mk((4,), 14)), name="empty_index")
    yield SampleInput(mk((3, 4), 15), ((index_tensor([0, 2, 0, 0]),), mk((4, 4), 16), True), name="accumulate")
    yield SampleInput(mk((64, 65), 17), ((index_tensor(np.random.default_rng(0).permutation(64)[:20]),),
                                         mk((20, 65), 18)), name="large")


_add("index_put", tp.index_put, _index_put_ref, ALL, _index_put_samples, inplace=_method("index_put_"),
     aten=("index_put", "index_put_"),
     error_inputs=_errors(
         lambda: _err(IndexError, "index 5 is out of bounds for dimension 0 with size 3", _t((3, 4)),
                      (index_tensor([5]),), _t((4,))),
         lambda: _err(RuntimeError, "Index put requires the source and destination dtypes match, got Float for the "
                                    "destination and Double for the source", _t((3, 4)), (index_tensor([0]),),
                      _t((4,), tp.float64)),
         lambda: _err(RuntimeError, r"shape mismatch: value tensor of shape \[5\] cannot be broadcast to indexing "
                                    r"result of shape \[1, 4\]", _t((3, 4)), (index_tensor([0]),), _t((5,))),
         lambda: _err(IndexError, "tensors used as indices must be long, int, byte or bool tensors", _t((3, 4)),
                      (_t((1,)),), _t((4,)))))


def _masked_fill_ref(x, mask, value):
    v = S.cast(value, x.dtype)
    return np.where(mask, v, x).astype(x.dtype)


def _masked_fill_samples(device, dtype, requires_grad):
    rg = requires_grad
    value = {tp.bool: True, tp.uint8: 7}.get(dtype, -2.5 if dtype.is_floating_point else -7)
    for i, (name, shape, kw) in enumerate(S.LAYOUTS):
        yield SampleInput(make_tensor(shape, dtype, seed=i, requires_grad=rg, **kw),
                          (bool_tensor(shape, seed=i + 10), value), name=name)
    yield SampleInput(make_tensor((3, 4), dtype, seed=20, requires_grad=rg), (bool_tensor((4,), seed=21), value),
                      name="broadcast_mask")
    yield SampleInput(make_tensor((4,), dtype, seed=22, requires_grad=rg), (bool_tensor((3, 4), seed=23), value),
                      name="broadcast_self")
    yield SampleInput(make_tensor((3, 4), dtype, seed=24, requires_grad=rg),
                      (bool_tensor((3, 4), seed=25), make_tensor((), dtype, seed=26, requires_grad=rg)),
                      name="tensor_value")
    if dtype.is_floating_point and not rg:
        yield SampleInput(make_tensor((3, 4), dtype, seed=27), (bool_tensor((3, 4), seed=28), math.nan),
                          name="nan_value")


_add("masked_fill", tp.masked_fill, _masked_fill_ref, ALL, _masked_fill_samples, inplace=_method("masked_fill_"),
     aten=("masked_fill.Scalar", "masked_fill.Tensor", "masked_fill_.Scalar", "masked_fill_.Tensor"),
     error_inputs=_errors(
         lambda: _err(RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype float",
                      _t((3,)), _t((3,)), 1.0),
         lambda: _err(RuntimeError, r"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
                                    r"dimension\(s\)", _t((3,)), bool_tensor((3,)), _t((2,))),
         lambda: _err(RuntimeError, _BCAST, _t((3,)), bool_tensor((4,)), 1.0),
         lambda: _err(RuntimeError, r"value cannot be converted to type (int8_t|signed char) without overflow",
                      _t((3,), tp.int8), bool_tensor((3,)), 1000)))


def _cat_ref(tensors, dim=0):
    out = tensors[0].dtype
    for t in tensors[1:]:
        out = S.promote(out, t.dtype)
    kept = [t for t in tensors if t.shape != (0,)] or [np.zeros((0,), out)]
    return np.concatenate([S.cast(t, out) for t in kept], axis=dim)


def _cat_samples(device, dtype, requires_grad):
    rg = requires_grad

    def mk(shape, seed, **kw):
        return make_tensor(shape, dtype, seed=seed, requires_grad=rg, **kw)
    yield SampleInput([mk((2, 3), 0), mk((4, 3), 1, **_T), mk((1, 3), 2, **_NC)], name="dim0")
    yield SampleInput([mk((2, 3), 3), mk((2, 1), 4)], (1,), name="dim1")
    yield SampleInput([mk((2, 3, 4), 5), mk((2, 3, 2), 6)], (-1,), name="dim_neg")
    yield SampleInput([mk((5,), 7)], name="single")
    yield SampleInput([mk((0, 3), 8), mk((2, 3), 9)], name="zero_size")
    yield SampleInput([mk((2, 3), 10), mk((0,), 11), mk((1, 3), 12)], name="legacy_empty_1d")
    yield SampleInput([mk((64, 65), 13), mk((64, 65), 14)], (1,), name="large")
    if not rg:
        other = tp.float64 if dtype.is_floating_point else tp.int64
        yield SampleInput([mk((2, 3), 15), make_tensor((1, 3), other, seed=16)], name="mixed_dtypes")


def _cat_errors(device):
    yield _err(RuntimeError, r"Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for "
                             r"tensor number 1 in the list", [_t((2, 3)), _t((2, 4))])
    yield _err(RuntimeError, r"zero-dimensional tensor \(at position 0\) cannot be concatenated", [_t(()), _t(())])
    yield _err(ValueError, r"(torch\.)?cat\(\): expected a non-empty list of Tensors", [])
    yield _err(RuntimeError, "Tensors must have same number of dimensions: got 2 and 3", [_t((2, 3)), _t((2, 3, 1))])


_add("cat", tp.cat, _cat_ref, ALL, _cat_samples, error_inputs=_cat_errors, aten=("cat",))
_alias("cat", "concat", "concatenate")


def _stack_like_ref(np_fn):
    def ref(tensors, *args):
        out = tensors[0].dtype
        for t in tensors[1:]:
            out = S.promote(out, t.dtype)
        return np_fn([S.cast(t, out) for t in tensors], *args)
    return ref


def _stack_samples(device, dtype, requires_grad):
    rg = requires_grad

    def mk(shape, seed, **kw):
        return make_tensor(shape, dtype, seed=seed, requires_grad=rg, **kw)
    yield SampleInput([mk((2, 3), 0), mk((2, 3), 1, **_T), mk((2, 3), 2, **_NC)], name="dim0")
    yield SampleInput([mk((2, 3), 3), mk((2, 3), 4)], (2,), name="dim_last")
    yield SampleInput([mk((2, 3), 5), mk((2, 3), 6)], (-2,), name="dim_neg")
    yield SampleInput([mk((), 7), mk((), 8)], name="scalars")
    yield SampleInput([mk((0, 3), 9), mk((0, 3), 10)], (1,), name="zero_size")
    if not rg:
        other = tp.float64 if dtype.is_floating_point else tp.int64
        yield SampleInput([mk((2,), 11), make_tensor((2,), other, seed=12)], name="mixed_dtypes")


def _stack_ref(tensors, dim=0):
    return _stack_like_ref(lambda ts, d=0: np.stack(ts, axis=d))(tensors, dim)


_add("stack", tp.stack, _stack_ref, ALL, _stack_samples, aten=("stack", "cat", "unsqueeze"),
     error_inputs=_errors(
         lambda: _err(RuntimeError, r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and "
                                    r"\[2, 4\] at entry 1", [_t((2, 3)), _t((2, 4))]),
         lambda: _err(RuntimeError, "stack expects a non-empty TensorList", [])))


def _nstack_samples(device, dtype, requires_grad):
    rg = requires_grad

    def mk(shape, seed, **kw):
        return make_tensor(shape, dtype, seed=seed, requires_grad=rg, **kw)
    yield SampleInput([mk((3,), 0), mk((3,), 1, **_NC)], name="vectors")
    yield SampleInput([mk((2, 3), 2), mk((2, 3), 3, **_T)], name="matrices")
    yield SampleInput([mk((), 4), mk((), 5)], name="scalars")
    yield SampleInput([mk((2, 3, 4), 6), mk((2, 3, 4), 7)], name="3d")


for _name, _np in (("hstack", np.hstack), ("vstack", np.vstack), ("dstack", np.dstack)):
    _add(_name, getattr(tp, _name), _stack_like_ref(_np), ALL, _nstack_samples, aten=("cat",),
         error_inputs=_errors(lambda n=_name: _err(RuntimeError, f"{n} expects a non-empty TensorList", [])))


def _sort_ref(x, dim=-1, descending=False, stable=False):
    """Stable sort (NaN above everything); descending keeps equal elements in their original order."""
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    v = S.f64(x) if x.dtype != np.int64 else x
    if descending:
        rev = np.flip(v, axis=dim)
        order = np.flip(np.argsort(rev, axis=dim, kind="stable"), axis=dim)
        order = x.shape[dim] - 1 - order
    else:
        order = np.argsort(v, axis=dim, kind="stable")
    return np.take_along_axis(x, order, axis=dim), order.astype(np.int64)


_SORT_CASES = (
    ("vector", (7,), {}, -1, False), ("matrix_dim0", (4, 5), {}, 0, False), ("descending", (4, 5), {}, 1, True),
    ("transposed", (5, 4), _T, 0, True), ("stepped", (3, 6), _NC, -1, False), ("scalar", (), {}, 0, False),
    ("zero_size", (0, 3), {}, 1, False), ("large", (64, 65), {}, 1, True),
)


def _sort_samples():
    def sample_inputs(device, dtype, requires_grad):
        for i, (name, shape, kw, dim, desc) in enumerate(_SORT_CASES):
            t = _distinct_tensor(shape, dtype, seed=i, requires_grad=requires_grad, dim=dim, **kw)
            if dtype is tp.bool:  # ties are unavoidable: only a stable sort fixes the indices
                yield SampleInput(t, kwargs={"dim": dim, "descending": desc, "stable": True}, name=name)
            else:
                yield SampleInput(t, (dim, desc), name=name)
        if not requires_grad:
            v = np.array([[2, 1, 2, 0, 1, 2], [0, 0, 1, 1, 0, 0]])
            for desc in (False, True):
                yield SampleInput(make_tensor(v.shape, dtype, values=v),
                                  kwargs={"dim": 1, "descending": desc, "stable": True}, name="ties_stable")
            if dtype.is_floating_point:
                v = np.array([np.nan, 1.0, -np.inf, np.inf, -0.5, 3.0])
                yield SampleInput(make_tensor(v.shape, dtype, values=v), (0, False), name="special_values")
                yield SampleInput(make_tensor(v.shape, dtype, values=v), (0, True), name="special_values_desc")
    return sample_inputs


_add("sort", tp.sort, _sort_ref, ALL, _sort_samples(), aten=("sort", "sort.stable"),
     error_inputs=_errors(lambda: _err(IndexError, _DIM_RANGE, _t((3,)), 1)))
_add("argsort", tp.argsort, lambda *a, **k: _sort_ref(*a, **k)[1], ALL, _sort_samples(), supports_autograd=False,
     aten=("argsort", "argsort.stable"), error_inputs=_errors(lambda: _err(IndexError, _DIM_RANGE, _t((3,)), 1)))


def _topk_ref(x, k, dim=-1, largest=True, sorted=True):
    values, indices = _sort_ref(x, dim, descending=largest)
    if x.ndim == 0:
        return values, indices
    sl = tuple(slice(0, k) if d == dim % x.ndim else slice(None) for d in range(x.ndim))
    return values[sl], indices[sl]


def _topk_samples(device, dtype, requires_grad):
    cases = (("vector", (7,), {}, 3, -1, True), ("smallest", (4, 5), {}, 2, 1, False), ("dim0", (5, 4), _T, 5, 0, True),
             ("stepped", (3, 6), _NC, 1, -1, False), ("k0", (3, 4), {}, 0, 1, True), ("scalar", (), {}, 1, 0, True),
             ("large", (64, 65), {}, 10, 1, True))
    for i, (name, shape, kw, k, dim, largest) in enumerate(cases):
        yield SampleInput(_distinct_tensor(shape, dtype, seed=i, requires_grad=requires_grad, dim=dim, **kw),
                          (k, dim, largest), name=name)
    if dtype.is_floating_point and not requires_grad:
        v = np.array([np.nan, 1.0, -np.inf, np.inf, -0.5, 3.0])
        yield SampleInput(make_tensor(v.shape, dtype, values=v), (3,), name="special_values")


_add("topk", tp.topk, _topk_ref, NO_BOOL, _topk_samples, aten=("topk",),
     error_inputs=_errors(lambda: _err(RuntimeError, "selected index k out of range", _t((3,)), 4),
                          lambda: _err(RuntimeError, "topk does not support bool dtypes", _t((3,), tp.bool), 1)))


def _split_ref(x, sizes, dim):
    """Pieces of ``x`` along ``dim`` of the given sizes (copies: references compare values)."""
    out, start = [], 0
    for n in sizes:
        out.append(np.take(x, np.arange(start, start + n), axis=dim))
        start += n
    return out


def _split_sizes(total, size):
    if total == 0:
        return [0]
    return [min(size, total - s) for s in range(0, total, size)]


def _split_ref_public(x, split_size_or_sections, dim=0):
    total = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        return _split_ref(x, _split_sizes(total, split_size_or_sections), dim)
    return _split_ref(x, list(split_size_or_sections), dim)


def _chunk_ref(x, chunks, dim=0):
    total = x.shape[dim]
    size = -(-total // chunks) if total else 0
    return _split_ref(x, _split_sizes(total, size) if size else [0] * chunks if total == 0 else [], dim)


def _views_samples(cases):
    """Samples ``(input, *args)`` from ``(name, shape, make_tensor keywords, args)``."""
    def sample_inputs(device, dtype, requires_grad):
        for i, (name, shape, kw, args) in enumerate(cases):
            yield SampleInput(make_tensor(shape, dtype, seed=i, requires_grad=requires_grad, **kw), tuple(args),
                              name=name)
    return sample_inputs


_add("split", tp.split, _split_ref_public, ALL, _views_samples((
    ("even", (6, 3), {}, (2,)), ("uneven", (7, 3), {}, (3,)), ("dim1", (3, 5), _T, (2, 1)),
    ("sections", (7, 3), {}, ([1, 4, 2],)), ("dim_neg", (2, 3, 4), _NC, (1, -1)), ("zero_size", (0, 3), {}, (2,)),
    ("larger_than_dim", (3, 2), {}, (5,)), ("large", (64, 65), {}, (16, 1)))),
    is_view=True, aten=("split.Tensor", "split_with_sizes"),
    error_inputs=_errors(
        lambda: _err(RuntimeError, "split_size can only be 0 if dimension size is 0, but got dimension size of 3",
                     _t((3,)), 0),
        lambda: _err(RuntimeError, r"split_with_sizes expects split_sizes to sum exactly to 3 \(input tensor's size at "
                                   r"dimension 0\), but got split_sizes=\[1, 1\]", _t((3,)), [1, 1])))
_add("split_with_sizes", tp.split_with_sizes, lambda x, sizes, dim=0: _split_ref(x, sizes, dim), ALL,
     _views_samples((("dim0", (6, 3), {}, ([1, 2, 3],)), ("dim1", (3, 5), _T, ([4, 0, 1], 1)),
                     ("single", (4,), _NC, ([4],)))),
     is_view=True, aten=("split_with_sizes",))
_add("chunk", tp.chunk, _chunk_ref, ALL, _views_samples((
    ("even", (6, 3), {}, (3,)), ("uneven", (5, 3), {}, (3,)), ("fewer", (6, 2), {}, (4,)), ("dim1", (3, 5), _T, (2, 1)),
    ("more_than_size", (2, 3), _NC, (5,)), ("zero_size", (0, 3), {}, (2,)))),
    is_view=True, aten=("chunk",),
    error_inputs=_errors(lambda: _err(RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0",
                                      _t((3,)), 0)))
_add("unbind", tp.unbind, lambda x, dim=0: tuple(np.take(x, i, axis=dim) for i in range(x.shape[dim])), ALL,
     _views_samples((("dim0", (3, 4), {}, ()), ("dim1", (3, 4), _T, (1,)), ("dim_neg", (2, 3, 4), _NC, (-1,)),
                     ("vector", (5,), {}, ()), ("zero_size", (0, 3), {}, (1,)))),
     is_view=True, aten=("unbind.int",),
     error_inputs=_errors(lambda: _err(IndexError, "Dimension specified as 0 but tensor has no dimensions",
                                       _t(()), 0)))

_add("flip", tp.flip, lambda x, dims: np.flip(x, axis=tuple(dims)).copy() if x.ndim else x.copy(), ALL,
     _views_samples((("dim0", (3, 4), {}, ((0,),)), ("both", (3, 4), _T, ((0, 1),)),
                     ("neg", (2, 3, 4), _NC, ((-1, 0),)),
                     ("none", (3, 4), {}, ((),)), ("scalar", (), {}, ((),)), ("zero_size", (0, 3), {}, ((1,),)),
                     ("large", (64, 65), {}, ((1,),)))),
     aten=("flip",),
     error_inputs=_errors(lambda: _err(RuntimeError, "dim 0 appears multiple times in the list of dims", _t((3, 4)),
                                       (0, 0)),
                          lambda: _err(IndexError, _DIM_RANGE, _t((3, 4)), (2,))))
_add("roll", tp.roll, lambda x, shifts, dims=None: np.roll(x, shifts, axis=dims), ALL,
     _views_samples((("flat", (3, 4), {}, (5,)), ("dim0", (3, 4), {}, (1, 0)), ("negative", (3, 4), _T, (-6, 1)),
                     ("multi", (2, 3, 4), _NC, ((1, -2), (0, 2))), ("zero_size", (0, 3), {}, (1, 1)),
                     ("large", (64, 65), {}, (100, 1)))),
     aten=("roll",),
     error_inputs=_errors(lambda: _err(RuntimeError, "shifts and dimensions must align. shifts: 2, dims:1", _t((3, 4)),
                                       (1, 2), (0,))))
for _name, _np in (("tril", np.tril), ("triu", np.triu)):
    _add(_name, getattr(tp, _name), lambda x, diagonal=0, f=_np: f(x, diagonal), ALL,
         _views_samples((("square", (4, 4), {}, ()), ("wide", (3, 5), _T, (1,)), ("tall", (5, 3), _NC, (-1,)),
                         ("batched", (2, 3, 4), {}, (2,)), ("far", (3, 4), {}, (-5,)), ("zero_size", (0, 3), {}, ()),
                         ("large", (64, 65), {}, (3,)))),
         inplace=None, aten=(_name,),
         error_inputs=_errors(lambda n=_name: _err(RuntimeError, f"{n}: input tensor must have at least 2 dimensions",
                                                   _t((3,)))))


def _one_hot_ref(x, num_classes=-1):
    n = (int(x.max()) + 1 if x.size else 0) if num_classes == -1 else num_classes
    return np.eye(n, dtype=np.int64)[x.astype(np.int64)] if n else np.zeros(x.shape + (0,), np.int64)


def _one_hot_samples(device, dtype, requires_grad):
    # class indices in the requested dtype: only int64 is accepted
    yield SampleInput(index_tensor([0, 2, 1, 2], dtype), name="vector")
    yield SampleInput(index_tensor([[1, 0], [3, 1]], dtype), (5,), name="num_classes")
    yield SampleInput(index_tensor(3, dtype), (4,), name="scalar")
    yield SampleInput(index_tensor(np.zeros((0,), np.int64), dtype), (3,), name="zero_size")


_add("one_hot", tp.one_hot, _one_hot_ref, (tp.int64,), _one_hot_samples, supports_autograd=False, aten=("one_hot",),
     error_inputs=_errors(
         lambda: _err(RuntimeError, "one_hot is only applicable to index tensor of type LongTensor", _t((3,))),
         lambda: _err(RuntimeError, "Class values must be non-negative", index_tensor([-1])),
         lambda: _err(RuntimeError, "Class values must be smaller than num_classes", index_tensor([3]), 2)))


# -- views ---------------------------------------------------------------------------------------------
def _view(name, ref, cases, *, op=None, errors=(), is_view=True, aten=None, dtypes=ALL, **kw):
    """A shape op whose cases are ``(name, shape, make_tensor keywords, args)``; the result aliases the input."""
    return _add(name, op or getattr(tp, name, None) or _method(name), ref, dtypes, _views_samples(cases),
                is_view=is_view, error_inputs=_errors(*errors) if errors else None, aten=aten or (name,), **kw)


def _copy(x):
    return np.array(x, copy=True)


def _expand_ref(x, *sizes):
    sizes = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    lead = len(sizes) - x.ndim
    shape = tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return _copy(np.broadcast_to(x, shape))


def _squeeze_ref(x, dim=None):
    if dim is None:
        return _copy(np.squeeze(x))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    drop = tuple(d % x.ndim for d in dims if x.ndim and x.shape[d] == 1)
    return _copy(np.squeeze(x, axis=drop)) if drop else _copy(x)


def _flatten_ref(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return _copy(x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:]) if x.size else
                 x.reshape(x.shape[:s] + (int(np.prod(x.shape[s:e + 1])),) + x.shape[e + 1:]))


def _unflatten_ref(x, dim, sizes):
    d = dim % x.ndim
    return _copy(x.reshape(x.shape[:d] + tuple(sizes) + x.shape[d + 1:]))


def _narrow_ref(x, dim, start, length):
    start = start % x.shape[dim] if start < 0 else start
    return _copy(np.take(x, np.arange(start, start + length), axis=dim))


def _unfold_ref(x, dimension, size, step):
    if x.ndim == 0:
        return x.reshape(1)
    w = np.lib.stride_tricks.sliding_window_view(x, size, axis=dimension)
    sl = [slice(None)] * w.ndim
    sl[dimension % x.ndim] = slice(None, None, step)
    return _copy(w[tuple(sl)])


def _as_strided_ref(x, size, stride, storage_offset=0):
    flat = np.ascontiguousarray(x).reshape(-1)
    return _copy(np.lib.stride_tricks.as_strided(flat[storage_offset or 0:], shape=tuple(size),
                                                 strides=tuple(s * flat.itemsize for s in stride)))


def _t_ref(x):
    return _copy(x.T)


def _atleast(n):
    f = {1: np.atleast_1d, 2: np.atleast_2d, 3: np.atleast_3d}[n]
    return lambda x: _copy(f(x))


_view("view", lambda x, *shape: _copy(x.reshape(shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list))
                                                else shape)),
      (("flat", (3, 4), {}, (12,)), ("infer", (3, 4), {}, (2, -1)), ("tuple", (2, 3, 4), {}, ((4, 6),)),
       ("scalar_to_1", (), {}, (1,)), ("to_scalar", (1,), {}, ((),)), ("zero_size", (0, 3), {}, (3, 0, 1)),
       ("split_dim_of_stepped", (3, 5), _NC, (3, 5, 1)), ("transposed_merge_kept", (4, 3), _T, (4, 3, 1))),
      op=_method("view"),
      errors=(lambda: _err(RuntimeError, r"shape '\[5\]' is invalid for input of size 12", _t((3, 4)), 5),
              lambda: _err(RuntimeError, "view size is not compatible with input tensor's size and stride",
                           _t((4, 3), transposed=True), 12),
              lambda: _err(RuntimeError, "only one dimension can be inferred", _t((3, 4)), -1, -1)))
_add("view_as", _method("view_as"), lambda x, other: _copy(x.reshape(other.shape)), ALL,
     lambda device, dtype, rg: iter((SampleInput(make_tensor((2, 3), dtype, requires_grad=rg),
                                                 (make_tensor((3, 2), tp.int64),), name="other"),)),
     is_view=True, aten=("view",))
_view("reshape", lambda x, shape: _copy(x.reshape(shape)),
      (("flat", (3, 4), {}, ((12,),)), ("infer", (3, 4), {}, ((2, -1),)), ("transposed_copy", (4, 3), _T, ((12,),)),
       ("stepped", (3, 5), _NC, ((5, 3),)), ("scalar", (), {}, ((1, 1),)), ("zero_size", (0, 3), {}, ((3, -1),)),
       ("large", (64, 65), {}, ((65, 64),))),
      is_view=False, aten=("reshape", "view", "_unsafe_view"),
      errors=(lambda: _err(RuntimeError, r"shape '\[5\]' is invalid for input of size 12", _t((3, 4)), (5,)),))
_add("reshape_as", _method("reshape_as"), lambda x, other: _copy(x.reshape(other.shape)), ALL,
     lambda device, dtype, rg: iter((SampleInput(make_tensor((2, 3), dtype, transposed=True, requires_grad=rg),
                                                 (make_tensor((6,), tp.int64),), name="other"),)),
     aten=("reshape",))
_view("permute", lambda x, dims: _copy(np.transpose(x, dims)),
      (("2d", (3, 4), {}, ((1, 0),)), ("3d", (2, 3, 4), _NC, ((2, 0, 1),)), ("neg", (2, 3, 4), _T, ((-1, 0, 1),)),
       ("scalar", (), {}, ((),)), ("zero_size", (0, 3), {}, ((1, 0),))),
      errors=(lambda: _err(RuntimeError, r"permute\(\): duplicate dims are not allowed", _t((3, 4)), (0, 0)),
              lambda: _err(RuntimeError, r"number of dimensions in the tensor input does not match the length of the "
                                         r"desired ordering of dimensions", _t((3, 4)), (0,))))
_view("transpose", lambda x, d0, d1: _copy(np.swapaxes(x, d0, d1)) if x.ndim else _copy(x),
      (("2d", (3, 4), {}, (0, 1)), ("3d", (2, 3, 4), _NC, (0, 2)), ("neg", (2, 3, 4), _T, (-1, -2)),
       ("same", (3, 4), {}, (1, 1)), ("scalar", (), {}, (0, -1)), ("zero_size", (0, 3), {}, (0, 1))),
      aten=("transpose.int",),
      errors=(lambda: _err(IndexError, _DIM_RANGE, _t((3, 4)), 0, 2),))
_alias("transpose", "swapaxes", "swapdims")
_view("t", _t_ref, (("2d", (3, 4), {}, ()), ("1d", (5,), {}, ()), ("scalar", (), {}, ()), ("stepped", (3, 5), _NC, ()),
                    ("zero_size", (0, 3), {}, ())),
      errors=(lambda: _err(RuntimeError, r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D",
                           _t((2, 3, 4))),))
_view("expand", _expand_ref,
      (("new_dims", (3, 1), {}, (2, 3, 4)), ("keep", (3, 1), {}, (-1, 5)), ("tuple", (1, 4), _NC, ((3, 4),)),
       ("scalar", (), {}, (2, 3)), ("zero", (3, 1), {}, (3, 0)), ("same", (3, 4), _T, (3, 4))),
      op=_method("expand"),
      errors=(lambda: _err(RuntimeError, r"The expanded size of the tensor \(5\) must match the existing size \(3\) at "
                                         r"non-singleton dimension 0", _t((3, 4)), 5, 4),
              lambda: _err(RuntimeError, r"the number of sizes provided \(1\) must be greater or equal to the number "
                                         r"of dimensions in the tensor \(2\)", _t((3, 4)), 4)))
_add("expand_as", _method("expand_as"), lambda x, other: _copy(np.broadcast_to(x, other.shape)), ALL,
     lambda device, dtype, rg: iter((SampleInput(make_tensor((3, 1), dtype, requires_grad=rg),
                                                 (make_tensor((2, 3, 2), tp.int64),), name="other"),)),
     is_view=True, aten=("expand",))
_view("squeeze", _squeeze_ref,
      (("all", (1, 3, 1, 4), {}, ()), ("dim", (1, 3, 1), {}, (0,)), ("non_one_dim", (3, 4), {}, (0,)),
       ("dims", (1, 3, 1), _NC, ((0, 2),)), ("neg", (2, 1), _T, (-1,)), ("scalar", (), {}, ()),
       ("scalar_dim", (), {}, (0,)), ("zero_size", (0, 1), {}, ())),
      aten=("squeeze.dims",), errors=(lambda: _err(IndexError, _DIM_RANGE, _t((3, 4)), 3),))
_view("unsqueeze", lambda x, dim: _copy(np.expand_dims(x, dim)),
      (("front", (3, 4), {}, (0,)), ("back", (3, 4), {}, (2,)), ("neg", (3, 4), _T, (-1,)), ("mid", (3, 5), _NC, (1,)),
       ("scalar", (), {}, (0,)), ("zero_size", (0, 3), {}, (1,))),
      errors=(lambda: _err(IndexError, _DIM_RANGE, _t((3, 4)), 4),))
_view("flatten", _flatten_ref,
      (("all", (2, 3, 4), {}, ()), ("range", (2, 3, 4), {}, (1, 2)), ("neg", (2, 3, 4), {}, (0, -2)),
       ("single", (3, 4), {}, (1, 1)), ("scalar", (), {}, ()), ("zero_size", (0, 3), {}, ()),
       ("transposed_copy", (4, 3), _T, ())),
      is_view=False, aten=("flatten.using_ints",),
      errors=(lambda: _err(RuntimeError, r"flatten\(\) has invalid args: start_dim cannot come after end_dim",
                           _t((3, 4)), 1, 0),))
_view("unflatten", _unflatten_ref,
      (("dim0", (6, 4), {}, (0, (2, 3))), ("infer", (3, 12), {}, (1, (-1, 4))), ("neg", (3, 4), {}, (-1, (2, 2))),
       ("stepped", (3, 6), _NC, (0, (3, 1))), ("zero_size", (0, 4), {}, (1, (2, 2)))),
      aten=("unflatten.int",),
      errors=(lambda: _err(RuntimeError, r"unflatten: Provided sizes \[3, 3\] don't multiply up to the size of dim 1 "
                                         r"\(4\) in the input tensor", _t((3, 4)), 1, (3, 3)),))
_view("narrow", _narrow_ref,
      (("dim0", (5, 4), {}, (0, 1, 3)), ("dim1", (3, 4), _T, (1, 2, 2)), ("neg_start", (3, 4), {}, (1, -2, 2)),
       ("empty", (3, 4), _NC, (0, 3, 0)), ("large", (64, 65), {}, (1, 10, 40))),
      errors=(lambda: _err(RuntimeError, r"start \(2\) \+ length \(3\) exceeds dimension size \(3\)", _t((3, 4)),
                           0, 2, 3),
              # a negative length is checked first; a bool is not an int (PyTorch's argument parser)
              lambda: _err(RuntimeError, r"narrow\(\): length must be non-negative\.", _t((3, 4)), 5, 9, -1),
              lambda: _err(TypeError, r"narrow\(\)", _t((3, 4)), 0, True, 1)))
_view("select", lambda x, dim, index: _copy(np.take(x, index, axis=dim)),
      (("dim0", (3, 4), {}, (0, 1)), ("dim1", (3, 4), _T, (1, -1)), ("neg_dim", (2, 3, 4), _NC, (-2, 2)),
       ("vector", (5,), {}, (0, 4))),
      aten=("select.int",),
      errors=(lambda: _err(IndexError, r"select\(\): index 5 out of range for tensor of size \[3, 4\] at dimension 0",
                           _t((3, 4)), 0, 5),
              lambda: _err(IndexError, r"select\(\) cannot be applied to a 0-dim tensor", _t(()), 0, 0)))
_view("diagonal", lambda x, offset=0, dim1=0, dim2=1: _copy(np.diagonal(x, offset, dim1, dim2)),
      (("main", (4, 4), {}, ()), ("wide_offset", (3, 5), _T, (1,)), ("neg_offset", (5, 3), {}, (-2,)),
       ("3d", (2, 3, 4), _NC, (0, 1, 2)), ("dims_swapped", (2, 3, 4), {}, (1, 2, 0)), ("far", (3, 4), {}, (5,)),
       ("zero_size", (0, 3), {}, ())),
      errors=(lambda: _err(RuntimeError, "diagonal dimensions cannot be identical 0, 0", _t((3, 4)), 0, 0, 0),))
_view("unfold", _unfold_ref,
      (("dim1", (3, 5), {}, (1, 2, 1)), ("step2", (3, 7), _T, (1, 3, 2)), ("dim0", (6, 2), _NC, (0, 2, 3)),
       ("whole", (3, 4), {}, (1, 4, 1)), ("scalar", (), {}, (0, 1, 1))),
      op=_method("unfold"),
      errors=(lambda: _err(RuntimeError, "maximum size for tensor at dimension 1 is 4 but size is 5", _t((3, 4)),
                           1, 5, 1),
              lambda: _err(RuntimeError, "step is 0 but must be > 0", _t((3, 4)), 1, 2, 0)))
_view("movedim", lambda x, src, dst: _copy(np.moveaxis(x, src, dst)),
      (("int", (2, 3, 4), {}, (0, 2)), ("tuple", (2, 3, 4), _NC, ((0, 1), (2, 0))), ("neg", (2, 3, 4), _T, (-1, 0)),
       ("same", (3, 4), {}, (1, 1))),
      aten=("permute",),
      errors=(lambda: _err(RuntimeError, r"movedim: Invalid source or destination dims: source \(\[0, 1\] dims\) "
                                         r"should contain the same number of dims as destination \(\[0\] dims\)",
                           _t((3, 4)), (0, 1), (0,)),))
_alias("movedim", "moveaxis")
_view("as_strided", _as_strided_ref,
      (("window", (3, 4), {}, ((2, 2), (4, 1))), ("offset", (3, 4), {}, ((2, 3), (1, 2), 3)),
       ("overlapping", (12,), {}, ((4, 3), (2, 1))), ("broadcast", (4,), {}, ((3, 4), (0, 1))),
       ("scalar", (5,), {}, ((), (), 2)), ("empty", (3, 4), {}, ((0, 3), (3, 1)))),
      errors=(lambda: _err(RuntimeError, r"as_strided: Negative strides are not supported at the moment, got "
                                         r"strides: \[-1, 1\]", _t((3, 4)), (2, 2), (-1, 1)),
              lambda: _err(RuntimeError, r"setStorage: sizes \[4, 4\], strides \[4, 1\], storage offset 0, and "
                                         r"itemsize 4 requiring a storage size of 64 are out of bounds for storage of "
                                         r"size 48",
                           _t((3, 4)), (4, 4), (4, 1))))
for _n in (1, 2, 3):
    _view(f"atleast_{_n}d", _atleast(_n),
          (("scalar", (), {}, ()), ("vector", (4,), {}, ()), ("matrix", (3, 4), _T, ()), ("3d", (2, 3, 4), _NC, ()),
           ("zero_size", (0,), {}, ())), aten=("reshape",))  # a Python function over reshape
_view("detach", _copy, (("matrix", (3, 4), {}, ()), ("stepped", (3, 5), _NC, ()), ("scalar", (), {}, ())),
      op=_method("detach"), supports_autograd=False, aten=())


# -- copies and conversions ------------------------------------------------------------------------------
def _layout_samples(device, dtype, requires_grad):
    yield from S.unary_layouts(dtype, requires_grad)
    if dtype.is_floating_point and not requires_grad:
        yield SampleInput(S.special_tensor(dtype), name="special_values")


_add("clone", _method("clone"), _copy, ALL, _layout_samples, aten=("clone",))
_add("contiguous", _method("contiguous"), _copy, ALL, _layout_samples, aten=("contiguous", "clone"))


def _to_ref(x, target, *args, **kwargs):
    return S.cast(x, S.np_dtype(target))


def _conversion_samples(targets):
    """Layouts converted to each of ``targets``: values that every dtype holds (unsigned: non-negative)."""
    def sample_inputs(device, dtype, requires_grad):
        if requires_grad and tp.float64 in targets:
            # finite differences through a cast to lower precision are rounding noise: float64 only
            yield SampleInput(make_tensor((2, 3), dtype, seed=50, requires_grad=True),
                              (tp.float64,) if len(targets) > 1 else (), name="small_to_float64")
        for i, target in enumerate(targets):
            if requires_grad and target is not tp.float64:
                continue
            low = 0 if target is tp.uint8 or dtype is tp.uint8 else None
            name, shape, kw = S.LAYOUTS[i % len(S.LAYOUTS)]
            t = make_tensor(shape, dtype, low, seed=i, requires_grad=requires_grad, **kw)
            yield SampleInput(t, (target,) if len(targets) > 1 else (), name=f"{name}_to_{target.name}")
        if dtype.is_floating_point and not requires_grad:
            for target in targets:
                if target.is_floating_point:
                    yield SampleInput(S.special_tensor(dtype), (target,) if len(targets) > 1 else (),
                                      name=f"special_to_{target.name}")
    return sample_inputs


_add("to", _method("to"), _to_ref, ALL, _conversion_samples(ALL), aten=("_to_copy",))


def _to_kwargs_samples(device, dtype, requires_grad):
    yield SampleInput(make_tensor((3, 4), dtype, low=0), kwargs={"dtype": tp.float64}, name="dtype_kwarg")
    yield SampleInput(make_tensor((3, 4), dtype, low=0), (make_tensor((2,), tp.int16),), name="other_tensor")


_add("to.kwargs", _method("to"), lambda x, other=None, dtype=None: S.cast(x, other.dtype if other is not None
                                                                        else S.np_dtype(dtype)),
     ALL, _to_kwargs_samples, supports_autograd=False, aten=("_to_copy",))
_add("type_as", _method("type_as"), lambda x, other: S.cast(x, other.dtype), ALL,
     lambda device, dtype, rg: iter((SampleInput(make_tensor((3, 4), dtype, low=0), (make_tensor((2,), tp.int8),)),
                                     SampleInput(make_tensor((3, 4), dtype, low=0), (make_tensor((2,), tp.float64),)))),
     supports_autograd=False, aten=("_to_copy",))
for _name, _target in (("float", tp.float32), ("double", tp.float64), ("half", tp.float16),
                       ("bfloat16", tp.bfloat16), ("long", tp.int64), ("int", tp.int32), ("short", tp.int16),
                       ("char", tp.int8), ("byte", tp.uint8), ("bool", tp.bool)):
    # gradients flow through every floating cast, but gradcheck can only judge the float64 one
    _add(_name, _method(_name), lambda x, t=_target: S.cast(x, S.np_dtype(t)), ALL, _conversion_samples((_target,)),
         supports_autograd=_target is tp.float64, aten=("_to_copy",))


def _copy_samples(device, dtype, requires_grad):
    rg = requires_grad
    yield SampleInput(make_tensor((3, 4), dtype, seed=0), (make_tensor((3, 4), dtype, seed=1, requires_grad=rg),),
                      name="same")
    yield SampleInput(make_tensor((3, 4), dtype, seed=2, transposed=True),
                      (make_tensor((4,), dtype, seed=3, noncontiguous=True, requires_grad=rg),), name="broadcast")
    yield SampleInput(make_tensor((2, 3), dtype, seed=4), (make_tensor((2, 3), tp.int16, low=0, seed=5),),
                      name="other_dtype")
    yield SampleInput(make_tensor((), dtype, seed=6), (make_tensor((), tp.float64, low=0, seed=7),), name="scalar")


_add("copy_", _on_copy("copy_"), lambda x, src: np.broadcast_to(S.cast(src, x.dtype), x.shape).copy(), ALL,
     _copy_samples, inplace=_method("copy_"), aten=("copy_",),
     error_inputs=_errors(lambda: _err(RuntimeError, _BCAST, _t((3,)), _t((4,)))))


def _fill_samples(device, dtype, requires_grad):
    v = {tp.bool: True, tp.uint8: 200}.get(dtype, 2.5 if dtype.is_floating_point else -7)
    for i, (name, shape, kw) in enumerate(S.LAYOUTS):
        yield SampleInput(make_tensor(shape, dtype, seed=i, **kw), (v,), name=name)


_add("fill_", _on_copy("fill_"), lambda x, v: np.full_like(x, S.cast(v, x.dtype)), ALL, _fill_samples,
     inplace=_method("fill_"), supports_autograd=False, aten=("fill_.Scalar",))
_add("zero_", _on_copy("zero_"), np.zeros_like, ALL, lambda d, dt, rg: S.unary_layouts(dt, False),
     inplace=_method("zero_"), supports_autograd=False, aten=("fill_.Scalar",))


# -- advanced and basic indexing -------------------------------------------------------------------------------
def _getitem_ref(x, index):
    if isinstance(index, tuple):
        index = tuple(i.astype(np.int64) if isinstance(i, np.ndarray) and i.dtype.kind in "iu" else i for i in index)
    elif isinstance(index, np.ndarray) and index.dtype.kind in "iu":
        index = index.astype(np.int64)
    return _copy(x[index])


def _getitem_samples(device, dtype, requires_grad):
    rg = requires_grad

    def mk(shape, seed=0, **kw):
        return make_tensor(shape, dtype, seed=seed, requires_grad=rg, **kw)
    cases = (
        ("int", mk((3, 4)), 1), ("neg_int", mk((3, 4), 1), -1), ("slice", mk((5, 4), 2), slice(1, 4)),
        ("step", mk((7, 4), 3), slice(None, None, 2)), ("tuple", mk((3, 4, 5), 4), (1, slice(None), slice(3))),
        ("ellipsis", mk((2, 3, 4), 5), (Ellipsis, 1)), ("none", mk((3, 4), 6), (None, slice(1, None), None)),
        ("empty_slice", mk((3, 4), 7), slice(2, 1)), ("transposed", mk((4, 3), 8, **_T), (slice(None), 1)),
        ("int_tensor", mk((5, 4), 9), (index_tensor([0, 3, 3]),)),
        ("int_tensors_adjacent", mk((3, 4, 5), 10), (slice(None), index_tensor([0, 2]), index_tensor([1, 4]))),
        ("int_tensors_apart", mk((3, 4, 5), 11), (index_tensor([0, 2]), slice(None), index_tensor([1, 4]))),
        ("bool_mask", mk((3, 4), 12), bool_tensor((3, 4), seed=13)),
        ("bool_rows", mk((3, 4), 14, **_NC), (bool_tensor((3,), seed=15),)),
        ("list", mk((5, 4), 16), [0, 2, 4]), ("int32_2d", mk((5, 4), 17), index_tensor([[0, 1], [4, 2]], tp.int32)),
        ("scalar_tensor_index", mk((5,), 18), index_tensor(3)), ("scalar_ellipsis", mk((), 19), Ellipsis),
        ("zero_size", mk((0, 3), 20), (slice(None), 1)),
        ("large", mk((64, 65), 21), (slice(3, 50, 3), slice(None, 60))),
    )
    for name, t, index in cases:
        yield SampleInput(t, (index,), name=name)


_add("__getitem__", _method("__getitem__"), _getitem_ref, ALL, _getitem_samples,
     aten=("select.int", "slice.Tensor", "unsqueeze", "index.Tensor", "alias"),
     error_inputs=_errors(
         lambda: _err(IndexError, "index 5 is out of bounds for dimension 0 with size 3", _t((3,)), 5),
         lambda: _err(IndexError, "too many indices for tensor of dimension 1", _t((3,)), (0, 0)),
         lambda: _err(IndexError, "tensors used as indices must be long, int, byte or bool tensors", _t((3,)),
                      _t((1,)))))


# -- random ----------------------------------------------------------------------------------------------------
def _random_samples(make_args=lambda dtype: ((), {}), low=None, high=None):
    """Shapes to draw for; the suite checks shapes, dtypes and reproducibility under manual_seed."""
    def sample_inputs(device, dtype, requires_grad):
        args, kwargs = make_args(dtype)
        for i, (name, shape, kw) in enumerate(S.LAYOUTS):
            yield SampleInput(make_tensor(shape, dtype, low, high, seed=i, **kw), tuple(args), dict(kwargs), name=name)
    return sample_inputs


def _random(name, op, dtypes, samples, **kw):
    return _add(name, op, None, dtypes, samples, random=True, supports_autograd=False, **kw)


_random("rand_like", tp.rand_like, FLOATING, _random_samples(), aten=("uniform_",))
_random("randn_like", tp.randn_like, FLOATING, _random_samples(), aten=("normal_",))
_random("randint_like", tp.randint_like, NO_BOOL, _random_samples(lambda d: ((0, 5), {})), aten=("random_.from",))
# Tensor.bernoulli_ draws with one probability p, not the input's: it is an entry of its own below
_random("bernoulli", tp.bernoulli, FLOATING, _random_samples(low=0, high=1), aten=("bernoulli", "bernoulli_.float"),
        error_inputs=_errors(lambda: _err(NotImplementedError, _not_impl("bernoulli(_tensor_cpu_p_)?", "Long"),
                                          _t((3,), tp.int64))))
_random("bernoulli.p", tp.bernoulli, FLOATING, _random_samples(lambda d: ((0.3,), {})), aten=("bernoulli_.float",))
_random("normal", tp.normal, FLOATING, _random_samples(lambda d: ((2.0,), {}), low=-1, high=1), aten=("normal_",),
        error_inputs=_errors(lambda: _err(RuntimeError, "normal expects all elements of std >= 0.0", _t((3,)),
                                          _t((3,), low=-2, high=-1))))
_random("multinomial", tp.multinomial, FLOATING,
        lambda device, dtype, rg: iter((
            SampleInput(make_tensor((5,), dtype, 0.1, 1, seed=0), (3,), name="vector"),
            SampleInput(make_tensor((2, 4), dtype, 0.1, 1, seed=1), (6, True), name="replacement"),
            SampleInput(make_tensor((3, 6), dtype, 0.1, 1, seed=2, transposed=True), (2,), name="transposed"))),
        aten=("multinomial",),
        error_inputs=_errors(
            lambda: _err(RuntimeError, "probability tensor contains either `inf`, `nan` or element < 0",
                         _t((3,), low=-2, high=-1), 1),
            lambda: _err(RuntimeError, r"cannot sample n_sample > prob_dist.size\(-1\) samples without replacement",
                         _t((3,), low=0.1, high=1), 4)))
_random("uniform_", _on_copy("uniform_"), FLOATING, _random_samples(lambda d: ((-2.0, 3.0), {})),
        inplace=_method("uniform_"), aten=("uniform_",),
        error_inputs=_errors(lambda: _err(RuntimeError, r"uniform_ expects to return a \[from, to\) range, but found "
                                                        r"from=2 > to=1", _t((3,)), 2, 1)))
_random("normal_", _on_copy("normal_"), FLOATING, _random_samples(lambda d: ((1.0, 0.5), {})),
        inplace=_method("normal_"), aten=("normal_",))
_random("bernoulli_", _on_copy("bernoulli_"), ALL, _random_samples(lambda d: ((0.25,), {})),
        inplace=_method("bernoulli_"), aten=("bernoulli_.float",))
_random("random_", _on_copy("random_"), ALL, _random_samples(lambda d: ((0, 2), {})), inplace=_method("random_"),
        aten=("random_.from",))


# -- Python operators with their own code paths -----------------------------------------------------------
# ``number OP tensor`` wraps the number on the left; ``__add__`` and the other forward operators are the
# entries' functions with the operands in order and need no entries of their own.
def _reflected_samples(scalars, low, high, bool_tensors):
    """The Python-number samples, then a tensor as the other operand: ``x.__rsub__(y)`` called directly is
    ``y - x`` (PyTorch computes it; it is not NotImplemented). ``bool_tensors``: whether the op takes two
    bool tensors (``%`` and ``**`` do not, though a bool tensor and a number promote)."""
    numbers_first = _scalar_lhs_samples(scalars, low, high)

    def sample_inputs(device, dtype, requires_grad):
        yield from numbers_first(device, dtype, requires_grad)
        if dtype is tp.bool and not bool_tensors:
            return
        other = make_tensor((3, 4), dtype, low, high, seed=91, requires_grad=requires_grad, exclude_zero=True)
        yield SampleInput(make_tensor((3, 4), dtype, low, high, seed=90, requires_grad=requires_grad,
                                      exclude_zero=True), (other,), name="tensor_other")
    return sample_inputs


def _reflected(name, ref, dtypes, scalars, low=None, high=None, grad=True, bool_tensors=True):
    return _add(name, _method(name), lambda x, s: ref(s, x), dtypes,
                _reflected_samples(scalars, low, high, bool_tensors), supports_autograd=grad, aten=())


_reflected("__radd__", _add_ref, ALL, (7, -2.5))
_reflected("__rsub__", _sub_ref, NO_BOOL, (7, -2.5))
_reflected("__rmul__", _promote_ref(np.multiply), ALL, (7, -2.5))
_reflected("__rtruediv__", _float_binary_ref(np.divide), ALL, (7, -2.5))
_reflected("__rfloordiv__", _promote_ref(np.floor_divide), NO_BOOL, (7, -2.5))
_reflected("__rmod__", _promote_ref(np.remainder), ALL, (7, -2.5), bool_tensors=False)
_reflected("__rpow__", _promote_ref(np.power, _int_pow), ALL, (2, 1.5), low=0, high=4, bool_tensors=False)
for _name, _fn in (("__rand__", np.bitwise_and), ("__ror__", np.bitwise_or), ("__rxor__", np.bitwise_xor)):
    _reflected(_name, _promote_ref(_fn), INTEGRAL_AND_BOOL, (6, True), grad=False)
unary("__invert__", np.invert, kind="same", dtypes=INTEGRAL_AND_BOOL, grad=False, inplace=False,
      op=_method("__invert__"), aten=("bitwise_not",),
      errors=_errors(lambda: _err(TypeError, r"~ \(operator.invert\) is only implemented on integer and Boolean-type "
                                             r"tensors", _t((3,)))))
_add("__matmul__", _method("__matmul__"), _matmul_ref, _MATMUL_DTYPES, _pairs_samples(_MATMUL_PAIRS),
     aten=("matmul",))


# -- tensorplug.nn.functional -------------------------------------------------------------------------------------
# Layers and losses: composites of the entries above. References compute in float64 and cast to the input's dtype;
# samples stay small (each runs through every check in every dtype). Gradient samples keep off kinks: max pooling
# gets distinct values, the losses' differences stay away from 0 and from huber's delta.
from ..nn import functional as F  # noqa: E402  (the section's ops)

_NN_DTYPES = FLOATING
# reduced-precision sums over windows, channels or classes round at every step in PyTorch and here alike
_NN_TOL = {"atol": 2e-2, "rtol": 2e-2}


def _nn(name, ref, samples, **kw):
    kw.setdefault("dtypes", _NN_DTYPES)
    return _add(f"nn.functional.{name}", getattr(F, name.partition(".")[0]), ref, kw.pop("dtypes"), samples, **kw)


def _ntuple(v, nd):
    t = (v,) if isinstance(v, int) else tuple(v)
    return t * nd if len(t) == 1 else t


def _window_view(v, k, s, d, outs):
    """(N, C, *outs, *k) windows of the (already padded) float64 ``v`` (N, C, *spatial)."""
    nd = len(k)
    span = tuple(di * (ki - 1) + 1 for ki, di in zip(k, d))
    w = np.lib.stride_tricks.sliding_window_view(v, span, axis=tuple(range(2, 2 + nd)))
    step = tuple(slice(0, si * (o - 1) + 1, si) for si, o in zip(s, outs))
    dil = tuple(slice(None, None, di) for di in d)
    return w[(slice(None), slice(None)) + step + dil]


def _batched(x, nd):
    v = S.f64(x)
    return (v, True) if v.ndim == nd + 2 else (v[None], False)


def _conv_ref(nd):
    def ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
        v, batched = _batched(x, nd)
        wv = S.f64(w)
        s, d, k = _ntuple(stride, nd), _ntuple(dilation, nd), wv.shape[2:]
        if padding == "valid":
            pads = [(0, 0)] * nd
        elif padding == "same":
            pads = [(di * (ki - 1) // 2, di * (ki - 1) - di * (ki - 1) // 2) for di, ki in zip(d, k)]
        else:
            pads = [(p, p) for p in _ntuple(padding, nd)]
        v = np.pad(v, [(0, 0), (0, 0)] + pads)
        outs = tuple((n - di * (ki - 1) - 1) // si + 1 for n, ki, si, di in zip(v.shape[2:], k, s, d))
        win = _window_view(v, k, s, d, outs)  # N, C, *outs, *k
        og, cg = wv.shape[0] // groups, wv.shape[1]
        parts = [np.tensordot(win[:, g * cg:(g + 1) * cg], wv[g * og:(g + 1) * og],
                              axes=([1] + list(range(2 + nd, 2 + 2 * nd)), list(range(1, 2 + nd))))
                 for g in range(groups)]  # each N, *outs, og
        r = np.moveaxis(np.concatenate(parts, axis=-1), -1, 1)
        if b is not None:
            r = r + S.f64(b).reshape((-1,) + (1,) * nd)
        return S.cast(r if batched else r[0], x.dtype)
    return ref


def _conv_samples(nd):
    def sample_inputs(device, dtype, requires_grad):
        def mk(shape, seed, **kw):
            return make_tensor(shape, dtype, -1, 1, seed=seed, requires_grad=requires_grad, **kw)
        sp = (5,) * nd
        k = (3,) * nd
        # small enough for the conformance suite's finite differences on every backend
        yield SampleInput(mk((1, 1) + (2, 3)[-nd:], 13), (mk((1, 1) + (2,) * nd, 14),), name="tiny")
        yield SampleInput(mk((2, 2) + sp, 0), (mk((3, 2) + k, 1), mk((3,), 2)), name="bias")
        yield SampleInput(mk((2,) + sp, 3, **_NC), (mk((2, 2) + k, 4),), name="unbatched_no_bias")
        yield SampleInput(mk((1, 2) + sp, 5), (mk((2, 2) + k, 6),), {"stride": 2, "padding": 1}, name="stride_pad")
        yield SampleInput(mk((1, 2) + sp, 7, **_T), (mk((2, 2) + (2,) * nd, 8), mk((2,), 9)),
                          {"dilation": 2, "padding": "same"}, name="dilation_same")
        yield SampleInput(mk((1, 4) + sp, 10), (mk((4, 2) + (2,) * nd, 11), mk((4,), 12)),
                          {"groups": 2, "stride": (2,) * nd if nd == 1 else (1, 2)}, name="groups")
    return sample_inputs


_conv_errors = {
    1: _errors(
        lambda: _err(RuntimeError, r"Expected 2D \(unbatched\) or 3D \(batched\) input to conv1d, but got input of "
                                   r"size: \[2, 3, 5, 5\]", _t((2, 3, 5, 5)), _t((4, 3, 3))),
        # a bias of another dtype: PyTorch's first check
        lambda: _err(RuntimeError, r"Input type \(float\) and bias type \(double\) should be the same",
                     _t((2, 3, 5)), _t((4, 3, 3)), _t((4,), tp.float64))),
    2: _errors(
        lambda: _err(RuntimeError, r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of "
                                   r"size: \[5, 5\]", _t((5, 5)), _t((4, 3, 3, 3))),
        lambda: _err(RuntimeError, r"Given groups=1, weight of size \[4, 2, 3, 3\], expected input\[2, 3, 5, 5\] to "
                                   r"have 2 channels, but got 3 channels instead", _t((2, 3, 5, 5)), _t((4, 2, 3, 3))),
        lambda: _err(RuntimeError, r"Calculated padded input size per channel: \(2 x 2\). Kernel size: \(3 x 3\). "
                                   r"Kernel size can't be greater than actual input size",
                     _t((2, 3, 2, 2)), _t((4, 3, 3, 3))),
        lambda: _err(RuntimeError, r"Given groups=3, expected weight to be divisible by 3 at dimension 0",
                     _t((2, 3, 5, 5)), _t((4, 1, 3, 3)), groups=3),
        lambda: _err(RuntimeError, r"expected bias to be 1-dimensional with 4 elements, but got bias of size \[3\]",
                     _t((2, 3, 5, 5)), _t((4, 3, 3, 3)), _t((3,))),
        lambda: _err(RuntimeError, r"Input type \(float\) and bias type \(long int\) should be the same",
                     _t((2, 3, 5, 5)), _t((4, 3, 3, 3)), _t((4,), tp.int64))),
}
for _nd in (1, 2):
    _nn(f"conv{_nd}d", _conv_ref(_nd), _conv_samples(_nd), error_inputs=_conv_errors[_nd],
        aten=(f"conv{_nd}d", f"conv{_nd}d.padding", "conv2d", "stack", "matmul", "cat"), **_NN_TOL)


# -- pooling
def _pool_out_ref(n, k, s, p, d, ceil_mode):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    o = num // s + 1
    return o - 1 if ceil_mode and (o - 1) * s >= n + p else o


def _pooled(v, nd, kernel_size, stride, padding, dilation, ceil_mode, fill, pad_fill=None):
    """Windows (N, C, *outs, *k) of ``v`` padded by ``padding`` with ``pad_fill`` (default ``fill``) and on the
    right with ``fill`` as far as ceil_mode's last windows reach."""
    k = _ntuple(kernel_size, nd)
    s = k if stride is None or stride == [] or stride == () else _ntuple(stride, nd)
    p, d = _ntuple(padding, nd), _ntuple(dilation, nd)
    sizes = v.shape[2:]
    outs = tuple(_pool_out_ref(*a, ceil_mode) for a in zip(sizes, k, s, p, d))
    v = np.pad(v, [(0, 0), (0, 0)] + [(pi, pi) for pi in p],
               constant_values=fill if pad_fill is None else pad_fill)
    extra = [max((o - 1) * si + di * (ki - 1) + 1 - n - 2 * pi, 0)
             for o, si, di, ki, n, pi in zip(outs, s, d, k, sizes, p)]
    v = np.pad(v, [(0, 0), (0, 0)] + [(0, e) for e in extra], constant_values=fill)
    return _window_view(v, k, s, d, outs), (k, s, p, d, outs)


def _max_pool_ref(nd):
    def ref(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        v, batched = _batched(x, nd)
        win, (k, s, p, d, outs) = _pooled(v, nd, kernel_size, stride, padding, dilation, ceil_mode, -np.inf)
        flat = win.reshape(win.shape[:2 + nd] + (-1,))
        arg = np.argmax(flat, axis=-1)
        vals = np.take_along_axis(flat, arg[..., None], -1)[..., 0]
        out = S.cast(vals if batched else vals[0], x.dtype)
        if not return_indices:
            return out
        # the flat position of each window's maximum in its input plane
        pos = np.unravel_index(arg, k)
        coords = [np.arange(o).reshape((-1,) + (1,) * (nd - 1 - i)) * s[i] - p[i] + pos[i] * d[i]
                  for i, o in enumerate(outs)]
        idx = coords[0] if nd == 1 else coords[0] * x.shape[-1] + coords[1]
        return out, (idx if batched else idx[0]).astype(np.int64)
    return ref


def _distinct_values(shape, dtype, seed, requires_grad):
    """Values with no ties (a permutation of a grid): max pooling's gradient is then smooth."""
    n = int(np.prod(shape))
    v = np.random.default_rng(seed).permutation(n).reshape(shape) * (8.0 / max(n, 1)) - 4.0
    return make_tensor(shape, dtype, values=v, requires_grad=requires_grad)


def _pool_samples(nd, cases):
    """``cases``: (name, shape of (C, H, W) or (N, C, H, W) for 2-d, args, kwargs) per sample."""
    def sample_inputs(device, dtype, requires_grad):
        for i, (name, shape, args, kw) in enumerate(cases):
            yield SampleInput(_distinct_values(shape, dtype, i, requires_grad), args, dict(kw), name=name)
    return sample_inputs


_MAX_POOL_CASES = {
    2: (("plain", (2, 2, 4, 4), (2,), {}),
        ("tiny_overlapping", (1, 1, 3, 3), (2, 1), {}),
        ("unbatched_stride_pad", (2, 5, 5), (3,), {"stride": 2, "padding": 1}),
        ("dilation_ceil", (1, 2, 6, 5), ((2, 3),), {"stride": (2, 1), "dilation": (2, 1), "ceil_mode": True}),
        ("indices", (1, 2, 5, 5), (3, 2, 1), {"return_indices": True})),
    1: (("plain", (2, 3, 6), (2,), {}),
        ("tiny_overlapping", (1, 1, 6), (2, 1), {}),
        ("unbatched_stride_pad", (3, 7), (3,), {"stride": 2, "padding": 1}),
        ("dilation_ceil", (1, 2, 8), (2,), {"stride": 2, "dilation": 2, "ceil_mode": True}),
        ("indices", (2, 2, 7), (3, 2, 1), {"return_indices": True})),
}
_AVG_POOL_CASES = {
    2: (("plain", (2, 2, 4, 4), (2,), {}),
        ("tiny_overlapping", (1, 1, 3, 3), (2, 1), {}),
        ("unbatched_stride_pad", (2, 5, 5), (3,), {"stride": 2, "padding": 1}),
        ("exclude_pad_ceil", (1, 2, 6, 5), ((3, 2),), {"stride": 2, "padding": 1, "ceil_mode": True,
                                                        "count_include_pad": False}),
        ("divisor", (1, 2, 5, 5), (2, 1), {"divisor_override": 3})),
    1: (("plain", (2, 3, 6), (2,), {}),
        ("tiny_overlapping", (1, 1, 6), (2, 1), {}),
        ("unbatched_stride_pad", (3, 7), (3,), {"stride": 2, "padding": 1}),
        ("exclude_pad_ceil", (1, 2, 8), (3,), {"stride": 2, "padding": 1, "ceil_mode": True,
                                               "count_include_pad": False})),
}


def _avg_pool_ref(nd):
    def ref(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
        v, batched = _batched(x, nd)
        args = (nd, kernel_size, stride, padding, 1, ceil_mode, 0.0)
        win, _ = _pooled(v, *args)
        sums = win.sum(axis=tuple(range(-nd, 0)))
        if divisor_override is not None:
            r = sums / divisor_override
        else:
            # the window's size inside the input and its padding (or inside the input alone), not the overhang
            ones = np.ones((1, 1) + v.shape[2:])
            cnt, _ = _pooled(ones, *args, pad_fill=1.0 if count_include_pad else 0.0)
            r = sums / cnt.sum(axis=tuple(range(-nd, 0)))
        if x.dtype == np.int64:
            r = np.trunc(r)  # PyTorch's integer division (sums of small integers: exact in float64)
        return S.cast(r if batched else r[0], x.dtype)
    return ref


_POOL_PAD = r"pad should be (at most|smaller than or equal to) half of (effective )?kernel size"
_POOL_DIMS = r"Expected 3D or 4D \(batch mode\) tensor with optional 0 dim batch size for input, but got:"
_POOL_ERRORS = {
    # inputs of the wrong rank or with an empty non-batch dim, in PyTorch's words for each op
    "max_pool1d": (((5,), RuntimeError, r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor with optional 0 dim "
                                        r"batch size for input, but got:\[5\]"),
                   ((0, 4), RuntimeError, r"max_pool1d: Expected 2D or 3D .* but got:\[0, 4\]"),
                   ((1, 0, 4), RuntimeError, r"max_pool1d: Expected 2D or 3D .* but got:\[1, 0, 4\]")),
    "max_pool2d": (((5, 5), RuntimeError, r"non-empty 3D or 4D \(batch mode\) tensor expected for input"),
                   ((0, 4, 4), RuntimeError, _POOL_DIMS + r"\[0, 4, 4\]"),
                   ((1, 0, 4, 4), RuntimeError, _POOL_DIMS + r"\[1, 0, 4, 4\]")),
    "avg_pool1d": (((5,), RuntimeError, r"Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument #1 "
                                        r"'self' \(while checking arguments for avg_pool1d\)"),
                   ((0, 4), RuntimeError, _POOL_DIMS + r"\[0, 1, 4\]"),
                   ((2, 3, 0), RuntimeError, _POOL_DIMS + r"\[2, 3, 1, 0\]")),
    "avg_pool2d": (((5, 5), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got -3\)"),
                   ((0, 4, 4), RuntimeError, _POOL_DIMS + r"\[0, 4, 4\]"),
                   ((1, 1, 0, 4), RuntimeError, _POOL_DIMS + r"\[1, 1, 0, 4\]")),
}


def _pool_shape_errors(name):
    return tuple(lambda shape=shape, exc=exc, regex=regex: _err(exc, regex, _t(shape), 2)
                 for shape, exc, regex in _POOL_ERRORS[name])


for _nd in (2, 1):
    _nn(f"max_pool{_nd}d", _max_pool_ref(_nd), _pool_samples(_nd, _MAX_POOL_CASES[_nd]),
        aten=(f"max_pool{_nd}d", f"max_pool{_nd}d_with_indices", "argmax", "gather"),
        error_inputs=_errors(
            lambda nd=_nd: _err(RuntimeError, _POOL_PAD, _t((1, 2) + (5,) * nd), 2, padding=2),
            *_pool_shape_errors(f"max_pool{_nd}d"),
            lambda nd=_nd: _err(RuntimeError, r"Output size is too small|Invalid computed output size",
                                _t((1, 2) + (5,) * nd), 6),
            # PyTorch's max_pool1d without indices is floating only; bool is refused by every max pooling
            lambda nd=_nd: _err(NotImplementedError, _not_impl("max_pool1d_impl" if nd == 1 else "max_pool2d",
                                                               "Long" if nd == 1 else "Bool"),
                                _t((1, 2) + (4,) * nd, tp.int64 if nd == 1 else tp.bool), 2)))
    _nn(f"avg_pool{_nd}d", _avg_pool_ref(_nd), _pool_samples(_nd, _AVG_POOL_CASES[_nd]),
        aten=(f"avg_pool{_nd}d", "sum", "div"), dtypes=FLOATING + (tp.int64,),
        error_inputs=_errors(
            lambda nd=_nd: _err(RuntimeError, _POOL_PAD, _t((1, 2) + (5,) * nd), 2, padding=2),
            *_pool_shape_errors(f"avg_pool{_nd}d"),
            lambda nd=_nd: _err(NotImplementedError, _not_impl("avg_pool2d", "Int"), _t((1, 2) + (4,) * nd, tp.int32),
                                2),
            *((lambda: _err(RuntimeError, "divisor must be not zero", _t((1, 2, 5, 5)), 2, divisor_override=0),)
              if _nd == 2 else ())))


def _adaptive_ref(nd):
    def ref(x, output_size):
        v, batched = _batched(x, nd)
        outs = tuple(n if o is None else o for o, n in zip(_ntuple(output_size, nd), v.shape[2:]))
        for i, (n, o) in enumerate(zip(v.shape[2:], outs)):
            ax = 2 + i
            parts = [np.take(v, range(j * n // o, -((-(j + 1) * n) // o)), axis=ax).mean(axis=ax, keepdims=True)
                     for j in range(o)]
            v = np.concatenate(parts, axis=ax) if parts else np.take(v, [], axis=ax)
        return S.cast(v if batched else v[0], x.dtype)
    return ref


_ADAPTIVE_CASES = {
    2: (("uneven", (2, 2, 5, 7), ((3, 4),), {}), ("even_unbatched", (2, 4, 6), (2,), {}),
        ("tiny", (1, 1, 3, 3), (2,), {}),
        ("keep_dim", (1, 2, 5, 4), ((None, 3),), {}), ("upsample", (1, 1, 2, 3), (4,), {})),
    1: (("uneven", (2, 2, 7), (3,), {}), ("even_unbatched", (2, 6), (3,), {}), ("upsample", (1, 2, 3), (5,), {})),
}
for _nd in (2, 1):
    _nn(f"adaptive_avg_pool{_nd}d", _adaptive_ref(_nd), _pool_samples(_nd, _ADAPTIVE_CASES[_nd]),
        aten=("mean", "matmul"),
        error_inputs=_errors(
            lambda nd=_nd: _err(RuntimeError, rf"Expected {nd + 1}D or {nd + 2}D tensor|Expected {nd + 1} to "
                                              rf"{nd + 2} dimensions", _t((5,) * (nd + 3 if nd == 1 else 2)), 2),
            lambda nd=_nd: _err(RuntimeError, r"adaptive_avg_pool2d\(\): Expected input to have non-zero size for "
                                              r"non-batch dimensions, but input has sizes \[2, 3, 1, 0\] with dimension "
                                              r"3 being empty" if nd == 1 else
                                r"adaptive_avg_pool2d\(\): Expected input to have non-zero size for non-batch "
                                r"dimensions, but input has sizes \[1, 2, 0, 4\] with dimension 2 being empty",
                                _t((2, 3, 0) if nd == 1 else (1, 2, 0, 4)), 2),
            lambda nd=_nd: _err(NotImplementedError, _not_impl("adaptive_avg_pool2d", "Long"),
                                _t((1, 2) + (4,) * nd, tp.int64), 2),
            *((lambda: _err(RuntimeError, r"elements of output_size must be greater than or equal to 0",
                            _t((1, 2, 5, 5)), (-1, 2)),) if _nd == 2 else ())))


# -- normalization
def _affine(r, weight, bias, shape):
    if weight is not None:
        r = r * S.f64(weight).reshape(shape)
    if bias is not None:
        r = r + S.f64(bias).reshape(shape)
    return r


def _batch_norm_ref(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    v = S.f64(x)
    axes = (0,) + tuple(range(2, v.ndim))
    shape = (-1,) + (1,) * (v.ndim - 2)
    if v.size == 0:
        return S.cast(v, x.dtype)
    if training or running_mean is None:
        mean, var = v.mean(axis=axes), v.var(axis=axes)
    else:
        mean, var = S.f64(running_mean), S.f64(running_var)
    r = (v - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    return S.cast(_affine(r, weight, bias, shape), x.dtype)


def _norm_params(dtype, rg, c, seed):
    """(running_mean, running_var, weight, bias) for ``c`` channels; the running statistics are buffers."""
    return (make_tensor((c,), dtype, -1, 1, seed=seed), make_tensor((c,), dtype, 0.5, 2, seed=seed + 1),
            make_tensor((c,), dtype, 0.5, 2, seed=seed + 2, requires_grad=rg),
            make_tensor((c,), dtype, -1, 1, seed=seed + 3, requires_grad=rg))


def _batch_norm_samples(device, dtype, requires_grad):
    rg = requires_grad
    rm, rv, w, b = _norm_params(dtype, rg, 3, 10)
    x = make_tensor((4, 3, 2, 2), dtype, -2, 2, seed=0, requires_grad=rg)
    yield SampleInput(x, (rm, rv, w, b), name="eval")
    yield SampleInput(make_tensor((5, 3), dtype, -2, 2, seed=1, requires_grad=rg), (rm, rv), {"eps": 0.1},
                      name="eval_no_affine")
    yield SampleInput(make_tensor((4, 3, 3), dtype, -2, 2, seed=2, requires_grad=rg, **_T), (None, None, w, b),
                      {"training": True}, name="training_batch_stats")
    tiny_affine = _norm_params(dtype, rg, 2, 30)[2:]
    yield SampleInput(make_tensor((3, 2), dtype, -2, 2, seed=5, requires_grad=rg), (None, None) + tiny_affine,
                      {"training": True}, name="tiny_training")
    if not requires_grad:  # empty inputs: an empty result (no channel statistics to compute), as in PyTorch
        yield SampleInput(make_tensor((0, 3), dtype, seed=6), (None, None, w, b), {"training": True},
                          name="empty_batch")
        yield SampleInput(make_tensor((2, 0, 4), dtype, seed=7), (None, None), {"training": True},
                          name="no_channels")


def _batch_norm_update(input, running_mean, running_var, *args, **kwargs):
    """``batch_norm`` in training mode on copies of the running statistics: (result, new mean, new variance)."""
    rm, rv = running_mean.clone(), running_var.clone()
    return F.batch_norm(input, rm, rv, *args, training=True, **kwargs), rm, rv


def _batch_norm_update_ref(x, running_mean, running_var, weight=None, bias=None, momentum=0.1, eps=1e-5):
    v = S.f64(x)
    axes = (0,) + tuple(range(2, v.ndim))
    n = v.size // v.shape[1]
    if n == 0:  # an empty batch leaves the running statistics as they are, as in PyTorch
        return S.cast(v, x.dtype), running_mean.copy(), running_var.copy()
    rm = (1 - momentum) * S.f64(running_mean) + momentum * v.mean(axis=axes)
    rv = (1 - momentum) * S.f64(running_var) + momentum * v.var(axis=axes) * n / (n - 1)
    out = _batch_norm_ref(x, None, None, weight, bias, True, momentum, eps)
    return out, S.cast(rm, running_mean.dtype), S.cast(rv, running_var.dtype)


def _batch_norm_update_samples(device, dtype, requires_grad):
    rm, rv, w, b = _norm_params(dtype, False, 2, 20)
    yield SampleInput(make_tensor((3, 2, 2), dtype, -2, 2, seed=3), (rm, rv, w, b), name="affine")
    yield SampleInput(make_tensor((4, 2), dtype, -2, 2, seed=4), (rm, rv),
                      {"momentum": 0.3}, name="momentum")
    yield SampleInput(make_tensor((0, 2, 3), dtype, seed=5), (rm, rv, w, b), name="empty_batch")


_nn("batch_norm", _batch_norm_ref, _batch_norm_samples, aten=("batch_norm", "var_mean", "rsqrt", "mul", "add"), **_NN_TOL,
    error_inputs=_errors(
        lambda: _err(RuntimeError, "running_mean should contain 3 elements not 2", _t((2, 3, 4)), _t((2,)), _t((3,))),
        lambda: _err(ValueError, r"Expected more than 1 value per channel when training, got input size "
                                 r"(torch\.Size\(\[1, 3, 1, 1\]\)|\(1, 3, 1, 1\))", _t((1, 3, 1, 1)), None, None,
                     training=True)))
_add("nn.functional.batch_norm.running_stats", _batch_norm_update, _batch_norm_update_ref, _NN_DTYPES,
     _batch_norm_update_samples, aten=("batch_norm", "var_mean", "mul_", "add_"), **_NN_TOL,
     # the updated statistics take no gradient (PyTorch's buffers); the result's is the entry above's
     supports_autograd=False)


def _layer_norm_ref(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    v = S.f64(x)
    axes = tuple(range(-len(_ntuple(normalized_shape, 1)), 0))
    r = (v - v.mean(axis=axes, keepdims=True)) / np.sqrt(v.var(axis=axes, keepdims=True) + eps)
    return S.cast(_affine(r, weight, bias, v.shape[v.ndim - len(axes):]), x.dtype)


def _layer_norm_samples(device, dtype, requires_grad):
    def mk(shape, seed, low=-2, high=2, **kw):
        return make_tensor(shape, dtype, low, high, seed=seed, requires_grad=requires_grad, **kw)
    yield SampleInput(mk((3, 5), 0), ((5,), mk((5,), 1, 0.5, 2), mk((5,), 2)), name="affine")
    yield SampleInput(mk((2, 3, 4), 3, **_T), ((3, 4),), {"eps": 0.1}, name="two_dims")
    yield SampleInput(mk((4,), 4), ((4,), None, mk((4,), 5)), name="vector_bias_only")


_nn("layer_norm", _layer_norm_ref, _layer_norm_samples, aten=("layer_norm", "var_mean", "rsqrt"), **_NN_TOL,
    error_inputs=_errors(
        lambda: _err(RuntimeError, r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], but got input "
                                   r"of size\s?\[2, 3, 5\]", _t((2, 3, 5)), (4,)),
        lambda: _err(RuntimeError, r"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                                   r"\[4\] and normalized_shape = \[5\]", _t((2, 5)), (5,), _t((4,)))))


def _group_norm_ref(x, num_groups, weight=None, bias=None, eps=1e-5):
    v = S.f64(x)
    if v.size == 0:
        return S.cast(_affine(v, weight, bias, (-1,) + (1,) * (v.ndim - 2)), x.dtype)
    g = v.reshape(v.shape[0], num_groups, -1)
    r = ((g - g.mean(axis=-1, keepdims=True)) / np.sqrt(g.var(axis=-1, keepdims=True) + eps)).reshape(v.shape)
    return S.cast(_affine(r, weight, bias, (-1,) + (1,) * (v.ndim - 2)), x.dtype)


def _group_norm_samples(device, dtype, requires_grad):
    def mk(shape, seed, low=-2, high=2, **kw):
        return make_tensor(shape, dtype, low, high, seed=seed, requires_grad=requires_grad, **kw)
    yield SampleInput(mk((2, 4, 3), 0), (2, mk((4,), 1, 0.5, 2), mk((4,), 2)), name="affine")
    yield SampleInput(mk((2, 6, 2, 2), 3, **_NC), (3,), {"eps": 0.1}, name="spatial")
    yield SampleInput(mk((3, 2), 4), (1,), name="one_group")
    if not requires_grad:  # an empty batch: an empty result, as in PyTorch
        yield SampleInput(mk((0, 4, 3), 5), (2, mk((4,), 6, 0.5, 2), mk((4,), 7)), name="empty_batch")
        yield SampleInput(mk((0, 4), 8), (2,), name="empty_batch_no_spatial")


_nn("group_norm", _group_norm_ref, _group_norm_samples, aten=("group_norm", "var_mean", "rsqrt"), **_NN_TOL,
    error_inputs=_errors(
        lambda: _err(RuntimeError, r"Expected number of channels in input to be divisible by num_groups, but got input "
                                   r"of shape \[2, 3, 5\] and num_groups=2", _t((2, 3, 5)), 2),
        lambda: _err(RuntimeError, r"Expected weight to be a vector of size equal to the number of channels in input, "
                                   r"but got weight of shape \[2\] and input of shape \[2, 3, 5\]",
                     _t((2, 3, 5)), 3, _t((2,)))))


# -- embedding, dropout
def _embedding_ref(idx, weight, padding_idx=None):
    return weight[idx.astype(np.int64)].copy()


def _embedding_samples(device, dtype, requires_grad):
    w = make_tensor((6, 3), dtype, seed=0, requires_grad=requires_grad)
    yield SampleInput(index_tensor([2, 0]), (make_tensor((3, 2), dtype, seed=1, requires_grad=requires_grad),),
                      name="tiny")
    yield SampleInput(index_tensor([[0, 5, 2], [2, 2, 4]]), (w,), name="matrix_repeats")
    yield SampleInput(index_tensor(3, tp.int32), (w,), name="scalar_int32")
    yield SampleInput(index_tensor(np.zeros((0,), np.int64)), (w,), name="zero_size")
    if not requires_grad:  # the padding row's gradient is 0 whatever the values: not a finite difference
        yield SampleInput(index_tensor([1, 0, 1, 3]), (w,), {"padding_idx": 1}, name="padding_idx")
        yield SampleInput(index_tensor([5, 0, 4]), (w,), {"padding_idx": -1}, name="negative_padding_idx")


_nn("embedding", _embedding_ref, _embedding_samples, aten=("embedding", "index_select", "where"),
    error_inputs=_errors(
        lambda: _err(RuntimeError, r"Expected tensor for argument #1 'indices' to have one of the following scalar "
                                   r"types: Long, Int; but got \S*FloatTensor instead", _t((2,)), _t((3, 2))),
        lambda: _err(AssertionError, "Padding_idx must be within num_embeddings", index_tensor([0]), _t((3, 2)),
                     padding_idx=3),
        lambda: _err(IndexError, r"index out of range in self|out of range", index_tensor([5]), _t((3, 2))),
        lambda: _err(RuntimeError, r"'weight' must be 2-D", index_tensor([0]), _t((3,))),
        lambda: _err(RuntimeError, r"'weight' must be 2-D", index_tensor([0]), _t((3, 2, 2)))))


def _dropout_samples(device, dtype, requires_grad):
    for i, (name, shape, kw) in enumerate(S.LAYOUTS[:6]):
        yield SampleInput(make_tensor(shape, dtype, seed=i, **kw), (), {"p": 0.25 if i % 2 else 0.5}, name=name)
    yield SampleInput(make_tensor((4, 5), dtype, seed=9), (), {"p": 1.0}, name="p_1")


_random("nn.functional.dropout", F.dropout, FLOATING, _dropout_samples, aten=("bernoulli_", "mul"),
        error_inputs=_errors(lambda: _err(ValueError, "dropout probability has to be between 0 and 1, but got 1.5",
                                          _t((3,)), 1.5)))


def _dropout_identity_samples(device, dtype, requires_grad):
    yield SampleInput(make_tensor((3, 4), dtype, seed=0, requires_grad=requires_grad), (0.0,), name="p_0")
    yield SampleInput(make_tensor((2, 3), dtype, seed=1, requires_grad=requires_grad, **_T), (0.5,),
                      {"training": False}, name="eval")


_add("nn.functional.dropout.identity", F.dropout, lambda x, p=0.5, training=True: x.copy(), FLOATING,
     _dropout_identity_samples, aten=())


# -- losses
def _reduced(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _log_softmax64(v, axis):
    m = v.max(axis=axis, keepdims=True)
    return v - m - np.log(np.exp(v - m).sum(axis=axis, keepdims=True))


def _class_loss(logp, target, weight, ignore_index, reduction, label_smoothing):
    """nll of class-index targets on float64 log-probabilities (class dim 1, or 0 for one sample), smoothed."""
    cd = 0 if logp.ndim == 1 else 1
    c = logp.shape[cd]
    wshape = (c,) + (1,) * (logp.ndim - cd - 1)
    w = np.ones(c) if weight is None else S.f64(weight)
    idx = target.astype(np.int64)
    ignored = idx == ignore_index
    safe = np.where(ignored, 0, idx)
    picked = np.take_along_axis(logp, np.expand_dims(safe, cd), cd).squeeze(cd)
    wt = w[safe] * ~ignored
    nll = -picked * wt
    smooth = np.where(ignored, 0.0, -(logp * w.reshape(wshape)).sum(axis=cd))
    if reduction == "mean":
        nll, smooth = nll.sum() / wt.sum(), smooth.sum() / wt.sum()
    else:
        nll, smooth = _reduced(nll, reduction), _reduced(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


def _cross_entropy_ref(x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    v = S.f64(x)
    cd = 0 if v.ndim == 1 else 1
    logp = _log_softmax64(v, cd)
    if target.shape != v.shape:
        return S.cast(_class_loss(logp, target, weight, ignore_index, reduction, label_smoothing), x.dtype)
    c = v.shape[cd]
    t = S.f64(target) * (1 - label_smoothing) + label_smoothing / c
    w = np.ones(c) if weight is None else S.f64(weight)
    loss = -(logp * t * w.reshape((c,) + (1,) * (v.ndim - cd - 1))).sum(axis=cd)
    r = loss.sum() / (v.size // c) if reduction == "mean" else _reduced(loss, reduction)
    return S.cast(r, x.dtype)


def _nll_ref(x, target, weight=None, ignore_index=-100, reduction="mean"):
    return S.cast(_class_loss(S.f64(x), target, weight, ignore_index, reduction, 0.0), x.dtype)


def _class_samples(probabilities):
    def sample_inputs(device, dtype, requires_grad):
        def mk(shape, seed, **kw):
            return make_tensor(shape, dtype, -2, 2, seed=seed, requires_grad=requires_grad, **kw)
        w = make_tensor((4,), dtype, 0.5, 2, seed=50)
        yield SampleInput(mk((3, 4), 0), (index_tensor([0, 3, 1]),), name="mean")
        yield SampleInput(mk((3, 4), 1, **_T), (index_tensor([2, 1, 2]),), {"weight": w, "reduction": "sum"},
                          name="weight_sum")
        yield SampleInput(mk((4,), 2), (index_tensor(1),), {"reduction": "none"}, name="one_sample")
        yield SampleInput(mk((2, 4, 3), 3), (index_tensor([[0, 3, 1], [1, 1, 2]]),),
                          {"ignore_index": 1, "weight": w}, name="spatial_ignore_index")
        yield SampleInput(mk((2, 4, 2), 4), (index_tensor([[0, 2], [3, 3]]),), {"reduction": "none"},
                          name="spatial_none")
        if probabilities:
            yield SampleInput(mk((3, 4), 5), (index_tensor([0, 3, 3]),), {"label_smoothing": 0.2, "weight": w},
                              name="label_smoothing")
            yield SampleInput(mk((3, 4), 6), (index_tensor([0, -100, 3]),), {"label_smoothing": 0.1},
                              name="label_smoothing_ignored")
            probs = make_tensor((3, 4), dtype, values=np.random.default_rng(7).dirichlet(np.ones(4), 3))
            yield SampleInput(mk((3, 4), 8), (probs,), name="probabilities")
            probs2 = make_tensor((2, 4, 2), dtype, values=np.random.default_rng(9).dirichlet(np.ones(4), (2, 2))
                                 .transpose(0, 2, 1))
            yield SampleInput(mk((2, 4, 2), 10), (probs2,), {"label_smoothing": 0.3, "weight": w, "reduction": "sum"},
                              name="probabilities_smoothed")
    return sample_inputs


_CLASS_ERRORS = (
    lambda: _err(IndexError, "Target 5 is out of bounds.", _t((2, 3)), index_tensor([0, 5])),
    lambda: _err(ValueError, r"Expected input batch_size \(2\) to match target batch_size \(3\).", _t((2, 3)),
                 index_tensor([0, 1, 2])),
    lambda: _err(RuntimeError, "expected target dtype to be Long or Byte, but got Int", _t((2, 3)),
                 index_tensor([0, 1], tp.int32)),
    lambda: _err(RuntimeError, r"weight tensor should be defined either for all 3 classes or no classes but got "
                               r"weight tensor of shape: \[2\]", _t((2, 3)), index_tensor([0, 1]), weight=_t((2,))),
    lambda: _err(ValueError, "bad is not a valid value for reduction", _t((2, 3)), index_tensor([0, 1]),
                 reduction="bad"),
)
_nn("cross_entropy", _cross_entropy_ref, _class_samples(True),
    aten=("cross_entropy_loss", "log_softmax.int", "gather"), **_NN_TOL,
    error_inputs=_errors(
        *_CLASS_ERRORS,
        lambda: _err(RuntimeError, r"label_smoothing must be between 0.0 and 1.0. Got: 1.5", _t((2, 3)),
                     index_tensor([0, 1]), label_smoothing=1.5),
        lambda: _err(RuntimeError, "ignore_index is not supported for floating point target", _t((2, 3)),
                     _t((2, 3), low=0, high=1), ignore_index=1)))
_nn("nll_loss", _nll_ref, _class_samples(False), aten=("nll_loss", "gather"), **_NN_TOL, error_inputs=_errors(*_CLASS_ERRORS))


def _pointwise_loss_ref(fn, mean_by_weight=True):
    def ref(x, target, reduction="mean", weight=None, **kw):
        loss = fn(S.f64(x) - S.f64(target), **kw)
        if weight is not None:
            loss = loss * S.f64(weight)
            if reduction == "mean":
                r = loss.sum() / S.f64(weight).sum() if mean_by_weight else loss.mean()
                return S.cast(r, x.dtype)
        return S.cast(_reduced(loss, reduction), x.dtype)
    return ref


def _huber(d, delta=1.0):
    a = np.abs(d)
    return np.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))


def _pointwise_loss_samples(extra_kwargs=()):
    """Inputs and targets whose differences keep 0.25 or more from 0 (l1's kink) and from one another."""
    def sample_inputs(device, dtype, requires_grad):
        def pair(shape, seed, **kw):
            x = make_tensor(shape, dtype, -2, 2, seed=seed, requires_grad=requires_grad, **kw)
            n = int(np.prod(shape))
            gaps = (np.random.default_rng(seed).permutation(n) + 1.0) * np.where(np.arange(n) % 2, 0.3, -0.3)
            t = make_tensor(shape, dtype, values=x.detach().numpy().astype(np.float64) + gaps.reshape(shape),
                            seed=seed)
            return x, t
        x, t = pair((3, 4), 0)
        yield SampleInput(x, (t,), name="mean")
        x, t = pair((2, 3), 1, **_T)
        yield SampleInput(x, (t,), {"reduction": "sum"}, name="sum")
        x, t = pair((5,), 2)
        yield SampleInput(x, (t,), {"reduction": "none"}, name="none")
        x, t = pair((2, 3), 3)
        yield SampleInput(x, (t,), {"weight": make_tensor((2, 3), dtype, 0.5, 2, seed=4)}, name="weight_mean")
        for i, kw in enumerate(extra_kwargs):
            x, t = pair((2, 4), 10 + i)
            yield SampleInput(x, (t,), dict(kw), name="kwargs")
    return sample_inputs


def _loss_errors(*more):
    return _errors(
        lambda: _err(ValueError, "bad is not a valid value for reduction", _t((2, 3)), _t((2, 3)), reduction="bad"),
        lambda: _err(ValueError, "Weights and input must have the same size.", _t((2, 3)), _t((2, 3)),
                     weight=_t((2,))), *more)


for _name, _fn, _by_weight, _kws in (("mse_loss", np.square, True, ()), ("l1_loss", np.abs, True, ()),
                                     ("huber_loss", _huber, False, ({"delta": 0.5, "reduction": "sum"},
                                                                    {"delta": 2.0}))):
    _more = (lambda k=_name.replace("_loss", ""): _err(NotImplementedError, _not_impl(k, "Long"), _t((2, 3), tp.int64),
                                                       _t((2, 3), tp.int64)),) if _name != "l1_loss" else ()
    if _name == "huber_loss":
        _more += tuple(lambda d=d: _err(RuntimeError, r"huber_loss does not support non-positive values for delta\.",
                                        _t((2, 3)), _t((2, 3)), delta=d) for d in (0.0, -1.0, math.nan))
    _nn(_name, _pointwise_loss_ref(_fn, _by_weight), _pointwise_loss_samples(_kws), aten=("sub", "mean", "sum"),
        **_NN_TOL, error_inputs=_loss_errors(*_more))


def _bce_ref(x, target, weight=None, reduction="mean"):
    v, t = S.f64(x), S.f64(target)
    with np.errstate(divide="ignore"):
        loss = -(t * np.maximum(np.log(v), -100) + (1 - t) * np.maximum(np.log1p(-v), -100))
    if weight is not None:
        loss = loss * S.f64(weight)
    return S.cast(_reduced(loss, reduction), x.dtype)


def _bce_samples(device, dtype, requires_grad):
    def mk(shape, seed, low=0.05, high=0.95, **kw):
        return make_tensor(shape, dtype, low, high, seed=seed, requires_grad=requires_grad, **kw)
    yield SampleInput(mk((3, 4), 0), (make_tensor((3, 4), dtype, 0, 1, seed=1),), name="mean")
    yield SampleInput(mk((2, 3), 2, **_T), (make_tensor((2, 3), dtype, 0, 1, seed=3),), {"reduction": "sum"},
                      name="sum")
    yield SampleInput(mk((4,), 4), (make_tensor((4,), dtype, 0, 1, seed=5),),
                      {"weight": make_tensor((4,), dtype, 0.5, 2, seed=6), "reduction": "none"}, name="weight")
    if not requires_grad:  # the ends of [0, 1]: the logs clamp at -100
        yield SampleInput(make_tensor((4,), dtype, values=np.array([0.0, 1.0, 0.0, 1.0])),
                          (make_tensor((4,), dtype, values=np.array([0.0, 1.0, 1.0, 0.0])),), {"reduction": "none"},
                          name="ends")


def _bce_range_error(name, x, t):
    return lambda: _err(RuntimeError, f"all elements of {name} should be between 0 and 1",
                        make_tensor((len(x),), tp.float32, values=np.array(x)),
                        make_tensor((len(t),), tp.float32, values=np.array(t)))


# inputs and targets outside [0, 1] (NaN included) raise, naming the first element's culprit
_nn("binary_cross_entropy", _bce_ref, _bce_samples, aten=("binary_cross_entropy",), **_NN_TOL,
    xfails={"vmap": "the [0, 1] check reads the values (.item()), which a batched tensor does not allow (PyTorch's "
                    "vmap checks each example)"},
    error_inputs=_errors(
        _bce_range_error("target", [0.5, 0.5], [0.5, 2.0]), _bce_range_error("target", [0.5], [-0.5]),
        _bce_range_error("target", [0.5], [math.nan]), _bce_range_error("input", [math.nan], [0.5]),
        _bce_range_error("input", [0.5, 1.5], [0.5, 0.5]), _bce_range_error("target", [0.5, 1.5], [2.0, 0.5]),
        lambda: _err(RuntimeError, "Found dtype Double but expected Float", _t((2,), low=0, high=1),
                     _t((2,), tp.float64, low=0, high=1)),
        lambda: _err(RuntimeError, "Found dtype Long but expected Float", _t((2,), low=0, high=1),
                     _t((2,), tp.int64, low=0, high=1)),
        lambda: _err(NotImplementedError, _not_impl("binary_cross_entropy", "Long"), _t((2,), tp.int64, low=0, high=1),
                     _t((2,), tp.int64, low=0, high=1))))


def _kl_div_ref(x, target, reduction="mean", log_target=False):
    v, t = S.f64(x), S.f64(target)
    if log_target:
        loss = np.exp(t) * (t - v)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            loss = np.where(t == 0, 0.0, t * np.log(t)) - t * v  # xlogy(t, t): NaN for a negative target
    if reduction == "batchmean":
        return S.cast(loss.sum() / (v.shape[0] if v.ndim else 1), x.dtype)
    return S.cast(_reduced(loss, reduction), x.dtype)


def _kl_div_samples(device, dtype, requires_grad):
    def logp(shape, seed, **kw):
        return make_tensor(shape, dtype, -3, -0.1, seed=seed, requires_grad=requires_grad, **kw)
    yield SampleInput(logp((3, 4), 0), (make_tensor((3, 4), dtype, 0.05, 1, seed=1),), {"reduction": "batchmean"},
                      name="batchmean")
    yield SampleInput(logp((2, 3), 2, **_T), (make_tensor((2, 3), dtype, -2, 0, seed=3),),
                      {"reduction": "sum", "log_target": True}, name="log_target")
    if not requires_grad:  # zero targets count 0; a negative one makes the loss NaN (xlogy), as in PyTorch
        yield SampleInput(logp((4,), 4), (make_tensor((4,), dtype, values=np.array([0.0, 0.5, -2.0, 1.0])),),
                          {"reduction": "none"}, name="zero_and_negative_targets")


_nn("kl_div", _kl_div_ref, _kl_div_samples, aten=("kl_div",), **_NN_TOL,
    error_inputs=_errors(
        lambda: _err(RuntimeError, r"kl_div: Integral inputs not supported\.", _t((2, 3)), _t((2, 3), tp.int64),
                     reduction="sum"),
        lambda: _err(RuntimeError, r"kl_div: Integral inputs not supported\.", _t((2, 3), tp.int64), _t((2, 3)),
                     reduction="sum")))


def _bce_logits_ref(x, target, weight=None, reduction="mean", pos_weight=None):
    v, t = S.f64(x), S.f64(target)
    lw = 1.0 if pos_weight is None else 1 + (S.f64(pos_weight) - 1) * t
    loss = (1 - t) * v + lw * np.logaddexp(0.0, -v)
    if weight is not None:
        loss = loss * S.f64(weight)
    return S.cast(_reduced(loss, reduction), x.dtype)


def _bce_logits_samples(device, dtype, requires_grad):
    def mk(shape, seed, low=-3, high=3, **kw):
        return make_tensor(shape, dtype, low, high, seed=seed, requires_grad=requires_grad, **kw)
    yield SampleInput(mk((3, 4), 0), (make_tensor((3, 4), dtype, 0, 1, seed=1),), name="mean")
    yield SampleInput(mk((2, 3), 2, **_T), (make_tensor((2, 3), dtype, 0, 1, seed=3),),
                      {"pos_weight": make_tensor((3,), dtype, 0.5, 3, seed=4), "reduction": "sum"}, name="pos_weight")
    yield SampleInput(mk((4,), 5), (make_tensor((4,), dtype, 0, 1, seed=6),),
                      {"weight": make_tensor((4,), dtype, 0.5, 2, seed=7), "reduction": "none"}, name="weight")
    if not requires_grad:
        yield SampleInput(make_tensor((4,), dtype, values=np.array([-200.0, -30, 30, 200])),
                          (make_tensor((4,), dtype, values=np.array([1.0, 0, 1, 0])),), {"reduction": "none"},
                          name="large_logits")


_nn("binary_cross_entropy_with_logits", _bce_logits_ref, _bce_logits_samples, aten=("log_sigmoid_forward",),
    **_NN_TOL, error_inputs=_errors(
        lambda: _err(ValueError, r"Target size \((torch\.Size\(\[3, 5\]\)|\(3, 5\))\) must be the same as input "
                                 r"size \((torch\.Size\(\[2, 3, 5\]\)|\(2, 3, 5\))\)", _t((2, 3, 5)), _t((3, 5)))))


def _logsigmoid_ref(x):
    return np.minimum(x, 0.0) - np.log1p(np.exp(-np.abs(x)))  # 0 at +inf, -inf at -inf


# special values included: logsigmoid(+inf) is 0, not inf - inf
_nn("logsigmoid", _act_ref(_logsigmoid_ref), _act_samples(()), aten=("log_sigmoid_forward",), **_NN_TOL)


def _pad_ref(x, pad, mode="constant", value=None):
    """numpy's pad for the positive pads, slicing for the negative ones (crops): reflect and replicate pad the
    whole input first, constant and circular crop first (PyTorch's order)."""
    v = S.f64(x)
    nd = len(pad) // 2
    pairs = [(0, 0)] * (v.ndim - nd) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(nd))]
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]

    def cut(a):
        return a[tuple(slice(max(-lo, 0), a.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(pairs))]
    if mode == "constant":
        out = np.pad(cut(v), grow, constant_values=0.0 if value is None else value)
    elif mode == "circular":
        out = np.pad(cut(v), grow, mode="wrap")
    else:
        out = cut(np.pad(v, grow, mode="reflect" if mode == "reflect" else "edge"))
    return S.cast(out, x.dtype)


_PAD_CASES = (
    # name, shape, pad, mode (negative pads crop, in every mode)
    ("constant", (2, 3, 4), (1, 2), "constant"), ("constant_crop", (2, 3, 4), (-1, 2, 0, -2), "constant"),
    ("constant_value", (3, 4), (2, -1), "constant"), ("reflect", (2, 5), (2, 1), "reflect"),
    ("reflect_crop", (1, 2, 5), (-1, 3), "reflect"), ("reflect_2d_crop", (1, 2, 3, 4), (-1, 1, 2, -1), "reflect"),
    ("replicate_crop", (2, 5), (3, -2), "replicate"), ("replicate_2d_crop", (1, 1, 3, 4), (-2, 2, 1, -1), "replicate"),
    ("circular_crop", (1, 2, 5), (-1, 2), "circular"), ("circular_2d_crop", (1, 1, 3, 4), (2, -1, -1, 1), "circular"),
)


def _pad_samples(device, dtype, requires_grad):
    for i, (name, shape, pad, mode) in enumerate(_PAD_CASES):
        kw = {"value": 2.5} if name == "constant_value" else {}
        yield SampleInput(make_tensor(shape, dtype, seed=i, requires_grad=requires_grad), (pad, mode), kw, name=name)


_nn("pad", _pad_ref, _pad_samples, aten=("constant_pad_nd", "index_select", "cat"),
    error_inputs=_errors(
        lambda: _err(RuntimeError, r"input \(W: 5\) is too small\. Calculated output W: 0", _t((1, 5)), (-5, 0),
                     "reflect"),
        lambda: _err(RuntimeError, r"narrow\(\): length must be non-negative\.", _t((1, 5)), (-6, 2)),
        lambda: _err(RuntimeError, "Padding value causes wrapping around more than once.", _t((1, 5)), (6, -1),
                     "circular"),
        lambda: _err(RuntimeError, "Negative padding value is resulting in an empty dimension", _t((1, 5)), (-3, -3),
                     "circular")))


def _linear_nn_samples(device, dtype, requires_grad):
    for s in _linear_samples(device, dtype, requires_grad):
        if s.name != "large":
            yield s


_nn("linear", _linear_ref, _linear_nn_samples, aten=("linear",),
    error_inputs=_errors(lambda: _err(RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 5x4\)",
                                      _t((2, 3)), _t((4, 5)))))


# -- attention
def _sdpa_ref(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    qv, kv, vv = S.f64(q), S.f64(k), S.f64(v)
    if enable_gqa and qv.ndim >= 3:
        kv = np.repeat(kv, qv.shape[-3] // kv.shape[-3], axis=-3)
        vv = np.repeat(vv, qv.shape[-3] // vv.shape[-3], axis=-3)
    L, S_, E = qv.shape[-2], kv.shape[-2], qv.shape[-1]
    scores = qv @ np.swapaxes(kv, -1, -2) * (1 / math.sqrt(E) if scale is None else scale)
    if is_causal:
        attn_mask = np.tril(np.ones((L, S_), dtype=bool))
    if attn_mask is not None:
        m = np.asarray(attn_mask)
        scores = np.where(m, scores, -np.inf) if m.dtype == bool else scores + S.f64(m)
    full = np.all(scores == -np.inf, axis=-1, keepdims=True)
    scores = np.where(full, 0.0, scores)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    w = np.where(full, 0.0, e / e.sum(-1, keepdims=True))
    return S.cast(w @ vv, q.dtype)


def _sdpa_samples(device, dtype, requires_grad):
    def mk(shape, seed):
        return make_tensor(shape, dtype, -1, 1, seed=seed, requires_grad=requires_grad)

    def qkv(q, k, v, seed):
        return mk(q, seed), (mk(k, seed + 1), mk(v, seed + 2))
    # small enough for the conformance suite's finite differences on every backend
    q, a = qkv((1, 2), (2, 2), (2, 1), 30)
    yield SampleInput(q, a, {"is_causal": True}, name="tiny")
    q, a = qkv((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3), 0)
    yield SampleInput(q, a, name="4d")
    q, a = qkv((3, 4), (5, 4), (5, 2), 3)
    yield SampleInput(q, a, name="2d")
    mask = bool_tensor((3, 5), seed=6)
    mask[:, 0] = True  # every row keeps one element
    q, a = qkv((2, 3, 4), (2, 5, 4), (2, 5, 3), 7)
    yield SampleInput(q, a + (mask,), name="bool_mask")
    q, a = qkv((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3), 10)
    yield SampleInput(q, a, {"attn_mask": make_tensor((2, 1, 5), dtype, -1, 1, seed=13)}, name="float_mask")
    q, a = qkv((2, 4, 4), (2, 3, 4), (2, 3, 2), 14)
    yield SampleInput(q, a, {"is_causal": True}, name="causal")
    q, a = qkv((2, 3, 4), (2, 3, 4), (2, 3, 4), 17)
    yield SampleInput(q, a, {"is_causal": True, "scale": 0.3}, name="causal_scale")
    q, a = qkv((1, 4, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3), 20)
    yield SampleInput(q, a, {"enable_gqa": True}, name="gqa")
    if not requires_grad:
        empty = bool_tensor((3, 5), seed=23)
        empty[:, 0] = True
        empty[1] = False  # row 1 takes no part: PyTorch gives zeros
        q, a = qkv((2, 3, 4), (2, 5, 4), (2, 5, 3), 24)
        yield SampleInput(q, a + (empty,), name="empty_row")


_nn("scaled_dot_product_attention", _sdpa_ref, _sdpa_samples, aten=("scaled_dot_product_attention",), **_NN_TOL,
    error_inputs=_errors(
        lambda: _err(RuntimeError, "Explicit attn_mask should not be set when is_causal=True", _t((2, 3, 4)),
                     _t((2, 5, 4)), _t((2, 5, 3)), bool_tensor((3, 5)), is_causal=True),
        lambda: _err(RuntimeError, r"Expected query, key, and value to have the same dtype, but got query.dtype: "
                                   r"float key.dtype: double and value.dtype: float instead.", _t((2, 3, 4)),
                     _t((2, 5, 4), tp.float64), _t((2, 5, 3))),
        lambda: _err(RuntimeError, r"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                                   r"attn_mask.dtype: long int and  query.dtype: float instead.", _t((2, 3, 4)),
                     _t((2, 5, 4)), _t((2, 5, 3)), index_tensor([[0] * 5] * 3)),
        lambda: _err(RuntimeError, "Expected query, key, and value to all be  at least 2 dimensional", _t((4,)),
                     _t((4,)), _t((4,))),
        lambda: _err(RuntimeError, "dropout probability has to be between 0 and 1, but got 1.5", _t((2, 3, 4)),
                     _t((2, 5, 4)), _t((2, 5, 3)), dropout_p=1.5),
        lambda: _err(RuntimeError, "Number of heads in key and value must divide the number of heads in",
                     _t((1, 4, 3, 4)), _t((1, 3, 5, 4)), _t((1, 3, 5, 3)), enable_gqa=True)))


# -- in-place ops whose arguments alias each other -----------------------------------------------------
# The aliasing is made on the device, from one tensor, so it survives moving the sample. A write whose
# input is the very same memory in the same layout is allowed (x.add_(x) computes x * 2); a partial
# overlap is PyTorch's "unsupported operation" RuntimeError, raised by the core for every backend.
_OVERLAP = (r"unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
            r"single memory location\. Please clone\(\) the tensor before performing the operation\.")


def _aliased(method_name, overlapped):
    """``y = input.clone(); y.<method>(y)``; with ``overlap=True`` the argument is ``overlapped(y)``."""
    fn = getattr(Tensor, method_name)

    def op(input, overlap=False):
        y = input.clone()
        return fn(y, overlapped(y) if overlap else y)
    op.__name__ = op.__qualname__ = f"{method_name}_aliased"
    op.__doc__ = f"``y.{method_name}(y)`` on a clone ``y`` of the input (the argument aliases the written tensor)."
    return op


def _copy_shifted(input, overlap=False):
    """``v[1:].copy_(v[:-1])`` over a flat view of a clone (overlapping) or ``v.copy_(v)`` (the same memory)."""
    v = input.clone().view(-1)
    return v[1:].copy_(v[:-1]) if overlap else v.copy_(v)


def _square_samples(device, dtype, requires_grad):
    for s in S.unary_layouts(dtype, requires_grad, None, None):
        if s.input.dim() == 2 and s.input.shape[0] == s.input.shape[1]:
            yield s
    yield SampleInput(_t((3, 3), dtype, seed=5), name="square")


def _overlap_error(shape):
    return lambda: _err(RuntimeError, _OVERLAP, _t(shape), overlap=True)


_add("add_.aliased", _aliased("add_", lambda y: y), lambda a: _add_ref(a, a), ALL, _unary_samples(),
     supports_autograd=False, aten=("add_.Tensor",))
_add("mul_.aliased", _aliased("mul_", lambda y: y[0]),
     lambda a: _promote_ref(np.multiply, lambda p, q: p * q if p.dtype != np.bool_ else p & q)(a, a), ALL,
     _unary_samples(), supports_autograd=False, aten=("mul_.Tensor",), error_inputs=_errors(_overlap_error((3, 3))))
_add("sub_.aliased", _aliased("sub_", lambda y: y.t()), lambda a: _sub_ref(a, a), NO_BOOL, _square_samples,
     supports_autograd=False, aten=("sub_.Tensor",), error_inputs=_errors(_overlap_error((3, 3))))
_add("copy_.aliased", _copy_shifted, lambda a: np.asarray(a).reshape(-1), ALL, _unary_samples(),
     supports_autograd=False, aten=("copy_",), error_inputs=_errors(_overlap_error((2, 3))))


# -- in-place ops on a tensor whose elements share memory -------------------------------------------------
# ``expanded=True`` writes through ``y[:1].expand(y.shape)`` (every row is the first row's memory): PyTorch's
# "more than one element ... refers to a single memory location" RuntimeError, raised by the core for every
# backend, except for ``fill_``/``zero_`` with a number, which write one value everywhere.
_INTERNAL = (r"unsupported operation: more than one element of the written-to tensor refers to a single memory "
             r"location\. Please clone\(\) the tensor before performing the operation\.")


def _on_expanded(method_name, call):
    """``call(y)`` on a clone ``y`` of the input, or with ``expanded=True`` on ``y[:1].expand(y.shape)``."""
    def op(input, expanded=False):
        y = input.clone()
        return call(y[:1].expand(y.shape) if expanded else y)
    op.__name__ = op.__qualname__ = f"{method_name}_expanded"
    op.__doc__ = f"``Tensor.{method_name}`` on a clone of the input, or on an expanded view of its first row."
    return op


def _expanded_samples(allowed):
    def sample_inputs(device, dtype, requires_grad):
        yield SampleInput(_t((3, 4), dtype, seed=1), name="dense")
        yield SampleInput(_t((4, 3), dtype, seed=2, transposed=True), name="transposed")
        if allowed:
            yield SampleInput(_t((3, 4), dtype, seed=3), kwargs={"expanded": True}, name="expanded")
    return sample_inputs


def _expanded_error():
    return lambda: _err(RuntimeError, _INTERNAL, _t((3, 4)), expanded=True)


def _zero_index_on(y, dim):
    """Zeros of ``y``'s shape with ``dim`` cut to 1, as an int64 index on ``y``'s device."""
    return tp.zeros(tuple(1 if d == dim else n for d, n in enumerate(y.shape)), dtype=tp.int64, device=y.device)


def _scatter_ref(a):
    out = np.array(a, copy=True)
    out[:, 0] = 1
    return out


for _name, _call, _ref, _dtypes, _aten in (
        ("add_", lambda y: y.add_(1), lambda a: a + np.array(1, dtype=a.dtype), NO_BOOL, ("add_.Scalar",)),
        ("copy_", lambda y: y.copy_(tp.ones_like(y)), np.ones_like, ALL, ("copy_",)),
        ("relu_", lambda y: y.relu_(), lambda a: np.maximum(a, np.array(0, dtype=a.dtype)), FLOATING, ("relu_",)),
        ("scatter_", lambda y: y.scatter_(1, _zero_index_on(y, 1), 1), _scatter_ref, NO_BOOL, ("scatter_.value",))):
    _add(f"{_name}.expanded", _on_expanded(_name, _call), _ref, _dtypes, _expanded_samples(False),
         supports_autograd=False, aten=_aten, error_inputs=_errors(_expanded_error()))
_random("uniform_.expanded", _on_expanded("uniform_", lambda y: y.uniform_()), FLOATING, _expanded_samples(False),
        aten=("uniform_",), error_inputs=_errors(_expanded_error()))


def _fill_expanded(input, expanded=False, value_tensor=False):
    """``zero_()`` then ``fill_(2)`` (a 0-dim tensor value with ``value_tensor=True``) on a clone of the
    input, or on an expanded view of its first row."""
    y = input.clone()
    y = y[:1].expand(y.shape) if expanded else y
    y.zero_()
    return y.fill_(tp.tensor(2, dtype=y.dtype, device=y.device) if value_tensor else 2)


_add("fill_.expanded", _fill_expanded, lambda a, expanded=False: np.full_like(a, 2), ALL, _expanded_samples(True),
     supports_autograd=False, aten=("fill_.Scalar",),
     error_inputs=_errors(lambda: _err(RuntimeError, _INTERNAL, _t((3, 4)), expanded=True, value_tensor=True)))
def _entries_of(name):
    """Import the op database module ``name``, which appends its entries to OP_DB. One imported before
    this module (a test importing it first), whose entries the emptying of OP_DB above dropped, runs again."""
    full = f"{__package__}.{name}"
    if full in _sys.modules:
        _importlib.reload(_sys.modules[full])
    else:
        _importlib.import_module(full)


from .op_db_linalg import ALIASES as _LINALG_ALIASES; ALIASES.update(_LINALG_ALIASES)  # noqa: E402,E702
_entries_of("op_db_nn_conv")  # (the convolution family: conv3d, transposed, fold, interpolate)

from . import op_db_math as _op_db_math  # noqa: E402  (math, special functions and statistics)
_op_db_math.register(_sys.modules[__name__])
_entries_of("op_db_fft")  # complex numbers and tensorplug.fft
_entries_of("op_db_nn_misc")  # (the nn misc entries)
_entries_of("op_db_linalg_factor")  # (LU, Householder, eig, LDL, linalg composites)
from .op_db_tensorops import ENTRIES as _TENSOROPS  # noqa: E402  (shape, indexing and set-like ops)
OP_DB.extend(_TENSOROPS)
_entries_of("op_db_special_bessel")  # (random fills, Bessel, Airy, incomplete gamma)
_entries_of("op_db_special_more")  # (polynomials, small pointwise ops, windows, histograms)
_entries_of("op_db_shape_more")  # (tensor and shape ops of ops/shape_more.py, T/H/mT/mH)
_entries_of("op_db_nn_more")  # (channel_shuffle, max_unpool, 3-d adaptive pools, native norms)
