"""vmap against PyTorch's torch.func on the same data (skipped cleanly without torch)."""

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.func import grad, hessian, jacrev

torch = pytest.importorskip("torch")


def _loss(w1, b1, w2, x, t):
    return (((x @ w1.t() + b1).tanh() @ w2.t() - t) ** 2).sum()


def test_per_sample_grads_jacrev_hessian_match_torch_func():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in ((5, 3), (5,), (2, 5), (4, 3), (4, 2))]
    ours = tp.vmap(grad(_loss, argnums=(0, 1, 2)), in_dims=(None, None, None, 0, 0))(
        *[tp.from_numpy(a) for a in arrays])
    theirs = torch.func.vmap(torch.func.grad(_loss, argnums=(0, 1, 2)),
                             in_dims=(None, None, None, 0, 0))(*[torch.from_numpy(a) for a in arrays])
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)
    x = arrays[1]
    f = lambda v: (v.sin() * v.sum()).exp()  # noqa: E731
    np.testing.assert_allclose(jacrev(f)(tp.from_numpy(x)).numpy(),
                               torch.func.jacrev(f)(torch.from_numpy(x)).numpy(), rtol=1e-10)
    s = lambda v: (v.sin() * v.sum()).exp().sum()  # noqa: E731
    np.testing.assert_allclose(hessian(s)(tp.from_numpy(x)).numpy(),
                               torch.func.hessian(s)(torch.from_numpy(x)).numpy(), rtol=1e-9)
