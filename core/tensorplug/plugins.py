"""The plugin manager: discovery, enable/disable and the listing.

Plugins are found through entry points in the group ``tensorplug.plugins``
when ``tensorplug`` is imported. ``TENSORPLUG_LOAD_PLUGINS`` (a comma list;
empty means none) restricts which are enabled and
``TENSORPLUG_DISABLE_PLUGINS`` removes names from that. At run time
:func:`enable`, :func:`disable` and :func:`list` manage them; :func:`register`
adds an in-process plugin object (what tests use).

Discovery enables plugins in name order, and tries a plugin that failed again
after each round in which another one got enabled: a plugin registering
kernels for another plugin's backend (or key, dtype, operator) loads after it,
whatever the names. A plugin that still raises while loading (SystemExit
included) is marked ``failed`` with its error and a warning; ``import
tensorplug`` still works. A KeyboardInterrupt is re-raised once what the
plugin registered is undone. Two distributions declaring one entry-point
name are both listed, with a warning: the name goes to the distribution whose
name sorts first, the other is listed as ``DIST:NAME``.

Enabling, disabling and discovery hold one lock, so threads take turns.
"""

from __future__ import annotations

import builtins
import importlib
import os
import re
import sys
import threading
import traceback
import warnings
from importlib import metadata

import pluggy

from . import hookspecs
from ._version import check_api_version
from . import _privateuse1
from . import dtypes as _dt
from . import backend as _backend
from .backend import BACKENDS
from .dispatch import dispatcher as _d
from .dispatch.keys import REGISTRY, Dense
from .dispatch.library import Library, owner_scope, destroy_owned_by, LIBRARIES

ENTRY_POINT_GROUP = "tensorplug.plugins"

_pm = pluggy.PluginManager("tensorplug")
_pm.add_hookspecs(hookspecs)

NAMESPACE: dict = {}   # public name -> object, from enabled plugins
NAMESPACE_OWNER: dict = {}  # public name -> plugin providing it now
# Which plugin provides a public name: the well-known ones, plus every name a
# plugin provided earlier in this process (so the error after disabling says who).
# Only plugins that exist in this repository are named here; a plugin still to
# come adds its names when it lands.
NAME_PROVIDERS: dict = {"vmap": "vmap", "profiler": "profiler", "openreg": "openreg", "compile": "compile",
                        "compiler": "compile",
                        **{f"distributed.{n}": "distributed" for n in (
                            "ReduceOp", "Work", "ProcessGroup", "GroupMember", "Backend", "DistBackendError",
                            "new_group", "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
                            "reduce_scatter_tensor", "gather", "scatter", "send", "recv", "isend", "irecv",
                            "all_gather_object", "broadcast_object_list", "get_backend", "run",
                            "all_to_all_single", "all_to_all", "reduce_scatter", "batch_isend_irecv", "P2POp",
                            "send_object_list", "recv_object_list", "monitored_barrier", "new_subgroups",
                            "new_subgroups_by_enumeration",
                            "DistributedDataParallel", "GradBucket")},
                        **{n: "autocast" for n in (
                            "autocast", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
                            "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
                            "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
                            "amp.autocast", "amp.is_autocast_available", "amp.custom_fwd", "amp.custom_bwd",
                            "amp.policy", "amp.cache_info")},
                        **{n: "quantize" for n in (
                            "qint8", "quint8", "qint32", "quint4x2", "qscheme", "per_tensor_affine",
                            "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
                            "per_channel_affine_float_qparams", "quantize_per_tensor", "quantize_per_channel",
                            "quantize_per_tensor_dynamic", "dequantize", "int_repr",
                            "ao.quantization.quantize_dynamic", "quantization.quantize_dynamic",
                            "quantization.quantize_", "quantization.Int8DynamicActivationInt8Weight",
                            "quantization.Int8WeightOnly", "quantization.Int4WeightOnly",
                            "ao.nn.quantized.dynamic.Linear", "fake_quantize_per_tensor_affine",
                            "fake_quantize_per_channel_affine", "quantization.report",
                            *(f"ao.nn.quantized.{m}" for m in (
                                "Linear", "Conv2d", "LinearReLU", "ConvReLU2d", "Quantize", "DeQuantize")),
                            *(f"{ns}.{m}" for ns in ("ao.quantization", "quantization") for m in (
                                "MinMaxObserver", "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver",
                                "MovingAveragePerChannelMinMaxObserver", "HistogramObserver",
                                "default_histogram_observer", "default_observer",
                                "default_weight_observer", "default_per_channel_weight_observer", "QConfig",
                                "default_qconfig", "default_qat_qconfig", "get_default_qconfig",
                                "get_default_qat_qconfig", "QuantStub", "DeQuantStub", "fuse_modules", "prepare",
                                "convert", "prepare_qat", "propagate_qconfig_", "FakeQuantize",
                                "default_fake_quant", "default_weight_fake_quant",
                                "default_per_channel_weight_fake_quant", "FusedMovingAvgObsFakeQuantize",
                                "default_per_channel_qconfig")))}}

# Where a user gets the plugins the core knows of by name, for error messages.
KNOWN_PLUGINS = {
    "cpu": "tensorplug-cpu", "openreg": "tensorplug-openreg", "vmap": "tensorplug-vmap",
    "profiler": "tensorplug-profiler", "minimal": "tensorplug-minimal", "autocast": "tensorplug-autocast",
    "quantize": "tensorplug-quantize",
}
_backend.BACKEND_PROVIDERS.update({"CPU": ("cpu", "tensorplug-cpu"), "openreg": ("openreg", "tensorplug-openreg"),
                             "Minimal": ("minimal", "tensorplug-minimal")})


class PluginInfo:
    """What the listing shows about one plugin."""

    def __init__(self, name, dist=None, version=None, entry_point=None, obj=None):
        self.name = name
        self.dist = dist
        self.version = version
        self.entry_point = entry_point
        self.obj = obj
        self.state = "disabled"
        self.error = None
        self.traceback = None
        self.keys: list = []
        self.backends: list = []
        self.dtypes: list = []
        self.names: list = []

    @property
    def kernel_count(self):
        return sum(len(lib._regs) + len(lib._fallbacks) for lib in LIBRARIES if lib.owner == self.name)

    def as_dict(self):
        return {"name": self.name, "distribution": self.dist, "version": self.version, "state": self.state,
                "keys": builtins.list(self.keys), "backends": builtins.list(self.backends),
                "kernels": self.kernel_count, "namespace": builtins.list(self.names), "error": self.error}

    def __repr__(self):
        return f"<plugin {self.name} {self.state}>"


_PLUGINS: dict = {}
_PENDING = [False]  # whether some plugin waits for its module to finish importing
# enable, disable, register, forget and discovery change shared tables: one thread at a time (reentrant:
# a hook may look a plugin up, which completes pending ones)
_LOCK = threading.RLock()


def _env_list(var):
    v = os.environ.get(var)
    if v is None:
        return None
    return [x.strip() for x in v.split(",") if x.strip()]


def _dist_name(ep):
    dist = getattr(ep, "dist", None)
    return dist.metadata["Name"] if dist is not None else None


def _entry_point_order(ep):
    """Name order; for one name declared twice, the distribution whose (normalized) name sorts first."""
    dist = _dist_name(ep)
    return ep.name, dist is None, re.sub(r"[-_.]+", "-", dist or "").lower(), ep.value


def discover():
    """Find entry-point plugins and enable those the environment selects."""
    try:
        eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception as e:  # a broken environment must not break import
        warnings.warn(f"tensorplug: could not read entry points: {e}")
        return
    load = _env_list("TENSORPLUG_LOAD_PLUGINS")
    disable_ = set(_env_list("TENSORPLUG_DISABLE_PLUGINS") or ())
    with _LOCK:
        new = []
        for ep in sorted(eps, key=_entry_point_order):
            dist = getattr(ep, "dist", None)
            dist_name = _dist_name(ep)
            holder = _PLUGINS.get(ep.name)
            if holder is None:
                listed = ep.name
            elif holder.entry_point is not None and holder.dist == dist_name:
                continue  # found by an earlier discover()
            else:
                # another distribution's plugin of the same name: listed under a qualified name, not dropped
                listed = f"{dist_name or ep.module}:{ep.name}"
                if listed in _PLUGINS:
                    continue
                first = (f"declared by two distributions: {holder.dist} and {dist_name}; {ep.name!r} is "
                         f"{holder.dist}'s (the distribution whose name sorts first)" if holder.entry_point else
                         f"of {dist_name} is taken by a plugin registered in this process")
                warnings.warn(f"tensorplug: the plugin name {ep.name!r} is {first}; {dist_name}'s is listed as "
                              f"{listed!r} and is enabled only if TENSORPLUG_LOAD_PLUGINS names it",
                              RuntimeWarning, stacklevel=2)
            _PLUGINS[listed] = PluginInfo(listed, dist_name, dist.version if dist else None, entry_point=ep)
            new.append(listed)
        unknown = sorted(set(load or ()) - set(_PLUGINS))
        if unknown:
            warnings.warn(f"tensorplug: TENSORPLUG_LOAD_PLUGINS names plugins that are not installed: "
                          f"{', '.join(unknown)} (installed: {', '.join(sorted(_PLUGINS)) or 'none'})",
                          RuntimeWarning, stacklevel=2)
        # only new plugins: calling discover() again must not re-enable what the user disabled
        selected = [name for name in new if name not in disable_ and (
            name in load if load is not None else _PLUGINS[name].name == _PLUGINS[name].entry_point.name)]
        try:
            _enable_all(selected)
        except KeyboardInterrupt:
            # forget the plugins the interrupt kept from being tried, so the next discovery finds them
            for name in selected:
                if _PLUGINS[name].state == "disabled":
                    del _PLUGINS[name]
            raise


def _enable_all(names):
    """Enable plugins ``names`` (discovery's), each after the plugins it needs.

    Name order first. A plugin that fails is tried again after every round in
    which another got enabled: it may register kernels for a backend, key,
    dtype or operator that a plugin later in name order provides. One that
    still fails is marked failed with a warning; while some plugin is pending
    (its module still importing), it waits as pending too, and is tried again
    when they complete. A KeyboardInterrupt is re-raised (the plugin's
    registrations undone).
    """
    with _LOCK:
        waiting = builtins.list(names)
        while waiting:
            failed, progress = [], False
            for name in waiting:
                try:
                    info = enable(name)
                except KeyboardInterrupt:
                    raise
                except BaseException:  # noqa: BLE001 - SystemExit included: recorded on the info
                    failed.append(name)
                    continue
                progress = progress or info.state == "enabled"
            waiting = failed
            if not progress:
                break
        pending = any(i.state == "pending" for i in builtins.list(_PLUGINS.values()))
        for name in waiting:
            info = _PLUGINS[name]
            if pending:
                info.state = "pending"  # its error stays on the info until the retry
                _PENDING[0] = True
            else:
                warnings.warn(f"tensorplug: plugin {name!r} failed to load and is skipped: {info.error}",
                              RuntimeWarning, stacklevel=3)


def register(obj, name, *, enable_now=True):
    """Add an in-process plugin (an object or module with hook implementations)."""
    with _LOCK:
        if name in _PLUGINS:
            raise ValueError(f"a plugin named {name!r} is already known")
        _PLUGINS[name] = PluginInfo(name, obj=obj, version=getattr(obj, "__version__", None))
        if enable_now:
            enable(name)
        return _PLUGINS[name]


def forget(name):
    """Disable and drop an in-process plugin from the listing."""
    with _LOCK:
        if name in _PLUGINS:
            disable(name)
            del _PLUGINS[name]


def _call(name, hook, **kwargs):
    caller = getattr(_pm.hook, hook)
    out = []
    for impl in caller.get_hookimpls():
        if impl.plugin_name == name:
            res = impl.function(**kwargs)
            if res is not None:
                out.append(res)
    return out


def enable(name):
    """Enable plugin ``name``: register its keys, dtypes, backends, kernels and names.

    Raises if it fails, whatever it raises (SystemExit and KeyboardInterrupt
    included), after undoing what it registered and marking it ``failed``.
    Discovery turns the failure into a warning instead (see :func:`_enable_all`).
    """
    with _LOCK:
        return _enable(name)


def _enable(name):
    info = _PLUGINS.get(name)
    if info is None:
        raise ValueError(f"unknown plugin {name!r}; known: {sorted(_PLUGINS)}")
    if info.state == "enabled":
        return info
    if info.obj is None and _initializing(info.entry_point):
        # The plugin's module is importing tensorplug right now (the user imported the
        # plugin first): its hooks are not defined yet. Finish when the core next needs it.
        info.state = "pending"
        _PENDING[0] = True
        return info
    try:
        obj = info.obj
        if obj is None:
            obj = info.obj = info.entry_point.load()
        wanted = getattr(obj, "TENSORPLUG_API", None)
        if wanted is not None:
            check_api_version(wanted, f"the plugin {name!r}")
        elif info.entry_point is not None:
            raise ImportError(f"the plugin {name!r} declares no TENSORPLUG_API (the plugin API version it is "
                              f"written for); it was built for another tensorplug than this one")
        _pm.register(obj, name)
        _pm.check_pending()  # a misspelt hook name fails loudly instead of being ignored
        with owner_scope(name):
            for res in _call(name, "tensorplug_functionality_keys"):
                for key in res:
                    key.owner = name
                    REGISTRY.add_functionality(key)
                    info.keys.append(key.name)
            for res in _call(name, "tensorplug_dtypes"):
                for d in res:
                    _dt.register_dtype(d)
                    info.dtypes.append(d)
            for res in _call(name, "tensorplug_backends"):
                for b in res:
                    _add_backend(name, info, b)
            _call(name, "tensorplug_register_kernels", library=_library_factory)
            for res in _call(name, "tensorplug_namespace"):
                for pub, value in res.items():
                    _check_public_name(pub)
                    NAMESPACE[pub] = value
                    NAMESPACE_OWNER[pub] = name
                    NAME_PROVIDERS[pub] = name
                    info.names.append(pub)
    except BaseException as e:  # SystemExit and KeyboardInterrupt too: never half a plugin
        _undo(name, info)
        info.state = "failed"
        info.error = f"{type(e).__name__}: {e}"
        info.traceback = traceback.format_exc()
        raise
    info.state = "enabled"
    info.error = None
    return info


def _initializing(ep):
    """Whether the module of entry point ``ep`` is partly initialised (its import is under way)."""
    if ep is None:
        return False
    mod = sys.modules.get(ep.value.split(":")[0].strip())
    spec = getattr(mod, "__spec__", None) if mod is not None else None
    return bool(getattr(spec, "_initializing", False))


def complete_pending():
    """Enable the plugins left ``pending`` because their module was still importing.

    Called where the core finds something missing (a backend, a kernel, a public
    name) and by the listing. Returns whether any plugin got enabled, so the
    caller knows a retry can succeed. Costs one truth test when none is pending.
    """
    if not _PENDING[0]:
        return False
    with _LOCK:
        ready = [i.name for i in builtins.list(_PLUGINS.values())
                 if i.state == "pending" and not _initializing(i.entry_point)]
        # a plugin waiting on another that is still importing fails again and waits again
        _enable_all(ready)
        _PENDING[0] = any(i.state == "pending" for i in builtins.list(_PLUGINS.values()))
        return any(_PLUGINS[n].state == "enabled" for n in ready if n in _PLUGINS)


class LazyName:
    """A public name whose object is imported on first use: ``LazyName("pkg.module", "attr")``.

    A plugin's ``tensorplug_namespace`` hook returns these for names whose modules cost import time
    (anything that needs ``tensorplug.nn``), so ``import tensorplug`` does not pay for them.
    """

    __slots__ = ("module", "attr")

    def __init__(self, module, attr):
        self.module, self.attr = module, attr

    def __repr__(self):
        return f"LazyName({self.module!r}, {self.attr!r})"


_CACHED: dict = {}  # "module.attr" -> the module a resolved plugin name was stored on as an attribute


def cache_on_module(pub, value, module):
    """Store ``value`` (plugin name ``pub`` = "module.attr", just resolved) as an attribute of ``module``, so
    later lookups are plain attribute reads instead of ``__getattr__`` calls; the plugin's removal takes
    it off again. For the modules whose functions sit on hot paths (``tensorplug.distributed``)."""
    if pub in NAMESPACE and NAMESPACE[pub] is value:
        setattr(module, pub.rpartition(".")[2], value)
        _CACHED[pub] = module


def _uncache(pub):
    module = _CACHED.pop(pub, None)
    if module is not None:
        module.__dict__.pop(pub.rpartition(".")[2], None)


def namespace_value(pub):
    """The object of public name ``pub`` (a :class:`LazyName` is imported and replaced on first use)."""
    value = NAMESPACE[pub]
    if value.__class__ is LazyName:
        value = getattr(importlib.import_module(value.module), value.attr)
        if pub in NAMESPACE:
            NAMESPACE[pub] = value
    return value


# core submodules that take names from plugins: a plugin's name "amp.autocast" is tensorplug.amp.autocast
EXTENSIBLE_MODULES = ("amp", "ao.quantization", "ao.nn.quantized", "ao.nn.quantized.dynamic", "quantization",
                      "distributed")


def _check_public_name(pub):
    module, dot, attr = pub.rpartition(".") if isinstance(pub, str) else ("", "", pub)
    if not isinstance(attr, str) or not attr.isidentifier():
        raise ValueError(f"public name {pub!r} is not a Python identifier")
    if dot and module not in EXTENSIBLE_MODULES:
        raise ValueError(f"public name {pub!r}: only the modules {', '.join(EXTENSIBLE_MODULES)} of tensorplug "
                         f"take names from plugins")
    if pub in NAMESPACE_OWNER:
        raise ValueError(f"name {pub!r} is already provided by plugin {NAMESPACE_OWNER[pub]!r}")
    target = sys.modules.get(f"tensorplug.{module}" if dot else "tensorplug")
    if target is not None and attr in vars(target):
        raise ValueError(f"name {pub!r} would shadow tensorplug.{pub}, which the core defines")


def public(name):
    """``tensorplug.NAME`` from an enabled plugin (the AttributeError naming the plugin otherwise)."""
    if name in NAMESPACE or (not name.startswith("__") and complete_pending() and name in NAMESPACE):
        return namespace_value(name)
    raise missing_name_error(name)


def plugin_name(module, attr):
    """``tensorplug.MODULE.ATTR`` from an enabled plugin (AttributeError naming the plugin otherwise).

    The ``__getattr__`` of each module of :data:`EXTENSIBLE_MODULES` calls this.
    """
    pub = f"{module}.{attr}"
    if pub in NAMESPACE or (not attr.startswith("__") and complete_pending() and pub in NAMESPACE):
        return namespace_value(pub)
    raise missing_name_error(pub)


def _library_factory(ns, kind="IMPL", dispatch_key=""):
    return Library(ns, kind, dispatch_key)


def _add_backend(plugin, info, b):
    if b.name in BACKENDS:
        raise ValueError(f"device type {b.name!r} is already served by plugin {BACKENDS[b.name].owner!r}")
    comp = REGISTRY.add_backend(b.key_name, record=b, slot=b.slot)
    b.bit = comp.bit
    b.ks = comp.bit | Dense.bit
    b.owner = plugin
    BACKENDS[b.name] = b
    _backend.BACKEND_PROVIDERS[b.key_name] = (plugin, distribution_of(plugin))
    info.backends.append(b.name)
    if b.key_name == _privateuse1.KEY_NAME:
        _privateuse1.install(b.name)


def _undo(name, info):
    destroy_owned_by(name)
    for pub in info.names:
        NAMESPACE.pop(pub, None)
        NAMESPACE_OWNER.pop(pub, None)
        _uncache(pub)
    for bname in info.backends:
        b = BACKENDS.pop(bname, None)
        if b is not None:
            REGISTRY.remove_backend(b.key_name)
        _privateuse1.remove(bname)
    for d in info.dtypes:
        _dt.unregister_dtype(d)
    for k in info.keys:
        if k in REGISTRY.functionality:
            REGISTRY.remove_functionality(k)
    info.names, info.backends, info.dtypes, info.keys = [], [], [], []
    if _pm.get_plugin(name) is not None:
        _pm.unregister(name=name)
    _d.invalidate_caches()


def disable(name):
    """Disable plugin ``name``: its keys, backends, kernels and public names disappear."""
    with _LOCK:
        info = _PLUGINS.get(name)
        if info is None:
            raise ValueError(f"unknown plugin {name!r}; known: {sorted(_PLUGINS)}")
        if info.state == "enabled":
            _undo(name, info)
        info.state = "disabled"
        return info


def list():
    """Every known plugin (enabled, disabled or failed), as :class:`PluginInfo` records."""
    complete_pending()
    plugins = dict(_PLUGINS)  # a copy: another thread may register one meanwhile
    return [plugins[k] for k in sorted(plugins)]


def get(name):
    """The :class:`PluginInfo` of plugin ``name`` (KeyError if unknown)."""
    complete_pending()
    return _PLUGINS[name]


def is_enabled(name):
    """Whether plugin ``name`` is known and enabled."""
    complete_pending()
    info = _PLUGINS.get(name)
    return info is not None and info.state == "enabled"


def distribution_of(name):
    """The distribution to ``pip install`` for plugin ``name`` (``tensorplug-NAME`` by convention)."""
    info = _PLUGINS.get(name)
    return (info.dist if info is not None else None) or KNOWN_PLUGINS.get(name) or f"tensorplug-{name}"


def describe_plugin(name, dist=None):
    """"the plugin 'x' (pip install dist), which is <state, and how to enable it>", for error messages."""
    info = _PLUGINS.get(name)
    head = f"the plugin {name!r} (pip install {dist or distribution_of(name)}), which is "
    if info is None:
        return head + "not installed"
    if info.state == "enabled":
        return head + "enabled"
    if info.state == "failed":
        return head + f"installed but failed to load: {info.error}"
    return head + (f"installed but disabled; enable it with tensorplug.plugins.enable({name!r}) "
                   f"or check TENSORPLUG_LOAD_PLUGINS / TENSORPLUG_DISABLE_PLUGINS")


def missing_name_error(name):
    """AttributeError for ``tensorplug.NAME`` (or ``tensorplug.MODULE.NAME``) that a plugin would provide."""
    owner = NAME_PROVIDERS.get(name)
    module, dot, attr = name.rpartition(".")
    where = f"tensorplug.{module}" if dot else "tensorplug"
    if owner is None:
        return AttributeError(f"module {where!r} has no attribute {attr!r}")
    if is_enabled(owner):
        return AttributeError(f"module {where!r} has no attribute {attr!r} (the plugin {owner!r} "
                              f"is enabled but does not provide it)")
    return AttributeError(f"tensorplug.{name} is provided by {describe_plugin(owner)}")



# the layers below the manager (backends, the dispatcher) complete pending plugins and describe
# plugins in their errors through these two hooks
_backend.MANAGER.complete_pending = complete_pending
_backend.MANAGER.describe_plugin = describe_plugin
