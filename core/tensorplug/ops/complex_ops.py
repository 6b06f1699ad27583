"""Complex numbers: ``view_as_real``/``view_as_complex``, ``real``/``imag``, ``conj``, ``angle``,
``polar`` and ``complex``.

Backend primitives: ``view_as_real`` and ``view_as_complex`` (views that change the
dtype: a complex64 tensor of shape ``(n,)`` is a float32 tensor of shape ``(n, 2)``
over the same memory), ``conj_physical`` and ``angle``. ``real`` and ``imag`` select
the last dim of ``view_as_real``, so they are views and writable (``z.real.mul_(2)``
changes ``z``), and their gradients come from the view ops' formulas.

PyTorch's ``conj`` of a complex tensor is a lazy view with a "conjugate bit";
tensorplug computes it (``conj`` is ``conj_physical`` for complex tensors and the
tensor itself for real ones), so ``is_conj()`` is always False and
``resolve_conj`` returns its input.

Gradients follow PyTorch's convention for a real loss ``L`` of a complex ``z``: the
gradient is ``dL/dRe(z) + i dL/dIm(z)`` (the conjugate Wirtinger derivative, times 2),
so a holomorphic ``f`` passes ``grad * conj(f'(z))`` back.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..backend import backend_of
from ..tensor import Tensor, make_view
from ._lib import POINTWISE, defop, public, attach
from .arithmetic import mul, div, mul_scalar
from .comparison import where, eq_scalar
from .factories import zeros_like
from .joining import stack
from .math_ops import abs, cos, sign, sin
from .pointwise import documented, not_implemented, zero, check_binary
from .promotion import broadcast_shapes, _pt_name
from .views import select, expand

_COMPLEX = _dt.COMPLEX
_I = 1j


def is_complex_dtype(t):
    """Whether ``t`` (a tensor) has a complex dtype."""
    return t._dtype.category == _COMPLEX


# -- views between complex and real -----------------------------------------------------------------
def _check_view_as_real(self):
    if self._dtype.category != _COMPLEX:
        raise RuntimeError("view_as_real is only supported for complex tensors")


def _check_view_as_complex(self):
    d = self._dtype
    if d is not _dt.float32 and d is not _dt.float64:
        if d is _dt.float16:  # PyTorch's complex32
            raise TypeError("Got unsupported ScalarType ComplexHalf")
        raise RuntimeError(f"view_as_complex is only supported for half, float and double tensors, but got a "
                           f"tensor of scalar type: {_pt_name(d)}")
    if not self._shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if self._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    st = self.stride()
    if st[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in st[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")


def _view_of(self, shape, strides, offset, dtype):
    # a view in another dtype over the same storage: the backend record builds it (every backend has one)
    arr = backend_of(self._device.type).as_strided(self._get_storage().root, shape, strides, offset, dtype)
    return make_view(self, arr, dtype, offset)


def _view_as_real_impl(self):
    return _view_of(self, self._shape + (2,), tuple(2 * s for s in self.stride()) + (1,), 2 * self.storage_offset(),
                    self._dtype.to_real())


def _view_as_complex_impl(self):
    return _view_of(self, self._shape[:-1], tuple(s // 2 for s in self.stride()[:-1]), self.storage_offset() // 2,
                    self._dtype.to_complex())


view_as_real = documented(
    defop("view_as_real(Tensor(a) self) -> Tensor(a)", check=_check_view_as_real, explicit=_view_as_real_impl),
    "A real view of a complex tensor: a last dim of size 2 holds the real and imaginary parts.")
view_as_complex = documented(
    defop("view_as_complex(Tensor(a) self) -> Tensor(a)", check=_check_view_as_complex,
          explicit=_view_as_complex_impl),
    "A complex view of a float32 or float64 tensor whose last dim (size 2, stride 1) holds real and "
    "imaginary parts.")


@derivative("view_as_real")
def _(grad):
    return view_as_complex(grad.contiguous())


@derivative("view_as_complex")
def _(grad):
    return view_as_real(grad)


def _real_impl(self):
    if self._dtype.category != _COMPLEX:
        return self
    return select(view_as_real(self), -1, 0)


def _imag_impl(self):
    if self._dtype.category != _COMPLEX:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return select(view_as_real(self), -1, 1)


real = documented(defop("real(Tensor(a) self) -> Tensor(a)", composite=_real_impl),
                  "The real part of a complex tensor, as a view (a real tensor itself).")
imag = documented(defop("imag(Tensor(a) self) -> Tensor(a)", composite=_imag_impl),
                  "The imaginary part of a complex tensor, as a view (real tensors raise).")


def _set_real(self, value):
    real(self).copy_(value)


def _set_imag(self, value):
    imag(self).copy_(value)


Tensor.real = property(real, _set_real, doc="The real part (a view; assigning writes into it).")
Tensor.imag = property(imag, _set_imag, doc="The imaginary part of a complex tensor (a view; assigning writes into it).")
for _n, _f in (("view_as_real", view_as_real), ("view_as_complex", view_as_complex), ("real", real),
               ("imag", imag)):
    public(_n, _f)


# -- conjugation --------------------------------------------------------------------------------------
conj_physical = documented(defop("conj_physical(Tensor self) -> Tensor", tags=POINTWISE),
                           "The complex conjugate, computed (real tensors: a copy).")
conj_physical_ = documented(defop("conj_physical_(Tensor(a!) self) -> Tensor(a!)", tags=POINTWISE),
                            "In-place complex conjugate.")


@derivative("conj_physical")
def _(grad):
    return conj_physical(grad)


@derivative("conj_physical_")
def _(grad):
    return conj_physical(grad)


def _conj_impl(self):
    return conj_physical(self) if self._dtype.category == _COMPLEX else self


conj = documented(defop("conj(Tensor(a) self) -> Tensor(a)", composite=_conj_impl),
                  "The complex conjugate (real tensors: the tensor itself). tensorplug computes it rather "
                  "than setting a lazy conjugate bit, so ``is_conj()`` is False.")
resolve_conj = documented(defop("resolve_conj(Tensor(a) self) -> Tensor(a)", composite=lambda self: self),
                          "The tensor itself: tensorplug's conjugates are never lazy.")


def is_conj(input):
    """Whether ``input`` is a lazy conjugate view: always False (tensorplug computes conjugates)."""
    return False


def conj_if_complex(t):
    """``conj(t)`` for a complex ``t``, else ``t`` itself: the factor a holomorphic op's formula passes back."""
    return conj_physical(t) if t._dtype.category == _COMPLEX else t


def conj_physical_fn(input):
    """The complex conjugate, computed; a real ``input`` is returned as it is (as PyTorch does)."""
    return conj_physical(input) if input._dtype.category == _COMPLEX else input


for _n, _f in (("conj", conj), ("conj_physical", conj_physical_fn), ("resolve_conj", resolve_conj),
               ("is_conj", is_conj)):
    public(_n, _f)
    attach(_n, _f)
attach("conj_physical_", conj_physical_)


def is_complex(input):
    """Whether ``input``'s dtype is complex."""
    return input._dtype.category == _COMPLEX


public("is_complex", is_complex)


# -- angle, polar, complex ------------------------------------------------------------------------------
angle = documented(defop("angle(Tensor self) -> Tensor", tags=POINTWISE),
                   "The argument of each element in radians; real inputs give 0 or pi (integers compute "
                   "in the default float dtype).")


@derivative("angle")
def _(grad, self):
    if self._dtype.category != _COMPLEX:
        return zeros_like(grad)  # piecewise constant
    # d angle = Im(dz / z): the gradient is grad * i z / |z|^2, and 0 at z == 0 (PyTorch's)
    sq = mul(self, conj_physical(self)).real
    g = mul_scalar(div(mul(grad, self), sq), _I)
    return where(eq_scalar(self, 0), zero(g), g)


def _check_complex_parts(real, imag):
    for t in (real, imag):
        if t._dtype not in (_dt.float16, _dt.float32, _dt.float64):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                               f"{_pt_name(real._dtype)} and {_pt_name(imag._dtype)}")
    if real._dtype is not imag._dtype:
        raise RuntimeError(f"Expected object of scalar type {_pt_name(real._dtype)} but got scalar type "
                           f"{_pt_name(imag._dtype)} for second argument")
    if real._dtype is _dt.float16:
        raise not_implemented("complex", real._dtype)  # PyTorch's complex32 is not here
    check_binary(real, imag)


def _complex_impl(real, imag):
    shape = broadcast_shapes(real._shape, imag._shape)
    if real._shape != shape:
        real = expand(real, shape)
    if imag._shape != shape:
        imag = expand(imag, shape)
    return view_as_complex(stack([real, imag], -1))


complex = documented(defop("complex(Tensor real, Tensor imag) -> Tensor", check=_check_complex_parts,
                           composite=_complex_impl),
                     "The complex tensor ``real + i imag`` (float32 gives complex64, float64 complex128).")


def _check_polar(abs, angle):
    _check_complex_parts(abs, angle)


def _polar_impl(abs, angle):
    return complex(mul(abs, cos(angle)), mul(abs, sin(angle)))


polar = documented(defop("polar(Tensor abs, Tensor angle) -> Tensor", check=_check_polar, composite=_polar_impl),
                   "The complex tensor ``abs * (cos(angle) + i sin(angle))``.")

def _sgn_impl(self):
    if self._dtype.category != _COMPLEX:
        return sign(self)
    a = abs(self)
    return where(eq_scalar(a, 0), zero(self), div(self, a))


sgn = documented(defop("sgn(Tensor self) -> Tensor", composite=_sgn_impl, tags=POINTWISE),
                 "``z / |z|`` for complex tensors (0 at 0), ``sign`` for real ones.")
public("sgn", sgn)
attach("sgn", sgn)
public("angle", angle)
attach("angle", angle)
public("complex", complex)
public("polar", polar)
