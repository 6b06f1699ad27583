"""The policy of each device type, and the kernels that keep up with them.

``policy(device_type)`` is created on first use from the device's default lists (PyTorch's, plus
its backend's overrides). Whenever an entry names an operator that has no autocast kernel yet, one
is registered at once with the plugin's library, so a user's change applies to the next call.
"""

from __future__ import annotations

import threading

from tensorplug.plugin_api import lookup_op, operators

from . import backends, kernels
from .policy import DEFAULTS, PYTORCH_DECOMPOSED, Policy

_LOCK = threading.RLock()
_LIBRARY = [None]      # the Library of the current enable (set by the hook)
_REGISTERED = set()    # operator overload names with a kernel in that library


def _is_opaque(op, name):
    """A decomposition here (CompositeImplicitAutograd) that PyTorch computes with a kernel of its own."""
    return ("CompositeImplicitAutograd", None) in op.table and name not in PYTORCH_DECOMPOSED


def ensure_kernels(names):
    """Register the autocast kernel of every operator in ``names`` that exists and has none yet."""
    lib = _LIBRARY[0]
    if lib is None:
        return
    ops = None
    with _LOCK:
        for name in names:
            if name in _REGISTERED:
                continue
            if ops is None:
                ops = operators()
            op = ops.get(f"tensorplug::{name}")
            if op is None or op.namespace != "tensorplug":
                continue
            lib.impl(name, kernels.make_kernel(op, name, _is_opaque(op, name)), "Autocast", with_keyset=True)
            _REGISTERED.add(name)


def install(library):
    """Called from the plugin's kernel hook: kernels for every operator of the default lists and of
    the policies made so far, and for every decomposition PyTorch does not decompose."""
    with _LOCK:
        _LIBRARY[0] = library
        _REGISTERED.clear()
        names = set()
        for table in DEFAULTS.values():
            for group in table.values():
                names |= group
        for p in kernels.POLICIES.values():
            names |= set(p)
        for qual, op in operators().items():
            ns, _, name = qual.partition("::")
            if ns == "tensorplug" and _is_opaque(op, name):
                names.add(name)
        ensure_kernels(sorted(names))


def uninstall():
    with _LOCK:
        _LIBRARY[0] = None
        _REGISTERED.clear()


def policy(device_type):
    """The :class:`~tensorplug_autocast.policy.Policy` of ``device_type`` (created on first use)."""
    p = kernels.POLICIES.get(device_type)
    if p is None:
        with _LOCK:
            p = kernels.POLICIES.get(device_type)
            if p is None:
                holder = []

                def changed():
                    if holder:
                        ensure_kernels(list(holder[0]))

                p = Policy(device_type, lambda: backends.default_lists(device_type), changed)
                holder.append(p)
                kernels.POLICIES[device_type] = p
                changed()
    return p
