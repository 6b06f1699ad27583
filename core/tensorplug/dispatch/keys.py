"""Dispatch keys and key sets.

A key set is a plain Python ``int`` used as a bitset:

* bits ``0 .. BACKEND_BITS-1`` are backend components (CPU, CUDA, PrivateUse1,
  ...), assigned in registration order; the highest backend bit wins;
* bit ``BACKEND_BITS + p`` is the functionality key of priority ``p``
  (``0 <= p < MAX_PRIORITY``); the highest functionality bit wins.

The core owns ``Dense`` (priority 8) and ``Autograd`` (priority 24). Plugins
declare further keys with a free priority (the profiler 60, vmap's Batched 20,
Autocast 32, Quantized 16 by convention). Because a key's bit is derived from
its priority, bits never move when a plugin is enabled later, so the key sets
stored on live tensors stay valid.

A functionality may be *per backend*: its runtime keys are functionality x
backend (``AutogradCPU``, ``AutocastCUDA``) and a kernel may be registered
for one backend or for all of them.
"""

from __future__ import annotations

BACKEND_BITS = 16
MAX_PRIORITY = 64
BACKEND_MASK = (1 << BACKEND_BITS) - 1


class FunctionalityKey:
    """A functionality dispatch key declared by the core or a plugin.

    ``name``: key name (``"Profiler"``); ``priority``: 0..63, higher runs
    first; ``per_backend``: runtime keys are per backend (``AutocastCPU``);
    ``composite``: CompositeImplicitAutograd kernels fill this key (ops
    decompose here instead of falling through to the fallback);
    ``before_checks``: while this key is in a thread's include set, the entry
    of an op with a kernel at this key skips the op's argument checks, so the
    kernel sees the arguments first: a transform that changes them (autocast
    casting a bfloat16 and a float32 operand to one dtype) runs the checks
    itself, ``op.check(*args)`` when ``op.check`` is set, before it
    redispatches. Ops that fall through at the key keep their checks.
    """

    __slots__ = ("name", "priority", "per_backend", "composite", "before_checks", "owner", "bit")

    def __init__(self, name, priority, per_backend=False, composite=False, owner="core", before_checks=False):
        if not isinstance(priority, int) or not 0 <= priority < MAX_PRIORITY:
            raise ValueError(f"priority of key {name!r} must be an int in [0, {MAX_PRIORITY}), got {priority!r}")
        self.name = name
        self.priority = priority
        self.per_backend = per_backend
        self.composite = composite
        self.before_checks = bool(before_checks)
        self.owner = owner
        self.bit = 1 << (BACKEND_BITS + priority)

    def __repr__(self):
        return f"FunctionalityKey({self.name!r}, priority={self.priority})"


class BackendComponent:
    """A backend slot: ``name`` is the key name (``"CPU"``), ``index`` its bit."""

    __slots__ = ("name", "index", "bit", "record")

    def __init__(self, name, index, record=None):
        self.name = name
        self.index = index
        self.bit = 1 << index
        self.record = record

    def __repr__(self):
        return f"BackendComponent({self.name!r})"


class KeyRegistry:
    """All functionality keys and backend components known to this process.

    ``listeners`` are called after every change (the dispatcher clears its
    caches there).
    """

    def __init__(self):
        self.by_priority: list = [None] * MAX_PRIORITY
        self.functionality: dict = {}
        self.backends: list = [None] * BACKEND_BITS
        self.backend_by_name: dict = {}
        self.retired: dict = {}  # slot -> name of the backend last removed from it
        self.listeners: list = []

    # -- functionality keys -------------------------------------------------
    def add_functionality(self, key: FunctionalityKey):
        """Declare ``key``; its name and priority must be free."""
        if key.name in self.functionality:
            raise ValueError(f"dispatch key {key.name!r} is already declared (by {self.functionality[key.name].owner!r})")
        other = self.by_priority[key.priority]
        if other is not None:
            raise ValueError(
                f"dispatch key {key.name!r} asks for priority {key.priority}, "
                f"which key {other.name!r} (plugin {other.owner!r}) already holds")
        self.by_priority[key.priority] = key
        self.functionality[key.name] = key
        self._changed()
        return key

    def remove_functionality(self, name):
        """Forget key ``name``; tensors still carrying its bit ignore it."""
        key = self.functionality.pop(name)
        self.by_priority[key.priority] = None
        self._changed()

    # -- backends ------------------------------------------------------------
    def add_backend(self, name, record=None, slot=None):
        """Give backend key ``name`` a slot (the first free one unless ``slot`` is given)."""
        if name in self.backend_by_name:
            raise ValueError(f"backend key {name!r} is already registered")
        if slot is None:
            free = [i for i, b in enumerate(self.backends) if b is None]
            if not free:
                raise RuntimeError("no free backend slot left")
            slot = free[0]
        elif self.backends[slot] is not None:
            raise ValueError(f"backend slot {slot} is taken by {self.backends[slot].name!r}")
        comp = BackendComponent(name, slot, record)
        self.backends[slot] = comp
        self.retired.pop(slot, None)
        self.backend_by_name[name] = comp
        self._changed()
        return comp

    def remove_backend(self, name):
        """Free the slot of backend key ``name`` (remembered as retired for error messages)."""
        comp = self.backend_by_name.pop(name)
        self.backends[comp.index] = None
        self.retired[comp.index] = name
        self._changed()

    def _changed(self):
        for fn in self.listeners:
            fn()

    # -- decoding ------------------------------------------------------------
    def highest_backend(self, ks):
        """The registered backend of the highest backend bit in ``ks`` (None if none or retired)."""
        b = ks & BACKEND_MASK
        if not b:
            return None
        return self.backends[b.bit_length() - 1]

    def retired_backend(self, ks):
        """Name of the removed backend whose bit is the highest in ``ks`` (for error messages)."""
        b = ks & BACKEND_MASK
        return self.retired.get(b.bit_length() - 1) if b else None

    def functionality_keys_in(self, ks):
        """Functionality keys present in ``ks``, highest priority first."""
        f = ks >> BACKEND_BITS
        out = []
        while f:
            p = f.bit_length() - 1
            key = self.by_priority[p]
            if key is not None:
                out.append(key)
            f &= ~(1 << p)
        return out

    def runtime_name(self, fkey, backend):
        """``CPU`` for Dense x CPU, ``AutogradCPU`` for a per-backend key, else the key's name."""
        if fkey.name == "Dense":
            return backend.name if backend is not None else "Dense"
        if fkey.per_backend and backend is not None:
            return fkey.name + backend.name
        return fkey.name

    def keyset_repr(self, ks):
        """``DispatchKeySet(Logging, Dense, CPU)``: the names in ``ks``, highest first."""
        names = [k.name for k in self.functionality_keys_in(ks)]
        b = ks & BACKEND_MASK
        while b:
            i = b.bit_length() - 1
            comp = self.backends[i]
            names.append(comp.name if comp else f"backend{i}")
            b &= ~(1 << i)
        return "DispatchKeySet(" + ", ".join(names) + ")"


def below(key: FunctionalityKey) -> int:
    """Mask that keeps backend bits and functionality bits strictly below ``key``."""
    return (1 << (BACKEND_BITS + key.priority)) - 1


REGISTRY = KeyRegistry()
Dense = REGISTRY.add_functionality(FunctionalityKey("Dense", 8, per_backend=True, composite=True))
Autograd = REGISTRY.add_functionality(FunctionalityKey("Autograd", 24, per_backend=True, composite=True))

ALIAS_KEYS = ("CompositeImplicitAutograd", "CompositeExplicitAutograd")
