"""``tensorplug.special``: special functions, as ``torch.special``.

Each name is a core op (``special_i0e`` and friends are ops of their own; ``erf``, ``expit``,
``gammaln`` and the like are the ``tensorplug`` functions under their SciPy-style names).
See docs/special.md.
"""

from __future__ import annotations

from .ops import special_ops as _s
from .ops import math_ops as _m
from .ops import reductions as _r
from .ops import activations as _a

__all__ = ["erf", "erfc", "erfcx", "erfinv", "expit", "logit", "xlogy", "xlog1py", "log_softmax", "softmax",
           "gammaln", "digamma", "psi", "polygamma", "multigammaln", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri",
           "log_ndtr", "entr", "sinc", "zeta", "expm1", "exp2", "log1p", "round", "logsumexp"]


def _tensor_or_number(t_entry, self_scalar, other_scalar):
    def fn(input, other):
        if not _s.is_tensor(input):
            return self_scalar(input, other)
        if not _s.is_tensor(other):
            return other_scalar(input, other)
        return t_entry(input, other)
    return fn


erf = _m.erf
erfc = _s.erfc
erfcx = _s.special_erfcx
erfinv = _s.erfinv
expit = _m.sigmoid
logit = _s.logit
xlogy = _s.xlogy_fn
xlog1py = _s.xlog1py_fn
gammaln = _s.lgamma
digamma = _s.digamma
psi = _s.digamma
polygamma = _s.polygamma_fn
i0 = _s.i0
i0e = _s.special_i0e
i1 = _s.special_i1
i1e = _s.special_i1e
ndtr = _s.special_ndtr
ndtri = _s.special_ndtri
log_ndtr = _s.special_log_ndtr
entr = _s.special_entr
sinc = _s.sinc
expm1 = _m.expm1
exp2 = _m.exp2
log1p = _m.log1p
round = _m.round_fn
logsumexp = _r.logsumexp_fn


def multigammaln(input, p):
    """The log of the multivariate gamma function of dimension ``p``: sum_j lgamma(x - j/2) + p(p-1)/4 log(pi)."""
    return _s.special_multigammaln(input, p)


def _zeta_scalar_self(self, other):
    return _s.special_zeta(_s.scalar_tensor(self, _s.float_dtype(_s.result_type(self, other)), other._device), other)


def _zeta_scalar_other(self, other):
    return _s.special_zeta(self, _s.scalar_tensor(other, _s.float_dtype(_s.result_type(self, other)), self._device))


zeta = _tensor_or_number(_s.special_zeta, _zeta_scalar_self, _zeta_scalar_other)
zeta.__doc__ = """The Hurwitz zeta function sum_k (k + other) ** -input; either argument may be a Python number."""
zeta.__name__ = zeta.__qualname__ = "zeta"


def softmax(input, dim, *, dtype=None):
    """:func:`tensorplug.softmax`."""
    return _a.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """:func:`tensorplug.log_softmax`."""
    return _a.log_softmax(input, dim, dtype)


# -- Bessel, Airy and incomplete gamma functions (ops/special_bessel.py), each with out= -----------------
from .ops import special_bessel as _sb  # noqa: E402
from .ops.out import with_out as _with_out  # noqa: E402

for _name, _entry in _sb.ENTRIES.items():
    globals()[_name] = _with_out(f"special_{_name}", _entry)
gammainc = _with_out("special_gammainc", _sb.igamma)
gammaincc = _with_out("special_gammaincc", _sb.igammac)
__all__ += [*_sb.ENTRIES, "gammainc", "gammaincc"]
# the orthogonal polynomials (ops/special_more.py)
from .ops import special_more as _sm  # noqa: E402
globals().update(_sm.SPECIAL_FUNCTIONS)
__all__ += list(_sm.SPECIAL_FUNCTIONS)

from .ops import out as _out  # noqa: E402

_out.install(globals(), "special")  # PyTorch's out=
