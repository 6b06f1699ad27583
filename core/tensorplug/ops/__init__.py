"""Operators: ``tensorplug.ops.NAMESPACE.OP`` and the core's op definitions.

Attribute access on this package resolves operator namespaces, so
``tensorplug.ops.tensorplug.add.Tensor`` is the core's ``add.Tensor`` and
``tensorplug.ops.myns.twice`` an operator a plugin or user defined with
``tensorplug.library.Library("myns", "DEF")``.
"""

from __future__ import annotations

from ..dispatch import dispatcher as _d


class _Namespace:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, op_name):
        pkt = _d.PACKETS.get(f"{self._name}::{op_name}")
        if pkt is None:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{op_name}'")
        return pkt

    def __dir__(self):
        pre = self._name + "::"
        return sorted(k[len(pre):] for k in _d.PACKETS if k.startswith(pre))

    def __repr__(self):
        return f"<ops namespace {self._name}>"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if any(k.startswith(name + "::") for k in _d.PACKETS):
        return _Namespace(name)
    raise AttributeError(f"no operator namespace {name!r}")
