"""The orthogonal polynomials of ``tensorplug.special``, small pointwise ops (``isposinf``, ``isneginf``,
``isreal``, ``heaviside``, ``frexp``, ``ldexp``, ``nextafter``, the bit shifts), ``mvlgamma``, numerical
integration and differentiation (``trapezoid``, ``trapz``, ``cumulative_trapezoid``, ``gradient``) and
the histograms (``histogram``, ``histogramdd``).

Backend primitives (numpy kernels on the CPU): the twelve ``special_*_polynomial_*`` ops (``x`` and ``n``
tensors; the ``.x_scalar``/``.n_scalar`` overloads wrap a Python number and are composites), ``frexp.Tensor``,
``nextafter`` (and ``nextafter_``), ``bitwise_left_shift.Tensor``/``bitwise_right_shift.Tensor`` (and their
in-place forms) and ``_histogramdd_from_bin_tensors``. PyTorch differentiates none of them but ``frexp``
(the mantissa's gradient is ``grad / 2**exponent``), so the others have no backward formula: backward
through them raises. The rest are CompositeImplicitAutograd or Python functions over existing ops.
"""

from __future__ import annotations

import math as _math
import numbers
from collections import namedtuple

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from ._common import as_dtype as _as
from ._lib import POINTWISE, defop, public, attach
from .comparison import where as _where_t
from .factories import zeros, linspace, full_like
from .joining import cat
from .out import with_out
from .pointwise import (check_binary, check_inplace_binary, check_inplace_shape, not_implemented, scalar_tensor,
                        is_tensor, float_dtype, check_float_inplace, documented, python_scalar,
                        scalar_result_dtype, with_inplace)
from .promotion import result_type, check_can_cast, _pt_name
from .special_ops import special_multigammaln
from .math_ops import pow_scalar

_FLOATING, _INTEGRAL, _COMPLEX = _dt.FLOATING, _dt.INTEGRAL, _dt.COMPLEX
_INF = _math.inf


# -- orthogonal polynomials -------------------------------------------------------------------------------
POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")

_POLY_DOCS = {
    "chebyshev_polynomial_t": "Chebyshev polynomial of the first kind T_n(x)",
    "chebyshev_polynomial_u": "Chebyshev polynomial of the second kind U_n(x)",
    "chebyshev_polynomial_v": "Chebyshev polynomial of the third kind V_n(x)",
    "chebyshev_polynomial_w": "Chebyshev polynomial of the fourth kind W_n(x)",
    "shifted_chebyshev_polynomial_t": "shifted Chebyshev polynomial of the first kind T*_n(x) = T_n(2x - 1)",
    "shifted_chebyshev_polynomial_u": "shifted Chebyshev polynomial of the second kind U*_n(x) = U_n(2x - 1)",
    "shifted_chebyshev_polynomial_v": "shifted Chebyshev polynomial of the third kind V*_n(x) = V_n(2x - 1)",
    "shifted_chebyshev_polynomial_w": "shifted Chebyshev polynomial of the fourth kind W*_n(x) = W_n(2x - 1)",
    "hermite_polynomial_h": "physicists' Hermite polynomial H_n(x)",
    "hermite_polynomial_he": "probabilists' Hermite polynomial He_n(x)",
    "laguerre_polynomial_l": "Laguerre polynomial L_n(x)",
    "legendre_polynomial_p": "Legendre polynomial P_n(x)",
}


def _poly_check(name):
    kernel = name + "_cpu"

    def check(x, n):
        check_binary(x, n)
        d = float_dtype(x._dtype if x._dtype is n._dtype else result_type(x, n))
        if d is not _dt.float32 and d is not _dt.float64:
            raise not_implemented(kernel, d)
    return check


def _x_scalar(entry):
    def impl(x, n):
        return entry(scalar_tensor(x, result_type(x, n), n._device), n)
    return impl


def _n_scalar(entry):
    def impl(x, n):
        return entry(x, scalar_tensor(n, result_type(x, n), x._device))
    return impl


def _poly_function(name, t, xs, ns):
    def fn(input, n):
        if not is_tensor(input):
            if not is_tensor(n):
                raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                                f"({type(input).__name__}, {type(n).__name__}), but expected one of:\n"
                                " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                                " * (Number x, Tensor n, *, Tensor out = None)\n"
                                " * (Tensor x, Number n, *, Tensor out = None)\n")
            return xs(python_scalar(input), n)
        if not is_tensor(n):
            return ns(input, python_scalar(n))
        return t(input, n)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {_POLY_DOCS[name]}, elementwise over ``input`` (x) and ``n``; either may be a Python "
                  "number. ``n`` is truncated to an integer; a negative degree gives 0. Floating results "
                  "(integer and bool inputs give the default float dtype); not differentiable, as in PyTorch.")
    return fn


SPECIAL_FUNCTIONS: dict = {}  # name -> function of tensorplug.special

for _name in POLYNOMIALS:
    _t = defop(f"special_{_name}(Tensor x, Tensor n) -> Tensor", check=_poly_check(_name), tags=POINTWISE)
    _xs = defop(f"special_{_name}.x_scalar(Scalar x, Tensor n) -> Tensor", composite=_x_scalar(_t),
                tags=POINTWISE)
    _ns = defop(f"special_{_name}.n_scalar(Tensor x, Scalar n) -> Tensor", composite=_n_scalar(_t),
                tags=POINTWISE)
    SPECIAL_FUNCTIONS[_name] = with_out(f"special_{_name}", _poly_function(_name, _t, _xs, _ns))


# -- isposinf, isneginf, isreal ------------------------------------------------------------------------------
def _check_no_complex(name):
    def check(self):
        if self._dtype.category == _COMPLEX:
            raise RuntimeError(f"{name} does not support complex inputs.")
    return check


def _bool_like(self, value):
    return full_like(self, value, dtype=_dt.bool)


def _isposinf(self):
    if self._dtype.category != _FLOATING:
        return _bool_like(self, False)
    return self == _INF


def _isneginf(self):
    if self._dtype.category != _FLOATING:
        return _bool_like(self, False)
    return self == -_INF


def _isreal(self):
    if self._dtype.category != _COMPLEX:
        return _bool_like(self, True)
    return self.imag == 0


isposinf = defop("isposinf(Tensor self) -> Tensor", check=_check_no_complex("isposinf"), composite=_isposinf,
                 tags=POINTWISE)
isneginf = defop("isneginf(Tensor self) -> Tensor", check=_check_no_complex("isneginf"), composite=_isneginf,
                 tags=POINTWISE)
isreal = defop("isreal(Tensor self) -> Tensor", composite=_isreal)  # untagged in PyTorch


# -- heaviside --------------------------------------------------------------------------------------------------
def _check_heaviside(self, values):
    check_binary(self, values)
    if self._dtype.category == _COMPLEX or values._dtype.category == _COMPLEX:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if self._dtype is not values._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def _check_heaviside_(self, values):
    _check_heaviside(self, values)
    check_inplace_binary(self, values)


def _heaviside(self, values):
    d = self._dtype
    return _where_t(self == 0, values, _as(self > 0, d))


def _heaviside_(self, values):
    return self.copy_(_heaviside(self, values))


heaviside = defop("heaviside(Tensor self, Tensor values) -> Tensor", check=_check_heaviside, composite=_heaviside,
                  tags=POINTWISE)
heaviside_ = defop("heaviside_(Tensor(a!) self, Tensor values) -> Tensor(a!)", check=_check_heaviside_,
                   composite=_heaviside_)


# -- frexp, ldexp, nextafter ---------------------------------------------------------------------------------------
frexp_result = namedtuple("frexp", ["mantissa", "exponent"])


def _check_frexp(self):
    if self._dtype.category != _FLOATING:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")


_frexp = defop("frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)", check=_check_frexp,
               tags=POINTWISE)


@derivative("frexp.Tensor", nondiff_outputs=(1,))
def _(grads, result1):
    g = grads[0]
    return g / pow_scalar(2.0, result1).to(g.dtype)


def frexp(input):
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``, ``0.5 <= |mantissa| < 1`` (0, inf and
    NaN keep themselves as the mantissa, with exponent 0); the exponent is int32. Floating inputs only."""
    return frexp_result(*_frexp(input))


def _ldexp(self, other):
    # PyTorch's result dtype: the promoted one, integers giving the default float
    d = float_dtype(result_type(self, other))
    return _as(self, d) * pow_scalar(2.0, _as(other, d))


def _check_ldexp_(self, other):
    check_binary(self, other)
    check_inplace_shape(self, other)
    if float_dtype(result_type(self, other)).category > self._dtype.category:
        raise RuntimeError(f"ldexp can't be cast to the desired output type {_pt_name(self._dtype)}")


def _ldexp_(self, other):
    return self.mul_(pow_scalar(2.0, _as(other, float_dtype(result_type(self, other)))))


ldexp = defop("ldexp.Tensor(Tensor self, Tensor other) -> Tensor", check=check_binary, composite=_ldexp,
              tags=POINTWISE)
ldexp_ = defop("ldexp_(Tensor(a!) self, Tensor other) -> Tensor(a!)", check=_check_ldexp_, composite=_ldexp_,
               tags=POINTWISE)


def _float_binary_check(name, base):
    def check(self, other):
        base(self, other)
        d = self._dtype if self._dtype is other._dtype else result_type(self, other)
        if d.category != _FLOATING:
            raise not_implemented(name, d)
    return check


nextafter = defop("nextafter(Tensor self, Tensor other) -> Tensor",
                  check=_float_binary_check("nextafter_cpu", check_binary), tags=POINTWISE)
nextafter_ = defop("nextafter_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                   check=_float_binary_check("nextafter_cpu", check_inplace_binary), tags=POINTWISE)


@with_inplace("nextafter")
def _(grad, self, other, needs_input_grad):
    # PyTorch's: the step is locally constant, so self's gradient passes through and other's is zero
    return (sum_to(grad, self._shape) if needs_input_grad[0] else None,
            sum_to(grad, other._shape) * 0.0 if needs_input_grad[1] else None)


# -- bit shifts ----------------------------------------------------------------------------------------------------
def _integral_check(name, base):
    def check(self, other):
        base(self, other)
        d = self._dtype if self._dtype is other._dtype else result_type(self, other)
        if d.category != _INTEGRAL:
            raise not_implemented(name, d)
    return check


def _shift_scalar(entry):
    def impl(self, other):
        return entry(self, scalar_tensor(other, scalar_result_dtype(self._dtype, other), self._device))
    return impl


def _shift_scalar_self(entry):
    def impl(self, other):
        return entry(scalar_tensor(self, result_type(self, other), other._device), other)
    return impl


def _shift_scalar_(entry, kernel):
    def impl(self, other):
        d = scalar_result_dtype(self._dtype, other)
        if d.category != _INTEGRAL:
            raise not_implemented(kernel, d)
        check_can_cast(d, self._dtype)
        return entry(self, scalar_tensor(other, self._dtype, self._device))
    return impl


_SHIFTS = {}
for _name, _kernel in (("bitwise_left_shift", "lshift_cpu"), ("bitwise_right_shift", "rshift_cpu")):
    _t = defop(f"{_name}.Tensor(Tensor self, Tensor other) -> Tensor",
               check=_integral_check(_kernel, check_binary), tags=POINTWISE)
    _s = defop(f"{_name}.Tensor_Scalar(Tensor self, Scalar other) -> Tensor", composite=_shift_scalar(_t),
               tags=POINTWISE)
    _ss = defop(f"{_name}.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", composite=_shift_scalar_self(_t),
                tags=POINTWISE)
    _ti = defop(f"{_name}_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                check=_integral_check(_kernel, check_inplace_binary), tags=POINTWISE)
    _si = defop(f"{_name}_.Tensor_Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                composite=_shift_scalar_(_ti, _kernel), tags=POINTWISE)
    _SHIFTS[_name] = (_t, _s, _ss, _ti, _si)


def _shift_function(name):
    t, s, ss, _, _ = _SHIFTS[name]

    def fn(input, other):
        if not is_tensor(input):
            return ss(python_scalar(input), other)
        if not is_tensor(other):
            return s(input, python_scalar(other))
        return t(input, other)
    fn.__name__ = fn.__qualname__ = name
    direction = "left" if "left" in name else "right"
    fn.__doc__ = (f"``input`` shifted {direction} by ``other`` bits (integer dtypes; either argument may be a "
                  "Python number). " + ("Bits shifted out are lost; a shift below 0 or of the bit width or more "
                                        "gives 0." if direction == "left" else
                                        "Signed values shift in copies of the sign bit; a shift below 0 or of "
                                        "the bit width or more gives -1 for negative values, else 0."))
    return fn


def _shift_inplace(name):
    _, _, _, ti, si = _SHIFTS[name]

    def fn(self, other):
        if not is_tensor(other):
            return si(self, python_scalar(other))
        return ti(self, other)
    fn.__name__ = fn.__qualname__ = name + "_"
    fn.__doc__ = f"In-place {name}."
    return fn


def _shift_operator(fn):
    def op(self, other):
        if is_tensor(other) or isinstance(other, numbers.Number):
            return fn(self, other)
        return NotImplemented
    return op


def _shift_reflected(fn):
    def op(self, other):
        if isinstance(other, numbers.Number):
            return fn(python_scalar(other), self)
        if is_tensor(other):
            return fn(other, self)
        return NotImplemented
    return op


# -- mvlgamma -----------------------------------------------------------------------------------------------
def mvlgamma(input, p):
    """The log of the multivariate gamma function of dimension ``p`` (``tensorplug.special.multigammaln``)."""
    return special_multigammaln(input, p)


def _check_mvlgamma_(self, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    check_float_inplace(self)


def _mvlgamma_(self, p):
    return self.copy_(special_multigammaln(self, p))


mvlgamma_ = defop("mvlgamma_(Tensor(a!) self, int p) -> Tensor(a!)", check=_check_mvlgamma_, composite=_mvlgamma_,
                  tags=POINTWISE)


# -- trapezoid, cumulative_trapezoid ----------------------------------------------------------------------------
def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _x_viewed(name, y, x, dim):
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0]
        return x.view(shape)
    if x.dim() < y.dim():
        return x.view((1,) * (y.dim() - x.dim()) + tuple(x.shape))
    return x


def _check_dx(name, dx):
    if isinstance(dx, (bool, complex)) or (is_tensor(dx)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")


def _zeros_except(y, dim):
    shape = list(y.shape)
    del shape[dim]
    return zeros(shape, dtype=y.dtype, device=y.device)


def _trapezoid_x(y, x, dim):
    dim = _wrap_dim(dim, y.dim())
    if y.shape[dim] == 0:
        return _zeros_except(y, dim)
    if y.dtype is _dt.bool or x.dtype is _dt.bool:
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    xv = _x_viewed("trapezoid", y, x, dim)
    n = xv.shape[dim]
    dx = xv.narrow(dim, 1, n - 1) - xv.narrow(dim, 0, n - 1)
    m = y.shape[dim]
    return ((y.narrow(dim, 1, m - 1) + y.narrow(dim, 0, m - 1)) * dx).sum(dim) / 2.0


def _trapezoid_dx(y, dx, dim):
    dim = _wrap_dim(dim, y.dim())
    if y.shape[dim] == 0:
        return _zeros_except(y, dim)
    if y.dtype is _dt.bool:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    _check_dx("trapezoid", dx)
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * float(dx)


def _check_x(name, y, x, dx):
    if not is_tensor(x) or dx is not None:
        got = ", ".join([type(y).__name__, type(x).__name__] + ([f"dx={type(dx).__name__}"] if dx is not None else []))
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
                        f"of:\n * (Tensor y, Tensor x, *, int dim = -1)\n * (Tensor y, *, Number dx = 1, "
                        "int dim = -1)\n")


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, at the sample points ``x`` (a tensor) or
    spaced ``dx`` apart (default 1); an empty ``dim`` integrates to 0."""
    if x is not None:
        _check_x("trapezoid", y, x, dx)
        return _trapezoid_x(y, x, dim)
    return _trapezoid_dx(y, 1 if dx is None else dx, dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    """:func:`trapezoid` under its older name: ``trapz(y, x, dim=-1)`` or ``trapz(y, dx=1, dim=-1)``."""
    if x is not None:
        _check_x("trapz", y, x, dx)
        return _trapezoid_x(y, x, dim)
    return _trapezoid_dx(y, 1 if dx is None else dx, dim)


def _cumulative_x(y, x, dim):
    if y.dtype is _dt.bool or x.dtype is _dt.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    dim = _wrap_dim(dim, y.dim())
    xv = _x_viewed("cumulative_trapezoid", y, x, dim)
    n = xv.shape[dim]
    dx = xv.narrow(dim, 1, max(n - 1, 0)) - xv.narrow(dim, 0, max(n - 1, 0))
    m = y.shape[dim]
    left, right = y.narrow(dim, 0, max(m - 1, 0)), y.narrow(dim, 1, max(m - 1, 0))
    return ((left + right) * dx).cumsum(dim) / 2.0


def _cumulative_dx(y, dx, dim):
    if y.dtype is _dt.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
    _check_dx("cumulative_trapezoid", dx)
    dim = _wrap_dim(dim, y.dim())
    m = y.shape[dim]
    left, right = y.narrow(dim, 0, max(m - 1, 0)), y.narrow(dim, 1, max(m - 1, 0))
    return ((left + right) * (float(dx) / 2.0)).cumsum(dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral of ``y`` along ``dim`` (one element fewer than ``y`` there), at the
    sample points ``x`` or spaced ``dx`` apart (default 1)."""
    if x is not None:
        _check_x("cumulative_trapezoid", y, x, dx)
        return _cumulative_x(y, x, dim)
    return _cumulative_dx(y, 1 if dx is None else dx, dim)


# -- gradient -----------------------------------------------------------------------------------------------------
def _gradient_checks(self, spacing_size, dims, edge_order):
    if self.dtype is _dt.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and dims is None and spacing_size != self.dim():
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                           f"equal to 'self.dim() = {self.dim()}', since dim argument was not given, but got a "
                           f"list of length {spacing_size}")
    if spacing_size is not None and dims is not None and spacing_size != len(dims):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {spacing_size}"
                           f" and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dims is not None:
        seen = set()
        for d in dims:
            w = _wrap_dim(d, self.dim())
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.add(w)
    for d in (range(self.dim()) if dims is None else dims):
        if self.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")


def _sl(t, dim, start, stop=None):
    n = t.shape[dim]
    start = start + n if start < 0 else start
    stop = n if stop is None else (stop + n if stop < 0 else stop)
    return t.narrow(dim, start, max(stop - start, 0))


def _gradient_scalar(self, spacing, dims, edge_order):
    out = []
    for i, d in enumerate(dims):
        d = _wrap_dim(d, self.dim())
        h = spacing[i]
        center = (_sl(self, d, 2) - _sl(self, d, 0, -2)) / h
        if edge_order == 1:
            pre = (_sl(self, d, 1, 2) - _sl(self, d, 0, 1)) / h
            app = (_sl(self, d, -1) - _sl(self, d, -2, -1)) / h
        else:
            pre = (_sl(self, d, 0, 1) * -1.5 + _sl(self, d, 1, 2) * 2 - _sl(self, d, 2, 3) * 0.5) / h
            app = (_sl(self, d, -3, -2) * 0.5 - _sl(self, d, -2, -1) * 2 + _sl(self, d, -1) * 1.5) / h
        out.append(cat([pre, center / 2, app], d))
    return tuple(out)


def _gradient_coordinates(self, coords, dims, edge_order):
    for c in coords:
        if c.device != self.device:
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, but got devices "
                               f"{self.device} and {c.device}!")
    out = []
    for i, d in enumerate(dims):
        c = coords[i]
        if c.dim() != 1:
            raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got an "
                               f"element with {c.dim()} dimensions!")
        d = _wrap_dim(d, self.dim())
        shape = [1] * self.dim()
        shape[d] = -1
        ax = c.diff()
        dx1, dx2 = _sl(ax, 0, 0, -1), _sl(ax, 0, 1)
        a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
        b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
        cc = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
        center = a * _sl(self, d, 0, -2) + b * _sl(self, d, 1, -1) + cc * _sl(self, d, 2)
        if edge_order == 1:
            pre = (_sl(self, d, 1, 2) - _sl(self, d, 0, 1)) / ax[0]
            app = (_sl(self, d, -1) - _sl(self, d, -2, -1)) / ax[-1]
        else:
            h0, h1 = ax[0], ax[1]
            pa = -(2.0 * h0 + h1) / (h0 * (h0 + h1))
            pb = (h0 + h1) / (h0 * h1)
            pc = (-h0) / (h1 * (h0 + h1))
            pre = pa * _sl(self, d, 0, 1) + pb * _sl(self, d, 1, 2) + pc * _sl(self, d, 2, 3)
            e1, e2 = ax[-1], ax[-2]
            qa = e1 / (e2 * (e1 + e2))
            qb = -(e1 + e2) / (e1 * e2)
            qc = (2 * e1 + e2) / (e1 * (e1 + e2))
            app = qa * _sl(self, d, -3, -2) + qb * _sl(self, d, -2, -1) + qc * _sl(self, d, -1)
        out.append(cat([pre, center, app], d))
    return tuple(out)


def gradient(input, *, spacing=None, dim=None, edge_order=1):
    """Estimates of the partial derivatives of ``input`` by central differences in the interior and one-sided
    (``edge_order`` 1 or 2) differences at the ends, along ``dim`` (an int, a list, or every dim). ``spacing``
    is a number (the unit step, 1 by default), a list of numbers (one per dim) or a list of 1-D coordinate tensors.
    Returns a tuple with one tensor per dim."""
    self = input
    int_dim = isinstance(dim, int) and not isinstance(dim, bool)
    dims = None if dim is None else ([dim] if int_dim else list(dim))
    if is_tensor(spacing):
        raise TypeError("gradient(): argument 'spacing' must be a number or a tuple of numbers or tensors, "
                        "not Tensor")
    if isinstance(spacing, (list, tuple)):
        if spacing and all(is_tensor(s) for s in spacing):
            all_dims = dims if dims is not None else list(range(self.dim()))
            _gradient_checks(self, len(spacing), dims, edge_order)
            return _gradient_coordinates(self, list(spacing), all_dims, edge_order)
        values = [python_scalar(s) for s in spacing]
        all_dims = dims if dims is not None else list(range(self.dim()))
        _gradient_checks(self, len(values), dims, edge_order)
        return _gradient_scalar(self, values, all_dims, edge_order)
    h = 1.0 if spacing is None else python_scalar(spacing)
    if dims is None or int_dim:
        all_dims = dims if dims is not None else list(range(self.dim()))
        values = [h] * len(all_dims)
        _gradient_checks(self, None if spacing is None else len(values), dims, edge_order)
        return _gradient_scalar(self, values, all_dims, edge_order)
    values = [h] * len(dims)
    _gradient_checks(self, len(values), dims, edge_order)
    return _gradient_scalar(self, values, dims, edge_order)


# -- histograms ---------------------------------------------------------------------------------------------------
histogram_result = namedtuple("histogram", ["hist", "bin_edges"])
histogramdd_result = namedtuple("histogramdd", ["hist", "bin_edges"])


def _check_hist_dtype(self):
    if self._dtype is not _dt.float32 and self._dtype is not _dt.float64:
        raise not_implemented("histogramdd", self._dtype)


def _check_histogramdd_inputs(self, bins, weight=None, density=False):
    _check_hist_dtype(self)
    if self.dim() < 2:
        raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 dimensions, but got "
                           f"{self.dim()}")
    n = self.shape[-1]
    if len(bins) != n:
        raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for a {n}-dimensional "
                           f"histogram but got {len(bins)}")
    for j, b in enumerate(bins):
        if b._dtype is not self._dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                               f"got input with dtype {_dt.c_type_name(self._dtype)} and bins for dimension {j} "
                               f"with dtype {_dt.c_type_name(b._dtype)}")
        if b.dim() != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {b.dim()} "
                               f"dimensions in the bins tensor for dimension {j}")
        if b.numel() == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements "
                               f"in the bins tensor for dimension {j}")
    _check_weight(self, weight)


def _check_weight(self, weight):
    if weight is not None:
        if weight._dtype is not self._dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, it should have the same dtype as "
                               f"the input tensor, but got weight with dtype {_dt.c_type_name(weight._dtype)} and "
                               f"input with dtype {_dt.c_type_name(self._dtype)}")
        if tuple(weight.shape) != tuple(self.shape[:-1]):
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as "
                               "the input tensor excluding its innermost dimension, but got input with shape "
                               f"{list(self.shape)} and weight with shape {list(weight.shape)}")


_histogramdd = defop("_histogramdd_from_bin_tensors(Tensor self, Tensor[] bins, *, Tensor? weight=None, "
                     "bool density=False) -> Tensor", check=_check_histogramdd_inputs)


def _fmt(v):
    return str(int(v)) if float(v).is_integer() else repr(float(v)) if _math.isfinite(v) else str(v)


def _outer_edges(self, ranges, n):
    """(leftmost, rightmost) of each of the ``n`` dims: the given range or the data's ([0, 1] without data),
    widened by 0.5 each way when empty."""
    out = []
    if ranges is None and self.numel():
        lo = self.reshape(-1, n).amin(0).tolist()
        hi = self.reshape(-1, n).amax(0).tolist()
    for j in range(n):
        if ranges is not None:
            a, b = float(ranges[2 * j]), float(ranges[2 * j + 1])
        elif self.numel():
            a, b = float(lo[j]), float(hi[j])
        else:
            a, b = 0.0, 1.0  # no data: PyTorch's default range
        if a == b:
            a, b = a - 0.5, b + 0.5
        if not (_math.isfinite(a) and _math.isfinite(b)):
            raise RuntimeError(f"torch.histogramdd: dimension {j}'s range [{_fmt(a)}, {_fmt(b)}] is not finite")
        if a > b:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_fmt(a)} max {_fmt(b)} "
                               f"for dimension {j}")
        out.append((a, b))
    return out


def _bin_edges(self, bin_cts, ranges, name):
    _check_hist_dtype(self)
    n = self.shape[-1] if self.dim() else 1
    if ranges is not None and len(ranges) != 2 * n:
        raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range should have {2 * n} "
                           f"elements, but got {len(ranges)}")
    for j, b in enumerate(bin_cts):
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for dimension {j}")
    edges = []
    for (a, b), ct in zip(_outer_edges(self, ranges, n), bin_cts):
        edges.append(linspace(a, b, ct + 1, dtype=self.dtype, device=self.device))
    return edges


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """A histogram of ``input``'s values: ``bins`` equal bins over ``range`` (the data's [min, max] by default),
    or the bin edges given as a 1-D tensor. Bins are half-open, the last one closed. With ``weight`` each value
    adds its weight; with ``density`` the result integrates to 1. Returns ``(hist, bin_edges)``. float32 and
    float64 only; not differentiable."""
    flat = input.reshape(input.numel(), 1) if is_tensor(input) else input
    w = None if weight is None else weight.reshape(weight.numel())
    if is_tensor(bins):
        edges = bins
        hist = _histogramdd(flat, [edges], weight=w, density=density)
        return histogram_result(hist, edges.contiguous().clone())
    if not isinstance(bins, int) or isinstance(bins, bool):
        raise TypeError(f"histogram(): argument 'bins' must be int or Tensor, not {type(bins).__name__}")
    _check_hist_dtype(input)
    _check_weight(flat, w)
    edges = _bin_edges(flat, [bins], range, "histogram")
    hist = _histogramdd(flat, edges, weight=w, density=density)
    return histogram_result(hist, edges[0])


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """A D-dimensional histogram of the points in the rows of ``input`` (shape (..., D)): ``bins`` is an int
    (each dim), a list of D ints, or a list of D 1-D tensors of bin edges; ``range`` lists the 2D outer
    edges (min, max of each dim). Returns ``(hist, bin_edges)``; float32 and float64 only."""
    if isinstance(bins, (list, tuple)) and bins and all(is_tensor(b) for b in bins):
        edges = list(bins)
    else:
        _check_hist_dtype(input)
        if input.dim() < 2:
            raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 dimensions, but got "
                               f"{input.dim()}")
        n = input.shape[-1]
        cts = [bins] * n if isinstance(bins, int) else list(bins)
        if len(cts) != n:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
        _check_weight(input, weight)
        edges = _bin_edges(input, cts, range, "histogramdd")
    hist = _histogramdd(input, edges, weight=weight, density=density)
    return histogramdd_result(hist, tuple(edges))


# -- public names -------------------------------------------------------------------------------------------------
for _name, _fn, _doc in (
        ("isposinf", isposinf, "True where the element is +inf (never for integers and bool)."),
        ("isneginf", isneginf, "True where the element is -inf (never for integers and bool)."),
        ("heaviside", heaviside, "The Heaviside step: 0 where input < 0, ``values`` where input == 0, 1 where "
                                 "input > 0 (``values`` a tensor of input's dtype)."),
        ("ldexp", ldexp, "input * 2**other (a floating result for integer inputs)."),
        ("nextafter", nextafter, "The next floating-point value after input toward other (floating dtypes)."),
):
    documented(_fn, _doc)
    public(_name, with_out(_name, _fn))
    attach(_name, _fn)
documented(isreal, "True where the element has no imaginary part (always for real dtypes).")
public("isreal", isreal)
attach("isreal", isreal)
for _name, _fn in (("heaviside_", heaviside_), ("ldexp_", ldexp_), ("nextafter_", nextafter_),
                   ("mvlgamma_", mvlgamma_)):
    attach(_name, documented(_fn, f"In-place {_name[:-1]}."))
public("frexp", with_out("frexp", frexp))
attach("frexp", frexp)
public("mvlgamma", with_out("mvlgamma", mvlgamma))
attach("mvlgamma", mvlgamma)
for _name in ("bitwise_left_shift", "bitwise_right_shift"):
    _f = _shift_function(_name)
    public(_name, with_out(_name, _f))
    attach(_name, _f)
    attach(_name + "_", _shift_inplace(_name))
attach("__lshift__", _shift_operator(_shift_function("bitwise_left_shift")))
attach("__rshift__", _shift_operator(_shift_function("bitwise_right_shift")))
attach("__ilshift__", _shift_operator(_shift_inplace("bitwise_left_shift")))
attach("__irshift__", _shift_operator(_shift_inplace("bitwise_right_shift")))
attach("__rlshift__", _shift_reflected(_shift_function("bitwise_left_shift")))
attach("__rrshift__", _shift_reflected(_shift_function("bitwise_right_shift")))
for _name, _fn in (("trapezoid", trapezoid), ("trapz", trapz), ("cumulative_trapezoid", cumulative_trapezoid),
                   ("gradient", gradient)):
    public(_name, _fn)
public("histogram", with_out("histogram", histogram))
attach("histogram", histogram)
public("histogramdd", histogramdd)
