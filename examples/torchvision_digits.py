"""Fine-tune a torchvision model on scikit-learn's 8x8 digits, with tessera as torch.

torchvision (Debian's python3-torchvision, unmodified) imports torch; tessera.as_torch
makes that import tessera, so its ResNet-18, its transforms and its training utilities
all run on tessera. The digits are turned into small RGB images with torchvision's own
transforms (antialiased resize, normalisation); the model's classifier is replaced by a
fresh 10-way head (the fine-tuning recipe), and the whole network is trained with SGD
and a cosine schedule.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/torchvision_digits.py [--epochs 3]
    ... --weights resnet18.pth     # start from a state_dict torch saved (e.g. ImageNet weights)
    ... --backend torch            # the same script on PyTorch

Every random choice (the split, the batch order) comes from a numpy generator, so both
backends see the same data.
"""
import argparse
import sys
import time

import numpy as np


def import_backend(name):
    """torch for --backend torch; otherwise tessera installed as torch, so that torchvision
    (imported afterwards) builds on it."""
    if name == "tessera":
        import tessera.as_torch
        tessera.as_torch.install()
    import torch
    import torchvision
    return torch, torchvision


def load_digits(seed=0, test_fraction=0.2):
    from sklearn.datasets import load_digits as sk_digits
    digits = sk_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    labels = digits.target.astype(np.int64)
    order = np.random.RandomState(seed).permutation(len(labels))
    n_test = int(len(labels) * test_fraction)
    return (images[order[n_test:]], labels[order[n_test:]]), (images[order[:n_test]], labels[order[:n_test]])


def preprocess(torch, torchvision, images, size):
    """[N, 1, 8, 8] in [0, 1] -> [N, 3, size, size], resized and normalised by torchvision."""
    T = torchvision.transforms
    pipeline = T.Compose([T.Resize(size, antialias=True), T.Normalize([0.5] * 3, [0.25] * 3)])
    return pipeline(torch.from_numpy(images).expand(-1, 3, -1, -1).contiguous())


def build_model(torch, torchvision, weights_path):
    model = torchvision.models.resnet18()
    if weights_path:
        model.load_state_dict(torch.load(weights_path))
    model.fc = torch.nn.Linear(model.fc.in_features, 10)  # a new head for the 10 digits
    return model


def evaluate(torch, model, images, labels, batch=256):
    model.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, len(labels), batch):
            logits = model(images[start:start + batch])
            correct += int((logits.argmax(1) == labels[start:start + batch]).sum())
    return correct / len(labels)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["tessera", "torch"], default="tessera")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--size", type=int, default=32, help="image side after resizing")
    parser.add_argument("--train-limit", type=int, default=0, help="use only this many training images")
    parser.add_argument("--weights", default="", help="a resnet18 state_dict to start from")
    args = parser.parse_args(argv)

    torch, torchvision = import_backend(args.backend)
    torch.manual_seed(0)
    (train_x, train_y), (test_x, test_y) = load_digits()
    if args.train_limit:
        train_x, train_y = train_x[:args.train_limit], train_y[:args.train_limit]
    train_images = preprocess(torch, torchvision, train_x, args.size)
    test_images = preprocess(torch, torchvision, test_x, args.size)
    train_labels, test_labels = torch.from_numpy(train_y), torch.from_numpy(test_y)

    model = build_model(torch, torchvision, args.weights)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    steps = args.epochs * ((len(train_y) + args.batch_size - 1) // args.batch_size)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    rng = np.random.RandomState(1)
    print(f"{args.backend}: torchvision {torchvision.__version__} resnet18, {len(train_y)} training images "
          f"at {args.size}x{args.size}")
    for epoch in range(args.epochs):
        model.train()
        start, total, seen = time.perf_counter(), 0.0, 0
        order = torch.from_numpy(rng.permutation(len(train_y)))
        for first in range(0, len(train_y), args.batch_size):
            idx = order[first:first + args.batch_size]
            loss = torch.nn.functional.cross_entropy(model(train_images[idx]), train_labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
            total += float(loss) * len(idx)
            seen += len(idx)
        accuracy = evaluate(torch, model, test_images, test_labels)
        print(f"epoch {epoch + 1}: loss {total / seen:.4f}  test accuracy {accuracy:.3f}  "
              f"({time.perf_counter() - start:.1f} s)", flush=True)
    return accuracy


if __name__ == "__main__":
    sys.exit(0 if main() >= 0 else 1)
