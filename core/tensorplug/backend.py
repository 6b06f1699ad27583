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

from .device import device as _device

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
        from . import dtypes as _dt
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


def canonical_device(dev):
    """The device a tensor requested on ``dev`` lives on: the index validated (``invalid device
    ordinal``) and filled in by the backend (``openreg`` -> the current ``openreg:N``; ``cpu:1`` -> ``cpu``)."""
    from .dispatch.argcheck import normalize_device
    d = normalize_device(dev)
    return backend_for(d).normalize_device(d)


def backend_of(typ) -> Backend:
    """The backend record serving device type ``typ`` (a string): one dict lookup when it exists."""
    try:
        return BACKENDS[typ]
    except KeyError:
        return _missing_backend(typ)


def _missing_backend(typ):
    """Complete plugins whose import was pending, then return the backend or raise the error for ``typ``."""
    import sys
    plugins = sys.modules.get("tensorplug.plugins")
    if plugins is not None and plugins.complete_pending() and typ in BACKENDS:
        return BACKENDS[typ]
    raise no_backend_error(typ)


def no_backend_error(typ):
    """The RuntimeError for device type ``typ`` when no backend serves it, naming the plugin that would."""
    from .dispatch.dispatcher import _provider_hint, BACKEND_PROVIDERS
    known = next((k for k, v in BACKEND_PROVIDERS.items() if v[0] == typ or k.lower() == typ), None)
    hint = _provider_hint(known) if known else f"no installed plugin provides the device type {typ!r}"
    return RuntimeError(f"no backend is registered for device type '{typ}': {hint}. "
                        f"Registered: {sorted(BACKENDS) or 'none'}")
