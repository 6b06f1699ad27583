"""Models and steps the compile tests share: each built twice from one seed, so an eager copy and a
compiled copy start from the same weights."""

from __future__ import annotations

import tensorplug as tp
from tensorplug import nn
import tensorplug.nn.functional as F


def mlp(seed=0, sizes=(20, 16, 16, 4)):
    tp.manual_seed(seed)
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def cnn(seed=0):
    tp.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(4 * 4 * 4, 10))


def dropout_bn(seed=0):
    tp.manual_seed(seed)
    return nn.Sequential(nn.Linear(12, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 3))


def training_step(model, opt, loss_fn=F.cross_entropy):
    """The usual step: zero_grad, forward, backward, step; returns the loss tensor."""
    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def same(a, b):
    """Bitwise equality of two tensors (shape, dtype and values)."""
    return a.shape == b.shape and a.dtype is b.dtype and bool(tp.equal(a.detach(), b.detach()))


def run_both(build, make_opt, batches, compile_kwargs=None):
    """Train an eager and a compiled copy on ``batches``; returns (eager model, compiled model, eager
    losses, compiled losses, the compiled step)."""
    m1, m2 = build(), build()
    o1, o2 = make_opt(m1), make_opt(m2)
    s1 = training_step(m1, o1)
    s2 = tp.compile(training_step(m2, o2), **(compile_kwargs or {}))
    l1 = [s1(x, y).item() for x, y in batches]
    l2 = [s2(x, y).item() for x, y in batches]
    return m1, m2, l1, l2, s2
