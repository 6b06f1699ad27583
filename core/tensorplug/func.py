"""Functional transforms over the autograd engine: ``grad`` and ``vjp``.

``grad(f)(x)`` is ``d f(x) / dx`` as a function. Inputs that already carry
history (an outer ``grad`` is differentiating through this one) stay
connected through an alias, and the inner gradient is computed with
``create_graph=True``, so ``grad(grad(f))`` gives second derivatives.
Inputs without history are detached fresh leaves, and the result is detached.

``vmap`` comes from the tensorplug-vmap plugin: ``tensorplug.func.vmap`` is
``tensorplug.vmap`` while the plugin is enabled and raises the plugin's
"not enabled" error otherwise. ``jacrev`` and ``hessian`` (vmap over vjp)
live here and look vmap up when called, so they need the plugin only then.
"""

from __future__ import annotations

from .autograd import grad as _autograd_grad
from .autograd.grad_mode import enable_grad
from .ops.factories import eye, zeros_like
from .plugins import NAMESPACE as _NAMESPACE, complete_pending as _complete_pending
from .plugins import missing_name_error as _missing_name_error
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "hessian", "vmap"]


def _prepare(x):
    if not isinstance(x, Tensor):
        raise TypeError(f"expected a Tensor argument to differentiate, got {type(x).__name__}")
    if x._requires_grad:
        # history at its own level (an outer grad, also of a wrapper inside vmap): stay connected
        return x.view_as(x), True
    leaf = getattr(x, "_grad_leaf", None)
    if leaf is not None:
        # a transform's wrapper (grad inside vmap) becomes a leaf at its own level only
        return leaf()
    return x.detach().requires_grad_(True), False


def _nums(argnums, n):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -n <= a < n:
            raise RuntimeError(f"Got argnums={argnums} for a function with {n} positional arguments")
    return tuple(a % n for a in nums)


def grad_and_value(func, argnums=0, has_aux=False):
    """Like :func:`grad`, returning ``(gradient, value)`` (``((gradient, value), aux)`` with ``has_aux``)."""
    def wrapper(*args, **kwargs):
        nums = _nums(argnums, len(args))
        args = list(args)
        connected = False
        diff = []
        with enable_grad():
            for a in nums:
                args[a], c = _prepare(args[a])
                connected |= c
                diff.append(args[a])
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                out, aux = out
            if out.numel() != 1:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                                   f"got tensor with {out.dim()} dims. Maybe you wanted to use the vjp or "
                                   f"jacrev APIs instead?")
            if not out.requires_grad:
                gs = tuple(zeros_like(d) for d in diff)
            else:
                gs = _autograd_grad([out], diff, create_graph=connected, allow_unused=True,
                                    materialize_grads=True)
        if not connected:
            gs = tuple(g.detach() for g in gs)
            out = out.detach()
        g = gs[0] if isinstance(argnums, int) else tuple(gs)
        return ((g, out), aux) if has_aux else (g, out)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued ``func`` with respect to argument(s) ``argnums``, as a function."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        res = gv(*args, **kwargs)
        if has_aux:
            (g, _), aux = res
            return g, aux
        return res[0]
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` where ``vjp_fn(cotangents)`` gives one gradient per primal."""
    args, connected = [], False
    with enable_grad():
        for p in primals:
            a, c = _prepare(p)
            args.append(a)
            connected |= c
        out = func(*args)
    aux = None
    if has_aux:
        out, aux = out
    outs = out if isinstance(out, tuple) else (out,)

    def vjp_fn(*cotangents):
        cots = cotangents[0] if len(cotangents) == 1 and isinstance(cotangents[0], tuple) else cotangents
        if len(cots) != len(outs):
            raise RuntimeError(f"Expected {len(outs)} cotangents, got {len(cots)}")
        with enable_grad():
            gs = _autograd_grad(list(outs), args, list(cots), retain_graph=True, create_graph=connected,
                                allow_unused=True, materialize_grads=True)
        return tuple(gs) if connected else tuple(g.detach() for g in gs)

    result = out if connected else (tuple(o.detach() for o in outs) if isinstance(out, tuple) else out.detach())
    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def _vmap():
    """``tensorplug.vmap``: the plugin's function, or the error saying how to enable it."""
    if "vmap" in _NAMESPACE or (_complete_pending() and "vmap" in _NAMESPACE):
        return _NAMESPACE["vmap"]
    raise _missing_name_error("vmap")


def __getattr__(name):
    if name == "vmap":
        return _vmap()
    raise AttributeError(f"module 'tensorplug.func' has no attribute {name!r}")


def jacrev(func, argnums=0):
    """The Jacobian of ``func`` with respect to argument(s) ``argnums``, by reverse mode.

    One vjp, then vmap of its backward over the rows of the identity: the
    result has shape ``output.shape + input.shape`` (a tuple of those for a
    tuple ``argnums``). Needs the tensorplug-vmap plugin.
    """
    def wrapper(*args):
        vmap = _vmap()
        nums = _nums(argnums, len(args))

        def partial(*diff):
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return func(*full)

        out, vjp_fn = vjp(partial, *(args[i] for i in nums))
        n = out.numel()
        basis = eye(n, dtype=out.dtype, device=out.device).view((n,) + out.shape)
        rows = vmap(vjp_fn)(basis)
        jac = tuple(r.view(out.shape + args[i].shape) for r, i in zip(rows, nums))
        return jac[0] if isinstance(argnums, int) else jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of scalar-valued ``func``: ``jacrev(jacrev(func))``. Needs the tensorplug-vmap plugin."""
    return jacrev(jacrev(func, argnums), argnums)
