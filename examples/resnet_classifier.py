"""A small ResNet on scikit-learn's 8x8 digits: residual blocks of Conv2d + BatchNorm2d +
ReLU, one downsampling block with a 1x1 projection shortcut, AdaptiveAvgPool2d and a
Linear head; augmentation written with tensor ops (flips chosen by a mask, random crops by
padding and slicing, Gaussian noise); SGD with Nesterov momentum and weight decay under a
CosineAnnealingLR schedule and label smoothing; train mode for the steps and eval mode for the test set.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/resnet_classifier.py [--epochs 8]
    ... --backend torch      # the same code under real torch

The code takes the library as an argument (`torch`); every random decision (the batch
order, which images flip, where each crop starts, the noise) is drawn from a numpy
generator and handed to the library as tensors, so tessera and torch see the same data.
test/python/test_examples_vs_torch.py compares the two step by step.
"""
import argparse
import importlib
import sys
import time

import numpy as np


def load_digits_split(seed=0, test_fraction=0.2):
    """The digits as [N, 1, 8, 8] float64 in [0, 1] and int64 labels, split with a fixed permutation."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = (digits.images / 16.0)[:, None, :, :]
    labels = digits.target.astype(np.int64)
    order = np.random.RandomState(seed).permutation(len(labels))
    n_test = int(len(labels) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return images[train], labels[train], images[test], labels[test]


def build_model(torch, width=16, num_classes=10, seed=0):
    nn = torch.nn
    F = nn.functional

    class BasicBlock(nn.Module):
        """conv-bn-relu-conv-bn plus the input (projected by a strided 1x1 conv when the shape changes)."""

        def __init__(self, cin, cout, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                              nn.BatchNorm2d(cout))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + self.shortcut(x))

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(1, width, 3, padding=1, bias=False), nn.BatchNorm2d(width),
                                      nn.ReLU(inplace=True))
            self.layer1 = BasicBlock(width, width)                 # width x 8 x 8
            self.layer2 = BasicBlock(width, 2 * width, stride=2)   # 2 width x 4 x 4
            self.layer3 = BasicBlock(2 * width, 2 * width)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(2 * width, num_classes)

        def forward(self, x):
            x = self.layer3(self.layer2(self.layer1(self.stem(x))))
            return self.fc(torch.flatten(self.pool(x), 1))

    torch.manual_seed(seed)
    model = ResNet()
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    return model


class Augmenter:
    """Draws the random choices for a batch with numpy; `apply` carries them out with tensor ops.
    Digits are not mirror-symmetric, so only a few images are flipped (flip_prob)."""

    def __init__(self, rng, pad=1, noise=0.05, flip_prob=0.1):
        self.rng, self.pad, self.noise, self.flip_prob = rng, pad, noise, flip_prob

    def draw(self, batch_shape):
        n = batch_shape[0]
        return {"flip": self.rng.rand(n) < self.flip_prob,
                "offset": self.rng.randint(0, 2 * self.pad + 1, size=(n, 2)),
                "noise": self.rng.randn(*batch_shape) * self.noise}

    def apply(self, torch, x, choices):
        F = torch.nn.functional
        n, _, h, w = x.shape
        flip = torch.from_numpy(choices["flip"]).reshape(n, 1, 1, 1)
        x = torch.where(flip, torch.flip(x, dims=[3]), x)
        padded = F.pad(x, (self.pad,) * 4)
        crops = [padded[i, :, dy:dy + h, dx:dx + w] for i, (dy, dx) in enumerate(choices["offset"].tolist())]
        x = torch.stack(crops)
        return x + torch.from_numpy(choices["noise"].astype(choices["dtype"]))


def train(torch, model, data, epochs, batch_size=64, steps=None, seed=0, dtype="float32", lr=0.1,
          momentum=0.9, weight_decay=5e-4, label_smoothing=0.1, log=None):
    """SGD (Nesterov) with a cosine schedule over every step. `steps` stops early (for tests).
    Returns the loss of every training step and (test loss, test accuracy) after each epoch."""
    F = torch.nn.functional
    x_train, y_train, x_test, y_test = data
    np_dtype = np.dtype(dtype)
    model.to(getattr(torch, dtype))
    steps_per_epoch = -(-len(y_train) // batch_size)
    total = steps if steps is not None else epochs * steps_per_epoch
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, nesterov=True,
                                weight_decay=weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total)
    rng = np.random.RandomState(seed)
    augment = Augmenter(rng)
    losses, evals, step = [], [], 0
    for epoch in range(epochs):
        model.train()
        order = rng.permutation(len(y_train))
        for first in range(0, len(order), batch_size):
            if step == total:
                break
            rows = order[first:first + batch_size]
            choices = augment.draw(x_train[rows].shape)
            choices["dtype"] = np_dtype
            x = augment.apply(torch, torch.from_numpy(x_train[rows].astype(np_dtype)), choices)
            y = torch.from_numpy(y_train[rows])
            loss = F.cross_entropy(model(x), y, label_smoothing=label_smoothing)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            step += 1
        evals.append(evaluate(torch, model, x_test.astype(np_dtype), y_test))
        if log is not None:
            log(epoch, losses, evals[-1], scheduler.get_last_lr()[0])
        if step == total:
            break
    return losses, evals


def evaluate(torch, model, images, labels, batch_size=256):
    """Mean cross-entropy and accuracy in eval mode (BatchNorm uses its running statistics)."""
    F = torch.nn.functional
    model.eval()
    loss_sum, correct = 0.0, 0
    with torch.no_grad():
        for first in range(0, len(labels), batch_size):
            x = torch.from_numpy(images[first:first + batch_size])
            y = torch.from_numpy(labels[first:first + batch_size])
            logits = model(x)
            loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(dim=1) == y).sum().item()
    return loss_sum / len(labels), correct / len(labels)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=("tessera", "torch"), default="tessera")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    torch = importlib.import_module(args.backend)

    data = load_digits_split(args.seed)
    model = build_model(torch, seed=args.seed)

    def log(epoch, losses, evaluation, lr):
        print(f"epoch {epoch + 1}: train loss {losses[-1]:.4f} | test loss {evaluation[0]:.4f} "
              f"accuracy {evaluation[1]:.4f} | lr {lr:.4f}", flush=True)

    start = time.perf_counter()
    _, evals = train(torch, model, data, args.epochs, batch_size=args.batch_size, seed=args.seed, log=log)
    print(f"{args.backend}: final test accuracy {evals[-1][1]:.4f} after {args.epochs} epochs "
          f"({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
