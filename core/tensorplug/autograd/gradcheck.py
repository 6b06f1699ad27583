"""gradcheck / gradgradcheck: analytical gradients against central finite differences.

Complex inputs and outputs are checked as pairs of real numbers (``view_as_real``): a complex
input is perturbed in its real and imaginary parts, a complex output contributes both parts,
so the check also covers the convention that gradients of complex tensors follow.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor

from . import _ops
from .engine import grad as autograd_grad
from .grad_mode import no_grad


class GradcheckError(RuntimeError):
    """Analytical and numerical gradients disagree."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _diff_inputs(inputs):
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _outputs(func, inputs):
    return [_ops.view_as_real(o) if o._dtype.category == _dt.COMPLEX else o for o in _as_tuple(func(*inputs))
            if isinstance(o, Tensor) and o._dtype.category >= _dt.FLOATING]


def _realified(func, inputs):
    """``(func', inputs')`` with each complex input that requires grad replaced by a real leaf holding its
    parts (``func'`` views it as complex again before calling ``func``), or ``(func, inputs)`` without one."""
    spots = [i for i in _diff_inputs(inputs) if inputs[i]._dtype.category == _dt.COMPLEX]
    if not spots:
        return func, inputs
    ins = list(inputs)
    for i in spots:
        with no_grad():
            ins[i] = _ops.view_as_real(inputs[i].detach()).clone()
        ins[i].requires_grad_(True)

    def real_func(*args):
        args = list(args)
        for i in spots:
            args[i] = _ops.view_as_complex(args[i])
        return func(*args)
    return real_func, tuple(ins)


def _numerical(func, inputs, idx, eps):
    """Jacobian blocks d out / d inputs[idx] by central differences, one per output.

    Values are perturbed under no_grad, but ``func`` runs in the caller's grad
    mode: gradgradcheck's function computes gradients itself.
    """
    x = inputs[idx]
    flat = x.detach()
    n = x.numel()
    outs0 = _outputs(func, inputs)
    cols = []
    with no_grad():
        base = flat.clone()
    for j in range(n):
        pos = tuple(int(p) for p in np.unravel_index(j, tuple(x.shape))) if x.dim() else ()
        v = float(base[pos].item()) if x.dim() else float(base.item())
        with no_grad():
            flat[pos] = v + eps
        plus = [o.detach().clone() for o in _outputs(func, inputs)]
        with no_grad():
            flat[pos] = v - eps
        minus = [o.detach().clone() for o in _outputs(func, inputs)]
        with no_grad():
            flat[pos] = v
        cols.append([((p - m) / (2 * eps))._host().astype(np.float64).reshape(-1) for p, m in zip(plus, minus)])
    if not cols:
        return [np.zeros((o.numel(), 0)) for o in outs0]
    return [np.stack([c[k] for c in cols], axis=1) for k in range(len(cols[0]))]


def _analytical(func, inputs, diff_idx):
    outs = _outputs(func, inputs)
    blocks = [[np.zeros((o.numel(), inputs[i].numel())) for i in diff_idx] for o in outs]
    for k, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for r in range(o.numel()):
            go = _ops.zeros(o.shape, o.dtype, o.device)
            pos = tuple(int(p) for p in np.unravel_index(r, tuple(o.shape))) if o.dim() else ()
            if o.dim():
                go[pos] = 1.0
            else:
                go.fill_(1.0)
            grads = autograd_grad([o], [inputs[i] for i in diff_idx], [go], retain_graph=True, allow_unused=True)
            for c, g in enumerate(grads):
                if g is not None:
                    blocks[k][c][r, :] = g._host().astype(np.float64).reshape(-1)
    return blocks


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_ignored):
    """True when ``func``'s gradients match finite differences (inputs should be float64).

    Raises :class:`GradcheckError` (or returns False with ``raise_exception=False``)
    naming the output, the input and the largest mismatch.
    """
    func, inputs = _realified(func, _as_tuple(inputs))
    diff_idx = _diff_inputs(inputs)
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    analytical = _analytical(func, inputs, diff_idx)
    for c, i in enumerate(diff_idx):
        numerical = _numerical(func, inputs, i, eps)
        for k, (num, ana_blocks) in enumerate(zip(numerical, analytical)):
            ana = ana_blocks[c]
            if num.shape != ana.shape or not np.allclose(ana, num, atol=atol, rtol=rtol):
                worst = np.max(np.abs(ana - num)) if num.shape == ana.shape else float("nan")
                msg = (f"Jacobian mismatch for output {k} with respect to input {i},\n"
                       f"numerical:{num}\nanalytical:{ana}\n(max abs difference {worst})")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **_ignored):
    """gradcheck of the first derivatives (computed with ``create_graph=True``): checks second order."""
    inputs = _as_tuple(inputs)
    diff_idx = _diff_inputs(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(_ops.randn(o.shape, o.dtype, o.device).requires_grad_(True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivatives(*args):
        ins, gos = args[:n_in], args[n_in:]
        o = _outputs(func, ins)
        diff = [ins[i] for i in diff_idx]
        gs = autograd_grad(o, diff, list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivatives, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
