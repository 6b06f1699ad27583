"""The backward engine: dependency counting and a ready queue by sequence number.

Iterative (no recursion): a graph of any depth runs in a loop, in time linear
in its size. Gradients are summed per (node, output slot) in input buffers; a
node runs once every edge into it has delivered, latest-created first.
"""

from __future__ import annotations

import sys
import warnings
from contextlib import ExitStack
from heapq import heapify, heappop, heappush

from .. import dtypes as _dt
from ..tensor import Tensor, OBSERVER as _OBSERVER
from . import _ops
from .graph import AccumulateGrad, gradient_edge, has_nan, forward_stack, _anomaly, NODE_SCOPES, check_hook_result
from .grad_mode import set_grad_enabled

# CPython counts references; elsewhere never steal (always copy), which is only slower
_refcount = getattr(sys, "getrefcount", lambda obj: 1 << 30)


def _collect(roots, targets):
    """Dependency counts of the graph below ``roots``, restricted to nodes that
    lead to a node in ``targets`` when targets are given."""
    roots_set = set(roots)
    stack = list(roots)
    deps = {}
    order = [] if targets is not None else None
    while stack:
        node = stack.pop()
        if order is not None:
            order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            d = deps.get(nxt)
            if d is None:
                # first edge into nxt: it has not been seen unless it is a root (already on the stack)
                deps[nxt] = 1
                if nxt not in roots_set:
                    stack.append(nxt)
            else:
                deps[nxt] = d + 1
    if targets is None:
        return deps, None
    needed = set(n for n in order if n in targets)
    changed = True
    # a node is needed when one of its successors is; iterate to a fixed point over the
    # reverse of discovery order (children are mostly discovered after their parents)
    while changed:
        changed = False
        for node in reversed(order):
            if node in needed:
                continue
            if any(nxt in needed for nxt, _ in node.next_functions if nxt is not None):
                needed.add(node)
                changed = True
    deps = {}
    for node in needed:
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt in needed:
                deps[nxt] = deps.get(nxt, 0) + 1
    return deps, needed


def _validate(node, i, g, meta):
    shape, dtype, device = meta
    if g._shape != shape:
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - got "
                           f"{list(g._shape)} but expected shape compatible with {list(shape)}")
    if g._dtype is not dtype or g._device is not device:
        if g._dtype.category == _dt.COMPLEX and dtype.category != _dt.COMPLEX:  # a real input's gradient is real
            g = _ops.real(g)
        g = g.to(dtype=dtype, device=device)
    return g


def _dense_order(t):
    """The dims of ``t`` from the largest stride to the smallest if ``t`` is non-overlapping and dense
    (dims of size 1 do not count), else None."""
    shape, strides = t._shape, t.stride()
    order = sorted(range(len(shape)), key=lambda d: (-strides[d], d))
    expected = 1
    for d in reversed(order):
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return None
        expected *= shape[d]
    return order


def _obeys_layout(g, var):
    """PyTorch's layout contract for ``.grad``: ``var``'s strides (on dims of size > 1) when ``var`` is
    non-overlapping and dense, else row-major. An expanded gradient (mean's) never obeys it."""
    if _dense_order(var) is not None:
        return all(n == 1 or a == b for n, a, b in zip(g._shape, g.stride(), var.stride()))
    return g.is_contiguous()


def _clone_obeying_layout(g, var):
    """A copy of ``g`` laid out as the layout contract asks (PyTorch's ``clone_obey_contract``)."""
    order = _dense_order(var)
    if order is None or order == sorted(order):
        return g.clone()  # row-major
    inverse = sorted(range(len(order)), key=order.__getitem__)
    return g.permute(order).clone().permute(inverse)


def _accumulate(var, g, create_graph, stealable=False):
    """Add gradient ``g`` into leaf ``var.grad``.

    The first gradient is kept as ``.grad`` itself when nothing else can see it
    (``stealable``: no other reference, no view, no history) and it has the layout
    PyTorch's layout contract gives ``.grad`` (:func:`_obeys_layout`), as PyTorch does;
    otherwise the leaf gets its own copy in that layout, since a gradient tensor may be
    shared (add's backward hands one tensor to both inputs) or expanded (mean's), and
    ``.grad`` is written in place by later accumulations.
    """
    hooks = var.__dict__.get("_backward_hooks")
    if hooks:
        for h in list(hooks.values()):
            r = h(g)
            if r is not None:
                g = check_hook_result(h, g, r)
                stealable = False
    obs = _OBSERVER[0]
    if obs is not None:  # a tracer: which branch runs below depends on .grad
        obs.grad_read(var)
    cur = var._grad
    if cur is None:
        if create_graph:
            new = g if _obeys_layout(g, var) else _clone_obeying_layout(g, var)
        elif stealable and g._grad_fn is None and _obeys_layout(g, var):
            new = g
        else:
            new = _clone_obeying_layout(g.detach(), var)
    elif create_graph:
        new = cur + g
    else:
        cur.add_(g.detach() if g._requires_grad else g)
        new = cur
    if new is not cur:
        if obs is not None:
            obs.grad_write(var, new)
        var._grad = new
    post = var.__dict__.get("_post_accumulate_hooks")
    if post:
        for h in list(post.values()):
            h(var)


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None, accumulate=True,
                 allow_unused=False):
    """Backpropagate ``root_grads`` from tensors ``roots``.

    With ``inputs``, only the part of the graph leading to them runs; their
    gradients are returned (and accumulated into ``.grad`` only when
    ``accumulate``). Without, every reachable leaf accumulates.
    """
    if retain_graph is None:
        retain_graph = create_graph
    edges = []
    for i, (t, g) in enumerate(zip(roots, root_grads)):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append((gradient_edge(t), g))
    capture = None
    targets = None
    results = None
    if inputs is not None:
        capture = {}
        for i, t in enumerate(inputs):
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            node, nr = gradient_edge(t)
            capture.setdefault((node, nr), []).append(i)
        targets = {node for node, _ in capture}
        results = [None] * len(inputs)
    root_nodes = []
    buffers = {}
    for (node, nr), g in edges:
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * max(node.num_outputs, nr + 1)
            root_nodes.append(node)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    deps, needed = _collect(root_nodes, targets)
    # sequence numbers are unique, so a (-sequence_nr, node) entry never compares nodes
    heap = [(-n.sequence_nr, n) for n in root_nodes if deps.get(n, 0) == 0 and (needed is None or n in needed)]
    heapify(heap)
    # the node that runs next when it is the latest-created ready one: in a chain the ready set is
    # one node at a time, which then bypasses the heap
    ready = None
    anomaly = _anomaly[0]
    with set_grad_enabled(create_graph):
        while True:
            if ready is not None:
                node = ready
                ready = None
            elif heap:
                node = heappop(heap)[1]
            else:
                break
            grads = buffers.pop(node, None)
            if grads is None:
                grads = [None] * node.num_outputs
            if node._pre_hooks:
                for h in node._pre_hooks:
                    r = h(tuple(grads))
                    if r is not None:
                        grads = list(r)
            if capture is not None:
                for nr, g in enumerate(grads):
                    idx = capture.get((node, nr))
                    if idx is not None:
                        for k in idx:
                            results[k] = g
            if node.__class__ is AccumulateGrad:
                g = grads[0]
                grads = None
                if g is not None and accumulate:
                    # references: the local and getrefcount's argument (for a view's base also the
                    # view's _base); any more is someone else's, who could see later in-place writes
                    base = g._base
                    own = _refcount(g) <= 2 and (base is None or _refcount(base) <= 3)
                    base = None
                    _accumulate(node.variable, g, create_graph, own)
                continue
            nexts = node.next_functions
            if (grads[0] is None and all(g is None for g in grads)) or (needed is not None and not any(
                    nxt in needed for nxt, _ in nexts if nxt is not None)):
                # nothing to propagate, or nothing below leads to a requested input
                out = None
            else:
                out = node.apply(grads) if not NODE_SCOPES else _apply_in_scopes(node, grads)
                if node._hooks:
                    for h in node._hooks:
                        r = h(out, tuple(grads))
                        if r is not None:
                            out = tuple(r)
                if anomaly:
                    _check_nan(node, out)
            if not retain_graph:
                node.release()
            meta = node._meta
            i = -1
            for nxt, nr in nexts:
                i += 1
                if nxt is None or (needed is not None and nxt not in needed):
                    continue
                if out is not None:
                    g = out[i]
                    if g is not None:
                        m = meta[i]
                        if g._shape != m[0] or g._dtype is not m[1] or g._device is not m[2]:
                            g = _validate(node, i, g, m)
                        buf = buffers.get(nxt)
                        if buf is None:
                            buf = buffers[nxt] = [None] * nxt.num_outputs
                            buf[nr] = g
                        else:
                            prev = buf[nr]
                            buf[nr] = g if prev is None else prev + g
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    if ready is None:
                        ready = nxt
                    else:
                        heappush(heap, (-nxt.sequence_nr, nxt))
            if ready is not None and heap and heap[0][0] < -ready.sequence_nr:
                heappush(heap, (-ready.sequence_nr, ready))
                ready = None
            out = g = buf = prev = None  # hold no gradient past its consumer (see _accumulate)
    if results is not None and not allow_unused and accumulate is False:
        for i, r in enumerate(results):
            if r is None:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
    return results


def _apply_in_scopes(node, grads):
    with ExitStack() as stack:
        for scope in list(NODE_SCOPES):
            stack.enter_context(scope(node))
        return node.apply(grads)


def _check_nan(node, out):
    for i, g in enumerate(out):
        if g is not None and has_nan(g):
            stack = forward_stack(node)
            if stack:
                warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                              + stack, RuntimeWarning, stacklevel=3)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


# -- the user's entry points: tensorplug.autograd.backward and .grad ---------------------------------
def _tensors(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _make_grads(outputs, grads, create_graph):
    out = []
    grads = grads if grads is not None else [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs; got {len(grads)} gradients "
                           f"for {len(outputs)} outputs")
    for t, g in zip(outputs, grads):
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t.dtype.category != _dt.FLOATING:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{t.dtype}")
            g = _ops.full(t.shape, 1, t.dtype, t.device)
        elif g.shape != t.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {g.shape} and output[0] has a "
                               f"shape of {t.shape}.")
        out.append(g)
    return out


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (or of ``inputs``)."""
    tensors = _tensors(tensors)
    grad_tensors = _tensors(grad_tensors)
    inputs = _tensors(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _make_grads(tensors, grad_tensors, create_graph)
    if inputs is None:
        run_backward(tensors, grads, retain_graph, create_graph)
        return
    captured = run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=False,
                                    allow_unused=True)
    for t, g in zip(inputs, captured):
        if g is not None:
            _accumulate(t, g, create_graph) if t.is_leaf else _set_nonleaf_grad(t, g, create_graph)


def _set_nonleaf_grad(t, g, create_graph):
    g = g if create_graph else g.detach()
    t._grad = g if t._grad is None else t._grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs`` (a tuple), without touching ``.grad``."""
    outputs = _tensors(outputs)
    inputs = _tensors(inputs)
    grads = _make_grads(outputs, _tensors(grad_outputs), create_graph)
    if allow_unused is None:
        allow_unused = materialize_grads
    res = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, accumulate=False,
                               allow_unused=allow_unused)
    if materialize_grads:
        res = [r if r is not None else _ops.zeros(i._shape, i._dtype, i._device) for r, i in zip(res, inputs)]
    return tuple(res)
