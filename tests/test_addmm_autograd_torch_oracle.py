"""linear and addmm under autograd against PyTorch: the graph they record (one AddmmBackward0 node for
linear with a bias), the gradients and their layouts, and the in-place checks on saved operands.

Each case runs one function in both frameworks (it receives the module, ``tp`` or ``torch``, and the
leaves). Skipped without torch.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorplug as tp  # noqa: E402


def leaves(m, arrays, requires):
    return [(tp.from_numpy(a.copy()) if m is tp else torch.from_numpy(a.copy())).requires_grad_(r)
            for a, r in zip(arrays, requires)]


# tensorplug's t() is a permute and mm a matmul: the nodes PyTorch names TBackward0 and MmBackward0
# are PermuteBackward0 and MatmulBackward0 here
SAME_NODE = {"TBackward0": "PermuteBackward0", "MmBackward0": "MatmulBackward0"}


def node_names(fn):
    """The grad_fn's name and its next_functions' names (None where there is no edge)."""
    def name(n):
        return None if n is None else SAME_NODE.get(type(n).__name__, type(n).__name__)
    return (name(fn), [name(n) for n, _ in fn.next_functions])


def sample(*shapes, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, s).astype(dtype) for s in shapes]


CASES = [
    # id, function of (module, *leaves), leaf shapes
    ("linear", lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(5, 3), (4, 3), (4,)]),
    ("linear_3d_input", lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(2, 5, 3), (4, 3), (4,)]),
    ("linear_no_bias", lambda m, x, w: m.nn.functional.linear(x, w), [(5, 3), (4, 3)]),
    ("addmm", lambda m, s, a, b: m.addmm(s, a, b), [(2, 4), (2, 3), (3, 4)]),
    ("addmm_factors", lambda m, s, a, b: m.addmm(s, a, b, beta=0.5, alpha=-2), [(2, 4), (2, 3), (3, 4)]),
    ("addmm_broadcast_self", lambda m, s, a, b: m.addmm(s, a, b, beta=3), [(1, 4), (2, 3), (3, 4)]),
    ("addmm_0d_self", lambda m, s, a, b: m.addmm(s, a, b), [(), (2, 3), (3, 4)]),
    ("addmm_column_self", lambda m, s, a, b: m.addmm(s, a, b), [(2, 1), (2, 3), (3, 4)]),
    ("addmm_beta_0", lambda m, s, a, b: m.addmm(s, a, b, beta=0), [(2, 4), (2, 3), (3, 4)]),
    ("addmm_alpha_0", lambda m, s, a, b: m.addmm(s, a, b, alpha=0), [(2, 4), (2, 3), (3, 4)]),
    ("addmm_transposed_operands", lambda m, s, a, b: m.addmm(s, a.t(), b.t()), [(2, 4), (3, 2), (4, 3)]),
    ("addmm_k_0", lambda m, s, a, b: m.addmm(s, a, b), [(2, 4), (2, 0), (0, 4)]),
    ("addmm_wide_small_batch", lambda m, s, a, b: m.addmm(s, a, b.t()), [(200,), (8, 30), (200, 30)]),
]


@pytest.mark.parametrize("what, fn, shapes", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("requires", ["all", "no_first_matrix", "only_first"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_graph_and_gradients_match_torch(what, fn, shapes, requires, dtype):
    arrays = sample(*shapes, dtype=dtype)
    n = len(arrays)
    req = {"all": [True] * n, "no_first_matrix": [True] * n, "only_first": [True] + [False] * (n - 1)}[requires]
    if requires == "no_first_matrix":  # the input of linear, mat1 of addmm: the first layer of a network
        req[0 if what.startswith("linear") else 1] = False
    ours, theirs = leaves(tp, arrays, req), leaves(torch, arrays, req)
    out_ours, out_theirs = fn(tp, *ours), fn(torch, *theirs)
    assert node_names(out_ours.grad_fn) == node_names(out_theirs.grad_fn), what
    g = np.random.default_rng(1).uniform(-1, 1, tuple(out_theirs.shape)).astype(dtype)
    out_ours.backward(tp.from_numpy(g.copy()))
    out_theirs.backward(torch.from_numpy(g.copy()))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert (a.grad is None) == (b.grad is None), (what, i)
        if a.grad is None:
            continue
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol, err_msg=f"{what} {i}")
        assert a.grad.stride() == b.grad.stride(), (what, i, a.grad.stride(), b.grad.stride())


def test_linear_module_records_one_addmm_node():
    for m in (tp, torch):
        lin = m.nn.Linear(3, 4)
        out = lin(m.ones(2, 3))
        name, nexts = node_names(out.grad_fn)
        assert name == "AddmmBackward0"
        assert nexts[0] == "AccumulateGrad" and nexts[1] is None  # the bias, then the input (no grad)
        # the weight reaches its accumulator through its transpose
        assert out.grad_fn.next_functions[2][0].next_functions[0][0].__class__.__name__ == "AccumulateGrad"


@pytest.mark.parametrize("modify", ["input", "weight"])
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_in_place_changes_of_saved_operands_error_as_in_torch(modify, input_requires_grad):
    def run(m):
        x = m.ones(2, 3, requires_grad=input_requires_grad) * 1 if input_requires_grad else m.ones(2, 3)
        w, b = m.ones(4, 3, requires_grad=True), m.ones(4, requires_grad=True)
        out = m.nn.functional.linear(x, w, b)
        with m.no_grad():
            (x if modify == "input" else w).add_(1)
        try:
            out.sum().backward()
        except RuntimeError as e:
            return "modified by an inplace operation" in str(e)
        return False
    assert run(tp) == run(torch)


def test_double_backward_matches_torch():
    arrays = sample((4,), (5, 3), (4, 3))
    res = []
    for m in (tp, torch):
        b, x, w = leaves(m, arrays, [True, True, True])
        out = m.nn.functional.linear(x, w, b)
        gx, = (tp.autograd.grad if m is tp else torch.autograd.grad)((out * out).sum(), [x], create_graph=True)
        (gx * gx).sum().backward()
        res.append([t.grad.numpy().copy() for t in (b, x, w)])
    for a, c in zip(*res):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)
