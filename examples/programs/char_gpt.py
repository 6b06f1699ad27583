"""A character-level GPT: token and position embeddings, pre-norm transformer blocks with causal
self-attention, a GELU MLP, a weight-tied head, AdamW with decayed and undecayed groups."""

import numpy as np

VOCAB, BLOCK, EMBD, HEADS, LAYERS, BATCH = 65, 64, 64, 4, 2, 16


def build(T):
    nn = T.nn
    F = nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(EMBD, 3 * EMBD)
            self.c_proj = nn.Linear(EMBD, EMBD)

        def forward(self, x):
            B, L, C = x.size()
            q, k, v = self.c_attn(x).split(EMBD, dim=2)
            q = q.view(B, L, HEADS, C // HEADS).transpose(1, 2)
            k = k.view(B, L, HEADS, C // HEADS).transpose(1, 2)
            v = v.view(B, L, HEADS, C // HEADS).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, L, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(EMBD, 4 * EMBD)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * EMBD, EMBD)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(EMBD)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(EMBD)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(VOCAB, EMBD), wpe=nn.Embedding(BLOCK, EMBD),
                h=nn.ModuleList([Block() for _ in range(LAYERS)]), ln_f=nn.LayerNorm(EMBD)))
            self.lm_head = nn.Linear(EMBD, VOCAB, bias=False)
            self.transformer.wte.weight = self.lm_head.weight
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = T.arange(0, t, dtype=T.long, device=idx.device)
            x = self.transformer.wte(idx) + self.transformer.wpe(pos)
            for block in self.transformer.h:
                x = block(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            return logits, loss

    return GPT()


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    text = rng.integers(0, VOCAB, 4096)
    out = []
    for _ in range(n):
        ix = rng.integers(0, len(text) - BLOCK - 1, BATCH)
        x = np.stack([text[i:i + BLOCK] for i in ix])
        y = np.stack([text[i + 1:i + 1 + BLOCK] for i in ix])
        out.append((x, y))
    return out


def trainer(T, model):
    from _common import as_tensor
    params = {n: p for n, p in model.named_parameters() if p.requires_grad}
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    opt = T.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=1e-3, betas=(0.9, 0.95))
    model.train()

    def step(batch):
        x, y = (as_tensor(T, a) for a in batch)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        T.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()
    return step
