"""The backend record: what a compute backend plugin tells the core.

A backend plugin returns a :class:`Backend` subclass instance from the
``tensorplug_backends`` hook. The core then assigns it a backend bit, so
tensors created on its devices carry ``Dense | <bit>`` in their key set, and
kernels registered under the backend's ``key_name`` (``"CPU"``) serve them.

The record only deals with memory and metadata; computation lives in kernels.
A backend's *native* value is whatever strided array it uses (a numpy view
for cpu, a cupy array for cuda, a C++ handle for openreg); the core never
looks inside it except through these methods.
"""

from __future__ import annotations

import itertools

from . import _state
from . import dtypes as _dt
from .device import device as _device
from .dispatch.keys import Dense as _Dense

_DENSE_BIT = _Dense.bit

BACKENDS: dict = {}  # device type ("cpu") -> Backend


class Backend:
    """Base class for backend records. Override what your device needs.

    Required: ``name`` (device type, e.g. ``"cpu"``), ``key_name`` (dispatch
    key name, e.g. ``"CPU"``), and the memory methods ``empty``,
    ``from_numpy``, ``to_numpy``, ``strides``, ``storage``, ``as_strided``.
    """

    name = "?"
    key_name = "?"
    #: set by the core when the backend is registered
    bit = 0
    ks = 0
    owner = None
    slot = None  # request a fixed backend slot (PrivateUse1 uses 15); None = first free
    # read by the autocast plugin (docs/autocast.md): the lower-precision dtypes the device computes
    # in (None: float16 and bfloat16), a region's default dtype (None: bfloat16 on cpu, float16
    # elsewhere), which of PyTorch's lists it starts from ("cpu" or "cuda"; None: cpu's for cpu,
    # cuda's elsewhere) and {op name: category or None} overrides of those lists
    autocast_dtypes = None
    autocast_dtype = None
    autocast_lists = None
    autocast_policy = None
    #: the DLPack device type of the backend's memory (2 = kDLCUDA), or None: ``tensorplug.from_dlpack``
    #: hands objects of that type to :meth:`from_dlpack`, and ``Tensor.__dlpack__`` exports the native array
    dlpack_device_type = None
    #: read by tensorplug-compile (docs/compile.md, "A backend's lowering"): an object whose
    #: ``lower(op_name, args, out)`` returns a function computing an op on native arrays into a buffer
    #: (or None), with ``empty(shape, dtype)``, ``enter()`` and ``exit(token)``; None: replays call kernels
    compile_lowering = None

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return 1

    def normalize_device(self, dev):
        """The canonical device for ``dev`` (for instance ``cuda`` -> ``cuda:0``)."""
        if dev.index is not None and dev.index >= self.device_count():
            raise RuntimeError(f"{self.name} device index {dev.index} is out of range "
                               f"(device_count() is {self.device_count()})")
        return dev

    def supported_dtypes(self):
        return _dt.all_dtypes()

    # -- memory -----------------------------------------------------------------
    def empty(self, shape, dtype, device):
        """Uninitialised contiguous native array of ``shape`` and ``dtype`` on ``device``."""
        raise NotImplementedError

    def from_numpy(self, array, device):
        """Native array holding the values of host ``array`` (zero-copy where possible)."""
        raise NotImplementedError

    def to_numpy(self, native):
        """A numpy array with the values of ``native`` (zero-copy where possible)."""
        raise NotImplementedError

    def strides(self, native):
        """Strides of ``native`` in elements."""
        raise NotImplementedError

    def storage(self, native):
        """``(root, offset)``: the buffer ``native`` views and its offset in elements."""
        raise NotImplementedError

    def as_strided(self, root, shape, strides, offset, dtype):
        """A native view of ``root`` with the given metadata (elements of ``dtype``)."""
        raise NotImplementedError

    def storage_nbytes(self, root):
        return 0

    def from_dlpack(self, ext, device_index):
        """A native array sharing the memory of DLPack producer ``ext`` on device ``device_index``
        (backends with a ``dlpack_device_type``)."""
        raise BufferError(f"{self.name} cannot import DLPack tensors")

    def synchronize(self, device=None):
        pass

    def manual_seed(self, seed):
        pass

    def __repr__(self):
        return f"<Backend {self.name} key={self.key_name}>"


def backend_for(dev) -> Backend:
    """The backend record serving device ``dev`` (a device or string).

    This (and its twin :func:`backend_of`, for a device type string) is the one
    place that looks backends up by name: a device type with no registered
    backend raises the same error everywhere, whether a new tensor is made or
    an existing one is used after its plugin was disabled.
    """
    typ = dev.type if isinstance(dev, _device) else _device(dev).type
    try:
        return BACKENDS[typ]
    except KeyError:
        return _missing_backend(typ)


def backend_of(typ) -> Backend:
    """The backend record serving device type ``typ`` (a string): one dict lookup when it exists."""
    try:
        return BACKENDS[typ]
    except KeyError:
        return _missing_backend(typ)


# -- devices -----------------------------------------------------------------------------------
_device_norm_cache: dict = {}  # device with an index -> canonical device; cleared by clear_device_caches
_device_ks_cache: dict = {}    # device -> key set of a factory call; cleared by clear_device_caches


# A new value at every clear_device_caches(), before the caches are cleared: a lookup that began
# before a backend came or went must not store what it found (each value is written once).
_cache_generation = [0]
_cache_ticks = itertools.count(1)


def clear_device_caches():
    """Forget the cached device normalizations and key sets (the dispatcher calls this after any
    registration change: a backend may have come or gone)."""
    _cache_generation[0] = next(_cache_ticks)
    _device_norm_cache.clear()
    _device_ks_cache.clear()


def _store(cache, key, value, gen):
    """``cache[key] = value``, taken out again if the caches were cleared since generation ``gen``
    (another thread disabled a backend meanwhile): the next lookup recomputes it."""
    cache[key] = value
    if _cache_generation[0] != gen:
        cache.pop(key, None)


def normalize_device(dev):
    """The canonical device for ``dev``, whose index is checked against its backend's ``device_count()``.

    A device without an index (the backend's current device) is returned as it
    is. The CPU has one device whatever the index (``cpu:1`` is ``cpu``, as in
    PyTorch). Any other index must be below ``device_count()``, or
    ``RuntimeError: ... invalid device ordinal`` is raised before a kernel
    sees the device. The result is cached per (interned) device object.
    """
    try:
        return _device_norm_cache[dev]
    except KeyError:
        pass
    gen = _cache_generation[0]
    d = _device(dev)
    if d.index is None:
        return d
    b = backend_for(d)
    if d.type == "cpu":
        n = _device("cpu")
    else:
        count = b.device_count()
        if d.index >= count:
            if count == 0:
                b.normalize_device(d)  # a backend without devices may say why (no driver, no GPU)
            raise RuntimeError(f"{d.type} error: invalid device ordinal: device {d} was requested but "
                               f"device_count() is {count}")
        n = b.normalize_device(d)
    _store(_device_norm_cache, dev, n, gen)
    return n


def canonical_device(dev):
    """The device a tensor requested on ``dev`` lives on: the index validated (``invalid device
    ordinal``) and filled in by the backend (``openreg`` -> the current ``openreg:N``; ``cpu:1`` -> ``cpu``)."""
    d = normalize_device(dev)
    return backend_for(d).normalize_device(d)


def device_keyset(dev):
    """Key set for a factory call on device ``dev`` (None means the default device)."""
    if dev is None:
        dev = _state.default_device
    try:
        return _device_ks_cache[dev]
    except KeyError:
        gen = _cache_generation[0]
        ks = backend_for(dev).ks | _DENSE_BIT
        _store(_device_ks_cache, dev, ks, gen)
        return ks


# -- what the plugin manager (which sits above this module) tells it ------------------------------
BACKEND_PROVIDERS: dict = {}  # backend key name -> (plugin, distribution), remembered after disable


class _ManagerHooks:
    """Two callables the plugin manager installs when it is imported, so the modules below it can
    complete a plugin whose import was pending, and describe a plugin in an error message, without
    importing the manager. Until then they do nothing."""

    @staticmethod
    def complete_pending():
        return False

    @staticmethod
    def describe_plugin(plugin, dist=None):
        return f"the plugin {plugin!r} (pip install {dist or 'tensorplug-' + plugin})"


MANAGER = _ManagerHooks()


def provider_hint(backend_name):
    """Which plugin provides the backend ``backend_name`` and how to get it enabled."""
    prov = BACKEND_PROVIDERS.get(backend_name)
    if prov is None:
        return f"no installed plugin provides the backend {backend_name!r}"
    plugin, dist = prov
    return f"the backend {backend_name!r} comes from {MANAGER.describe_plugin(plugin, dist)}"


def _missing_backend(typ):
    """Complete plugins whose import was pending, then return the backend or raise the error for ``typ``."""
    if MANAGER.complete_pending() and typ in BACKENDS:
        return BACKENDS[typ]
    raise no_backend_error(typ)


def no_backend_error(typ):
    """The RuntimeError for device type ``typ`` when no backend serves it, naming the plugin that would."""
    known = next((k for k, v in BACKEND_PROVIDERS.items() if v[0] == typ or k.lower() == typ), None)
    hint = provider_hint(known) if known else f"no installed plugin provides the device type {typ!r}"
    return RuntimeError(f"no backend is registered for device type '{typ}': {hint}. "
                        f"Registered: {sorted(BACKENDS) or 'none'}")
