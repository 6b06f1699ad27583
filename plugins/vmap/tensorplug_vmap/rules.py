"""Batching rules, grouped by kind, and the table that assigns one to each op.

A rule is ``rule(ctx, op, vals, bdims, args) -> (result, out_bdims)``:

* ``ctx``: the :class:`~tensorplug_vmap.batched.VmapLevel` being peeled off
  (``ctx.size`` examples, ``ctx.randomness``);
* ``vals``: the op's arguments in schema order, with every tensor batched at
  this level replaced by its value (a ``Tensor[]`` argument by a list);
* ``bdims``: per argument the batch dimension of its value, None when the
  argument is not batched at this level (a list for a ``Tensor[]`` argument);
* ``args``: the arguments as the op received them (logical shapes, dtypes).

It computes the result for all examples at once with ordinary op calls on
the values (so lower vmap levels and autograd see them) and returns it with
the batch dimension of each output (None: the same for every example). For
in-place ops it writes into the value of ``self`` and returns ``(None,
None)``. Each family below is one general mechanism; :data:`RULES` maps
op names to them, and every op tagged ``Tag.pointwise`` gets the elementwise
family from its tag (:func:`rule_for`).
"""

from __future__ import annotations

import tensorplug
from tensorplug import Tag
from tensorplug.plugin_api import lookup_op, result_type, broadcast_shapes

from .batched import BatchedTensor, wrap


def _entry(name):
    return lookup_op(f"tensorplug::{name}").positional


_permute = _entry("permute")
_unsqueeze = _entry("unsqueeze")
_expand = _entry("expand")
_reshape = _entry("reshape")
_view = _entry("view")
_squeeze_dims = _entry("squeeze.dims")
_to_copy = _entry("_to_copy")
_gather = _entry("gather")
_contiguous = _entry("contiguous")

INPLACE_ERROR = (
    "vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args that "
    "has more elements than `self`. This happened due to `other` being vmapped over but `self` not being "
    "vmapped over in a vmap. Please try to use out-of-place operators instead of {name}. If said operator is "
    "being called inside the tensorplug framework, please file a bug report instead.")

RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def inplace_error(op):
    """PyTorch's error for an in-place op writing batched values into an unbatched ``self``."""
    arith = op.name.rstrip("_") in ("add", "sub", "mul", "div", "copy", "masked_fill")
    return RuntimeError(INPLACE_ERROR.format(name="inplace arithmetic" if arith else op.qualname))


# --------------------------------------------------------------------------
# Moving the batch dimension
# --------------------------------------------------------------------------
def front(v, bd):
    """``v`` with its batch dimension ``bd`` moved to the front (a view)."""
    if bd == 0:
        return v
    n = len(v._shape)
    return _permute(v, (bd,) + tuple(i for i in range(n) if i != bd))


def pad(v, k):
    """Insert ``k`` size-1 dims after the batch dim (front) of ``v``."""
    for _ in range(k):
        v = _unsqueeze(v, 1)
    return v


def expand_front(v, bd, size):
    """``v`` batched at the front: moved there, or expanded when ``v`` is unbatched (``bd`` None)."""
    if bd is None:
        return _expand(_unsqueeze(v, 0), (size,) + v._shape, False)
    return front(v, bd)


def logical_ndim(v, bd):
    return len(v._shape) - (bd is not None)


def wrap_dim(d, n):
    """Normalize logical dim ``d`` of an ``n``-dim tensor (0-dim tensors accept 0 and -1)."""
    m = n if n > 0 else 1
    if not -m <= d < m:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-m}, {m - 1}], but got {d})")
    return d + m if d < 0 else d


# --------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------
def unary(ctx, op, vals, bdims, args):
    """Ops on one tensor that act per element (or keep all dims): the batch dim stays where it is."""
    if op.schema.arguments[0].is_write:
        op.positional(*vals)
        return None, None
    return op.positional(*vals), bdims[0]


def broadcasting(positions, promote=None, inplace=False):
    """Ops broadcasting the tensors at ``positions``: batch dims to the front, per-example dims right-aligned.

    ``promote``: positions whose dtypes promote together; a batched argument of one
    example with 0 dims is a 1-dim tensor physically, which ranks differently in
    type promotion, so those arguments are cast to the logical result type first.
    """
    def rule(ctx, op, vals, bdims, args):
        if inplace and bdims[0] is None:
            raise inplace_error(op)
        n = 0
        zero_batched = False
        for i in positions:
            v = vals[i]
            if v is not None:
                ln = logical_ndim(v, bdims[i])
                if ln > n:
                    n = ln
                if ln == 0 and bdims[i] is not None:
                    zero_batched = True
        out = list(vals)
        for i in positions:
            bd = bdims[i]
            if bd is not None:
                v = front(vals[i], bd)
                k = n - (len(v._shape) - 1)
                out[i] = pad(v, k) if k else v
        if promote and zero_batched:
            ts = [args[i] for i in promote if args[i] is not None]
            if len({t._dtype for t in ts}) > 1:
                rt = result_type(*ts)
                for i in promote:
                    if out[i] is not None and out[i]._dtype is not rt and not args[i]._wrapped_number:
                        out[i] = _to_copy(out[i], rt, None, False)
        res = op.positional(*out)
        return (None, None) if inplace else (res, 0)
    return rule


def same_shape(positions):
    """Ops whose tensors must have equal shapes (fused backward kernels): every one batched in front."""
    def rule(ctx, op, vals, bdims, args):
        out = list(vals)
        for i in positions:
            out[i] = expand_front(vals[i], bdims[i], ctx.size)
        return op.positional(*out), 0
    return rule


# --------------------------------------------------------------------------
# Dims: reductions and dim-taking ops
# --------------------------------------------------------------------------
def dim_shift(*dim_positions, nout=1):
    """Ops whose int arguments at ``dim_positions`` name per-example dims: shift them past the batch dim."""
    def rule(ctx, op, vals, bdims, args):
        v = front(vals[0], bdims[0])
        n = len(v._shape) - 1
        out = list(vals)
        out[0] = v
        for p in dim_positions:
            out[p] = wrap_dim(vals[p], n) + 1
        if n == 0:
            # one example is 0-dim: work on a 1-dim example and drop that dim again
            out[0] = _unsqueeze(v, 1)
            res = op.positional(*out)
            if nout == 1:
                return _squeeze_dims(res, (1,)), 0
            return tuple(_squeeze_dims(r, (1,)) for r in res), (0,) * nout
        res = op.positional(*out)
        return res, (0 if nout == 1 else (0,) * nout)
    return rule


def dims_shift(dims_pos=1):
    """Ops whose int list at ``dims_pos`` names per-example dims (the FFT primitives): batch dim in front,
    the dims shifted past it."""
    def rule(ctx, op, vals, bdims, args):
        v = front(vals[0], bdims[0])
        n = len(v._shape) - 1
        out = list(vals)
        out[0] = v
        out[dims_pos] = [wrap_dim(d, n) + 1 for d in vals[dims_pos]]
        return op.positional(*out), 0
    return rule


def front_rule(ctx, op, vals, bdims, args):
    """Ops on one tensor that read its trailing dims (``view_as_complex``): the batch dim in front."""
    return op.positional(front(vals[0], bdims[0]), *vals[1:]), 0


def reduction(dim_pos=1, keepdim_pos=2, single=False):
    """Reductions over an optional dim list (None or empty: all dims) or one ``int`` dim."""
    def rule(ctx, op, vals, bdims, args):
        v = front(vals[0], bdims[0])
        n = len(v._shape) - 1
        dim = vals[dim_pos]
        out = list(vals)
        if n == 0:
            # a 0-dim example: reduce a size-1 dim instead, which keeps the op's result dtype
            out[0] = _unsqueeze(v, 1)
            out[dim_pos] = 1 if single else (1,)
            out[keepdim_pos] = False
            return op.positional(*out), 0
        if single:
            out[dim_pos] = wrap_dim(dim, n) + 1
        elif dim is None or dim == ():
            out[dim_pos] = tuple(range(1, n + 1))
        else:
            out[dim_pos] = tuple(wrap_dim(d, n) + 1 for d in dim)
        out[0] = v
        return op.positional(*out), 0
    return rule


def arg_reduction(ctx, op, vals, bdims, args):
    """argmax/argmin: ``dim=None`` indexes the flattened example."""
    v = front(vals[0], bdims[0])
    n = len(v._shape) - 1
    dim, keepdim = vals[1], vals[2]
    if dim is None or n == 0:
        flat = _reshape(v, (v._shape[0], -1))
        res = op.positional(flat, 1, False)
        if keepdim and dim is None:
            res = _view(res, (v._shape[0],) + (1,) * n)
        return res, 0
    return op.positional(v, wrap_dim(dim, n) + 1, keepdim), 0


# --------------------------------------------------------------------------
# Views
# --------------------------------------------------------------------------
def _resolve_size(size, numel):
    size = tuple(size)
    if -1 in size:
        known = 1
        for s in size:
            if s != -1:
                known *= s
        size = tuple(numel // known if known and s == -1 else s for s in size)
    return size


def view_rule(ctx, op, vals, bdims, args):
    """view/_unsafe_view: the batch dim in front, the new per-example size after it."""
    v = front(vals[0], bdims[0])
    size = (v._shape[0],) + _resolve_size(vals[1], args[0].numel())
    if v is not vals[0] and not v.is_contiguous():
        # the examples are interleaved: a view cannot express the new shape per example
        v = _contiguous(v)
    return op.positional(v, size), 0


def permute_rule(ctx, op, vals, bdims, args):
    bd = bdims[0]
    n = len(vals[0]._shape) - 1
    phys = [i if i < bd else i + 1 for i in range(n)]
    return _permute(vals[0], (bd,) + tuple(phys[wrap_dim(d, n)] for d in vals[1])), 0


def expand_rule(ctx, op, vals, bdims, args):
    v = front(vals[0], bdims[0])
    size = tuple(vals[1])
    n = len(v._shape) - 1
    if len(size) > n:
        v = pad(v, len(size) - n)
    return op.positional(v, (v._shape[0],) + size, vals[2]), 0


def unsqueeze_rule(ctx, op, vals, bdims, args):
    v = front(vals[0], bdims[0])
    n = len(v._shape) - 1
    return op.positional(v, wrap_dim(vals[1], n + 1) + 1), 0


def squeeze_rule(ctx, op, vals, bdims, args):
    v = front(vals[0], bdims[0])
    shape = v._shape[1:]
    n = len(shape)
    dims = vals[1]
    if dims is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = tuple(wrap_dim(d, n) for d in dims)
    if n == 0:
        return v, 0
    return op.positional(v, tuple(d + 1 for d in dims)), 0


def as_strided_rule(ctx, op, vals, bdims, args):
    """Example ``k`` starts one batch stride after example ``k - 1``."""
    value, bd = vals[0], bdims[0]
    bstride = value.stride(bd)
    offset = vals[3] if vals[3] is not None else value.storage_offset()
    return op.positional(value, (value._shape[bd],) + tuple(vals[1]), (bstride,) + tuple(vals[2]), offset), 0


# --------------------------------------------------------------------------
# Matrix products
# --------------------------------------------------------------------------
def matmul_rule(ctx, op, vals, bdims, args):
    """matmul for every combination of batched operands and ranks (vectors made matrices, then restored)."""
    a, b = vals
    ba, bb = bdims
    na, nb = args[0].dim(), args[1].dim()
    if bb is None and nb <= 2:
        # the batch dim rides along as a leading (broadcast) dim of ``a``
        return op.positional(front(a, ba), b), 0
    if ba is not None:
        a = front(a, ba)
        if na == 1:
            a = _unsqueeze(a, 1)
    elif na == 1:
        a = _unsqueeze(a, 0)
    if bb is not None:
        b = front(b, bb)
        if nb == 1:
            b = _unsqueeze(b, -1)
    elif nb == 1:
        b = _unsqueeze(b, -1)
    ma, mb = max(na, 2), max(nb, 2)
    n = max(ma, mb)
    if ba is not None and ma < n:
        a = pad(a, n - ma)
    if bb is not None and mb < n:
        b = pad(b, n - mb)
    res = op.positional(a, b)
    if nb == 1:
        res = _squeeze_dims(res, (-1,))
    if na == 1:
        res = _squeeze_dims(res, (-2 if nb != 1 else -1,))
    return res, 0


# --------------------------------------------------------------------------
# Indexing
# --------------------------------------------------------------------------
def gather_rule(ctx, op, vals, bdims, args):
    n = args[0].dim()
    s = expand_front(vals[0], bdims[0], ctx.size)
    i = expand_front(vals[2], bdims[2], ctx.size)
    if n == 0:
        return _squeeze_dims(op.positional(_unsqueeze(s, 1), 1, _unsqueeze(i, 1), vals[3]), (1,)), 0
    return op.positional(s, wrap_dim(vals[1], n) + 1, i, vals[3]), 0


def scatter_rule(ctx, op, vals, bdims, args):
    """scatter_/scatter_add_ (in place): index and source batched like ``self``."""
    if bdims[0] is None:
        raise inplace_error(op)
    n = args[0].dim()
    s = front(vals[0], bdims[0])
    i = expand_front(vals[2], bdims[2], ctx.size)
    src = expand_front(vals[3], bdims[3], ctx.size)
    if n == 0:
        s, i, src = _unsqueeze(s, 1), _unsqueeze(i, 1), _unsqueeze(src, 1)
    op.positional(s, wrap_dim(vals[1], n) + 1 if n else 1, i, src)
    return None, None


def index_select_rule(ctx, op, vals, bdims, args):
    n = args[0].dim()
    d = wrap_dim(vals[1], n)
    if bdims[2] is None:
        s = front(vals[0], bdims[0])
        if n == 0:
            return _squeeze_dims(op.positional(_unsqueeze(s, 1), 1, vals[2]), (1,)), 0
        return op.positional(s, d + 1, vals[2]), 0
    # a batched index: per example its own positions, which is a gather along dim d
    s = expand_front(vals[0], bdims[0], ctx.size)
    if n == 0:
        s = _unsqueeze(s, 1)
        n = 1
    idx = _reshape(front(vals[2], bdims[2]), (ctx.size, -1))
    k = idx._shape[1]
    shape = list(s._shape)
    shape[d + 1] = k
    idx = _view(idx, (ctx.size,) + (1,) * d + (k,) + (1,) * (n - d - 1))
    res = _gather(s, d + 1, _expand(idx, tuple(shape), False), False)
    if args[0].dim() == 0:
        res = _squeeze_dims(res, (1,))
    return res, 0


def _leading_index(ctx, device, indices, ibd):
    """The indices with the example number prepended as one more index, each batched index moved to the
    front and padded to the rank of the broadcast per-example index shape."""
    arange = tensorplug.arange
    shapes = [t._shape if bd is None else t._shape[:bd] + t._shape[bd + 1:] for t, bd in zip(indices, ibd)]
    k = len(broadcast_shapes(*shapes))
    new = [_view(arange(ctx.size, device=device), (ctx.size,) + (1,) * k)]
    for t, bd in zip(indices, ibd):
        if bd is None:
            new.append(t)  # shared by every example: broadcasts from the right
        else:
            f = front(t, bd)
            new.append(pad(f, k - (len(f._shape) - 1)))
    return new, k


def _plain_integer_indices(indices):
    """Integer index tensors with no slice (None) among them: the example number can lead them."""
    return indices and not any(t is None or not t._dtype.is_floating_point and t._dtype.itemsize == 1
                               for t in indices)


def index_rule(ctx, op, vals, bdims, args):
    """Advanced indexing: indices shared by all examples index every example at once; batched integer
    indices get the example number as a leading index (masks and slices among them loop)."""
    if any(b is not None for b in bdims[1]):
        if not _plain_integer_indices(vals[1]):
            return None
        v = expand_front(vals[0], bdims[0], ctx.size)
        new, _ = _leading_index(ctx, v._device, vals[1], bdims[1])
        return op.positional(v, new), 0
    v = front(vals[0], bdims[0])
    indices = list(vals[1])
    res = op.positional(v, [None] + indices)
    used = [i for i, t in enumerate(indices) if t is not None]
    if used and used[-1] - used[0] + 1 != len(used):
        # separated advanced indices put their dims first, before the batch dim
        shapes = [t._shape for t in indices if t is not None]
        return res, len(broadcast_shapes(*shapes))
    return res, 0


def index_put_rule(ctx, op, vals, bdims, args):
    """index_put_ (in place) into a batched ``self``: the example number becomes one more index in front,
    so one call writes every example. Masks and slices (None) among the indices loop instead."""
    if bdims[0] is None:
        raise inplace_error(op)
    if not _plain_integer_indices(vals[1]):
        return None
    s = front(vals[0], bdims[0])
    new, k = _leading_index(ctx, s._device, vals[1], bdims[1])
    indices = vals[1]
    v = vals[2]
    if bdims[2] is not None:
        v = front(v, bdims[2])
        # one example's values broadcast against (indexed shape) + (dims the indices leave)
        v = pad(v, k + len(s._shape) - 1 - len(indices) - (len(v._shape) - 1))
    op.positional(s, new, v, vals[3])
    return None, None


def cat_rule(ctx, op, vals, bdims, args):
    ts = args[0]
    ref = next((t for t in ts if not (t.dim() == 1 and t._shape[0] == 0)), ts[0])
    d = wrap_dim(vals[1], ref.dim())
    parts = []
    for v, bd, t in zip(vals[0], bdims[0], ts):
        if t.dim() == 1 and t._shape[0] == 0 and ref.dim() != 1:
            continue  # PyTorch's legacy empty tensors, skipped by cat
        parts.append(expand_front(v, bd, ctx.size))
    return op.positional(parts, d + 1), 0


_bcast_inplace = broadcasting((0, 1), inplace=True)


def masked_fill_rule(ctx, op, vals, bdims, args):
    """masked_fill_ takes a 0-dim value; a batched one (one value per example) becomes a where + copy_."""
    if bdims[2] is None:
        return _bcast_inplace(ctx, op, vals, bdims, args)
    if bdims[0] is None:
        raise inplace_error(op)
    s = front(vals[0], bdims[0])
    n = len(s._shape) - 1
    m = vals[1]
    if bdims[1] is not None:
        m = front(m, bdims[1])
        m = pad(m, n - (len(m._shape) - 1))
    v = pad(_to_copy(front(vals[2], bdims[2]), s._dtype, None, False), n)
    _entry("copy_")(s, _entry("where.self")(m, v, s), False)
    return None, None


LOGICAL = "logical"
"""An out_bdims value: the result is already a tensor of this level (the kernel returns it as is)."""


def out_of_place_update(ctx, op, vals, bdims, args):
    """scatter/index_put/masked_fill (composites: clone, then update in place) with batched updates of an
    unbatched ``self``: ``self`` is batched first, so the in-place step has somewhere to write them."""
    decompose = op.table[("CompositeImplicitAutograd", None)].kernel
    if bdims[0] is None:
        args = list(args)
        args[0] = wrap(expand_front(vals[0], None, ctx.size), 0, ctx.level)
    return decompose(*args), LOGICAL


# --------------------------------------------------------------------------
# Random
# --------------------------------------------------------------------------
def _check_random(ctx):
    if ctx.randomness == "error":
        raise RuntimeError(RANDOM_ERROR)


def random_inplace(ctx, op, vals, bdims, args):
    """uniform_, normal_ and the other in-place fills on a batched tensor: different draws per example, or one
    shared."""
    _check_random(ctx)
    if ctx.randomness == "different":
        op.positional(*vals)
        return None, None
    v = vals[0]
    one = _entry("select.int")(v, bdims[0], 0)
    op.positional(one, *vals[1:])
    # one example's draw, copied out first: it is part of v, and copy_ rejects a source overlapping its target
    _entry("copy_")(v, _unsqueeze(_entry("clone")(one), bdims[0]), False)
    return None, None


def bernoulli_rule(ctx, op, vals, bdims, args):
    _check_random(ctx)
    p = vals[0]
    if ctx.randomness == "different":
        return op.positional(*vals), bdims[0]
    u = _entry("select.int")(tensorplug.rand_like(p), bdims[0], 0)  # one draw, compared with every example's p
    return _to_copy(_entry("lt.Tensor")(_unsqueeze(u, bdims[0]), p), p._dtype, None, False), bdims[0]


def multinomial_rule(ctx, op, vals, bdims, args):
    _check_random(ctx)
    if ctx.randomness == "same":
        return None
    v = front(vals[0], bdims[0])
    shape = v._shape
    flat = _reshape(v, (-1, shape[-1]))
    res = op.positional(flat, *vals[1:])
    return _view(res, shape[:-1] + (res._shape[-1],)), 0


def _fold_examples(ctx, v, bd, n_dim):
    """``v`` (one example's logical dim ``n_dim`` is the sample dim N) with the examples folded into that dim:
    B * N samples, example-major. An unbatched ``v`` is shared by every example."""
    v = front(v, bd) if bd is not None else _expand(_unsqueeze(v, 0), (ctx.size,) + tuple(v._shape))
    shape = v._shape
    if n_dim:
        v = _permute(v, tuple(range(1, n_dim + 1)) + (0,) + tuple(range(n_dim + 1, len(shape))))
        shape = v._shape
    return _reshape(v, shape[:n_dim] + (shape[n_dim] * shape[n_dim + 1],) + shape[n_dim + 2:])


def _ctc_targets(ctx, targets, bd, target_lengths):
    if len(targets._shape) - (bd is not None) == 2:
        return _fold_examples(ctx, targets, bd, 0)
    # concatenated targets: each example's first sum(target_lengths) labels, one example after the other
    v = front(targets, bd) if bd is not None else _expand(_unsqueeze(targets, 0), (ctx.size,) + tuple(targets._shape))
    return _reshape(v.narrow(1, 0, sum(target_lengths)), (-1,))


def ctc_loss_rule(ctx, op, vals, bdims, args):
    """The examples become more samples of the CTC batch: one call over B * N samples."""
    lp, targets, il, tl, blank, zero_inf = vals
    t_max, n = args[0]._shape[:2]
    nll, alpha = op.positional(_fold_examples(ctx, lp, bdims[0], 1), _ctc_targets(ctx, targets, bdims[1], tl),
                               list(il) * ctx.size, list(tl) * ctx.size, blank, zero_inf)
    return (_reshape(nll, (ctx.size, n)), _reshape(alpha, (ctx.size, n) + alpha._shape[1:])), (0, 0)


def ctc_loss_backward_rule(ctx, op, vals, bdims, args):
    grad, lp, targets, il, tl, nll, alpha, blank, zero_inf = vals
    t_max, n, c = args[1]._shape
    res = op.positional(_fold_examples(ctx, grad, bdims[0], 0), _fold_examples(ctx, lp, bdims[1], 1),
                        _ctc_targets(ctx, targets, bdims[2], tl), list(il) * ctx.size, list(tl) * ctx.size,
                        _fold_examples(ctx, nll, bdims[5], 0), _fold_examples(ctx, alpha, bdims[6], 0), blank,
                        zero_inf)
    return _reshape(res, (t_max, ctx.size, n, c)), 1


# --------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------
# Elementwise ops get their rule from their tag (Tag.pointwise: see pointwise_rule below), not from a
# list here; these are the elementwise ops PyTorch does not tag pointwise.
_UNARY = ["_to_copy", "alias", "fill_.Scalar", "abs_"]
_BINARY_INPLACE = ["copy_"]

RULES: dict = {}
for _n in _UNARY:
    RULES[_n] = unary
for _n in _BINARY_INPLACE:
    RULES[_n] = broadcasting((0, 1), inplace=True)
RULES.update({
    "sigmoid_backward": same_shape((0, 1)),
    "tanh_backward": same_shape((0, 1)),
    "threshold_backward": same_shape((0, 1)),
    "where.self": broadcasting((0, 1, 2), promote=(1, 2)),  # the condition does not promote
    "masked_fill_.Tensor": masked_fill_rule,
    "sum.dim_IntList": reduction(),
    "amax": reduction(),
    "amin": reduction(),
    "any.dims": reduction(),
    "all.dims": reduction(),
    "prod.dim_int": reduction(single=True),
    "argmax": arg_reduction,
    "argmin": arg_reduction,
    "cumsum": dim_shift(1),
    "log_softmax.int": dim_shift(1),
    "sort.stable": dim_shift(2, nout=2),
    "select.int": dim_shift(1),
    "slice.Tensor": dim_shift(1),
    "diagonal": dim_shift(2, 3),
    "unfold": dim_shift(1),
    "view": view_rule,
    "_unsafe_view": view_rule,
    "permute": permute_rule,
    "expand": expand_rule,
    "unsqueeze": unsqueeze_rule,
    "squeeze.dims": squeeze_rule,
    "as_strided": as_strided_rule,
    "matmul": matmul_rule,
    "gather": gather_rule,
    "scatter_.src": scatter_rule,
    "scatter_add_": scatter_rule,
    "index_select": index_select_rule,
    "index.Tensor": index_rule,
    "index_put_": index_put_rule,
    "cat": cat_rule,
    "scatter.src": out_of_place_update,
    "scatter.value": out_of_place_update,
    "scatter_add": out_of_place_update,
    "index_put": out_of_place_update,
    "masked_fill.Tensor": out_of_place_update,
    "masked_fill.Scalar": out_of_place_update,
    "uniform_": random_inplace,
    "normal_": random_inplace,
    "random_.from": random_inplace,
    "bernoulli_.float": random_inplace,
    **dict.fromkeys(("exponential_", "geometric_", "cauchy_", "log_normal_"), random_inplace),
    "bernoulli": bernoulli_rule,
    "multinomial": multinomial_rule,
    "view_as_real": unary,  # the new dim is the last: the batch dim stays
    "view_as_complex": front_rule,
    "_fft_c2c": dims_shift(),
    "_fft_r2c": dims_shift(),
    "_fft_c2r": dims_shift(),
    "_ctc_loss": ctc_loss_rule,
    "_ctc_loss_backward": ctc_loss_backward_rule,
})



def pointwise_rule(op):
    """The rule of an op tagged ``Tag.pointwise`` that has no entry in :data:`RULES`: ``unary`` for one
    Tensor argument, else ``broadcasting`` over its Tensor arguments (promoting them together, or
    in place into ``self``). The tag, not a list of names, decides: a new elementwise op, the core's
    or a plugin's, gets its batching rule from its definition."""
    positions = tuple(i for i, a in enumerate(op.schema.arguments) if a.type == "Tensor" and not a.is_list)
    if positions == (0,):
        return unary
    if len(positions) == 1:  # one tensor after a scalar (remainder.Scalar_Tensor): its batch dim stays
        p = positions[0]
        return lambda ctx, op, vals, bdims, args: (op.positional(*vals), bdims[p])
    if op.schema.arguments[0].is_write:
        return broadcasting(positions, inplace=True)
    return broadcasting(positions, promote=positions)


def rule_for(op):
    """The batching rule of ``op``: its entry in :data:`RULES`, else the one its tags give, else None."""
    rule = RULES.get(op.schema.full_name) if op.namespace == "tensorplug" else None
    if rule is None and Tag.pointwise in op.tags:
        rule = pointwise_rule(op)
    return rule


NO_RULE: dict = {}
"""Contract primitives left to the slow fallback on purpose, with the reason."""

__all__ = ["RULES", "NO_RULE", "pointwise_rule", "rule_for", "front", "pad", "expand_front", "wrap_dim", "broadcasting", "unary", "reduction",
           "dim_shift", "inplace_error", "BatchedTensor"]
