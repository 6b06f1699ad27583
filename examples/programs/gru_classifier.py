"""A sequence classifier: an embedding, a bidirectional batch-first GRU, the final hidden states of
both directions concatenated into a linear layer, cross-entropy with label smoothing, RMSprop."""

import numpy as np

VOCAB, EMB, HIDDEN, CLASSES, LENGTH, BATCH = 60, 16, 32, 5, 10, 12


def build(T):
    nn = T.nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(VOCAB, EMB, padding_idx=0)
            self.gru = nn.GRU(EMB, HIDDEN, batch_first=True, bidirectional=True)
            self.out = nn.Linear(2 * HIDDEN, CLASSES)

        def forward(self, x):
            _, h = self.gru(self.embedding(x))
            return self.out(T.cat([h[-2], h[-1]], dim=1))

    return Classifier()


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        x = rng.integers(1, VOCAB, (BATCH, LENGTH))
        out.append((x, x[:, 0] % CLASSES))
    return out


def trainer(T, model):
    from _common import as_tensor
    criterion = T.nn.CrossEntropyLoss(label_smoothing=0.1)
    opt = T.optim.RMSprop(model.parameters(), lr=1e-3)
    model.train()

    def step(batch):
        x, y = (as_tensor(T, a) for a in batch)
        opt.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step
