"""Optimizer updates as dispatcher ops: ``_fused_adam_``, ``_fused_adamw_`` and ``_fused_sgd_``.

One call updates every parameter of a group (PyTorch's multi-tensor ``fused``
kernels): a backend that registers a kernel for them runs the whole update
without a dispatcher round trip per elementwise step, which for a model of
small layers is most of an optimizer step's cost. Backends without a kernel
get the CompositeImplicitAutograd loop below, the same ops ``Adam.step``
runs one parameter at a time, so every backend gets the same result.

The update (PyTorch's ``Adam`` with ``decoupled_weight_decay`` for the
``w`` variant), per parameter ``p`` with gradient ``g`` at step ``t``::

    g = -g                                if maximize
    p = p * (1 - lr * weight_decay)       _fused_adamw_
    g = g + weight_decay * p              _fused_adam_, if weight_decay != 0
    m = lerp(m, g, 1 - beta1)
    v = beta2 * v + (1 - beta2) * g * g
    v_max = max(v_max, v)                 if amsgrad (and used in place of v below)
    p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

``state_steps`` are the step counters ``t`` (already incremented): 0-dim CPU
tensors as PyTorch keeps them, whatever the parameters' device, read by the
kernel (so a captured step reads the current count). ``max_exp_avg_sqs`` is empty unless ``amsgrad``.
"""

from __future__ import annotations

from ._lib import defop

_ARGS = ("Tensor(a!)[] self, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, "
         "Tensor(d!)[] max_exp_avg_sqs, Tensor[] state_steps, *, float lr, float beta1, float beta2, "
         "float weight_decay, float eps, bool amsgrad, bool maximize")


def _check(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, weight_decay, eps,
           amsgrad, maximize):
    lists = [("grads", grads), ("exp_avgs", exp_avgs), ("exp_avg_sqs", exp_avg_sqs), ("state_steps", state_steps)]
    if amsgrad:
        lists.append(("max_exp_avg_sqs", max_exp_avg_sqs))
    _check_lists("_fused_adam_", self, lists, lists[:3] + lists[4:])  # steps are 0-dim counters


def _check_lists(op, params, lists, tensor_lists):
    """A multi-tensor update's per-parameter lists: each of ``lists`` (``(name, list)``) has one entry per
    parameter, each tensor of ``tensor_lists`` the parameter's shape and dtype, and the parameters are
    floating point."""
    n = len(params)
    for name, lst in lists:
        if len(lst) != n:
            raise RuntimeError(f"{op}: {name} has {len(lst)} entries for {n} parameters")
    for i, p in enumerate(params):
        shape = p._shape
        for name, lst in tensor_lists:
            t = lst[i]
            if t._shape != shape:
                raise RuntimeError(f"{op}: {name}[{i}] has shape {list(t._shape)}, the parameter {list(shape)}")
            if t._dtype is not p._dtype:
                raise RuntimeError(f"{op}: {name}[{i}] is {t._dtype.name}, the parameter {p._dtype.name}")
        if not p._dtype.is_floating_point:
            raise RuntimeError(f"{op}: parameter {i} is {p._dtype.name}: a floating point dtype is needed")

def _update(decoupled):
    def update(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, beta2, weight_decay, eps,
               amsgrad, maximize):
        for i, (p, grad, exp_avg, exp_avg_sq) in enumerate(zip(self, grads, exp_avgs, exp_avg_sqs)):
            if maximize:
                grad = -grad
            if weight_decay != 0:
                if decoupled:
                    p.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(p, alpha=weight_decay)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step = steps[i].item()
            step_size = lr / (1 - beta1 ** step)
            bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
            if amsgrad:
                max_sq = max_exp_avg_sqs[i]
                max_sq.copy_(max_sq.maximum(exp_avg_sq))
                denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            p.addcdiv_(exp_avg, denom, value=-step_size)
    return update


adam_loop, adamw_loop = _update(False), _update(True)
fused_adam_ = defop(f"_fused_adam_({_ARGS}) -> ()", check=_check, composite=adam_loop)
fused_adamw_ = defop(f"_fused_adamw_({_ARGS}) -> ()", check=_check, composite=adamw_loop)


# -- SGD ------------------------------------------------------------------------------------------
_SGD_ARGS = ("Tensor(a!)[] self, Tensor[] grads, Tensor(b!)[] momentum_buffer_list, *, float weight_decay, "
             "float momentum, float lr, float dampening, bool nesterov, bool maximize, bool is_first_step")


def _check_sgd(self, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening, nesterov, maximize,
               is_first_step):
    lists = [("grads", grads)] + ([("momentum_buffer_list", momentum_buffer_list)] if momentum != 0 else [])
    _check_lists("_fused_sgd_", self, lists, lists)

def sgd_loop(self, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening, nesterov, maximize,
             is_first_step):
    """``_fused_sgd_``'s composite: PyTorch's SGD update one parameter at a time."""
    for i, (p, grad) in enumerate(zip(self, grads)):
        if maximize:
            grad = -grad
        if weight_decay != 0:
            grad = grad.add(p, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if is_first_step:
                buf.copy_(grad)
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        p.add_(grad, alpha=-lr)


fused_sgd_ = defop(f"_fused_sgd_({_SGD_ARGS}) -> ()", check=_check_sgd, composite=sgd_loop)
