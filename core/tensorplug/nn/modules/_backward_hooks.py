"""Full backward hooks of modules: ``hook(module, grad_input, grad_output)``, as PyTorch's.

Registering one installs a forward pre-hook and a forward hook on the
module. They pass the tensor arguments and the outputs that require grad
through identity autograd Functions: the output one's backward sees
``grad_output`` (and runs the backward pre-hooks, which may replace it), the
input one's sees ``grad_input`` and runs the full backward hooks, which may
replace it.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict

from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from ...tensor import Tensor

__all__ = ["register_full_backward_hook", "register_full_backward_pre_hook"]


class _State:
    def __init__(self, module, n_args, in_positions):
        self.module = module
        self.n_args = n_args
        self.in_positions = in_positions
        self.n_outputs = 0
        self.out_positions = []
        self.grad_output = None

    def _hooks(self, name):
        return tuple(self.module.__dict__.get(name, {}).values())

    def on_grad_output(self, grads):
        full = [None] * self.n_outputs
        for i, g in zip(self.out_positions, grads):
            full[i] = g
        grad_output = tuple(full)
        for hook in self._hooks("_backward_pre_hooks"):
            result = hook(self.module, grad_output)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grad_output):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                       f"{len(result)}, but expected {len(grad_output)}")
                grad_output = result
        self.grad_output = grad_output
        if not self.in_positions and self._hooks("_backward_hooks"):
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                          "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=5)
            self._run_full_hooks((None,) * self.n_args)
        return tuple(grad_output[i] for i in self.out_positions)

    def _run_full_hooks(self, grad_input):
        for hook in self._hooks("_backward_hooks"):
            result = hook(self.module, grad_input, self.grad_output)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(result)}, "
                                       f"but expected {len(grad_input)}")
                grad_input = result
        return grad_input

    def on_grad_input(self, grads):
        full = [None] * self.n_args
        for i, g in zip(self.in_positions, grads):
            full[i] = g
        grad_input = self._run_full_hooks(tuple(full))
        return tuple(grad_input[i] for i in self.in_positions)


class _InputIdentity(Function):
    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return ctx.state.on_grad_input(grads)


class _OutputIdentity(Function):
    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return ctx.state.on_grad_output(grads)


def _differentiable(x):
    return isinstance(x, Tensor) and x.requires_grad and x.dtype.is_floating_point


def _pre_hook(module, args):
    d = module.__dict__
    if not (d.get("_backward_hooks") or d.get("_backward_pre_hooks")) or not is_grad_enabled():
        return None
    positions = [i for i, a in enumerate(args) if _differentiable(a)]
    state = _State(module, len(args), positions)
    d.setdefault("_backward_hook_states", []).append(state)
    if not positions:
        return None
    wrapped = _InputIdentity.apply(state, *[args[i] for i in positions])
    args = list(args)
    for i, w in zip(positions, wrapped):
        args[i] = w
    return tuple(args)


def _post_hook(module, args, output):
    states = module.__dict__.get("_backward_hook_states")
    if not states:
        return None
    state = states.pop()
    single = not isinstance(output, tuple)
    outs = (output,) if single else output
    positions = [i for i, o in enumerate(outs) if _differentiable(o)]
    if not positions:
        return None
    state.n_outputs = len(outs)
    state.out_positions = positions
    wrapped = _OutputIdentity.apply(state, *[outs[i] for i in positions])
    outs = list(outs)
    for i, w in zip(positions, wrapped):
        outs[i] = w
    return outs[0] if single else type(output)(outs)


def _install(module):
    d = module.__dict__
    if d.get("_backward_hooks_installed"):
        return
    d["_backward_hooks_installed"] = True
    module.register_forward_pre_hook(_pre_hook)
    module.register_forward_hook(_post_hook)


def _register(module, name, hook, prepend, handle_cls):
    _install(module)
    hooks = module.__dict__.setdefault(name, OrderedDict())
    handle = handle_cls(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_full_backward_hook(module, hook, prepend, handle_cls):
    return _register(module, "_backward_hooks", hook, prepend, handle_cls)


def register_full_backward_pre_hook(module, hook, prepend, handle_cls):
    return _register(module, "_backward_pre_hooks", hook, prepend, handle_cls)
