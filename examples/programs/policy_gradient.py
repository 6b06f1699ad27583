"""REINFORCE: a policy network gives a Categorical distribution over actions; the loss is the
negative log-probability of the taken actions weighted by normalized discounted returns, minus an
entropy bonus. The episodes (states, actions, rewards) come with the batch."""

import numpy as np

STATE, ACTIONS, STEPS, GAMMA = 4, 2, 20, 0.99


def build(T):
    nn = T.nn

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(STATE, 128)
            self.dropout = nn.Dropout(p=0.0)
            self.affine2 = nn.Linear(128, ACTIONS)

        def forward(self, x):
            x = self.dropout(nn.functional.relu(self.affine1(x)))
            return nn.functional.softmax(self.affine2(x), dim=1)

    return Policy()


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((STEPS, STATE)).astype(np.float32), rng.integers(0, ACTIONS, STEPS),
             rng.random(STEPS).astype(np.float32)) for _ in range(n)]


def trainer(T, model):
    from _common import as_tensor
    Categorical = T.distributions.Categorical
    opt = T.optim.Adam(model.parameters(), lr=1e-2)
    eps = np.finfo(np.float32).eps.item()

    def step(batch):
        states, actions, rewards = batch
        R, returns = 0.0, []
        for r in rewards[::-1]:
            R = float(r) + GAMMA * R
            returns.insert(0, R)
        returns = T.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        m = Categorical(model(as_tensor(T, states)))
        log_probs = m.log_prob(as_tensor(T, actions))
        loss = (-log_probs * returns).sum() - 0.01 * m.entropy().sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()
    return step
