"""Functional transforms over the autograd engine: ``grad`` and ``vjp``.

``grad(f)(x)`` is ``d f(x) / dx`` as a function. Inputs that already carry
history (an outer ``grad`` is differentiating through this one) stay
connected through an alias, and the inner gradient is computed with
``create_graph=True``, so ``grad(grad(f))`` gives second derivatives.
Inputs without history are detached fresh leaves, and the result is detached.
Transform plugins (vmap) add ``tensorplug.func.vmap`` etc. through their
namespace hook.
"""

from __future__ import annotations

from .autograd import grad as _autograd_grad
from .autograd.grad_mode import enable_grad

__all__ = ["grad", "grad_and_value", "vjp"]


def _prepare(x):
    from .tensor import Tensor
    if not isinstance(x, Tensor):
        raise TypeError(f"expected a Tensor argument to differentiate, got {type(x).__name__}")
    if x.requires_grad:
        return x.view_as(x), True
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
                from .ops.factories import zeros_like
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
