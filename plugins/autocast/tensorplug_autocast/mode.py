"""``tensorplug.autocast`` and the functions around it, with PyTorch 2.13's names and behaviour."""

from __future__ import annotations

import functools
import warnings

import tensorplug

from . import backends, policies
from .state import STATE, clear_cache, default_dtype, refresh_key

__all__ = ["autocast", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
           "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
           "autocast_increment_nesting", "autocast_decrement_nesting", "is_autocast_available",
           "custom_fwd", "custom_bwd"]


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def is_autocast_available(device_type):
    """Whether autocast can run on ``device_type``: some enabled backend serves it."""
    _check_device_type(device_type)
    return backends.backend_available(device_type)


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` in this thread (no argument: ``"cuda"``, as PyTorch)."""
    if device_type is None:
        device_type = "cuda"
    _check_device_type(device_type)
    return bool(STATE.enabled.get(device_type, False))


def set_autocast_enabled(device_type, enabled=None):
    """Switch autocast for ``device_type`` on or off in this thread (``set_autocast_enabled(flag)``: cuda)."""
    if enabled is None and isinstance(device_type, bool):
        device_type, enabled = "cuda", device_type
    _check_device_type(device_type)
    if enabled:
        policies.policy(device_type)
    STATE.enabled[device_type] = bool(enabled)
    refresh_key()


def get_autocast_dtype(device_type):
    """The dtype autocast casts to on ``device_type`` in this thread."""
    _check_device_type(device_type)
    return STATE.dtype.get(device_type) or default_dtype(device_type)


def set_autocast_dtype(device_type, dtype):
    """Set the dtype autocast casts to on ``device_type`` in this thread."""
    _check_device_type(device_type)
    if not isinstance(dtype, tensorplug.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
    STATE.dtype[device_type] = dtype
    refresh_key()


def is_autocast_cache_enabled():
    """Whether autocast regions cache lower-precision copies of weights (this thread)."""
    return STATE.cache_enabled


def set_autocast_cache_enabled(enabled):
    STATE.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """Drop this thread's cached copies (autocast does it when the outermost region exits)."""
    clear_cache()


def autocast_increment_nesting():
    STATE.nesting += 1
    return STATE.nesting


def autocast_decrement_nesting():
    STATE.nesting -= 1
    return STATE.nesting


def _supported(device_type, dtype):
    return dtype in backends.supported_dtypes(device_type)


class autocast:
    """Run a region in mixed precision, as ``torch.autocast``.

    ``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``; a context manager and
    a decorator. Inside, operators in the device type's policy (see ``tensorplug.amp.policy``) cast
    their floating arguments: matrix products and convolutions to ``dtype`` (bfloat16 on the CPU,
    float16 on CUDA by default), precision-sensitive ops to float32. Regions nest: an inner
    ``enabled=False`` region runs at full precision and leaving it restores the outer one. The
    state is per thread. Casts of float32 weights are made once per outermost region
    (``cache_enabled=False`` turns that off) and dropped when it exits.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        _check_device_type(device_type)
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        enabled = bool(enabled)
        if not is_autocast_available(device_type):
            if device_type == "cuda":  # PyTorch's CPU-only build: a warning, and the region runs as is
                warnings.warn("User provided device_type of 'cuda', but CUDA is not available or torch_xla is "
                              "imported. Disabling autocast.", UserWarning, stacklevel=2)
                enabled = False
            else:
                raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        if not isinstance(self.fast_dtype, tensorplug.dtype):
            raise TypeError(f"autocast(): dtype must be a tensorplug.dtype, not {type(self.fast_dtype).__name__}")
        if enabled and not _supported(device_type, self.fast_dtype):
            names = " and ".join(f"torch.{d.name}" for d in backends.supported_dtypes(device_type))
            if device_type == "cpu":
                msg = ("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                       "CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently.")
            elif device_type == "cuda":
                msg = ("In CUDA autocast, but the target dtype is not supported. Disabling autocast.\n"
                       "CUDA Autocast only supports dtypes of torch.float16 and torch.bfloat16 currently.")
            else:
                msg = (f"In {device_type} autocast, but the target dtype is not supported. Disabling autocast.\n"
                       f"{device_type} Autocast only supports dtypes of {names} currently.")
            warnings.warn(msg, UserWarning, stacklevel=2)
            enabled = False
        self._enabled = enabled
        self._saved = []
        if enabled:
            policies.policy(device_type)  # the device type's tables exist before its first call

    def __enter__(self):
        st = STATE
        self._saved.append((st.enabled.get(self.device, False), st.dtype.get(self.device), st.cache_enabled))
        st.enabled[self.device] = self._enabled
        st.dtype[self.device] = self.fast_dtype
        st.cache_enabled = self._cache_enabled
        st.nesting += 1
        refresh_key()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        st = STATE
        st.nesting -= 1
        if st.nesting == 0:
            clear_cache()
        enabled, dtype, cache = self._saved.pop()
        st.enabled[self.device] = enabled
        if dtype is None:
            st.dtype.pop(self.device, None)
        else:
            st.dtype[self.device] = dtype
        st.cache_enabled = cache
        refresh_key()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        decorate_autocast.__autocast_wrapped__ = True
        return decorate_autocast

    def __repr__(self):
        return (f"autocast(device_type={self.device!r}, dtype={self.fast_dtype}, enabled={self._enabled}, "
                f"cache_enabled={self._cache_enabled})")


def _cast(value, device_type, dtype):
    if isinstance(value, tensorplug.Tensor):
        ok = value.is_floating_point() and value.device.type == device_type and value.dtype is not tensorplug.float64
        return value.to(dtype) if ok else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a custom ``autograd.Function``'s ``forward`` for autocast, as ``torch.amp.custom_fwd``.

    With ``cast_inputs`` given and autocast on for ``device_type``, the forward runs with autocast
    off and its floating arguments cast to ``cast_inputs``. Otherwise it runs under the ambient
    state. Either way the state is recorded so :func:`custom_bwd` runs the backward in it.
    """
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        ctx._amp_device_type = device_type
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate the matching ``backward``: it runs with the autocast state its forward ran with."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
