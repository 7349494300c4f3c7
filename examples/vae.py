"""A variational autoencoder on scikit-learn's 8x8 digits: an MLP encoder gives the mean
and log-variance of a small Gaussian latent, the reparameterization z = mu + sigma * eps
samples it, and an MLP decoder gives pixel logits. The loss is the binary cross-entropy of
the reconstruction plus the KL divergence from the unit Gaussian, minimized with Adam.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/vae.py [--epochs 30]
    ... --backend torch      # the same code under real torch

The code takes the library as an argument (`torch`); the batch order and the noise eps
come from a numpy generator, so tessera and torch see the same numbers.
test/python/test_examples_vs_torch.py compares the two step by step.
"""
import argparse
import importlib
import sys
import time

import numpy as np


def load_digits_flat():
    """The 1,797 digits as [N, 64] float64 pixel intensities in [0, 1]."""
    from sklearn.datasets import load_digits
    return load_digits().data / 16.0


def build_model(torch, n_pixels=64, hidden=128, latent=4, seed=0):
    nn = torch.nn

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.latent = latent
            self.encoder = nn.Sequential(nn.Linear(n_pixels, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                         nn.Linear(hidden, 2 * latent))
            self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                         nn.Linear(hidden, n_pixels))

        def forward(self, x, eps):
            """Pixel logits, mean and log-variance; `eps` is the standard normal noise [B, latent]."""
            mu, logvar = self.encoder(x).chunk(2, dim=-1)
            z = mu + torch.exp(0.5 * logvar) * eps
            return self.decoder(z), mu, logvar

    torch.manual_seed(seed)
    return VAE()


def vae_loss(torch, logits, x, mu, logvar, with_logits=True):
    """Per-example reconstruction BCE (summed over pixels) plus KL(q(z|x) || N(0, I)), batch
    means. with_logits=False takes the BCE of sigmoid(logits), as many VAEs do."""
    F = torch.nn.functional
    n = x.shape[0]
    if with_logits:
        recon = F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / n
    else:
        recon = F.binary_cross_entropy(torch.sigmoid(logits), x, reduction="sum") / n
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / n
    return recon + kl, recon, kl


def train(torch, model, images, epochs, batch_size=128, steps=None, seed=0, dtype="float32", lr=2e-3,
          with_logits=True, log=None):
    """Adam on shuffled batches; `steps` stops early (for tests). Returns the per-step
    (loss, reconstruction, KL) triples."""
    np_dtype = np.dtype(dtype)
    model.to(getattr(torch, dtype))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    rng = np.random.RandomState(seed)
    history, step = [], 0
    model.train()
    for epoch in range(epochs):
        order = rng.permutation(len(images))
        for first in range(0, len(order), batch_size):
            if steps is not None and step == steps:
                return history
            x = torch.from_numpy(images[order[first:first + batch_size]].astype(np_dtype))
            eps = torch.from_numpy(rng.randn(x.shape[0], model.latent).astype(np_dtype))
            logits, mu, logvar = model(x, eps)
            loss, recon, kl = vae_loss(torch, logits, x, mu, logvar, with_logits)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history.append((loss.item(), recon.item(), kl.item()))
            step += 1
        if log is not None:
            log(epoch, history)
    return history


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=("tessera", "torch"), default="tessera")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    torch = importlib.import_module(args.backend)

    images = load_digits_flat()
    model = build_model(torch, seed=args.seed)

    steps_per_epoch = -(-len(images) // args.batch_size)

    def log(epoch, history):
        if epoch % 5 == 4 or epoch == 0:
            loss, recon, kl = np.mean(history[-steps_per_epoch:], axis=0)
            print(f"epoch {epoch + 1:3d}: loss {loss:.3f} = reconstruction {recon:.3f} + KL {kl:.3f}", flush=True)

    start = time.perf_counter()
    train(torch, model, images, args.epochs, batch_size=args.batch_size, seed=args.seed, log=log)
    # Decode the latent means of a few digits: a blurry but recognisable copy of each.
    model.eval()
    with torch.no_grad():
        x = torch.from_numpy(images[:8].astype(np.float32))
        mu = model.encoder(x).chunk(2, dim=-1)[0]
        error = (torch.sigmoid(model.decoder(mu)) - x).abs().mean().item()
    print(f"{args.backend}: {args.epochs} epochs in {time.perf_counter() - start:.1f} s; mean absolute "
          f"reconstruction error of the first 8 digits {error:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
