"""Bessel, Airy and incomplete gamma functions: the ``special_bessel_*``, ``special_modified_bessel_*``,
``special_scaled_modified_bessel_*``, ``special_spherical_bessel_j0`` and ``special_airy_ai`` primitives
(``tensorplug.special.bessel_j0`` and friends), and ``igamma`` / ``igammac`` (``tensorplug.igamma``,
``tensorplug.special.gammainc`` and ``gammaincc``, Tensor methods, in-place forms).

All are pointwise primitives (the CPU computes them in numpy to float64 accuracy; see
plugins/cpu/tensorplug_cpu/special_bessel.py). Integer and bool inputs give the default float dtype;
float16, bfloat16 and complex inputs raise PyTorch's NotImplementedError (its CPU kernels have none).
As in PyTorch, the unary functions have no gradient, and igamma / igammac have one for their second
argument only: d/dx P(a, x) = x^(a-1) exp(-x) / Gamma(a), and its negative for Q.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from ._lib import POINTWISE, defop, public, attach
from .arithmetic import mul
from .math_ops import exp
from .out import with_out
from .pointwise import check_binary, check_inplace_float_binary, documented, not_implemented
from .promotion import result_type
from .special_ops import lgamma, xlogy

_HALF = (_dt.float16, _dt.bfloat16)

# (op name under tensorplug.special, what it computes)
UNARY = {
    "bessel_j0": "Bessel function of the first kind of order 0, J0(x).",
    "bessel_j1": "Bessel function of the first kind of order 1, J1(x).",
    "bessel_y0": "Bessel function of the second kind of order 0, Y0(x) (-inf at 0, NaN below).",
    "bessel_y1": "Bessel function of the second kind of order 1, Y1(x) (-inf at 0, NaN below).",
    "modified_bessel_i0": "Modified Bessel function of the first kind of order 0, I0(x).",
    "modified_bessel_i1": "Modified Bessel function of the first kind of order 1, I1(x).",
    "modified_bessel_k0": "Modified Bessel function of the second kind of order 0, K0(x) (inf at 0, NaN below).",
    "modified_bessel_k1": "Modified Bessel function of the second kind of order 1, K1(x) (inf at 0, NaN below).",
    "scaled_modified_bessel_k0": "exp(x) K0(x), without the underflow of K0 for large x.",
    "scaled_modified_bessel_k1": "exp(x) K1(x), without the underflow of K1 for large x.",
    "spherical_bessel_j0": "Spherical Bessel function of the first kind of order 0, sin(x) / x (1 at 0).",
    "airy_ai": "Airy function Ai(x), the solution of y'' = x y that decays for large x.",
}


def _real_only(kernel_name):
    def check(self):
        d = self._dtype
        if d in _HALF or d.is_complex:
            raise not_implemented(kernel_name, d)
    return check


ENTRIES = {}
for _name, _doc in UNARY.items():
    _entry = defop(f"special_{_name}(Tensor self) -> Tensor", check=_real_only(f"{_name}_cpu"), tags=POINTWISE)
    ENTRIES[_name] = documented(_entry, _doc)
    globals()[f"special_{_name}"] = _entry


def _igamma_check(name, check):
    def checked(self, other):
        check(self, other)
        d = self._dtype if self._dtype is other._dtype else result_type(self, other)
        if not d.is_floating_point:
            raise not_implemented(f"{name}_cpu", d)
    return checked


igamma = defop("igamma(Tensor self, Tensor other) -> Tensor", check=_igamma_check("igamma", check_binary),
               tags=POINTWISE)
igamma_ = defop("igamma_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                check=_igamma_check("igamma", check_inplace_float_binary), tags=POINTWISE)
igammac = defop("igammac(Tensor self, Tensor other) -> Tensor", check=_igamma_check("igammac", check_binary),
                tags=POINTWISE)
igammac_ = defop("igammac_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                 check=_igamma_check("igammac", check_inplace_float_binary), tags=POINTWISE)


def _igamma_backward(name, sign):
    def formula(grad, self, other, needs_input_grad):
        if needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        # x^(a-1) exp(-x) / Gamma(a), through xlogy so that a = 1 at x = 0 gives exp(0) = 1
        g = exp(xlogy(self - 1, other) - other - lgamma(self))
        return None, sum_to(mul(grad, g * sign if sign < 0 else g), other._shape)
    return formula


for _name, _sign in (("igamma", 1.0), ("igammac", -1.0)):
    derivative(_name)(_igamma_backward(_name, _sign))
    derivative(_name + "_")(_igamma_backward(_name, _sign))


documented(igamma, "The regularized lower incomplete gamma function P(input, other) = "
                   "gamma(input, other) / Gamma(input) (floating point only).")
documented(igammac, "The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other) "
                    "(floating point only).")
documented(igamma_, "In-place igamma.")
documented(igammac_, "In-place igammac.")
for _name, _entry in (("igamma", igamma), ("igammac", igammac)):
    public(_name, with_out(_name, _entry))
    attach(_name, _entry)
attach("igamma_", igamma_)
attach("igammac_", igammac_)
