"""Scans, order statistics, quantiles and NaN-aware reductions against PyTorch: values, indices, dtypes,
shapes, gradients (cumprod with zeros in the input) and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp

torch = pytest.importorskip("torch")

ALL_DTYPES = [tp.bool, tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32,
              tp.float64]
NAN = math.nan


def pair(values, dtype=tp.float64):
    v = np.asarray(values)
    return tp.tensor(v).to(dtype), torch.tensor(v).to(getattr(torch, dtype.name))


def same(got, want, exact=False):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w, exact)
        return
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype.name == str(want.dtype).split(".")[1]
    g = got.to(tp.float64).numpy() if got.dtype is not tp.bool else got.numpy()
    w = want.double().numpy() if want.dtype is not torch.bool else want.numpy()
    if exact:
        assert np.array_equal(g, w, equal_nan=True), (g, w)
    else:
        assert np.allclose(g, w, rtol=1e-6, atol=1e-6, equal_nan=True), (g, w)


DATA = np.array([[3.0, 1.0, 4.0, 1.5, 5.0, 9.0], [2.0, 6.0, 5.5, 3.5, 5.0, 8.0], [9.0, 7.0, 9.5, 3.0, 2.0, 3.8]])
NAN_DATA = np.array([[3.0, NAN, 1.0, NAN, 2.0], [5.0, 4.0, 4.5, 1.0, 9.0], [NAN] * 5])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", ["cumprod", "cummax", "cummin", "logcumsumexp"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scans(name, dtype, dim):
    v = np.array([[1, 0, 2, 2, 1], [2, 1, 1, 0, 2]])
    a, t = pair(v, dtype)
    try:
        want = getattr(torch, name)(t, dim)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e), match=str(e).replace("(", r"\(").replace(")", r"\)")):
            getattr(tp, name)(a, dim)
        return
    got = getattr(tp, name)(a, dim)
    same(tuple(got) if isinstance(want, tuple) else got, tuple(want) if isinstance(want, tuple) else want,
         exact=dtype is tp.float64 or not dtype.is_floating_point or name != "logcumsumexp")


def test_scans_with_nan_and_ties():
    a, t = pair([1.0, 3.0, 3.0, NAN, 2.0, NAN, -math.inf])
    for name in ("cummax", "cummin"):
        same(tuple(getattr(tp, name)(a, 0)), tuple(getattr(torch, name)(t, 0)), exact=True)
    same(tp.cumprod(a, 0), torch.cumprod(t, 0), exact=True)
    same(tp.logcumsumexp(a, 0), torch.logcumsumexp(t, 0))
    a, t = pair([-math.inf, -math.inf, 0.0, math.inf, 1.0])
    same(tp.logcumsumexp(a, 0), torch.logcumsumexp(t, 0))
    same(tp.cumprod(tp.tensor([1, 2, 3], dtype=tp.int8), 0, dtype=tp.float32),
         torch.cumprod(torch.tensor([1, 2, 3], dtype=torch.int8), 0, dtype=torch.float32))


@pytest.mark.parametrize("values", [[2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 3.0, 1.5], [1.5, 2.0, 0.5, 0.0],
                                    [[1.0, 0.0, 2.0], [0.0, 3.0, 0.5]]])
def test_cumprod_gradient_with_zeros(values):
    for dim in range(np.ndim(values)):
        a = tp.tensor(values, dtype=tp.float64, requires_grad=True)
        t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
        w = np.arange(1, np.size(values) + 1, dtype=np.float64).reshape(np.shape(values))
        (tp.cumprod(a, dim) * tp.tensor(w)).sum().backward()
        (torch.cumprod(t, dim) * torch.tensor(w)).sum().backward()
        assert np.allclose(a.grad.numpy(), t.grad.numpy())
        # second order too
        a = tp.tensor(values, dtype=tp.float64, requires_grad=True)
        t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
        ga, = tp.autograd.grad(tp.cumprod(a, dim).sum(), a, create_graph=True)
        gt, = torch.autograd.grad(torch.cumprod(t, dim).sum(), t, create_graph=True)
        hga, = tp.autograd.grad((ga * ga).sum(), a)
        hgt, = torch.autograd.grad((gt * gt).sum(), t)
        assert np.allclose(hga.numpy(), hgt.numpy())


@pytest.mark.parametrize("name", ["cummax", "cummin", "logcumsumexp", "median", "nanmedian", "kthvalue", "mode"])
def test_selection_gradients(name):
    v = DATA
    a = tp.tensor(v, requires_grad=True)
    t = torch.tensor(v, requires_grad=True)
    w = np.arange(v.size, dtype=np.float64).reshape(v.shape)

    def call(m, x):
        if name == "kthvalue":
            out = m.kthvalue(x, 2, 1)[0]
        elif name in ("cummax", "cummin"):
            out = getattr(m, name)(x, 1)[0]
        elif name == "logcumsumexp":
            out = m.logcumsumexp(x, 1)
        else:
            out = getattr(m, name)(x, 1)[0]
        return out
    (call(tp, a) * tp.tensor(w[:, :call(tp, a).shape[-1]] if call(tp, a).dim() == 2 else w[:, 0])).sum().backward()
    (call(torch, t) * torch.tensor(w[:, :call(torch, t).shape[-1]] if call(torch, t).dim() == 2 else w[:, 0])).sum() \
        .backward()
    assert np.allclose(a.grad.numpy(), t.grad.numpy())


def test_global_median_gradient_splits_ties():
    for m in ("median", "nanmedian"):
        a = tp.tensor([1.0, 2.0, 2.0, 5.0, 2.0, 7.0], requires_grad=True)
        t = torch.tensor([1.0, 2.0, 2.0, 5.0, 2.0, 7.0], requires_grad=True)
        getattr(tp, m)(a).backward()
        getattr(torch, m)(t).backward()
        assert np.allclose(a.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), (-1, False)])
def test_median(name, dim, keepdim):
    for data in (DATA, NAN_DATA):
        a, t = pair(data)
        if dim is None:
            same(getattr(tp, name)(a), getattr(torch, name)(t), exact=True)
        else:
            same(tuple(getattr(tp, name)(a, dim, keepdim)), tuple(getattr(torch, name)(t, dim, keepdim)), exact=True)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_order_statistics_dtypes(dtype):
    v = np.array([[3, 1, 4, 1, 5], [2, 6, 5, 3, 5]])
    a, t = pair(v, dtype)
    for call in (lambda m, x: m.median(x, 1), lambda m, x: m.nanmedian(x, 0), lambda m, x: m.median(x),
                 lambda m, x: m.kthvalue(x, 2, 1), lambda m, x: m.mode(x, 1), lambda m, x: m.aminmax(x, dim=1),
                 lambda m, x: m.aminmax(x)):
        try:
            want = call(torch, t)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)) as got:
                call(tp, a)
            assert str(got.value) == str(e)
            continue
        got = call(tp, a)
        if isinstance(want, tuple):
            same(got[0], want[0], exact=True)  # ties may pick other indices
        else:
            same(got, want, exact=True)


def test_mode_and_kthvalue():
    a, t = pair([[1, 2, 2, 3, 3, 1], [5, 5, 5, 1, 1, 1]], tp.int64)
    same(tuple(tp.mode(a, 1)), tuple(torch.mode(t, 1)), exact=True)
    same(tuple(tp.mode(a, 0, True)), tuple(torch.mode(t, 0, True)), exact=True)
    a, t = pair([1.0, NAN, NAN, 2.0])
    same(tuple(tp.mode(a)), tuple(torch.mode(t)), exact=True)
    a, t = pair([3.0, 1.0, 2.0, NAN])
    for k in (1, 2, 3, 4):
        same(tuple(tp.kthvalue(a, k)), tuple(torch.kthvalue(t, k)), exact=True)
    a, t = pair(DATA)
    same(tuple(tp.kthvalue(a, 3, 0, True)), tuple(torch.kthvalue(t, 3, 0, True)), exact=True)
    same(tuple(tp.aminmax(a, dim=0, keepdim=True)), tuple(torch.aminmax(t, dim=0, keepdim=True)), exact=True)
    same(tuple(tp.aminmax(a, keepdim=True)), tuple(torch.aminmax(t, keepdim=True)), exact=True)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("q", [0.0, 0.3, 0.5, 1.0, [0.1, 0.5, 0.9, 0.25], [0.5]])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (0, False), (1, True), (-1, False)])
def test_quantile(name, interpolation, q, dim, keepdim):
    for data in (DATA, NAN_DATA, DATA[:1, :5]):
        for dtype in (tp.float32, tp.float64):
            a, t = pair(data, dtype)
            qa, qt = (q, q) if isinstance(q, float) else pair(q, dtype)
            got = getattr(tp, name)(a, qa, dim, keepdim, interpolation=interpolation)
            want = getattr(torch, name)(t, qt, dim, keepdim, interpolation=interpolation)
            same(got, want)


def test_quantile_gradient():
    for name in ("quantile", "nanquantile"):
        a = tp.tensor(DATA, requires_grad=True)
        t = torch.tensor(DATA, requires_grad=True)
        getattr(tp, name)(a, tp.tensor([0.2, 0.7], dtype=tp.float64), 1).sum().backward()
        getattr(torch, name)(t, torch.tensor([0.2, 0.7], dtype=torch.float64), 1).sum().backward()
        assert np.allclose(a.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("call", [lambda m, x: m.nansum(x), lambda m, x: m.nansum(x, 1, keepdim=True),
                                  lambda m, x: m.nanmean(x), lambda m, x: m.nanmean(x, 0),
                                  lambda m, x: m.nansum(x, dtype=m.float64), lambda m, x: m.count_nonzero(x, 1)])
def test_nan_reductions(dtype, call):
    data = np.array([[NAN, 1.0, 2.0], [3.0, NAN, NAN]]) if dtype.is_floating_point else np.array([[0, 1, 2], [3, 0, 1]])
    a, t = pair(data, dtype)
    try:
        want = call(torch, t)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as got:
            call(tp, a)
        assert str(got.value) == str(e)
        return
    same(call(tp, a), want)


def test_nan_reductions_gradient():
    v = np.array([[NAN, 1.0, 2.0], [3.0, NAN, 4.0]])
    for name in ("nansum", "nanmean"):
        a = tp.tensor(v, requires_grad=True)
        t = torch.tensor(v, requires_grad=True)
        getattr(tp, name)(a, 1).sum().backward()
        getattr(torch, name)(t, 1).sum().backward()
        assert np.allclose(a.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("args,kw", [((0, 3, 4), {}), ((-1.0, 2.0, 7), {"base": 2.0}), ((1, 1, 1), {}),
                                     ((0, 2, 3), {"dtype": "int64"}), ((0, 2, 0), {}),
                                     ((2, -1, 5), {"base": 3, "dtype": "float64"})])
def test_logspace(args, kw):
    tkw = {k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()}
    pkw = {k: getattr(tp, v) if k == "dtype" else v for k, v in kw.items()}
    same(tp.logspace(*args, **pkw), torch.logspace(*args, **tkw))


def test_clamp_with_tensor_bounds():
    a, t = pair(DATA)
    lo, tlo = pair([2.0, 3.0, 1.0, 4.0, 2.0, 3.0])
    hi, thi = pair([[5.0], [6.0], [4.0]])
    same(tp.clamp_min(a, lo), torch.clamp_min(t, tlo))
    same(tp.clamp_max(a, hi), torch.clamp_max(t, thi))
    same(tp.clamp(a, lo, hi), torch.clamp(t, tlo, thi))
    same(tp.clip(a, min=lo), torch.clip(t, min=tlo))
    same(a.clamp_min(3), t.clamp_min(3))
    b, tb = a.clone(), t.clone()
    b.clamp_min_(lo)
    tb.clamp_min_(tlo)
    same(b, tb)
    b.clamp_max_(hi)
    tb.clamp_max_(thi)
    same(b, tb)
    ai, ti = pair([[1, 5], [7, 2]], tp.int64)
    same(tp.clamp_min(ai, tp.tensor([2.5, 3.5])), torch.clamp_min(ti, torch.tensor([2.5, 3.5])))


ERRORS = [
    lambda m: m.logcumsumexp(m.tensor([1, 2]), 0),
    lambda m: m.kthvalue(m.tensor([1.0, 2.0]), 3),
    lambda m: m.kthvalue(m.tensor([1.0, 2.0]), 0),
    lambda m: m.median(m.ones(0), 0),
    lambda m: m.mode(m.ones(0), 0),
    lambda m: m.median(m.tensor([True]), 0),
    lambda m: m.quantile(m.tensor([1, 2]), 0.5),
    lambda m: m.quantile(m.tensor([1.0, 2.0]), 1.5),
    lambda m: m.quantile(m.tensor([1.0, 2.0]), m.tensor([[0.5]])),
    lambda m: m.quantile(m.tensor([1.0, 2.0]), m.tensor([1.5])),
    lambda m: m.quantile(m.tensor([1.0, 2.0]), 0.5, interpolation="bad"),
    lambda m: m.quantile(m.ones(0), 0.5),
    lambda m: m.quantile(m.tensor([1.0, 2.0]), m.tensor([0.5], dtype=m.float64)),
    lambda m: m.nanmean(m.tensor([1, 2])),
    lambda m: m.cumprod(m.ones(2), 2),
    lambda m: m.cummax(m.ones(2), 2),
    lambda m: m.aminmax(m.ones(0)),
    lambda m: m.logspace(0, 2, -1),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_match(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(tp)
    assert str(got.value) == str(want.value)


def test_vmap_matches_a_loop():
    x = tp.tensor(DATA)
    for f in (lambda r: tp.cumprod(r, 0), lambda r: tp.logcumsumexp(r, 0), lambda r: tp.cummax(r, 0)[1],
              lambda r: tp.median(r, 0)[0], lambda r: tp.nanmedian(r, 0)[1], lambda r: tp.kthvalue(r, 2, 0)[0],
              lambda r: tp.mode(r, 0)[0], lambda r: tp.quantile(r, 0.3), lambda r: tp.nansum(r),
              lambda r: tp.special.i0e(r), lambda r: tp.polygamma(2, r), lambda r: tp.special.zeta(3.0, r)):
        got = tp.vmap(f)(x)
        want = tp.stack([f(r) for r in x])
        assert np.allclose(got.to(tp.float64).numpy(), want.to(tp.float64).numpy())
