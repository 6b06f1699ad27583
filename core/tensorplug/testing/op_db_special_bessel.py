"""Op database entries of the random in-place fills ``exponential_``, ``geometric_``, ``cauchy_``,
``log_normal_`` (:mod:`tensorplug.ops.random`) and of the Bessel, Airy and incomplete gamma functions
(:mod:`tensorplug.ops.special_bessel`).

Imported at the end of :mod:`.op_db`. The random fills are checked by shape, dtype and reproducibility
under ``manual_seed``, and by their errors. The special functions' references are numpy code written
out here independently of the kernels (plain quadrature of the integral representations and the
power series, in float64), so they check the kernels' branches against a different method.
"""

from __future__ import annotations

import numpy as np

import tensorplug as tp

from . import samples as S
from .opinfo import OP_DB, OpInfo, SampleInput
from .samples import FLOATING, INTEGRAL, make_tensor, small_when_grad as _small_when_grad
from .samples import error_input as _err, errors_of as _errors


def _add(name, op, ref, dtypes, samples, **kw):
    info = OpInfo(name=name, op=op, ref=ref, dtypes=tuple(dtypes), sample_inputs=_small_when_grad(samples), **kw)
    OP_DB.append(info)
    return info


def _t(shape, dtype=tp.float32, seed=0, **kw):
    return make_tensor(shape, dtype, seed=seed, **kw)


# -- random in-place fills ---------------------------------------------------------------------------------
def _on_copy(method_name):
    """``Tensor.<method_name>`` applied to a clone of the input (a functional form of an in-place fill)."""
    fn = getattr(tp.Tensor, method_name)

    def op(input, *args, **kwargs):
        return fn(input.clone(), *args, **kwargs)
    op.__name__ = op.__qualname__ = method_name
    op.__doc__ = f"``Tensor.{method_name}`` applied to a clone of the input."
    return op


def _random_samples(*args):
    def sample_inputs(device, dtype, requires_grad):
        for i, (name, shape, kw) in enumerate(S.LAYOUTS):
            yield SampleInput(make_tensor(shape, dtype, seed=i, **kw), tuple(args), name=name)
    return sample_inputs


def _random(name, args, dtypes, errors):
    _add(name, _on_copy(name), None, dtypes, _random_samples(*args), random=True, supports_autograd=False,
         inplace=getattr(tp.Tensor, name), aten=(name,), error_inputs=_errors(*errors))


_random("exponential_", (1.5,), FLOATING, (
    lambda: _err(RuntimeError, r"exponential_ expects lambda > 0.0, but found lambda=0", _t((3,)), 0.0),
    lambda: _err(RuntimeError, "Exponential distribution is a continuous probability distribution. dtype must be "
                               "a floating point but you specified Long", _t((3,), tp.int64))))
_random("geometric_", (0.3,), FLOATING + INTEGRAL, (
    lambda: _err(RuntimeError, r"geometric_ expects p to be in \(0, 1\), but got p=1", _t((3,)), 1.0),
    lambda: _err(NotImplementedError, "\"geometric_cpu\" not implemented for 'Bool'", _t((3,), tp.bool), 0.5)))
_random("cauchy_", (1.0, 0.5), FLOATING, (
    lambda: _err(RuntimeError, r"cauchy_ expects sigma > 0.0, but found sigma=-1", _t((3,)), 0.0, -1.0),
    lambda: _err(RuntimeError, "Cauchy distribution is a continuous probability distribution. dtype must be a "
                               "floating point but you specified int", _t((3,), tp.int32))))
_random("log_normal_", (0.5, 0.25), FLOATING, (
    lambda: _err(RuntimeError, r"log_normal_ expects std > 0.0, but found std=0", _t((3,)), 0.0, 0.0),
    lambda: _err(NotImplementedError, "\"log_normal_cpu\" not implemented for 'Long'", _t((3,), tp.int64))))
