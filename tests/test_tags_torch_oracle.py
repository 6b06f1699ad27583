"""The core's operators carry the tags PyTorch gives the same operators (pointwise, nondeterministic_seeded)."""
from __future__ import annotations

import pytest

import tensorplug as tp
from tensorplug.plugin_api import operators

torch = pytest.importorskip("torch")

TAGS = ("pointwise", "nondeterministic_seeded", "dynamic_output_shape", "data_dependent_output", "inplace_view")


def _pairs():
    for qualname, op in operators().items():
        if not qualname.startswith("tensorplug::"):
            continue
        name, _, overload = op.schema.full_name.partition(".")
        packet = getattr(torch.ops.aten, name, None)
        theirs = getattr(packet, overload or "default", None) if packet is not None else None
        if theirs is not None:
            yield op, theirs


def test_every_shared_operator_has_pytorchs_tags():
    pairs = list(_pairs())
    assert len(pairs) > 250  # most of the core's operators exist in PyTorch under the same name
    wrong = []
    for op, theirs in pairs:
        ours = {t.name for t in op.tags}
        want = {t for t in TAGS if getattr(torch.Tag, t) in theirs.tags}
        if ours != want:
            wrong.append(f"{op.schema.full_name}: ours {sorted(ours)}, PyTorch's {sorted(want)}")
    assert wrong == []


def test_the_tag_names_are_pytorchs():
    for tag in tp.Tag:
        assert getattr(torch.Tag, tag.name) is not None
