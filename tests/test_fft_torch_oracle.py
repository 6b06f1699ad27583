"""tensorplug.fft against torch.fft: values and dtypes for every transform, size and norm argument, the
errors of bad arguments, gradients (float64 and complex128 inputs), vmap, and the frequency helpers."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.fft as tfft

torch = pytest.importorskip("torch")

DTYPES = {"float32": (tp.float32, torch.float32), "float64": (tp.float64, torch.float64),
          "complex64": (tp.complex64, torch.complex64), "complex128": (tp.complex128, torch.complex128),
          "int64": (tp.int64, torch.int64)}


def pair(shape, name, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.uniform(-2, 2, shape)
    if name.startswith("complex"):
        v = v + 1j * rng.uniform(-2, 2, shape)
    if name == "int64":
        v = np.round(v * 3)
    a, b = DTYPES[name]
    return tp.tensor(v, dtype=a), torch.tensor(v, dtype=b)


def same(t, u, rtol=None, atol=None):
    assert str(t.dtype).split(".")[-1] == str(u.dtype).split(".")[-1], (t.dtype, u.dtype)
    assert tuple(t.shape) == tuple(u.shape), (t.shape, u.shape)
    single = u.dtype in (torch.float32, torch.complex64)
    rtol = rtol if rtol is not None else (2e-5 if single else 1e-10)
    atol = atol if atol is not None else (2e-5 if single else 1e-10)
    np.testing.assert_allclose(t.detach().numpy(), u.detach().resolve_conj().numpy(), rtol=rtol, atol=atol)


ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn"}
KWARGS_1D = [{}, {"n": 3}, {"n": 9}, {"dim": 0}, {"n": 6, "dim": 0, "norm": "ortho"}, {"norm": "forward"},
             {"norm": "backward"}, {"dim": -2, "n": 1}]


def _inputs(names, dtypes):
    """(transform, dtype) pairs; real transforms take real inputs only (their complex-input error is a case of
    test_bad_arguments_raise_pytorchs_errors)."""
    return [(n, d) for n in names for d in dtypes if not (n in REAL_ONLY and d.startswith("complex"))]


@pytest.mark.parametrize("name,dtype", _inputs(ONE_D, list(DTYPES)))
@pytest.mark.parametrize("kw", KWARGS_1D, ids=str)
def test_one_dimensional_transforms_match_pytorch(name, dtype, kw):
    t, u = pair((4, 5), dtype)
    if name in ("irfft", "hfft") and kw.get("n") == 1 and kw.get("dim") == -2:
        kw = {"n": 2, "dim": -2}
    same(getattr(tfft, name)(t, **kw), getattr(torch.fft, name)(u, **kw))


N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
KWARGS_ND = [{}, {"s": (3, 4)}, {"s": (2, 8), "norm": "ortho"}, {"dim": (0, 2)}, {"dim": (-1, 0), "s": (4, 3)},
             {"s": (-1, 6)}, {"norm": "forward", "dim": (1,)}, {"dim": 1}]


@pytest.mark.parametrize("name,dtype", _inputs(N_D, ["float32", "float64", "complex64", "complex128"]))
@pytest.mark.parametrize("kw", KWARGS_ND, ids=str)
def test_n_dimensional_transforms_match_pytorch(name, dtype, kw):
    if name.endswith("2") and "dim" in kw and len(kw["dim"] if isinstance(kw["dim"], tuple) else (1,)) != 2:
        kw = {k: v for k, v in kw.items() if k != "dim"}
    t, u = pair((3, 4, 5), dtype)
    try:
        want = getattr(torch.fft, name)(u, **kw)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=str(e)[:30]):
            getattr(tfft, name)(t, **kw)
        return
    same(getattr(tfft, name)(t, **kw), want)


BAD = [
    ("fft", lambda m, x: m.fft.fft(x, n=0)), ("fft", lambda m, x: m.fft.fft(x, dim=3)),
    ("fft", lambda m, x: m.fft.fft(x, norm="foo")), ("fft", lambda m, x: m.fft.fft(x.half())),
    ("fft", lambda m, x: m.fft.fft(x.bfloat16())), ("fft", lambda m, x: m.fft.fft(x.sum())),
    ("fft", lambda m, x: m.fft.fft(m.ones(0))), ("rfft", lambda m, x: m.fft.rfft(x.to(m.complex64))),
    ("ihfft", lambda m, x: m.fft.ihfft(x.to(m.complex64))), ("irfft", lambda m, x: m.fft.irfft(m.ones(1))),
    ("hfft", lambda m, x: m.fft.hfft(x, n=0)), ("fftn", lambda m, x: m.fft.fftn(x, s=(2, 2), dim=(0,))),
    ("fftn", lambda m, x: m.fft.fftn(x, s=(2, 2, 2, 2))), ("fftn", lambda m, x: m.fft.fftn(x, dim=(0, 0))),
    ("rfftn", lambda m, x: m.fft.rfftn(x, dim=())), ("rfftn", lambda m, x: m.fft.rfftn(x.to(m.complex128))),
    ("fft2", lambda m, x: m.fft.fft2(x[0, 0])), ("fftn", lambda m, x: m.fft.fftn(x, s=(2, 0))),
    ("irfftn", lambda m, x: m.fft.irfftn(x, s=(2, 0))), ("ifft", lambda m, x: m.fft.ifft([1.0, 2.0])),
    ("fftfreq", lambda m, x: m.fft.fftfreq(4, dtype=m.int64)),
]


@pytest.mark.parametrize("i", range(len(BAD)), ids=lambda i: BAD[i][0])
def test_bad_arguments_raise_pytorchs_errors(i):
    t, u = pair((2, 3, 4), "float32")
    with pytest.raises(Exception) as want:
        BAD[i][1](torch, u)
    with pytest.raises(Exception) as got:
        BAD[i][1](tp, t)
    assert got.type is want.type, (got.value, want.value)
    assert str(got.value) == str(want.value).split("\n")[0], (got.value, want.value)


def grads(m, f, v):
    x = m.tensor(v, requires_grad=True)
    f(m, x).backward()
    return x.grad


LOSSES = [
    lambda m, x: m.fft.fft(x).abs().sum(), lambda m, x: m.fft.ifft(x, n=7, norm="ortho").real.sum(),
    lambda m, x: m.fft.fft(x, n=3).imag.pow(2).sum(), lambda m, x: m.fft.fftn(x.reshape(2, 3)).abs().sum(),
    lambda m, x: m.fft.ifft2(x.reshape(2, 3), s=(3, 4), norm="forward").abs().sum(),
    lambda m, x: m.view_as_real(m.fft.fft(x)).sum(),
    lambda m, x: (m.fft.fft(x) * m.fft.ifft(x)).real.sum(),
]
REAL_LOSSES = [
    lambda m, x: m.fft.rfft(x).abs().sum(), lambda m, x: m.fft.rfft(x, n=9, norm="forward").real.sum(),
    lambda m, x: m.fft.rfft(x, n=4).imag.sum(), lambda m, x: m.fft.ihfft(x).abs().sum(),
    lambda m, x: m.fft.rfft2(x.reshape(2, 3)).abs().sum(), lambda m, x: m.fft.rfftn(x.reshape(3, 2), s=(3, 5)).abs().sum(),
    lambda m, x: m.fft.fft(x).abs().sum(), lambda m, x: m.fft.irfft(m.fft.rfft(x), n=6).pow(2).sum(),
    lambda m, x: (m.fft.fftshift(x) * m.arange(6.0, dtype=m.float64)).sum(),
    lambda m, x: (m.fft.ifftshift(x.reshape(2, 3)) * m.arange(6.0, dtype=m.float64).reshape(2, 3)).sum(),
]
COMPLEX_TO_REAL_LOSSES = [
    lambda m, x: m.fft.irfft(x).pow(2).sum(), lambda m, x: m.fft.irfft(x, n=7, norm="ortho").sum(),
    lambda m, x: (m.fft.hfft(x) * m.arange(10.0, dtype=m.float64)).sum(),
    lambda m, x: m.fft.hfft(x, n=5, norm="forward").pow(3).sum(),
    lambda m, x: m.fft.irfft2(x.reshape(2, 3)).pow(2).sum(),
    lambda m, x: m.fft.irfftn(x.reshape(3, 2), s=(3, 4)).pow(2).sum(),
]


@pytest.mark.parametrize("i", range(len(LOSSES)))
def test_gradients_of_complex_transforms_match_pytorch(i):
    v = pair((6,), "complex128")[0].numpy()
    same(grads(tp, LOSSES[i], v), grads(torch, LOSSES[i], v))


@pytest.mark.parametrize("i", range(len(REAL_LOSSES)))
def test_gradients_of_real_input_transforms_match_pytorch(i):
    v = pair((6,), "float64")[0].numpy()
    same(grads(tp, REAL_LOSSES[i], v), grads(torch, REAL_LOSSES[i], v))


@pytest.mark.parametrize("i", range(len(COMPLEX_TO_REAL_LOSSES)))
def test_gradients_of_transforms_to_real_match_pytorch(i):
    v = pair((6,), "complex128")[0].numpy()
    same(grads(tp, COMPLEX_TO_REAL_LOSSES[i], v), grads(torch, COMPLEX_TO_REAL_LOSSES[i], v))


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies_match_pytorch(n, d):
    same(tfft.fftfreq(n, d), torch.fft.fftfreq(n, d))
    same(tfft.rfftfreq(n, d), torch.fft.rfftfreq(n, d))
    same(tfft.fftfreq(n, d, dtype=tp.float64), torch.fft.fftfreq(n, d, dtype=torch.float64))


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), (-1,)])
@pytest.mark.parametrize("shape", [(4, 5), (3, 6)])
def test_shifts_match_pytorch(dim, shape):
    t, u = pair(shape, "complex64")
    same(tfft.fftshift(t, dim), torch.fft.fftshift(u, dim))
    same(tfft.ifftshift(t, dim), torch.fft.ifftshift(u, dim))


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "rfftn", "irfftn"])
@pytest.mark.parametrize("in_dims", [0, 1])
def test_vmap_of_transforms_matches_pytorch(name, in_dims):
    dtype = "float64" if name in REAL_ONLY else "complex128"
    t, u = pair((3, 4, 5), dtype)
    same(tp.vmap(getattr(tfft, name), in_dims=in_dims)(t), torch.vmap(getattr(torch.fft, name), in_dims=in_dims)(u))
