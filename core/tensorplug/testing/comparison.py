"""``assert_close``: PyTorch's ``torch.testing.assert_close`` (defaults, checks and messages).

Tensors, numpy arrays, Python and numpy numbers, booleans and None compare
pairwise; sequences and mappings are walked recursively, and a failure deep
inside names the item (``The failure occurred for item ['a'][0]``).
"""

from __future__ import annotations

import cmath
import collections.abc
import math

import numpy as np

from .. import dtypes as _dt
from ..ops.factories import from_numpy
from ..tensor import Tensor

__all__ = ["assert_close", "default_tolerances"]

_TOLERANCES = {_dt.float16: (1e-3, 1e-5), _dt.bfloat16: (1.6e-2, 1e-5), _dt.float32: (1.3e-6, 1e-5),
               _dt.float64: (1e-7, 1e-7)}
_NUMBER_TOLERANCES = {int: (0.0, 0.0), float: (1e-7, 1e-7), complex: (1e-7, 1e-7)}


class _Failure(Exception):
    def __init__(self, type_, msg, id_=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type_, msg, id_

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    pass


def default_tolerances(*dtypes):
    """``(rtol, atol)``: the largest of PyTorch's defaults for ``dtypes`` (0 for integers and bool)."""
    rtols, atols = zip(*[_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _tolerances(dtypes, rtol, atol, id_):
    if (rtol is None) ^ (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                   f"but got no {'rtol' if rtol is None else 'atol'}.", id_)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*dtypes)


def _scalar_msg(actual, expected, rtol, atol, identifier="Scalars"):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(identifier, f"Expected {expected} but got {actual}.", abs_diff, None, atol,
                         rel_diff, None, rtol)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        msg = f"{kind.title()} difference: {diff}" if idx is None else \
            f"Greatest {kind} difference: {diff} at index {idx}"
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _argmax_nan_first(values):
    nan = np.isnan(values)
    if nan.any():
        i = int(np.argmax(nan))
    else:
        i = int(np.argmax(values))
    return values[i].item(), i


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype, id_):
    actual = actual.item() if isinstance(actual, np.number) else actual
    expected = expected.item() if isinstance(expected, np.number) else expected
    if check_dtype and type(actual) is not type(expected):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id_)
    types = [int if isinstance(v, int) else float if isinstance(v, float) else complex for v in (actual, expected)]
    rtol, atol = _number_tolerances(types, rtol, atol, id_)
    if actual == expected:
        return
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Failure(AssertionError, _scalar_msg(actual, expected, rtol, atol), id_)


def _number_tolerances(types, rtol, atol, id_):
    if (rtol is None) ^ (atol is None):
        return _tolerances((), rtol, atol, id_)
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*[_NUMBER_TOLERANCES[t] for t in types])
    return max(rtols), max(atols)


def _host(t):
    return t.detach().cpu().numpy() if isinstance(t, Tensor) else t


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride, id_):
    a_is_np, e_is_np = isinstance(actual, np.ndarray), isinstance(expected, np.ndarray)
    if a_is_np and e_is_np:
        actual, expected = from_numpy(np.ascontiguousarray(actual)), from_numpy(np.ascontiguousarray(expected))
    a_shape, e_shape = tuple(actual.shape), tuple(expected.shape)
    if a_shape != e_shape:
        raise _Failure(AssertionError, f"The values for attribute 'shape' do not match: {a_shape} != {e_shape}.",
                       id_)
    if check_device and actual.device != expected.device:
        raise _Failure(AssertionError, "The values for attribute 'device' do not match: "
                                       f"{actual.device} != {expected.device}.", id_)
    if check_dtype and actual.dtype is not expected.dtype:
        raise _Failure(AssertionError, "The values for attribute 'dtype' do not match: "
                                       f"{actual.dtype} != {expected.dtype}.", id_)
    if check_stride and actual.stride() != expected.stride():
        raise _Failure(AssertionError, "The values for attribute 'stride()' do not match: "
                                       f"{actual.stride()} != {expected.stride()}.", id_)
    rtol, atol = _tolerances((actual.dtype, expected.dtype), rtol, atol, id_)
    common = _dt.promote_types(actual.dtype, expected.dtype)
    a = np.asarray(_host(actual.to(common) if actual.dtype is not common else actual))
    e = np.asarray(_host(expected.to(common) if expected.dtype is not common else expected))
    if common.is_floating_point:
        with np.errstate(all="ignore"):
            err = np.abs(a - e)
            close = (a == e) | (np.isfinite(err) & (err <= atol + np.abs(rtol * e)))
            if equal_nan:
                close |= np.isnan(a) & np.isnan(e)
    else:
        close = a == e
    if close.all():
        return
    if not a_shape:
        raise _Failure(AssertionError, _scalar_msg(a.item(), e.item(), rtol, atol), id_)
    flat_a, flat_e, flat_ok = a.reshape(-1), e.reshape(-1), close.reshape(-1)
    if not common.is_floating_point:
        flat_a, flat_e = flat_a.astype(np.int64), flat_e.astype(np.int64)
    total = flat_ok.size
    bad = total - int(flat_ok.sum())
    extra = f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"
    with np.errstate(all="ignore"):
        abs_diff = np.abs(flat_a - flat_e)
        abs_diff[flat_ok] = 0
        rel_diff = abs_diff / np.abs(flat_e)
        rel_diff[flat_ok] = 0
    if not common.is_floating_point:
        rel_diff = rel_diff.astype(np.float32)
    max_abs, abs_i = _argmax_nan_first(abs_diff)
    max_rel, rel_i = _argmax_nan_first(rel_diff)

    def unravel(i):
        return tuple(int(x) for x in np.unravel_index(i, a_shape))
    raise _Failure(AssertionError, _mismatch_msg("Tensor-likes", extra, max_abs, unravel(abs_i), atol,
                                                 max_rel, unravel(rel_i), rtol), id_)


def _is_number(x):
    return isinstance(x, (int, float, complex, np.number)) and not isinstance(x, (bool, np.bool_))


def _compare(actual, expected, id_, opts):
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and not isinstance(actual, str) and isinstance(expected, seq) and \
            not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                           id_)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, id_ + (i,), opts)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        a_keys, e_keys = set(actual.keys()), set(expected.keys())
        if a_keys != e_keys:
            raise _Failure(AssertionError, "The keys of the mappings do not match:\n"
                                           f"Missing keys in the actual mapping: {sorted(e_keys - a_keys)}\n"
                                           f"Additional keys in the actual mapping: {sorted(a_keys - e_keys)}", id_)
        keys = actual.keys()
        try:
            keys = sorted(keys)
        except TypeError:
            pass
        for k in keys:
            _compare(actual[k], expected[k], id_ + (k,), opts)
        return
    if actual is None or expected is None:
        if actual is None and expected is None:
            return
        raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", id_)
    if isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
        if bool(actual) is not bool(expected):
            raise _Failure(AssertionError, f"Booleans mismatch: {bool(actual)} is not {bool(expected)}", id_)
        return
    if _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"], opts["check_dtype"], id_)
        return
    if (isinstance(actual, Tensor) and isinstance(expected, Tensor)) or \
            (isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray)):
        _compare_tensors(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"], opts["check_device"],
                         opts["check_dtype"], opts["check_stride"], id_)
        return
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                              f"{type(expected)}.", id_)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise unless ``actual`` and ``expected`` are close, as ``torch.testing.assert_close``.

    Elements match when ``|actual - expected| <= atol + rtol * |expected|``
    (NaNs match only with ``equal_nan``). Omitted tolerances take the
    largest default of the two dtypes: float16 ``(1e-3, 1e-5)``, bfloat16
    ``(1.6e-2, 1e-5)``, float32 ``(1.3e-6, 1e-5)``, float64 and Python floats
    ``(1e-7, 1e-7)``, integers and bool exact. Shapes must agree, and the
    devices and dtypes too unless ``check_device``/``check_dtype`` is False
    (then both sides are cast to the promoted dtype). ``msg`` (a string, or a
    callable given the generated message) replaces the message.

    Raises ``AssertionError`` with PyTorch's message ("Tensor-likes are not
    close!", the mismatched elements and the greatest absolute and relative
    differences), ``TypeError`` for inputs that cannot be compared and
    ``ValueError`` when only one of ``rtol``/``atol`` is given.
    """
    opts = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_device": check_device,
            "check_dtype": check_dtype, "check_stride": check_stride}
    try:
        _compare(actual, expected, (), opts)
    except _Failure as failure:
        raise failure.to_error(msg) from None
