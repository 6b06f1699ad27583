"""docs/backend-contract.md lists exactly the core's primitives and composites."""

import pathlib
import re

import tensorplug  # noqa: F401  (registers the core's operators)
from tensorplug.dispatch import dispatcher

DOC = (pathlib.Path(__file__).parent.parent / "docs" / "backend-contract.md").read_text()


def _core_ops():
    prims, cea, cia = set(), set(), set()
    for qualname, op in dispatcher.OPS.items():
        if not qualname.startswith("tensorplug::"):
            continue
        keys = {key for key, _ in op.table}
        name = op.schema.full_name
        if "CompositeExplicitAutograd" in keys:
            cea.add(name)
        elif "CompositeImplicitAutograd" in keys:
            cia.add(name)
        else:
            prims.add(name)
    return prims, cea, cia


def _names(text):
    return set(re.findall(r"`([a-z_0-9]+(?:\.[A-Za-z_0-9]+)?)`", text))


def _line(prefix):
    return next(line for line in DOC.splitlines() if line.startswith(prefix))


def test_the_primitive_list_is_the_registry():
    prims, _, _ = _core_ops()
    section = DOC[DOC.index("## The primitives"):DOC.index("## Composite operators")]
    assert _names(section) - {"_to_copy"} == prims


def test_the_composite_lists_are_the_registry():
    _, cea, cia = _core_ops()
    assert _names(_line("CompositeExplicitAutograd (")) == cea
    assert _names(_line("CompositeImplicitAutograd (")) == cia
    assert f"CompositeImplicitAutograd ({len(cia)})" in DOC


def test_the_schema_listing_is_generated_from_the_registry():
    from tensorplug.testing.contract import schema_block
    section = DOC[DOC.index("## Schemas of the primitives"):DOC.index("## Composite operators")]
    listed = section[section.index("```text\n") + 8:section.rindex("\n```")]
    assert listed == schema_block(), "regenerate with: python -m tensorplug.testing.contract"
