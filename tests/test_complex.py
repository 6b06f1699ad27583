"""Complex dtypes and tensorplug.fft without PyTorch: metadata, promotion, views over shared memory,
conjugation, numpy references, gradcheck of complex functions, vmap against a loop, and the other backends."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.fft as tfft
from tensorplug.autograd import gradcheck, gradgradcheck


def crand(shape, dtype=tp.complex128, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)
    return tp.tensor(v.astype(dtype.np))


# -- dtypes -------------------------------------------------------------------------------------------------
def test_complex_dtypes_and_their_names():
    assert tp.cfloat is tp.complex64 and tp.cdouble is tp.complex128
    for d, real, size in ((tp.complex64, tp.float32, 8), (tp.complex128, tp.float64, 16)):
        assert d.is_complex and not d.is_floating_point and d.itemsize == size and d.is_signed
        assert d.to_real() is real and real.to_complex() is d and d.to_complex() is d
        assert np.dtype(d.np).kind == "c" and np.dtype(d.np).itemsize == size
    assert tp.float32.to_real() is tp.float32 and tp.bfloat16.to_complex() is tp.complex64
    assert not tp.float32.is_complex and not tp.int64.is_complex
    with pytest.raises(TypeError, match="ComplexHalf"):
        tp.float16.to_complex()
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for Long"):
        tp.int64.to_complex()


@pytest.mark.parametrize("other,want64,want128", [
    (tp.bool, tp.complex64, tp.complex128), (tp.int64, tp.complex64, tp.complex128),
    (tp.float16, tp.complex64, tp.complex128), (tp.float32, tp.complex64, tp.complex128),
    (tp.float64, tp.complex128, tp.complex128), (tp.complex64, tp.complex64, tp.complex128),
])
def test_promote_types_with_complex(other, want64, want128):
    assert tp.promote_types(other, tp.complex64) is want64 and tp.promote_types(tp.complex64, other) is want64
    assert tp.promote_types(other, tp.complex128) is want128


def test_result_types_of_mixed_operands():
    f32, f64 = tp.ones(2), tp.ones(2, dtype=tp.float64)
    assert (f32 + 1j).dtype is tp.complex64 and (f64 + 1j).dtype is tp.complex128
    assert (tp.arange(3) + 2j).dtype is tp.complex64
    # a complex zero-dim tensor keeps a dimensioned float tensor's precision
    assert (f32 + tp.tensor(1j, dtype=tp.complex128)).dtype is tp.complex64
    assert (tp.arange(3) + tp.tensor(1j, dtype=tp.complex128)).dtype is tp.complex128
    assert tp.result_type(f64, 1j) is tp.complex128
    assert tp.tensor([1, 2j]).dtype is tp.complex64 and tp.tensor(np.array([1j])).dtype is tp.complex128
    assert tp.tensor([1 + 2j]).is_complex() and tp.is_complex(tp.tensor([1j])) and not tp.ones(1).is_complex()


def test_complex_numbers_need_a_complex_destination():
    for call in (lambda: tp.ones(2).add_(1j), lambda: tp.ones(2).mul_(tp.ones(2, dtype=tp.complex64))):
        with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the desired output type Float"):
            call()
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        tp.ones(2).fill_(1j)
    with pytest.raises(TypeError, match="must be real number, not complex"):
        tp.tensor([1, 2j], dtype=tp.float32)
    with pytest.raises(RuntimeError, match="value cannot be converted to type double without overflow"):
        float(tp.tensor(1 + 1j))
    assert complex(tp.tensor(1 + 2j)) == 1 + 2j and tp.tensor([1 + 2j]).tolist() == [1 + 2j]


# -- views, conjugation --------------------------------------------------------------------------------------
def test_real_imag_and_view_as_real_share_memory():
    z = crand((3, 4), tp.complex64)
    r, i, v = z.real, z.imag, tp.view_as_real(z)
    assert r.dtype is tp.float32 and r._base is z and v.shape == (3, 4, 2) and v.stride() == (8, 2, 1)
    np.testing.assert_array_equal(r.numpy(), z.numpy().real)
    np.testing.assert_array_equal(v.numpy()[..., 1], z.numpy().imag)
    before = z.numpy().copy()
    r.mul_(2)
    i[0, 0] = 7
    np.testing.assert_array_equal(z.numpy().real, before.real * 2)
    assert z[0, 0].item().imag == 7
    z.imag = tp.zeros(3, 4)
    assert not z.numpy().imag.any()
    back = tp.view_as_complex(v)
    assert back.dtype is tp.complex64 and back._base is z and back.shape == z.shape
    w = z.t()  # strided views keep their strides
    np.testing.assert_array_equal(tp.view_as_real(w).numpy(), np.stack([w.numpy().real, w.numpy().imag], -1))
    x = tp.ones(3)
    assert x.real is x and tp.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes."):
        x.imag


def test_conj_is_computed_and_consistent():
    z = crand((4,))
    c = z.conj()
    np.testing.assert_array_equal(c.numpy(), np.conj(z.numpy()))
    assert not c.is_conj() and not tp.is_conj(c) and c.resolve_conj() is c
    np.testing.assert_array_equal(tp.conj_physical(z).numpy(), c.numpy())
    x = tp.ones(2)
    assert x.conj() is x and tp.conj_physical(x) is x
    y = z.clone()
    assert y.conj_physical_() is y
    np.testing.assert_array_equal(y.numpy(), c.numpy())


def test_abs_angle_polar_complex_against_numpy():
    z = crand((3, 4), tp.complex64)
    a = z.numpy()
    assert z.abs().dtype is tp.float32 and z.angle().dtype is tp.float32
    np.testing.assert_allclose(z.abs().numpy(), np.abs(a), rtol=1e-6)
    np.testing.assert_allclose(z.angle().numpy(), np.angle(a), rtol=1e-6)
    np.testing.assert_allclose(tp.polar(z.abs(), z.angle()).numpy(), a, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(tp.complex(z.real, z.imag).numpy(), a)
    assert tp.complex(tp.ones(3, 1), tp.zeros(2)).shape == (3, 2)
    x = tp.tensor([-0.0, 0.0, float("nan"), -2.0, 3.0])
    np.testing.assert_array_equal(x.angle().numpy(), np.array([0, 0, np.nan, np.pi, 0], dtype=np.float32))
    assert tp.tensor([-1, 2]).angle().dtype is tp.float32


# -- gradients -------------------------------------------------------------------------------------------------
FUNCTIONS = [
    lambda z: z * z, lambda z: z / (z + 3), lambda z: z.exp(), lambda z: z.log(), lambda z: z.sqrt(),
    lambda z: z.reciprocal(), lambda z: z.sin(), lambda z: z.cos(), lambda z: z.tanh(), lambda z: z ** 2.5,
    lambda z: z.abs(), lambda z: z.angle(), lambda z: z.real, lambda z: z.imag, lambda z: z.conj(),
    lambda z: z.sum(), lambda z: z.mean(), lambda z: z.prod(), lambda z: z.var(), lambda z: tp.view_as_real(z),
    lambda z: z.reshape(3, 1) @ z.reshape(1, 3), lambda z: tfft.fft(z), lambda z: tfft.ifft(z, n=5, norm="ortho"),
    lambda z: tfft.hfft(z), lambda z: tfft.irfft(z, n=4), lambda z: tfft.fftn(z.reshape(1, 3), s=(2, 2)),
    lambda z: tfft.fftshift(z),
]


@pytest.mark.parametrize("i", range(len(FUNCTIONS)))
def test_gradcheck_of_complex_functions(i):
    z = (crand((3,), seed=1) + (0.5 + 0.5j)).requires_grad_()
    assert gradcheck(FUNCTIONS[i], (z,))


@pytest.mark.parametrize("f", [lambda x: tfft.rfft(x), lambda x: tfft.ihfft(x, n=6, norm="forward"),
                               lambda x: tfft.rfft2(x.reshape(2, 2)), lambda x: tp.complex(x, x * 2),
                               lambda x: x * (1 + 2j), lambda x: tfft.fft(x)])
def test_gradcheck_of_real_inputs_through_complex_values(f):
    x = tp.tensor([1.0, 2.0, -0.5, 3.0], dtype=tp.float64, requires_grad=True)
    assert gradcheck(f, (x,))


def test_second_order_gradients_of_transforms():
    z = crand((3,), seed=2).requires_grad_()
    assert gradgradcheck(lambda z: tfft.fft(z), (z,))
    x = tp.tensor([1.0, 2.0, -0.5], dtype=tp.float64, requires_grad=True)
    assert gradgradcheck(lambda x: tfft.rfft(x).abs(), (x,))


def test_squared_modulus_gradient_is_twice_the_value():
    z = crand((4,)).requires_grad_()
    (z.abs() ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * z.detach().numpy())


def test_backward_of_a_complex_scalar_raises():
    z = crand((2,)).requires_grad_()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs but got "
                                           "tensorplug.complex128"):
        z.sum().backward()


# -- fft against numpy ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn"])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_complex_transforms_against_numpy(name, norm):
    z = crand((3, 4), tp.complex64)
    got = getattr(tfft, name)(z, norm=norm)
    want = getattr(np.fft, name)(z.numpy().astype(np.complex128), norm=norm)
    assert got.dtype is tp.complex64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_real_transforms_against_numpy():
    x = tp.tensor(np.random.default_rng(3).uniform(-1, 1, (4, 6)), dtype=tp.float32)
    a = x.numpy()
    assert tfft.rfft(x).dtype is tp.complex64 and tfft.irfft(tfft.rfft(x)).dtype is tp.float32
    np.testing.assert_allclose(tfft.rfft(x, n=5).numpy(), np.fft.rfft(a, n=5), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tfft.irfft(tfft.rfft(x)).numpy(), a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tfft.rfftn(x).numpy(), np.fft.rfftn(a), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tfft.irfftn(tfft.rfftn(x), s=(4, 6)).numpy(), a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tfft.hfft(tfft.ihfft(x)).numpy(), a, rtol=1e-5, atol=1e-6)
    assert tfft.fft(tp.arange(4)).dtype is tp.complex64
    np.testing.assert_allclose(tfft.fftfreq(5, 0.5).numpy(), np.fft.fftfreq(5, 0.5), rtol=1e-6)
    np.testing.assert_allclose(tfft.rfftfreq(6).numpy(), np.fft.rfftfreq(6), rtol=1e-6)
    np.testing.assert_array_equal(tfft.fftshift(x).numpy(), np.fft.fftshift(a))
    np.testing.assert_array_equal(tfft.ifftshift(x, dim=1).numpy(), np.fft.ifftshift(a, 1))


def test_fft_namespace_loads_lazily():
    import subprocess
    import sys
    code = "import sys, tensorplug as tp; a = 'tensorplug.fft' in sys.modules; tp.fft.fft; print(a, 'tensorplug.fft' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


# -- vmap ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("f", [
    lambda z: z * z.conj(), lambda z: z.abs(), lambda z: z.real + z.imag, lambda z: tp.view_as_real(z),
    lambda z: tfft.fft(z), lambda z: tfft.ifft(z, n=7), lambda z: tfft.hfft(z), lambda z: tfft.fft2(z.reshape(2, 2)),
    lambda z: tp.view_as_complex(tp.view_as_real(z) * 2), lambda z: z.angle(), lambda z: z.sum() * z,
])
@pytest.mark.parametrize("in_dims", [0, 1])
def test_vmap_of_complex_functions_matches_a_loop(f, in_dims):
    z = crand((4, 4), tp.complex64, seed=5)
    got = tp.vmap(f, in_dims=in_dims)(z)
    want = tp.stack([f(z.select(in_dims, i)) for i in range(4)])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_vmap_of_real_transforms_matches_a_loop():
    x = tp.tensor(np.random.default_rng(6).uniform(-1, 1, (3, 5)))
    for f in (tfft.rfft, tfft.ihfft, lambda v: tfft.irfft(tfft.rfft(v), n=5)):
        want = tp.stack([f(x[i]) for i in range(3)])
        np.testing.assert_allclose(tp.vmap(f)(x).numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


# -- other backends ----------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:.*falling back to the CPU:UserWarning")  # openreg says so, as it should
@pytest.mark.parametrize("device", ["openreg", "minimal"])
def test_backends_without_complex_kernels_fall_back_to_the_cpu(device):
    pytest.importorskip("tensorplug_" + device)
    z = crand((3,), tp.complex64)
    d = z.to(device)
    assert d.device.type == device and d.dtype is tp.complex64
    np.testing.assert_allclose((d * d).cpu().numpy(), z.numpy() ** 2, rtol=1e-6)
    np.testing.assert_allclose(tfft.fft(d).cpu().numpy(), np.fft.fft(z.numpy()), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(d.real.cpu().numpy(), z.numpy().real)
    assert d.real.device.type == device


def test_save_and_load_of_complex64_and_the_complex128_error(tmp_path):
    z = crand((2, 3), tp.complex64)
    tp.save({"z": z, "re": z.real}, tmp_path / "c.pt")
    back = tp.load(tmp_path / "c.pt")
    assert back["z"].dtype is tp.complex64
    np.testing.assert_array_equal(back["z"].numpy(), z.numpy())
    np.testing.assert_array_equal(back["re"].numpy(), z.numpy().real)
    with pytest.raises(TypeError, match="the safetensors format has no dtype for tensorplug.complex128"):
        tp.save(crand((2,)), tmp_path / "d.pt")
