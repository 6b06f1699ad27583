"""A variational autoencoder on 28x28 images: a linear encoder to mean and log-variance, the
reparameterization trick, a sigmoid decoder, a summed binary cross-entropy plus the KL term, Adam."""

import numpy as np

BATCH, LATENT = 32, 20


def build(T):
    nn = T.nn
    F = nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 400)
            self.fc21 = nn.Linear(400, LATENT)
            self.fc22 = nn.Linear(400, LATENT)
            self.fc3 = nn.Linear(LATENT, 400)
            self.fc4 = nn.Linear(400, 784)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar, eps):
            std = T.exp(0.5 * logvar)
            return mu + eps * std

        def decode(self, z):
            return T.sigmoid(self.fc4(F.relu(self.fc3(z))))

        def forward(self, x, eps):
            mu, logvar = self.encode(x.view(-1, 784))
            z = self.reparameterize(mu, logvar, eps)
            return self.decode(z), mu, logvar

    return VAE()


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    return [((rng.random((BATCH, 1, 28, 28)) > 0.7).astype(np.float32),
             rng.standard_normal((BATCH, LATENT)).astype(np.float32)) for _ in range(n)]


def trainer(T, model):
    from _common import as_tensor
    F = T.nn.functional
    opt = T.optim.Adam(model.parameters(), lr=1e-3)
    model.train()

    def step(batch):
        x, eps = (as_tensor(T, a) for a in batch)
        recon, mu, logvar = model(x, eps)
        bce = F.binary_cross_entropy(recon, x.view(-1, 784), reduction="sum")
        kld = -0.5 * T.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = bce + kld
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item() / len(x)
    return step
