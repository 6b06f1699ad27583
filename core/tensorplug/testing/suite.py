"""The generic conformance checks and the machinery that instantiates them.

A *check* is a function ``check(device_type, opinfo, dtype)`` that returns
on success, raises :class:`Skip` when it does not apply to what it was given
(no sample for that dtype, no reference) and raises anything else, usually
an ``AssertionError`` naming the sample and the mismatch, on failure. It
does not depend on pytest, so the pytest plugin and ``tensorplug
conformance`` run the same functions.

:data:`CHECKS` holds the generic backend checks; a transform plugin fills
:data:`TRANSFORM_CHECKS` through :func:`register_transform_check`. A
:class:`Case` is one (target, op, dtype, check); :func:`conformance_cases`
lists them for a backend or transform, honouring the plugin's declared
coverage, skips and xfails (the ``tensorplug_conformance`` hook, read by
:func:`conformance_config`) and the database's own per-backend ones.

Sample tensors are created on the CPU; the suite copies them to the device
under test keeping their shape, strides and storage offset, so a backend sees
the same non-contiguous layouts the database describes.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import warnings
from typing import Callable, Optional

import numpy as np

import tensorplug as tp
from .. import dtypes as _dt
from .. import plugins
from ..autograd import gradcheck as _gradcheck, grad as _autograd_grad, no_grad
from ..backend import BACKENDS, backend_of
from ..dispatch import dispatcher as _d
from ..dispatch.keys import Dense
from ..tensor import Tensor
from . import samples as _samples
from .opinfo import OP_DB, SampleInput


class Skip(Exception):
    """The check does not apply to this op and dtype; the message says why."""


class XFail(Exception):
    """The check failed in a way that is expected; the message says why."""


# --------------------------------------------------------------------------
# Registries
# --------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Check:
    """A named check. ``per_dtype=False`` checks run once per op (``dtype`` is None).

    ``applies(device_type, opinfo, dtype)`` returns None when the check is
    meaningful for that combination, or the reason it is not (such
    combinations are never instantiated, so they are not counted as skipped).
    """

    name: str
    fn: Callable
    per_dtype: bool = True
    applies: Optional[Callable] = None
    #: a check of the backend itself, not of the op it is reported under (no fallback accounting)
    backend_level: bool = False

    def reason_not_applicable(self, device_type, opinfo, dtype):
        return None if self.applies is None else self.applies(device_type, opinfo, dtype)


CHECKS: dict = {}
"""The generic backend checks, ``{name: Check}``, in the order they run."""

TRANSFORM_CHECKS: dict = {}
"""Checks of transform plugins, ``{transform name: {check name: Check}}``."""


def _check(name, per_dtype=True, applies=None, backend_level=False):
    def register(fn):
        CHECKS[name] = Check(name, fn, per_dtype, applies, backend_level)
        return fn
    return register


def register_transform_check(transform, name, fn, *, per_dtype=True, applies=None):
    """Register ``fn(device_type, opinfo, dtype)`` as check ``name`` of transform ``transform``.

    ``tensorplug conformance TRANSFORM`` and ``--tensorplug-backend TRANSFORM``
    then run it for every op of the database (on the device type the
    transform's conformance config names, CPU by default), with the same
    reporting as the backend checks. Returns ``fn``.
    """
    TRANSFORM_CHECKS.setdefault(transform, {})[name] = Check(name, fn, per_dtype, applies)
    return fn


def load_op_db():
    """The op database, filled by importing ``tensorplug.testing.op_db`` the first time."""
    if not OP_DB:
        from . import op_db  # noqa: F401 # lazy: the op database is large; it fills OP_DB on first use
    return OP_DB


# --------------------------------------------------------------------------
# Plugin configuration
# --------------------------------------------------------------------------
@dataclasses.dataclass
class ConformanceConfig:
    """What one conformance target declares: see the ``tensorplug_conformance`` hook.

    ``name`` is the target (a backend's device type or a transform's name),
    ``backend`` the device type the checks run on, ``ops`` the op names or
    glob patterns covered (None: all), ``xfail`` and ``skip`` map an op name,
    or ``"op/check"``, to a reason, ``dtypes`` limits the dtypes tested.
    """

    name: str
    backend: str
    transform: Optional[str] = None
    plugin: Optional[str] = None
    ops: Optional[tuple] = None
    xfail: dict = dataclasses.field(default_factory=dict)
    skip: dict = dataclasses.field(default_factory=dict)
    dtypes: Optional[tuple] = None


def _as_dtype(d):
    return d if isinstance(d, _dt.dtype) else _dt._by_name(d)


def _config_from(plugin, res):
    backend = res.get("backend") or "cpu"
    dtypes = res.get("dtypes")
    ops = res.get("ops")
    return ConformanceConfig(
        name=res.get("name") or res.get("transform") or backend, backend=backend, transform=res.get("transform"), plugin=plugin,
        ops=tuple(ops) if ops is not None else None, xfail=dict(res.get("xfail") or {}),
        skip=dict(res.get("skip") or {}), dtypes=tuple(_as_dtype(d) for d in dtypes) if dtypes else None)


def plugin_configs():
    """Every enabled plugin's conformance configs, ``[ConformanceConfig]``, by plugin name."""
    out = []
    for info in plugins.list():
        if info.state == "enabled":
            for res in plugins._call(info.name, "tensorplug_conformance"):
                for one in (res if isinstance(res, (list, tuple)) else [res]):
                    out.append(_config_from(info.name, one))
    return out


def conformance_config(name):
    """The :class:`ConformanceConfig` of backend or transform ``name``.

    It comes from the ``tensorplug_conformance`` hook of the enabled plugin
    that declares ``name``; a backend whose plugin declares nothing gets the
    defaults (every op, every dtype it supports, no xfails). LookupError if
    no enabled backend or transform has that name.
    """
    for cfg in plugin_configs():
        if cfg.name == name:
            return cfg
    if name in BACKENDS:
        return ConformanceConfig(name=name, backend=name, plugin=backend_of(name).owner)
    if name in TRANSFORM_CHECKS:
        return ConformanceConfig(name=name, backend="cpu", transform=name)
    raise LookupError(f"no enabled backend or transform is named {name!r}; backends: "
                      f"{', '.join(sorted(BACKENDS)) or 'none'}; transforms with checks: "
                      f"{', '.join(sorted(TRANSFORM_CHECKS)) or 'none'}")


def conformance_targets():
    """Names of everything ``all`` means: enabled backends and transforms that declare a config."""
    names = [cfg.name for cfg in plugin_configs()]
    return names + sorted(b for b in BACKENDS if b not in names)


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------
@dataclasses.dataclass
class Case:
    """One check of one op in one dtype (None for dtype-independent checks) on one target."""

    target: str
    device_type: str
    opinfo: object
    dtype: object
    check: Check
    transform: Optional[str] = None
    skip: Optional[str] = None   # declared: the case is not run
    xfail: Optional[str] = None  # declared: a failure is expected

    @property
    def id(self):
        dt = self.dtype.name if self.dtype is not None else "any"
        return f"{self.target}-{self.opinfo.name}-{dt}-{self.check.name}"


def _matches(name, patterns):
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def split_patterns(text):
    """``"add,exp,nn.*"`` -> ``["add", "exp", "nn.*"]`` (None stays None)."""
    if text is None:
        return None
    if isinstance(text, str):
        text = [text]
    return [p.strip() for item in text for p in item.split(",") if p.strip()]


def _declared(table, op, check):
    return table.get(f"{op}/{check}") or table.get(op)


def conformance_cases(name, *, ops=None, dtypes=None, op_db=None):
    """Every :class:`Case` for target ``name``, grouped by op then dtype.

    ``ops``: op names or glob patterns (a list or a comma-separated string);
    ``dtypes``: dtypes or their names; ``op_db``: a list of OpInfo (default:
    the core's database).
    """
    cfg = conformance_config(name)
    db = load_op_db() if op_db is None else op_db
    _FALLBACK_CACHE.clear()  # kernels may have been registered since the last run
    ops = split_patterns(ops)
    want_dtypes = None if dtypes is None else {_as_dtype(d) for d in dtypes}
    if cfg.transform is not None:
        checks = list(TRANSFORM_CHECKS.get(cfg.transform, {}).values())
    else:
        checks = list(CHECKS.values())
    supported = set(backend_of(cfg.backend).supported_dtypes()) if cfg.backend in BACKENDS else set()
    cases = []
    for info in db:
        if cfg.ops is not None and not _matches(info.name, cfg.ops):
            continue
        if ops is not None and not _matches(info.name, ops):
            continue
        dts = [d for d in info.dtypes if d in supported and (want_dtypes is None or d in want_dtypes)
               and (cfg.dtypes is None or d in cfg.dtypes)]
        if not dts:
            continue

        def add(chk, dt):
            if chk.reason_not_applicable(cfg.backend, info, dt) is not None:
                return
            skip = _declared(cfg.skip, info.name, chk.name) or info.skips.get(cfg.name)
            xfail = _declared(cfg.xfail, info.name, chk.name) or info.xfails.get(cfg.name)
            cases.append(Case(cfg.name, cfg.backend, info, dt, chk, cfg.transform, skip, xfail))
        for dt in dts:
            for chk in checks:
                if chk.per_dtype:
                    add(chk, dt)
        for chk in checks:
            if not chk.per_dtype:
                add(chk, None)
    return cases


def execute(case):
    """Run ``case``'s check; raises on failure (Skip when it does not apply).

    Returns the operators that were served through a boxed fallback at the
    backend's Dense key (another backend's kernels), so callers report the
    case as "fallback" rather than as a native pass.
    """
    with warnings.catch_warnings():
        # special values and degenerate samples warn (numpy's "invalid value", var's degrees of
        # freedom) by design; what is checked is the values and errors, not the warnings
        warnings.simplefilter("ignore")
        case.check.fn(case.device_type, case.opinfo, case.dtype)
    if case.transform is not None or case.check.backend_level:
        return ()
    return fallback_ops(case.device_type, case.opinfo, case.dtype)


@dataclasses.dataclass
class Outcome:
    """How a case ended: passed, failed, skipped, xfailed, or fallback (passed through a fallback)."""

    status: str
    message: str = ""
    fallback: tuple = ()


def describe_error(e):
    """``"Type: message"`` for an exception (AssertionError shows its message only)."""
    msg = str(e).strip()
    if isinstance(e, AssertionError) and msg:
        return msg
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def run_case(case):
    """Run ``case`` and return its :class:`Outcome`; never raises for a failing check."""
    if case.skip:
        return Outcome("skipped", case.skip)
    try:
        fb = execute(case)
    except Skip as e:
        return Outcome("skipped", str(e))
    except XFail as e:
        return Outcome("xfailed", str(e))
    except Exception as e:  # the check failed: an assertion, or the op raised
        fb = () if case.transform is not None or case.check.backend_level else fallback_ops(case.device_type, case.opinfo, case.dtype)
        if case.xfail:
            return Outcome("xfailed", f"{case.xfail} ({describe_error(e)})", fb)
        return Outcome("failed", describe_error(e), fb)
    if fb:
        return Outcome("fallback", "served by a fallback: " + ", ".join(fb), fb)
    return Outcome("passed")


# --------------------------------------------------------------------------
# Which operators a call reaches through a fallback
# --------------------------------------------------------------------------
_FALLBACK_CACHE: dict = {}  # (device type, id(opinfo), dtype) -> (opinfo, fallback registration, result)


def _overload(name):
    return _d.OPS.get(name if "::" in name else f"tensorplug::{name}")


def fallback_ops(device_type, opinfo, dtype=None):
    """Qualified names of the operators that ``opinfo`` reaches on ``device_type``
    through a boxed fallback at the Dense key, sorted (empty when all are native).

    The overloads named in ``opinfo.aten`` are looked up statically; then the op
    runs once on its first sample in ``dtype`` (float32 when None or not
    supported) with every dispatch cache cleared, and every operator that
    resolved a key set of this backend to the fallback, or that a native kernel
    handed to the fallback for this dtype (``op.call_fallback``), is added.
    """
    backend = BACKENDS.get(device_type)
    if backend is None:
        return ()
    kname = backend.key_name
    if ("Dense", kname) not in _d.FALLBACKS and ("Dense", None) not in _d.FALLBACKS:
        return ()
    reg = _d.FALLBACKS.get(("Dense", kname))
    cached = _FALLBACK_CACHE.get((device_type, id(opinfo), dtype))
    if cached is not None and cached[0] is opinfo and cached[1] is reg:
        return cached[2]
    names = set()
    for a in opinfo.aten:
        op = _overload(a)
        if op is not None and op.lookup(Dense, kname)[1] == "fallback":
            names.add(op.qualname)
    dts = [d for d in opinfo.dtypes if d in set(backend.supported_dtypes())]
    if dts and opinfo.sample_inputs is not None:
        dt = dtype if dtype in dts else (tp.float32 if tp.float32 in dts else dts[0])
        sample = next(iter(opinfo.sample_inputs("cpu", dt, False)), None)
        if sample is not None:
            moved = move_sample(sample, tp.device(device_type))
            _d.invalidate_caches()
            outer, _d.FALLBACK_LOG[0] = _d.FALLBACK_LOG[0], names
            try:
                call(opinfo, moved)
            except Exception:  # a failing op still shows which operators it reached
                pass
            finally:
                _d.FALLBACK_LOG[0] = outer
            bit = backend.bit
            for op in list(_d.OPS.values()):
                if any(ks & bit for ks in op.cache) and op.lookup(Dense, kname)[1] == "fallback":
                    names.add(op.qualname)
    found = tuple(sorted(n.replace("tensorplug::", "") for n in names))
    _FALLBACK_CACHE[(device_type, id(opinfo), dtype)] = (opinfo, reg, found)
    return found


# --------------------------------------------------------------------------
# Samples: moving, calling, comparing
# --------------------------------------------------------------------------
def map_tensors(obj, fn):
    """``obj`` with every tensor (also inside lists, tuples and dicts) replaced by ``fn(tensor)``."""
    if isinstance(obj, Tensor):
        return fn(obj)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(map_tensors(v, fn) for v in obj)
    if isinstance(obj, dict):
        return {k: map_tensors(v, fn) for k, v in obj.items()}
    return obj


def sample_tensors(sample):
    """The distinct tensors of a sample, in argument order."""
    out = {}

    def visit(t):
        out.setdefault(id(t), t)
        return t
    map_tensors((sample.input, sample.args, sample.kwargs), visit)
    return list(out.values())


def _span(shape, stride, offset):
    if any(s == 0 for s in shape):
        return offset
    return offset + sum((s - 1) * st for s, st in zip(shape, stride)) + 1


def relayout(t, device, shape_stride_offset=None):
    """A copy of ``t`` on ``device`` in a fresh storage with the given
    (shape, strides, storage offset), by default ``t``'s own layout."""
    shape, stride, offset = shape_stride_offset or (t.shape, t.stride(), t.storage_offset())
    with no_grad():
        flat = tp.zeros((_span(shape, stride, offset),), dtype=t.dtype, device=device)
        out = tp.as_strided(flat, shape, stride, offset)
        out.copy_(t.detach())
    return out


def _contiguous_strides(shape):
    st, out = 1, []
    for s in reversed(shape):
        out.append(st)
        st *= max(s, 1)
    return tuple(reversed(out))


def noncontiguous_copy(t, device):
    """A copy of ``t`` on ``device`` whose elements are every other one of its
    storage, starting one element in (non-contiguous, with an offset)."""
    stride = tuple(2 * s for s in _contiguous_strides(t.shape))
    return relayout(t, device, (t.shape, stride, 1))


def move_sample(sample, device, *, requires_grad=False, layout="same"):
    """``sample`` with each tensor copied to ``device``.

    ``layout``: ``"same"`` keeps shape, strides and offset; ``"contiguous"``
    makes fresh contiguous tensors; ``"noncontiguous"`` uses
    :func:`noncontiguous_copy`. A tensor used twice stays one tensor.
    ``requires_grad`` makes the floating point copies leaves that require grad; ``None`` keeps each
    tensor's own flag (an error input about gradients needs its tensors to require grad).
    """
    memo = {}

    def move(t):
        m = memo.get(id(t))
        if m is None:
            if layout == "contiguous":
                m = relayout(t, device, (t.shape, _contiguous_strides(t.shape), 0))
            elif layout == "noncontiguous":
                m = noncontiguous_copy(t, device)
            else:
                m = relayout(t, device)
            wanted = t.requires_grad if requires_grad is None else requires_grad
            if wanted and (m.dtype.is_floating_point or m.dtype.is_complex):
                m.requires_grad_(True)
            memo[id(t)] = m
        return m
    kwargs = map_tensors(dict(sample.kwargs), move)
    if isinstance(kwargs.get("device"), tp.device):  # a factory's sample: it makes its result on the device
        kwargs["device"] = device
    return SampleInput(map_tensors(sample.input, move), map_tensors(tuple(sample.args), move), kwargs,
                       sample.name)


def _placed(sample, device):
    """``device`` when the sample's result should be on it (it has a tensor or a device argument), else None:
    an op given no tensor and no device (``block_diag()``) makes its result on the default device."""
    has_device = isinstance(sample.kwargs.get("device"), tp.device)
    return device if has_device or sample_tensors(sample) else None


RANDOM_SEED = 20240229


def call(opinfo, sample, fn=None):
    """``(fn or opinfo.op)(input, *args, **kwargs)``; random ops run from a fixed seed."""
    if opinfo.random:
        tp.manual_seed(RANDOM_SEED)
    return (fn or opinfo.op)(sample.input, *sample.args, **sample.kwargs)


def leaves(out):
    """An op's result as a flat list (tuples and lists of results flattened)."""
    if isinstance(out, (list, tuple)):
        return [x for v in out for x in leaves(v)]
    return [out]


def to_numpy(x):
    """Tensors (also inside lists, tuples and dicts) as numpy arrays of their own dtype."""
    if isinstance(x, Tensor):
        return np.array(x.detach()._host(), copy=True)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(to_numpy(v) for v in x)
    if isinstance(x, dict):
        return {k: to_numpy(v) for k, v in x.items()}
    return x


def reference(opinfo, sample):
    """``opinfo.ref`` on the sample's values as numpy arrays (``samples.reference_call``)."""
    return _samples.reference_call(opinfo, sample)


# (atol, rtol) per dtype: PyTorch's torch.testing defaults, float16 widened because its
# kernels compute in float32 and round once while a reference rounds a float64 result once
TOLERANCES = {tp.float64: (1e-7, 1e-7), tp.float32: (1e-5, 1.3e-6), tp.float16: (1e-3, 2e-3),
              tp.bfloat16: (1e-2, 1.6e-2), tp.complex64: (1e-5, 1.3e-6), tp.complex128: (1e-7, 1e-7)}


def tolerance(opinfo, *dtypes):
    """``(atol, rtol)``: the loosest of the dtypes' defaults and the op's own ``atol``/``rtol``."""
    atol, rtol = opinfo.atol or 0.0, opinfo.rtol or 0.0
    for d in dtypes:
        a, r = TOLERANCES.get(d, (0.0, 0.0))
        atol, rtol = max(atol, a), max(rtol, r)
    return atol, rtol


def _label(opinfo, sample, index, device, dtype):
    name = sample.name or f"#{index}"
    dt = f" in {dtype.name}" if dtype is not None else ""
    return f"{opinfo.name} on {device}{dt}, sample {name}"


def _host_values(x):
    if isinstance(x, Tensor):
        return x.detach()._host()
    return np.asarray(x)


def assert_close(actual, expected, atol, rtol, what):
    """``actual`` (tensor or number) equals ``expected`` within tolerance; NaNs must match NaNs."""
    a, e = _host_values(actual), _host_values(expected)
    if a.shape != e.shape:
        raise AssertionError(f"{what}: shape {tuple(a.shape)} != expected {tuple(e.shape)}")
    floats = a.dtype.kind in "fc" or e.dtype.kind in "fc" or a.dtype.name == "bfloat16" or \
        e.dtype.name == "bfloat16"
    if floats:
        wide = np.complex128 if a.dtype.kind == "c" or e.dtype.kind == "c" else np.float64
        a64, e64 = a.astype(wide), e.astype(wide)
        with np.errstate(all="ignore"):
            ok = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    else:
        a64, e64 = a, e
        ok = a == e
    if not np.all(ok):
        bad = np.argwhere(~np.asarray(ok))
        idx = tuple(int(i) for i in bad[0]) if a.ndim else ()
        with np.errstate(all="ignore"):
            diff = np.nanmax(np.abs(a64 - e64)[~np.asarray(ok)]) if floats else \
                np.nanmax(np.abs(a64.astype(np.float64) - e64.astype(np.float64))[~np.asarray(ok)])
        tol = f", atol {atol}, rtol {rtol}" if floats else ""
        raise AssertionError(f"{what}: {bad.shape[0]} of {max(a.size, 1)} values differ; at index {idx} got "
                             f"{a[idx]!r}, expected {e[idx]!r} (max abs difference {diff}{tol})")


def _same_bytes(a, b):
    a, b = _host_values(a), _host_values(b)
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def assert_same_results(actual, expected, atol, rtol, what, device=None):
    """Results (single, or tuples and lists of them) agree leaf by leaf; tensors are on ``device``."""
    al, el = leaves(actual), leaves(expected)
    if len(al) != len(el):
        raise AssertionError(f"{what}: {len(al)} results, expected {len(el)}")
    for i, (a, e) in enumerate(zip(al, el)):
        w = what if len(al) == 1 else f"{what}, result {i}"
        if device is not None and isinstance(a, Tensor) and a.device.type != device.type:
            raise AssertionError(f"{w}: the result is on {a.device}, expected {device}")
        if a is None or e is None:
            if a is not e:
                raise AssertionError(f"{w}: got {a!r}, expected {e!r}")
            continue
        assert_close(a, e, atol, rtol, w)


def _dtypes_of(out):
    return [x.dtype if isinstance(x, Tensor) else None for x in leaves(out)]


def _is_cpu(device_type):
    return device_type == "cpu"


_CPU = tp.device("cpu")


# --------------------------------------------------------------------------
# Sample cache: every check of one op and dtype sees the same samples
# --------------------------------------------------------------------------
_SAMPLES: list = [None, None, {}]  # the current group: opinfo, dtype, {requires_grad: [SampleInput]}


def samples(opinfo, dtype, requires_grad=False):
    """The op's samples in ``dtype`` (created on the CPU); Skip when there are none.

    With ``requires_grad`` the database gives only the samples where the op is
    differentiable (no special values, no kinks), for the gradient checks.
    """
    if opinfo.sample_inputs is None:
        raise Skip("the op database gives no sample inputs for this op")
    if _SAMPLES[0] is not opinfo or _SAMPLES[1] is not dtype:
        _SAMPLES[:] = [opinfo, dtype, {}]  # cases run grouped by op and dtype: keep only the current group
    group = _SAMPLES[2]
    got = group.get(requires_grad)
    if got is None:
        got = group[requires_grad] = list(opinfo.sample_inputs("cpu", dtype, requires_grad))
    if not got:
        raise Skip(f"no sample inputs in {dtype.name}" + (" for gradients" if requires_grad else ""))
    return got


def _finite(sample):
    for t in sample_tensors(sample):
        if (t.dtype.is_floating_point or t.dtype.is_complex) and not np.all(np.isfinite(t._host())):
            return False
    return True


def _float_numel(sample):
    return sum(t.numel() for t in sample_tensors(sample) if t.dtype.is_floating_point or t.dtype.is_complex)


# --------------------------------------------------------------------------
# The generic checks
# --------------------------------------------------------------------------
def _not_random(device_type, opinfo, dtype):
    return "random op" if opinfo.random else None


@_check("forward", applies=_not_random)
def check_forward(device_type, opinfo, dtype):
    """Each sample's result on the device matches the reference (the CPU's result
    where the database has no reference), within the dtype's tolerance."""
    dev = tp.device(device_type)
    if opinfo.ref is None and _is_cpu(device_type):
        raise Skip("the op database gives no reference implementation")
    for i, s in enumerate(samples(opinfo, dtype)):
        actual = call(opinfo, move_sample(s, dev))
        expected = reference(opinfo, s) if opinfo.ref is not None else call(opinfo, move_sample(s, _CPU))
        what = "reference" if opinfo.ref is not None else "CPU result"
        atol, rtol = tolerance(opinfo, dtype, *[d for d in _dtypes_of(actual) if d is not None])
        assert_same_results(actual, expected, atol, rtol,
                            f"{_label(opinfo, s, i, dev, dtype)}: result vs {what}", _placed(s, dev))


def _gradcheck_applies(device_type, opinfo, dtype):
    if not opinfo.supports_autograd:
        return "no autograd"
    if dtype is not tp.float64 and dtype is not tp.complex128:
        return "finite differences in float64 only"
    return _not_random(device_type, opinfo, dtype)


GRADCHECK_MAX_NUMEL = 12  # inputs' and outputs' elements: one backward per output element, two calls per input one
GRADCHECK_SAMPLES = 2


def _float_leaves(sample):
    return [t for t in sample_tensors(sample) if t.requires_grad]


def _grad_outputs(out):
    return [o for o in leaves(out) if isinstance(o, Tensor) and o.requires_grad]


def _float64_outputs(out):
    # finite differences of a result rounded to a narrower dtype measure the rounding, not the derivative
    return [o for o in _grad_outputs(out) if o.dtype is tp.float64 or o.dtype is tp.complex128]


@_check("gradcheck", applies=_gradcheck_applies)
def check_gradcheck(device_type, opinfo, dtype):
    """Gradients on the device match central finite differences (float64, small finite samples)."""
    dev = tp.device(device_type)
    done = 0
    for i, s in enumerate(samples(opinfo, dtype, requires_grad=True)):
        if done == GRADCHECK_SAMPLES:
            break
        if not _finite(s) or not 0 < _float_numel(s) <= GRADCHECK_MAX_NUMEL:
            continue
        moved = move_sample(s, dev, requires_grad=_grad_flags(s))
        inputs = tuple(_float_leaves(moved))
        outs = _float64_outputs(call(opinfo, moved))
        if not outs or sum(o.numel() for o in outs) > GRADCHECK_MAX_NUMEL:
            continue

        def fn(*_inputs, moved=moved):
            return tuple(_float64_outputs(call(opinfo, moved)))
        try:
            _gradcheck(fn, inputs)
        except Exception as e:
            raise AssertionError(f"{_label(opinfo, s, i, dev, dtype)}: gradcheck: {describe_error(e)}") from e
        done += 1
    if not done:
        raise Skip("no sample small enough for finite differences with a float64 result")


def _grad_vs_cpu_applies(device_type, opinfo, dtype):
    if _is_cpu(device_type):
        return "the CPU is the reference"
    if not opinfo.supports_autograd:
        return "no autograd"
    if dtype not in (tp.float32, tp.float64):
        return "gradients compared in float32 and float64"
    return _not_random(device_type, opinfo, dtype)


GRAD_SAMPLES = 3


def _grad_flags(sample):
    """``move_sample``'s ``requires_grad`` for a gradient sample: the sample's own flags where it sets any
    (an op differentiable in some arguments only, igamma's second), else every floating point tensor."""
    return None if any(t.requires_grad for t in sample_tensors(sample)) else True


def _grads(opinfo, sample, device, weights):
    moved = move_sample(sample, device, requires_grad=_grad_flags(sample))
    inputs = _float_leaves(moved)
    outs = _grad_outputs(call(opinfo, moved))
    if not outs or not inputs:
        return None
    gos = [w.to(device) for w in weights(outs)]
    return _autograd_grad(outs, inputs, gos, allow_unused=True)


@_check("grad_vs_cpu", applies=_grad_vs_cpu_applies)
def check_grad_vs_cpu(device_type, opinfo, dtype):
    """Input gradients on the device match the CPU's for the same output gradients."""
    dev = tp.device(device_type)
    done = 0

    def weights(outs):
        # distinct weights per element, so a gradient routed to the wrong element shows
        # (complex outputs: the same real parts, imaginary parts of another period)
        return [(tp.arange(o.numel(), dtype=o.dtype.to_real()).reshape(o.shape) % 7 - 3).to(o.dtype) +
                ((tp.arange(o.numel(), dtype=o.dtype.to_real()).reshape(o.shape) % 5 - 2) * 1j
                 if o.dtype.is_complex else 0) for o in outs]
    for i, s in enumerate(samples(opinfo, dtype, requires_grad=True)):
        if done == GRAD_SAMPLES:
            break
        if not _finite(s):
            continue
        expected = _grads(opinfo, s, _CPU, weights)
        if expected is None:
            continue
        actual = _grads(opinfo, s, dev, weights)
        atol, rtol = tolerance(opinfo, dtype)
        assert_same_results(list(actual), list(expected), atol, rtol,
                            f"{_label(opinfo, s, i, dev, dtype)}: gradients vs CPU", dev)
        done += 1
    if not done:
        raise Skip("no sample with a differentiable output")


STORAGE_OPS = {"as_strided"}
"""Operators that address storage positions: a different layout of the same values is a different input."""


LAYOUT_OPS = {"view_as_complex"}
"""Operators that accept only some layouts (a last dim of stride 1, as PyTorch requires): an entry whose first
``aten`` overload is one skips the non-contiguous check."""


def _noncontiguous_applies(device_type, opinfo, dtype):
    if opinfo.aten[:1] and opinfo.aten[0] in LAYOUT_OPS:  # the op itself, not one it calls
        return "needs a layout its input has"
    return "reads storage positions, not values" if STORAGE_OPS & set(opinfo.aten) else None


@_check("noncontiguous", applies=_noncontiguous_applies)
def check_noncontiguous(device_type, opinfo, dtype):
    """Non-contiguous inputs (every other element of a storage, at an offset)
    give the results contiguous copies of the same values give."""
    dev = tp.device(device_type)
    for i, s in enumerate(samples(opinfo, dtype)):
        expected = call(opinfo, move_sample(s, dev, layout="contiguous"))
        actual = call(opinfo, move_sample(s, dev, layout="noncontiguous"))
        atol, rtol = tolerance(opinfo, dtype, *[d for d in _dtypes_of(expected) if d is not None])
        assert_same_results(actual, expected, atol, rtol,
                            f"{_label(opinfo, s, i, dev, dtype)}: non-contiguous vs contiguous inputs",
                            _placed(s, dev))


def _out_of_place_applies(device_type, opinfo, dtype):
    n = opinfo.name.rsplit(".", 1)[-1]
    return "an in-place op" if n.endswith("_") and not n.endswith("__") else None


@_check("out_of_place", applies=_out_of_place_applies)
def check_out_of_place(device_type, opinfo, dtype):
    """The op leaves its inputs' values and version counters unchanged."""
    dev = tp.device(device_type)
    for i, s in enumerate(samples(opinfo, dtype)):
        moved = move_sample(s, dev)
        tensors = sample_tensors(moved)
        before = [(t._host().copy(), t._version) for t in tensors]
        call(opinfo, moved)
        for k, (t, (values, version)) in enumerate(zip(tensors, before)):
            if not _same_bytes(t._host(), values):
                raise AssertionError(f"{_label(opinfo, s, i, dev, dtype)}: input {k} was modified")
            if t._version != version:
                raise AssertionError(f"{_label(opinfo, s, i, dev, dtype)}: input {k}'s version counter "
                                     f"went from {version} to {t._version}")


def _inplace_applies(device_type, opinfo, dtype):
    return None if opinfo.inplace is not None else "no in-place variant"


def _overlaps(t):
    """Whether two elements of ``t`` share memory (an expanded view): in-place ops refuse those."""
    shape, stride = t.shape, t.stride()
    if t.numel() <= 1:
        return False
    offsets = np.zeros((), dtype=np.int64)
    for n, st in zip(shape, stride):
        offsets = offsets[..., None] + np.arange(n, dtype=np.int64) * st
    return np.unique(offsets).size != t.numel()


@_check("inplace", applies=_inplace_applies)
def check_inplace(device_type, opinfo, dtype):
    """The in-place variant returns its input, writes the out-of-place result
    (cast to the input's dtype) into it and bumps its version counter. Where
    the result's dtype cannot be cast to the input's (a float result for an
    integer input) it raises, with the CPU's message."""
    dev = tp.device(device_type)
    done = 0
    for i, s in enumerate(samples(opinfo, dtype)):
        label = _label(opinfo, s, i, dev, dtype)
        moved = move_sample(s, dev)
        expected = call(opinfo, moved)
        self_ = moved.input
        if not isinstance(self_, Tensor) or not isinstance(expected, Tensor) or \
                expected.shape != self_.shape or _overlaps(self_):
            continue  # the result cannot be written into the input
        target = move_sample(s, dev)
        x = target.input
        version = x._version
        done += 1
        if expected.dtype.category > x.dtype.category:
            err = _raised(opinfo, target, opinfo.inplace)
            if not isinstance(err, RuntimeError) or "can't be cast to the desired output type" not in str(err):
                raise AssertionError(f"{label}: writing a {expected.dtype.name} result into a {x.dtype.name} input "
                                     f"gave {describe_error(err) if err else 'no error'}, expected "
                                     f"RuntimeError: result type ... can't be cast to the desired output type")
            _assert_cpu_raises_alike(device_type, opinfo, s, err, label, opinfo.inplace)
            continue
        got = call(opinfo, target, opinfo.inplace)
        if got is not x:
            raise AssertionError(f"{label}: the in-place variant returned a new tensor, not its input")
        if x._version <= version:
            raise AssertionError(f"{label}: the in-place variant left the version counter at {x._version}")
        atol, rtol = tolerance(opinfo, dtype, expected.dtype)
        assert_close(x, expected.to(x.dtype), atol, rtol, f"{label}: in-place vs out-of-place result")
    if not done:
        raise Skip("no sample whose result has the input's shape")


def _view_applies(device_type, opinfo, dtype):
    return None if opinfo.is_view else "not a view op"


def _overwrite_values(t):
    """Values for ``t`` that differ from the current ones at every element (exact in every dtype)."""
    cur = t._host()
    if t.dtype is tp.bool:
        new = ~cur
    else:
        new = np.where(cur.astype(np.float64) == 1, 2, 1)
    return tp.tensor(np.asarray(new), dtype=t.dtype).to(t.device)


@_check("view", applies=_view_applies)
def check_view(device_type, opinfo, dtype):
    """Each result shares its input's storage, and a write through it is
    seen by a fresh view of the base."""
    dev = tp.device(device_type)
    for i, s in enumerate(samples(opinfo, dtype)):
        label = _label(opinfo, s, i, dev, dtype)
        moved = move_sample(s, dev)
        base = moved.input
        if not isinstance(base, Tensor):
            continue
        views = [v for v in leaves(call(opinfo, moved)) if isinstance(v, Tensor)]
        for k, v in enumerate(views):
            if v.untyped_storage() is not base.untyped_storage():
                raise AssertionError(f"{label}: result {k} does not share its input's storage")
            if v.numel() == 0 or _overlaps(v):
                continue  # nothing to write, or a write would hit one element twice
            new = _overwrite_values(v)
            with no_grad():
                v.copy_(new)
            again = leaves(call(opinfo, moved))[k]
            if not _same_bytes(again, new):
                raise AssertionError(f"{label}: a write through result {k} is not seen through the base")


def _expected_dtypes(device_type, opinfo, sample):
    if not _is_cpu(device_type):
        return _dtypes_of(call(opinfo, move_sample(sample, _CPU))), "the CPU's"
    if opinfo.ref is None:
        raise Skip("the op database gives no reference to take the CPU's dtypes from")
    out = []
    for r in leaves(reference(opinfo, sample)):
        try:
            out.append(_dt.from_numpy_dtype(r.dtype) if isinstance(r, (np.ndarray, np.generic)) else None)
        except TypeError:
            out.append(None)
    return out, "the reference's"


@_check("result_dtype", applies=_not_random)
def check_result_dtype(device_type, opinfo, dtype):
    """Result dtypes follow the core's promotion: the CPU's result dtypes (on
    the CPU itself, the dtypes of the reference, which the database computes
    with PyTorch's rules)."""
    dev = tp.device(device_type)
    for i, s in enumerate(samples(opinfo, dtype)):
        got = _dtypes_of(call(opinfo, move_sample(s, dev)))
        expected, whose = _expected_dtypes(device_type, opinfo, s)
        for k, (g, e) in enumerate(zip(got, expected)):
            if e is not None and g is not None and g != e:
                where = "" if len(got) == 1 else f" of result {k}"
                raise AssertionError(f"{_label(opinfo, s, i, dev, dtype)}: dtype{where} is {g.name}, "
                                     f"{whose} is {e.name}")


def _error_applies(device_type, opinfo, dtype):
    return None if opinfo.error_inputs is not None else "no error inputs"


def _raised(opinfo, sample, fn=None):
    try:
        call(opinfo, sample, fn)
    except Exception as e:
        return e
    return None


def _assert_cpu_raises_alike(device_type, opinfo, sample, err, label, fn=None):
    """On a non-CPU backend, ``err`` has the type and message (device names aside) the CPU raises."""
    if _is_cpu(device_type):
        return
    ref = _raised(opinfo, move_sample(sample, _CPU, requires_grad=None), fn)
    msg = str(err).replace(backend_of(device_type).key_name, "CPU").replace(device_type, "cpu")
    if ref is None or type(ref) is not type(err) or str(ref) != msg:
        raise AssertionError(f"{label}: raised {describe_error(err)}; the CPU raises "
                             f"{describe_error(ref) if ref is not None else 'nothing'}")


@_check("error_inputs", per_dtype=False, applies=_error_applies)
def check_error_inputs(device_type, opinfo, dtype):
    """Each bad call raises the database's exception type with a message
    matching its pattern, and the CPU's exact type and message."""
    dev = tp.device(device_type)
    n = 0
    for n, ei in enumerate(opinfo.error_inputs("cpu"), 1):
        label = _label(opinfo, ei.sample, n - 1, dev, None)
        got = _raised(opinfo, move_sample(ei.sample, dev, requires_grad=None))
        if got is None:
            raise AssertionError(f"{label}: did not raise {ei.error_type.__name__}")
        if not isinstance(got, ei.error_type) or not re.search(ei.error_regex, str(got)):
            raise AssertionError(f"{label}: raised {describe_error(got)}; expected {ei.error_type.__name__} "
                                 f"matching {ei.error_regex!r}")
        _assert_cpu_raises_alike(device_type, opinfo, ei.sample, got, label)
    if not n:
        raise Skip("the op database lists no error inputs for this op")


def _device_index_applies(device_type, opinfo, dtype):
    # a backend-level check: it runs once per backend, reported under the first op of the database
    return None if opinfo.name == _first_op_name() else "runs once per backend, under the first op"


def _first_op_name():
    db = load_op_db()
    return db[0].name if db else None


@_check("device_index", per_dtype=False, applies=_device_index_applies, backend_level=True)
def check_device_index(device_type, opinfo, dtype):
    """Every index below the backend's ``device_count()`` is honoured by factories and ``.to()``
    (the tensor's device index is the one requested), and ``<type>:<device_count()>`` is rejected
    with ``RuntimeError: ... invalid device ordinal`` naming the device and the count. The CPU, as
    in PyTorch, has one device whatever the index."""
    log, _d.FALLBACK_LOG[0] = _d.FALLBACK_LOG[0], None  # the factories' fallbacks are not this op's
    try:
        _check_device_index(device_type)
    finally:
        _d.FALLBACK_LOG[0] = log


def _check_device_index(device_type):
    count = backend_of(device_type).device_count()
    host = tp.ones(2)
    for idx in range(count):
        want = tp.device(device_type, idx)
        for what, fn in (("ones", lambda: tp.ones(2, device=want)), ("to", lambda: host.to(want)),
                         ("to(str)", lambda: host.to(str(want)))):
            try:
                t = fn()
            except Exception as e:
                raise AssertionError(f"{what}({want}) raised {describe_error(e)}; device_count() is {count}")
            if _is_cpu(device_type):
                if t.device != tp.device("cpu"):
                    raise AssertionError(f"{what}({want}) made a tensor on {t.device}, not cpu")
            elif t.device.type != device_type or t.device.index != idx:
                raise AssertionError(f"{what}({want}) made a tensor on {t.device}")
    if _is_cpu(device_type):
        return
    bad = f"{device_type}:{count}"
    for what, fn in (("ones", lambda: tp.ones(2, device=bad)), ("to", lambda: host.to(bad)),
                     ("empty", lambda: tp.empty(2, device=tp.device(bad)))):
        try:
            t = fn()
        except RuntimeError as e:
            if "invalid device ordinal" not in str(e) or bad not in str(e) or str(count) not in str(e):
                raise AssertionError(f"{what}(device={bad!r}) raised {describe_error(e)}; expected "
                                     f"'invalid device ordinal' naming {bad} and device_count() {count}")
        else:
            raise AssertionError(f"{what}(device={bad!r}) did not raise; it made a tensor on {t.device}")


ROUND_TRIP_SAMPLES = 3


@_check("round_trip")
def check_round_trip(device_type, opinfo, dtype):
    """``t.to(device).cpu()`` gives back ``t``'s dtype and exact values, for
    the samples and for the op's results."""
    dev = tp.device(device_type)
    for i, s in enumerate(samples(opinfo, dtype)[:ROUND_TRIP_SAMPLES]):
        label = _label(opinfo, s, i, dev, dtype)
        for k, t in enumerate(sample_tensors(s)):
            there = t.to(dev)
            back = there.cpu()
            if there.device.type != dev.type or back.dtype != t.dtype or not _same_bytes(back, t):
                raise AssertionError(f"{label}: input {k} comes back from the device as {back.dtype.name} "
                                     f"with different values")
        for k, o in enumerate(leaves(call(opinfo, move_sample(s, dev)))):
            if isinstance(o, Tensor):
                back = o.cpu()
                if back.dtype != o.dtype or not _same_bytes(back, o):
                    raise AssertionError(f"{label}: result {k} copied to the CPU changes dtype or values")


def _random_applies(device_type, opinfo, dtype):
    return None if opinfo.random else "not a random op"


@_check("random_reproducible", applies=_random_applies)
def check_random_reproducible(device_type, opinfo, dtype):
    """Under ``tensorplug.manual_seed`` the op gives the same values twice on the same backend."""
    dev = tp.device(device_type)
    for i, s in enumerate(samples(opinfo, dtype)):
        first = call(opinfo, move_sample(s, dev))
        second = call(opinfo, move_sample(s, dev))
        for k, (a, b) in enumerate(zip(leaves(first), leaves(second))):
            if isinstance(a, Tensor) and not _same_bytes(a, b):
                raise AssertionError(f"{_label(opinfo, s, i, dev, dtype)}: result {k} differs between two "
                                     f"runs from the same seed")


__all__ = ["Skip", "XFail", "Check", "CHECKS", "TRANSFORM_CHECKS", "register_transform_check", "load_op_db",
           "ConformanceConfig", "conformance_config", "plugin_configs", "conformance_targets", "Case",
           "conformance_cases", "execute", "run_case", "Outcome", "fallback_ops", "move_sample", "call",
           "reference", "tolerance", "assert_close", "assert_same_results", "samples"]
