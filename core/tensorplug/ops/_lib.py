"""The core's own operator library: namespace ``tensorplug``, owned by ``core``.

``defop(schema, check=..., composite=..., explicit=...)`` defines an operator
and returns its entry function (what Tensor methods and other ops call). A
``composite`` function becomes its CompositeImplicitAutograd kernel (it
decomposes into other ops, so autograd and every transform apply to the
pieces); ``explicit`` becomes its CompositeExplicitAutograd kernel (serves
every backend at the Dense key, but autograd needs a formula of its own).
"""

from __future__ import annotations

from ..autograd.fallback import autograd_fallback
from ..dispatch.library import Library, owner_scope
from ..dispatch.tags import Tag
from ..tensor import Tensor

with owner_scope("core"):
    LIB = Library("tensorplug", "DEF")
    # Ops without a backward formula still run on tensors that require grad, but
    # backward through them raises (composites decompose at the Autograd key instead).
    LIB.fallback(autograd_fallback, "Autograd")

ENTRIES: dict = {}  # schema full name -> entry function

POINTWISE = (Tag.pointwise,)
"""The tags of an elementwise op: vmap batches it by broadcasting, with no rule of its own."""
SEEDED = (Tag.nondeterministic_seeded,)
"""The tags of an op that draws random numbers."""
DYNAMIC_SHAPE = (Tag.dynamic_output_shape,)
"""The tags of an op whose output shape depends on the input's values (boolean-mask indexing)."""


def defop(schema, *, check=None, composite=None, explicit=None, tags=()):
    op = LIB.define(schema, check=check, tags=tags)
    if composite is not None:
        LIB.impl(op, composite, "CompositeImplicitAutograd")
    if explicit is not None:
        LIB.impl(op, explicit, "CompositeExplicitAutograd")
    ENTRIES[op.schema.full_name] = op.entry
    return op.entry


PUBLIC: dict = {}  # name -> function exported as tensorplug.NAME


def public(name, fn):
    """Export ``fn`` as ``tensorplug.<name>``."""
    PUBLIC[name] = fn
    return fn


def attach(name, fn):
    """Make ``fn`` the Tensor method ``name`` (each op module attaches its own)."""
    setattr(Tensor, name, fn)
