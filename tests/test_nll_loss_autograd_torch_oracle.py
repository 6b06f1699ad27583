"""cross_entropy and nll_loss under autograd against PyTorch: the nodes they record (NllLossBackward0 after
LogSoftmaxBackward0), the values and the input gradients, over shapes, reductions, class weights and
ignored targets (all of them ignored too, where PyTorch's gradient is 0). Skipped without torch.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorplug as tp  # noqa: E402
from tensorplug.nn import functional as F  # noqa: E402

SHAPES = [((5, 4), (5,)), ((2, 4, 3), (2, 3)), ((4,), ()), ((0, 4), (0,))]


@pytest.mark.parametrize("shape, tshape", SHAPES, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 1])
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_values_graph_and_gradients_match_torch(shape, tshape, reduction, weighted, ignore_index, loss):
    rng = np.random.default_rng(len(shape) + 3 * weighted)
    a = rng.standard_normal(shape)
    t = rng.integers(0, 4, tshape)
    w = rng.random(4) if weighted else None
    kw = {"reduction": reduction, "ignore_index": ignore_index}
    results = []
    for m, f in ((tp, F), (torch, torch.nn.functional)):
        x = m.from_numpy(a.copy()).requires_grad_()
        inp = x if loss == "cross_entropy" else x.log_softmax(0 if len(shape) == 1 else 1)
        out = getattr(f, loss)(inp, m.from_numpy(t), weight=None if w is None else m.from_numpy(w.copy()), **kw)
        g = np.random.default_rng(7).standard_normal(tuple(out.shape))
        out.backward(m.from_numpy(g))
        results.append((type(out.grad_fn).__name__, type(out.grad_fn.next_functions[0][0]).__name__,
                        out.detach().numpy(), x.grad.numpy()))
    (n1, p1, v1, g1), (n2, p2, v2, g2) = results
    assert (n1, p1) == ("NllLossBackward0", "LogSoftmaxBackward0")
    if len(shape) <= 2:  # PyTorch reshapes more dims around its 2-D loss (NllLoss2dBackward0 and views)
        assert (n2, p2) == (n1, p1)
    np.testing.assert_allclose(v1, v2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)


def test_all_targets_ignored_gives_a_zero_gradient_as_in_torch():
    grads = []
    for m, f in ((tp, F), (torch, torch.nn.functional)):
        x = m.from_numpy(np.arange(6.0).reshape(2, 3)).requires_grad_()
        f.cross_entropy(x, m.from_numpy(np.array([1, 1])), ignore_index=1).backward()
        grads.append(x.grad.numpy())
    assert np.array_equal(grads[0], grads[1]) and not grads[0].any()


def test_class_weights_that_require_grad_are_differentiated():
    # PyTorch refuses them; tensorplug differentiates the mean (whose denominator depends on them too)
    a, t, w = np.random.default_rng(0).standard_normal((5, 4)), np.array([0, 1, 3, 3, 2]), np.array([.5, 1, 2, 3])
    x, tw = tp.from_numpy(a), tp.from_numpy(w.copy()).requires_grad_()
    F.nll_loss(x, tp.from_numpy(t), weight=tw).backward()
    ww = torch.from_numpy(w.copy()).requires_grad_()
    picked = torch.from_numpy(a)[torch.arange(5), torch.from_numpy(t)]
    (-(picked * ww[torch.from_numpy(t)]).sum() / ww[torch.from_numpy(t)].sum()).backward()
    np.testing.assert_allclose(tw.grad.numpy(), ww.grad.numpy(), rtol=1e-12, atol=1e-12)
