"""Dispatch: keys, schemas, operator registration and the dispatcher."""

from .keys import REGISTRY, Dense, Autograd, FunctionalityKey, below
from .dispatcher import (FALLTHROUGH, OPS, OpOverload, OpOverloadPacket, include_keys, exclude_keys,
                         tls_state, set_tls_state, lookup_op)
from .schema import parse_schema, FunctionSchema

__all__ = ["REGISTRY", "Dense", "Autograd", "FunctionalityKey", "below", "FALLTHROUGH", "OPS", "OpOverload",
           "OpOverloadPacket", "include_keys", "exclude_keys", "tls_state", "set_tls_state",
           "lookup_op", "parse_schema", "FunctionSchema"]
