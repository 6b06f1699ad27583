"""RMSprop, with PyTorch's centered and momentum variants."""

from __future__ import annotations

from ..ops.factories import zeros_like
from ..tensor import Tensor
from .optimizer import Optimizer, _check_nonneg, _step_tensor

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, with PyTorch's exact update (``eps`` added outside the square root).

    Per parameter with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p                         if weight_decay != 0
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - g_avg**2) + eps, g_avg = lerp(g_avg, g, 1 - alpha)   if centered
        avg = sqrt(v) + eps                              otherwise
        b = momentum * b + g / avg;  p = p - lr * b      if momentum > 0
        p = p - lr * g / avg                             otherwise

    State per parameter: ``step``, ``square_avg``, plus ``momentum_buffer``
    (momentum > 0) and ``grad_avg`` (centered).
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False, *,
                 maximize=False):
        _check_nonneg(lr, "learning rate")
        _check_nonneg(eps, "epsilon value")
        _check_nonneg(momentum, "momentum value")
        _check_nonneg(weight_decay, "weight_decay value")
        _check_nonneg(alpha, "alpha value")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("maximize", False)
            for p in group["params"]:
                p_state = self.state.get(p)
                if p_state and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _step_tensor(p_state["step"])

    def _state_for(self, p, group):
        state = self.state[p]
        if not state:
            state["step"] = _step_tensor()
            state["square_avg"] = zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = zeros_like(p)
        return state

    def step(self, closure=None):
        """Update every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            weight_decay, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
            maximize = group["maximize"]
            for p in self._params_with_grad(group):
                grad = -p.grad if maximize else p.grad
                state = self._state_for(p, group)
                state["step"].add_(1)
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if centered:
                    grad_avg = state["grad_avg"]
                    grad_avg.lerp_(grad, 1 - alpha)
                    avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).addcdiv_(grad, avg)
                    p.add_(buf, alpha=-lr)
                else:
                    p.addcdiv_(grad, avg, value=-lr)
        return loss
