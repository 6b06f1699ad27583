"""Op database entries of ``ops/special_more.py`` and ``tensorplug.signal.windows``: the orthogonal
polynomials of ``tensorplug.special``, ``isposinf``/``isneginf``/``isreal``, ``heaviside``, ``frexp``,
``ldexp``, ``nextafter``, the bit shifts, ``mvlgamma``, ``trapezoid``/``trapz``/``cumulative_trapezoid``,
``gradient``, ``histogram``/``histogramdd`` and the window functions.

References compute in float64 with numpy and cast to the result dtype: the polynomials with
``numpy.polynomial`` (Chebyshev T, Hermite H and He, Laguerre, Legendre series with one coefficient)
and the trigonometric forms of U, V and W; the integrals, differences and histograms with numpy's
``trapezoid``-style sums, ``numpy.gradient`` and ``numpy.histogramdd``; the windows from their
textbook formulas.
"""

from __future__ import annotations

import math

import numpy as np

import tensorplug as tp

from . import samples as S
from .opinfo import OP_DB, OpInfo, SampleInput
from .samples import ALL, FLOATING, INTEGRAL, make_tensor, small_when_grad
from .samples import error_input as _err, errors_of as _errors
from ..ops import special_more as _sm
from .. import signal as _signal

_F32_64 = (tp.float32, tp.float64)
_POLY_DTYPES = S.BOOL + INTEGRAL + _F32_64


def _add(name, op, ref, dtypes, samples, **kw):
    info = OpInfo(name=name, op=op, ref=ref, dtypes=tuple(dtypes), sample_inputs=small_when_grad(samples), **kw)
    OP_DB.append(info)
    return info


def _t(shape, dtype=tp.float32, seed=0, **kw):
    return make_tensor(shape, dtype, seed=seed, **kw)


def _not_impl(kernel, dtype_name):
    return f'"{kernel}" not implemented for \'{dtype_name}\''


# -- orthogonal polynomials ----------------------------------------------------------------------------------
def _poly1(name, x, k):
    """The degree-``k`` polynomial ``name`` at the float64 values ``x``."""
    P = np.polynomial
    if name.startswith("shifted_"):
        return _poly1(name[len("shifted_"):], 2 * x - 1, k)
    coef = [0] * k + [1]
    if name == "chebyshev_polynomial_t":
        return P.chebyshev.chebval(x, coef)
    if name == "hermite_polynomial_h":
        return P.hermite.hermval(x, coef)
    if name == "hermite_polynomial_he":
        return P.hermite_e.hermeval(x, coef)
    if name == "laguerre_polynomial_l":
        return P.laguerre.lagval(x, coef)
    if name == "legendre_polynomial_p":
        return P.legendre.legval(x, coef)
    # U, V, W by their three-term recurrence p_k = 2x p_{k-1} - p_{k-2} from their own p_1
    first = {"chebyshev_polynomial_u": 2 * x, "chebyshev_polynomial_v": 2 * x - 1,
             "chebyshev_polynomial_w": 2 * x + 1}[name]
    p, q = np.ones_like(x), first
    if k == 0:
        return p
    for _ in range(k - 1):
        p, q = q, 2 * x * q - p
    return q


def _poly_ref(name):
    def ref(x, n):
        out_dtype = S.float_dtype(S.result_dtype(x, n))
        xs, ns = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(n, dtype=np.float64))
        out = np.zeros(xs.shape)
        k = np.trunc(ns)
        for deg in np.unique(k[k >= 0]):
            m = k == deg
            out[m] = _poly1(name, xs[m], int(deg))
        return S.cast(out, out_dtype)
    return ref


def _degrees(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    v = rng.integers(-1, 9, size=shape).astype(np.float64)
    if dtype.is_floating_point:
        v = v + rng.uniform(0, 0.9, size=shape)  # truncated to the degree
    if dtype is tp.uint8:
        v = np.abs(v)
    if dtype is tp.bool:
        v = v > 3
    return make_tensor(shape, dtype, values=v, seed=seed)


def _poly_samples(name):
    shifted = name.startswith("shifted_")
    lo, hi = (-0.25, 1.25) if shifted else (-1.5, 1.5)

    def gen(device, dtype, requires_grad):
        xs = make_tensor((4, 5), dtype, lo, hi, seed=1) if dtype.is_floating_point else \
            make_tensor((4, 5), dtype, 0, 2, seed=1)
        yield SampleInput(xs, (_degrees((4, 5), dtype, 2),), name="same_shape")
        yield SampleInput(make_tensor((3, 1), dtype, lo, hi, seed=3) if dtype.is_floating_point else
                          make_tensor((3, 1), dtype, 0, 2, seed=3), (_degrees((4,), dtype, 4),), name="broadcast")
        if dtype.is_floating_point:
            edges = [0.0, 1.0, 0.5, 0.25] if shifted else [1.0, -1.0, 0.0, 0.5]
            x = make_tensor((4, 1), dtype, values=np.array(edges).reshape(4, 1))
            n = make_tensor((12,), dtype, values=np.arange(-1, 11, dtype=np.float64))
            yield SampleInput(x, (n,), name="edges_and_degrees")
            yield SampleInput(make_tensor((6,), dtype, lo, hi, seed=5, noncontiguous=True), (3,), name="n_number")
        yield SampleInput(0.5, (_degrees((5,), dtype, 6),), name="x_number")
    return gen


for _name in _sm.POLYNOMIALS:
    _fn = getattr(tp.special, _name)
    _add(f"special.{_name}", _fn, _poly_ref(_name), _POLY_DTYPES, _poly_samples(_name), supports_autograd=False,
         aten=(f"special_{_name}", f"special_{_name}.x_scalar", f"special_{_name}.n_scalar"),
         atol=1e-4, rtol=1e-4,  # float32 recurrences round at every step
         error_inputs=_errors(
             lambda _n=_name: _err(NotImplementedError, _not_impl(f"{_n}_cpu", "Half"), _t((3,), tp.float16),
                                   _t((3,), tp.float16)),
             lambda: _err(RuntimeError, "must match the size", _t((3,)), _t((4,))),
             lambda _n=_name: _err(TypeError, "invalid combination of arguments", 0.5, 2)))


# -- isposinf, isneginf, isreal ----------------------------------------------------------------------------------
def _special_values(device, dtype, requires_grad):
    if dtype.is_floating_point:
        yield SampleInput(S.special_tensor(dtype), name="special_values")
    yield SampleInput(_t((3, 4), dtype, seed=1), name="matrix")
    yield SampleInput(_t((5,), dtype, seed=2, noncontiguous=True), name="stepped")
    yield SampleInput(_t((), dtype, seed=3), name="scalar")


for _name, _np_fn in (("isposinf", np.isposinf), ("isneginf", np.isneginf)):
    _add(_name, getattr(tp, _name), lambda x, _f=_np_fn: _f(x.astype(np.float64)) if x.dtype != np.bool_
         else np.zeros(x.shape, bool), ALL, _special_values, supports_autograd=False, aten=(_name,),
         error_inputs=_errors(lambda _n=_name: _err(RuntimeError, f"{_n} does not support complex inputs",
                                                     tp.tensor([1j]))))


def _isreal_samples(device, dtype, requires_grad):
    if dtype.is_complex:
        yield SampleInput(tp.tensor([1 + 0j, 2j, 3 - 1j, -0.0 + 0j], dtype=dtype), name="complex")
        yield SampleInput(tp.tensor([[1.5 + 0j, 2j, 0j], [0.5j, -1 + 0j, 3 + 1j]], dtype=dtype).t(), name="transposed")
        return
    yield from _special_values(device, dtype, requires_grad)


_add("isreal", tp.isreal, lambda x: np.isreal(x) if x.dtype.kind == "c" else np.ones(x.shape, bool),
     ALL + S.COMPLEX, _isreal_samples, supports_autograd=False, aten=("isreal",))


# -- heaviside ---------------------------------------------------------------------------------------------------
def _heaviside_ref(x, v):
    x, v = np.broadcast_arrays(x, v)
    xf = x.astype(np.float64)
    out = np.where(xf == 0, v.astype(np.float64), (xf > 0).astype(np.float64))
    return S.cast(out, x.dtype)


def _heaviside_samples(device, dtype, requires_grad):
    x = _t((3, 4), dtype, seed=1)
    if dtype is not tp.bool:
        x = make_tensor((3, 4), dtype, values=np.where(np.arange(12).reshape(3, 4) % 3 == 0, 0,
                                                       S.to_numpy(x).astype(np.float64)))
    yield SampleInput(x, (_t((3, 4), dtype, seed=2),), name="same_shape")
    yield SampleInput(x, (_t((4,), dtype, seed=3),), name="broadcast")
    if dtype.is_floating_point:
        yield SampleInput(S.special_tensor(dtype), (_t((), dtype, seed=4),), name="special_values")


_add("heaviside", tp.heaviside, _heaviside_ref, ALL, _heaviside_samples, supports_autograd=False,
     inplace=tp.Tensor.heaviside_, aten=("heaviside", "heaviside_"), error_inputs=_errors(
         lambda: _err(RuntimeError, "heaviside is not yet implemented for tensors with different dtypes",
                      _t((3,)), _t((3,), tp.float64)),
         lambda: _err(RuntimeError, "heaviside is not yet implemented for complex tensors",
                      tp.tensor([1j]), tp.tensor([1j]))))


# -- frexp, ldexp, nextafter ---------------------------------------------------------------------------------------
def _frexp_ref(x):
    m, e = np.frexp(x.astype(np.float64))
    return S.cast(m, x.dtype), e.astype(np.int32)


def _float_samples(device, dtype, requires_grad):
    yield SampleInput(_t((3, 4), dtype, seed=1, requires_grad=requires_grad), name="matrix")
    yield SampleInput(_t((5,), dtype, seed=2, noncontiguous=True, requires_grad=requires_grad), name="stepped")
    yield SampleInput(_t((), dtype, seed=3, requires_grad=requires_grad), name="scalar")
    if not requires_grad:
        yield SampleInput(S.special_tensor(dtype), name="special_values")
        yield SampleInput(make_tensor((4,), dtype, values=np.array([1e-30, 2.0 ** 60, 0.75, -1024.0])),
                          name="magnitudes")


_add("frexp", tp.frexp, _frexp_ref, FLOATING, _float_samples, aten=("frexp.Tensor",),
     error_inputs=_errors(lambda: _err(RuntimeError, r"torch.frexp\(\) only supports floating-point dtypes",
                                       _t((3,), tp.int64))))


def _ldexp_ref(x, e):
    d = S.float_dtype(S.result_dtype(x, e))
    return S.cast(np.asarray(x, np.float64) * np.exp2(np.asarray(e, np.float64)), d)


def _ldexp_samples(device, dtype, requires_grad):
    yield SampleInput(_t((3, 4), dtype, seed=1, requires_grad=requires_grad),
                      (make_tensor((3, 4), tp.int64, -4, 4, seed=2),), name="int_exponent")
    yield SampleInput(_t((2, 3), dtype, seed=3, requires_grad=requires_grad),
                      (make_tensor((3,), dtype, -3, 3, seed=4),), name="broadcast")


_add("ldexp", tp.ldexp, _ldexp_ref, FLOATING + INTEGRAL, _ldexp_samples, inplace=tp.Tensor.ldexp_,
     aten=("ldexp.Tensor", "ldexp_"), error_inputs=_errors(
         lambda: _err(RuntimeError, "must match the size", _t((3,)), _t((4,)))))


def _nextafter_ref(x, y):
    d = S.result_dtype(x, y)
    if d == S.BF16:
        return _bf16_nextafter(x, y)
    return np.nextafter(x.astype(d), y.astype(d))


def _bf16_nextafter(x, y):
    xs, ys = np.broadcast_arrays(x.astype(np.float32), y.astype(np.float32))
    out = []
    for a, b in zip(xs.ravel(), ys.ravel()):
        if math.isnan(a) or math.isnan(b):
            out.append(math.nan)
            continue
        if a == b:
            out.append(b)
            continue
        # the bfloat16 values are every 16-bit pattern: step to the neighbour in value order
        cand = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(S.BF16).astype(np.float32)
        cand = cand[np.isfinite(cand) | np.isinf(cand)]
        out.append(cand[cand > a].min() if b > a else cand[cand < a].max())
    return np.array(out, np.float32).reshape(xs.shape).astype(S.BF16)


def _nextafter_samples(device, dtype, requires_grad):
    yield SampleInput(_t((3, 4), dtype, seed=1, requires_grad=requires_grad),
                      (_t((3, 4), dtype, seed=2, requires_grad=requires_grad),), name="same_shape")
    yield SampleInput(_t((2, 3), dtype, seed=3, requires_grad=requires_grad), (_t((3,), dtype, seed=4),),
                      name="broadcast")
    if not requires_grad:
        x, y = S.special_pair(dtype, (0.0, -0.0, 1.0, -1.0, math.inf))
        yield SampleInput(x, (y,), name="special_values")


_add("nextafter", tp.nextafter, _nextafter_ref, FLOATING, _nextafter_samples, inplace=tp.Tensor.nextafter_,
     aten=("nextafter", "nextafter_"), error_inputs=_errors(
         lambda: _err(NotImplementedError, _not_impl("nextafter_cpu", "Long"), _t((3,), tp.int64),
                      _t((3,), tp.int64))))


# -- bit shifts ----------------------------------------------------------------------------------------------------
def _shift_ref(left):
    def ref(a, b):
        d = S.result_dtype(a, b)
        bits = np.dtype(d).itemsize * 8
        av, bv = np.broadcast_arrays(np.asarray(a).astype(d), np.asarray(b).astype(d).astype(np.int64))
        out = []
        for x, s in zip(av.ravel().tolist(), bv.ravel().tolist()):
            if left:
                out.append(0 if s < 0 or s >= bits else (x << s) % (1 << bits))
            else:
                out.append((-1 if x < 0 else 0) if s < 0 or s >= bits else x >> s)
        r = np.array(out, dtype=np.uint64 if left else np.int64).astype(d) if out else np.zeros(av.shape, d)
        return r.reshape(av.shape)
    return ref


def _shift_samples(device, dtype, requires_grad):
    bits = np.dtype(dtype.np).itemsize * 8
    yield SampleInput(_t((3, 4), dtype, seed=1), (make_tensor((3, 4), dtype, 0, min(bits - 1, 60), seed=2),),
                      name="same_shape")
    yield SampleInput(_t((2, 3), dtype, seed=3), (make_tensor((3,), dtype, 0, 4, seed=4),), name="broadcast")
    yield SampleInput(_t((5,), dtype, seed=5), (2,), name="number")
    out_of_range = np.array([bits, bits + 3, 0, 1], dtype=np.int64)
    if dtype.np != np.uint8:
        out_of_range = np.concatenate([out_of_range, [-1]])
    n = len(out_of_range)
    yield SampleInput(_t((n,), dtype, seed=6), (make_tensor((n,), dtype, values=out_of_range),),
                      name="out_of_range")


for _name, _left, _kernel in (("bitwise_left_shift", True, "lshift_cpu"),
                              ("bitwise_right_shift", False, "rshift_cpu")):
    _add(_name, getattr(tp, _name), _shift_ref(_left), INTEGRAL, _shift_samples, supports_autograd=False,
         inplace=getattr(tp.Tensor, _name + "_"), aten=(f"{_name}.Tensor", f"{_name}_.Tensor"),
         error_inputs=_errors(
             lambda _k=_kernel, _n=_name: _err(NotImplementedError, _not_impl(_k, "Float"), _t((3,)), 1),
             lambda _k=_kernel, _n=_name: _err(NotImplementedError, _not_impl(_k, "Bool"), _t((3,), tp.bool),
                                               True)))


# -- mvlgamma ------------------------------------------------------------------------------------------------------
def _mvlgamma_ref(x, p):
    v = np.asarray(x, np.float64)
    out = sum(np.vectorize(math.lgamma, otypes=[np.float64])(v - j / 2.0) if v.size else v for j in range(p))
    out = out + p * (p - 1) / 4.0 * math.log(math.pi)
    return S.cast(np.asarray(out), S.float_dtype(np.asarray(x).dtype))


def _mvlgamma_samples(device, dtype, requires_grad):
    for i, p in enumerate((1, 3)):
        lo = (p - 1) / 2.0 + 0.3
        yield SampleInput(make_tensor((3, 4), dtype, lo, lo + 6, seed=i, requires_grad=requires_grad), (p,),
                          name=f"p{p}")


_add("mvlgamma", tp.mvlgamma, _mvlgamma_ref, FLOATING, _mvlgamma_samples, inplace=tp.Tensor.mvlgamma_,
     aten=("special_multigammaln", "mvlgamma_"), atol=1e-2, rtol=1e-2, error_inputs=_errors(
         lambda: _err(RuntimeError, "p has to be greater than or equal to 1", _t((3,)), 0)))


# -- trapezoid, trapz, cumulative_trapezoid ------------------------------------------------------------------------
def _trapz_np(y, x=None, dx=1.0, axis=-1):
    y = np.asarray(y, np.float64)
    y = np.moveaxis(y, axis, -1)
    if x is None:
        d = np.full(max(y.shape[-1] - 1, 0), float(dx))
    else:
        x = np.asarray(x, np.float64)
        d = np.diff(x if x.ndim == 1 else np.moveaxis(np.broadcast_to(x, np.moveaxis(y, -1, axis).shape), axis, -1))
    return (y[..., 1:] + y[..., :-1]) * d / 2.0


def _trapezoid_ref(y, x=None, dx=None, dim=-1):
    if np.asarray(y).shape[dim] == 0:  # PyTorch's zeros of y's dtype
        return np.zeros(np.delete(np.asarray(y).shape, dim % np.asarray(y).ndim), np.asarray(y).dtype)
    out_dtype = S.float_dtype(np.asarray(y).dtype) if x is None or isinstance(x, (int, float)) else \
        S.float_dtype(S.result_dtype(y, x))
    if isinstance(x, (int, float)):
        x, dx = None, x
    return S.cast(_trapz_np(y, x, 1.0 if dx is None else dx, dim).sum(-1), out_dtype)


def _cumulative_ref(y, x=None, dx=None, dim=-1):
    out_dtype = S.float_dtype(np.asarray(y).dtype) if x is None else S.float_dtype(S.result_dtype(y, x))
    r = np.cumsum(_trapz_np(y, x, 1.0 if dx is None else dx, dim), -1)
    return S.cast(np.moveaxis(r, -1, dim), out_dtype)


def _trapezoid_samples(device, dtype, requires_grad):
    rg = requires_grad
    yield SampleInput(_t((3, 5), dtype, seed=1, requires_grad=rg), name="default")
    yield SampleInput(_t((3, 5), dtype, seed=2, requires_grad=rg), (), {"dx": 0.5, "dim": 0}, name="dx_dim0")
    xs = make_tensor((5,), dtype, values=np.array([0.0, 0.5, 1.5, 2.0, 4.0]), requires_grad=rg)
    yield SampleInput(_t((2, 5), dtype, seed=3, requires_grad=rg), (xs,), name="x_1d")
    yield SampleInput(_t((2, 4, 3), dtype, seed=4, requires_grad=rg, transposed=True),
                      (make_tensor((4, 3), dtype, values=np.cumsum(np.ones((4, 3)), 0) * 0.7, requires_grad=rg),),
                      {"dim": 1}, name="x_broadcast")
    if not rg:
        yield SampleInput(_t((3, 0), dtype, seed=5), name="empty_dim")


def _trapz_errors(name):
    return _errors(
        lambda: _err(RuntimeError, f"{name}: There must be one `x` value for each sample point", _t((3, 4)),
                     _t((3,))),
        lambda: _err(RuntimeError, f"{name}: received a bool input for `y`, but bool is not supported",
                     _t((3,), tp.bool)),
        lambda: _err(RuntimeError, f"{name}: Currently, we only support dx as a real number.", _t((3,)), dx=True))


_NO_BOOL = INTEGRAL + FLOATING
# float16 and bfloat16 round after every step of these composites (as PyTorch's do); the float64 reference once
_HALF_STEPS = {"atol": 3e-2, "rtol": 3e-2}
_add("trapezoid", tp.trapezoid, _trapezoid_ref, _NO_BOOL, _trapezoid_samples, aten=(), **_HALF_STEPS,
     error_inputs=_trapz_errors("trapezoid"))
_add("trapz", tp.trapz, _trapezoid_ref, _NO_BOOL, _trapezoid_samples, aten=(), **_HALF_STEPS,
     error_inputs=_trapz_errors("trapezoid"))


def _cumulative_samples(device, dtype, requires_grad):
    for s in _trapezoid_samples(device, dtype, requires_grad):
        if s.name != "empty_dim":
            yield s


_add("cumulative_trapezoid", tp.cumulative_trapezoid, _cumulative_ref, _NO_BOOL, _cumulative_samples, aten=(),
     **_HALF_STEPS,
     error_inputs=_errors(
         lambda: _err(RuntimeError, "cumulative_trapezoid: There must be one `x` value for each sample point",
                      _t((3, 4)), _t((3,))),
         lambda: _err(RuntimeError, "cumulative_trapezoid: received a bool input for `y`, but bool is not "
                                    "supported", _t((3,), tp.bool))))


# -- gradient ------------------------------------------------------------------------------------------------------
def _gradient_ref(x, spacing=None, dim=None, edge_order=1):
    v = np.asarray(x, np.float64)
    dims = list(range(v.ndim)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if spacing is None:
        sp = [1.0] * len(dims)
    elif isinstance(spacing, (int, float)):
        sp = [float(spacing)] * len(dims)
    else:
        sp = [np.asarray(s, np.float64) if isinstance(s, np.ndarray) else float(s) for s in spacing]
    out = np.gradient(v, *sp, axis=tuple(dims), edge_order=edge_order)
    out = out if isinstance(out, (list, tuple)) else [out]
    d = S.float_dtype(np.asarray(x).dtype)
    return tuple(S.cast(o, d) for o in out)


def _gradient_samples(device, dtype, requires_grad):
    rg = requires_grad
    yield SampleInput(_t((4, 5), dtype, seed=1, requires_grad=rg), name="all_dims")
    yield SampleInput(_t((4, 5), dtype, seed=2, requires_grad=rg), (), {"spacing": 2.0, "dim": 1}, name="dim1")
    yield SampleInput(_t((3, 4, 5), dtype, seed=3, requires_grad=rg), (), {"spacing": [0.5, 2.0], "dim": [0, 2],
                                                                             "edge_order": 2}, name="list")
    coords = (make_tensor((4,), tp.float64 if dtype is tp.float64 else tp.float32,
                          values=np.array([0.0, 0.5, 1.7, 2.0])),)
    if dtype.is_floating_point:
        coords = tuple(c.to(dtype) for c in coords)
    yield SampleInput(_t((4, 3), dtype, seed=4, requires_grad=rg), (), {"spacing": coords, "dim": 0},
                      name="coordinates")
    yield SampleInput(_t((6,), dtype, seed=5, requires_grad=rg, noncontiguous=True), (), {"edge_order": 2},
                      name="edge_order2")


_add("gradient", tp.gradient, _gradient_ref, (tp.int8, tp.int16, tp.int32, tp.int64) + FLOATING,
     _gradient_samples, aten=(), **_HALF_STEPS, error_inputs=_errors(
         lambda: _err(RuntimeError, "torch.gradient does not support uint8 input.", _t((3,), tp.uint8)),
         lambda: _err(RuntimeError, "torch.gradient only supports edge_order=1 and edge_order=2.", _t((3,)),
                      edge_order=3),
         lambda: _err(RuntimeError, "torch.gradient expected each dimension size to be at least edge_order\\+1",
                      _t((2,)), edge_order=2),
         lambda: _err(RuntimeError, "torch.gradient expected spacing to be unspecified, a scalar or it's spacing",
                      _t((3, 4)), spacing=[1.0, 2.0], dim=0)))


# -- histograms ----------------------------------------------------------------------------------------------------
def _histogram_ref(x, bins=100, range=None, weight=None, density=False):
    v = np.asarray(x, np.float64).reshape(-1)
    edges = bins if isinstance(bins, np.ndarray) else np.linspace(range[0], range[1], bins + 1).astype(x.dtype)
    h, _ = np.histogram(v, edges.astype(np.float64), weights=None if weight is None else weight.reshape(-1),
                        density=density)
    return S.cast(h, x.dtype), np.asarray(edges).astype(x.dtype)


def _histogram_samples(device, dtype, requires_grad):
    x = _t((4, 5), dtype, seed=1)
    yield SampleInput(x, (6,), {"range": (-8.0, 8.0)}, name="bin_count")
    yield SampleInput(x, (5,), {"range": (-5.0, 3.0), "weight": _t((4, 5), dtype, seed=2), "density": True},
                      name="weight_density")
    edges = make_tensor((4,), dtype, values=np.array([-9.0, -2.0, 0.5, 9.0]))
    yield SampleInput(_t((7,), dtype, seed=3, noncontiguous=True), (edges,), name="bin_edges")


_add("histogram", tp.histogram, _histogram_ref, _F32_64, _histogram_samples, supports_autograd=False,
     aten=("_histogramdd_from_bin_tensors",), error_inputs=_errors(
         lambda: _err(NotImplementedError, _not_impl("histogramdd", "Long"), _t((3,), tp.int64), 3),
         lambda: _err(RuntimeError, r"torch.histogram\(\): bins must be > 0, but got 0 for dimension 0",
                      _t((3,)), 0),
         lambda: _err(RuntimeError, "torch.histogramdd: min should not exceed max, but got min 3 max 1 for "
                                    "dimension 0", _t((3,)), 3, range=(3.0, 1.0)),
         lambda: _err(RuntimeError, "torch.histogramdd: input tensor and bins tensors should have the same dtype",
                      _t((3,)), _t((3,), tp.float64))))


def _histogramdd_ref(x, bins, range=None, weight=None, density=False):
    v = np.asarray(x, np.float64).reshape(-1, x.shape[-1])
    n = v.shape[1]
    if isinstance(bins, (list, tuple)) and isinstance(bins[0], np.ndarray):
        edges = [np.asarray(b) for b in bins]
    else:
        cts = [bins] * n if isinstance(bins, int) else list(bins)
        edges = [np.linspace(range[2 * j], range[2 * j + 1], c + 1).astype(x.dtype) for j, c in enumerate(cts)]
    h, _ = np.histogramdd(v, [e.astype(np.float64) for e in edges],
                          weights=None if weight is None else weight.reshape(-1), density=density)
    return (S.cast(h, x.dtype),) + tuple(e.astype(x.dtype) for e in edges)


def _histogramdd_samples(device, dtype, requires_grad):
    x = _t((10, 2), dtype, seed=1)
    yield SampleInput(x, (3,), {"range": [-9.0, 9.0, -6.0, 6.0]}, name="bin_count")
    yield SampleInput(x, ([2, 4],), {"range": [-9.0, 9.0, -9.0, 9.0], "weight": _t((10,), dtype, seed=2),
                                     "density": True}, name="weight_density")
    e0 = make_tensor((3,), dtype, values=np.array([-9.0, 0.0, 9.0]))
    e1 = make_tensor((4,), dtype, values=np.array([-9.0, -1.0, 2.0, 9.0]))
    yield SampleInput(_t((2, 3, 2), dtype, seed=3), ([e0, e1],), name="bin_edges")


_add("histogramdd", tp.histogramdd, _histogramdd_ref, _F32_64, _histogramdd_samples, supports_autograd=False,
     aten=("_histogramdd_from_bin_tensors",), error_inputs=_errors(
         lambda: _err(RuntimeError, "torch.histogramdd: input tensor should have at least 2 dimensions",
                      _t((3,)), 3),
         lambda: _err(RuntimeError, "histogramdd: The size of bins must be equal to the innermost dimension",
                      _t((3, 2)), [2, 2, 2]),
         lambda: _err(RuntimeError, "torch.histogramdd: for a 2-dimensional histogram range should have 4 "
                                    "elements, but got 2", _t((3, 2)), 3, range=[0.0, 1.0])))


# -- tensorplug.signal.windows -------------------------------------------------------------------------------------
def _grid(M, sym):
    """The sample positions n / (M - 1) of a symmetric window of M points (M + 1 points for a periodic one,
    the last dropped)."""
    L = M if sym or M <= 1 else M + 1
    return np.arange(L), L


def _cosine_sum(a):
    def fn(M, sym):
        n, L = _grid(M, sym)
        if L == 1:
            return np.ones(1)
        w = sum((-1) ** i * c * np.cos(2 * np.pi * i * n / (L - 1)) for i, c in enumerate(a))
        return w[:M]
    return fn


def _bartlett(M, sym):
    n, L = _grid(M, sym)
    if L == 1:
        return np.ones(1)
    return (1 - np.abs(2 * n / (L - 1) - 1))[:M]


def _cosine(M, sym):
    n, L = _grid(M, sym)
    return np.sin(np.pi * (n + 0.5) / L)[:M]


def _gaussian(M, sym, std=1.0):
    n, L = _grid(M, sym)
    return np.exp(-((n - (L - 1) / 2) ** 2) / (2 * std * std))[:M]


def _exponential(M, sym, tau=1.0, center=None):
    n, L = _grid(M, sym)
    c = (L - 1) / 2 if center is None else center
    return np.exp(-np.abs(n - c) / tau)[:M]


def _kaiser(M, sym, beta=12.0):
    if M == 1:
        return np.ones(1)
    n, L = _grid(M, sym)
    r = 2 * n / (L - 1) - 1
    return (np.i0(beta * np.sqrt(np.clip(1 - r * r, 0, None))) / np.i0(beta))[:M]


_WINDOWS = {
    "bartlett": (_bartlett, {}), "blackman": (_cosine_sum([0.42, 0.5, 0.08]), {}), "cosine": (_cosine, {}),
    "exponential": (_exponential, {"tau": 2.5}), "gaussian": (_gaussian, {"std": 1.9}),
    "general_cosine": (None, {"a": [0.46, 0.23, 0.31]}), "general_hamming": (None, {"alpha": 0.6}),
    "hamming": (_cosine_sum([0.54, 0.46]), {}), "hann": (_cosine_sum([0.5, 0.5]), {}),
    "kaiser": (_kaiser, {"beta": 8.0}),
    "nuttall": (_cosine_sum([0.3635819, 0.4891775, 0.1365995, 0.0106411]), {}),
}


def _window_op(fn):
    """The window function taking a tensor first whose dtype and device the window gets (unless given), so
    that each backend's conformance run makes its windows on its own device."""
    def op(like, M, **kw):
        kw.setdefault("dtype", like.dtype)
        kw.setdefault("device", like.device)
        return fn(M, **kw)
    op.__name__ = op.__qualname__ = fn.__name__
    op.__doc__ = f"{fn.__doc__} (the dtype and device of a tensor given first)"
    return op


def _window_ref(name):
    fn = _WINDOWS[name][0]

    def ref(like, M, *, sym=True, dtype=None, **kw):
        d = S.np_dtype(dtype) if dtype is not None else like.dtype
        if M == 0:
            return np.zeros(0, d)
        if name == "general_cosine":
            w = _cosine_sum(kw["a"])(M, sym)
        elif name == "general_hamming":
            w = _cosine_sum([kw["alpha"], 1 - kw["alpha"]])(M, sym)
        else:
            w = fn(M, sym, **kw)
        return np.asarray(w, np.float64).astype(d)
    return ref


def _window_samples(name):
    kw = _WINDOWS[name][1]

    def gen(device, dtype, requires_grad):
        for M in (0, 1, 2, 5, 8):
            for sym in (True, False):
                yield SampleInput(_t((), dtype), (M,), {"sym": sym, **kw}, name=f"M{M}_{'sym' if sym else 'per'}")
        if name == "exponential":
            yield SampleInput(_t((), dtype), (7,), {"sym": False, "tau": 1.5, "center": 2.0}, name="center")
    return gen


def _window_errors(name):
    kw = _WINDOWS[name][1]
    fn_name = "general_cosine" if name in ("hann", "hamming", "general_hamming", "nuttall") else name
    makers = [
        lambda: _err(ValueError, f"{fn_name} requires non-negative window length, got M=-1", _t(()), -1, **kw),
        lambda: _err(ValueError, f"{fn_name} expects float32 or float64 dtypes, got: torch.int64", _t(()), 3,
                     dtype=tp.int64, **kw),
        lambda: _err(ValueError, f"{fn_name} expects float32 or float64 dtypes, got: torch.float16", _t(()), 3,
                     dtype=tp.float16, **kw),
    ]
    if name == "exponential":
        makers += [lambda: _err(ValueError, "Tau must be positive, got: -1 instead.", _t(()), 3, tau=-1),
                   lambda: _err(ValueError, "Center must be None for symmetric windows", _t(()), 3, center=1,
                                sym=True)]
    if name == "gaussian":
        makers.append(lambda: _err(ValueError, "Standard deviation must be positive, got: -1 instead.", _t(()), 3,
                                   std=-1))
    if name == "kaiser":
        makers.append(lambda: _err(ValueError, "beta must be non-negative, got: -1 instead.", _t(()), 3, beta=-1))
    if name == "general_cosine":
        makers += [lambda: _err(TypeError, "Coefficients must be a list/tuple", _t(()), 3, a=None),
                   lambda: _err(ValueError, "Coefficients cannot be empty", _t(()), 3, a=[])]
    return _errors(*makers)


for _name in _WINDOWS:
    _add(f"signal.windows.{_name}", _window_op(getattr(_signal.windows, _name)), _window_ref(_name), _F32_64,
         _window_samples(_name), supports_autograd=False, aten=(), error_inputs=_window_errors(_name))
