"""The plugin contract: every hook a tensorplug plugin may implement.

A plugin is a module (or object) named by an entry point in the group
``tensorplug.plugins``; the entry point's name is the plugin's short name.
It implements any of the hooks below, each decorated with
``tensorplug.hookimpl``::

    # pyproject.toml
    [project.entry-points."tensorplug.plugins"]
    mydev = "tensorplug_mydev"

    # tensorplug_mydev/__init__.py
    import tensorplug

    @tensorplug.hookimpl
    def tensorplug_backends():
        return [MyDevBackend()]

Hooks are called once per plugin when it is enabled, in this order:
functionality keys, dtypes, backends, kernels, namespace, conformance. Pluggy
is used only here, for registration and configuration; it is never on the
per-op hot path. Everything a plugin registers is removed when it is
disabled.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("tensorplug")
hookimpl = pluggy.HookimplMarker("tensorplug")


@hookspec
def tensorplug_functionality_keys():
    """Declare functionality dispatch keys.

    Return a list of :class:`tensorplug.dispatch.FunctionalityKey`. The
    priority (0..63, unique) decides the key's place: higher runs first. The
    core holds Dense (8) and Autograd (24); conventions: Quantized 16,
    Autocast 32, Batched 48, Profiler 60. ``per_backend=True`` makes runtime
    keys per backend (``AutocastCPU``); ``composite=True`` lets
    CompositeImplicitAutograd kernels fill the key.

    Example::

        @tensorplug.hookimpl
        def tensorplug_functionality_keys():
            from tensorplug.dispatch import FunctionalityKey
            return [FunctionalityKey("Logging", priority=20)]
    """


@hookspec
def tensorplug_dtypes():
    """Declare extra dtypes (for instance a quantized int8).

    Return a list of :class:`tensorplug.dtype` instances with unique names.

    Example::

        @tensorplug.hookimpl
        def tensorplug_dtypes():
            return [tensorplug.dtype("qint8", numpy.int8, category=1, rank=1)]
    """


@hookspec
def tensorplug_backends():
    """Declare compute backends.

    Return a list of :class:`tensorplug.backend.Backend` records. The core
    gives each a backend bit; tensors on its devices dispatch to kernels
    registered under the record's ``key_name``.

    Example::

        @tensorplug.hookimpl
        def tensorplug_backends():
            return [NumpyBackend()]   # name="cpu", key_name="CPU"
    """


@hookspec
def tensorplug_register_kernels(library):
    """Register operators, kernels and boxed fallbacks.

    :param library: a factory ``library(namespace, kind="IMPL",
        dispatch_key="")`` returning a :class:`tensorplug.library.Library`
        owned by this plugin (``kind`` is DEF, FRAGMENT or IMPL).

    Example::

        @tensorplug.hookimpl
        def tensorplug_register_kernels(library):
            lib = library("tensorplug", "IMPL", "CPU")
            lib.impl("add.Tensor", cpu_add)
            library("tensorplug", "IMPL").fallback(log_and_redispatch, "Logging")
    """


@hookspec
def tensorplug_namespace():
    """Public names this plugin adds to ``tensorplug``.

    Return a dict ``{name: object}``; ``tensorplug.NAME`` then resolves to the
    object while the plugin is enabled (``tensorplug.vmap``,
    ``tensorplug.profiler``). Names may not shadow the core's.

    Example::

        @tensorplug.hookimpl
        def tensorplug_namespace():
            return {"vmap": vmap, "func.vmap": vmap}
    """


@hookspec
def tensorplug_conformance():
    """Conformance configuration for this plugin.

    Return a dict with any of: ``"backend"`` (device type tested),
    ``"transform"`` (transform name), ``"ops"`` (op names it covers, default
    all), ``"xfail"`` ({op name: reason}), ``"skip"`` ({op name: reason}),
    ``"dtypes"`` (list of dtypes to test).

    Example::

        @tensorplug.hookimpl
        def tensorplug_conformance():
            return {"backend": "mydev", "xfail": {"sort": "stable sort not implemented, issue #12"}}
    """
