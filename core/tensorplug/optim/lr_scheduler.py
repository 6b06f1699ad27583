"""Learning rate schedulers: the :class:`LRScheduler` base, ``StepLR``, ``ExponentialLR``,
``CosineAnnealingLR``, ``LambdaLR``, ``MultiStepLR``, ``ConstantLR``, ``LinearLR``, ``PolynomialLR``,
``CosineAnnealingWarmRestarts``, ``OneCycleLR``, ``SequentialLR``, ``ChainedScheduler`` and
``ReduceLROnPlateau``.

They follow PyTorch's chainable (recursive) formulas, so the learning rates
they produce are the same floats as torch's, step for step. Call
``scheduler.step()`` once per epoch, after ``optimizer.step()``.
"""

from __future__ import annotations

import bisect
import collections
import math
import types
import warnings

from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR", "MultiStepLR", "ConstantLR",
           "LinearLR", "PolynomialLR", "CosineAnnealingWarmRestarts", "OneCycleLR", "SequentialLR",
           "ChainedScheduler", "ReduceLROnPlateau"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from "
    "None, the closed form is used instead of the new chainable form, where available.")


class LRScheduler:
    """Base class of the schedulers: subclasses implement :meth:`get_lr` (and optionally a closed form).

    Creating a scheduler records each group's ``initial_lr`` and takes the
    first step (epoch 0). ``last_epoch`` other than -1 resumes a schedule and
    needs ``initial_lr`` in every group (from a loaded optimizer state).
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                                   "scheduler with last_epoch >= 0.")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        """Every attribute except the optimizer, as a dict (plain values and lists)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore attributes saved by :meth:`state_dict`."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates (one per parameter group) set by the latest :meth:`step`."""
        return self._last_lr

    def get_lr(self):
        """The learning rates for the current ``last_epoch`` (called by :meth:`step`; use :meth:`get_last_lr`)."""
        raise NotImplementedError

    def _warn_outside_step(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=3)

    def step(self, epoch=None):
        """Advance one epoch and write the new learning rates into the optimizer's groups.

        Passing ``epoch`` (deprecated, as in PyTorch) jumps to that epoch
        using the closed form where the scheduler has one.
        """
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, "
                "you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  "
                "Failure to do this will result in PyTorch skipping the first value of the learning rate "
                "schedule. See more details at https://pytorch.org/docs/stable/optim.html"
                "#how-to-adjust-learning-rate", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _current_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]


class StepLR(LRScheduler):
    """Multiply each group's learning rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current epoch (scaled by ``gamma`` at multiples of ``step_size``)."""
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply each group's learning rate by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current epoch (the previous ones times ``gamma``)."""
        self._warn_outside_step()
        if self._is_initial:
            return self._current_lrs()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from each group's initial learning rate down to ``eta_min`` over ``T_max`` epochs.

    Uses PyTorch's recursive form (each rate derived from the previous one),
    which matches ``eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``
    up to rounding, and continues past ``T_max`` as a cosine (no restarts).
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current epoch, from the previous ones (PyTorch's recursion)."""
        self._warn_outside_step()
        groups, eta_min, t_max, epoch = self.optimizer.param_groups, self.eta_min, self.T_max, self.last_epoch
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and epoch > 0:
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(epoch * math.pi / t_max)) / 2
                    for base_lr in self.base_lrs]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            return [group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * epoch / t_max)) / (1 + math.cos(math.pi * (epoch - 1) / t_max))
                * (group["lr"] - eta_min) + eta_min for group in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class LambdaLR(LRScheduler):
    """Set each group's learning rate to ``initial_lr * lr_lambda(epoch)``.

    ``lr_lambda`` is one function for all groups or a list with one per
    group. :meth:`state_dict` keeps the attributes of callable objects but
    not plain functions or lambdas (those must be recreated in code).
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        """The scheduler's attributes; ``lr_lambdas`` holds each callable object's ``__dict__`` (None for functions)."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        """Restore the attributes, and the saved attributes of callable-object lambdas."""
        state = dict(state_dict)
        lr_lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)

    def get_lr(self):
        """``initial_lr * lr_lambda(last_epoch)`` for each group."""
        self._warn_outside_step()
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


# -- more schedulers -------------------------------------------------------------------------------------------

def _format_param(name, optimizer, param):
    """One value per parameter group: ``param`` itself when it is a list or tuple (of the right length)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has "
                             f"{len(param)} values, param_groups has {len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)


class MultiStepLR(LRScheduler):
    """Multiply each group's learning rate by ``gamma`` at each epoch in ``milestones`` (repeats count twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = collections.Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The previous rates, times ``gamma`` (to the milestone's multiplicity) at a milestone."""
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch] for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect.bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiply the learning rates by ``factor`` until epoch ``total_iters``, then restore them."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """``factor`` times the rates at epoch 0, divided back out at ``total_iters``."""
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the learning rates linearly from ``start_factor`` to ``end_factor`` over ``total_iters`` epochs."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The previous rates times the ratio of this epoch's factor to the previous one (PyTorch's recursion)."""
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self.last_epoch > self.total_iters:
            return self._current_lrs()
        return [group["lr"] * (1.0 + (self.end_factor - self.start_factor)
                               / (self.total_iters * self.start_factor
                                  + (self.last_epoch - 1) * (self.end_factor - self.start_factor)))
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters) for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the learning rates as ``(1 - epoch / total_iters) ** power`` until ``total_iters``."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The previous rates times this epoch's decay ratio (PyTorch's recursion)."""
        self._warn_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        decay_factor = ((1.0 - self.last_epoch / self.total_iters)
                        / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay_factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from ``initial_lr`` to ``eta_min`` over ``T_i`` epochs, restarting with ``T_i *= T_mult``.

    ``step(epoch)`` takes a fractional epoch (``epoch + batch / batches``)
    to anneal within an epoch, as in PyTorch.
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """``eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2`` for each group."""
        self._warn_outside_step()
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or go to (fractional) ``epoch``."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur - self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up to ``max_lr``, then anneal far below the start, over ``total_steps`` steps.

    Momentum (or Adam's ``beta1``) cycles the other way between
    ``max_momentum`` and ``base_momentum`` when ``cycle_momentum``. Call
    ``step()`` after every batch; stepping past ``total_steps`` raises
    PyTorch's ValueError.
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if three_phase:
            self._schedule_phases = [
                {"end_step": float(pct_start * self.total_steps) - 1, "start_lr": "initial_lr", "end_lr": "max_lr",
                 "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": float(2 * pct_start * self.total_steps) - 2, "start_lr": "max_lr",
                 "end_lr": "initial_lr", "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
                 "start_momentum": "max_momentum", "end_momentum": "max_momentum"}]
        else:
            self._schedule_phases = [
                {"end_step": float(pct_start * self.total_steps) - 1, "start_lr": "initial_lr", "end_lr": "max_lr",
                 "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "max_lr", "end_lr": "min_lr",
                 "start_momentum": "base_momentum", "end_momentum": "max_momentum"}]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for idx, group in enumerate(optimizer.param_groups):
                group["initial_lr"] = max_lrs[idx] / div_factor
                group["max_lr"] = max_lrs[idx]
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_momentum, b_momentum, group in zip(max_momentums, base_momentums, optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (m_momentum, *group["betas"][1:])
                    else:
                        group["momentum"] = m_momentum
                    group["max_momentum"] = m_momentum
                    group["base_momentum"] = b_momentum
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        """The rate (and momentum) of the current phase at the current step."""
        self._warn_outside_step()
        lrs = []
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total steps is "
                             f"{self.total_steps}")
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    computed_lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        computed_momentum = self._anneal_func(group[phase["start_momentum"]],
                                                              group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(computed_lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (computed_momentum, *group["betas"][1:])
                else:
                    group["momentum"] = computed_momentum
        return lrs


def _check_schedulers(owner, schedulers, optimizer):
    for idx, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{owner} at index {idx} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                             f"kwargs to be specified when calling `step`, but got one at index {idx} in the given "
                             "schedulers sequence.")
        if optimizer != s.optimizer:
            raise ValueError(f"{owner} expects all schedulers to belong to the same optimizer, but got scheduler "
                             f"{s.__class__.__name__} at index {idx} has {s.optimizer}, which is different from "
                             f"{optimizer.__class__.__name__}.")


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at each epoch in ``milestones``."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler, but got no scheduler.")
        _check_schedulers(self.__class__.__name__, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for scheduler in schedulers:
            scheduler.last_epoch -= 1
        first = schedulers[0]
        first._step_count = 0
        first._is_initial = True
        try:
            first.step()
        finally:
            first._is_initial = False
        self._last_lr = first.get_last_lr()

    def step(self):
        """Step the scheduler whose turn it is (a new one starts at its epoch 0)."""
        self.last_epoch += 1
        idx = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler.step(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        """The attributes, with each scheduler's own state dict in ``_schedulers``."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        """Restore the attributes and each scheduler's state."""
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for s, sd in zip(self._schedulers, saved):
            s.load_state_dict(sd)


class ChainedScheduler(LRScheduler):
    """Step every scheduler of ``schedulers`` at each ``step()``, so their effects multiply."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self.__class__.__name__, schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = [group["lr"] for group in schedulers[-1].optimizer.param_groups]

    def step(self):
        """Step each scheduler in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict


class ReduceLROnPlateau(LRScheduler):
    """Multiply the learning rates by ``factor`` when ``metrics`` passed to ``step(metrics)`` stops improving.

    After ``patience`` epochs without an improvement larger than
    ``threshold`` (relative or absolute, for ``mode`` "min" or "max"), each
    rate drops to ``max(lr * factor, min_lr)`` (skipped when the change is at
    most ``eps``), then ``cooldown`` epochs pass before counting again.
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def is_better(self, a, best):
        """Whether metric ``a`` improves on ``best`` by more than the threshold."""
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def step(self, metrics, epoch=None):
        """Record this epoch's ``metrics`` (a number or 1-element tensor) and reduce the rates if it plateaued."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new param group "
                    "being added to the optimizer. Please modify the `min_lrs` field to match the length of the "
                    "`optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for i, group in enumerate(groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr
