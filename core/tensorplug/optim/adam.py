"""Adam (with optional L2 or decoupled weight decay, AMSGrad) and AdamW."""

from __future__ import annotations

from .. import dtypes as _dt
from ..ops import optim_ops as _ops
from ..ops.factories import zeros_like
from ..tensor import Tensor
from .optimizer import Optimizer, _check_nonneg, _check_implementation_flags, _step_tensor

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, with PyTorch's exact update (bias corrections computed in Python floats from the step counters).

    Per parameter with gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)      if decoupled_weight_decay (AdamW)
        g = g + weight_decay * p             otherwise, if weight_decay != 0 (L2 penalty)
        m = lerp(m, g, 1 - beta1)
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                if amsgrad (and used in place of v below)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    State per parameter: ``step`` (a 0-dim float tensor), ``exp_avg``,
    ``exp_avg_sq`` and, with ``amsgrad``, ``max_exp_avg_sq``.

    Each step updates a group's parameters of a device in one multi-tensor op,
    ``_fused_adam_`` / ``_fused_adamw_`` (see :mod:`tensorplug.ops.optim_ops`):
    float32 and float64 parameters always, float16 and bfloat16 ones with
    ``fused=True`` (which computes their update in float32 and rounds once, as
    PyTorch's fused kernels do; otherwise they take the one-op-at-a-time loop,
    PyTorch's default on the CPU). ``foreach`` and ``capturable`` are accepted
    for PyTorch's signature and change nothing here; ``differentiable=True``
    (a step autograd records) is not supported.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_nonneg(lr, "learning rate")
        _check_nonneg(eps, "epsilon value")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        _check_nonneg(weight_decay, "weight_decay value")
        _check_implementation_flags(fused, foreach, differentiable)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "foreach": foreach, "maximize": maximize, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("amsgrad", False), ("maximize", False), ("decoupled_weight_decay", False),
                         ("foreach", None), ("capturable", False), ("differentiable", False), ("fused", None)):
                group.setdefault(k, v)
            for p in group["params"]:
                p_state = self.state.get(p)
                if p_state and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _step_tensor(p_state["step"])

    def _state_for(self, p, amsgrad):
        state = self.state[p]
        if not state:
            state["step"] = _step_tensor()
            state["exp_avg"] = zeros_like(p)
            state["exp_avg_sq"] = zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = zeros_like(p)
        return state

    def step(self, closure=None):
        """Update every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            amsgrad, fused = group["amsgrad"], group["fused"]
            decoupled = group["decoupled_weight_decay"]
            # (device, one op call or the loop) -> the update's lists
            batches = {}
            for p in self._params_with_grad(group):
                state = self._state_for(p, amsgrad)
                one_call = fused or p._dtype in _FUSED_BY_DEFAULT
                lists = batches.setdefault((p._device, one_call), ([], [], [], [], [], []))
                for lst, t in zip(lists, (p, p.grad, state["exp_avg"], state["exp_avg_sq"],
                                          state.get("max_exp_avg_sq"), state["step"])):
                    if t is not None:
                        lst.append(t)
            kw = {"lr": group["lr"], "beta1": group["betas"][0], "beta2": group["betas"][1],
                  "eps": group["eps"], "weight_decay": group["weight_decay"], "amsgrad": amsgrad,
                  "maximize": group["maximize"]}
            for (_, one_call), (ps, grads, exp_avgs, exp_avg_sqs, max_sqs, step_ts) in batches.items():
                for s in step_ts:
                    s.add_(1)
                update = (_ops.fused_adamw_ if decoupled else _ops.fused_adam_) if one_call else _LOOP[decoupled]
                update(ps, grads, exp_avgs, exp_avg_sqs, max_sqs, step_ts, **kw)
        return loss


# the dtypes whose one-call update is the loop's, bit for bit (half precision differs: see Adam)
_FUSED_BY_DEFAULT = (_dt.float32, _dt.float64)
_LOOP = {False: _ops.adam_loop, True: _ops.adamw_loop}


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` each step.

    The same as ``Adam(..., decoupled_weight_decay=True)``, with PyTorch's
    default ``weight_decay=1e-2``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
