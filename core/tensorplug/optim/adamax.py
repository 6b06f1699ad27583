"""Adamax: Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

from ..ops.factories import zeros_like
from .optimizer import Optimizer, _step_tensor
from ._extra_common import check_betas, check_common

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax, with PyTorch's exact update.

    Per parameter with gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * p             if weight_decay != 0
        m = lerp(m, g, 1 - beta1)
        u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u

    State per parameter: ``step``, ``exp_avg`` (``m``) and ``exp_inf`` (``u``).
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, *, maximize=False):
        check_common(lr, eps, weight_decay)
        check_betas(betas)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)

    def step(self, closure=None):
        """Update every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p in self._params_with_grad(group):
                grad = -p.grad if maximize else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = zeros_like(p)
                    state["exp_inf"] = zeros_like(p)
                exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
                step_t.add_(1)
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_inf.copy_(exp_inf.mul_(beta2).maximum(grad.abs().add_(eps)))
                clr = lr / (1 - beta1 ** step_t.item())
                p.addcdiv_(exp_avg, exp_inf, value=-clr)
        return loss
