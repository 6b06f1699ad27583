"""Batching rules of the convolutions the CPU runs as kernels (``conv2d``, ``conv_transpose2d.input``).

Without a rule they would decompose into their im2col pieces under vmap; with one the whole batch is one
call of the kernel. A batched input folds its batch dim into the convolution's batch (N); a batched
weight folds into the channels, each example's weight a group of its own (groups * B), the input's
channels following it.
"""

from __future__ import annotations

from tensorplug.plugin_api import lookup_op

from .rules import RULES, front, expand_front

_reshape = lookup_op("tensorplug::reshape").positional
_permute = lookup_op("tensorplug::permute").positional


def _conv_rule(transposed):
    def rule(ctx, op, vals, bdims, args):
        x, w, b = vals[0], vals[1], vals[2]
        bx, bw, bb = bdims[0], bdims[1], bdims[2]
        groups = vals[-2] if transposed else vals[-1]
        batched_input = args[0].dim() == 4
        size = ctx.size
        if bw is None and bb is None:
            x = front(x, bx)
            if not batched_input:  # (B, C, H, W): the examples are the convolution's batch
                return op.positional(x, *vals[1:]), 0
            shape = x._shape
            out = op.positional(_reshape(x, (shape[0] * shape[1],) + shape[2:]), *vals[1:])
            return _reshape(out, (shape[0], shape[1]) + out._shape[1:]), 0
        # a weight per example: the examples become groups of the channels
        x = expand_front(x, bx, size)
        if not batched_input:
            x = _reshape(x, (size, 1) + x._shape[1:])
        x = _permute(x, (1, 0, 2, 3, 4))  # N, B, C, H, W
        n = x._shape[0]
        x = _reshape(x, (n, size * x._shape[2]) + x._shape[3:])
        w = expand_front(w, bw, size)
        w = _reshape(w, (size * w._shape[1],) + w._shape[2:])
        if b is not None:
            b = _reshape(expand_front(b, bb, size), (-1,))
        rest = list(vals[3:])
        rest[-2 if transposed else -1] = groups * size
        out = op.positional(x, w, b, *rest)
        out = _reshape(out, (n, size, out._shape[1] // size) + out._shape[2:])
        if not batched_input:
            out = _reshape(out, (size,) + out._shape[2:])
            return out, 0
        return out, 1
    return rule


RULES.update({"conv2d": _conv_rule(False), "conv_transpose2d.input": _conv_rule(True)})
