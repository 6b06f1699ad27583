"""The :class:`Optimizer` base class: parameter groups, per-parameter state, state dicts.

The layout follows ``torch.optim.Optimizer`` so code and checkpoints move
between the two: ``param_groups`` is a list of dicts (``"params"`` plus one
entry per option), ``state`` maps each parameter to a dict of tensors, and
:meth:`Optimizer.state_dict` replaces parameters by their position (an int
counted across groups in order).

Every subclass's ``step`` runs under :class:`~tensorplug.no_grad` (updates are
not recorded by autograd) and marks the optimizer as stepped, which the
learning rate schedulers read to warn about calling them in the wrong order.
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections import defaultdict
from copy import deepcopy
from itertools import chain

from ..autograd import no_grad, enable_grad
from .. import dtypes as _dt
from ..ops.factories import tensor
from ..tensor import Tensor

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Default of an option that every parameter group must set (``lr=required``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    if isinstance(obj, Tensor):
        return "tensorplug.Tensor"
    return type(obj).__qualname__


_GLOBAL_STEP_PRE_HOOKS: dict = {}
_GLOBAL_STEP_POST_HOOKS: dict = {}
_HOOK_IDS = itertools.count()


class _GlobalHookHandle:
    """What :func:`register_optimizer_step_pre_hook` returns: ``remove()`` unregisters the hook."""

    def __init__(self, hooks, hook):
        self._hooks = hooks
        self.id = next(_HOOK_IDS)
        hooks[self.id] = hook

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_optimizer_step_pre_hook(hook):
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``, as PyTorch's function of
    this name: a non-None result must be ``(new_args, new_kwargs)``. Returns a handle with ``remove()``."""
    return _GlobalHookHandle(_GLOBAL_STEP_PRE_HOOKS, hook)


def register_optimizer_step_post_hook(hook):
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``. Returns a handle with ``remove()``."""
    return _GlobalHookHandle(_GLOBAL_STEP_POST_HOOKS, hook)


def _wrap_step(step):
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        self._opt_called = True
        if _GLOBAL_STEP_PRE_HOOKS:
            for hook in tuple(_GLOBAL_STEP_PRE_HOOKS.values()):
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
                    args, kwargs = result
        with no_grad():
            out = step(self, *args, **kwargs)
        if _GLOBAL_STEP_POST_HOOKS:
            for hook in tuple(_GLOBAL_STEP_POST_HOOKS.values()):
                hook(self, args, kwargs)
        return out
    wrapper._tp_wrapped = True
    return wrapper


class Optimizer:
    """Base class of all optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of
    dicts that each define a parameter group (``{"params": [...], "lr": 0.1}``);
    options missing from a group take their value from ``defaults``.
    Subclasses implement :meth:`step`, which updates the parameters in place.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_tp_wrapped", False):
            cls.step = _wrap_step(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group):
        """Append a parameter group (a dict with ``"params"`` and optional per-group options).

        Useful when fine tuning: layers unfrozen later can join the optimizer
        with their own learning rate.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        tensors = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names

        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(p)}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        if len(tensors) != len(set(tensors)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        existing = set()
        for group in self.param_groups:
            existing.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not existing.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters: to ``None`` (default) or, with ``set_to_none=False``, to zeros.

        With ``None`` gradients, a following :meth:`step` skips those
        parameters entirely; with zeros it still applies momentum and decay.
        """
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        """Perform one update of every parameter that has a gradient.

        ``closure`` (optional) re-evaluates the model and returns the loss; it
        runs with gradients enabled and its result is returned.
        """
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- state dicts ----------------------------------------------------------------------
    def state_dict(self):
        """The optimizer's state as ``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``.

        Parameters are replaced by their position across all groups, in
        order, as in PyTorch. The state tensors are the optimizer's own (not
        copies): save or clone the result before stepping again if you need a
        snapshot.
        """
        mapping = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore a state from :meth:`state_dict` (hyperparameters and per-parameter state).

        Groups are matched by position and must hold as many parameters as
        this optimizer's. State tensors are copied, cast to their parameter's
        dtype (floating point parameters) and device; ``"step"`` keeps its
        dtype. Unlike PyTorch, which reuses tensors that need no cast, the
        copy means two optimizers loaded from one state dict share nothing.
        """
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                if key == "step":
                    return value.clone()
                if param.is_floating_point():
                    return value.to(dtype=param.dtype, device=param.device, copy=True)
                return value.to(device=param.device, copy=True)
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state,
                           "param_groups": [update_group(g, s) for g, s in zip(groups, saved_groups)]})

    # -- helpers for subclasses ------------------------------------------------------------
    @staticmethod
    def _params_with_grad(group):
        return [p for p in group["params"] if p.grad is not None]


def _step_tensor(value=0.0):
    """A step counter as PyTorch keeps it: a 0-dim CPU tensor (float64 under a float64 default dtype)."""
    dtype = _dt.float64 if _dt.get_default_dtype() is _dt.float64 else _dt.float32
    return tensor(float(value), dtype=dtype)


def _check_nonneg(value, what):
    if not 0.0 <= value:
        raise ValueError(f"Invalid {what}: {value}")


def _check_implementation_flags(fused, foreach, differentiable):
    """PyTorch's refusals for ``fused`` / ``foreach`` / ``differentiable`` (a recorded step is not supported)."""
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if differentiable:
        if fused:
            raise RuntimeError("`fused` does not support `differentiable`")
        raise NotImplementedError("tensorplug's optimizers do not support differentiable=True (a step "
                                  "recorded by autograd)")
