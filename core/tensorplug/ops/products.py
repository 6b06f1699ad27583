"""Matrix products beyond ``matmul``: ``baddbmm``, ``addbmm``, ``addmv``, ``addr``, ``ger``, ``kron``,
``tensordot`` and ``einsum``.

All decompose into ``matmul`` (through permutes and reshapes, never a Python loop over elements) and
elementwise ops, so autograd and vmap apply to the pieces. The ``add*`` forms compute float16 and
bfloat16 in float32 and round once, like ``addmm``; a zero ``beta`` ignores ``input`` (its NaNs
included), as in PyTorch.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..tensor import Tensor, _wrap_dim
from ._common import opmath as _opmath, as_dtype as _as
from ._lib import attach, public
from .factories import zeros
from .linalg import matmul, bmm, outer, _check_expandable
from .promotion import _pt_name, result_type
from .reductions import sum as _sum

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _compute(d):
    """The dtype a product of dtype ``d`` accumulates in: float32 for the half types."""
    return _dt.float32 if d in (_dt.float16, _dt.bfloat16) else d


def _scaled_sum(input, product, beta, alpha, dtype):
    """``beta * input + alpha * product`` in the compute dtype, rounded once to ``dtype``."""
    if not dtype.is_floating_point:  # PyTorch casts the scalars to the integer type (addr alone refuses floats)
        beta, alpha = int(beta), int(alpha)
    out = product if alpha == 1 else product * alpha
    if beta != 0:
        x = _opmath(_as(input, dtype))
        out = out + (x if beta == 1 else x * beta)
    return _as(out, dtype)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` for 3-D batches; input broadcasts to the result."""
    if batch1.dim() >= 2 and batch2.dim() >= 3:  # PyTorch expands input first
        _check_expandable(input, (batch1._shape[0], batch1._shape[1], batch2._shape[2]))
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    b, n, k = batch1._shape
    if batch2._shape[0] != b or batch2._shape[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: "
                           f"[{batch2._shape[0]}, {batch2._shape[1]}].")
    shape = (b, n, batch2._shape[2])
    _check_expandable(input, shape)
    for t in (batch1, batch2):
        if t._dtype is not input._dtype:
            raise RuntimeError(f"expected scalar type {_pt_name(input._dtype)} but found {_pt_name(t._dtype)}")
    d = input._dtype
    prod = zeros(shape, dtype=_compute(input._dtype), device=input._device) if alpha == 0 or k == 0 else \
        bmm(_opmath(batch1), _opmath(batch2))
    return _scaled_sum(input, prod, beta, alpha, d)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_i(batch1[i] @ batch2[i])``; input broadcasts to the n x p result."""
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.dim() != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    b, n, k = batch1._shape
    b2, k2, p = batch2._shape
    if b != b2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and {b2}")
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{p})")
    _check_expandable(input, (n, p))
    for t in (batch1, batch2):
        if t._dtype is not input._dtype:
            raise RuntimeError(f"expected scalar type {_pt_name(input._dtype)} but found {_pt_name(t._dtype)}")
    d = input._dtype
    c = _compute(d)
    if alpha == 0 or k == 0 or b == 0:
        prod = zeros((n, p), dtype=c, device=input._device)
    else:
        # one matmul: (n, b*k) @ (b*k, p) sums the batch's products
        a = _opmath(batch1).permute((1, 0, 2)).reshape((n, b * k))
        prod = matmul(a, _opmath(batch2).reshape((b * k, p)))
    return _scaled_sum(input, prod, beta, alpha, d)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``; input broadcasts to the vector result."""
    if mat.dim() != 2 or vec.dim() != 1 or input.dim() > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}")
    n, k = mat._shape
    if vec._shape[0] != k or (input.dim() == 1 and input._shape[0] not in (1, n)):
        raise RuntimeError(f"size mismatch, got input ({input._shape[0] if input.dim() else 1}), mat ({n}x{k}), "
                           f"vec ({vec._shape[0]})")
    if not (input._dtype is mat._dtype is vec._dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_pt_name(input._dtype)}, "
                           f"{_pt_name(mat._dtype)}, and {_pt_name(vec._dtype)}")
    d = input._dtype
    if alpha == 0 or k == 0:
        prod = zeros((n,), dtype=_compute(input._dtype), device=input._device)
    else:
        prod = matmul(_opmath(mat), _opmath(vec))
    return _scaled_sum(input, prod, beta, alpha, d)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``; dtypes promote; input broadcasts to the result."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.dim()}-D")
    shape = (vec1._shape[0], vec2._shape[0])
    _check_expandable(input, shape)
    d = result_type(input, vec1, vec2)
    if d is _dt.bool:
        prod = vec1.unsqueeze(1) & vec2
        out = prod if alpha else prod & False
        return (out | input) if beta else out
    if not d.is_floating_point:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point "
                                   "number.")
    prod = outer(_opmath(_as(vec1, d)), _opmath(_as(vec2, d)))
    if alpha == 0:
        prod = prod * 0
    return _scaled_sum(input, prod, beta, alpha, d)


def ger(input, vec2):
    """The outer product of two 1-D tensors (another name of ``outer``)."""
    return outer(input, vec2)


def kron(input, other):
    """The Kronecker product: block ``(i, j, ...)`` of the result is ``input[i, j, ...] * other``; the
    operands are aligned at their last dims, dtypes promote."""
    na, nb = input.dim(), other.dim()
    n = max(na, nb)
    a = input.reshape((1,) * (n - na) + input._shape)
    b = other.reshape((1,) * (n - nb) + other._shape)
    # (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...) interleaves the dims; merging each pair gives the blocks
    ai = a.reshape(tuple(s for d in a._shape for s in (d, 1)))
    bi = b.reshape(tuple(s for d in b._shape for s in (1, d)))
    out = ai * bi
    return out.reshape(tuple(x * y for x, y in zip(a._shape, b._shape)))


def _tensordot_dims(a, b, dims):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(a.dim() - dims, a.dim())), list(range(dims))
    da, db = dims
    da = [da] if isinstance(da, int) else list(da)
    db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    return [_wrap_dim(d, a.dim()) for d in da], [_wrap_dim(d, b.dim()) for d in db]


def tensordot(a, b, dims=2):
    """The sum of products of ``a`` and ``b`` over the dims ``dims`` names: an int (the last ``dims`` of
    ``a`` with the first of ``b``) or two lists of dims."""
    if a._dtype is not b._dtype:
        raise RuntimeError("both inputs should have same dtype")
    da, db = _tensordot_dims(a, b, dims)
    for x, y in zip(da, db):
        if a._shape[x] != b._shape[y]:
            # a contracted dim of size 1 broadcasts against the other: the other is summed over it first
            if a._shape[x] == 1:
                b = b.sum((y,), True)
                continue
            if b._shape[y] == 1:
                a = a.sum((x,), True)
                continue
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a._shape[x]} in dim {x} "
                               f"and second has size {b._shape[y]} in dim {y}")
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    k = 1
    for d in da:
        k *= a._shape[d]
    ra = 1
    for d in free_a:
        ra *= a._shape[d]
    rb = 1
    for d in free_b:
        rb *= b._shape[d]
    left = a.permute(tuple(free_a + da)).reshape((ra, k))
    right = b.permute(tuple(db + free_b)).reshape((k, rb))
    out = matmul(left, right)
    return out.reshape(tuple(a._shape[d] for d in free_a) + tuple(b._shape[d] for d in free_b))


# -- einsum -------------------------------------------------------------------------------------
def _einsum_error(msg):
    return RuntimeError(f"einsum(): {msg}")


def _parse_subscripts(text, start):
    """Labels of one operand's subscripts: letters, and ``...`` as None (once)."""
    labels = []
    i = 0
    seen_ellipsis = False
    while i < len(text):
        c = text[i]
        if c == " ":
            i += 1
            continue
        if c == ".":
            if seen_ellipsis:
                raise _einsum_error(f"found '.' for operand {start[1]} for which an ellipsis was already found")
            if text[i:i + 3] != "...":
                raise _einsum_error(f"found '.' for operand {start[1]} that is not part of any ellipsis")
            labels.append(None)
            seen_ellipsis = True
            i += 3
            continue
        if c not in _LETTERS:
            raise _einsum_error(f"invalid subscript given at index {start[0] + i} in the equation string, subscripts "
                                "must be in [a-zA-Z]")
        labels.append(c)
        i += 1
    return labels


def _sublist_labels(sub):
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append(None)
        elif isinstance(s, int) and 0 <= s < 52:
            out.append(_LETTERS[s])
        else:
            raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
    return out


def _einsum_args(args):
    """(per-operand labels, output labels or None, operands) from either calling form."""
    if args and isinstance(args[0], str):
        eq, ops = args[0], list(args[1:])
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
        lhs, arrow, rhs = eq.partition("->")
        parts = lhs.split(",")
        inputs, pos = [], 0
        for k, p in enumerate(parts):
            inputs.append(_parse_subscripts(p, (pos, k)))
            pos += len(p) + 1
        out = _parse_subscripts(rhs, (len(lhs) + 2, len(parts))) if arrow else None
        if len(ops) > len(inputs):
            raise _einsum_error("more operands were provided than specified in the equation")
        if len(ops) < len(inputs):
            raise _einsum_error("fewer operands were provided than specified in the equation")
        return inputs, out, ops
    ops, inputs = [], []
    rest = list(args)
    while len(rest) >= 2:
        ops.append(rest.pop(0))
        inputs.append(_sublist_labels(rest.pop(0)))
    out = _sublist_labels(rest[0]) if rest else None
    return inputs, out, ops


def _expand_labels(labels, t, k, n_ell):
    """Per dim of operand ``k``: its label, with the ellipsis as labels ``0 .. n_ell-1`` aligned right."""
    nd = t.dim()
    if None not in labels:
        if len(labels) != nd:
            raise _einsum_error(f"the number of subscripts in the equation ({len(labels)}) does not match the number "
                                f"of dimensions ({nd}) for operand {k} and no ellipsis was given")
        return list(labels)
    named = len(labels) - 1
    if nd < named:
        raise _einsum_error(f"the number of subscripts in the equation ({named}) is more than the number of "
                            f"dimensions ({nd}) for operand {k}")
    e = nd - named
    i = labels.index(None)
    return labels[:i] + list(range(n_ell - e, n_ell)) + labels[i + 1:]


def _take_diagonals(t, labels, k):
    """A repeated label within one operand takes the diagonal of those dims."""
    while True:
        dup = next((lab for i, lab in enumerate(labels) if lab in labels[i + 1:]), None)
        if dup is None:
            return t, labels
        i = labels.index(dup)
        j = labels.index(dup, i + 1)
        if t._shape[i] != t._shape[j]:
            raise _einsum_error(f"subscript {dup} is repeated for operand {k} but the sizes don't match, "
                                f"{t._shape[j]} != {t._shape[i]}")
        t = t.diagonal(0, i, j)
        labels = [lab for m, lab in enumerate(labels) if m not in (i, j)] + [dup]


def _contract_pair(a, la, b, lb, keep):
    """``a`` and ``b`` multiplied, summed over their shared labels not in ``keep``: one batched matmul
    over (shared kept labels) x (a's own) x (contracted) and (contracted) x (b's own)."""
    batch = [x for x in la if x in lb and x in keep]
    contracted = [x for x in la if x in lb and x not in keep]
    only_a = [x for x in la if x not in lb]
    only_b = [x for x in lb if x not in la]
    size = {}
    for t, ls in ((a, la), (b, lb)):
        for d, lab in zip(t._shape, ls):
            size[lab] = max(size.get(lab, 1), d)
    # a contracted label of size 1 on one side broadcasts: sum the other side over it first
    for lab in list(contracted):
        ia, ib = la.index(lab), lb.index(lab)
        if a._shape[ia] != b._shape[ib]:
            if a._shape[ia] == 1:
                b = b.sum((ib,), True)
            else:
                a = a.sum((ia,), True)
            size[lab] = 1
    pa = a.permute(tuple(la.index(x) for x in batch + only_a + contracted))
    pb = b.permute(tuple(lb.index(x) for x in batch + contracted + only_b))
    bshape = tuple(size[x] for x in batch)
    pa = pa.expand(bshape + pa._shape[len(batch):])
    pb = pb.expand(bshape + pb._shape[len(batch):])

    def count(ls):
        n = 1
        for x in ls:
            n *= size[x]
        return n
    nb, na_, nc, nbb = count(batch), count(only_a), count(contracted), count(only_b)
    out = matmul(pa.reshape((nb, na_, nc)), pb.reshape((nb, nc, nbb)))
    out = out.reshape(bshape + tuple(size[x] for x in only_a) + tuple(size[x] for x in only_b))
    return out, batch + only_a + only_b


def einsum(*args):
    """Sums of products by Einstein notation: ``einsum("ij,jk->ik", a, b)`` (operands as arguments or one
    list; ``...`` for broadcast dims; without ``->`` the output is the ellipsis dims and the labels seen
    once, in alphabetical order with capitals first), or the sublist form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. Operands are contracted left to right, each pair in one
    batched matrix product."""
    inputs, out, ops = _einsum_args(args)
    for t in ops:
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): expected Tensor operands, got {type(t).__name__}")
    n_ell = 0
    for labels, t in zip(inputs, ops):
        if None in labels:
            n_ell = max(n_ell, t.dim() - (len(labels) - 1))
    expanded = []
    sizes = {}
    counts = {}  # occurrences in the equation: a label seen twice is summed when the output is implicit
    for k, (labels, t) in enumerate(zip(inputs, ops)):
        ls = _expand_labels(labels, t, k, n_ell)
        for lab in ls:
            counts[lab] = counts.get(lab, 0) + 1
        t, ls = _take_diagonals(t, ls, k)
        for d, lab in zip(t._shape, ls):
            seen = sizes.get(lab)
            if seen is not None and d != seen and d != 1 and seen != 1:
                name = lab if isinstance(lab, str) else "..."
                raise _einsum_error(f"subscript {name} has size {d} for operand {k} which does not broadcast with "
                                    f"previously seen size {seen}")
            sizes[lab] = d if seen is None or seen == 1 else seen
        expanded.append((t, ls))
    ell = list(range(n_ell))
    if out is None:
        out_labels = ell + sorted((x for x in counts if isinstance(x, str) and counts[x] == 1), key=_LETTERS.index)
    else:
        out_labels = []
        for lab in out:
            if lab is None:
                out_labels.extend(ell)
                continue
            if lab in out_labels:
                raise _einsum_error(f"output subscript {lab} appears more than once in the output")
            if lab not in sizes:
                raise _einsum_error(f"output subscript {lab} does not appear in the equation for any input operand")
            out_labels.append(lab)
    # labels summed away: a label seen by one operand only (and not kept) is summed right away
    result, rl = None, None
    for k, (t, ls) in enumerate(expanded):
        later = {x for _, l2 in expanded[k + 1:] for x in l2}
        keep = set(out_labels) | later
        own = [i for i, x in enumerate(ls) if x not in keep and (result is None or x not in rl)]
        if own:
            t = t.sum(tuple(own))
            ls = [x for i, x in enumerate(ls) if i not in own]
        if result is None:
            result, rl = t, ls
            continue
        result, rl = _contract_pair(result, rl, t, ls, keep)
    gone = [i for i, x in enumerate(rl) if x not in out_labels]
    if gone:
        result = result.sum(tuple(gone))
        rl = [x for x in rl if x in out_labels]
    result = result.permute(tuple(rl.index(x) for x in out_labels)) if rl else result
    shape = tuple(sizes[x] for x in out_labels)
    if result._shape != shape:
        result = result.expand(shape)
    return result


for _name, _fn in {"baddbmm": baddbmm, "addbmm": addbmm, "addmv": addmv, "addr": addr, "ger": ger,
                   "kron": kron}.items():
    attach(_name, _fn)
    public(_name, _fn)
public("tensordot", tensordot)
public("einsum", einsum)
