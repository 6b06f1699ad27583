"""tensorplug-autocast: automatic mixed precision under a per-backend ``Autocast`` dispatch key.

The plugin declares the ``Autocast`` functionality key (priority 32, per backend: AutocastCPU,
AutocastOpenReg, ... exist for every backend without any code of theirs), makes it fall through
for every operator, and registers one generic kernel per operator of the policy tables
(:mod:`tensorplug_autocast.policy`). ``tensorplug.autocast(...)`` puts the key in the thread's
include set for the region. See docs/autocast.md.
"""

from __future__ import annotations

import tensorplug
from tensorplug.plugin_api import FunctionalityKey, fallthrough_kernel

from . import mode, policies, state
from .state import KEY_NAME, PRIORITY

__version__ = "0.2.0"
TENSORPLUG_API = (1, 1)  # the plugin API this plugin is written for (tensorplug.plugin_api)


@tensorplug.hookimpl
def tensorplug_functionality_keys():
    return [FunctionalityKey(KEY_NAME, PRIORITY, per_backend=True, before_checks=True)]


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    lib = library("tensorplug", "IMPL")
    lib.fallback(fallthrough_kernel, KEY_NAME)
    policies.install(lib)


@tensorplug.hookimpl
def tensorplug_namespace():
    names = {n: getattr(mode, n) for n in (
        "autocast", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
        "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
        "autocast_increment_nesting", "autocast_decrement_nesting")}
    # names of tensorplug.amp (a core module that takes names from plugins)
    names.update({"amp.autocast": mode.autocast, "amp.is_autocast_available": mode.is_autocast_available,
                  "amp.custom_fwd": mode.custom_fwd, "amp.custom_bwd": mode.custom_bwd,
                  "amp.policy": policies.policy, "amp.cache_info": state.cache_info})
    return names


@tensorplug.hookimpl
def tensorplug_conformance():
    from .conformance import register  # lazy: the cases load only when the conformance kit asks
    register()
    return [{"transform": "autocast", "backend": "cpu"},
            {"name": "autocast:openreg", "transform": "autocast", "backend": "openreg"}]
