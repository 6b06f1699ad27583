"""How the pointwise operators are defined: wrapped numbers, shared checks, ``defbinary``/``defunary``,
the public-function and Python-operator wrappers, and the helpers of their backward formulas.

The operators themselves live by concept: :mod:`.comparison` (comparisons,
logical and bitwise ops, ``where``, ``clamp``, ``isclose``), :mod:`.arithmetic`
(``add`` ... ``lerp``, ``maximum``/``minimum``) and :mod:`.math_ops` (exponentials,
logarithms, powers, trigonometry, rounding). Each defines its ops' schemas, checks,
public functions, docstrings and backward formulas in one place.

Every check (broadcasting, devices, dtypes a kernel does not support,
in-place casts) runs in the op's ``check``, once per call, so all backends
raise the same errors. Result dtypes follow PyTorch (:mod:`.promotion`):
integer and bool inputs of floating ops (``exp``, true ``div``, ``atan2``) give
the default float dtype, comparisons and logical ops give bool, the rest
promote. Kernels take their schema's arguments positionally and raise only the
errors data can reveal: integer division or remainder by zero raises
``RuntimeError("ZeroDivisionError")``.

A ``.Scalar`` overload is CompositeImplicitAutograd: the scalar becomes a zero-dim
"wrapped number" tensor of the result dtype and the ``.Tensor`` kernel runs.

Backward formulas skip the gradients of inputs nobody needs
(``needs_input_grad``; wrapped Python numbers never need one). An in-place form
shares its op's formula (:func:`with_inplace`): the ``self`` it reads is the
kernel's copy of the old value, and its result keeps self's shape. Ops with
bool or integer results (comparisons, logical and bitwise ops) have none: their
results never carry history.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as _dt, _state
from ..autograd.formulas import derivative
from ..backend import backend_of as _backend_of
from ..dispatch.keys import REGISTRY
from ..tensor import Tensor, make_tensor
from ._lib import POINTWISE, defop, public, attach
from .factories import as_tensor, zeros_like
from .memory import same_device
from .promotion import broadcast_shapes, result_type, check_can_cast, _pt_name

_FLOATING = _dt.FLOATING
_BOOL = _dt.BOOL
_INTEGRAL = _dt.INTEGRAL
_COMPLEX = _dt.COMPLEX


# -- wrapped numbers --------------------------------------------------------------------
_SCALARS: dict = {}  # (type, value, dtype, device) -> wrapped-number tensor


def scalar_tensor(value, dtype, device):
    """A zero-dim "wrapped number" tensor holding ``value`` in ``dtype``.

    Integers out of the dtype's range wrap around, as in PyTorch
    (``int8_tensor + 300`` adds 44); beyond 64 bits they raise OverflowError.
    Wrapped numbers are read-only inputs of the op they were made for, so one
    tensor per (value, dtype, device) is reused: ``x * 0.5`` in a loop, and an
    optimizer's ``mul_(beta)``, create no tensor per call.
    """
    key = (value.__class__, value, dtype, device)
    try:
        return _SCALARS[key]
    except (KeyError, TypeError):
        pass
    t = _new_scalar_tensor(value, dtype, device)
    if len(_SCALARS) >= 1024:
        _SCALARS.clear()  # bounded: values that keep changing must not grow the cache
    _SCALARS[key] = t
    return t


def _new_scalar_tensor(value, dtype, device):
    if value.__class__ is complex and dtype.category != _COMPLEX:
        raise RuntimeError(f"value cannot be converted to type {_dt.c_type_name(dtype)} without overflow")
    if dtype.category < _FLOATING and value.__class__ is float:
        value = int(value)
    if value.__class__ is int and not -2 ** 63 <= value < 2 ** 63:
        if not -2 ** 63 <= value < 2 ** 64:  # PyTorch reads Python ints as 64-bit words
            raise OverflowError("int too big to convert")
        if dtype.category == _INTEGRAL:
            value -= 2 ** 64
    if dtype.category == _INTEGRAL and value.__class__ is int:
        arr = np.array(value, dtype=np.int64)
        if dtype is not _dt.int64:
            arr = arr.astype(dtype.np)
    else:
        arr = np.array(value, dtype=dtype.np)
    b = _backend_of(device.type)
    t = make_tensor(b.from_numpy(arr, device), dtype, device, b.ks)
    t._wrapped_number = True
    return t


def python_scalar(value):
    """``value`` as a Python bool, int, float or complex (numpy scalars convert); TypeError otherwise."""
    c = value.__class__
    if c is int or c is float or c is bool or c is complex:
        return value
    if type(value).__name__ == "bool_":
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, numbers.Complex):
        return complex(value)
    raise TypeError(f"expected a Tensor or a Python number, got {type(value).__name__}")


def scalar_result_dtype(dtype, value):
    """Result dtype of a tensor of ``dtype`` combined with the Python number ``value``."""
    c = value.__class__
    if c is float:
        return dtype if dtype.category >= _FLOATING else _dt.get_default_dtype()
    if c is int:
        return dtype if dtype.category != _BOOL else _dt.int64
    if c is complex:
        if dtype.category == _COMPLEX:
            return dtype
        return dtype.to_complex() if dtype.category == _FLOATING else _dt.get_default_complex_dtype()
    return dtype


def float_dtype(dtype):
    """The result dtype of a floating op on ``dtype`` (integers and bool give the default float; complex stays)."""
    return dtype if dtype.category >= _FLOATING else _dt.get_default_dtype()


def wrap_for(self, value):
    """The Python number ``value`` as a wrapped number of the dtype it gives combined with ``self``."""
    value = python_scalar(value)
    return scalar_tensor(value, scalar_result_dtype(self._dtype, value), self._device)


_ZEROS: dict = {}      # (dtype, device) -> 0-dim zero
_LAST_ZERO: dict = {}  # dtype -> the zero last used, checked against the device: one dict lookup


def zero_of(self):
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


# -- checks ---------------------------------------------------------------------------------
def not_implemented(opname, dtype):
    """PyTorch's error for a dtype an op does not support (the same on every backend)."""
    return NotImplementedError(f'"{opname}" not implemented for \'{_pt_name(dtype)}\'')


# zero-dim operands (Python scalars among them) broadcast with anything: no need to ask
def check_binary(a, b, *rest):
    if a._shape != b._shape and a._shape and b._shape:
        broadcast_shapes(a._shape, b._shape)
    if a._device is not b._device:
        same_device("binary op", a, b)


def check_inplace_shape(a, *others):
    """The operands (None skipped) broadcast to ``a``'s shape: an in-place result cannot grow."""
    shapes = [t._shape for t in others if t is not None and t._shape != a._shape]
    if shapes:
        out = broadcast_shapes(a._shape, *shapes)
        if out != a._shape:
            raise RuntimeError(f"output with shape {list(a._shape)} doesn't match the broadcast shape {list(out)}")


def check_inplace_binary(a, b, *rest):
    check_binary(a, b)
    if b._shape != a._shape and b._shape:
        check_inplace_shape(a, b)
    if a._dtype is not b._dtype:
        check_can_cast(result_type(a, b), a._dtype)


def check_inplace_float_binary(a, b):
    """In-place form of a floating binary op: the float result must cast to ``a``'s dtype."""
    check_binary(a, b)
    if b._shape != a._shape and b._shape:
        check_inplace_shape(a, b)
    check_can_cast(float_dtype(result_type(a, b)), a._dtype)


def no_bool(opname, check):
    """``check``, then PyTorch's error when the operands promote to bool."""
    def checked(a, b, *rest):
        check(a, b, *rest)
        d = a._dtype if a._dtype is b._dtype else result_type(a, b)
        if d is _dt.bool:
            raise not_implemented(opname, d)
    return checked


def integral_only(opname, check):
    """``check``, then PyTorch's error when the operands promote to a floating dtype."""
    def checked(a, b, *rest):
        check(a, b, *rest)
        d = a._dtype if a._dtype is b._dtype else result_type(a, b)
        if d.category >= _FLOATING:
            raise not_implemented(opname, d)
    return checked


def refuse_complex(error, check=None):
    """``check`` (when given), then raise ``error(dtype)`` if a tensor argument has a complex ``dtype``:
    PyTorch's error for ops complex numbers have no meaning for (ordering, rounding, clamping).
    ``error`` is an op name (PyTorch's ``"<name>" not implemented for 'ComplexFloat'``) or a callable."""
    make = (lambda d: not_implemented(error, d)) if isinstance(error, str) else error

    def checked(*args):
        if check is not None:
            check(*args)
        for a in args:
            d = getattr(a, "_dtype", None)
            if d is not None and d.category == _COMPLEX:
                raise make(d)
    return checked


def check_float_inplace(self):
    """In-place floating unary op: an integer or bool self cannot hold the float result."""
    if self._dtype.category < _FLOATING:
        check_can_cast(_dt.get_default_dtype(), self._dtype)


def unsupported(opname, *categories):
    """Check raising PyTorch's error for self dtypes of the given categories (floating includes complex)."""
    if _FLOATING in categories:
        categories += (_COMPLEX,)

    def check(self, *rest):
        if self._dtype.category in categories:
            raise not_implemented(opname, self._dtype)
    return check


# -- definitions --------------------------------------------------------------------------
def _same(dtype):
    return dtype


def scalar_overload(tensor_entry, compute=_same):
    """CompositeImplicitAutograd kernel for ``op.Scalar``: wrap the scalar and call ``op.Tensor``.

    The scalar is wrapped in ``compute(result dtype)``: the promoted dtype, or for true division
    the float dtype it computes in (so ``uint8_tensor / -3`` divides by -3.0, not by a wrapped 253).
    """
    op = tensor_entry._op

    def impl(self, other, *rest):
        d = compute(scalar_result_dtype(self._dtype, other))
        return op.positional(self, scalar_tensor(other, d, self._device), *rest)
    return impl


def inplace_scalar_overload(tensor_entry, compute=_same):
    """Kernel for ``op_.Scalar``: the scalar is wrapped in self's dtype once the result may be cast there."""
    op = tensor_entry._op

    def impl(self, other, *rest):
        check_can_cast(compute(scalar_result_dtype(self._dtype, other)), self._dtype)
        return op.positional(self, scalar_tensor(other, self._dtype, self._device), *rest)
    return impl


def defbinary(name, check, inplace_check=None, extra="", tensor="Tensor", scalar="Scalar", compute=_same,
              scalar_check=None):
    """Define ``name.Tensor`` and ``name.Scalar`` and, given ``inplace_check``, ``name_.Tensor``
    and ``name_.Scalar``, all tagged pointwise; ``extra`` appends arguments to every schema,
    ``compute`` maps the promoted dtype to the one the op computes in and ``scalar_check``
    checks the ``.Scalar`` overloads. Returns the entries."""
    t = defop(f"{name}.{tensor}(Tensor self, Tensor other{extra}) -> Tensor", check=check, tags=POINTWISE)
    s = defop(f"{name}.{scalar}(Tensor self, Scalar other{extra}) -> Tensor", check=scalar_check,
              composite=scalar_overload(t, compute), tags=POINTWISE)
    if inplace_check is None:
        return t, s
    ti = defop(f"{name}_.{tensor}(Tensor(a!) self, Tensor other{extra}) -> Tensor(a!)", check=inplace_check,
               tags=POINTWISE)
    si = defop(f"{name}_.{scalar}(Tensor(a!) self, Scalar other{extra}) -> Tensor(a!)", check=scalar_check,
               composite=inplace_scalar_overload(ti, compute), tags=POINTWISE)
    return t, s, ti, si


def defunary(name, check=None, inplace_check=None, inplace_tags=POINTWISE):
    """Define ``name(Tensor self)`` and its in-place form ``name_``, tagged pointwise (the in-place form
    with ``inplace_tags``); returns both entries."""
    f = defop(f"{name}(Tensor self) -> Tensor", check=check, tags=POINTWISE)
    f_ = defop(f"{name}_(Tensor(a!) self) -> Tensor(a!)", check=inplace_check or check, tags=inplace_tags)
    return f, f_


# -- public functions and methods -------------------------------------------------------
def is_tensor(x):
    return x.__class__ is Tensor or isinstance(x, Tensor)


def export(names, fn, doc=None):
    """Make ``fn`` the public function and the Tensor method of each of ``names``."""
    if doc is not None:
        fn.__doc__ = doc
    for n in names.split():
        public(n, fn)
        attach(n, fn)
    return fn


def documented(entry, doc):
    """Give an entry function ``doc`` followed by its schema as its docstring."""
    entry.__doc__ = f"{doc}\n\nSchema: {entry._op.schema}"
    return entry


NUMBER_PAIR_OPS = frozenset(("add", "sub", "mul", "floor_divide"))
"""Ops that take two Python numbers (``div`` too, in its own function), as PyTorch's do."""

TENSOR_SELF_OPS = frozenset(("eq", "ne", "lt", "le", "gt", "ge", "fmod", "rsub", "copysign"))
"""Ops whose function form has no Python-number ``input`` overload: ``torch.eq(2, t)`` raises TypeError."""


def _tensor_self_error(name, input, other):
    alpha = name == "rsub"
    tail = ("*, Number alpha = 1", "Number alpha = 1") if alpha else ("*, Tensor out = None",) * 2
    return TypeError(f"{name}() received an invalid combination of arguments - got ({type(input).__name__}, "
                     f"{type(other).__name__}), but expected one of:\n * (Tensor input, Tensor other, {tail[0]})\n"
                     f" * (Tensor input, Number other, {tail[1]})\n")


def wrapped_pair(a, b):
    """Two Python numbers (``tensorplug.add(2.0, 3.0)``) as wrapped numbers of their result dtype on the
    default device, as PyTorch wraps them: the op then gives a 0-dim tensor of that dtype."""
    a, b = python_scalar(a), python_scalar(b)
    d = result_type(a, b)
    dev = _state.default_device
    return scalar_tensor(a, d, dev), scalar_tensor(b, d, dev)


def tensor_or_scalar(name, t_entry, s_entry, doc):
    """``name(input, other, ...)`` where ``other`` is a Tensor or a Python number (and for
    :data:`NUMBER_PAIR_OPS`, ``input`` and ``other`` both Python numbers)."""
    pairs = name in NUMBER_PAIR_OPS
    tensor_self = name in TENSOR_SELF_OPS

    def fn(input, other, *args, **kwargs):
        if other.__class__ is Tensor or isinstance(other, Tensor):
            if not isinstance(input, Tensor) and isinstance(input, (int, float, bool)):
                if tensor_self:
                    raise _tensor_self_error(name, input, other)
                # a Python number first (tensorplug.sub(3, t)): a wrapped number, as in PyTorch
                input = scalar_tensor(input, result_type(input, other), other._device)
            return t_entry(input, other, *args, **kwargs)
        if input.__class__ is not Tensor and pairs and not isinstance(input, Tensor) \
                and isinstance(input, numbers.Number):
            return t_entry(*wrapped_pair(input, other), *args, **kwargs)
        return s_entry(input, other, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def export_binary(table):
    """Export the ops of ``table``, ``{op: (Tensor entry, Scalar entry, in-place Tensor entry, in-place
    Scalar entry, public names, doc)}``, as functions and methods taking a Tensor or a Python number."""
    for name, (t, s, ti, si, names, doc) in table.items():
        export(names, tensor_or_scalar(name, t, s, doc + " ``other`` may be a Python number."))
        if ti is not None:
            fi = tensor_or_scalar(name + "_", ti, si, f"In-place {name}: the result is cast to self's dtype.")
            for n in names.split():
                attach(n + "_", fi)


_FLOAT_NOTE = " Integer and bool inputs give the default float dtype."


def export_unary(table, entries, float_ops=()):
    """Export the unary ops of ``table``, ``{op: (public names, doc)}``, and their in-place methods;
    ``entries`` maps names to entry functions (a module's globals), ``float_ops`` are the floating ones."""
    for name, (names, doc) in table.items():
        f, f_ = entries[name], entries[name + "_"]
        export(names, documented(f, doc + (_FLOAT_NOTE if name in float_ops else "")))
        documented(f_, f"In-place {name}." + (" An integer self raises: the float result can't be cast to it."
                                              if name in float_ops else ""))
        for n in names.split():
            attach(n + "_", f_)


# -- Python operators -------------------------------------------------------------------------
def _operator(t_entry, s_entry):
    """``x OP y`` for a Tensor, Python number or numpy array ``y``; anything else is left to Python."""
    def op(self, other):
        c = other.__class__
        if c is Tensor:
            return t_entry(self, other)
        if c is float or c is int or c is complex:
            return s_entry(self, other)
        if isinstance(other, Tensor):
            return t_entry(self, other)
        if isinstance(other, numbers.Number):
            return s_entry(self, other)
        if isinstance(other, np.ndarray):
            return t_entry(self, as_tensor(other))
        return NotImplemented
    return op


def reflected(t_entry, compute=_same):
    """``number OP x``: the number becomes a wrapped zero-dim tensor on the left. Called directly
    (``x.__rsub__(y)``) with a tensor ``y``, it computes ``y OP x`` as PyTorch does."""
    def op(self, other):
        if isinstance(other, numbers.Number):
            other = python_scalar(other)
            d = compute(scalar_result_dtype(self._dtype, other))
            return t_entry(scalar_tensor(other, d, self._device), self)
        if isinstance(other, Tensor):
            return t_entry(other, self)
        return NotImplemented
    return op


def attach_operators(table):
    """Attach the Python operators of ``table``, ``{operator: (Tensor entry, Scalar entry, in-place
    Tensor entry, in-place Scalar entry, reflected operator)}``: ``__add__``, ``__iadd__``, ``__radd__``."""
    for name, (t, s, ti, si, r) in table.items():
        op = _operator(t, s)
        attach(f"__{name}__", op)
        if ti is not None:
            attach(f"__i{name}__", _operator(ti, si))
            # commutative operators reflect onto themselves: 2 + x is x + 2
            attach(f"__r{name}__", op if r is None else r)


# numpy scalars and arrays on the left defer to the Tensor's reflected operators
attach("__array_priority__", 1000)


# -- backward formulas ----------------------------------------------------------------
def with_inplace(name, inplace=None, uses=None):
    """Register the decorated formula for ``name`` and its in-place form (``exp_``, ``mul_.Tensor``)."""
    if inplace is None:
        base, _, overload = name.partition(".")
        inplace = f"{base}_.{overload}" if overload else base + "_"

    def register(formula):
        derivative(name, uses=uses)(formula)
        derivative(inplace, uses=uses)(formula)
        return formula
    return register


def zero(like):
    """A 0-dim zero of ``like``'s dtype and device, for ``where`` in formulas."""
    return scalar_tensor(0, like._dtype, like._device)


def zero_grad(grad):
    """The formula of a piecewise-constant op: zeros, not "no gradient", as PyTorch gives."""
    return zeros_like(grad)
