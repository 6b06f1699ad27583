"""The registration API for code outside the core: ``tensorplug.library``.

>>> lib = Library("myns", "DEF")
>>> lib.define("twice(Tensor self) -> Tensor")
>>> lib.impl("twice", lambda x: x + x, "CompositeImplicitAutograd")
>>> tensorplug.ops.myns.twice(x)

Every registration is owned by the plugin that was being loaded when the
library was created (or by ``"user"``); disabling that plugin destroys its
libraries, which removes their operators, kernels and fallbacks. The owner is
per thread: a library created in one thread while another thread enables a
plugin is not that plugin's (nor is one a plugin's hook creates in a thread of
its own).
"""

from __future__ import annotations

import threading

from . import dispatcher as _d
from .keys import REGISTRY, ALIAS_KEYS
from .schema import parse_schema
from .._warn import warn_user  # noqa: F401  (for plugins: warnings at the user's line)


class _Owner(threading.local):
    name = "user"  # who owns the libraries this thread creates


_owner = _Owner()
LIBRARIES: list = []


class owner_scope:
    """Context manager: libraries the calling thread creates inside belong to plugin ``name``."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.saved = _owner.name
        _owner.name = self.name

    def __exit__(self, *exc):
        _owner.name = self.saved
        return False


def parse_dispatch_key(name):
    """``"AutogradCPU"`` -> ("Autograd", "CPU"); ``"CPU"`` -> ("Dense", "CPU");
    ``"Autograd"`` -> ("Autograd", None) (every backend); aliases map to themselves."""
    if name in ALIAS_KEYS:
        return name, None
    if name in REGISTRY.functionality:
        return name, None
    if name in REGISTRY.backend_by_name:
        return "Dense", name
    for fname, fkey in tuple(REGISTRY.functionality.items()):  # a copy: a plugin may add a key meanwhile
        if fkey.per_backend and name.startswith(fname):
            rest = name[len(fname):]
            if rest in REGISTRY.backend_by_name:
                return fname, rest
    known = sorted(REGISTRY.functionality) + sorted(REGISTRY.backend_by_name) + list(ALIAS_KEYS)
    raise ValueError(f"unknown dispatch key {name!r}; known keys: {', '.join(known)} "
                     f"(and functionality x backend, such as AutogradCPU)")


class Library:
    """A set of operator definitions and kernel registrations in one namespace.

    ``kind`` is ``"DEF"`` (this library defines the namespace; no other DEF
    library may), ``"FRAGMENT"`` (adds definitions to a namespace) or
    ``"IMPL"`` (registers kernels only). ``dispatch_key`` is the default key
    for :meth:`impl`.
    """

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("DEF", "FRAGMENT", "IMPL"):
            raise ValueError(f"Library kind must be DEF, FRAGMENT or IMPL, got {kind!r}")
        if not ns.isidentifier():
            raise ValueError(f"invalid namespace {ns!r}")
        if kind == "DEF":
            for lib in LIBRARIES:
                if lib.kind == "DEF" and lib.ns == ns:
                    raise RuntimeError(f"namespace {ns!r} is already defined by a DEF library of "
                                       f"{lib.owner!r}; use kind='FRAGMENT' to add to it")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self.owner = _owner.name
        self._ops: list = []
        self._regs: list = []       # (op, registration)
        self._fallbacks: list = []  # registrations
        LIBRARIES.append(self)

    def __repr__(self):
        return f"Library(ns={self.ns!r}, kind={self.kind!r}, owner={self.owner!r})"

    def define(self, schema, alias_analysis="", *, check=None, tags=()):
        """Define an operator from a schema string; returns its :class:`OpOverload`.

        ``check(*args)``, if given, runs once per call before dispatch (argument
        checks shared by every backend, so all raise the same errors).
        ``tags``: :class:`tensorplug.Tag` members the op carries as ``op.tags``
        (``Tag.pointwise`` gives it vmap's elementwise rule, for instance).
        ``alias_analysis`` is accepted for PyTorch compatibility and ignored:
        aliasing is read from the schema's annotations.
        """
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed on an IMPL library; use DEF or FRAGMENT")
        op = _d.define_op(self.ns, schema, self.owner, self, check, tags)
        self._ops.append(op)
        return op

    def _resolve_op(self, op_name):
        op = op_name if isinstance(op_name, _d.OpOverload) else _d.lookup_op(
            op_name if "::" in op_name else f"{self.ns}::{op_name}")
        if op.namespace != self.ns:
            raise ValueError(f"operator '{op.qualname}' is not in this library's namespace {self.ns!r}; "
                             f"use Library({op.namespace!r}, 'IMPL') to register kernels for it")
        return op

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key``.

        ``with_keyset=True`` passes the key set (masked below this key) as the
        first argument so the kernel can redispatch. Registering the same
        (op, key) twice raises unless ``allow_override=True``.
        """
        key = dispatch_key or self.dispatch_key
        if not key:
            raise ValueError("impl() needs a dispatch_key (or a default one on the Library)")
        if not callable(fn) and fn is not _d.FALLTHROUGH:
            raise TypeError(f"impl(): kernel must be callable, got {type(fn).__name__}")
        op = self._resolve_op(op_name)
        fname, bname = parse_dispatch_key(key)
        if with_keyset and fn is _d.FALLTHROUGH:
            raise ValueError("impl(): a fallthrough kernel takes no key set")
        reg = _d.Registration(fn, fname, bname, self.owner, with_keyset, self)
        op._register(reg, allow_override)
        self._regs.append((op, reg))
        return fn

    def fallback(self, fn, dispatch_key="", *, allow_override=False):
        """Register a boxed fallback ``fn(op, keyset, *args)`` for every op at ``dispatch_key``.

        Pass :data:`FALLTHROUGH` to make the key fall through.
        """
        key = dispatch_key or self.dispatch_key
        if not key:
            raise ValueError("fallback() needs a dispatch_key (or a default one on the Library)")
        if not callable(fn) and fn is not _d.FALLTHROUGH:
            raise TypeError(f"fallback(): kernel must be callable, got {type(fn).__name__}")
        fname, bname = parse_dispatch_key(key)
        if fname in ALIAS_KEYS:
            raise ValueError("fallbacks cannot be registered for alias keys")
        reg = _d.Registration(fn, fname, bname, self.owner, False, self)
        _d.register_fallback(reg, allow_override)
        self._fallbacks.append(reg)

    def _destroy(self):
        """Remove everything this library registered (what disabling its plugin does)."""
        for op, reg in reversed(self._regs):
            op._unregister(reg)
        for reg in reversed(self._fallbacks):
            _d.unregister_fallback(reg)
        for op in self._ops:
            _d.undefine_op(op)
            for other in tuple(LIBRARIES):
                if other is not self:
                    other._regs = [r for r in other._regs if r[0] is not op]
        self._regs, self._fallbacks, self._ops = [], [], []
        if self in LIBRARIES:
            LIBRARIES.remove(self)
        _d.invalidate_caches()


def destroy_owned_by(owner):
    """Destroy every library that plugin ``owner`` created (what disabling it does)."""
    for lib in [lib for lib in LIBRARIES if lib.owner == owner]:
        lib._destroy()


def define(qualname_schema, *, lib=None, tags=()):
    """Function form: ``define("myns::op(Tensor x) -> Tensor")``; ``tags`` as in :meth:`Library.define`."""
    ns = parse_schema(qualname_schema).namespace
    if not ns:
        raise ValueError(f"define() needs a qualified schema 'namespace::name(...) -> ...', "
                         f"got {qualname_schema!r}")
    lib = lib or Library(ns, "FRAGMENT")
    return lib.define(qualname_schema, tags=tags)


def impl(qualname, dispatch_key, fn=None, *, lib=None, **kw):
    """Function form: ``impl("myns::op", "CPU", fn)`` or as a decorator."""
    ns = qualname.partition("::")[0]

    def register(f):
        (lib or Library(ns, "IMPL")).impl(qualname, f, dispatch_key, **kw)
        return f
    return register(fn) if fn is not None else register

