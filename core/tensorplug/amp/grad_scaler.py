"""``GradScaler``: loss scaling for mixed precision training, after ``torch.amp.GradScaler``."""

from __future__ import annotations

import warnings

from .. import backend as _backend
from .. import dtypes as _dt
from ..autograd import no_grad
from ..ops.factories import full
from ..tensor import Tensor


def _device_available(device_type):
    """Whether ``device_type`` has an enabled backend with at least one device (the CPU always does)."""
    if device_type == "cpu":
        return True
    b = _backend.BACKENDS.get(device_type)
    return b is not None and bool(b.is_available()) and b.device_count() > 0

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Scale the loss so small float16 gradients do not flush to zero, and undo it before the step.

    ``scaler.scale(loss).backward()``, then ``scaler.step(optimizer)`` (which
    unscales the gradients and skips the step when one is infinite or NaN),
    then ``scaler.update()`` (which halves the scale after a skipped step and
    doubles it after ``growth_interval`` good ones). With ``enabled=False``,
    or when ``device`` is not available (with PyTorch's warning), ``scale``
    returns its argument, ``step`` calls ``optimizer.step`` and the rest does
    nothing.
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._enabled and not _device_available(device):
            warnings.warn(f"tensorplug.{device}.amp.GradScaler is enabled, but {device.upper()} is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = {}

    def is_enabled(self):
        """Whether the scaler scales (False when disabled)."""
        return self._enabled

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = full((), float(self._init_scale), dtype=_dt.float32, device=dev)
        self._growth_tracker = self._init_growth_tracker

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        return self._scale

    def _state(self, optimizer):
        return self._per_optimizer_states.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def scale(self, outputs):
        """``outputs`` (a tensor or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        def apply(value):
            if isinstance(value, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(value.device)
                return value * self._scale.to(device=value.device)
            if isinstance(value, (list, tuple)):
                return type(value)(apply(v) for v in value)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale in place and record whether any is not finite."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = 1.0 / self._scale.double().item()
        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    g.mul_(full((), inv_scale, dtype=_dt.float32, device=g.device))
                    if not bool(g.isfinite().all()):
                        found_inf = True
        state["found_inf"] = found_inf
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (if not done yet) and call ``optimizer.step`` unless a gradient was infinite or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return retval

    def update(self, new_scale=None):
        """Back the scale off after a skipped step, grow it after ``growth_interval`` good ones (or set it)."""
        if not self._enabled:
            return
        scale = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a single-element tensor")
                if new_scale.dtype is not _dt.float32:
                    raise AssertionError("new_scale should be a float32 tensor")
                if new_scale.requires_grad:
                    raise AssertionError("new_scale should not require grad")
                scale.copy_(new_scale.reshape(()))
            else:
                scale.fill_(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values() if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                scale.mul_(self._backoff_factor)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    scale.mul_(self._growth_factor)
                    self._growth_tracker = 0
        self._per_optimizer_states = {}

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker

    def state_dict(self):
        """``scale``, the factors, ``growth_interval`` and ``_growth_tracker``; ``{}`` when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Restore what :meth:`state_dict` saved (nothing happens when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = state_dict["_growth_tracker"]
