"""Elementwise ops against PyTorch itself (values, result dtypes, which inputs raise).

Each op runs on every pair of values from two lists (by broadcasting) in both frameworks;
results must have the same dtype and agree to the result dtype's precision, and an input
that makes PyTorch raise must make tensorplug raise (the same exception type). Skipped
where torch is not installed.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorplug as tp  # noqa: E402
from tensorplug.ops import math_ops as E  # noqa: E402

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
TOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 4e-6, "float64": 1e-12}
VALUES = {
    "bool": [False, True],
    "uint8": [0, 1, 2, 3, 7, 100, 200, 255],
    "signed": [-128, -100, -7, -3, -2, -1, 0, 1, 2, 3, 7, 100, 127],
    "float": [-7.5, -3.0, -2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.5, 3.0, 7.0, 100.0,
              math.inf, -math.inf, math.nan],
}
# Deliberate differences, skipped below: PyTorch allows ``bool ** bool_scalar`` (though not
# ``bool ** bool_tensor``) where tensorplug raises for every bool pow; and PyTorch rejects Python
# ints out of a dtype's range in pow/clamp/where while wrapping them in add/mul/comparisons, where
# tensorplug always wraps (no out-of-range scalars are used here).


def values(name):
    if name in ("bool", "uint8"):
        return VALUES[name]
    return VALUES["float"] if name.startswith(("float", "bfloat")) else VALUES["signed"]


def pair(name, vals, shape=None):
    """The same values as a tensorplug and a torch tensor of dtype ``name``."""
    kind = np.float64 if name.startswith(("float", "bfloat")) else (np.bool_ if name == "bool" else np.int64)
    a = np.array(vals, dtype=kind)
    if shape is not None:
        a = a.reshape(shape)
    return tp.from_numpy(a.copy()).to(getattr(tp, name)), torch.from_numpy(a.copy()).to(getattr(torch, name))


def host(t):
    """(dtype name, numpy values) of a tensorplug or torch tensor; bfloat16 as float32."""
    if isinstance(t, torch.Tensor):
        name = str(t.dtype).split(".")[1]
        return name, (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    a = t.numpy()
    return t.dtype.name, a.astype(np.float32) if t.dtype is tp.bfloat16 else a


def run(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # tensorplug must not leak numpy warnings
            return fn(), None
    except Exception as e:  # noqa: BLE001 - the oracle compares which inputs raise
        return None, e


def compare(tp_fn, torch_fn):
    expected, torch_error = run(torch_fn)
    got, tp_error = run(tp_fn)
    if torch_error is not None or tp_error is not None:
        assert torch_error is not None and tp_error is not None, (torch_error, tp_error)
        assert type(tp_error).__name__ == type(torch_error).__name__, (torch_error, tp_error)
        return
    (dt, a), (de, b) = host(got), host(expected)
    assert dt == de
    assert a.shape == b.shape
    if dt in TOL:
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=TOL[dt], atol=TOL[dt],
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "reciprocal", "abs", "neg", "sign", "floor",
         "ceil", "round", "trunc", "frac", "logical_not", "bitwise_not", "positive"]


@pytest.mark.parametrize("dtype", NAMES)
@pytest.mark.parametrize("name", UNARY + ["square"])
def test_unary_against_torch(name, dtype):
    x, xt = pair(dtype, values(dtype))
    fn = E.square if name == "square" else getattr(tp, name)
    compare(lambda: fn(x), lambda: getattr(torch, name)(xt))
    if name != "positive":
        x2, xt2 = pair(dtype, values(dtype))
        compare(lambda: getattr(x2, name + "_")(), lambda: getattr(xt2, name + "_")())
        compare(lambda: x2, lambda: xt2)


@pytest.mark.parametrize("dtype", NAMES)
@pytest.mark.parametrize("decimals", [2, 1, -1])
def test_round_decimals_against_torch(dtype, decimals):
    x, xt = pair(dtype, values(dtype))
    compare(lambda: tp.round(x, decimals=decimals), lambda: torch.round(xt, decimals=decimals))


BINARY = {
    "add": (tp.add, torch.add),
    "add_alpha": (lambda a, b: tp.add(a, b, alpha=2), lambda a, b: torch.add(a, b, alpha=2)),
    "sub": (tp.sub, torch.sub),
    "sub_alpha": (lambda a, b: tp.sub(a, b, alpha=3), lambda a, b: torch.sub(a, b, alpha=3)),
    "mul": (tp.mul, torch.mul), "div": (tp.div, torch.div),
    "div_trunc": (lambda a, b: tp.div(a, b, rounding_mode="trunc"),
                  lambda a, b: torch.div(a, b, rounding_mode="trunc")),
    "div_floor": (lambda a, b: tp.div(a, b, rounding_mode="floor"),
                  lambda a, b: torch.div(a, b, rounding_mode="floor")),
    "floor_divide": (tp.floor_divide, torch.floor_divide), "remainder": (tp.remainder, torch.remainder),
    "fmod": (tp.fmod, torch.fmod), "pow": (tp.pow, torch.pow), "maximum": (tp.maximum, torch.maximum),
    "minimum": (tp.minimum, torch.minimum), "atan2": (tp.atan2, torch.atan2),
    "eq": (tp.eq, torch.eq), "ne": (tp.ne, torch.ne), "lt": (tp.lt, torch.lt), "le": (tp.le, torch.le),
    "gt": (tp.gt, torch.gt), "ge": (tp.ge, torch.ge),
    "logical_and": (tp.logical_and, torch.logical_and), "logical_or": (tp.logical_or, torch.logical_or),
    "logical_xor": (tp.logical_xor, torch.logical_xor), "bitwise_and": (tp.bitwise_and, torch.bitwise_and),
    "bitwise_or": (tp.bitwise_or, torch.bitwise_or), "bitwise_xor": (tp.bitwise_xor, torch.bitwise_xor),
    "where": (lambda a, b: tp.where(a > b, a, b), lambda a, b: torch.where(a > b, a, b)),
    "clamp": (lambda a, b: tp.clamp(a, min=b, max=b + 2), lambda a, b: torch.clamp(a, min=b, max=b + 2)),
}
INPLACE = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "atan2", "logical_and",
           "logical_or", "bitwise_and", "bitwise_xor"]
PAIRS = [(n, n) for n in NAMES] + [
    ("int32", "float32"), ("uint8", "int8"), ("bool", "int64"), ("float16", "bfloat16"), ("int64", "float16"),
    ("bool", "float32"), ("int8", "int16"), ("float32", "float64"), ("uint8", "bool"), ("int64", "bfloat16"),
    ("float64", "int8")]


@pytest.mark.parametrize("da,db", PAIRS)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_against_torch(name, da, db):
    tp_fn, torch_fn = BINARY[name]
    va, vb = values(da), values(db)
    nonzero = [v for v in vb if v != 0] or [True]
    x, xt = pair(da, va, (len(va), 1))
    for vals in (vb, nonzero):  # integer division by zero raises: check both ways
        y, yt = pair(db, vals, (1, len(vals)))
        compare(lambda: tp_fn(x, y), lambda: torch_fn(xt, yt))
        if name in INPLACE:
            x2, xt2 = pair(da, va, (len(va), 1))
            x2, xt2 = x2.expand(len(va), len(vals)).contiguous(), xt2.expand(len(va), len(vals)).contiguous()
            compare(lambda: getattr(x2, name + "_")(y), lambda: getattr(xt2, name + "_")(yt))


@pytest.mark.parametrize("da,db", [("float32", "float64"), ("int64", "float32"), ("int32", "int8"),
                                   ("bool", "float16"), ("uint8", "int64")])
def test_zero_dim_operands_against_torch(da, db):
    """0-dim tensors rank below dimensioned ones in promotion, unless of a higher category."""
    x, xt = pair(da, values(da), (len(values(da)),))
    for v in values(db)[1:4]:
        s, st = pair(db, v)
        for name in ("add", "mul", "div", "maximum", "lt", "where"):
            tp_fn, torch_fn = BINARY[name]
            compare(lambda: tp_fn(x, s), lambda: torch_fn(xt, st))
            compare(lambda: tp_fn(s, x), lambda: torch_fn(st, xt))


SCALARS = [2, -3, 0, 2.5, -0.5, True, False]
SCALAR_OPS = {
    "add": lambda x, s: x + s, "sub": lambda x, s: x - s, "mul": lambda x, s: x * s, "div": lambda x, s: x / s,
    "floordiv": lambda x, s: x // s, "mod": lambda x, s: x % s, "pow": lambda x, s: x ** s,
    "eq": lambda x, s: x == s, "lt": lambda x, s: x < s, "ge": lambda x, s: x >= s, "and": lambda x, s: x & s,
    "or": lambda x, s: x | s, "radd": lambda x, s: s + x, "rsub": lambda x, s: s - x,
    "rmul": lambda x, s: s * x, "rdiv": lambda x, s: s / x, "rfloordiv": lambda x, s: s // x,
    "rmod": lambda x, s: s % x, "rpow": lambda x, s: s ** x, "rand": lambda x, s: s & x,
    "fmod": lambda x, s: x.fmod(s), "clamp_min": lambda x, s: x.clamp(min=s),
    "clamp": lambda x, s: x.clamp(min=-s, max=s), "where_other": lambda x, s: x.where(x > 1, s),
    "where_self": lambda x, s: (tp if isinstance(x, tp.Tensor) else torch).where(x > 1, s, x),
    "remainder_scalar_tensor": lambda x, s: (tp if isinstance(x, tp.Tensor) else torch).remainder(s, x),
    "pow_scalar_tensor": lambda x, s: (tp if isinstance(x, tp.Tensor) else torch).pow(s, x),
}
INPLACE_SCALAR = ["add_", "sub_", "mul_", "div_", "pow_", "remainder_", "floor_divide_", "fmod_", "clamp_"]


@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", NAMES)
def test_scalar_operands_against_torch(dtype, scalar):
    x, xt = pair(dtype, values(dtype))
    for name, fn in SCALAR_OPS.items():
        if dtype == "bool" and isinstance(scalar, bool) and name in ("pow", "rpow"):
            continue  # bool ** bool scalar: a deliberate difference
        compare(lambda: fn(x, scalar), lambda: fn(xt, scalar))
    for name in INPLACE_SCALAR:
        if dtype == "bool" and isinstance(scalar, bool) and name == "pow_":
            continue  # bool ** bool scalar: a deliberate difference
        x2, xt2 = pair(dtype, values(dtype))
        if name == "clamp_":
            compare(lambda: x2.clamp_(min=scalar), lambda: xt2.clamp_(min=scalar))
        else:
            compare(lambda: getattr(x2, name)(scalar), lambda: getattr(xt2, name)(scalar))
        compare(lambda: x2, lambda: xt2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_lerp_addcmul_addcdiv_against_torch(dtype):
    n = len(values(dtype))
    a, at = pair(dtype, values(dtype))
    b, bt = pair(dtype, list(reversed(values(dtype))))
    w, wt = pair(dtype, np.linspace(-0.5, 1.5, n))
    compare(lambda: tp.lerp(a, b, w), lambda: torch.lerp(at, bt, wt))
    compare(lambda: tp.lerp(a, b, 0.25), lambda: torch.lerp(at, bt, 0.25))
    compare(lambda: tp.addcmul(a, b, w, value=0.5), lambda: torch.addcmul(at, bt, wt, value=0.5))
    compare(lambda: tp.addcdiv(a, b, w, value=-2), lambda: torch.addcdiv(at, bt, wt, value=-2))
    a2, at2 = pair(dtype, values(dtype))
    compare(lambda: a2.addcmul_(b, w, value=2), lambda: at2.addcmul_(bt, wt, value=2))
    compare(lambda: a2.addcdiv_(b, w), lambda: at2.addcdiv_(bt, wt))
    compare(lambda: a2.lerp_(b, 0.1), lambda: at2.lerp_(bt, 0.1))


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "zero-dim"])
def test_threshold_backward_bits_match_torch(dt, layout):
    # relu's backward: the gradient's exact bits where self > threshold (NaN self included), +0 elsewhere,
    # NaN, infinite and -0.0 gradients included
    vals = VALUES["float"]
    g = np.array([[a for a in vals] for _ in vals], np.float32)
    s = np.array([[b] * len(vals) for b in vals], np.float32)
    if layout == "zero-dim":
        g, s = np.array(vals[-1], np.float32), np.array(vals[5], np.float32)
    tg = torch.from_numpy(g).to(getattr(torch, dt))
    ts = torch.from_numpy(s).to(getattr(torch, dt))
    pg = tp.from_numpy(g).to(getattr(tp, dt))
    ps = tp.from_numpy(s).to(getattr(tp, dt))
    if layout == "transposed":
        tg, ts, pg, ps = tg.t(), ts.t(), pg.t(), ps.t()
    for thr in (0.0, 0.5, -1.0):
        want = torch.ops.aten.threshold_backward(tg, ts, thr).double().numpy()
        got = tp.ops.tensorplug.threshold_backward(pg, ps, thr).double().numpy()
        # NaN payloads may differ (the inputs' conversions to half types): NaN where PyTorch has NaN,
        # the same bits (the sign of zero included) everywhere else
        nan = np.isnan(want)
        assert np.array_equal(nan, np.isnan(got)), (thr, want, got)
        assert np.array_equal(want[~nan].view(np.uint64), got[~nan].view(np.uint64)), (thr, want, got)
