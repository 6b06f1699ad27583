"""nn misc (activations, norms, distances, losses, recurrent and transformer layers) against PyTorch.

Functions: the same float64 inputs go through ``tensorplug.nn.functional`` and ``torch.nn.functional``;
values and input gradients must agree. Layers: a PyTorch module's state_dict is loaded into ours, and
outputs and gradients (inputs and parameters) must agree.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
import tensorplug.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _arr(shape, seed, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


class C(np.ndarray):
    """An input that takes no gradient (targets, running statistics)."""


def _c(a):
    return np.asarray(a).view(C)


def _pair(a, grad=True):
    grad = grad and not isinstance(a, C)
    a = np.asarray(a).view(np.ndarray)
    t = tp.tensor(a)
    u = torch.from_numpy(np.array(a))
    if grad and a.dtype.kind == "f":
        t.requires_grad_()
        u.requires_grad_()
    return t, u


def _close(ours, theirs, what, rtol=1e-6, atol=1e-7):
    a = ours.detach().numpy() if isinstance(ours, tp.Tensor) else np.asarray(ours)
    b = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


X = _arr((3, 4), 0)
Y = _arr((3, 4), 1)
Z = _arr((3, 4), 2)
SIGN = _c([1.0, -1.0, 1.0])
PM = _c(np.where(_arr((3, 4), 3) > 0, 1.0, -1.0))
IMG = _arr((2, 3, 4, 5), 4)
SEQ = _arr((2, 6, 5), 5)

# name, (arrays...), kwargs; each array a float64 input (gradients compared) or an int64 one
CASES = [
    ("hardswish", (X * 2,), {}), ("hardsigmoid", (X * 2,), {}), ("selu", (X,), {}), ("celu", (X,), {"alpha": 0.7}),
    ("glu", (X,), {"dim": 1}), ("glu", (IMG[:, :2],), {"dim": 1}), ("softsign", (X,), {}),
    ("threshold", (X,), {"threshold": 0.3, "value": -2.0}), ("hardshrink", (X,), {"lambd": 0.4}),
    ("softshrink", (X,), {"lambd": 0.4}), ("tanhshrink", (X,), {}), ("logsigmoid", (X,), {}), ("relu6", (X * 4,), {}),
    ("rrelu", (X,), {}), ("rrelu", (X,), {"lower": 0.2, "upper": 0.4}),
    ("prelu", (IMG, np.array([0.1, 0.2, 0.3])), {}), ("prelu", (X, np.array([0.25])), {}),
    ("rms_norm", (X,), {"normalized_shape": (4,)}), ("rms_norm", (IMG, (4, 5), _arr((4, 5), 9)), {}),
    ("instance_norm", (IMG,), {}), ("instance_norm", (SEQ, _c(_arr((6,), 6)), _c(np.abs(_arr((6,), 7)))), {}),
    ("local_response_norm", (IMG,), {"size": 2}), ("local_response_norm", (SEQ,), {"size": 3, "k": 2.0}),
    ("cosine_similarity", (X, Y), {}), ("cosine_similarity", (IMG, IMG[:1] * 0.5 + 0.1), {"dim": 2}),
    ("pairwise_distance", (X, Y), {}), ("pairwise_distance", (X, Y), {"p": 1.5, "keepdim": True}),
    ("pdist", (X,), {}), ("pdist", (X,), {"p": 3.0}),
    ("margin_ranking_loss", (X[:, 0], X[:, 1], SIGN), {"margin": 0.1}),
    ("triplet_margin_loss", (X, Y, Z), {}), ("triplet_margin_loss", (X, Y, Z), {"swap": True, "p": 1, "reduction": "none"}),
    ("triplet_margin_with_distance_loss", (X, Y, Z), {"margin": 2.0}),
    ("cosine_embedding_loss", (X, Y, SIGN), {"margin": -0.2}), ("cosine_embedding_loss", (X, Y, SIGN), {"reduction": "sum"}),
    ("gaussian_nll_loss", (X, Y, np.abs(Z) + 0.1), {}), ("gaussian_nll_loss", (X, Y, np.abs(Z[:, 0]) + 0.1), {"full": True}),
    ("poisson_nll_loss", (X, np.abs(Y) * 2), {}), ("poisson_nll_loss", (np.abs(X) + 0.1, np.abs(Y) * 2),
                                                   {"log_input": False, "full": True, "reduction": "sum"}),
    ("multilabel_soft_margin_loss", (X, _c(PM > 0).astype(np.float64)), {}),
    ("multilabel_soft_margin_loss", (X, _c(PM > 0).astype(np.float64), np.array([1.0, 2.0, 0.5, 1.0])), {"reduction": "none"}),
    ("multilabel_margin_loss", (X, np.array([[0, 2, -1, 1], [3, -1, 0, 0], [1, 2, 3, 0]])), {}),
    ("multi_margin_loss", (X, np.array([0, 3, 1])), {}),
    ("multi_margin_loss", (X, np.array([0, 3, 1]), 2, 0.7, _c([1.0, 2.0, 0.5, 1.5])), {"reduction": "sum"}),
    ("soft_margin_loss", (X, PM), {}), ("hinge_embedding_loss", (X, PM), {"margin": 0.5}),
    ("hinge_embedding_loss", (X, PM), {"reduction": "none"}),
    ("kl_div", (np.log(np.abs(X) + 0.1), np.abs(Y)), {"reduction": "batchmean"}),
]


@pytest.mark.parametrize("name,arrays,kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_functional_matches_torch(name, arrays, kwargs):
    ours, theirs = zip(*(_pair(a) if isinstance(a, np.ndarray) else (a, a) for a in arrays))
    out = getattr(F, name)(*ours, **kwargs)
    ref = getattr(TF, name)(*theirs, **kwargs)
    _close(out, ref, name)
    seed = np.random.default_rng(11).standard_normal(tuple(ref.shape))
    out.backward(tp.tensor(seed))
    ref.backward(torch.from_numpy(seed))
    for i, (t, u) in enumerate(zip(ours, theirs)):
        if isinstance(t, tp.Tensor) and t.requires_grad:
            _close(t.grad, u.grad, f"{name} grad of input {i}")
