"""Elementwise operators on the CPU backend, checked against references computed in float64
(numpy under errstate, ``math``) or exactly with Python integers (then wrapped to the dtype's
width, as PyTorch's integer arithmetic wraps).

Tables: unary ops x dtypes, binary ops x dtype pairs (every element of one value list against
every element of the other, by broadcasting), promotion cases, errors, in-place variants and
Python operators.
"""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp
from tensorplug.ops import math_ops as E

ALL = [tp.bool, tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32, tp.float64]
FLOATS = [tp.float16, tp.bfloat16, tp.float32, tp.float64]
INTS = [tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64]
TOL = {tp.float16: (2e-3, 1e-3), tp.bfloat16: (1.6e-2, 1e-2), tp.float32: (4e-6, 1e-6),
       tp.float64: (1e-12, 1e-13)}
VALUES = {
    "bool": [False, True],
    "uint8": [0, 1, 2, 3, 7, 100, 200, 255],
    "signed": [-128, -100, -7, -3, -2, -1, 0, 1, 2, 3, 7, 100, 127],
    "float": [-7.5, -3.0, -2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.5, 3.0, 7.0, 100.0],
}
SPECIAL = [math.inf, -math.inf, math.nan]


def values(d, special=False):
    if d is tp.bool:
        return VALUES["bool"]
    if d is tp.uint8:
        return VALUES["uint8"]
    if d.is_floating_point:
        return VALUES["float"] + (SPECIAL if special else [])
    return VALUES["signed"]


def make(vals, d, shape=None):
    """A tensor of dtype ``d`` holding ``vals`` (floats rounded to ``d``)."""
    kind = np.float64 if d.is_floating_point else (np.bool_ if d is tp.bool else np.int64)
    a = np.array(vals, dtype=kind)
    if shape is not None:
        a = a.reshape(shape)
    return tp.from_numpy(a).to(d)


def as64(t):
    """Values of ``t`` as float64 (or exact int64/bool) numpy array."""
    a = t.numpy()
    if t.dtype.is_floating_point:
        return a.astype(np.float64)
    return a.astype(np.bool_ if t.dtype is tp.bool else np.int64)


def wrap_int(v, d):
    """Python int ``v`` wrapped into the range of integer dtype ``d``, as two's complement does."""
    if d is tp.bool:
        return bool(v)
    bits = 8 * d.itemsize
    if d is tp.uint8:
        return v % 256
    v %= 1 << bits
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def check_close(result, expected64, d):
    """``result`` (dtype ``d``) against float64 or exact reference values."""
    assert result.dtype is d, (result.dtype, d)
    got = as64(result)
    expected64 = np.asarray(expected64)
    assert got.shape == expected64.shape
    if d.is_floating_point:
        rtol, atol = TOL[d]
        # the reference is rounded to d first: overflow to inf must match
        with np.errstate(over="ignore"):
            expected = np.asarray(expected64, dtype=np.float64).astype(d.np).astype(np.float64)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected64.astype(got.dtype))


def ref64(fn, *arrays):
    with np.errstate(all="ignore"):
        return fn(*arrays)


def elementwise(fn, *arrays, otype=object):
    """Apply a Python scalar function to broadcast arrays (values as Python numbers)."""
    return np.frompyfunc(fn, len(arrays), 1)(*[np.asarray(a, dtype=object) for a in arrays]).astype(otype)


# -- unary ops ---------------------------------------------------------------------------------
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


FLOAT_UNARY = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "sigmoid": _sigmoid, "reciprocal": lambda x: 1 / x,
    "erf": lambda x: elementwise(math.erf, x, otype=np.float64),
}


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("d", ALL, ids=str)
@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
def test_float_unary_matches_float64_reference(name, d):
    x = make(values(d, special=True), d)
    out = getattr(tp, name)(x)
    result_dtype = d if d.is_floating_point else tp.get_default_dtype()
    check_close(out, ref64(FLOAT_UNARY[name], as64(x).astype(np.float64)), result_dtype)
    assert getattr(x, name)().dtype is result_dtype  # the method is the same op


def test_float_unary_follows_the_default_dtype():
    old = tp.get_default_dtype()
    tp.set_default_dtype(tp.float64)
    try:
        assert tp.exp(make([1, 2], tp.int32)).dtype is tp.float64
        assert tp.sqrt(make([True], tp.bool)).dtype is tp.float64
    finally:
        tp.set_default_dtype(old)


def _sign(x):
    if x.dtype == np.bool_:
        return x
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _same_for_ints(fn):
    return lambda x: x if x.dtype != np.float64 else fn(x)


PRESERVING_UNARY = {
    # name: (reference on float64 / exact int arrays, dtypes that raise)
    "abs": (np.abs, [tp.bool]),
    "neg": (np.negative, [tp.bool]),
    "sign": (_sign, []),
    "floor": (_same_for_ints(np.floor), [tp.bool]),
    "ceil": (_same_for_ints(np.ceil), [tp.bool]),
    "round": (_same_for_ints(np.round), [tp.bool]),
    "trunc": (_same_for_ints(np.trunc), [tp.bool]),
    "frac": (lambda x: x - np.trunc(x), [tp.bool] + INTS),
    "bitwise_not": (np.invert, FLOATS),
}


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("d", ALL, ids=str)
@pytest.mark.parametrize("name", sorted(PRESERVING_UNARY))
def test_dtype_preserving_unary(name, d):
    ref, raises = PRESERVING_UNARY[name]
    x = make(values(d, special=True), d)
    if d in raises:
        with pytest.raises((RuntimeError, NotImplementedError)):
            getattr(tp, name)(x)
        return
    # integer references run in the tensor's own width so that they wrap like PyTorch
    arr = as64(x) if d.is_floating_point or d is tp.bool else x.numpy()
    check_close(getattr(tp, name)(x), ref64(ref, arr), d)


@pytest.mark.parametrize("d", ALL, ids=str)
def test_logical_not_and_square(d):
    x = make(values(d, special=True), d)
    check_close(tp.logical_not(x), as64(x) == 0, tp.bool)
    sq = E.square(x)
    expected_dtype = tp.int64 if d is tp.bool else d
    arr = as64(x) if d.is_floating_point else x.numpy().astype(expected_dtype.np)
    check_close(sq, ref64(np.multiply, arr, arr), expected_dtype)


def test_sign_of_nan_and_negative_zero_is_zero():
    assert tp.sign(make([math.nan, -0.0, -3.0, 2.0], tp.float32)).tolist() == [0.0, 0.0, -1.0, 1.0]
    assert math.copysign(1, tp.sign(make([-0.0], tp.float64)).item()) == 1.0


def test_round_is_half_to_even_and_decimals_round_to_places():
    x = make([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], tp.float32)
    assert tp.round(x).tolist() == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0]
    cases = [([1.25, -1.25, 0.125, 2.675], 2), ([1234.5, -1250.0, 49.0], -2), ([0.15, 0.25], 1)]
    for vals, decimals in cases:
        for d in (tp.float32, tp.float64):
            # PyTorch scales in the tensor's dtype: float32 2.675 * 100 rounds to 267.5, giving 2.68
            x = make(vals, d)
            p = d.np.type(10.0 ** abs(decimals))
            a = x.numpy()
            ref = np.rint(a * p) / p if decimals >= 0 else np.rint(a / p) * p
            check_close(tp.round(x, decimals=decimals), ref, d)
            check_close(x.round(decimals=decimals), ref, d)
    with pytest.raises(NotImplementedError, match="\"round\" not implemented for 'Long'"):
        tp.round(make([1], tp.int64), decimals=1)
    assert tp.round(make([1, 2], tp.int64)).tolist() == [1, 2]


@pytest.mark.filterwarnings("error")
def test_erf_accuracy_against_math_erf():
    grid = np.linspace(-6.5, 6.5, 20001)
    x32 = make(grid, tp.float32)
    got = as64(tp.erf(x32))
    ref = elementwise(math.erf, as64(x32), otype=np.float64)
    assert np.max(np.abs(got - ref)) <= 1e-7
    x64 = make(np.linspace(-6, 6, 1001), tp.float64)
    assert tp.erf(x64).tolist() == [math.erf(v) for v in as64(x64)]
    special = tp.erf(make([math.inf, -math.inf, math.nan, -0.0, 1e-30], tp.float32)).tolist()
    assert special[:2] == [1.0, -1.0] and math.isnan(special[2])
    assert math.copysign(1, special[3]) == -1.0 and special[4] == pytest.approx(2 / math.sqrt(math.pi) * 1e-30)
    for d in (tp.float16, tp.bfloat16):
        check_close(tp.erf(make(grid[::100], d)), elementwise(math.erf, as64(make(grid[::100], d)),
                                                              otype=np.float64), d)


@pytest.mark.filterwarnings("error")
def test_sigmoid_is_stable_in_both_tails():
    x = make([-1000.0, -100.0, -20.0, 0.0, 20.0, 1000.0], tp.float64)
    out = tp.sigmoid(x).tolist()
    assert out[0] == 0.0 and out[-1] == 1.0 and out[3] == 0.5
    assert out[1] == pytest.approx(math.exp(-100), rel=1e-12)  # relative precision in the tail


# -- binary ops ----------------------------------------------------------------------------------
def _int_div_trunc(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int_fmod(a, b):
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _int_pow(a, b):
    if b < 0:
        return 1 if a == 1 else ((1 if b % 2 == 0 else -1) if a == -1 else 0)
    return pow(a, b, 1 << 64)


def _py_remainder(a, b):
    if b == 0 or math.isinf(a) or math.isnan(a) or math.isnan(b):
        return math.nan
    return a % b


def _nan_max(a, b):
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


def _nan_min(a, b):
    return math.nan if math.isnan(a) or math.isnan(b) else min(a, b)


# name: (call, float64 reference on arrays, exact reference on Python ints, result kind, unsupported)
# result kind: "promote" (promoted dtype), "float" (promoted, integers -> default float), "bool";
# unsupported: categories of the promoted dtype that raise ("any bool": either operand bool)
BINARY = {
    "add": (tp.add, np.add, operator.add, "promote", ()),
    "add_alpha": (lambda a, b: tp.add(a, b, alpha=2), lambda a, b: a + 2 * b, lambda a, b: a + 2 * b,
                  "promote", ()),
    "sub": (tp.sub, np.subtract, operator.sub, "promote", ("any bool",)),
    "sub_alpha": (lambda a, b: tp.sub(a, b, alpha=3), lambda a, b: a - 3 * b, lambda a, b: a - 3 * b,
                  "promote", ("any bool",)),
    "mul": (tp.mul, np.multiply, operator.mul, "promote", ()),
    "div": (tp.div, np.divide, None, "float", ()),
    "div_trunc": (lambda a, b: tp.div(a, b, rounding_mode="trunc"), lambda a, b: np.trunc(a / b),
                  _int_div_trunc, "promote", ("bool",)),
    "div_floor": (lambda a, b: tp.div(a, b, rounding_mode="floor"), np.floor_divide, operator.floordiv,
                  "promote", ("bool",)),
    "floor_divide": (tp.floor_divide, np.floor_divide, operator.floordiv, "promote", ("bool",)),
    "remainder": (tp.remainder, lambda a, b: elementwise(_py_remainder, a, b, otype=np.float64),
                  operator.mod, "promote", ("bool",)),
    "fmod": (tp.fmod, np.fmod, _int_fmod, "promote", ("bool",)),
    "pow": (tp.pow, np.power, _int_pow, "promote", ("bool",)),
    "maximum": (tp.maximum, lambda a, b: elementwise(_nan_max, a, b, otype=np.float64), max, "promote", ()),
    "minimum": (tp.minimum, lambda a, b: elementwise(_nan_min, a, b, otype=np.float64), min, "promote", ()),
    "atan2": (tp.atan2, np.arctan2, None, "float", ()),
    "eq": (tp.eq, np.equal, operator.eq, "bool", ()),
    "ne": (tp.ne, np.not_equal, operator.ne, "bool", ()),
    "lt": (tp.lt, np.less, operator.lt, "bool", ()),
    "le": (tp.le, np.less_equal, operator.le, "bool", ()),
    "gt": (tp.gt, np.greater, operator.gt, "bool", ()),
    "ge": (tp.ge, np.greater_equal, operator.ge, "bool", ()),
    "logical_and": (tp.logical_and, np.logical_and, lambda a, b: bool(a) and bool(b), "bool", ()),
    "logical_or": (tp.logical_or, np.logical_or, lambda a, b: bool(a) or bool(b), "bool", ()),
    "logical_xor": (tp.logical_xor, np.logical_xor, lambda a, b: bool(a) != bool(b), "bool", ()),
    "bitwise_and": (tp.bitwise_and, None, operator.and_, "promote", ("float",)),
    "bitwise_or": (tp.bitwise_or, None, operator.or_, "promote", ("float",)),
    "bitwise_xor": (tp.bitwise_xor, None, operator.xor, "promote", ("float",)),
}
DIVISIONS = {"div_trunc", "div_floor", "floor_divide", "remainder", "fmod"}
PAIRS = [(d, d) for d in ALL] + [
    (tp.int32, tp.float32), (tp.uint8, tp.int8), (tp.bool, tp.int64), (tp.float16, tp.bfloat16),
    (tp.int64, tp.float16), (tp.bool, tp.float32), (tp.int8, tp.int16), (tp.float32, tp.float64),
    (tp.uint8, tp.bool), (tp.int64, tp.bfloat16), (tp.float64, tp.int8)]


def _category(d):
    return "bool" if d is tp.bool else ("float" if d.is_floating_point else "int")


def binary_reference(name, x, y, result):
    """Reference values of op ``name`` on tensors ``x`` and ``y`` with result dtype ``result``."""
    _, float_ref, int_ref, kind, _ = BINARY[name]
    compute = tp.promote_types(x.dtype, y.dtype)
    if kind == "float" and not compute.is_floating_point:
        compute = tp.get_default_dtype()
    # PyTorch casts both inputs to the computation dtype first
    a, b = as64(x.to(compute)), as64(y.to(compute))
    if compute.is_floating_point:
        return ref64(float_ref, a, b)
    out = elementwise(lambda u, v: int_ref(int(u), int(v)), a, b)
    if result is tp.bool:
        return out.astype(np.bool_)
    return np.array([wrap_int(int(v), result) for v in out.ravel()], dtype=np.int64).reshape(out.shape)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("da,db", PAIRS, ids=lambda d: str(d).split(".")[1])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_reference(name, da, db):
    call, _, _, kind, unsupported = BINARY[name]
    va, vb = values(da, special=True), values(db, special=True)
    x = make(va, da, (len(va), 1))
    if name in DIVISIONS or name == "pow":
        vb = [v for v in vb if v != 0] if not tp.promote_types(da, db).is_floating_point else vb
    y = make(vb, db, (1, len(vb)))
    promoted = tp.promote_types(da, db)
    if _category(promoted) in unsupported or ("any bool" in unsupported and tp.bool in (da, db)):
        with pytest.raises((RuntimeError, NotImplementedError)):
            call(x, y)
        return
    result = {"bool": tp.bool, "promote": promoted,
              "float": promoted if promoted.is_floating_point else tp.get_default_dtype()}[kind]
    if name == "pow" and not promoted.is_floating_point and 0 in vb:
        vb.remove(0)
    check_close(call(x, y), binary_reference(name, x, y, result), result)


@pytest.mark.parametrize("d", INTS, ids=str)
@pytest.mark.parametrize("name", sorted(DIVISIONS))
def test_integer_division_by_zero_raises(name, d):
    call = BINARY[name][0]
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        call(make([5, 6], d), make([1, 0], d))
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        call(make([5, 6], d), 0)


@pytest.mark.filterwarnings("error")
def test_float_division_by_zero_is_ieee():
    x = make([1.0, -1.0, 0.0], tp.float32)
    zero = make([0.0], tp.float32)
    assert as64(x / zero).tolist()[:2] == [math.inf, -math.inf] and math.isnan((x / zero)[2].item())
    assert as64(x // zero).tolist()[:2] == [math.inf, -math.inf]
    assert all(math.isnan(v) for v in (x % zero).tolist())
    assert tp.div(make([7.0], tp.float32), zero, rounding_mode="trunc").tolist() == [math.inf]
    assert (make([1, 2], tp.int64) / 0).tolist() == [math.inf, math.inf]


def test_remainder_and_fmod_signs():
    a, b = make([-7, 7, -7, 7], tp.int64), make([2, -2, -2, 2], tp.int64)
    assert tp.remainder(a, b).tolist() == [1, -1, -1, 1]      # sign of the divisor
    assert tp.fmod(a, b).tolist() == [-1, 1, -1, 1]           # sign of the dividend
    af, bf = a.float(), b.float()
    assert tp.remainder(af, bf).tolist() == [1.0, -1.0, -1.0, 1.0]
    assert tp.fmod(af, bf).tolist() == [-1.0, 1.0, -1.0, 1.0]
    # PyTorch keeps the dividend's zero sign (numpy would give the divisor's)
    z = tp.remainder(make([-0.0, 0.0], tp.float64), make([2.0, -2.0], tp.float64)).tolist()
    assert [math.copysign(1, v) for v in z] == [-1.0, 1.0]
    assert tp.remainder(make([-5.0, 5.0], tp.float32), math.inf).tolist() == [math.inf, 5.0]
    assert tp.remainder(2, make([3, -3], tp.int64)).tolist() == [2, -1]


def test_integer_overflow_wraps():
    assert (make([100, 2], tp.int8) * 2).tolist() == [-56, 4]
    assert (make([1, 2], tp.uint8) - 3).tolist() == [254, 255]
    assert (make([1, 2], tp.int8) + 300).tolist() == [45, 46]
    assert (make([1], tp.int64) + 2 ** 63).tolist() == [1 - 2 ** 63]  # Python ints are read as 64-bit words
    assert (-make([0, 1, 200], tp.uint8)).tolist() == [0, 255, 56]
    assert tp.abs(make([-128], tp.int8)).tolist() == [-128]
    assert tp.div(make([-128], tp.int8), make([-1], tp.int8), rounding_mode="floor").tolist() == [-128]
    assert tp.div(make([-2 ** 63], tp.int64), make([-1], tp.int64), rounding_mode="trunc").tolist() == [-2 ** 63]
    assert (make([3], tp.int64) ** 40).tolist() == [wrap_int(3 ** 40, tp.int64)]


def test_integer_powers():
    base = make([1, -1, 2, 0, -2], tp.int64)
    assert base.pow(make([-1, -3, -1, -2, -2], tp.int64)).tolist() == [1, -1, 0, 0, 0]
    assert (base ** 0).tolist() == [1] * 5
    assert (2 ** make([-1, 2, 3], tp.int64)).tolist() == [0, 4, 8]
    assert (2 ** make([-1, 2], tp.int64)).dtype is tp.int64
    assert (2.0 ** make([-1, 2], tp.int64)).tolist() == [0.5, 4.0]
    assert (make([2, 3], tp.int32) ** 2.5).dtype is tp.float32


def test_maximum_minimum_propagate_nan():
    a = make([1.0, math.nan, 3.0], tp.float32)
    b = make([math.nan, 0.0, 1.0], tp.float32)
    for fn in (tp.maximum, tp.minimum):
        out = fn(a, b).tolist()
        assert math.isnan(out[0]) and math.isnan(out[1])
    assert tp.maximum(a, b).tolist()[2] == 3.0 and tp.minimum(a, b).tolist()[2] == 1.0


def test_bool_arithmetic():
    t, f = make([True, True, False, False], tp.bool), make([True, False, True, False], tp.bool)
    assert (t + f).tolist() == [True, True, True, False] and (t + f).dtype is tp.bool   # logical or
    assert (t * f).tolist() == [True, False, False, False] and (t * f).dtype is tp.bool  # logical and
    assert (t & f).tolist() == [True, False, False, False] and (t ^ f).tolist() == [False, True, True, False]
    assert (~t).tolist() == [False, False, True, True]
    assert (t / f).dtype is tp.float32
    assert (t + 1).tolist() == [2, 2, 1, 1] and (t * 2.5).dtype is tp.float32


# -- promotion -----------------------------------------------------------------------------------------
PROMOTION = [
    # (description, thunk, expected dtype)
    ("int32 tensor + 2.5", lambda: make([1], tp.int32) + 2.5, tp.float32),
    ("int64 tensor + 2", lambda: make([1], tp.int64) + 2, tp.int64),
    ("int8 tensor + 2", lambda: make([1], tp.int8) + 2, tp.int8),
    ("uint8 + int8", lambda: make([1], tp.uint8) + make([1], tp.int8), tp.int16),
    ("int / int", lambda: make([1], tp.int64) / make([2], tp.int64), tp.float32),
    ("int / 2", lambda: make([1], tp.int32) / 2, tp.float32),
    ("bool + bool", lambda: make([True], tp.bool) + make([True], tp.bool), tp.bool),
    ("bool + 1", lambda: make([True], tp.bool) + 1, tp.int64),
    ("float16 + bfloat16", lambda: make([1], tp.float16) + make([1], tp.bfloat16), tp.float32),
    ("float16 + 2.5", lambda: make([1], tp.float16) + 2.5, tp.float16),
    ("0-dim float64 + dim int32", lambda: make(1.0, tp.float64) + make([1], tp.int32), tp.float64),
    ("0-dim float64 + dim float16", lambda: make(1.5, tp.float64) + make([1], tp.float16), tp.float16),
    ("0-dim int64 + dim int8", lambda: make(1, tp.int64) + make([1], tp.int8), tp.int8),
    ("0-dim int64 + 0-dim int8", lambda: make(1, tp.int64) + make(1, tp.int8), tp.int64),
    ("int tensor < 2.5", lambda: make([1], tp.int64) < 2.5, tp.bool),
    ("exp(int)", lambda: tp.exp(make([1], tp.int16)), tp.float32),
    ("atan2(int, float64)", lambda: tp.atan2(make([1], tp.int64), make([1], tp.float64)), tp.float64),
    ("int.clamp(min=0.5)", lambda: make([1], tp.int64).clamp(min=0.5), tp.float32),
    ("int.clamp(min=0)", lambda: make([1], tp.int64).clamp(min=0), tp.int64),
    ("float32.clamp(float64 tensor)", lambda: tp.clamp(make([1], tp.float32), make([0.0], tp.float64)),
     tp.float64),
    ("where(c, int8, 5)", lambda: tp.where(make([True], tp.bool), make([1], tp.int8), 5), tp.int8),
    ("where(c, 1, 2)", lambda: tp.where(make([True], tp.bool), 1, 2), tp.int64),
    ("where(c, 1.5, 2)", lambda: tp.where(make([True], tp.bool), 1.5, 2), tp.float32),
    ("where(c, True, False)", lambda: tp.where(make([True], tp.bool), True, False), tp.bool),
    ("where(c, int64, float32)", lambda: tp.where(make([True], tp.bool), make([1], tp.int64),
                                                  make([1], tp.float32)), tp.float32),
    ("bool.square()", lambda: E.square(make([True], tp.bool)), tp.int64),
    ("int // 2.0", lambda: tp.div(make([5], tp.int8), 2.0, rounding_mode="floor"), tp.float32),
    ("bitwise uint8 ^ int8", lambda: tp.bitwise_xor(make([1], tp.uint8), make([1], tp.int8)), tp.int16),
    ("bool & 1", lambda: make([True], tp.bool) & 1, tp.int64),
    ("addcmul(float32, float64, float32)", lambda: tp.addcmul(make([1.0], tp.float32), make([1.0], tp.float64),
                                                              make([1.0], tp.float32)), tp.float64),
]


@pytest.mark.parametrize("thunk,expected", [(t, e) for _, t, e in PROMOTION], ids=[c[0] for c in PROMOTION])
def test_result_dtype(thunk, expected):
    assert thunk().dtype is expected


def test_scalar_operands_are_cast_like_pytorch():
    # a Python int is wrapped into the tensor's integer dtype, except for true division
    assert (make([100], tp.int8) == 356).tolist() == [True]
    assert (make([1, 3], tp.uint8) < -1).tolist() == [True, True]
    assert (make([3, 6], tp.uint8) / -3).tolist() == [-1.0, -2.0]
    assert (300 / make([3, 6], tp.uint8)).tolist() == [100.0, 50.0]
    assert (make([4], tp.float16) + 0.1).tolist() == [np.float16(4.1)]


# -- broadcasting and memory layouts ---------------------------------------------------------------------
def test_broadcasting():
    a = make(np.arange(6.0).reshape(2, 3, 1), tp.float32)
    b = make(np.arange(4.0), tp.float32)
    out = a * b
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out.numpy(), np.arange(6.0).reshape(2, 3, 1) * np.arange(4.0))
    c = tp.where(make([[True], [False]], tp.bool), make([1, 2, 3], tp.int64), make(0, tp.int64))
    assert c.tolist() == [[1, 2, 3], [0, 0, 0]]
    assert tp.clamp(make([[5.0]], tp.float32), min=make([0.0, 6.0], tp.float32)).shape == (1, 2)


@pytest.mark.parametrize("call,sa,sb,msg", [
    (tp.add, (3,), (4,), r"The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton "
                         r"dimension 0"),
    (tp.mul, (2, 3), (2, 4), r"The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                             r"non-singleton dimension 1"),
    (tp.eq, (5, 2), (3, 1), r"The size of tensor a \(5\) must match the size of tensor b \(3\)"),
    (lambda a, b: tp.where(make([True], tp.bool), a, b), (3,), (4,), "The size of tensor a"),
    (tp.add, (2, 3), (4, 3), r"The size of tensor a \(2\) must match the size of tensor b \(4\)"),
    (tp.add, (4, 2, 3), (5, 2, 3), r"The size of tensor a \(4\) must match the size of tensor b \(5\)"),
])
def test_broadcast_mismatch_error(call, sa, sb, msg):
    with pytest.raises(RuntimeError, match=msg):
        call(tp.zeros(sa), tp.zeros(sb))


@pytest.mark.parametrize("sa,sb,want", [((4, 3), (3,), (4, 3)), ((3,), (4, 3), (4, 3)), ((2, 4, 3), (4, 3), (2, 4, 3)),
                                        ((4, 3), (1, 3), (4, 3)), ((4, 3), (), (4, 3))])
def test_broadcast_suffix_shapes(sa, sb, want):
    a = tp.from_numpy(np.asarray(np.arange(np.prod(sa), dtype=np.float32).reshape(sa)))
    b = tp.from_numpy(np.asarray(np.arange(np.prod(sb), dtype=np.float32).reshape(sb) + 100))
    r = a + b
    assert r.shape == want
    np.testing.assert_array_equal(r.numpy(), a.numpy() + b.numpy())


NONCONTIGUOUS_OPS = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b), ("remainder", lambda a, b: a % b), ("pow", lambda a, b: a ** b),
    ("maximum", tp.maximum), ("lt", lambda a, b: a < b), ("where", lambda a, b: tp.where(a > b, a, b)),
    ("exp", lambda a, b: a.exp()), ("abs", lambda a, b: abs(a - b)), ("clamp", lambda a, b: a.clamp(b, b + 1)),
]


@pytest.mark.parametrize("d", [tp.float32, tp.int64, tp.bfloat16], ids=str)
@pytest.mark.parametrize("name,fn", NONCONTIGUOUS_OPS, ids=[n for n, _ in NONCONTIGUOUS_OPS])
def test_noncontiguous_inputs_give_the_same_values(name, fn, d):
    base_a = make(np.arange(1.0, 25.0).reshape(4, 6), d)
    base_b = make(np.arange(24.0, 0.0, -1.0).reshape(6, 4) % 5 + 1, d)
    a, b = base_a.T, base_b              # transposed
    a2, b2 = base_a[:, ::2], base_b.T[:, ::2]  # sliced with a step
    assert not a.is_contiguous() and not a2.is_contiguous()
    for x, y in ((a, b), (a2, b2)):
        expected = fn(x.contiguous(), y.contiguous())
        got = fn(x, y)
        assert got.dtype is expected.dtype
        np.testing.assert_array_equal(as64(got), as64(expected))


# -- in place ----------------------------------------------------------------------------------------
def _t(vals):
    """Argument builder: a tensor of ``vals`` in the dtype of the tensor under test."""
    return lambda d: make(vals, d)


INPLACE = [
    # (method name, out-of-place function, arguments (builders take the dtype), keyword arguments)
    ("add_", tp.add, (_t([1.5, 2.5, 3.5]),), {}),
    ("add_", tp.add, (2,), {"alpha": 3}),
    ("sub_", tp.sub, (lambda d: make([0.5], tp.float64),), {"alpha": 2}),
    ("mul_", tp.mul, (_t([2.0, 3.0, 4.0]),), {}),
    ("mul_", tp.mul, (lambda d: make([2, 3, 4], tp.int64),), {}),
    ("div_", tp.div, (_t([2.0, 4.0, 8.0]),), {}),
    ("div_", tp.div, (4,), {"rounding_mode": "floor"}),
    ("floor_divide_", tp.floor_divide, (_t([2.0, 4.0, 8.0]),), {}),
    ("remainder_", tp.remainder, (1.5,), {}),
    ("fmod_", tp.fmod, (_t([2.0]),), {}),
    ("pow_", tp.pow, (2,), {}),
    ("pow_", tp.pow, (0.5,), {}),
    ("pow_", tp.pow, (_t([1.0, 2.0, 0.5]),), {}),
    ("atan2_", tp.atan2, (_t([1.0, -1.0, 2.0]),), {}),
    ("clamp_", tp.clamp, (), {"min": -1.0, "max": 2.0}),
    ("clamp_", tp.clamp, (_t([0.0, -5.0, 0.0]),), {}),
    ("clamp_min_", tp.clamp_min, (0.0,), {}),
    ("clamp_max_", tp.clamp_max, (0.0,), {}),
    ("lerp_", tp.lerp, (_t([1.0, 1.0, 1.0]), 0.25), {}),
    ("lerp_", tp.lerp, (_t([1.0, 1.0, 1.0]), _t([0.5, 0.0, 1.0])), {}),
    ("addcmul_", tp.addcmul, (_t([1.0, 2.0, 3.0]), _t([2.0])), {"value": 0.5}),
    ("addcdiv_", tp.addcdiv, (_t([1.0, 2.0, 3.0]), _t([2.0])), {"value": -2}),
    ("logical_and_", tp.logical_and, (lambda d: make([1.0, 0.0, 1.0], tp.float32),), {}),
    ("exp_", tp.exp, (), {}), ("sqrt_", tp.sqrt, (), {}), ("sigmoid_", tp.sigmoid, (), {}),
    ("neg_", tp.neg, (), {}), ("abs_", tp.abs, (), {}), ("round_", tp.round, (), {"decimals": 1}),
    ("square_", E.square, (), {}), ("reciprocal_", tp.reciprocal, (), {}), ("frac_", tp.frac, (), {}),
    ("sign_", tp.sign, (), {}), ("floor_", tp.floor, (), {}), ("erf_", tp.erf, (), {}),
]


@pytest.mark.parametrize("d", [tp.float32, tp.float64, tp.float16], ids=str)
@pytest.mark.parametrize("method,fn,args,kwargs", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_agrees_with_out_of_place_and_bumps_version(method, fn, args, kwargs, d):
    args = [a(d) if callable(a) else a for a in args]
    x = make([-1.25, 0.5, 3.0], d)
    expected = fn(x, *args, **kwargs)
    v = x._version
    ptr = x.data_ptr()
    out = getattr(x, method)(*args, **kwargs)
    assert out is x and x.data_ptr() == ptr
    assert x._version == v + 1
    np.testing.assert_array_equal(as64(x), as64(expected.to(d)))


def test_inplace_on_a_view_writes_through_to_the_base():
    base = make(np.arange(12.0).reshape(3, 4), tp.float32)
    v0 = base._version
    col = base[:, 1]
    col.mul_(10).add_(1)
    assert base[:, 1].tolist() == [11.0, 51.0, 91.0] and base[0].tolist() == [0.0, 11.0, 2.0, 3.0]
    t = base.T
    t += 1
    t.clamp_(max=5.0)
    assert base[0].tolist() == [1.0, 5.0, 3.0, 4.0]
    assert base._version == col._version == v0 + 4
    strided = base[::2, ::2]
    strided.exp_()
    assert base[2, 2].item() == pytest.approx(math.exp(5.0), rel=1e-6) and base[1, 1].item() == 5.0
    ints = make(np.arange(8), tp.int64)
    step = ints[1::3]
    step.bitwise_xor_(1)
    assert step.tolist() == [0, 5, 6] and ints.tolist() == [0, 0, 2, 3, 5, 5, 6, 6]


def test_inplace_operators():
    x = make([1.0, 2.0, 3.0], tp.float32)
    ref = np.array([1.0, 2.0, 3.0])
    for op, value in [("+=", 2), ("-=", 0.5), ("*=", 3), ("/=", 2), ("**=", 2), ("//=", 2), ("%=", 3)]:
        ns = {"x": x, "v": value}
        exec(f"x {op} v", ns)
        assert ns["x"] is x
        ns["x"] = ref
        exec(f"x {op} v", ns)
        ref = ns["x"]
    np.testing.assert_allclose(as64(x), ref)
    i = make([12, 10], tp.int64)
    i &= 6
    i |= 1
    i ^= 2
    assert i.tolist() == [(12 & 6 | 1) ^ 2, (10 & 6 | 1) ^ 2]


INPLACE_ERRORS = [
    (lambda: make([1, 2], tp.int64).add_(2.5), "result type Float can't be cast to the desired output type Long"),
    (lambda: make([1, 2], tp.int64).div_(2), "result type Float can't be cast to the desired output type Long"),
    (lambda: make([1, 2], tp.int32).exp_(), "result type Float can't be cast to the desired output type Int"),
    (lambda: make([1, 2], tp.int64).mul_(make([1.0], tp.float32)), "result type Float can't be cast"),
    (lambda: make([True], tp.bool).add_(make([1], tp.uint8)), "result type Byte can't be cast to the desired "
                                                              "output type Bool"),
    (lambda: make([1, 2], tp.int16).clamp_(min=0.5), "result type Float can't be cast to the desired output "
                                                     "type Short"),
    (lambda: make([1], tp.int64).pow_(-1), "Integers to negative integer powers are not allowed."),
    (lambda: make([1.0, 2.0], tp.float32).add_(make([[1.0], [2.0]], tp.float32)),
     r"output with shape \[2\] doesn't match the broadcast shape \[2, 2\]"),
    (lambda: make([1.0, 2.0, 3.0], tp.float32).lerp_(make([[1.0]], tp.float32), 0.5),
     r"output with shape \[3\] doesn't match the broadcast shape \[1, 3\]"),
]


@pytest.mark.parametrize("thunk,msg", INPLACE_ERRORS)
def test_inplace_errors(thunk, msg):
    with pytest.raises(RuntimeError, match=msg):
        thunk()


# -- errors --------------------------------------------------------------------------------------------
BOOL_SUB = "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask"
ERRORS = [
    (lambda: make([True], tp.bool) - make([1], tp.int64), RuntimeError, BOOL_SUB),
    (lambda: make([True], tp.bool) - make([True], tp.bool), RuntimeError,
     "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `\\^` or `logical_xor\\(\\)`"),
    (lambda: make([1], tp.int64) - True, RuntimeError, BOOL_SUB),
    (lambda: 1 - make([True], tp.bool), RuntimeError, BOOL_SUB),
    (lambda: make([True], tp.bool).sub_(1), RuntimeError, BOOL_SUB),
    (lambda: -make([True], tp.bool), RuntimeError, "Negation, the `-` operator, on a bool tensor is not supported"),
    (lambda: +make([True], tp.bool), RuntimeError, "The `\\+` operator, on a bool tensor is not supported."),
    (lambda: make([5], tp.int64) // 0, RuntimeError, "^ZeroDivisionError$"),
    (lambda: make([5], tp.int64) ** -2, RuntimeError, "Integers to negative integer powers are not allowed."),
    (lambda: make([True], tp.bool) ** -1, RuntimeError, "Integers to negative integer powers are not allowed."),
    (lambda: tp.clamp(make([1.0], tp.float32)), RuntimeError, "At least one of 'min' or 'max' must not be None"),
    (lambda: make([1.0], tp.float32).clamp_(), RuntimeError, "At least one of 'min' or 'max' must not be None"),
    (lambda: tp.clamp(make([True], tp.bool), min=False), NotImplementedError, "\"clamp\" not implemented for 'Bool'"),
    (lambda: tp.where(make([1], tp.int64), make([1.0], tp.float32), 0.0), RuntimeError,
     "where expected condition to be a boolean tensor, but got a tensor with dtype Long"),
    (lambda: make([1.0], tp.float32) & make([1.0], tp.float32), NotImplementedError,
     "\"bitwise_and\" not implemented for 'Float'"),
    (lambda: tp.bitwise_not(make([1.0], tp.float64)), NotImplementedError,
     "\"bitwise_not\" not implemented for 'Double'"),
    (lambda: ~make([1.0], tp.float32), TypeError, "only implemented on integer and Boolean-type tensors"),
    (lambda: tp.abs(make([True], tp.bool)), NotImplementedError, "\"abs\" not implemented for 'Bool'"),
    (lambda: tp.frac(make([1], tp.int64)), NotImplementedError, "\"frac\" not implemented for 'Long'"),
    (lambda: make([True], tp.bool) % make([True], tp.bool), NotImplementedError,
     "\"remainder\" not implemented for 'Bool'"),
    (lambda: make([True], tp.bool) // make([True], tp.bool), NotImplementedError,
     "\"div_floor\" not implemented for 'Bool'"),
    (lambda: tp.div(make([1], tp.int64), 2, rounding_mode="bad"), RuntimeError,
     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'bad'"),
    (lambda: tp.add(make([1], tp.int64), make([1], tp.int64), alpha=0.5), RuntimeError,
     "For integral input tensors, argument alpha must not be a floating point number."),
    (lambda: tp.add(make([1.0], tp.float32), make([1.0], tp.float32), alpha=True), RuntimeError,
     "Boolean alpha only supported for Boolean results."),
    (lambda: tp.lerp(make([1], tp.int64), make([1], tp.int64), 0.5), NotImplementedError,
     "\"lerp\" not implemented for 'Long'"),
    (lambda: tp.lerp(make([1.0], tp.float32), make([1.0], tp.float64), 0.5), RuntimeError,
     "expected dtype float32 for `end` but got dtype float64"),
    (lambda: tp.lerp(make([1.0], tp.float32), make([1.0], tp.float32), make([0.5], tp.float64)), RuntimeError,
     "expected dtype float32 for `weight` but got dtype float64"),
    (lambda: tp.addcdiv(make([1.0], tp.float32), make([1], tp.int64), make([1], tp.int64)), RuntimeError,
     "Integer division with addcdiv is no longer supported"),
    (lambda: tp.add(make([1.0], tp.float32), "a"), TypeError, "must be Number, not str"),
    (lambda: make([1], tp.int8) + 2 ** 70, OverflowError, "int too big to convert"),
    (lambda: make([1.0], tp.float32) < "a", TypeError, "'<' not supported"),
    (lambda: tp.round(make([1.0], tp.float32), 1), TypeError, "positional argument"),
]


@pytest.mark.parametrize("thunk,exc,msg", ERRORS)
def test_errors(thunk, exc, msg):
    with pytest.raises(exc, match=msg):
        thunk()


def test_equality_with_foreign_objects_is_false():
    x = make([1.0], tp.float32)
    assert (x == "a") is False and (x == None) is False  # noqa: E711
    assert (x != "a") is True
    assert x.__eq__("a") is NotImplemented


# -- operators -------------------------------------------------------------------------------------------
OPERATORS = [
    # (expression on tensors/scalars, the same through public functions)
    (lambda x, y: x + y, tp.add), (lambda x, y: x - y, tp.sub), (lambda x, y: x * y, tp.mul),
    (lambda x, y: x / y, tp.div), (lambda x, y: x // y, tp.floor_divide), (lambda x, y: x % y, tp.remainder),
    (lambda x, y: x ** y, tp.pow), (lambda x, y: x == y, tp.eq), (lambda x, y: x != y, tp.ne),
    (lambda x, y: x < y, tp.lt), (lambda x, y: x <= y, tp.le), (lambda x, y: x > y, tp.gt),
    (lambda x, y: x >= y, tp.ge),
]


@pytest.mark.parametrize("expr,fn", OPERATORS)
@pytest.mark.parametrize("other", [make([2.0, -3.0, 0.5], tp.float32), 2, 2.5, np.float64(1.5)],
                         ids=["tensor", "int", "float", "np.float64"])
def test_operators_match_functions(expr, fn, other):
    x = make([1.5, 4.0, -2.0], tp.float32)
    a, b = expr(x, other), fn(x, other)
    assert a.dtype is b.dtype
    np.testing.assert_array_equal(as64(a), as64(b))


REFLECTED = [
    (lambda s, x: s + x, np.add), (lambda s, x: s - x, np.subtract), (lambda s, x: s * x, np.multiply),
    (lambda s, x: s / x, np.divide), (lambda s, x: s // x, np.floor_divide),
    (lambda s, x: s % x, lambda a, b: elementwise(_py_remainder, a, b, otype=np.float64)),
    (lambda s, x: s ** x, np.power), (lambda s, x: s < x, np.less), (lambda s, x: s == x, np.equal),
]


@pytest.mark.parametrize("expr,ref", REFLECTED)
@pytest.mark.parametrize("scalar", [2, -1.5, np.float32(3.0)], ids=["int", "float", "np.float32"])
def test_reflected_operators(expr, ref, scalar):
    x = make([1.5, 4.0, -2.0, 0.25], tp.float32)
    out = expr(scalar, x)
    assert isinstance(out, tp.Tensor)
    check_close(out, ref64(ref, np.float64(scalar), as64(x)), out.dtype)


def test_numpy_operands():
    x = make([1.0, 2.0, 3.0], tp.float32)
    out = x + np.ones(3)
    assert isinstance(out, tp.Tensor) and out.dtype is tp.float64 and out.tolist() == [2.0, 3.0, 4.0]
    assert (x < np.array([0, 5, 1])).tolist() == [False, True, False]
    y = np.float32(2.0) * x
    assert isinstance(y, tp.Tensor) and y.dtype is tp.float32
    x -= np.ones(3, np.float32)
    assert x.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.filterwarnings("error")
def test_zero_dim_operands_and_results():
    s = make(2.0, tp.float32)
    for out in (s + s, s * 3, tp.exp(s), tp.sigmoid(s), tp.erf(s), s > 1, tp.where(s > 1, s, 0.0), -s,
                tp.clamp(s, max=1.0), s.pow(2), s % 1.5, tp.maximum(s, s)):
        assert out.shape == ()
    assert (s / 0).item() == math.inf and tp.sigmoid(make(0.0, tp.float64)).item() == 0.5
    assert (make([1.0, 2.0], tp.float32) + s).shape == (2,)
    s.add_(1).mul_(make(2.0, tp.float32))
    assert s.item() == 6.0


def test_unary_and_bitwise_operators():
    x = make([-1.5, 2.0], tp.float32)
    assert (-x).tolist() == [1.5, -2.0] and abs(x).tolist() == [1.5, 2.0] and (+x) is x
    i = make([12, -3], tp.int64)
    assert (~i).tolist() == [-13, 2]
    assert (i & 6).tolist() == [4, 4] and (i | 1).tolist() == [13, -3] and (i ^ i).tolist() == [0, 0]
    assert (6 & i).tolist() == [4, 4] and (1 | i).tolist() == [13, -3] and (5 ^ i).tolist() == [9, -8]


def test_methods_and_public_functions():
    x = make([1.0, -2.0, 3.0], tp.float32)
    y = make([2.0, 2.0, 2.0], tp.float32)
    assert x.add(y, alpha=2).tolist() == [5.0, 2.0, 7.0]
    assert x.sub(1).tolist() == x.subtract(1).tolist() == [0.0, -3.0, 2.0]
    assert x.div(y, rounding_mode="floor").tolist() == [0.0, -1.0, 1.0]
    assert x.clamp(min=0).tolist() == x.clip(min=0).tolist() == [1.0, 0.0, 3.0]
    assert x.where(x > 0, y).tolist() == [1.0, 2.0, 3.0]
    assert x.pow(2).tolist() == [1.0, 4.0, 9.0]
    assert x.abs_() is x and x.tolist() == [1.0, 2.0, 3.0]
    assert tp.rsub(x, 1).tolist() == [0.0, -1.0, -2.0]
    assert tp.true_divide(x, 2).tolist() == [0.5, 1.0, 1.5]
    assert tp.multiply(x, y).tolist() == tp.mul(x, y).tolist()
    assert tp.greater(x, 1).tolist() == [False, True, True] and x.less_equal(2).tolist() == [True, True, False]
    assert tp.arcsin(make([0.0], tp.float32)).tolist() == [0.0] and x.arctan2(y).dtype is tp.float32
    assert tp.negative(x).tolist() == [-1.0, -2.0, -3.0] and tp.absolute(-x).tolist() == x.tolist()
    assert tp.fix(make([-1.5], tp.float32)).tolist() == [-1.0]
    assert tp.clamp_min(x, 2).tolist() == [2.0, 2.0, 3.0] and tp.clamp_max(x, 2).tolist() == [1.0, 2.0, 2.0]
    assert tp.positive(x) is x
    names = ["add", "sub", "mul", "div", "exp", "where", "clamp", "maximum", "minimum", "lerp", "addcmul",
             "addcdiv", "erf", "sigmoid", "logical_and", "bitwise_xor", "remainder", "fmod", "round"]
    for name in names:
        assert getattr(tp, name).__doc__, name


def test_clamp_with_tensor_and_scalar_bounds():
    i = make([-3, 0, 5], tp.int64)
    assert i.clamp(min=0, max=make(1, tp.int64)).tolist() == [0, 0, 1]
    assert tp.clamp(i, make([0, 1, 2], tp.int64), make([1, 1, 3], tp.int64)).tolist() == [0, 1, 3]
    x = make([1.0, math.nan, 5.0], tp.float32)
    out = x.clamp(2.0, 3.0).tolist()
    assert out[0] == 2.0 and math.isnan(out[1]) and out[2] == 3.0
    assert tp.clamp(make([1.0, 5.0], tp.float32), min=3, max=2).tolist() == [2.0, 2.0]  # min > max: max wins
    assert math.isnan(tp.clamp(make([1.0], tp.float32), min=math.nan).item())


def test_lerp_addcmul_addcdiv_match_formulas():
    a = make([1.0, 2.0, -3.0], tp.float64)
    b = make([5.0, -2.0, 1.0], tp.float64)
    w = make([0.0, 0.5, 0.75], tp.float64)
    np.testing.assert_allclose(as64(tp.lerp(a, b, w)), as64(a) + as64(w) * (as64(b) - as64(a)))
    np.testing.assert_allclose(as64(tp.lerp(a, b, 0.25)), as64(a) + 0.25 * (as64(b) - as64(a)))
    np.testing.assert_allclose(as64(tp.addcmul(a, b, w, value=2)), as64(a) + 2 * as64(b) * as64(w))
    np.testing.assert_allclose(as64(tp.addcdiv(a, b, w + 1, value=-0.5)),
                               as64(a) - 0.5 * as64(b) / (as64(w) + 1))
    assert tp.addcmul(make([1, 1], tp.int64), make([3, 3], tp.int64), make([2, 2], tp.int64)).tolist() == [7, 7]


# -- properties ----------------------------------------------------------------------------------------
_shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)


@settings(max_examples=60, deadline=None)
@given(sa=_shapes, sb=_shapes, seed=st.integers(0, 2 ** 32 - 1))
def test_broadcasting_matches_numpy(sa, sb, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    try:
        expected = a * b + a
    except ValueError:
        with pytest.raises(RuntimeError, match="must match the size of tensor b"):
            make(a, tp.float64) * make(b, tp.float64)
        return
    out = make(a, tp.float64) * make(b, tp.float64) + make(a, tp.float64)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-15)


_ints = st.integers(-2 ** 31, 2 ** 31 - 1)


@settings(max_examples=60, deadline=None)
@given(a=st.lists(_ints, min_size=1, max_size=8), b=st.lists(_ints.filter(bool), min_size=1, max_size=8))
def test_integer_division_family_matches_python(a, b):
    n = min(len(a), len(b))
    x, y = make(a[:n], tp.int64), make(b[:n], tp.int64)
    assert (x // y).tolist() == [p // q for p, q in zip(a, b)]
    assert (x % y).tolist() == [p % q for p, q in zip(a, b)]
    assert tp.div(x, y, rounding_mode="trunc").tolist() == [_int_div_trunc(p, q) for p, q in zip(a, b)]
    assert tp.fmod(x, y).tolist() == [_int_fmod(p, q) for p, q in zip(a, b)]
    assert (x * y).tolist() == [wrap_int(p * q, tp.int64) for p, q in zip(a, b)]


_floats = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(a=st.lists(_floats, min_size=1, max_size=8), b=st.lists(_floats.filter(bool), min_size=1, max_size=8))
def test_float_division_family_matches_python(a, b):
    n = min(len(a), len(b))
    x, y = make(a[:n], tp.float64), make(b[:n], tp.float64)
    assert (x // y).tolist() == [p // q for p, q in zip(a, b)]
    np.testing.assert_allclose((x % y).numpy(), [p % q for p, q in zip(a, b)], rtol=1e-12, atol=1e-9)
    assert (x / y).tolist() == [p / q for p, q in zip(a, b)]


def test_functions_take_a_python_number_first_like_pytorch():
    t = tp.tensor([1, 2])
    assert tp.sub(3, t).tolist() == [2, 1] and tp.sub(3, t).dtype == tp.int64
    assert tp.div(1, tp.tensor([2, 4])).tolist() == [0.5, 0.25]
    assert tp.mul(2.5, t).dtype == tp.float32 and tp.mul(2.5, t).tolist() == [2.5, 5.0]
    assert tp.add(True, tp.tensor([True, False])).tolist() == [True, True]


def test_fill_takes_a_zero_dim_tensor():
    t = tp.ones(2)
    t.fill_(tp.tensor(5.0))
    assert t.tolist() == [5.0, 5.0]
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but got tensor with 1"):
        t.fill_(tp.ones(2))
