"""Batching rules of the matrix decompositions and solves (``tensorplug.linalg``'s primitives).

These ops take any leading batch dims and broadcast them between their operands (each a batch of
matrices), so the rule moves the vmap dim of each batched operand to the front and, when there are
several operands, aligns their per-example batch dims behind it (size-1 dims where one has fewer;
an unbatched operand gets a size-1 vmap dim). Outputs are batched at the front, except the empty Q of ``linalg_qr(mode="r")`` and the
empty U and Vh of ``_linalg_svd(compute_uv=False)``, which are the same for every example.
"""

from __future__ import annotations

from .rules import RULES, front, pad, _unsqueeze


def leading(*unbatched_outputs):
    """The rule of an op batched over leading dims; ``unbatched_outputs(args)``: output indices that stay
    unbatched for these arguments."""
    def rule(ctx, op, vals, bdims, args):
        out = list(vals)
        tensors = [i for i, a in enumerate(args) if hasattr(a, "_shape")]
        if len(tensors) == 1:
            i = tensors[0]
            out[i] = front(vals[i], bdims[i])
        else:
            rank = max(len(args[i]._shape) for i in tensors)
            for i in tensors:
                v, bd, k = vals[i], bdims[i], rank - len(args[i]._shape)
                out[i] = pad(front(v, bd), k) if bd is not None else pad(_unsqueeze(v, 0), k)
        res = op.positional(*out)
        if not isinstance(res, tuple):
            return res, 0
        skip = set()
        for f in unbatched_outputs:
            skip |= f(args)
        return res, tuple(None if i in skip else 0 for i in range(len(res)))
    return rule


def _qr_r(args):
    return {0} if len(args) > 1 and args[1] == "r" else set()


def _svd_no_uv(args):
    return {0, 2} if len(args) > 2 and not args[2] else set()


RULES.update({
    "linalg_inv_ex": leading(),
    "linalg_inv": leading(),
    "linalg_solve": leading(),
    "linalg_cholesky": leading(),
    "cholesky": leading(),
    "linalg_solve_ex": leading(),
    "linalg_det": leading(),
    "linalg_slogdet": leading(),
    "_linalg_svd": leading(_svd_no_uv),
    "linalg_eigh": leading(),
    "linalg_qr": leading(_qr_r),
    "linalg_cholesky_ex": leading(),
    "linalg_solve_triangular": leading(),
    "linalg_matrix_exp": leading(),
})
