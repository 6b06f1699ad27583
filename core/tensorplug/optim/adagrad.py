"""Adagrad: per-coordinate learning rates from the sum of squared gradients."""

from __future__ import annotations

from ..ops.factories import full_like
from .optimizer import Optimizer, _check_nonneg, _step_tensor

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, with PyTorch's exact update.

    Per parameter with gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * p             if weight_decay != 0
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (sqrt(s) + eps)

    The state (``step`` and ``sum``, which starts at ``initial_accumulator_value``)
    is created for every parameter when the optimizer is built, as in PyTorch.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10, *,
                 maximize=False):
        _check_nonneg(lr, "learning rate")
        _check_nonneg(lr_decay, "lr_decay value")
        _check_nonneg(weight_decay, "weight_decay value")
        _check_nonneg(initial_accumulator_value, "initial_accumulator_value value")
        _check_nonneg(eps, "epsilon value")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "maximize": maximize}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor()
                state["sum"] = full_like(p, group["initial_accumulator_value"])

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)

    def step(self, closure=None):
        """Update every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p in self._params_with_grad(group):
                grad = -p.grad if maximize else p.grad
                state = self.state[p]
                step_t, state_sum = state["step"], state["sum"]
                step_t.add_(1)
                step = step_t.item()
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                clr = lr / (1 + (step - 1) * lr_decay)
                state_sum.addcmul_(grad, grad, value=1)
                std = state_sum.sqrt().add_(eps)
                p.addcdiv_(grad, std, value=-clr)
        return loss
