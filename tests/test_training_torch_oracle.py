"""Training against PyTorch: the same weights and data give the same losses and gradients.

The demo's MLP and CNN are trained for 20 steps with SGD and with Adam in both
frameworks from identical initial weights; every step's loss and every
parameter's gradient must agree within float32 tolerance.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorplug as tp  # noqa: E402
from tensorplug import nn  # noqa: E402
from tensorplug.nn import functional as F  # noqa: E402


def mlp_pair():
    ours = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 10))
    theirs = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16),
                                 torch.nn.ReLU(), torch.nn.Linear(16, 10))
    return ours, theirs


class _AddChannel(nn.Module):
    def forward(self, x):
        return x.unsqueeze(1)


class _TorchAddChannel(torch.nn.Module):
    def forward(self, x):
        return x.unsqueeze(1)


def cnn_pair():
    ours = nn.Sequential(_AddChannel(), nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32, 10))
    theirs = torch.nn.Sequential(_TorchAddChannel(), torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(),
                                 torch.nn.MaxPool2d(2), torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.ReLU(),
                                 torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(32, 10))
    return ours, theirs


def copy_weights(ours, theirs):
    with tp.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            assert tuple(p.shape) == tuple(q.shape)
            p.copy_(tp.from_numpy(q.detach().numpy().copy()))


@pytest.mark.parametrize("make", [mlp_pair, cnn_pair], ids=["mlp", "cnn"])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_twenty_steps_match_pytorch(make, optimizer):
    torch.manual_seed(0)
    ours, theirs = make()
    copy_weights(ours, theirs)
    if optimizer == "sgd":
        opt = tp.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
        topt = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9)
    else:
        opt = tp.optim.Adam(ours.parameters(), lr=1e-2)
        topt = torch.optim.Adam(theirs.parameters(), lr=1e-2)
    rng = np.random.default_rng(1)
    for step in range(20):
        x = rng.random((16, 8, 8), dtype=np.float32)
        y = rng.integers(0, 10, 16)
        loss = F.cross_entropy(ours(tp.from_numpy(x)), tp.from_numpy(y))
        tloss = torch.nn.functional.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y))
        opt.zero_grad()
        topt.zero_grad()
        loss.backward()
        tloss.backward()
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-4, abs=1e-5), f"step {step}"
        for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-3, atol=1e-5,
                                       err_msg=f"step {step}, gradient of {name}")
        opt.step()
        topt.step()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-3, atol=1e-4)
