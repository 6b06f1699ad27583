"""Functional transforms over the autograd engine, as ``torch.func``: ``grad``, ``grad_and_value``,
``vjp``, ``jacrev``, ``hessian``, ``functional_call`` (and ``vmap`` from the plugin).

The differentiated arguments are pytrees: tensors, or tuples, lists, dicts
and named tuples of them, nested; results have the structure ``torch.func``
gives them (``grad`` of a dict of parameters is a dict of gradients, a tuple
``argnums`` gives a tuple, ``jacrev`` of a dict output is a dict...).

Each differentiated tensor becomes a fresh leaf, so the result does not
depend on whether it required grad outside. A transform stays connected to
the graph around it (``grad(grad(f))``, a closure over a tensor that
requires grad) when its inputs carry history (they are aliased, not
detached) or when its function's graph reaches a leaf that is not one of its
own; then the gradient is computed with ``create_graph=True`` and returned
with its history. Otherwise the results are detached.

``vmap`` comes from the tensorplug-vmap plugin: ``tensorplug.func.vmap`` is
``tensorplug.vmap`` while the plugin is enabled and raises the plugin's
"not enabled" error otherwise. ``jacrev`` and ``hessian`` (vmap over vjp)
look vmap up when called, so they need the plugin only then.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections import OrderedDict

from .autograd import grad as _autograd_grad
from .autograd.graph import AccumulateGrad
from .autograd.grad_mode import enable_grad
from .ops.factories import eye, zeros_like
from .ops.joining import cat as _cat
from .plugins import NAMESPACE as _NAMESPACE, complete_pending as _complete_pending
from .plugins import missing_name_error as _missing_name_error
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "hessian", "functional_call", "vmap"]


# --------------------------------------------------------------------------
# Pytrees: tuples, lists, dicts, OrderedDicts and named tuples; anything else is a leaf
# --------------------------------------------------------------------------
_LEAF = None  # the spec of a leaf


def _spec(tree, leaves):
    cls = type(tree)
    if cls is tuple or cls is list or (isinstance(tree, tuple) and hasattr(cls, "_fields")):
        return (cls, None, tuple(_spec(c, leaves) for c in tree))
    if cls is dict or cls is OrderedDict:
        keys = tuple(tree)
        return (cls, keys, tuple(_spec(tree[k], leaves) for k in keys))
    leaves.append(tree)
    return _LEAF


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves of ``tree`` in order and its structure (specs compare with ``==``)."""
    leaves = []
    return leaves, _spec(tree, leaves)


def tree_unflatten(leaves, spec):
    """The tree of structure ``spec`` with ``leaves`` in order (the inverse of :func:`tree_flatten`)."""
    it = iter(leaves)

    def build(s):
        if s is _LEAF:
            return next(it)
        cls, keys, children = s
        if keys is not None:
            return cls((k, build(c)) for k, c in zip(keys, children))
        if cls is tuple or cls is list:
            return cls(build(c) for c in children)
        return cls(*(build(c) for c in children))  # a named tuple
    return build(spec)


def _spec_str(s):
    """PyTorch's ``treespec_pprint``: ``*`` for a leaf, ``(*, [*])``, ``{'a': *}``..."""
    if s is _LEAF:
        return "*"
    cls, keys, children = s
    parts = [_spec_str(c) for c in children]
    if cls is dict:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(keys, parts)) + "}"
    if cls is OrderedDict:
        return "OrderedDict([" + ", ".join(f"({k!r}, {p})" for k, p in zip(keys, parts)) + "])"
    if cls is list:
        return "[" + ", ".join(parts) + "]"
    if cls is tuple:
        return "(" + ", ".join(parts) + (",)" if len(parts) == 1 else ")")
    return f"{cls.__name__}(" + ", ".join(f"{n}={p}" for n, p in zip(cls._fields, parts)) + ")"


# --------------------------------------------------------------------------
# argnums
# --------------------------------------------------------------------------
def _wrap_argnum(argnum, n):
    if not isinstance(argnum, int) or isinstance(argnum, bool):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < n:
        return argnum
    if -n <= argnum < 0:
        return argnum + n
    raise RuntimeError(f"Got argnum={argnum}, but only {n} positional inputs")


def _argnums(argnums, n):
    """``argnums`` validated and made non-negative, with PyTorch's errors."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return _wrap_argnum(argnums, n)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    nums = tuple(_wrap_argnum(a, n) for a in argnums)
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return nums


def _slice_argnums(args, argnums, as_tuple=True):
    """The arguments at ``argnums``: one tree for an int (a 1-tuple with ``as_tuple``), else a tuple of trees."""
    nums = _argnums(argnums, len(args))
    if isinstance(nums, int):
        return (args[nums],) if as_tuple else args[nums]
    return tuple(args[i] for i in nums)


def _replace_argnums(args, argnums, diff):
    """``args`` with the arguments at ``argnums`` replaced by ``diff`` (what ``_slice_argnums`` gave)."""
    nums = _argnums(argnums, len(args))
    out = list(args)
    if isinstance(nums, int):
        out[nums] = diff
    else:
        for i, d in zip(nums, diff):
            out[i] = d
    return tuple(out)


# --------------------------------------------------------------------------
# Differentiable inputs, connection to the graph around, unwrapping
# --------------------------------------------------------------------------
def _prepare(x):
    """``(input, connected)``: what ``func`` receives for a differentiated tensor ``x``."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x._requires_grad:
        # history at its own level (an outer grad, also of a wrapper inside vmap): stay connected
        return x.view_as(x), True
    leaf = getattr(x, "_grad_leaf", None)
    if leaf is not None:
        # a transform's wrapper (grad inside vmap) becomes a leaf at its own level only
        return leaf()
    return x.detach().requires_grad_(True), False


class _Depth(threading.local):
    def __init__(self):
        self.n = 0


_DEPTH = _Depth()
"""How many transforms are running their function on this thread: the fresh leaves of a transform
carry its depth (``_func_level``), so one at depth ``d`` tells leaves of the transforms around it
(depth below ``d``: their gradients must flow through) from its own and finished inner ones' (dead
ends: only that transform reads their gradients)."""


@contextlib.contextmanager
def _nested():
    _DEPTH.n += 1
    try:
        yield _DEPTH.n
    finally:
        _DEPTH.n -= 1


def _prepare_tree(tree, depth):
    """``(flat inputs, spec, connected)`` for a pytree of differentiated tensors; the fresh leaves
    among the inputs are marked with ``depth``."""
    flat, spec = tree_flatten(tree)
    inputs, connected = [], False
    for x in flat:
        a, c = _prepare(x)
        inputs.append(a)
        connected |= c
        if not c:
            a.__dict__["_func_level"] = depth
    return inputs, spec, connected


def _has_history(t):
    """Whether ``t`` (or, for a transform's wrapper, a value under it) requires grad."""
    while t is not None:
        if t._requires_grad:
            return True
        t = getattr(t, "_value", None)
    return False


def _reaches_other_leaves(outputs, depth):
    """Whether the graph of ``outputs`` reaches a leaf that requires grad and is not a fresh leaf of
    a transform at ``depth`` or deeper: ``func`` closed over a tensor of an enclosing computation
    (or an enclosing transform's input), whose gradient must flow through."""
    def outer(t):
        return t.__dict__.get("_func_level", 0) < depth

    seen = set()
    stack = []
    for t in outputs:
        if isinstance(t, Tensor):
            if t._grad_fn is not None:
                stack.append(t._grad_fn)
            elif t._requires_grad and outer(t):
                return True
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.__class__ is AccumulateGrad:
            if outer(node.variable):
                return True
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    return False


def _unwrap(tree, connected):
    """A result tree as the caller gets it: detached unless connected; tensors only, as PyTorch checks."""
    flat, spec = tree_flatten(tree)
    for x in flat:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    if connected:
        return tree
    return tree_unflatten([x.detach() for x in flat], spec)


def _grads(outputs, inputs, cotangents=None, retain_graph=None, create_graph=False):
    """Gradients of ``outputs`` for ``inputs``; zeros for inputs they do not depend on."""
    keep = [i for i, o in enumerate(outputs) if o._requires_grad]
    if not keep:
        return tuple(zeros_like(x) for x in inputs)
    outs = [outputs[i] for i in keep]
    cots = None if cotangents is None else [cotangents[i] for i in keep]
    return tuple(_autograd_grad(outs, inputs, cots, retain_graph=retain_graph, create_graph=create_graph,
                                allow_unused=True, materialize_grads=True))


# --------------------------------------------------------------------------
# grad, grad_and_value
# --------------------------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """Like :func:`grad`, returning ``(gradient, value)`` (``(gradient, (value, aux))`` with ``has_aux``)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        diff = _slice_argnums(args, argnums, as_tuple=False)
        with enable_grad(), _nested() as depth:
            inputs, spec, connected = _prepare_tree(diff, depth)
            args = _replace_argnums(args, argnums, tree_unflatten(inputs, spec))
            output = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                                   f"got tensor with {output.dim()} dims. Maybe you wanted to use the vjp or "
                                   f"jacrev APIs instead?")
            connected = connected or _reaches_other_leaves([output], depth)
            gs = _grads([output], inputs, create_graph=connected)
        g = _unwrap(tree_unflatten(gs, spec), connected)
        output = _unwrap(output, connected)
        if has_aux:
            return g, (output, _unwrap(aux, connected))
        return g, output
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued ``func`` with respect to argument(s) ``argnums``, as a function.

    ``argnums``: an int (the gradient has that argument's structure) or a tuple of ints (a tuple of
    them); an argument may be a tensor or a pytree of tensors (a dict of parameters). With
    ``has_aux``, ``func`` returns ``(output, aux)`` and the function ``(gradient, aux)``.
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


# --------------------------------------------------------------------------
# vjp
# --------------------------------------------------------------------------
def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` (``(output, vjp_fn, aux)`` with ``has_aux``).

    ``vjp_fn(cotangents, retain_graph=True, create_graph=None)`` takes cotangents with the structure
    of the output and returns a tuple with one gradient per primal, each with that primal's structure.
    """
    return _vjp(func, primals, None, has_aux)


def _vjp(func, primals, argnums, has_aux):
    """vjp with respect to the primals at ``argnums`` (all when None); errors as ``vjp``'s."""
    diff = primals if argnums is None else _slice_argnums(primals, argnums, as_tuple=False)
    with enable_grad(), _nested() as depth:
        inputs, spec, connected = _prepare_tree(diff, depth)
        tree = tree_unflatten(inputs, spec)
        out = func(*(tree if argnums is None else _replace_argnums(primals, argnums, tree)))
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            out, aux = out
        flat_out, out_spec = tree_flatten(out)
        if not flat_out or (len(flat_out) == 1 and flat_out[0] is None):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has non-empty output "
                               f"(got output = {flat_out})")
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
        for o in flat_out:
            if not o._dtype.is_floating_point:
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                                   f"got Tensor with dtype {o._dtype}")
        connected = connected or _reaches_other_leaves(flat_out, depth)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {_spec_str(cot_spec)}, primal output: "
                               f"{_spec_str(out_spec)}")
        # cotangents with history (grad of a vjp with respect to them) keep the result connected too
        keep = connected or any(isinstance(c, Tensor) and _has_history(c) for c in flat_cot)
        with enable_grad():
            gs = _grads(flat_out, inputs, flat_cot, retain_graph=retain_graph,
                        create_graph=keep if create_graph is None else create_graph)
        return _unwrap(tree_unflatten(gs, spec), keep)

    result = _unwrap(out, connected)
    if has_aux:
        return result, vjp_fn, _unwrap(aux, connected)
    return result, vjp_fn


# --------------------------------------------------------------------------
# vmap, jacrev, hessian
# --------------------------------------------------------------------------
def _vmap():
    """``tensorplug.vmap``: the plugin's function, or the error saying how to enable it."""
    if "vmap" in _NAMESPACE or (_complete_pending() and "vmap" in _NAMESPACE):
        return _NAMESPACE["vmap"]
    raise _missing_name_error("vmap")


def __getattr__(name):
    if name == "vmap":
        return _vmap()
    raise AttributeError(f"module 'tensorplug.func' has no attribute {name!r}")


def _basis_chunks(flat_out, numels, chunk_size):
    """The rows of the identity over all outputs' elements, split per output (each shaped like its
    output after the row dim), ``chunk_size`` rows at a time."""
    total = sum(numels)
    size = total if not chunk_size or chunk_size >= total else chunk_size
    ident = eye(total, dtype=flat_out[0]._dtype, device=flat_out[0]._device)
    for start in range(0, total, size):
        n = min(size, total - start)
        rows = ident.narrow(0, start, n)
        parts, col = [], 0
        for o, k in zip(flat_out, numels):
            parts.append(rows.narrow(1, col, k).to(dtype=o._dtype, device=o._device).reshape((n,) + o._shape))
            col += k
        yield parts


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of ``func`` with respect to argument(s) ``argnums``, by reverse mode.

    One vjp, then vmap of its backward over the rows of the identity (``chunk_size`` rows at a time;
    1: a plain loop). For each output leaf the Jacobian with respect to each input leaf has shape
    ``output.shape + input.shape``; they are arranged in the output's structure, each holding the
    input's structure (a tuple of them for a tuple ``argnums``). With ``has_aux``, returns
    ``(jacobian, aux)``. Needs the tensorplug-vmap plugin (except with ``chunk_size=1``).
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        res = _vjp(func, args, argnums, has_aux)
        output, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(output)
        numels = [o.numel() for o in flat_out]
        flat_primals, primals_spec = tree_flatten(_slice_argnums(args, argnums))
        chunks = []
        for basis in _basis_chunks(flat_out, numels, chunk_size):
            cot = tree_unflatten(basis, out_spec)
            if chunk_size == 1:
                rows = tree_flatten(vjp_fn(tree_unflatten([b[0] for b in basis], out_spec)))[0]
                rows = [r.unsqueeze(0) for r in rows]
            else:
                rows = tree_flatten(_vmap()(vjp_fn)(cot))[0]
            chunks.append(rows)
        if len(chunks) == 1:
            per_input = chunks[0]
        else:
            per_input = [_cat([c[i] for c in chunks], 0) for i in range(len(flat_primals))]
        # per input leaf: (all output elements, *input.shape) -> one block per output leaf
        blocks = []
        for r, p in zip(per_input, flat_primals):
            parts = r.split(numels, 0) if len(numels) > 1 else (r,)
            blocks.append([part.reshape(o._shape + p._shape) for part, o in zip(parts, flat_out)])
        per_output = []
        for j in range(len(flat_out)):
            tree = tree_unflatten([b[j] for b in blocks], primals_spec)
            per_output.append(tree[0] if isinstance(argnums, int) else tree)
        jac = tree_unflatten(per_output, out_spec)
        return (jac, res[2]) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of scalar-valued ``func`` with respect to argument(s) ``argnums``:
    ``jacrev(jacrev(func, argnums), argnums)``, with the structure of PyTorch's ``jacfwd(jacrev(...))``.
    Needs the tensorplug-vmap plugin."""
    return jacrev(jacrev(func, argnums), argnums)


# --------------------------------------------------------------------------
# functional_call
# --------------------------------------------------------------------------
def _untie(module, named):
    """``named`` plus, for each given name of a tied tensor, the other names of that tensor (PyTorch's
    ``tie_weights``); an error when tied names are given different values."""
    everything = dict(module.named_parameters(remove_duplicate=False))
    everything.update(module.named_buffers(remove_duplicate=False))
    names_of = {}
    for name, t in everything.items():
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    given = [n for n in named if n in tied]
    for n in given:
        names = tied[n]
        if len(names & set(given)) > 1 and len({id(named[m]) for m in names if m in named}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             f"Consider using tie_weights=False")
    out = dict(named)
    for n in given:
        for m in tied[n]:
            out[m] = named[n]
    return out


_MISSING = object()


def _swap(module, path, value):
    """Put ``value`` at dotted ``path`` (parameter, buffer or plain attribute); return what was there."""
    prefix, _, name = path.rpartition(".")
    mod = module
    if prefix:
        for part in prefix.split("."):
            try:
                mod = getattr(mod, part)
            except AttributeError as e:
                raise AttributeError(f"{mod._get_name()} has no attribute `{part}`") from e
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of tensorplug.Tensor")
    for table in (mod._parameters, mod._buffers):
        if name in table:
            old = table[name]
            if value is _MISSING:
                del table[name]
            else:
                table[name] = value
            return old
    old = getattr(mod, name, _MISSING)
    if value is not _MISSING:
        setattr(mod, name, value)
    elif old is not _MISSING:
        delattr(mod, name)
    return old


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Call ``module`` with its parameters and buffers replaced by the tensors of
    ``parameter_and_buffer_dicts`` (a dict from dotted names, or a sequence of dicts with distinct
    keys), as PyTorch's ``torch.func.functional_call``; the module is restored afterwards.

    ``args``: a tuple of positional arguments, or one argument; ``kwargs``: keyword arguments.
    ``tie_weights``: a value given for one name of a tied tensor is used for all its names.
    ``strict``: the names must be exactly the module's parameters and buffers.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        named = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                             f"ambiguous")
        named = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    values = _untie(module, named) if tie_weights else named
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(values)), sorted(set(values) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                 "\n\t".join(msgs)))
    originals = {}
    try:
        for name, value in values.items():
            originals[name] = _swap(module, name, value)
        return module(*args, **kwargs)
    finally:
        current = {name: _swap(module, name, old) for name, old in reversed(list(originals.items()))}
        # a module that reassigned one of them (self.count = self.count + 1): the dict sees the new tensor
        named.update({k: current[k] for k in named if k in current and current[k] is not _MISSING})
