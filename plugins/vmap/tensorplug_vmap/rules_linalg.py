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


def core_dims(*core):
    """The rule of an op over batches whose tensor arguments have ``core`` trailing dims each (a matrix 2, a
    pivot vector 1): batch dims front, each operand padded to the same number of per-example batch dims."""
    def rule(ctx, op, vals, bdims, args):
        out = list(vals)
        tensors = [i for i, a in enumerate(args) if hasattr(a, "_shape")]
        rank = max(len(args[i]._shape) - core[i] for i in tensors)
        for i in tensors:
            v = front(vals[i], bdims[i]) if bdims[i] is not None else _unsqueeze(vals[i], 0)
            out[i] = pad(v, rank - (len(args[i]._shape) - core[i]))
        return op.positional(*out), 0
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
    "linalg_lu_factor_ex": leading(),
    "geqrf": leading(),
    "linalg_eig": leading(),
    "linalg_ldl_factor_ex": leading(),
    "linalg_ldl_solve": core_dims(2, 1, 2),
    "linalg_lu_factor": leading(),
    "linalg_ldl_factor": leading(),
    "cholesky_solve": leading(),
    "cholesky_inverse": leading(),
})
