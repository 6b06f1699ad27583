"""Stochastic gradient descent, with PyTorch's momentum, dampening and Nesterov update."""

from __future__ import annotations

from .. import dtypes as _dt
from ..ops import optim_ops as _ops
from ..ops.factories import empty_like
from .optimizer import Optimizer, _check_nonneg, _check_implementation_flags

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), with PyTorch's exact update.

    Per parameter with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p                          if weight_decay != 0
        b = g                                             on the first step (no dampening)
        b = momentum * b + (1 - dampening) * g            afterwards
        g = g + momentum * b if nesterov else b           if momentum != 0
        p = p - lr * g

    The momentum buffer lives in ``state[p]["momentum_buffer"]``.

    Each step updates a group's parameters of a device in one multi-tensor op, ``_fused_sgd_``
    (:mod:`tensorplug.ops.optim_ops`; a backend's kernel runs the whole update, the op's composite
    runs the steps above one parameter at a time): float32 and float64 parameters always, float16 and
    bfloat16 ones with ``fused=True`` (their update in float32, rounded once, as PyTorch's fused
    kernel does; otherwise the loop). ``foreach`` is accepted for PyTorch's signature and changes
    nothing here; ``differentiable=True`` is not supported.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_nonneg(lr, "learning rate")
        _check_nonneg(momentum, "momentum value")
        _check_nonneg(weight_decay, "weight_decay value")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_implementation_flags(fused, foreach, differentiable)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("nesterov", False), ("maximize", False), ("foreach", None), ("differentiable", False),
                         ("fused", None)):
                group.setdefault(k, v)

    def step(self, closure=None):
        """Update every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            momentum, fused = group["momentum"], group["fused"]
            # (device, one op call or the loop, first step of the buffers) -> (params, grads, buffers)
            batches = {}
            for p in self._params_with_grad(group):
                buf, first = None, False
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = empty_like(p)  # the step writes the gradient in
                        first = True
                one_call = bool(fused) or p._dtype in _FUSED_BY_DEFAULT
                lists = batches.setdefault((p._device, one_call, first), ([], [], []))
                lists[0].append(p)
                lists[1].append(p.grad)
                if buf is not None:
                    lists[2].append(buf)
            kw = {"weight_decay": group["weight_decay"], "momentum": momentum, "lr": group["lr"],
                  "dampening": group["dampening"], "nesterov": group["nesterov"], "maximize": group["maximize"]}
            for (_, one_call, first), (ps, grads, bufs) in batches.items():
                (_ops.fused_sgd_ if one_call else _ops.sgd_loop)(ps, grads, bufs, is_first_step=first, **kw)
        return loss


# the dtypes whose one-call update is the loop's, bit for bit (half precision differs: see SGD)
_FUSED_BY_DEFAULT = (_dt.float32, _dt.float64)
