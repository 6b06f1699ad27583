"""The dispatcher: operator handles, kernel tables and the per-call hot path.

Every operator is an :class:`OpOverload`. Calling it runs a small function
generated from its schema (``op.entry``) that

1. ORs the key sets of its tensor arguments (``_ks``), applies the
   thread-local include/exclude sets only when some thread has them set,
2. looks the key set up in the operator's cache (one dict lookup), resolving
   and caching on a miss, and
3. calls the kernel with every argument positionally, in schema order.

Resolution walks the functionality keys from highest to lowest priority. For
each one it takes, in PyTorch's precedence: a kernel on the exact runtime key
(or registered for all backends), then CompositeExplicitAutograd (backend
slots only), then CompositeImplicitAutograd (keys that accept composites),
then the key's boxed fallback. A fallthrough fallback masks the key off and
moves on, so at call time it costs nothing.

Kernels registered ``with_keyset=True`` and boxed fallbacks receive the key
set masked below their own key; they redispatch with ``op.redispatch(ks,
*args)`` and never re-read the thread-local state.

For ops that write to an argument (``Tensor(a!)``), the kernel resolved at
the Dense key is wrapped to bump the written tensors' version counters, so
every in-place call counts one write however it reaches the backend; the
wrapper first rejects, for every backend, a written tensor whose elements
share memory (an expanded view) or that partly overlaps another argument.
"""

from __future__ import annotations

from .. import _codecache

import functools
import itertools
import keyword
import numbers
import threading
import sys

from .. import backend as _backend
from .. import dtypes as _dt
from ..device import device as _device
from ..tensor import Tensor
from . import argcheck
from . import keys as _keys
from .keys import REGISTRY, below
from .schema import parse_schema, SchemaError
from .tags import as_tags

FALLTHROUGH = object()
"""Register this as a fallback (or kernel) to make a key fall through."""


# --------------------------------------------------------------------------
# Thread-local include / exclude sets
# --------------------------------------------------------------------------
class _TLS(threading.local):
    include = 0
    exclude = 0

    def __init__(self):
        self.saved = []  # states to restore, innermost last; guards nest per thread


_tls = _TLS()
# idents of the threads whose include/exclude sets are not empty: a set, since its add and discard
# are atomic, where a shared counter would need a lock around every change
_tls_active: set = set()
_get_ident = threading.get_ident


def tls_state():
    """(include, exclude) of the calling thread."""
    return _tls.include, _tls.exclude


def set_tls_state(include, exclude):
    """Set the calling thread's include/exclude key sets (ints)."""
    _tls.include = include
    _tls.exclude = exclude
    if include or exclude:
        _tls_active.add(_get_ident())
    else:
        _tls_active.discard(_get_ident())


class _Guard:
    """Adds bits to the include/exclude sets on entry, restores them on exit.

    The saved state lives in the thread's own stack, so one guard object may
    be shared between threads and re-entered.
    """

    __slots__ = ("inc", "exc")

    def __init__(self, inc, exc):
        self.inc, self.exc = inc, exc

    def __enter__(self):
        inc, exc = _tls.include, _tls.exclude
        _tls.saved.append((inc, exc))
        set_tls_state(inc | self.inc, exc | self.exc)
        return self

    def __exit__(self, *exc):
        set_tls_state(*_tls.saved.pop())
        return False


def _below_autograd(op, kernel):
    """``kernel`` run with Autograd excluded, when an argument carries the Autograd bit and grad mode
    has not excluded it already: other calls record nothing anyway and skip switching the TLS."""
    args = op.schema.arguments
    names = [f"a{i}" for i in range(len(args))]
    terms = []
    for n, a in zip(names, args):
        if a.type != "Tensor":
            continue
        if a.is_list:
            terms.append(f"_ks_list({n})")
        elif a.optional:
            terms.append(f"({n}._ks if {n} is not None else 0)")
        else:
            terms.append(f"{n}._ks")
    call = ", ".join(names)
    src = "\n".join([
        f"def run({call}):",
        f"    if not (({' | '.join(terms) or '0'}) & _BIT) or _tls.exclude & _BIT:",
        f"        return _kernel({call})",
        "    inc, exc = _tls.include, _tls.exclude",
        "    set_tls_state(inc, exc | _BIT)",
        "    try:",
        f"        return _kernel({call})",
        "    finally:",
        "        set_tls_state(inc, exc)",
    ]) + "\n"
    ns = {"_kernel": kernel, "_BIT": _keys.Autograd.bit, "_tls": _tls, "set_tls_state": set_tls_state,
          "_ks_list": argcheck.ks_of_list}
    exec(_codecache.compiled(src, f"<tensorplug below autograd {op.qualname}>"), ns)
    run = ns["run"]
    run.__name__ = getattr(kernel, "__name__", "composite")
    return run


def _keybits(k):
    if isinstance(k, int):
        return k
    if isinstance(k, str):
        try:
            k = REGISTRY.functionality[k]
        except KeyError:
            raise ValueError(f"unknown functionality key {k!r}; known: {sorted(REGISTRY.functionality)}") from None
    return k.bit


def include_keys(*keys):
    """Context manager adding functionality keys to this thread's include set."""
    bits = 0
    for k in keys:
        bits |= _keybits(k)
    return _Guard(bits, 0)


def exclude_keys(*keys):
    """Context manager adding functionality keys to this thread's exclude set (exclude wins)."""
    bits = 0
    for k in keys:
        bits |= _keybits(k)
    return _Guard(0, bits)


# --------------------------------------------------------------------------
# Registrations
# --------------------------------------------------------------------------
class Registration:
    """One kernel or fallback in a table: who registered it and how to call it.

    ``override``: registered with ``allow_override=True``, so it stays in force over
    a registration of the same slot that comes later without it (a plugin enabled again
    after a user replaced its kernel).
    """

    __slots__ = ("kernel", "key", "backend", "owner", "with_keyset", "library", "override")

    def __init__(self, kernel, key, backend, owner, with_keyset, library, override=False):
        self.kernel = kernel
        self.key = key
        self.backend = backend
        self.owner = owner
        self.with_keyset = with_keyset
        self.library = library
        self.override = override

    @property
    def runtime_name(self):
        if self.backend is None:
            return self.key
        return self.backend if self.key == "Dense" else self.key + self.backend


OPS: dict = {}            # "ns::name.overload" -> OpOverload
PACKETS: dict = {}        # "ns::name" -> OpOverloadPacket
FALLBACKS: dict = {}      # (key name, backend name | None) -> Registration in force
_FALLBACK_STACKS: dict = {}  # same slots -> every live registration, the one in force last
# Who registered kernels and fallbacks, remembered after they are removed, so
# the missing-kernel error can name the plugin that would provide them.
KERNEL_PROVIDERS: dict = {}    # (op qualname, key name, backend name | None) -> plugin
FALLBACK_PROVIDERS: dict = {}  # (key name, backend name | None) -> plugin


FALLBACK_LOG = [None]
"""``FALLBACK_LOG[0]``: a set that collects the qualified names of operators a Dense
fallback serves while it is not None (the conformance kit sets it around each case)."""


def _dense_fallback(kernel, op, ks, *args):
    log = FALLBACK_LOG[0]
    if log is not None:
        log.add(op.qualname)
    return kernel(op, ks, *args)


# A new value after every registration change, before the caches are cleared: a resolution that
# began before a change must not store what it found (see OpOverload._resolve). Each value comes
# from a counter (whose next() is atomic), so no two changes write the same one, even in two threads.
_GENERATION = [0]
_TICKS = itertools.count(1)


def _changed():
    _GENERATION[0] = next(_TICKS)


def invalidate_caches():
    """Forget every operator's resolved kernels (after any registration change)."""
    _changed()
    for op in tuple(OPS.values()):  # a copy: another thread may define an operator meanwhile
        op.cache.clear()
    _backend.clear_device_caches()


REGISTRY.listeners.append(invalidate_caches)


def _push(stacks, table, slot, reg, allow_override, what):
    """Put ``reg`` in force at ``slot``, keeping the ones it overrides underneath.

    Without ``allow_override``, a slot that holds only overrides takes ``reg`` beneath them: the
    kernel they replaced is coming back (its plugin enabled again), and they stay in force.
    """
    stack = stacks.setdefault(slot, [])
    if stack and not allow_override:
        plain = [r for r in stack if not r.override]
        if plain:
            raise RuntimeError(f"{what} is already registered by {plain[-1].owner!r}; "
                               f"pass allow_override=True to replace it")
        stack.insert(0, reg)
        return
    reg.override = allow_override
    stack.append(reg)
    table[slot] = reg


def _pop(stacks, table, slot, reg):
    """Remove ``reg`` wherever it is; the newest remaining registration takes over."""
    stack = stacks.get(slot, [])
    for i, r in enumerate(stack):
        if r is reg:
            del stack[i]
            break
    if stack:
        table[slot] = stack[-1]
    else:
        stacks.pop(slot, None)
        table.pop(slot, None)


def register_fallback(reg, allow_override=False):
    """Make ``reg`` the boxed fallback of its (key, backend) slot."""
    slot = (reg.key, reg.backend)
    _push(_FALLBACK_STACKS, FALLBACKS, slot, reg, allow_override, f"a fallback for '{reg.runtime_name}'")
    FALLBACK_PROVIDERS[slot] = reg.owner
    invalidate_caches()


def unregister_fallback(reg):
    """Remove fallback ``reg``; the one it overrode, if any, is in force again."""
    _pop(_FALLBACK_STACKS, FALLBACKS, (reg.key, reg.backend), reg)
    invalidate_caches()


def _renamed(backend_name):
    """"[openreg]" after the PrivateUse1 key while a backend holds it; "" for every other key."""
    comp = REGISTRY.backend_by_name.get(backend_name) if backend_name == "PrivateUse1" else None
    return f"[{comp.record.name}]" if comp is not None and comp.record is not None else ""


class OpOverload:
    """An operator overload such as ``tensorplug::add.Tensor``.

    Call it like a function. ``op.entry`` is the same call without the
    ``__call__`` indirection (what Tensor methods use); ``op.positional``
    takes every argument positionally in schema order (what composites that
    forward their arguments use); ``op.redispatch(ks, *args)`` calls the
    kernel for an explicit key set.
    """

    def __init__(self, namespace, schema, owner, library, check=None, tags=()):
        self.namespace = namespace
        self.schema = schema
        self.name = schema.name
        self.overload = schema.overload
        self.qualname = f"{namespace}::{schema.full_name}"
        self.owner = owner
        self.library = library
        self.table: dict = {}    # (key name, backend name | None) -> Registration in force
        self._stacks: dict = {}  # same slots -> live registrations, overridden ones underneath
        self.cache: dict = {}    # key set -> kernel callable
        self.check = check
        self.tags = tags  # tensorplug.Tag members, a tuple
        # bits of the before_checks keys at which this op has a kernel (one cell the entry reads): in a
        # thread whose include set has one, that kernel runs the op's checks itself
        self.early = [0]
        self.entry = _make_entry(self)
        if not any(a.kwarg_only for a in schema.arguments):
            self.positional = self.entry  # the same signature: no second function to build
        self._bumper = _make_bumper(self)

    def __call__(self, *args, **kwargs):
        return self.entry(*args, **kwargs)

    def __getattr__(self, name):
        # Built on first use: most ops never need it, and generating every
        # entry twice would double the import cost.
        if name == "positional":
            fn = self.positional = _make_entry(self, positional=True)
            return fn
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self):
        return f"<OpOverload {self.qualname}>"

    def __reduce__(self):
        return (lookup_op, (self.qualname,))

    # -- calling ------------------------------------------------------------
    def redispatch(self, ks, *args):
        """Call the kernel for key set ``ks`` (already masked by the caller)."""
        try:
            k = self.cache[ks]
        except KeyError:
            k = self._resolve(ks)
        return k(*args)

    def kernel_for(self, ks):
        """The callable a call with key set ``ks`` runs (resolved and cached as a call would): what a
        tracing transform calls directly to replay a recorded call without the dispatcher."""
        try:
            return self.cache[ks]
        except KeyError:
            return self._resolve(ks)

    def provenance(self, ks):
        """How a call with key set ``ks`` is served at the first key that does not fall through:
        ``"kernel"``, ``"composite"`` (it decomposes into other ops), ``"fallback"`` or ``"missing"``."""
        return self._served(ks)[0]

    def owner_for(self, ks):
        """The plugin (or ``"user"``, ``"core"``) whose registration serves a call with key set ``ks``;
        None when nothing does."""
        reg = self._served(ks)[1]
        return reg.owner if reg is not None else None

    def _served(self, ks):
        backend = REGISTRY.highest_backend(ks)
        bname = backend.name if backend is not None else None
        for fkey in REGISTRY.functionality_keys_in(ks):
            reg, prov = self.lookup(fkey, bname)
            if prov != "fallthrough":
                return prov, reg
        return "missing", None

    def _resolve(self, ks):
        # Another thread may change the registrations meanwhile (disable a plugin): every change
        # bumps the generation, then clears the cache. Checking after the store means a kernel
        # found before a change is either cleared by it or taken out again here.
        gen = _GENERATION[0]
        k = self._resolve_uncached(ks)
        self.cache[ks] = k
        if _GENERATION[0] != gen:
            self.cache.pop(ks, None)
        return k

    def _resolve_uncached(self, ks):
        backend = REGISTRY.highest_backend(ks)
        bname = backend.name if backend is not None else None
        for fkey in REGISTRY.functionality_keys_in(ks):
            reg, prov = self.lookup(fkey, bname)
            if prov == "fallthrough":
                continue
            if reg is None:
                return functools.partial(self._raise_missing, fkey, backend, ks)
            masked = ks & below(fkey)
            if prov == "fallback":
                if fkey is _keys.Dense:  # a device serving the op elsewhere: recorded for conformance
                    k = functools.partial(_dense_fallback, reg.kernel, self, masked)
                else:
                    k = functools.partial(reg.kernel, self, masked)
            elif reg.with_keyset:
                # a kernel that can bind the key set itself (the generated Autograd kernels)
                # saves the partial's extra call on every dispatch
                bind = getattr(reg.kernel, "bind_keyset", None)
                k = bind(masked) if bind is not None else functools.partial(reg.kernel, masked)
            else:
                k = reg.kernel
            # A Dense fallback (say, a device falling back to the CPU) writes the
            # tensor as much as a kernel does, so both bump the version.
            if self._bumper is not None and fkey is _keys.Dense and prov in ("kernel", "fallback"):
                return self._bumper(k)
            if fkey is _keys.Dense and prov == "composite" and any(
                    key == "Autograd" for key, _ in tuple(self.table)):
                # the op's own Autograd kernel has recorded it: the ops it decomposes into
                # here must not be recorded again (PyTorch's AutoDispatchBelowAutograd)
                return _below_autograd(self, k)
            return k
        return functools.partial(self._raise_missing, None, backend, ks)

    def call_fallback(self, backend_key, *args):
        """Run the boxed fallback registered at the Dense key of backend ``backend_key`` (``"PrivateUse1"``).

        For a backend kernel that cannot serve some calls natively (a dtype it
        has no loop for): handing them to its fallback this way, rather than
        calling the fallback's function directly, lets the conformance kit
        report those calls as "fallback".
        """
        comp = REGISTRY.backend_by_name.get(backend_key)
        reg = FALLBACKS.get(("Dense", backend_key)) or FALLBACKS.get(("Dense", None))
        if comp is None or reg is None or reg.kernel is FALLTHROUGH:
            raise RuntimeError(f"{self.qualname}: no boxed fallback is registered for backend key "
                               f"{backend_key!r}")
        return _dense_fallback(reg.kernel, self, comp.bit, *args)

    def lookup(self, fkey, bname):
        """(registration, provenance) for a functionality key on a backend.

        Provenance is one of kernel, composite, fallback, fallthrough, missing.
        """
        t = self.table
        reg = t.get((fkey.name, bname)) or t.get((fkey.name, None))
        if reg is not None:
            return reg, ("fallthrough" if reg.kernel is FALLTHROUGH else "kernel")
        if fkey is _keys.Dense:
            reg = t.get(("CompositeExplicitAutograd", None))
            if reg is not None:
                return reg, "composite"
        if fkey.composite:
            reg = t.get(("CompositeImplicitAutograd", None))
            # As in PyTorch, a backend kernel (or an explicit composite) for an
            # op means its autograd must not come from the implicit decomposition.
            if reg is not None and not (fkey is _keys.Autograd and (
                    ("Dense", bname) in t or ("Dense", None) in t
                    or ("CompositeExplicitAutograd", None) in t)):
                return reg, "composite"
        fb = FALLBACKS.get((fkey.name, bname)) or FALLBACKS.get((fkey.name, None))
        if fb is not None:
            return fb, ("fallthrough" if fb.kernel is FALLTHROUGH else "fallback")
        return None, "missing"

    def _raise_missing(self, fkey, backend, ks, *args):
        # a plugin imported before tensorplug could not register then: complete it and retry
        if _backend.MANAGER.complete_pending():
            return self._resolve(ks)(*args)
        # a tensor whose backend is no longer registered (its plugin was disabled) gets
        # the same error as creating a tensor on that device would
        BACKENDS, no_backend_error = _backend.BACKENDS, _backend.no_backend_error
        for a in args:
            dev = getattr(a, "_device", None) if not isinstance(a, (list, tuple)) else (
                next((getattr(t, "_device", None) for t in a if getattr(t, "_device", None) is not None), None))
            typ = getattr(dev, "type", None)
            if typ is not None and typ not in BACKENDS:
                raise no_backend_error(typ)
        have = sorted({r.runtime_name for r in tuple(self.table.values())})
        # a backend whose plugin was disabled no longer resolves, but its tensors still carry its bit
        bname = backend.name if backend is not None else REGISTRY.retired_backend(ks)
        if fkey is None:
            key = "<empty key set>"
        elif fkey is _keys.Dense:
            key = bname or "Dense"
        else:
            key = fkey.name + bname if fkey.per_backend and bname else fkey.name
        if fkey is not None and bname:
            key += _renamed(bname)
        msg = (f"Could not run '{self.qualname}' with arguments from the '{key}' backend. "
               f"'{self.qualname}' has kernels for: [{', '.join(have)}]. ")
        if fkey is None:
            msg += (f"The key set {REGISTRY.keyset_repr(ks)} has no functionality key "
                    f"(all were excluded or masked).")
            raise NotImplementedError(msg)
        prov = (KERNEL_PROVIDERS.get((self.qualname, fkey.name, bname))
                or KERNEL_PROVIDERS.get((self.qualname, fkey.name, None))
                or FALLBACK_PROVIDERS.get((fkey.name, bname)) or FALLBACK_PROVIDERS.get((fkey.name, None)))
        if prov is not None and prov not in ("core", "user"):
            msg += f"The kernel comes from {_backend.MANAGER.describe_plugin(prov)}."
        elif fkey is _keys.Dense:
            if backend is not None:
                msg += (f"The backend {bname!r} (plugin {backend.record.owner if backend.record else '?'!r}) "
                        f"implements no kernel for it and no composite or fallback applies.")
            else:
                msg += _backend.provider_hint(bname).capitalize() + "."
        else:
            msg += (f"The key {fkey.name!r} is declared by the plugin {fkey.owner!r}, which registers "
                    f"neither a kernel for this op nor a fallback for the key.")
        raise NotImplementedError(msg)

    # -- registration -------------------------------------------------------
    def _register(self, reg, allow_override):
        slot = (reg.key, reg.backend)
        _push(self._stacks, self.table, slot, reg, allow_override,
              f"a kernel for '{self.qualname}' at dispatch key '{reg.runtime_name}'")
        KERNEL_PROVIDERS[(self.qualname, reg.key, reg.backend)] = reg.owner
        self._update_early()
        _changed()
        self.cache.clear()

    def _unregister(self, reg):
        _pop(self._stacks, self.table, (reg.key, reg.backend), reg)
        self._update_early()
        _changed()
        self.cache.clear()

    def _update_early(self):
        bits = 0
        for (key, _backend_name), reg in self.table.items():
            fk = REGISTRY.functionality.get(key)
            if fk is not None and fk.before_checks and reg.kernel is not FALLTHROUGH:
                bits |= fk.bit
        self.early[0] = bits

    def dispatch_table(self):
        """Rows (runtime key, provenance, owner) for every runtime key known now."""
        rows = []
        backends = [b for b in REGISTRY.backends if b is not None]
        for fkey in sorted(REGISTRY.functionality.values(), key=lambda k: -k.priority):
            targets = [b.name for b in backends] if fkey.per_backend else [None]
            for bname in targets:
                reg, prov = self.lookup(fkey, bname)
                name = (bname if fkey is _keys.Dense else fkey.name + bname) + _renamed(bname) if bname else fkey.name
                rows.append((name, prov, reg.owner if reg is not None else "-"))
        return rows


class OpOverloadPacket:
    """All overloads of one operator name; calling it picks an overload by the arguments."""

    def __init__(self, namespace, name):
        self.namespace = namespace
        self.name = name
        self.qualname = f"{namespace}::{name}"
        self.overloads: dict = {}

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        try:
            return self.overloads["" if overload == "default" else overload]
        except KeyError:
            raise AttributeError(f"'{self.qualname}' has no overload {overload!r}") from None

    def __call__(self, *args, **kwargs):
        ovs = list(self.overloads.values())
        if len(ovs) == 1:
            return ovs[0].entry(*args, **kwargs)
        for op in ovs:
            if _matches(op.schema, args, kwargs):
                return op.entry(*args, **kwargs)
        raise TypeError(f"{self.qualname}(): no overload matches the arguments; overloads: "
                        + "; ".join(str(o.schema) for o in ovs))

    def __repr__(self):
        return f"<OpOverloadPacket {self.qualname}>"


def _matches(schema, args, kwargs):
    pos = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(pos):
        return False
    for a, v in zip(pos, args):
        if a.type == "Tensor" and not a.is_list and not (v is None and a.optional):
            if not isinstance(v, Tensor):
                return False
        elif a.type == "Scalar" and not a.is_list and not (v is None and a.optional):
            if isinstance(v, Tensor) or not isinstance(v, numbers.Number):
                return False
    names = {a.name for a in schema.arguments}
    return all(k in names for k in kwargs)


def lookup_op(qualname):
    """The OpOverload named ``ns::name.overload`` (``.default`` or none for the default)."""
    op = OPS.get(qualname)
    if op is None and qualname.endswith(".default"):
        op = OPS.get(qualname[:-8])
    if op is None:
        raise KeyError(f"no operator named {qualname!r}")
    return op


def define_op(namespace, schema_text, owner, library, check=None, tags=()):
    """Create and register the OpOverload for ``schema_text`` in ``namespace`` (use Library.define)."""
    schema = parse_schema(schema_text)
    if schema.namespace and schema.namespace != namespace:
        raise ValueError(f"schema {schema_text!r} names the namespace {schema.namespace!r}, "
                         f"but the library's namespace is {namespace!r}")
    qualname = f"{namespace}::{schema.full_name}"
    if qualname in OPS:
        raise RuntimeError(f"operator {qualname} is already defined (by {OPS[qualname].owner!r})")
    op = OpOverload(namespace, schema, owner, library, check, as_tags(tags))
    OPS[qualname] = op
    pkt = PACKETS.get(f"{namespace}::{schema.name}")
    if pkt is None:
        pkt = PACKETS[f"{namespace}::{schema.name}"] = OpOverloadPacket(namespace, schema.name)
    pkt.overloads[schema.overload] = op
    return op


def undefine_op(op):
    """Remove ``op`` from the operator registry and its packet."""
    OPS.pop(op.qualname, None)
    pkt = PACKETS.get(f"{op.namespace}::{op.name}")
    if pkt is not None:
        pkt.overloads.pop(op.overload, None)
        if not pkt.overloads:
            del PACKETS[f"{op.namespace}::{op.name}"]


# --------------------------------------------------------------------------
# Entry generation
# --------------------------------------------------------------------------
_TYPE_SETS = {
    "int": (int,),
    "SymInt": (int,),
    "float": (float, int),
    "bool": (bool,),
    "Scalar": (int, float, bool, complex),
    "str": (str,),
}


def _default_value(arg):
    """The Python default of a schema argument; ``ScalarType dtype=long`` becomes ``tensorplug.int64``."""
    if arg.type == "ScalarType" and isinstance(arg.default, str):
        return _dt._by_name(arg.default)
    return arg.default


def _pyname(name):
    return name + "_" if keyword.iskeyword(name) else name


def _make_entry(op, positional=False):
    """Generate ``op.entry`` from the schema: a plain function with the op's
    Python signature whose body is the hot path described in the module doc."""
    schema = op.schema
    params, call, ks_terms, checks = [], [], [], []
    ns = {"_cache": op.cache, "_resolve": op._resolve, "_tls": _tls, "_tls_active": _tls_active,
          "_bad": functools.partial(argcheck.bad_arguments, op), "_coerce": argcheck.coerce,
          "_ks_list": argcheck.ks_of_list, "_device_ks": _backend.device_keyset,
          "_norm_dev": _backend.normalize_device, "_op": op}
    star = False
    device_arg = None
    # all-positional, a default may not precede a required (keyword-only) argument
    required = [i for i, a in enumerate(schema.arguments) if not a.has_default]
    first_default = required[-1] + 1 if positional and required else 0
    for i, a in enumerate(schema.arguments):
        n = _pyname(a.name)
        if a.kwarg_only and not star and not positional:
            params.append("*")
            star = True
        if a.has_default and i >= first_default:
            dname = f"_d{i}"
            ns[dname] = _default_value(a)
            params.append(f"{n}={dname}")
        else:
            params.append(n)
        call.append(n)
        if a.type == "Tensor":
            if a.is_list:
                ks_terms.append(f"_ks_list({n})")
            elif a.optional:
                ks_terms.append(f"({n}._ks if {n} is not None else 0)")
            else:
                ks_terms.append(f"{n}._ks")
        elif a.type in _TYPE_SETS or a.type in ("ScalarType", "Device") or a.is_list:
            allowed = set(_TYPE_SETS.get(a.type, ()))
            if a.is_list:
                allowed = {tuple}
            if a.optional:
                allowed.add(type(None))
            if a.type == "ScalarType" and not a.is_list:
                allowed.add(_dt.dtype)
            if a.type == "Device" and not a.is_list:
                allowed.add(_device)
            tname = f"_T{i}"
            ns[tname] = frozenset(allowed)
            ns[f"_A{i}"] = a
            checks.append(f"    if {n}.__class__ not in {tname}: {n} = _coerce(_op, _A{i}, {n})")
            if a.type == "Device" and not a.is_list:
                device_arg = n
                # an explicit index is validated (and normalized) once per device object, before any kernel
                checks.append(f"    if {n} is not None and {n}.index is not None: {n} = _norm_dev({n})")
    if not ks_terms:
        ks_terms.append(f"_device_ks({device_arg})" if device_arg else "_device_ks(None)")
    body = ["def {}({}):".format(_pyname(schema.name), ", ".join(params))]
    body.extend(checks)
    # the generated locals and globals all start with "_": an argument may not take one of their names
    clash = sorted(set(call) & (set(ns) | {"_keys", "_kernel"}))
    if clash:
        raise SchemaError(f"argument name {clash[0]!r} of {op.qualname} is reserved by the dispatcher")
    body.append("    try:")
    body.append("        _keys = " + " | ".join(ks_terms))
    body.append("    except (AttributeError, TypeError):")
    body.append(f"        _bad(({', '.join(call)},))")
    body.append("        raise")
    if op.check is not None:
        # after the key set: computing it has validated the tensor arguments. A key declared
        # before_checks in the thread's include set sees the arguments first and runs the checks itself.
        ns["_check"] = op.check
        ns["_early"] = op.early
        body.append("    if _tls_active:")
        body.append("        _keys = (_keys | _tls.include) & ~_tls.exclude")
        body.append("        if not _keys & _early[0]:")
        body.append(f"            _check({', '.join(call)})")
        body.append("    else:")
        body.append(f"        _check({', '.join(call)})")
    else:
        body.append("    if _tls_active:")
        body.append("        _keys = (_keys | _tls.include) & ~_tls.exclude")
    body.append("    try:")
    body.append("        _kernel = _cache[_keys]")
    body.append("    except KeyError:")
    body.append("        _kernel = _resolve(_keys)")
    body.append(f"    return _kernel({', '.join(call)})")
    src = "\n".join(body) + "\n"
    exec(_codecache.compiled(src, f"<tensorplug op {op.qualname}>"), ns)
    fn = ns[_pyname(schema.name)]
    fn.__qualname__ = schema.full_name
    fn.__doc__ = f"{op.qualname}: {schema}"
    fn._op = op
    if not positional:
        op._entry_source = src
    return fn


def _make_bumper(op):
    """For an op that writes to tensor arguments (``Tensor(a!)``): a factory that
    wraps a Dense kernel so each call bumps the version counter of every written
    tensor. None for other ops.

    The bump happens where the write happens, at the backend's kernel (PyTorch
    does it in ADInplaceOrView, just above the backend), so a composite,
    a fallback or a transform that reaches the kernel through other ops or a
    redispatch counts one write, not two.
    """
    args = op.schema.arguments
    writes = [(i, a) for i, a in enumerate(args) if a.is_write and a.type == "Tensor"]
    if not writes:
        return None
    names = [f"a{i}" for i in range(len(args))]
    body = [f"def bumping({', '.join(names)}):"]
    # A written tensor whose elements share memory (an expanded view: a stride of 0) is rejected, as
    # is one that partly overlaps another tensor argument's memory, as in PyTorch. Storage exists
    # only once a view was taken or a write bumped the version, so a tensor no one ever viewed or
    # wrote pays one attribute read; others look at their strides once (then a flag says so).
    # (PyTorch lets a few ops write such a tensor, some with a warning: argcheck.INTERNAL_OVERLAP_ALLOWED)
    allowed = argcheck.INTERNAL_OVERLAP_ALLOWED.get(op.qualname, False)
    internal = "_internal" if allowed is False else "_warn_internal" if allowed else None
    reads = [(j, b) for j, b in enumerate(args) if b.type == "Tensor" and not b.is_list]
    for i, a in writes:
        n = names[i]
        if a.is_list:
            if internal:
                body.append(f"    for _w in {n}:")
                body.append(f"        if {'_w is not None and ' if a.elem_optional else ''}_w._storage is not None "
                            f"and not _w._no_internal_overlap: {internal}(_w)")
            continue
        if not any(j != i for j, _ in reads):
            if internal:  # (no other tensor argument: the flag first, one attribute read once checked)
                opt = f"{n} is not None and " if a.optional else ""
                body.append(f"    if {opt}not {n}._no_internal_overlap and {n}._storage is not None: {internal}({n})")
            continue
        body.append(f"    _s = {n}._storage" if not a.optional else
                    f"    _s = {n}._storage if {n} is not None else None")
        body.append("    if _s is not None:")
        if internal:
            body.append(f"        if not {n}._no_internal_overlap: {internal}({n})")
        for j, b in reads:
            if j == i:
                continue
            m = names[j]
            # the same storage, or another one over the same memory (``x`` and ``x.data``)
            same = f"({m}._storage is _s or _s.mem is not None and {m}._storage is not None and {m}._storage.mem is _s.mem)"
            cond = f"{m} is not None and {same}" if b.optional else same
            body.append(f"        if {cond}: _overlap({n}, {m})")
    body.append(f"    out = _kernel({', '.join(names)})")
    for i, a in writes:
        n = names[i]
        if a.is_list:
            body.append(f"    for _w in {n}:")
            body.append("        if _w is not None: _bump(_w)" if a.elem_optional else "        _bump(_w)")
        elif a.optional:
            body.append(f"    if {n} is not None: _bump({n})")
        else:
            body.append(f"    _bump({n})")
    body.append("    return out")
    src = "\n".join(body) + "\n"
    bump = argcheck.bump_version
    warn_internal = functools.partial(argcheck.warn_internal_overlap, message=allowed) if allowed else None
    code = []  # compiled on the first resolution, not at import

    def wrap(kernel):
        if not code:
            code.append(compile(src, f"<tensorplug version bump {op.qualname}>", "exec"))
        ns = {"_kernel": kernel, "_bump": bump, "_overlap": argcheck.check_no_partial_overlap,
              "_internal": argcheck.check_no_internal_overlap, "_warn_internal": warn_internal}
        exec(code[0], ns)
        return ns["bumping"]
    return wrap
