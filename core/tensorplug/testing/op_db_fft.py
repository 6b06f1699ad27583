"""Op database entries of complex numbers and ``tensorplug.fft``.

The complex-number ops (``view_as_real``, ``real``, ``angle``, ``complex``...), the
elementwise, reduction and product ops on complex tensors (entries named
``<op>.complex``, whose dtypes are complex64 and complex128 only: the entries of
:mod:`.op_db` keep their real dtypes), and every transform of ``tensorplug.fft``
(named ``fft.<name>``). Complex samples hold values from numpy's generator with real
and imaginary parts in [-2, 2]; references compute with numpy (``numpy.fft`` in
complex128) and cast to PyTorch's result dtype. Gradient samples are complex128 (or
float64 for transforms of real inputs) and pass gradcheck, which checks complex
inputs and outputs as pairs of reals.
"""

from __future__ import annotations

import numpy as np

import tensorplug as tp
import tensorplug.fft as tfft

from . import samples as S
from .opinfo import OP_DB, OpInfo, SampleInput
from .samples import error_input as _err, errors_of as _errors

# op_db imports this module at its end, so the few helpers it shares are restated here (no cycle)
_DIM_RANGE = r"Dimension out of range \(expected to be in range of \[-?\d+, -?\d+\], but got -?\d+\)"


def _add(name, op, ref, dtypes, samples, **kw):
    info = OpInfo(name=name, op=op, ref=ref, dtypes=tuple(dtypes), sample_inputs=samples, **kw)
    OP_DB.append(info)
    return info


def _method(name):
    return getattr(tp.Tensor, name)


def _t(shape, dtype=tp.float32, seed=0):
    return S.make_tensor(shape, dtype, seed=seed)

COMPLEX = S.COMPLEX
REAL = (tp.float32, tp.float64)
REAL_AND_COMPLEX = REAL + COMPLEX
_NP_COMPLEX = {tp.float32: np.complex64, tp.float64: np.complex128, tp.complex64: np.complex64,
               tp.complex128: np.complex128}
_NP_REAL = {tp.complex64: np.float32, tp.complex128: np.float64, tp.float32: np.float32, tp.float64: np.float64}


def ctensor(shape, dtype, seed=0, low=-2.0, high=2.0, noncontiguous=False, requires_grad=False):
    """A tensor of ``shape``: complex values with parts in [low, high] (real dtypes: the real parts)."""
    rng = np.random.default_rng(seed)
    full = shape[:-1] + (2 * shape[-1],) if noncontiguous and shape else shape
    v = rng.uniform(low, high, full)
    if dtype.is_complex:
        v = v + 1j * rng.uniform(low, high, full)
    t = tp.tensor(v.astype(dtype.np))
    if noncontiguous and shape:
        t = t[..., ::2]
    return t.requires_grad_(True) if requires_grad else t


def _layouts(dtype, requires_grad, shapes=((3, 4), (5,), ()), low=-2.0, high=2.0):
    for i, shape in enumerate(shapes):
        yield SampleInput(ctensor(shape, dtype, seed=i, low=low, high=high, requires_grad=requires_grad),
                          name=f"shape{shape}")
    if not requires_grad:
        yield SampleInput(ctensor((2, 3), dtype, seed=9, noncontiguous=True), name="noncontiguous")


def _layouts_of():
    def gen(device, dtype, requires_grad):
        yield from _layouts(dtype, requires_grad)
        if dtype.is_complex and not requires_grad:
            yield SampleInput(tp.tensor([0j, 1j, -3 + 4j], dtype=dtype), name="with_zero")
    return gen


def _unary_samples(low=-2.0, high=2.0, shapes=((3, 4), (5,), ())):
    def gen(device, dtype, requires_grad):
        yield from _layouts(dtype, requires_grad, shapes, low, high)
    return gen


def _in(dtype):
    return _NP_COMPLEX[dtype] if dtype.is_complex else _NP_REAL[dtype]


def _cast_like(np_fn):
    """Reference computing in complex128 and returning the input's dtype."""
    def ref(a, *args, **kw):
        return np.asarray(np_fn(a.astype(np.complex128), *args, **kw)).astype(a.dtype)
    return ref


# -- complex-number ops ----------------------------------------------------------------------------------
def _view_as_complex_samples(device, dtype, requires_grad):
    for i, shape in enumerate(((3, 2), (2, 3, 2), (2,))):
        yield SampleInput(ctensor(shape, dtype, seed=i, requires_grad=requires_grad), name=f"shape{shape}")


_add("view_as_real", tp.view_as_real, lambda a: np.stack([a.real, a.imag], -1), COMPLEX, _unary_samples(),
     aten=("view_as_real",), is_view=True,
     error_inputs=_errors(lambda: _err(RuntimeError, "view_as_real is only supported for complex tensors",
                                       _t((3,)))))
_add("view_as_complex", tp.view_as_complex,
     lambda a: (a[..., 0] + 1j * a[..., 1]).astype(_NP_COMPLEX[tp.float32 if a.dtype == np.float32 else tp.float64]),
     REAL, _view_as_complex_samples, aten=("view_as_complex",), is_view=True,
     error_inputs=_errors(
         lambda: _err(RuntimeError, "Tensor must have a last dimension of size 2", _t((2, 3))),
         lambda: _err(RuntimeError, "Tensor must have a last dimension with stride 1", _t((2, 2)).t()),
         lambda: _err(RuntimeError, "Tensor must have a storage_offset divisible by 2", _t((5,))[1:].view(2, 2)),
         lambda: _err(RuntimeError, "view_as_complex is only supported for (half, )?float and double tensors, but "
                                    "got a tensor of scalar type: Int", _t((2, 2), tp.int32))))
_add("real", tp.real, np.real, REAL_AND_COMPLEX, _unary_samples(), aten=("view_as_real", "select.int"), is_view=True)
_add("imag", tp.imag, np.imag, COMPLEX, _unary_samples(), aten=("view_as_real", "select.int"), is_view=True,
     error_inputs=_errors(lambda: _err(RuntimeError, "imag is not implemented for tensors with non-complex dtypes.",
                                       _t((3,)))))
_add("conj", tp.conj, np.conj, REAL_AND_COMPLEX, _unary_samples(), aten=("conj_physical",))
_add("conj_physical", tp.conj_physical, np.conj, REAL_AND_COMPLEX, _unary_samples(), aten=("conj_physical",),
     inplace=_method("conj_physical_"))
_add("resolve_conj", tp.resolve_conj, lambda a: a, REAL_AND_COMPLEX, _unary_samples(), aten=())
_add("is_conj", lambda x: tp.tensor(tp.is_conj(x), device=x.device), lambda a: np.array(False), REAL_AND_COMPLEX,
     _unary_samples(), supports_autograd=False, aten=())


def _angle_ref(a):
    if a.dtype.kind == "c":
        return np.angle(a).astype(_NP_REAL[tp.complex64 if a.dtype == np.complex64 else tp.complex128])
    r = np.where(a < 0, np.pi, 0.0).astype(a.dtype)
    return np.where(np.isnan(a), a, r)


def _angle_samples(device, dtype, requires_grad):
    yield from _layouts(dtype, requires_grad)
    if not dtype.is_complex and not requires_grad:
        yield SampleInput(tp.tensor([-0.0, 0.0, float("nan"), -2.0, 3.0], dtype=dtype), name="special_values")


_add("angle", tp.angle, _angle_ref, REAL_AND_COMPLEX, _angle_samples, aten=("angle",))


def _sgn_ref(a):
    if a.dtype.kind != "c":
        return np.sign(a)
    m = np.abs(a)
    with np.errstate(all="ignore"):
        return np.where(m == 0, 0, a / np.where(m == 0, 1, m)).astype(a.dtype)


_add("sgn.complex", tp.sgn, _sgn_ref, REAL_AND_COMPLEX, _layouts_of(), aten=("abs", "div.Tensor", "sign"))


def _pair_samples(device, dtype, requires_grad):
    for i, (sa, sb) in enumerate((((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2,)))):
        yield SampleInput(ctensor(sa, dtype, seed=i, low=0.2, requires_grad=requires_grad),
                          (ctensor(sb, dtype, seed=10 + i, requires_grad=requires_grad),), name=f"{sa}x{sb}")


_PARTS_ERRORS = _errors(
    lambda: _err(RuntimeError, "Expected both inputs to be Half, Float or Double tensors but got Long and Long",
                 _t((2,), tp.int64), _t((2,), tp.int64)),
    lambda: _err(RuntimeError, "Expected object of scalar type Float but got scalar type Double for second argument",
                 _t((2,)), _t((2,), tp.float64)))
_add("complex", tp.complex, lambda a, b: (a + 1j * b).astype(_NP_COMPLEX[tp.float32 if a.dtype == np.float32
                                                                        else tp.float64]),
     REAL, _pair_samples, aten=("view_as_complex", "stack"), error_inputs=_PARTS_ERRORS)
_add("polar", tp.polar, lambda a, b: (a * np.exp(1j * b.astype(np.float64))).astype(
    _NP_COMPLEX[tp.float32 if a.dtype == np.float32 else tp.float64]),
    REAL, _pair_samples, aten=("view_as_complex", "cos", "sin"), error_inputs=_PARTS_ERRORS)


# -- existing ops on complex tensors ---------------------------------------------------------------------
def _unary_complex(name, np_fn, low=-2.0, high=2.0, aten=None, ref=None, inplace=True, **kw):
    _add(f"{name}.complex", getattr(tp, name), ref or _cast_like(np_fn), COMPLEX, _unary_samples(low, high),
         aten=aten or (name,), inplace=_method(name + "_") if inplace else None, **kw)


_unary_complex("abs", np.abs, ref=lambda a: np.abs(a), inplace=False)
for _n, _fn in (("neg", np.negative), ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt),
                ("reciprocal", np.reciprocal), ("sin", np.sin), ("cos", np.cos), ("tanh", np.tanh),
                ("sinh", np.sinh), ("cosh", np.cosh), ("tan", np.tan), ("sigmoid", lambda z: 1 / (1 + np.exp(-z))),
                ("rsqrt", lambda z: 1 / np.sqrt(z)), ("log1p", np.log1p), ("expm1", np.expm1),
                ("exp2", np.exp2), ("log2", np.log2), ("log10", np.log10), ("square", np.square)):
    _unary_complex(_n, _fn, low=0.2 if _n in ("log", "rsqrt", "log2", "log10") else -1.5, high=1.5)


def _binary_complex_samples(device, dtype, requires_grad):
    yield from _pair_samples(device, dtype, requires_grad)
    if not requires_grad:
        real = tp.float32 if dtype is tp.complex64 else tp.float64
        yield SampleInput(ctensor((3, 4), dtype, seed=1), (ctensor((3, 4), real, seed=2, low=0.5),), name="real_rhs")
        yield SampleInput(ctensor((3, 4), dtype, seed=3), (1.5 - 0.5j,), name="complex_number")
        yield SampleInput(ctensor((3, 4), dtype, seed=4), (2,), name="int_number")


def _binary_ref(np_fn):
    def ref(a, b):
        out = a.dtype if isinstance(b, (int, float, complex)) or b.dtype.kind != "c" else \
            np.result_type(a.dtype, b.dtype)
        with np.errstate(all="ignore"):
            return np.asarray(np_fn(a.astype(np.complex128), np.asarray(b).astype(np.complex128))).astype(out)
    return ref


for _n, _fn in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
                ("pow", np.power)):
    _add(f"{_n}.complex", getattr(tp, _n), _binary_ref(_fn), COMPLEX, _binary_complex_samples, aten=(f"{_n}.Tensor",)
         if _n != "pow" else ("pow.Tensor_Tensor",), inplace=_method(_n + "_"))
_add("eq.complex", tp.eq, lambda a, b: np.equal(a, b), COMPLEX, _binary_complex_samples, aten=("eq.Tensor",),
     supports_autograd=False)


def _reduce_samples(device, dtype, requires_grad):
    for i, (shape, kw) in enumerate((((3, 4), {}), ((3, 4), {"dim": 1}), ((2, 3), {"dim": 0, "keepdim": True}))):
        yield SampleInput(ctensor(shape, dtype, seed=i, requires_grad=requires_grad), kwargs=kw, name=f"{kw}")


def _reduce_ref(np_fn):
    def ref(a, dim=None, keepdim=False):
        return np.asarray(np_fn(a.astype(np.complex128), axis=dim, keepdims=keepdim)).astype(a.dtype)
    return ref


_add("sum.complex", tp.sum, _reduce_ref(np.sum), COMPLEX, _reduce_samples, aten=("sum.dim_IntList",))
_add("mean.complex", tp.mean, _reduce_ref(np.mean), COMPLEX, _reduce_samples, aten=("mean.dim", "sum.dim_IntList"))
_add("prod.complex", lambda x, dim=None, keepdim=False: x.prod() if dim is None else x.prod(dim, keepdim),
     _reduce_ref(np.prod), COMPLEX, _reduce_samples, aten=("prod.dim_int",))


def _var_ref(a, dim=None, keepdim=False):
    z = a.astype(np.complex128)
    return np.asarray(np.var(z, axis=dim, keepdims=keepdim, ddof=1)).astype(_NP_REAL[
        tp.complex64 if a.dtype == np.complex64 else tp.complex128])


_add("var.complex", tp.var, _var_ref, COMPLEX, _reduce_samples, aten=("var.correction", "abs"))


def _matmul_samples(device, dtype, requires_grad):
    for i, (sa, sb) in enumerate((((3, 4), (4, 2)), ((4,), (4, 3)), ((2, 3, 4), (4,)), ((1, 2), (2,)))):
        yield SampleInput(ctensor(sa, dtype, seed=i, requires_grad=requires_grad),
                          (ctensor(sb, dtype, seed=20 + i, requires_grad=requires_grad),), name=f"{sa}@{sb}")


_add("matmul.complex", tp.matmul, lambda a, b: np.matmul(a, b), COMPLEX, _matmul_samples, aten=("matmul",))


def _cat_samples(device, dtype, requires_grad):
    a, b = ctensor((2, 3), dtype, seed=1, requires_grad=requires_grad), ctensor((1, 3), dtype, seed=2,
                                                                               requires_grad=requires_grad)
    yield SampleInput([a, b], name="dim0")


_add("cat.complex", tp.cat, lambda ts: np.concatenate(ts), COMPLEX, _cat_samples, aten=("cat",))
_add("stack.complex", lambda ts: tp.stack([ts[0], ts[0]]), lambda ts: np.stack([ts[0], ts[0]]), COMPLEX,
     _cat_samples, aten=("stack", "cat"))


# -- tensorplug.fft ---------------------------------------------------------------------------------------
_NORMS = (None, "ortho", "forward")


def _np_fft(np_fn, out_kind):
    """Reference of a transform: numpy in double precision, the result in PyTorch's dtype."""
    def ref(a, *args, **kw):
        single = a.dtype in (np.float32, np.complex64)
        r = np.asarray(np_fn(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64), *args, **kw))
        if out_kind == "complex":
            return r.astype(np.complex64 if single else np.complex128)
        return r.real.astype(np.float32 if single else np.float64)
    return ref


def _fft1_samples(sizes):
    """1-d transform samples: each norm, ``n`` trimming and padding, another dim, a non-contiguous input."""
    def gen(device, dtype, requires_grad):
        rg = requires_grad
        for k, norm in enumerate(_NORMS):
            yield SampleInput(ctensor((sizes[0],), dtype, seed=k, requires_grad=rg), kwargs={"norm": norm},
                              name=f"norm={norm}")
        yield SampleInput(ctensor((2, sizes[0]), dtype, seed=5, requires_grad=rg), kwargs={"n": sizes[1]},
                          name="n_trim")
        yield SampleInput(ctensor((sizes[0], 2), dtype, seed=6, requires_grad=rg),
                          kwargs={"n": sizes[2], "dim": 0}, name="n_pad_dim0")
        if not rg:
            yield SampleInput(ctensor((3, sizes[0]), dtype, seed=7, noncontiguous=True), name="noncontiguous")
    return gen


def _fftn_samples(two_d):
    def gen(device, dtype, requires_grad):
        rg = requires_grad
        yield SampleInput(ctensor((3, 4), dtype, seed=1, requires_grad=rg), name="default")
        yield SampleInput(ctensor((2, 3), dtype, seed=2, requires_grad=rg), kwargs={"s": (3, 4), "norm": "ortho"},
                          name="s_pad")
        yield SampleInput(ctensor((2, 3, 4), dtype, seed=3, requires_grad=rg), kwargs={"dim": (0, 2),
                                                                                       "norm": "forward"}, name="dims")
        if not two_d:
            yield SampleInput(ctensor((2, 3, 4), dtype, seed=4, requires_grad=rg), kwargs={"s": (3, -1)},
                              name="s_last_two")
    return gen


def _fft_errors(fn_name, real_only=False, complex_input=None):
    makers = [
        lambda: _err(RuntimeError, r"Invalid number of data points \(0\) specified", _t((4,)), n=0),
        lambda: _err(IndexError, _DIM_RANGE, _t((4,)), dim=2),
        lambda: _err(RuntimeError, 'Invalid normalization mode: "foo"', _t((4,)), norm="foo"),
        lambda: _err(RuntimeError, "Unsupported dtype Half", _t((4,), tp.float16)),
    ]
    if real_only:
        makers.append(lambda: _err(RuntimeError, f"{fn_name} expects a real input tensor, but got ComplexFloat",
                                   ctensor((4,), tp.complex64)))
    return _errors(*makers)


def _fftn_errors():
    return _errors(
        lambda: _err(RuntimeError, "When given, dim and shape arguments must have the same length", _t((2, 3)),
                     s=(2, 2), dim=(0,)),
        lambda: _err(RuntimeError, "FFT dims must be unique", _t((2, 3)), dim=(0, 0)),
        lambda: _err(RuntimeError, r"Got shape with 3 values but input tensor only has 2 dimensions.", _t((2, 3)),
                     s=(2, 2, 2)))


def _ifft_keys(kw):
    return {k: v for k, v in kw.items() if k != "dim" and k != "s"}


_C2C_DTYPES = REAL_AND_COMPLEX
_add("fft.fft", tfft.fft, _np_fft(lambda a, n=None, dim=-1, norm=None: np.fft.fft(a, n, dim, norm), "complex"),
     _C2C_DTYPES, _fft1_samples((5, 3, 7)), aten=("_fft_c2c",), error_inputs=_fft_errors("fft"))
_add("fft.ifft", tfft.ifft, _np_fft(lambda a, n=None, dim=-1, norm=None: np.fft.ifft(a, n, dim, norm), "complex"),
     _C2C_DTYPES, _fft1_samples((5, 3, 7)), aten=("_fft_c2c",), error_inputs=_fft_errors("ifft"))
_add("fft.rfft", tfft.rfft, _np_fft(lambda a, n=None, dim=-1, norm=None: np.fft.rfft(a, n, dim, norm), "complex"),
     REAL, _fft1_samples((6, 3, 8)), aten=("_fft_r2c",), error_inputs=_fft_errors("rfft", real_only=True))
_add("fft.ihfft", tfft.ihfft, _np_fft(lambda a, n=None, dim=-1, norm=None: np.fft.ihfft(a, n, dim, norm), "complex"),
     REAL, _fft1_samples((6, 3, 8)), aten=("_fft_r2c", "conj_physical"), error_inputs=_fft_errors("ihfft", True))


def _c2r_samples(device, dtype, requires_grad):
    # Hermitian inputs: the transform of real data, so the imaginary parts the output ignores are zero
    rg = requires_grad
    for k, (m, kw) in enumerate(((4, {}), (4, {"n": 7}), (5, {"n": 6, "norm": "ortho"}), (3, {"norm": "forward"}))):
        x = np.fft.rfft(np.random.default_rng(k).uniform(-2, 2, 2 * (m - 1)))
        if "n" in kw:
            x = np.fft.rfft(np.random.default_rng(k).uniform(-2, 2, kw["n"]))[:m]
        t = tp.tensor(x.astype(_NP_COMPLEX[dtype]))
        yield SampleInput(t.requires_grad_(True) if rg else t, kwargs=kw, name=str(kw))


_add("fft.irfft", tfft.irfft, _np_fft(lambda a, n=None, dim=-1, norm=None: np.fft.irfft(a, n, dim, norm), "real"),
     COMPLEX, _c2r_samples, aten=("_fft_c2r",), error_inputs=_errors(
         lambda: _err(RuntimeError, r"Invalid number of data points \(0\) specified", ctensor((1,), tp.complex64))))
_add("fft.hfft", tfft.hfft, _np_fft(lambda a, n=None, dim=-1, norm=None: np.fft.hfft(a, n, dim, norm), "real"),
     COMPLEX, _c2r_samples, aten=("_fft_c2r", "conj_physical"), error_inputs=_errors(
         lambda: _err(RuntimeError, r"Invalid number of data points \(0\) specified", ctensor((4,), tp.complex64),
                      n=0)))


def _np_nd(np_fn):
    def ref(a, s=None, dim=None, norm=None):
        if s is not None and dim is None:
            dim = tuple(range(a.ndim - len(s), a.ndim))  # PyTorch's (and numpy's deprecated) default
        return np_fn(a, s, dim, norm)
    return ref


def _np_2d(np_fn):
    return lambda a, s=None, dim=(-2, -1), norm=None: np_fn(a, s, dim, norm)


_add("fft.fftn", tfft.fftn, _np_fft(_np_nd(np.fft.fftn), "complex"), _C2C_DTYPES, _fftn_samples(False),
     aten=("_fft_c2c",), error_inputs=_fftn_errors())
_add("fft.ifftn", tfft.ifftn, _np_fft(_np_nd(np.fft.ifftn), "complex"), _C2C_DTYPES, _fftn_samples(False),
     aten=("_fft_c2c",), error_inputs=_fftn_errors())
_add("fft.fft2", tfft.fft2, _np_fft(_np_2d(np.fft.fft2), "complex"), _C2C_DTYPES, _fftn_samples(True),
     aten=("_fft_c2c",))
_add("fft.ifft2", tfft.ifft2, _np_fft(_np_2d(np.fft.ifft2), "complex"), _C2C_DTYPES, _fftn_samples(True),
     aten=("_fft_c2c",))
_add("fft.rfftn", tfft.rfftn, _np_fft(_np_nd(np.fft.rfftn), "complex"), REAL, _fftn_samples(False),
     aten=("_fft_r2c",), error_inputs=_errors(
         lambda: _err(RuntimeError, "rfftn must transform at least one axis", _t((2, 3)), dim=()),
         lambda: _err(RuntimeError, "rfftn expects a real-valued input tensor, but got ComplexFloat",
                      ctensor((2, 3), tp.complex64))))
_add("fft.rfft2", tfft.rfft2, _np_fft(_np_2d(np.fft.rfft2), "complex"), REAL, _fftn_samples(True),
     aten=("_fft_r2c",))


def _c2r_nd_samples(device, dtype, requires_grad):
    rg = requires_grad
    for k, (shape, kw) in enumerate((((3, 4), {}), ((3, 5), {"s": (3, 8)}), ((2, 3, 3), {"dim": (0, 2),
                                                                                           "norm": "ortho"}),
                                     ((2, 2), {}))):  # small enough for finite differences
        real_shape = list(shape)
        if "s" in kw:
            real_shape[-1] = kw["s"][-1]
        else:
            real_shape[-1] = 2 * (shape[-1] - 1)
        dims = kw.get("dim", tuple(range(len(shape))) if "s" not in kw else (-2, -1))
        x = np.fft.rfftn(np.random.default_rng(k).uniform(-2, 2, real_shape), axes=dims)
        x = x[..., :shape[-1]] if len(dims) and dims[-1] in (-1, len(shape) - 1) else x
        t = tp.tensor(np.ascontiguousarray(x).astype(_NP_COMPLEX[dtype]))
        yield SampleInput(t.requires_grad_(True) if rg else t, kwargs=kw, name=str(kw))


_add("fft.irfftn", tfft.irfftn, _np_fft(_np_nd(np.fft.irfftn), "real"), COMPLEX, _c2r_nd_samples,
     aten=("_fft_c2r",))
_add("fft.irfft2", tfft.irfft2, _np_fft(_np_2d(np.fft.irfft2), "real"), COMPLEX,
     lambda d, dt, rg: (s for s in _c2r_nd_samples(d, dt, rg) if "dim" not in s.kwargs), aten=("_fft_c2r",))


def _shift_samples(device, dtype, requires_grad):
    for k, kw in enumerate(({}, {"dim": 1}, {"dim": (0, 1)})):
        yield SampleInput(ctensor((3, 4), dtype, seed=k, requires_grad=requires_grad), kwargs=kw, name=str(kw))


_add("fft.fftshift", tfft.fftshift, lambda a, dim=None: np.fft.fftshift(a, dim), REAL_AND_COMPLEX, _shift_samples,
     aten=("roll",))
_add("fft.ifftshift", tfft.ifftshift, lambda a, dim=None: np.fft.ifftshift(a, dim), REAL_AND_COMPLEX,
     _shift_samples, aten=("roll",))


_SWAP_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _np_hfftn(a, s=None, dim=None, norm=None):
    # the forward transform of a Hermitian signal is the (inversely normalized) inverse real one of its conjugate
    return _np_nd(np.fft.irfftn)(np.conj(a), s, dim, _SWAP_NORM[norm])


def _np_ihfftn(a, s=None, dim=None, norm=None):
    return np.conj(_np_nd(np.fft.rfftn)(a, s, dim, _SWAP_NORM[norm]))


_add("fft.hfftn", tfft.hfftn, _np_fft(_np_hfftn, "real"), COMPLEX, _c2r_nd_samples, aten=("_fft_c2r", "conj_physical"),
     error_inputs=_errors(lambda: _err(RuntimeError, "hfftn must transform at least one axis",
                                       ctensor((2, 3), tp.complex64), dim=())))
_add("fft.hfft2", tfft.hfft2, _np_fft(lambda a, s=None, dim=(-2, -1), norm=None: _np_hfftn(a, s, dim, norm), "real"),
     COMPLEX, lambda d, dt, rg: (s for s in _c2r_nd_samples(d, dt, rg) if "dim" not in s.kwargs),
     aten=("_fft_c2r", "conj_physical"))
_add("fft.ihfftn", tfft.ihfftn, _np_fft(_np_ihfftn, "complex"), REAL, _fftn_samples(False),
     aten=("_fft_r2c", "conj_physical"), error_inputs=_errors(
         lambda: _err(RuntimeError, "ihfftn must transform at least one axis", _t((2, 3)), dim=()),
         lambda: _err(RuntimeError, "Only supports floating-point dtypes, but found: ComplexFloat",
                      ctensor((2, 3), tp.complex64)),
         lambda: _err(IndexError, "Dimension specified as 0 but tensor has no dimensions", _t(()), dim=(0,))))
_add("fft.ihfft2", tfft.ihfft2, _np_fft(lambda a, s=None, dim=(-2, -1), norm=None: _np_ihfftn(a, s, dim, norm),
                                        "complex"), REAL, _fftn_samples(True), aten=("_fft_r2c", "conj_physical"))
