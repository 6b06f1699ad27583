"""Dispatch: keys, schemas, operator registration and the dispatcher.

The names below are re-exported for convenience. The dispatcher's are loaded
on first access, so that importing ``tensorplug.dispatch.keys`` (a leaf every
layer uses) never drags in the dispatcher, which itself sits above tensors and
backends.
"""

from .keys import REGISTRY, Dense, Autograd, FunctionalityKey, below
from .schema import parse_schema, FunctionSchema

_FROM_DISPATCHER = ("FALLTHROUGH", "OPS", "OpOverload", "OpOverloadPacket", "include_keys", "exclude_keys",
                    "tls_state", "set_tls_state", "lookup_op")

__all__ = ["REGISTRY", "Dense", "Autograd", "FunctionalityKey", "below", *_FROM_DISPATCHER,
           "parse_schema", "FunctionSchema"]


def __getattr__(name):
    if name in _FROM_DISPATCHER:
        from . import dispatcher  # lazy: the dispatcher imports tensors and backends, which import keys
        return getattr(dispatcher, name)
    raise AttributeError(f"module 'tensorplug.dispatch' has no attribute {name!r}")
