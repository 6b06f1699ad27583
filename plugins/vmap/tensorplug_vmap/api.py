"""``vmap`` and the public rule registration: what ``tensorplug.vmap`` is."""

from __future__ import annotations

import functools

import tensorplug
from tensorplug import Tensor

from tensorplug.plugin_api import set_draw_target_hook, OpOverload, lookup_op, Library

from .batched import STATE, BatchedTensor, VmapLevel, is_batched, wrap
from .kernel import make_kernel
from .rules import RANDOM_ERROR

_RANDOMNESS = ("error", "different", "same")


# --------------------------------------------------------------------------
# Pytrees: tuples, lists and dicts of leaves
# --------------------------------------------------------------------------
def _flatten(tree, path, leaves, paths):
    if isinstance(tree, (tuple, list)):
        return (type(tree), tuple(_flatten(x, f"{path}[{i}]", leaves, paths) for i, x in enumerate(tree)))
    if isinstance(tree, dict):
        keys = list(tree)
        return (dict, tuple(keys), tuple(_flatten(tree[k], f"{path}[{k!r}]", leaves, paths) for k in keys))
    leaves.append(tree)
    paths.append(path)
    return None


def flatten(tree, root="args"):
    """``(leaves, spec, paths)``: the leaves of nested tuples/lists/dicts, and where each sits."""
    leaves, paths = [], []
    spec = _flatten(tree, root, leaves, paths)
    return leaves, spec, paths


def unflatten(spec, leaves):
    """The tree of ``spec`` with ``leaves`` in order."""
    it = iter(leaves)

    def build(s):
        if s is None:
            return next(it)
        if s[0] is dict:
            return {k: build(c) for k, c in zip(s[1], s[2])}
        if hasattr(s[0], "_fields"):  # a named tuple (max's values and indices)
            return s[0](*(build(c) for c in s[1]))
        return s[0](build(c) for c in s[1])
    return build(spec)


def draw_target(t):
    """What a random factory (``randn``, ``rand_like`` of an unbatched tensor, ...) draws into inside vmap.

    Under ``randomness="error"`` at any active level it raises; every ``"different"`` level
    batches the fresh tensor (one physical dimension per level, outermost first) so each example
    draws its own values; ``"same"`` levels leave it shared.
    """
    levels = []
    for lvl in STATE.levels:
        if lvl.randomness == "error":
            raise RuntimeError(RANDOM_ERROR)
        if lvl.randomness == "different":
            levels.append(lvl)
    if not levels:
        return t
    empty = tensorplug.empty
    phys = empty(tuple(lvl.size for lvl in levels) + t._shape, dtype=t._dtype, device=t._device)
    for lvl in levels:
        phys = wrap(phys, 0, lvl.level)
    return phys


def _spec_str(spec):
    if spec is None:
        return "*"
    if spec[0] is dict:
        return "{" + ", ".join(f"{k!r}: {_spec_str(c)}" for k, c in zip(spec[1], spec[2])) + "}"
    inner = ", ".join(_spec_str(c) for c in spec[1])
    return f"({inner},)" if spec[0] is tuple and len(spec[1]) == 1 else (
        f"({inner})" if spec[0] is tuple else f"[{inner}]")


def _broadcast_dims(dims, spec, what, prefix):
    """One dim (int or None) per leaf of ``spec``, from ``dims`` (a dim, or a tree matching a prefix of spec)."""
    if dims is None or (isinstance(dims, int) and not isinstance(dims, bool)):
        n = [0]

        def count(s):
            if s is None:
                n[0] += 1
            else:
                for c in (s[2] if s[0] is dict else s[1]):
                    count(c)
        count(spec)
        return [dims] * n[0]
    if spec is None or not isinstance(dims, (tuple, list, dict)):
        raise ValueError(f"{prefix}: expected `{what}` to be int or a (potentially nested) tuple matching the "
                         f"structure of {'inputs' if what == 'in_dims' else 'outputs'}, got: {type(dims)}.")
    children = spec[2] if spec[0] is dict else spec[1]
    if spec[0] is dict:
        if not isinstance(dims, dict) or set(dims) != set(spec[1]):
            raise ValueError(f"{prefix}: {what} is not compatible with the structure of "
                             f"`{'inputs' if what == 'in_dims' else 'outputs'}`. {what} has structure "
                             f"{_spec_str(flatten(dims)[1])} but it has structure {_spec_str(spec)}.")
        dims = [dims[k] for k in spec[1]]
    elif isinstance(dims, dict) or len(dims) != len(children):
        raise ValueError(f"{prefix}: {what} is not compatible with the structure of "
                         f"`{'inputs' if what == 'in_dims' else 'outputs'}`. {what} has structure "
                         f"{_spec_str(flatten(dims)[1])} but {'inputs' if what == 'in_dims' else 'outputs'} has "
                         f"structure {_spec_str(spec)}.")
    out = []
    for d, c in zip(dims, children):
        out.extend(_broadcast_dims(d, c, what, prefix))
    return out


def _name(func):
    return getattr(func, "__name__", None) or repr(func)


# --------------------------------------------------------------------------
# vmap
# --------------------------------------------------------------------------
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize ``func`` over a batch dimension of its inputs.

    ``in_dims``: per positional argument (or one for all) the dimension to map
    over, None for an argument every example shares; nested tuples, lists and
    dicts of tensors get nested in_dims. ``out_dims``: where the batch dimension
    goes in each output (None: the output is the same for every example).
    ``randomness``: ``"error"`` (random ops raise), ``"different"`` (each example
    draws its own values) or ``"same"`` (one draw shared by all examples).
    ``chunk_size``: run at most that many examples at once.
    Returns a function with ``func``'s arguments; inside ``func`` batched tensors
    look like one example. See docs/vmap.md.
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def vmapped(*args, **kwargs):
        prefix = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
        if not args:
            raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or "
                             f"you are trying to vmap over a function with no inputs. The latter is unsupported.")
        if not (in_dims is None or isinstance(in_dims, (int, tuple))) or isinstance(in_dims, bool):
            raise ValueError(f"{prefix}: expected `in_dims` to be int or a (potentially nested) tuple matching "
                             f"the structure of inputs, got: {type(in_dims)}.")
        leaves, spec, paths = flatten(tuple(args))
        dims = _broadcast_dims(in_dims if not isinstance(in_dims, int) or in_dims is None else in_dims,
                               spec, "in_dims", prefix)
        size, first = None, None
        for i, (x, d, path) in enumerate(zip(leaves, dims, paths)):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise ValueError(f"{prefix}: Got in_dim={d} for an input but the input is of type {type(x)}. We "
                                 f"cannot vmap over non-Tensor arguments, please use None as the respective in_dim "
                                 f"(input {path})")
            n = x.dim()
            if not -n <= d < n:
                raise ValueError(f"{prefix}: Got in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {n} so expected in_dim to satisfy {-n} <= in_dim < {n}. "
                                 f"(input {path})")
            d = dims[i] = d % n
            if size is None:
                size, first = x._shape[d], path
            elif x._shape[d] != size:
                sizes = [x2._shape[d2 % x2.dim()] for x2, d2 in zip(leaves, dims) if d2 is not None]
                raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got "
                                 f"sizes {sizes} for the mapped dimension ({first} has size {size}, {path} has "
                                 f"size {x._shape[d]})")
        if size is None:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if chunk_size is not None and chunk_size < size:
            return _chunked(leaves, dims, spec, size, kwargs)
        return _run(leaves, dims, spec, size, kwargs)

    def _run(leaves, dims, spec, size, kwargs):
        levels = STATE.levels
        level = len(levels) + 1
        levels.append(VmapLevel(level, size, randomness))
        # stays installed: other threads may be inside vmap, and it returns its argument where none is
        set_draw_target_hook(draw_target)
        try:
            batched = [wrap(x, d, level) if d is not None else x for x, d in zip(leaves, dims)]
            out = func(*unflatten(spec, batched), **kwargs)
        finally:
            levels.pop()
        return _unwrap_outputs(out, level, size)

    def _chunked(leaves, dims, spec, size, kwargs):
        parts = []
        for start in range(0, size, chunk_size):
            n = min(chunk_size, size - start)
            chunk = [x.narrow(d, start, n) if d is not None else x for x, d in zip(leaves, dims)]
            parts.append(_run(chunk, dims, spec, n, kwargs))
        outs = [flatten(p, "output")[0] for p in parts]
        _, ospec, _ = flatten(parts[0], "output")
        odims = _broadcast_dims(out_dims, ospec, "out_dims", f"vmap({_name(func)}, ...)")
        _cat = tensorplug.cat
        merged = [_cat([o[j] for o in outs], d) if d is not None else outs[0][j] for j, d in enumerate(odims)]
        return unflatten(ospec, merged)

    def _unwrap_outputs(out, level, size):
        leaves, ospec, paths = flatten(out, "output")
        prefix = f"vmap({_name(func)}, ...)"
        odims = _broadcast_dims(out_dims, ospec, "out_dims", prefix)
        res = []
        for x, d, path in zip(leaves, odims, paths):
            if not isinstance(x, Tensor):
                if d is None:
                    res.append(x)
                    continue
                raise ValueError(f"{prefix}: `{_name(func)}` must only return Tensors, got type {type(x)}. "
                                 f"Did you mean to set out_dims= to None for output? ({path})")
            batched = x.__class__ is BatchedTensor and x._level == level
            if d is None:
                if batched:
                    raise ValueError(f"{prefix}: out_dims=None for {path}, but it differs between examples "
                                     f"(it is batched); give it an int out_dim")
                res.append(x)
                continue
            n = x.dim() + 1
            if not -n <= d < n:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                                 f"but got {d})")
            d %= n
            if batched:
                v, bd = x._value, x._bdim
                res.append(v if bd == d else v.movedim(bd, d))
            else:
                # the same for every example: expanded, as PyTorch returns it
                res.append(x.unsqueeze(d).expand(x._shape[:d] + (size,) + x._shape[d:]))
        return unflatten(ospec, res)

    return vmapped


# --------------------------------------------------------------------------
# Registering rules
# --------------------------------------------------------------------------
def register_batching_rule(op, rule=None):
    """Register ``rule`` as the batching rule of operator ``op`` (``"ns::name.overload"`` or an OpOverload).

    The rule has the signature of the built-in ones (see ``tensorplug_vmap.rules``):
    ``rule(ctx, op, vals, bdims, args) -> (result, out_bdims)``. Used as a decorator
    when ``rule`` is omitted. Returns the rule.
    """
    def register(fn):
        o = op if isinstance(op, OpOverload) else lookup_op(op if "::" in op else f"tensorplug::{op}")
        Library(o.namespace, "IMPL").impl(o, make_kernel(o, fn), "Batched", allow_override=True)
        return fn
    return register if rule is None else register(rule)


vmap.register_batching_rule = register_batching_rule
vmap.is_batched = is_batched
vmap.BatchedTensor = BatchedTensor

__all__ = ["vmap", "register_batching_rule", "flatten", "unflatten"]
