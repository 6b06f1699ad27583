"""NAdam: Adam with Nesterov momentum and a momentum schedule."""

from __future__ import annotations

from ..ops.factories import zeros_like
from .optimizer import Optimizer, _check_nonneg, _step_tensor
from ._extra_common import check_betas, check_common

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, with PyTorch's exact update.

    Per parameter with gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)      if decoupled_weight_decay
        g = g + weight_decay * p             otherwise, if weight_decay != 0
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        prod = prod * mu_t                   (state "mu_product", a 0-dim tensor)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        d = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - prod) * g / d - lr * mu_{t+1} / (1 - prod * mu_{t+1}) * m / d
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, maximize=False):
        check_common(lr, eps, weight_decay)
        check_betas(betas)
        _check_nonneg(momentum_decay, "momentum_decay value")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize}
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
            weight_decay, momentum_decay = group["weight_decay"], group["momentum_decay"]
            decoupled, maximize = group["decoupled_weight_decay"], group["maximize"]
            for p in self._params_with_grad(group):
                grad = -p.grad if maximize else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = _step_tensor()
                    state["mu_product"] = _step_tensor(1.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                step_t, mu_product = state["step"], state["mu_product"]
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                step_t.add_(1)
                step = step_t.item()
                bias_correction2 = 1 - beta2 ** step
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mu_product.mul_(mu)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.div(bias_correction2).sqrt()
                prod = mu_product.item()
                mu_product_next = prod * mu_next
                denom.add_(eps)
                p.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - prod)))
                p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
        return loss
