"""tensorplug-profiler: records every op call under a ``Profiler`` dispatch key.

The plugin declares the ``Profiler`` functionality key (priority 60, above
every other key) and a boxed fallback for it that records the call and
redispatches below itself. ``tensorplug.profiler.profile()`` puts the key in
the thread's include set for the duration of the block, so nothing changes
for op calls outside a profile. See docs/profiler.md.
"""

from __future__ import annotations

import tensorplug
from tensorplug.plugin_api import FunctionalityKey

from . import api, record

__version__ = "0.2.0"
TENSORPLUG_API = (1, 0)  # the plugin API this plugin is written for (tensorplug.plugin_api)


@tensorplug.hookimpl
def tensorplug_functionality_keys():
    return [FunctionalityKey(record.KEY_NAME, record.PRIORITY)]


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    library("tensorplug", "IMPL").fallback(record.profile_fallback, record.KEY_NAME)


@tensorplug.hookimpl
def tensorplug_namespace():
    return {"profiler": api}


@tensorplug.hookimpl
def tensorplug_conformance():
    from .conformance import register  # lazy: the cases load only when the conformance kit asks
    register()
    return {"transform": "profiler", "backend": "cpu"}
