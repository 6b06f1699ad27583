"""In-place operations on views: rebasing the base's history (PyTorch's CopySlices).

After ``v = base[0]; v.mul_(2)`` the base's values changed through the view,
so its gradient must flow through the in-place op for that region and pass
through unchanged elsewhere. :class:`CopySlices` becomes the base's grad_fn;
the view's grad_fn becomes an :class:`AsStridedBackward0` of the new base.

The other views of that base, made before the write, must see it too (and
so must every view of a base written in place directly, ``y.mul_(10)``):
a base with history keeps weak references to its views with history
(:func:`register_view`), and an in-place op regenerates their grad_fn as an
``AsStridedBackward0`` of the base's new history, as PyTorch does on access.

Regions are addressed in storage coordinates: gradients are laid out in a
zero buffer shaped like the storage, so any dense base and any view of it
(slices, transposes, selects) are handled by ``as_strided``, a primitive of
every backend.
"""

from __future__ import annotations

import weakref

from ..dispatch.keys import Autograd
from . import _ops
from .graph import Node, gradient_edge

_BIT = Autograd.bit


def _geometry(t):
    return tuple(t._shape), tuple(t.stride()), t.storage_offset()


def _span(geom):
    shape, stride, offset = geom
    if any(n == 0 for n in shape):
        return offset
    return offset + sum((n - 1) * s for n, s in zip(shape, stride)) + 1


def _buffer(grad, *geoms):
    """Zeros covering every region of ``geoms``, of ``grad``'s kind: under a transform whose gradients
    are a tensor subclass (vmap's batched tensors, ``jacrev`` of a function that writes through a view)
    one buffer per example, so writing ``grad`` into a region stays per example."""
    buf = _ops.zeros((max(_span(g) for g in geoms),), grad._dtype, grad._device)
    hook = getattr(grad.__class__, "_batched_like", None)
    return buf if hook is None else hook(grad, buf)


def _region(buf, geom):
    shape, stride, offset = geom
    return buf.as_strided(shape, stride, offset)


class CopySlices(Node):
    """The base's grad_fn after an in-place op wrote through one of its views."""

    def __init__(self, base_edge, base_meta, base_geom, view_geom, fn):
        super().__init__((base_edge,) + fn.next_functions[1:], (base_meta,) + fn._meta[1:])
        self.base_geom, self.view_geom, self.fn = base_geom, view_geom, fn

    def apply(self, grads):
        (grad,) = grads
        buf = _buffer(grad, self.base_geom, self.view_geom)
        _region(buf, self.base_geom).copy_(grad)
        region = _region(buf, self.view_geom)
        res = self.fn.apply((region.clone(),))
        if res[0] is not None:
            region.copy_(res[0])
        else:
            region.fill_(0)
        return (_region(buf, self.base_geom).clone(),) + tuple(res[1:])

    def release(self):
        rel = getattr(self.fn, "release", None)
        if rel is not None:
            rel()


class AsStridedBackward0(Node):
    """Gradient of a view with respect to its base: scatter into a zero base."""

    def __init__(self, base_edge, base_meta, base_geom, view_geom):
        super().__init__((base_edge,), (base_meta,))
        self.base_geom, self.view_geom = base_geom, view_geom

    def apply(self, grads):
        (grad,) = grads
        buf = _buffer(grad, self.base_geom, self.view_geom)
        _region(buf, self.view_geom).copy_(grad)
        return (_region(buf, self.base_geom).clone(),)


def check_inplace_write(t):
    """Raise PyTorch's error when an in-place op writes ``t``, a leaf that requires grad or a view of one."""
    if t._requires_grad and t._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if t._base is not None:
        check_view_inplace(t)


def check_view_inplace(t):
    base = t._base
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def register_view(view):
    """Remember ``view`` (a view op's output that just got history) on its base, if the base has history
    that an in-place op could change (a leaf's cannot: in-place on a leaf that requires grad raises)."""
    base = view._base
    if base is None or base._grad_fn is None:
        return
    d = base.__dict__
    refs = d.get("_views")
    if refs is None:
        refs = d["_views"] = []
    elif len(refs) >= 32 and not len(refs) & 31:  # every 32 views, forget the dead ones
        refs[:] = [r for r in refs if r() is not None]
    refs.append(weakref.ref(view))


def regenerate_views(base, written=None):
    """After an in-place op gave ``base`` new history: every live registered view of it (but ``written``,
    which got its own) gets an ``AsStridedBackward0`` of that history, so its gradient sees the write."""
    refs = base.__dict__.get("_views")
    if not refs:
        return
    base_geom = _geometry(base)
    base_meta = (base._shape, base._dtype, base._device)
    edge = gradient_edge(base)
    live = []
    for r in refs:
        v = r()
        if v is None:
            continue
        live.append(r)
        if v is not written and v._requires_grad:
            v._grad_fn = AsStridedBackward0(edge, base_meta, base_geom, _geometry(v))
            v._output_nr = 0
    refs[:] = live


def rebase_history(view, fn):
    """Make the base of ``view`` depend on the in-place node ``fn`` that just wrote ``view``."""
    base = view._base
    base_geom, view_geom = _geometry(base), _geometry(view)
    base_meta = (base._shape, base._dtype, base._device)
    base_edge = gradient_edge(base) if base._requires_grad else (None, 0)
    cs = CopySlices(base_edge, base_meta, base_geom, view_geom, fn)
    base._grad_fn = cs
    base._output_nr = 0
    base._requires_grad = True
    base._ks |= _BIT
    view._grad_fn = AsStridedBackward0((cs, 0), base_meta, base_geom, view_geom)
    view._output_nr = 0
    regenerate_views(base, view)
