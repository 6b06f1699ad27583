"""Helpers for writing backward formulas."""

from __future__ import annotations


def sum_to(grad, shape):
    """Reduce ``grad`` to ``shape`` by summing over the dims broadcasting added or expanded."""
    gshape = grad._shape
    if gshape == tuple(shape):
        return grad
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1)
    out = grad.sum(dims, keepdim=True) if dims else grad
    if lead:
        out = out.view(tuple(shape)) if out._shape != tuple(shape) else out
    return out if out._shape == tuple(shape) else out.reshape(tuple(shape))


def unsqueeze_dims(t, dims, ndim):
    """Re-insert reduced dims (sorted, non-negative) so ``t`` broadcasts against the input of a reduction."""
    for d in sorted(dims):
        t = t.unsqueeze(d)
    return t
