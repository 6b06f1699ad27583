"""Operator tags: what kind of operator an op is, as ``tensorplug.Tag`` (PyTorch's ``torch.Tag``).

An op is defined with its tags (``Library.define(schema, tags=(Tag.pointwise,))``)
and carries them as ``op.tags``. Transforms read them to pick a general rule
instead of listing ops by name: vmap batches every ``pointwise`` op with its
broadcasting rule, and the backend contract groups the pointwise primitives,
which a backend can serve with one elementwise mechanism.
"""

from __future__ import annotations

import enum


class Tag(enum.Enum):
    """The tags PyTorch defines that tensorplug's ops use (same names, as in ``torch.Tag``)."""

    #: elementwise: each output element depends only on the input elements at the same (broadcast)
    #: position; Tensor arguments broadcast together
    pointwise = "pointwise"
    #: the op draws random numbers (from the default generator or a ``generator`` argument)
    nondeterministic_seeded = "nondeterministic_seeded"
    #: the output's shape depends on the input's values (nonzero, masked_select, unique)
    dynamic_output_shape = "dynamic_output_shape"
    #: the output is a Python value computed from the data (item, allclose)
    data_dependent_output = "data_dependent_output"
    #: an in-place op that changes ``self``'s metadata only (``as_strided_``, ``squeeze_``)
    inplace_view = "inplace_view"

    def __repr__(self):
        return f"tensorplug.Tag.{self.name}"


def as_tags(tags):
    """``tags`` checked and made a tuple: each must be a :class:`Tag`."""
    out = tuple(tags)
    for t in out:
        if not isinstance(t, Tag):
            raise TypeError(f"tags must be tensorplug.Tag members, got {t!r}")
    return out
