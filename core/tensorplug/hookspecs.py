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

Hooks are called once per plugin each time it is enabled, in this order:
functionality keys, dtypes, backends, kernels, namespace (conformance is
read by the conformance kit). Pluggy is used only here, for registration and
configuration; it is never on the per-op hot path.

Everything a plugin registers from its hooks is owned by it and removed when
it is disabled; enabling it again calls the hooks again. So register from
hooks only, never at import time (import happens once). If a hook raises,
whatever the plugin registered so far is removed and the plugin is listed as
``failed`` with the error; an implementation of a hook that does not exist
(a misspelt name) fails the plugin too.

What a plugin may use besides these hooks is the public plugin API,
:mod:`tensorplug.plugin_api` (tensor makers, key sets, dtype and index
helpers, seeds, the transform protocol); docs/plugins.md is its reference,
with the version policy (``TENSORPLUG_API = (major, minor)`` in the plugin's
module), and docs/backend-contract.md lists what a backend implements.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("tensorplug")
hookimpl = pluggy.HookimplMarker("tensorplug")


@hookspec
def tensorplug_functionality_keys():
    """Declare functionality dispatch keys.

    Return a list of :class:`tensorplug.plugin_api.FunctionalityKey`. The
    priority (0..63, unique) decides the key's place: higher runs first. The
    core holds Dense (8) and Autograd (24); conventions: Quantized 16,
    Autocast 32, Batched 20 (below Autograd, so
    ``grad`` inside ``vmap`` records on batched tensors; docs/vmap.md), Profiler 60. ``per_backend=True`` makes runtime
    keys per backend (``AutocastCPU``); ``composite=True`` lets
    CompositeImplicitAutograd kernels fill the key.

    Example::

        @tensorplug.hookimpl
        def tensorplug_functionality_keys():
            from tensorplug.plugin_api import FunctionalityKey
            return [FunctionalityKey("Logging", priority=12)]
    """


@hookspec
def tensorplug_dtypes():
    """Declare extra dtypes (for instance a quantized int8).

    Return a list of :class:`tensorplug.dtype` instances with unique names. A dtype whose tensors only
    a transform builds (quantized ones: integers plus scales) passes ``factory_error="..."``: the
    factories (``empty``, ``full``, ``*_like``, ``.to(dtype)``) then raise that message instead of
    making a plain tensor of it.

    Example::

        @tensorplug.hookimpl
        def tensorplug_dtypes():
            return [tensorplug.dtype("myint4", numpy.int8, category=1, rank=1)]
    """


@hookspec
def tensorplug_backends():
    """Declare compute backends.

    Return a list of :class:`tensorplug.plugin_api.Backend` records. The core
    gives each a backend bit (the first free one, or the record's ``slot``:
    a fixed slot keeps the bit stable across disable/enable); tensors on its
    devices dispatch to kernels registered under the record's ``key_name``.
    docs/backend-contract.md lists the methods and kernels a backend provides.

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

    A kernel receives the op's arguments positionally in schema order (with
    ``with_keyset=True``, the key set masked below its key comes first). A
    boxed fallback, one function for every op at a key, receives ``(op,
    keyset, *args)`` and continues with ``op.redispatch(keyset, *args)``;
    ``tensorplug.fallthrough_kernel`` as a fallback makes the key fall through.

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
    ``tensorplug.profiler``). Names must be identifiers, may not shadow the
    core's names and may not be provided by two plugins. While the plugin is
    disabled, ``tensorplug.NAME`` raises an AttributeError that names the
    plugin and says how to enable it.

    Example::

        @tensorplug.hookimpl
        def tensorplug_namespace():
            return {"vmap": vmap}
    """


@hookspec
def tensorplug_conformance():
    """Conformance configuration for this plugin.

    Return a dict with any of: ``"backend"`` (device type tested),
    ``"transform"`` (transform name), ``"ops"`` (op names it covers, default
    all), ``"xfail"`` ({op name: reason}), ``"skip"`` ({op name: reason}),
    ``"dtypes"`` (list of dtypes to test), ``"name"`` (the target's name,
    default the transform's or the backend's). A list of such dicts declares
    several targets, e.g. a transform checked on two backends (each with its
    own ``"name"``).

    Example::

        @tensorplug.hookimpl
        def tensorplug_conformance():
            return {"backend": "mydev", "xfail": {"sort": "stable sort not implemented, issue #12"}}
    """
