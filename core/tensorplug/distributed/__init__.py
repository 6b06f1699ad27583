"""``tensorplug.distributed``: process groups and collectives, provided by a distributed plugin.

The core holds only this namespace. A distributed plugin (tensorplug-distributed, on MPI and NCCL)
provides its names through the ``tensorplug_namespace`` hook as ``"distributed.NAME"``; they
resolve here while the plugin is enabled. Without one, ``is_available()`` and ``is_initialized()``
are False, the functions that need a process group raise PyTorch's errors, and other names raise
an AttributeError naming the plugin. See docs/distributed.md.
"""

from __future__ import annotations

import sys as _sys

from .. import plugins as _plugins

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "barrier", "is_torchelastic_launched"]

_NO_GROUP = "Default process group has not been initialized, please make sure to call init_process_group."


def _impl(name):
    """The enabled distributed plugin's ``name``, or None."""
    pub = "distributed." + name
    ns = _plugins.NAMESPACE
    if pub in ns or (_plugins.complete_pending() and pub in ns):
        return _plugins.namespace_value(pub)
    return None


def _is_available():
    """Whether a distributed implementation is installed (False without a distributed plugin)."""
    return False


def _is_initialized():
    """Whether the default process group exists (never without a distributed plugin)."""
    return False


def _is_torchelastic_launched():
    """Whether the process was started by an elastic launcher (never without a distributed plugin)."""
    return False


def _init_process_group(*args, **kwargs):
    """Create the default process group (needs a distributed plugin)."""
    raise RuntimeError("tensorplug.distributed is not available: no distributed plugin is installed "
                       "(" + _plugins.describe_plugin("distributed", "tensorplug-distributed[mpi]") + ")")


def _needs_group(name):
    def call(*args, **kwargs):
        raise ValueError(_NO_GROUP)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"PyTorch's ``torch.distributed.{name}`` (needs an initialised process group)."
    return call


# what these names do while no distributed plugin is enabled
_FALLBACKS = {"is_available": _is_available, "is_initialized": _is_initialized,
              "is_torchelastic_launched": _is_torchelastic_launched, "init_process_group": _init_process_group,
              **{n: _needs_group(n) for n in ("destroy_process_group", "get_rank", "get_world_size", "barrier")}}


def __getattr__(name):
    impl = None if name.startswith("__") else _impl(name)
    if impl is not None:
        # later lookups (a training loop's dist.all_reduce) are attribute reads; disabling the plugin
        # removes it again
        _plugins.cache_on_module("distributed." + name, impl, _sys.modules[__name__])
        return impl
    if name in _FALLBACKS:
        return _FALLBACKS[name]
    raise _plugins.missing_name_error("distributed." + name)


def __dir__():
    names = set(globals()) | set(_FALLBACKS)
    names.update(p.partition(".")[2] for p in _plugins.NAMESPACE if p.startswith("distributed."))
    return sorted(names)
