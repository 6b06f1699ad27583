"""Batching rules of the shape, indexing and set-like ops (``scatter_reduce_``, ``searchsorted``), and
the refusal of ops whose output shape depends on the data.

Most of those ops are CompositeImplicitAutograd in the core and batch through their pieces; the
primitives here get a rule. Ops tagged ``Tag.dynamic_output_shape`` (``nonzero``, ``masked_select``,
the uniques, ``bincount``, ``repeat_interleave.Tensor``) cannot be batched: each example would give a
result of its own shape. Their rule raises PyTorch's error (:func:`dynamic_shape_error`), as does the
fallback for any other op so tagged.
"""

from __future__ import annotations

from tensorplug.plugin_api import lookup_op

from .rules import RULES, front, expand_front, inplace_error, wrap_dim, out_of_place_update

_unsqueeze = lookup_op("tensorplug::unsqueeze").positional
_reshape = lookup_op("tensorplug::reshape").positional
_select = lookup_op("tensorplug::select.int").positional
_stack = lookup_op("tensorplug::stack").positional

DYNAMIC_SHAPE_ERROR = ("vmap: We do not support batching operators that can output dynamic shape. Attempted to "
                       "vmap over {op}. Please file an issue at https://github.com/tensorplug/tensorplug/issues "
                       "if you need this feature.")


def dynamic_shape_error(op):
    """PyTorch's error for vmap over an op whose output shape depends on the data."""
    return RuntimeError(DYNAMIC_SHAPE_ERROR.format(op=op.qualname))


def scatter_reduce_rule(ctx, op, vals, bdims, args):
    """scatter_reduce_ (in place): index and source batched like ``self``, the batch dim first."""
    if bdims[0] is None:
        raise inplace_error(op)
    n = args[0].dim()
    s = front(vals[0], bdims[0])
    i = expand_front(vals[2], bdims[2], ctx.size)
    src = expand_front(vals[3], bdims[3], ctx.size)
    if n == 0:
        s, i, src = _unsqueeze(s, 1), _unsqueeze(i, 1), _unsqueeze(src, 1)
    op.positional(s, wrap_dim(vals[1], n) + 1 if n else 1, i, src, *vals[4:])
    return None, None


def searchsorted_rule(ctx, op, vals, bdims, args):
    """searchsorted: an unbatched 1-D sequence takes values of any shape; otherwise the sequence and the
    values are batched in front and the values flattened to one row per sequence."""
    seq, values, sorter = vals[0], vals[1], vals[5]
    sbd, vbd, obd = bdims[0], bdims[1], bdims[5]
    if sbd is None and obd is None and len(seq._shape) == 1:
        return op.positional(*vals), vbd
    seq = expand_front(seq, sbd, ctx.size)
    if sorter is not None:
        sorter = expand_front(sorter, obd, ctx.size)
    v = expand_front(values, vbd, ctx.size)
    vshape = v._shape
    if len(args[0]._shape) == 1:  # one sequence per example: its values become one row
        v = _reshape(v, (ctx.size, -1))
    out = list(vals)
    out[0], out[1], out[5] = seq, v, sorter
    return _reshape(op.positional(*out), vshape), 0


RULES.update({
    "scatter_reduce_.two": scatter_reduce_rule,
    "searchsorted.Tensor": searchsorted_rule,
})
# functional forms that clone ``self`` and update it in place: batched updates of an unbatched self
for _name in ("scatter_reduce.two", "scatter.reduce", "index_add", "index_copy", "index_fill.int_Tensor"):
    RULES[_name] = out_of_place_update


def refuse_dynamic_shape(ctx, op, vals, bdims, args):
    """The rule of an op whose output shape depends on the data: PyTorch's error."""
    raise dynamic_shape_error(op)


def histc_rule(ctx, op, vals, bdims, args):
    """histc: with min == max each example's range comes from its own data, so each example is one call."""
    v = front(vals[0], bdims[0])
    return _stack([op.positional(_select(v, 0, i), *vals[1:]) for i in range(ctx.size)], 0), 0


for _name in ("nonzero", "masked_select", "_unique2", "unique_dim", "unique_consecutive", "bincount",
              "repeat_interleave.Tensor"):
    RULES[_name] = refuse_dynamic_shape
RULES["histc"] = histc_rule
