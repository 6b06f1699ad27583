"""The backend contract as data: the primitives a compute backend implements, with their schemas.

``python -m tensorplug.testing.contract`` prints the schema block that
docs/backend-contract.md carries (a test keeps the page equal to it).
"""

from __future__ import annotations

from ..plugin_api import operators

_COMPOSITES = ("CompositeExplicitAutograd", "CompositeImplicitAutograd")


def primitives():
    """The core's operators with no composite kernel, as ``{name.overload: schema}``, sorted by name."""
    out = {}
    for qualname, op in operators().items():
        if not qualname.startswith("tensorplug::"):
            continue
        if any(key in _COMPOSITES for key, _ in tuple(op.table)):
            continue
        out[op.schema.full_name] = str(op.schema)
    return dict(sorted(out.items()))


def schema_block():
    """The text of the schema listing in docs/backend-contract.md."""
    return "\n".join(primitives().values())


if __name__ == "__main__":
    print(schema_block())
