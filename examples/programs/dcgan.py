"""DCGAN at 16x16: a generator of transposed convolutions with batch norm and ReLU, a
discriminator of strided convolutions with LeakyReLU, BCE-with-logits, one Adam per network."""

import numpy as np

NZ, NGF, NDF, NC, BATCH = 16, 16, 16, 3, 8


def build(T):
    nn = T.nn

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(NGF * 4), nn.ReLU(True),
                nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NGF * 2), nn.ReLU(True),
                nn.ConvTranspose2d(NGF * 2, NC, 4, 2, 1, bias=False), nn.Tanh())

        def forward(self, z):
            return self.main(z)

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.Conv2d(NC, NDF, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(NDF * 2), nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(NDF * 2, 1, 4, 1, 0, bias=False))

        def forward(self, x):
            return self.main(x).view(-1)

    class GAN(nn.Module):
        def __init__(self):
            super().__init__()
            self.netG = Generator()
            self.netD = Discriminator()

    return GAN()


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    return [(np.tanh(rng.standard_normal((BATCH, NC, 16, 16))).astype(np.float32),
             rng.standard_normal((BATCH, NZ, 1, 1)).astype(np.float32)) for _ in range(n)]


def trainer(T, model):
    from _common import as_tensor
    netG, netD = model.netG, model.netD
    criterion = T.nn.BCEWithLogitsLoss()
    optD = T.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = T.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    model.train()

    def step(batch):
        real, noise = (as_tensor(T, a) for a in batch)
        b = real.size(0)
        netD.zero_grad()
        label = T.full((b,), 1.0, dtype=T.float)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        fake = netG(noise)
        label.fill_(0.0)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        optD.step()
        netG.zero_grad()
        label.fill_(1.0)
        errG = criterion(netD(fake), label)
        errG.backward()
        optG.step()
        return (errD_real + errD_fake).item() + errG.item()
    return step
