"""A transformer language model: embeddings scaled by sqrt(d_model), a sinusoidal positional
encoding kept as a buffer, a TransformerEncoder under a square subsequent mask, a linear decoder,
SGD with gradient clipping and a StepLR schedule."""

import math

import numpy as np

NTOKENS, EMSIZE, NHEAD, NHID, NLAYERS, BPTT, BATCH = 300, 32, 2, 64, 2, 16, 8


def build(T):
    nn = T.nn

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, max_len=64):
            super().__init__()
            self.dropout = nn.Dropout(p=0.0)
            position = T.arange(max_len).unsqueeze(1)
            div_term = T.exp(T.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = T.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = T.sin(position * div_term)
            pe[:, 0, 1::2] = T.cos(position * div_term)
            self.register_buffer("pe", pe)

        def forward(self, x):
            return self.dropout(x + self.pe[:x.size(0)])

    class TransformerModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.pos_encoder = PositionalEncoding(EMSIZE)
            layer = nn.TransformerEncoderLayer(EMSIZE, NHEAD, NHID, dropout=0.0)
            self.transformer_encoder = nn.TransformerEncoder(layer, NLAYERS, enable_nested_tensor=False)
            self.embedding = nn.Embedding(NTOKENS, EMSIZE)
            self.linear = nn.Linear(EMSIZE, NTOKENS)

        def forward(self, src, src_mask):
            src = self.embedding(src) * math.sqrt(EMSIZE)
            src = self.pos_encoder(src)
            return self.linear(self.transformer_encoder(src, src_mask))

    return TransformerModel()


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, NTOKENS, (n * BPTT + 1, BATCH))
    return [(data[i * BPTT:(i + 1) * BPTT], data[i * BPTT + 1:(i + 1) * BPTT + 1]) for i in range(n)]


def trainer(T, model):
    from _common import as_tensor
    criterion = T.nn.CrossEntropyLoss()
    opt = T.optim.SGD(model.parameters(), lr=0.5)
    sched = T.optim.lr_scheduler.StepLR(opt, 1.0, gamma=0.95)
    mask = T.nn.Transformer.generate_square_subsequent_mask(BPTT)
    model.train()

    def step(batch):
        data, targets = (as_tensor(T, a) for a in batch)
        output = model(data, mask)
        loss = criterion(output.view(-1, NTOKENS), targets.reshape(-1))
        opt.zero_grad()
        loss.backward()
        T.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        sched.step()
        return loss.item()
    return step
