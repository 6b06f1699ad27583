"""Adadelta: step sizes from running averages of squared gradients and squared updates."""

from __future__ import annotations

from ..ops.factories import zeros_like
from .optimizer import Optimizer, _step_tensor
from ._extra_common import check_common

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, with PyTorch's exact update.

    Per parameter with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p             if weight_decay != 0
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

    State per parameter: ``step``, ``square_avg`` (``v``) and ``acc_delta`` (``u``).
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, *, maximize=False):
        check_common(lr, eps, weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)

    def step(self, closure=None):
        """Update every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p in self._params_with_grad(group):
                grad = -p.grad if maximize else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = _step_tensor()
                    state["square_avg"] = zeros_like(p)
                    state["acc_delta"] = zeros_like(p)
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                state["step"].add_(1)
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_()
                delta.div_(std).mul_(grad)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                p.add_(delta, alpha=-lr)
        return loss
