"""``tensorplug.distributed``: the process-group API's entry points, answering "not available".

A distributed plugin will provide process groups and collectives; until one
registers itself with :func:`set_backend_module`, ``is_available()`` and
``is_initialized()`` are False, and the functions that need a process group
raise PyTorch's errors. See docs/runtime.md.
"""

from __future__ import annotations

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "barrier", "is_torchelastic_launched", "set_backend_module"]

_PROVIDER = [None]

_NO_GROUP = "Default process group has not been initialized, please make sure to call init_process_group."


def set_backend_module(module):
    """Install the object (a module) that implements the process-group API; returns the previous one.

    Every function of this namespace then calls the one of the same name on
    ``module``, and names missing here are looked up on it.
    """
    previous = _PROVIDER[0]
    _PROVIDER[0] = module
    return previous


def _impl(name):
    return getattr(_PROVIDER[0], name, None)


def is_available():
    """Whether a distributed implementation is installed (False without a distributed plugin)."""
    fn = _impl("is_available")
    return bool(fn()) if fn is not None else False


def is_initialized():
    """Whether the default process group exists."""
    fn = _impl("is_initialized")
    return bool(fn()) if fn is not None else False


def is_torchelastic_launched():
    """Whether the process was started by an elastic launcher (never without a distributed plugin)."""
    fn = _impl("is_torchelastic_launched")
    return bool(fn()) if fn is not None else False


def init_process_group(*args, **kwargs):
    """Create the default process group (needs a distributed plugin)."""
    fn = _impl("init_process_group")
    if fn is None:
        raise RuntimeError("tensorplug.distributed is not available: no distributed plugin is installed")
    return fn(*args, **kwargs)


def _needs_group(name):
    def call(*args, **kwargs):
        fn = _impl(name)
        if fn is None:
            raise ValueError(_NO_GROUP)
        return fn(*args, **kwargs)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"PyTorch's ``torch.distributed.{name}`` (needs an initialised process group)."
    return call


destroy_process_group = _needs_group("destroy_process_group")
get_rank = _needs_group("get_rank")
get_world_size = _needs_group("get_world_size")
barrier = _needs_group("barrier")


def __getattr__(name):
    impl = None if name.startswith("__") else _impl(name)
    if impl is None:
        raise AttributeError(f"module 'tensorplug.distributed' has no attribute '{name}'")
    return impl
