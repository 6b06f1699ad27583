"""A word-level language model: an embedding, a two-layer LSTM carrying its hidden state across
batches (detached between them), a linear decoder, gradient clipping and a hand-written SGD."""

import numpy as np

NTOKEN, NINP, NHID, NLAYERS, BPTT, BATCH = 200, 32, 64, 2, 12, 10


def build(T):
    nn = T.nn

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.0)
            self.encoder = nn.Embedding(NTOKEN, NINP)
            self.rnn = nn.LSTM(NINP, NHID, NLAYERS, dropout=0.0)
            self.decoder = nn.Linear(NHID, NTOKEN)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            decoded = self.decoder(self.drop(output)).view(-1, NTOKEN)
            return nn.functional.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            w = next(self.parameters())
            return (w.new_zeros(NLAYERS, bsz, NHID), w.new_zeros(NLAYERS, bsz, NHID))

    return RNNModel()


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, NTOKEN, (n * BPTT + 1, BATCH))
    return [(data[i * BPTT:(i + 1) * BPTT], data[i * BPTT + 1:(i + 1) * BPTT + 1]) for i in range(n)]


def trainer(T, model):
    from _common import as_tensor
    criterion = T.nn.NLLLoss()
    state = {"hidden": model.init_hidden(BATCH)}
    model.train()

    def repackage(h):
        return h.detach() if isinstance(h, T.Tensor) else tuple(repackage(v) for v in h)

    def step(batch):
        data, targets = (as_tensor(T, a) for a in batch)
        model.zero_grad()
        hidden = repackage(state["hidden"])
        output, hidden = model(data, hidden)
        state["hidden"] = hidden
        loss = criterion(output, targets.reshape(-1))
        loss.backward()
        T.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-5.0)
        return loss.item()
    return step
