"""Sample-input helpers for the op database: tensors, layouts, special values, promotion and tolerances.

Everything here is independent of the ops under test where it can be: values
come from numpy (``np.random.default_rng(seed)``), the expected result dtype
of a reference is computed by :func:`result_dtype`, a re-statement of
PyTorch's promotion rules on numpy arrays and Python numbers (not a call into
``tensorplug.result_type``), and references compute in float64 or in exact
integer arithmetic before casting to that dtype. Building a sample does use a
few tensorplug view ops (slicing, ``permute``) to get non-contiguous layouts;
those ops have entries of their own.
"""

from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np

import tensorplug as tp

from .opinfo import ErrorInput, SampleInput

BOOL = (tp.bool,)
UNSIGNED = (tp.uint8,)
SIGNED = (tp.int8, tp.int16, tp.int32, tp.int64)
INTEGRAL = UNSIGNED + SIGNED
FLOATING = (tp.float16, tp.bfloat16, tp.float32, tp.float64)
ALL = BOOL + INTEGRAL + FLOATING
COMPLEX = (tp.complex64, tp.complex128)  # not in ALL: an op's entry names them where PyTorch supports them
INTEGRAL_AND_BOOL = BOOL + INTEGRAL
NO_BOOL = INTEGRAL + FLOATING

BF16 = np.dtype(ml_dtypes.bfloat16)
_NP_FLOATS = (np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64))

# (atol, rtol) per dtype: PyTorch's torch.testing defaults, float16 widened to two ulps because
# its ops compute in float32 and round once, while references round a float64 result once
_TOLERANCES = {"float64": (1e-7, 1e-7), "float32": (1e-5, 1.3e-6), "float16": (1e-3, 2e-3),
               "bfloat16": (1e-2, 1.6e-2), "complex64": (1e-5, 1.3e-6), "complex128": (1e-7, 1e-7)}


def default_tolerance(dtype):
    """``(atol, rtol)`` for results of ``dtype`` (a tensorplug or numpy dtype); (0, 0), exact, for integers
    and bool. Compare with the tolerance of the *result's* dtype: integer inputs of float ops give floats."""
    name = dtype.name if isinstance(dtype, tp.dtype) else np.dtype(dtype).name
    return _TOLERANCES.get(name, (0.0, 0.0))


def np_dtype(dtype):
    """The numpy dtype of a tensorplug dtype (bfloat16 is ml_dtypes')."""
    return np.dtype(dtype.np)


# -- PyTorch's promotion on numpy arrays and Python numbers --------------------------------------
def _category(d):
    d = np.dtype(d)
    if d == np.bool_:
        return 0
    return 2 if d in _NP_FLOATS else 1


def promote(a, b):
    """PyTorch's promote_types on numpy dtypes (numpy's own differs: int64 + float16 is float16 here)."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    if ca == 2:
        if {a, b} == {np.dtype(np.float16), BF16}:
            return np.dtype(np.float32)
        return a if a.itemsize > b.itemsize else b
    # integers: uint8 with a signed type needs a signed type wider than 8 bits
    if a == np.uint8 or b == np.uint8:
        other = b if a == np.uint8 else a
        return np.dtype(np.int16) if other == np.int8 else other
    return a if a.itemsize > b.itemsize else b


def default_float():
    """numpy dtype of ``tensorplug.get_default_dtype()`` (what integer inputs of float ops give)."""
    return np_dtype(tp.get_default_dtype())


def _scalar_dtype(x):
    if isinstance(x, bool):
        return np.dtype(np.bool_)
    if isinstance(x, int):
        return np.dtype(np.int64)
    return default_float()


def _combine(higher, lower):
    """PyTorch's combine_categories: a lower tier counts only when it is of a higher category."""
    if higher is None:
        return lower
    if lower is None or _category(higher) == 2:
        return higher
    if _category(higher) == 0 or _category(lower) == 2:
        return promote(higher, lower)
    return higher


def result_dtype(*operands):
    """PyTorch's result type of numpy arrays (tensors) and Python numbers (None is skipped).

    Arrays with dims outrank zero-dim arrays, which outrank Python numbers
    (floats among those count as the default dtype); a lower tier only
    counts when it is of a higher category (bool < int < float) than the
    tiers above it.
    """
    tiers = [None, None, None]
    for x in operands:
        if x is None:
            continue
        if isinstance(x, np.ndarray):
            i, d = (0 if x.ndim else 1), x.dtype
        else:
            i, d = 2, _scalar_dtype(x)
        tiers[i] = d if tiers[i] is None else promote(tiers[i], d)
    out = _combine(tiers[0], _combine(tiers[1], tiers[2]))
    return out if out is not None else default_float()


def float_dtype(d):
    """The dtype a floating op gives for inputs of numpy dtype ``d``."""
    d = np.dtype(d)
    return d if _category(d) == 2 else default_float()


def is_float(d):
    """Whether numpy dtype ``d`` is a floating dtype (ml_dtypes' bfloat16 included)."""
    return _category(d) == 2


def cast(x, d):
    """numpy ``x`` (array or Python number) as an array of dtype ``d``, integers wrapping as in PyTorch."""
    d = np.dtype(d)
    if not isinstance(x, np.ndarray):
        if isinstance(x, float) and _category(d) < 2:
            x = int(x) if _category(d) == 1 else bool(x)
        if isinstance(x, int) and not isinstance(x, bool) and _category(d) == 1:
            return np.asarray(x, dtype=np.int64).astype(d)
        return np.asarray(x).astype(d)
    if x.dtype == d:
        return x
    with np.errstate(all="ignore"):
        return x.astype(d)


def f64(x):
    """``x`` as float64 values (Python numbers pass through)."""
    if isinstance(x, np.ndarray):
        return x.astype(np.float64)
    return float(x)


def to_numpy(x):
    """Tensors (also inside lists, tuples and dicts) as numpy arrays; anything else unchanged."""
    if isinstance(x, tp.Tensor):
        return x.detach().cpu().numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(to_numpy(v) for v in x)
    if isinstance(x, dict):
        return {k: to_numpy(v) for k, v in x.items()}
    return x


def reference_call(opinfo, sample):
    """The reference result for ``sample``: ``opinfo.ref(*numpy args, **numpy kwargs)`` (their own dtypes,
    bfloat16 from ml_dtypes); a factory's ``device`` argument is not passed (numpy has one device)."""
    args = to_numpy((sample.input,) + tuple(sample.args))
    kwargs = to_numpy({k: v for k, v in sample.kwargs.items() if k != "device"})
    # special values and empty slices make numpy warn; the reference's NaN is the expected result
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return opinfo.ref(*args, **kwargs)


# -- tensors --------------------------------------------------------------------------------------------
def _values(rng, shape, dtype, low, high):
    npd = np_dtype(dtype)
    if dtype is tp.bool:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.is_floating_point:
        lo = -9.0 if low is None else low
        hi = 9.0 if high is None else high
        return rng.uniform(lo, hi, size=shape).astype(np.float64)
    info = np.iinfo(npd)
    lo = max(-9 if low is None else math.ceil(low), info.min)
    hi = min(9 if high is None else math.floor(high), info.max)
    if dtype is tp.uint8:
        lo = max(lo, 0)
    return rng.integers(lo, max(hi, lo) + 1, size=shape, dtype=np.int64)


def make_tensor(shape, dtype, low=None, high=None, noncontiguous=False, seed=0, *, transposed=False,
                requires_grad=False, exclude_zero=False, values=None):
    """A CPU tensor of ``shape`` and ``dtype`` with reproducible random values.

    Floats are uniform on ``[low, high)`` (default [-9, 9)), integers on
    ``[low, high]`` (default [-9, 9], uint8 from 0), bools fair coins; or
    the given ``values`` (a numpy array of ``shape``). ``exclude_zero``
    (divisors) makes integer zeros 1 and moves floats under 0.5 in
    magnitude 0.5 further from 0.
    ``noncontiguous`` makes the tensor a stepped slice (``[..., ::2]``) of a
    larger one and ``transposed`` a permuted (dims reversed) view of one
    stored the other way round; both may be combined. ``requires_grad``
    marks the result (a leaf, also when it is a view) for floating dtypes.
    """
    shape = tuple(shape)
    rng = np.random.default_rng(seed)
    arr = _values(rng, shape, dtype, low, high) if values is None else np.asarray(values)
    if exclude_zero:
        if arr.dtype.kind == "f":
            # pushed away from 0 rather than set to 1: 7 / 1 is an integer, where floor and
            # remainder jump, and gradcheck's finite differences straddle the jump
            arr = np.where(np.abs(arr) < 0.5, arr + np.copysign(0.5, arr), arr)
        else:
            arr = np.where(arr == 0, 1, arr)
    if transposed and len(shape) > 1:
        arr = np.ascontiguousarray(np.transpose(arr))  # stored reversed; the permute below restores shape
    if noncontiguous and len(shape) > 0:
        wide = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1] + 1,), dtype=arr.dtype)
        wide[..., ::2][..., :arr.shape[-1]] = arr
        # the gaps hold a value no op should ever read
        if dtype.is_floating_point:
            wide[..., 1::2] = np.nan
        t = tp.tensor(wide, dtype=dtype)[..., 0:2 * arr.shape[-1]:2]
    else:
        t = tp.tensor(arr, dtype=dtype)
    if transposed and len(shape) > 1:
        t = t.permute(tuple(range(len(shape) - 1, -1, -1)))
    if requires_grad and dtype.is_floating_point:
        t.requires_grad_(True)
    return t


SPECIAL_FLOATS = (math.inf, -math.inf, math.nan, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0)


def special_tensor(dtype, values=SPECIAL_FLOATS, requires_grad=False):
    """A 1-D tensor of special values (inf, -inf, nan, -0.0 and a few ordinary ones)."""
    return make_tensor((len(values),), dtype, values=np.array(values, dtype=np.float64),
                       requires_grad=requires_grad)


def special_pair(dtype, values=SPECIAL_FLOATS[:7]):
    """Two tensors whose broadcast pairs every special value with every other (shapes (n, 1) and (n,))."""
    v = np.array(values, dtype=np.float64)
    return (make_tensor((len(v), 1), dtype, values=v.reshape(-1, 1)),
            make_tensor((len(v),), dtype, values=v, seed=1))


def index_tensor(values, dtype=tp.int64):
    """An integer index tensor with the given values."""
    return tp.tensor(np.asarray(values, dtype=np.int64), dtype=dtype)


def bool_tensor(shape, seed=0, noncontiguous=False):
    """A random bool tensor (masks, conditions)."""
    return make_tensor(shape, tp.bool, seed=seed, noncontiguous=noncontiguous)


# -- layouts every elementwise op is tried on ---------------------------------------------------------
LAYOUTS = (
    # (name, shape, make_tensor keywords)
    ("scalar", (), {}),
    ("zero_size", (0, 3), {}),
    ("vector", (7,), {}),
    ("matrix", (3, 4), {}),
    ("transposed", (4, 3), {"transposed": True}),
    ("stepped_slice", (3, 5), {"noncontiguous": True}),
    ("transposed_stepped", (2, 3, 4), {"transposed": True, "noncontiguous": True}),
    ("large", (64, 65), {}),
)


def unary_layouts(dtype, requires_grad, low=None, high=None, exclude_zero=False, seed=0):
    """One :class:`SampleInput` (no further args) per layout of :data:`LAYOUTS`."""
    for i, (name, shape, kw) in enumerate(LAYOUTS):
        t = make_tensor(shape, dtype, low, high, seed=seed + i, requires_grad=requires_grad,
                        exclude_zero=exclude_zero, **kw)
        yield SampleInput(t, name=name)


# gradient samples stay small: gradcheck perturbs every element of every input twice
GRAD_SAMPLE_MAX_NUMEL = 300


def tensors_of(x):
    """The tensors in ``x``, also inside lists, tuples and dicts."""
    if isinstance(x, tp.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from tensors_of(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from tensors_of(v)


def small_when_grad(gen):
    """``gen``'s samples, leaving out (when ``requires_grad``) those with more than
    :data:`GRAD_SAMPLE_MAX_NUMEL` elements that require grad, also inside lists and dicts."""
    def sample_inputs(device, dtype, requires_grad):
        for s in gen(device, dtype, requires_grad):
            if requires_grad and sum(t.numel() for t in tensors_of((s.input, s.args, s.kwargs))
                                     if t.requires_grad) > GRAD_SAMPLE_MAX_NUMEL:
                continue
            yield s
    return sample_inputs


def error_input(exc, regex, input, *args, **kwargs):
    """An :class:`ErrorInput`: calling the op on ``input, *args, **kwargs`` raises ``exc`` matching ``regex``."""
    return ErrorInput(SampleInput(input, args, kwargs), exc, regex)


def errors_of(*makers):
    """``error_inputs(device)`` from functions that each build one :class:`ErrorInput` when called."""
    def error_inputs(device):
        for m in makers:
            yield m()
    return error_inputs
