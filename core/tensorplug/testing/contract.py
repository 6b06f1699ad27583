"""The backend contract as data: the primitives a compute backend implements, with their schemas.

``python -m tensorplug.testing.contract`` prints the schema block that
docs/backend-contract.md carries (a test keeps the page equal to it).
"""

from __future__ import annotations

from ..dispatch.tags import Tag
from ..plugin_api import operators

_COMPOSITES = ("CompositeExplicitAutograd", "CompositeImplicitAutograd")


def primitives():
    """The core's operators with no composite kernel, as ``{name.overload: OpOverload}``, sorted by name."""
    out = {}
    for qualname, op in operators().items():
        if not qualname.startswith("tensorplug::"):
            continue
        if any(key in _COMPOSITES for key, _ in tuple(op.table)):
            continue
        out[op.schema.full_name] = op
    return dict(sorted(out.items()))


def schema_block():
    """The text of the schema listing in docs/backend-contract.md: the pointwise primitives first (one
    elementwise mechanism can serve them all), then the others."""
    prims = primitives().values()
    pointwise = [str(op.schema) for op in prims if Tag.pointwise in op.tags]
    others = [str(op.schema) for op in prims if Tag.pointwise not in op.tags]
    return "\n".join([f"# pointwise (tagged tensorplug.Tag.pointwise): {len(pointwise)}", *pointwise, "",
                      f"# the others: {len(others)}", *others])


if __name__ == "__main__":
    print(schema_block())
