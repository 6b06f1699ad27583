"""compile's conformance check: ``tensorplug conformance compile``.

For every op of the database and its first samples, ``compile(op)`` is called three times (a trace,
the confirming trace, a replay) on fresh copies of the sample's tensors and must equal the eager call:
the same dtypes and shapes, the same values (random ops too: each call seeds the generator the
same way, and a replayed random kernel draws as the eager one does), and, for differentiable ops,
the same gradients through the compiled forward (its traced backward). A function that was not
replayed must say why (a graph break, such as an op whose output depends on the data).
"""

from __future__ import annotations

import tensorplug as tp
from tensorplug import Tensor
from tensorplug.testing import (Skip, call, op_samples, move_sample, check_close, tolerance, leaves,
                                map_tensors, register_transform_check)

from .api import CompiledFunction, READY

SAMPLES = 2  # per op: the first ones (the database puts the plain cases first)

XFAIL = {}
"""Ops that do not compile, with the reason (reported as expected failures)."""


def _explained(cf):
    """Whether a compiled function that did not replay recorded why."""
    return any(e.state == READY for e in cf.entries) or any(ev[0] in ("break", "unstable") for ev in cf.events)


def _compare(got, want, opinfo, what):
    g_l, w_l = leaves(got), leaves(want)
    assert len(g_l) == len(w_l), f"{what}: {len(g_l)} results, eager {len(w_l)}"
    for j, (g, w) in enumerate(zip(g_l, w_l)):
        if not isinstance(w, Tensor):
            assert g == w or (g != g and w != w), f"{what}: result {j} is {g!r}, eager {w!r}"
            continue
        assert isinstance(g, Tensor), f"{what}: result {j} is {type(g).__name__}, eager a tensor"
        assert g.dtype is w.dtype and tuple(g.shape) == tuple(w.shape), (
            f"{what}: result {j} is {g.dtype.name}{list(g.shape)}, eager {w.dtype.name}{list(w.shape)}")
        atol, rtol = tolerance(opinfo, w.dtype)
        check_close(g, w, atol, rtol, f"{what}: result {j}")


def check_compiled_vs_eager(device_type, opinfo, dtype):
    """compile(op) equals op on the database's samples: results and gradients."""
    dtype = dtype or next((d for d in (tp.float32, tp.float64) if d in opinfo.dtypes), opinfo.dtypes[0])
    found = False
    for index, sample in enumerate(op_samples(opinfo, dtype)):
        if index >= SAMPLES:
            break
        sample = move_sample(sample, device_type)
        struct = (sample.input, tuple(sample.args), dict(sample.kwargs))
        ts = []
        map_tensors(struct, ts.append)
        if not ts:
            continue
        found = True

        def fn(*tensors, struct=struct):
            it = iter(tensors)
            inp, args, kwargs = map_tensors(struct, lambda t: next(it))
            return call(opinfo, type(sample)(inp, args, kwargs))

        def fresh(grad=False):
            out = [t.detach().clone() for t in ts]
            if grad:
                out = [t.requires_grad_() if t.dtype.is_floating_point else t for t in out]
            return out

        what = f"{opinfo.name} sample {sample.name or index}"
        cf = CompiledFunction(fn)
        got = None
        for _ in range(3):
            got = cf(*fresh())
        _compare(got, fn(*fresh()), opinfo, what)
        assert _explained(cf), f"{what}: compile(op) never replayed and recorded no reason"
        if not (opinfo.supports_autograd and dtype.is_floating_point) or opinfo.name.endswith("_"):
            continue
        ins = fresh(grad=True)
        try:
            want = _grads(fn(*ins), ins)
        except NotImplementedError as e:  # no derivative: the compiled backward must say the same
            cg = CompiledFunction(fn)
            for _ in range(3):
                ins = fresh(grad=True)
                try:
                    _grads(cg(*ins), ins)
                except NotImplementedError as e2:
                    assert str(e2) == str(e), f"{what}: compiled backward raised {e2!r}, eager {e!r}"
                else:
                    raise AssertionError(f"{what}: compiled backward did not raise {e!r}")
            continue
        if want is None:
            continue
        cg = CompiledFunction(fn)
        for _ in range(3):
            ins = fresh(grad=True)
            grads = _grads(cg(*ins), ins)
        for j, (g, w) in enumerate(zip(grads, want)):
            if (g is None) != (w is None):
                raise AssertionError(f"{what}: gradient {j} is {'None' if g is None else 'a tensor'} compiled, "
                                     f"{'None' if w is None else 'a tensor'} eagerly")
            if g is not None:
                atol, rtol = tolerance(opinfo, w.dtype)
                check_close(g, w, atol, rtol, f"{what}: gradient {j}")
    if not found:
        raise Skip("no sample with a tensor input")


def _grads(out, ins):
    """Gradients of the sum of ``out``'s floating point results (weighted, so each position counts
    differently) with respect to ``ins``; None when nothing is differentiable."""
    outs = [o for o in leaves(out) if isinstance(o, Tensor) and o.requires_grad and o.grad_fn is not None
            and o.dtype.is_floating_point]
    wants = [t for t in ins if t.requires_grad]
    if not outs or not wants:
        return None
    total = sum((o * tp.linspace(0.5, 1.5, max(o.numel(), 1), dtype=o.dtype).reshape(o.shape)).sum()
                if o.numel() else o.sum() for o in outs)
    return tp.autograd.grad(total, wants, allow_unused=True)


def register():
    """Register the check with the conformance kit (idempotent)."""
    register_transform_check("compile", "compiled_vs_eager", check_compiled_vs_eager, per_dtype=False)
