"""Super-resolution by sub-pixel convolution: four convolutions with ReLU, the last producing
upscale**2 channels that pixel_shuffle rearranges into a larger image; MSE and Adam."""

import numpy as np

UPSCALE, BATCH, SIZE = 3, 4, 16


def build(T):
    nn = T.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.relu = nn.ReLU()
            self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
            self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
            self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
            self.conv4 = nn.Conv2d(32, UPSCALE ** 2, (3, 3), (1, 1), (1, 1))
            self.pixel_shuffle = nn.PixelShuffle(UPSCALE)

        def forward(self, x):
            x = self.relu(self.conv1(x))
            x = self.relu(self.conv2(x))
            x = self.relu(self.conv3(x))
            return self.pixel_shuffle(self.conv4(x))

    return Net()


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        hi = rng.random((BATCH, 1, SIZE * UPSCALE, SIZE * UPSCALE)).astype(np.float32)
        lo = hi.reshape(BATCH, 1, SIZE, UPSCALE, SIZE, UPSCALE).mean((3, 5))
        out.append((lo, hi))
    return out


def trainer(T, model):
    from _common import as_tensor
    criterion = T.nn.MSELoss()
    opt = T.optim.Adam(model.parameters(), lr=1e-3)
    model.train()

    def step(batch):
        lo, hi = (as_tensor(T, a) for a in batch)
        opt.zero_grad()
        loss = criterion(model(lo), hi)
        loss.backward()
        opt.step()
        return loss.item()
    return step
