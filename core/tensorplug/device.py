"""Devices: ``tensorplug.device("cpu")``, ``device("openreg:1")``.

A device names a backend (registered by a plugin) and an index. Instances are
interned, so ``a.device is b.device`` is a cheap same-device test.
"""

from __future__ import annotations

__all__ = ["device"]


class device:
    """A device: ``type`` (the backend's name) and ``index`` (None means current/0).

    ``device("cuda:1")``, ``device("cuda", 1)`` and ``device(other_device)`` are accepted.
    """

    __slots__ = ("type", "index", "_str", "__weakref__")
    _interned: dict = {}

    def __new__(cls, type_or_str, index=None):
        if isinstance(type_or_str, device):
            if index is None:
                return type_or_str
            type_or_str = type_or_str.type
        key = (type_or_str, index)
        d = cls._interned.get(key)
        if d is not None:
            return d
        if not isinstance(type_or_str, str):
            raise TypeError(f"device(): expected a string or device, got {type(type_or_str).__name__}")
        typ, idx = type_or_str, index
        if ":" in type_or_str:
            if index is not None:
                raise ValueError(f"device string {type_or_str!r} already has an index")
            typ, _, s = type_or_str.partition(":")
            if not s.isdigit():
                raise RuntimeError(f"Invalid device string: '{type_or_str}'")
            idx = int(s)
        if idx is not None and (not isinstance(idx, int) or idx < 0):
            raise RuntimeError(f"Device index must not be negative, got {idx}")
        if not typ or not typ.replace("_", "").isalnum():
            raise RuntimeError(f"Invalid device string: '{type_or_str}'")
        d = object.__new__(cls)
        d.type = typ
        d.index = idx
        d._str = typ if idx is None else f"{typ}:{idx}"
        cls._interned[key] = d
        return d

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self._str

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))
