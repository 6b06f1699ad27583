"""A character MLP language model: a context of three characters looked up in an embedding table,
a hidden layer with batch norm and tanh, cross-entropy, and a hand-written SGD with a step decay."""

import numpy as np

VOCAB, CONTEXT, EMB, HIDDEN, BATCH = 27, 3, 10, 200, 32


def build(T):
    nn = T.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.C = nn.Embedding(VOCAB, EMB)
            self.fc1 = nn.Linear(CONTEXT * EMB, HIDDEN, bias=False)
            self.bn = nn.BatchNorm1d(HIDDEN)
            self.fc2 = nn.Linear(HIDDEN, VOCAB)

        def forward(self, X):
            emb = self.C(X)
            h = T.tanh(self.bn(self.fc1(emb.view(emb.shape[0], -1))))
            return self.fc2(h)

    return MLP()


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, VOCAB, (1000, CONTEXT))
    Y = (X.sum(1) * 7 + 3) % VOCAB  # a learnable rule
    out = []
    for _ in range(n):
        ix = rng.integers(0, len(X), BATCH)
        out.append((X[ix], Y[ix]))
    return out


def trainer(T, model):
    from _common import as_tensor
    F = T.nn.functional
    state = {"i": 0}

    def step(batch):
        Xb, Yb = (as_tensor(T, a) for a in batch)
        loss = F.cross_entropy(model(Xb), Yb)
        for p in model.parameters():
            p.grad = None
        loss.backward()
        lr = 0.1 if state["i"] < 3 else 0.01
        with T.no_grad():
            for p in model.parameters():
                p += -lr * p.grad
        state["i"] += 1
        return loss.item()
    return step
