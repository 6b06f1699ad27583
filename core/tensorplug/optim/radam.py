"""RAdam: Adam with a rectified adaptive learning rate (plain momentum SGD while the variance is unreliable)."""

from __future__ import annotations

from ..ops.factories import zeros_like
from .optimizer import Optimizer, _step_tensor
from ._extra_common import check_betas, check_common

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam, with PyTorch's exact update.

    Per parameter with gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)      if decoupled_weight_decay
        g = g + weight_decay * p             otherwise, if weight_decay != 0
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        p = p - lr * m / (1 - beta1**t) * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t    if rho_t > 5
        p = p - lr * m / (1 - beta1**t)                                                   otherwise

    with the rectification ``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, maximize=False):
        check_common(lr, eps, weight_decay)
        check_betas(betas)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)
            group.setdefault("decoupled_weight_decay", False)

    def step(self, closure=None):
        """Update every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, decoupled, maximize = group["weight_decay"], group["decoupled_weight_decay"], \
                group["maximize"]
            for p in self._params_with_grad(group):
                grad = -p.grad if maximize else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                step_t, exp_avg, exp_avg_sq = state["step"], state["exp_avg"], state["exp_avg_sq"]
                step_t.add_(1)
                step = step_t.item()
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                corrected = exp_avg / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = (((rho_t - 4) * (rho_t - 2) * rho_inf) / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
                    p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
                else:
                    p.add_(corrected * lr, alpha=-1.0)
        return loss
