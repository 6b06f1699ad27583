"""The MNIST classifier: two convolutions, max pooling, dropout, two linear layers, log-softmax
with the negative log-likelihood, Adadelta and a StepLR schedule."""

import numpy as np

BATCH = 8


def build(T, dropout=0.0):
    nn = T.nn
    F = nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(dropout)
            self.dropout2 = nn.Dropout(dropout)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = T.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            return F.log_softmax(self.fc2(x), dim=1)

    return Net()


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    return [(((rng.random((BATCH, 1, 28, 28)) - 0.1307) / 0.3081).astype(np.float32), rng.integers(0, 10, BATCH))
            for _ in range(n)]


def trainer(T, model):
    from _common import as_tensor
    F = T.nn.functional
    opt = T.optim.Adadelta(model.parameters(), lr=1.0)
    sched = T.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    model.train()

    def step(batch):
        data, target = (as_tensor(T, a) for a in batch)
        opt.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        opt.step()
        sched.step()
        return loss.item()
    return step
