"""Reductions against PyTorch itself: same values, dtypes, shapes, and the same errors (type and message)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

ALL_DTYPES = [tp.bool, tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32,
              tp.float64]


def torch_dtype(d):
    return getattr(torch, d.name)


def sample(shape, dtype, seed=0, nan=False):
    """Small integers (quarters for floats): sums and products are exact in every dtype and order."""
    rng = np.random.default_rng(seed)
    if dtype is tp.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    vals = rng.integers(0 if dtype is tp.uint8 else -2, 3, size=shape).astype(np.float64)
    if dtype.is_floating_point:
        vals += rng.integers(0, 2, size=shape) / 2
        if nan and vals.size:
            vals.flat[rng.integers(0, vals.size)] = math.nan
    return vals.astype(dtype.np)


def pair(a):
    """The same values as a tensorplug tensor and a torch tensor."""
    t = tp.from_numpy(a.copy())
    if a.dtype.name == "bfloat16":
        return t, torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return t, torch.from_numpy(a.copy())


def outcome(call):
    try:
        return "ok", call()
    except Exception as e:  # noqa: BLE001 - the oracle compares whatever was raised
        return "err", type(e), str(e).split("\n")[0]


def assert_same_tensor(ours, theirs, what, rtol=0.0):
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", ""), what
    assert tuple(ours.shape) == tuple(theirs.shape), what
    np.testing.assert_allclose(np.asarray(ours.numpy(), dtype=np.float64), theirs.to(torch.float64).numpy(),
                               rtol=rtol, atol=0, err_msg=str(what))


def assert_same(ours_call, theirs_call, what="", rtol=0.0):
    """Both succeed with equal results (a tensor or a tuple of tensors), or raise the same error."""
    ours, theirs = outcome(ours_call), outcome(theirs_call)
    assert ours[0] == theirs[0], (what, ours, theirs)
    if ours[0] == "err":
        assert ours[1:] == theirs[1:], what
        return
    a, b = ours[1], theirs[1]
    if isinstance(b, torch.Tensor):
        assert_same_tensor(a, b, what, rtol)
    else:
        assert len(a) == len(b), what
        for x, y in zip(a, b):
            assert_same_tensor(x, y, what, rtol)


SHAPES = [(), (0,), (5,), (3, 4), (0, 3), (2, 0, 3), (2, 3, 4)]


def dim_choices(ndim):
    """None, every single dim (negative ones too) and a pair, plus one out of range."""
    n = max(ndim, 1)
    out = [None] + list(range(-n, n)) + [n]
    if ndim >= 2:
        out += [(0, -1), (1, 0)]
    return out


MULTI = {  # name: (tensorplug call, torch call); dim is None, an int or a tuple
    "sum": (lambda t, d, k: t.sum(d, k), lambda t, d, k: t.sum(d, k) if d is not None else t.sum()),
    "amax": (lambda t, d, k: t.amax(() if d is None else d, k), lambda t, d, k: t.amax(() if d is None else d, k)),
    "amin": (lambda t, d, k: tp.amin(t, () if d is None else d, k),
             lambda t, d, k: torch.amin(t, () if d is None else d, k)),
    "any": (lambda t, d, k: t.any(d, keepdim=k), lambda t, d, k: t.any(d, keepdim=k) if d is not None else t.any()),
    "all": (lambda t, d, k: t.all(d, keepdim=k), lambda t, d, k: t.all(d, keepdim=k) if d is not None else t.all()),
}
SINGLE = {  # dim is None or an int
    "prod": (lambda t, d, k: t.prod(d, k), lambda t, d, k: t.prod(d, k) if d is not None else t.prod()),
    "argmax": (lambda t, d, k: t.argmax(d, k), lambda t, d, k: t.argmax(d, k)),
    "argmin": (lambda t, d, k: tp.argmin(t, d, keepdim=k), lambda t, d, k: torch.argmin(t, d, keepdim=k)),
    "max": (lambda t, d, k: t.max(d, k) if d is not None else t.max(),
            lambda t, d, k: t.max(d, k) if d is not None else t.max()),
    "min": (lambda t, d, k: tp.min(t, d, k) if d is not None else tp.min(t),
            lambda t, d, k: torch.min(t, d, k) if d is not None else torch.min(t)),
    "cumsum": (lambda t, d, k: t.cumsum(d if d is not None else 0),
               lambda t, d, k: t.cumsum(d if d is not None else 0)),
}


# PyTorch rounds half-type products at every step, tensorplug once from float32: a few ulps apart
HALF_PROD_RTOL = {("prod", tp.float16): 2.0 ** -8, ("prod", tp.bfloat16): 2.0 ** -5}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(MULTI) + sorted(SINGLE))
def test_reduction_matches_pytorch(name, dtype):
    ours, theirs = MULTI.get(name) or SINGLE[name]
    for shape in SHAPES:
        a = sample(shape, dtype, nan=name in ("amax", "amin", "max", "min", "argmax", "argmin"))
        for dim in dim_choices(len(shape)):
            if isinstance(dim, tuple) and name in SINGLE:
                continue
            for keepdim in (False, True):
                if dim is None and keepdim and name in ("prod", "max", "min", "sum", "any", "all"):
                    continue  # torch's full reductions take no keepdim
                t, u = pair(a)
                assert_same(lambda: ours(t, dim, keepdim), lambda: theirs(u, dim, keepdim),
                            (name, shape, dim, keepdim), rtol=HALF_PROD_RTOL.get((name, dtype), 0.0))


@pytest.mark.parametrize("dtype", [tp.uint8, tp.int32, tp.float16, tp.bfloat16, tp.float32], ids=str)
def test_dtype_argument_matches_pytorch(dtype):
    a = sample((3, 4), tp.int16 if dtype is tp.uint8 else tp.float32)
    t, u = pair(a)
    for dim in (None, 0, 1):
        assert_same(lambda: t.sum(dim, dtype=dtype),
                    lambda: u.sum(dim, dtype=torch_dtype(dtype)) if dim is not None
                    else u.sum(dtype=torch_dtype(dtype)), dim)
        assert_same(lambda: tp.prod(t, dim, dtype=dtype),
                    lambda: torch.prod(u, dim, dtype=torch_dtype(dtype)) if dim is not None
                    else torch.prod(u, dtype=torch_dtype(dtype)), dim, rtol=HALF_PROD_RTOL.get(("prod", dtype), 0))
        if dim is not None:
            assert_same(lambda: t.cumsum(dim, dtype=dtype), lambda: u.cumsum(dim, dtype=torch_dtype(dtype)), dim)


def test_non_contiguous_inputs_match_pytorch():
    a = sample((4, 6), tp.float32, nan=True)
    t, u = pair(a)
    for tt, uu in ((t.t(), u.t()), (tp.ops.tensorplug.slice.Tensor(t, 1, 0, None, 2), u[:, ::2])):
        for dim in (0, 1):
            assert_same(lambda: tt.sum(dim), lambda: uu.sum(dim), dim)
            assert_same(lambda: tt.max(dim), lambda: uu.max(dim), dim)
            assert_same(lambda: tt.argmin(dim), lambda: uu.argmin(dim), dim)
            assert_same(lambda: tt.cumsum(dim), lambda: uu.cumsum(dim), dim)
