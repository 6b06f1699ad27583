"""The Batched key's kernels: one per op with a rule, and the slow loop-and-stack fallback.

Every kernel peels off one vmap level, the highest among its arguments:
wrappers of that level are replaced by their values, everything else
(plain tensors, wrappers of lower levels) is unbatched at this level. The
rule then calls ops on the values through the full dispatcher, so lower
levels, autograd of the values and the backends handle them in turn; the
results are wrapped again at the same level.
"""

from __future__ import annotations

import tensorplug
from tensorplug.plugin_api import warn_user

from .batched import BatchedTensor, STATE, VmapLevel, wrap
from .rules import LOGICAL, inplace_error, rule_for
from .rules_tensorops import dynamic_shape_error

_DYNAMIC = tensorplug.Tag.dynamic_output_shape

_WARNED: set = set()


def _context(level, vals, bdims):
    levels = STATE.levels
    if level <= len(levels):
        return levels[level - 1]
    # a batched tensor kept past its vmap call: its own value still knows the batch size
    for v, b in zip(vals, bdims):
        if b is not None and not isinstance(b, list):
            return VmapLevel(level, v._shape[b], "error")
    raise RuntimeError("vmap: a batched tensor was used after its vmap call returned")


def _rewrap(res, bd, level):
    if bd is None:
        return res
    if isinstance(bd, tuple):
        return tuple(_rewrap(r, b, level) for r, b in zip(res, bd))
    return wrap(res, bd, level)


def _tensor_args(op):
    args = op.schema.arguments
    single = tuple(i for i, a in enumerate(args) if a.type == "Tensor" and not a.is_list)
    lists = tuple(i for i, a in enumerate(args) if a.type == "Tensor" and a.is_list)
    return single, lists, bool(args) and args[0].is_write


def _unwrap(args, single, lists):
    """(level, vals, bdims) for the highest level among ``args``."""
    level = 0
    for i in single:
        t = args[i]
        if t.__class__ is BatchedTensor and t._level > level:
            level = t._level
    for i in lists:
        for t in args[i]:
            if t.__class__ is BatchedTensor and t._level > level:
                level = t._level
    vals = list(args)
    bdims = [None] * len(args)
    for i in single:
        t = args[i]
        if t.__class__ is BatchedTensor and t._level == level:
            vals[i] = t._value
            bdims[i] = t._bdim
    for i in lists:
        lv, lb = [], []
        for t in args[i]:
            if t.__class__ is BatchedTensor and t._level == level:
                lv.append(t._value)
                lb.append(t._bdim)
            else:
                lv.append(t)
                lb.append(None)
        vals[i] = lv
        bdims[i] = lb
    return level, vals, bdims


def make_kernel(op, rule):
    """The Batched kernel of ``op`` running ``rule`` (see rules.py for the rule's contract)."""
    single, lists, inplace = _tensor_args(op)

    if not lists and len(single) == 1 and not inplace:
        p = single[0]

        def kernel(*args):
            t = args[p]
            vals = list(args)
            vals[p] = t._value
            bdims = [None] * len(args)
            bdims[p] = t._bdim
            level = t._level
            ctx = STATE.levels[level - 1] if level <= len(STATE.levels) else _context(level, vals, bdims)
            out = rule(ctx, op, vals, bdims, args)
            if out is None:  # the rule hands this call to the slow path
                _warn_slow(op)
                return loop(op, args, single, lists, inplace, level, vals, bdims, ctx)
            res, bd = out
            if bd is None or bd is LOGICAL:
                return res
            if bd.__class__ is int:
                return wrap(res, bd, level)
            return _rewrap(res, bd, level)
    else:
        def kernel(*args):
            level, vals, bdims = _unwrap(args, single, lists)
            ctx = STATE.levels[level - 1] if level <= len(STATE.levels) else _context(level, vals, bdims)
            out = rule(ctx, op, vals, bdims, args)
            if out is None:  # the rule hands this call to the slow path
                _warn_slow(op)
                return loop(op, args, single, lists, inplace, level, vals, bdims, ctx)
            if inplace:
                return args[0]
            res, bd = out
            if bd.__class__ is int:
                return wrap(res, bd, level)
            if bd is LOGICAL:
                return res
            return _rewrap(res, bd, level)
    if op.schema.is_view:
        kernel = _view_kernel(kernel)
    kernel.__name__ = f"batched_{op.name}"
    return kernel


def _view_kernel(kernel):
    """``kernel`` of a view op, whose results record the batched input as their ``_base``.

    Autograd of batched tensors (``grad`` inside ``vmap``) records on the wrappers, and
    an in-place write through a view rebases the history of the view's ``_base``
    (``CopySlices``): without it a write through ``z[0]`` into a fresh batched ``z``
    (``z = zeros_like(x); z[0] = ...``, and every select/slice/index backward under
    ``jacrev``) left ``z`` without the write's gradient. Only results that share the
    input's memory are views (a rule may copy, as ``view`` of interleaved examples does).
    """
    def view_kernel(*args):
        out = kernel(*args)
        src = args[0]
        if src.__class__ is BatchedTensor:
            root = src if src._base is None else src._base
            st = src._get_storage()
            for r in (out if isinstance(out, (tuple, list)) else (out,)):
                if r.__class__ is BatchedTensor and r is not src and r._get_storage() is st:
                    r._base = root
        return out
    return view_kernel


# --------------------------------------------------------------------------
# The slow path
# --------------------------------------------------------------------------
FALLBACK_WARNING = ("There is a performance drop because we have not yet implemented the batching rule for {op}. "
                    "Please file us an issue on GitHub so that we can prioritize its implementation.")


def _select(v, bd, i):
    return v.select(bd, i) if bd is not None else v


def loop(op, args, single, lists, inplace, level, vals, bdims, ctx):
    """Run ``op`` once per example and stack the results along dim 0."""
    if inplace and bdims[0] is None and any(b is not None for b in bdims[1:] if not isinstance(b, list)):
        raise inplace_error(op)
    results = []
    for k in range(ctx.size):
        ex = list(vals)
        for i in single:
            ex[i] = _select(vals[i], bdims[i], k)
        for i in lists:
            ex[i] = [_select(v, b, k) if v is not None else None for v, b in zip(vals[i], bdims[i])]
        results.append(op.positional(*ex))
    if inplace:
        return args[0]
    stack = tensorplug.stack
    first = results[0]
    if isinstance(first, (tuple, list)):
        return type(first)(wrap(stack([r[j] for r in results]), 0, level) for j in range(len(first)))
    return wrap(stack(results), 0, level)


def _warn_slow(op):
    if op.qualname not in _WARNED:
        _WARNED.add(op.qualname)
        warn_user(FALLBACK_WARNING.format(op=op.qualname))


_TAGGED: dict = {}  # op -> the kernel its tags give (ops defined after vmap registered its kernels)


def fallback(op, ks, *args):
    """The Batched key's boxed fallback: the rule an op's tags give (``Tag.pointwise``), else warn
    once per op and loop over the examples."""
    kernel = _TAGGED.get(op)
    if kernel is None and op not in _TAGGED:
        rule = rule_for(op)
        kernel = _TAGGED[op] = make_kernel(op, rule) if rule is not None else None
    if kernel is not None:
        return kernel(*args)
    if _DYNAMIC in op.tags:
        raise dynamic_shape_error(op)
    _warn_slow(op)
    single, lists, inplace = _tensor_args(op)
    level, vals, bdims = _unwrap(args, single, lists)
    ctx = STATE.levels[level - 1] if level <= len(STATE.levels) else _context(level, vals, bdims)
    return loop(op, args, single, lists, inplace, level, vals, bdims, ctx)
