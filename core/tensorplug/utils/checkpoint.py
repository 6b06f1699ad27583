"""``checkpoint``: trade compute for memory by recomputing a function's forward pass during backward.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` without recording
a graph (so its intermediate activations are freed), and records one node
whose backward reruns ``fn`` with gradients enabled (restoring the random
number state first, so dropout draws the same mask) and backpropagates
through that recomputation. Gradients reach ``args`` and every leaf tensor
``fn`` uses (module parameters included). See docs/training.md.
"""

from __future__ import annotations

import warnings

from ..autograd import enable_grad, no_grad, is_grad_enabled
from ..autograd.engine import backward as _backward
from ..autograd.function import Function
from ..ops import random as _random
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run, preserve_rng_state, n_tensors, *tensors):
        ctx.run = run
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.rng_state = _random.get_rng_state()
        ctx.save_for_backward(*tensors)
        with no_grad():
            out = run(*tensors)
        ctx.single = not isinstance(out, tuple)
        return out

    @staticmethod
    def backward(ctx, *grads):
        inputs = ctx.saved_tensors
        detached = []
        for t in inputs:
            d = t.detach()
            d.requires_grad_(t.requires_grad)
            detached.append(d)
        if ctx.preserve_rng_state:
            saved = _random.get_rng_state()
            _random.set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                outs = ctx.run(*detached)
        finally:
            if ctx.preserve_rng_state:
                _random.set_rng_state(saved)
        outs = (outs,) if ctx.single else outs
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return tuple(d.grad if d.requires_grad else None for d in detached)  # one per tensor argument


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, with its activations recomputed in backward instead of kept.

    ``use_reentrant`` should be given (PyTorch warns when it is not); both
    values run the same recomputation here. Tensors among ``args`` get
    gradients; non-tensor arguments and ``kwargs`` are passed through.
    ``preserve_rng_state`` (default True) replays the random number state so
    random ops draw the same values in the recomputation. As with PyTorch's
    reentrant variant, the gradients of tensors that ``function`` reaches
    other than through ``args`` are accumulated into their ``.grad`` (so use
    ``backward()``, not ``tensorplug.autograd.grad``, for those).
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
                      "use_reentrant=False is recommended.", stacklevel=2)
        use_reentrant = True
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if determinism_check != "default" and determinism_check != "none":
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    tensors = [args[i] for i in positions]

    def run(*ts):
        full = list(args)
        for i, t in zip(positions, ts):
            full[i] = t
        return function(*full, **kwargs)

    if not is_grad_enabled():
        return run(*tensors)
    return _Checkpoint.apply(run, preserve_rng_state, len(tensors), *tensors)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequence of modules (or a ``Sequential``) in ``segments`` checkpointed chunks."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
                      "passed explicitly. use_reentrant=False is recommended.", stacklevel=2)
        use_reentrant = True
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    segment_size = len(functions) // segments
    end = -1

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant, **kwargs)
    return run_function(end + 1, len(functions) - 1, functions)(input)
