"""The main job: a small CNN learns the handwritten digits scikit-learn ships (1,797 8x8
images), written for `import torch` and run on tessera by changing that one import.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/train_digits.py [--epochs 20]
    ... --compare-torch     # the same script under real torch too, both times printed
    ... --quantize [static|qat|dynamic|all]   # then int8: float vs int8 accuracy, size and
                                   # inference time (examples/quantize_digits.py)
    ... --amp [bfloat16|float16]   # mixed precision: torch.autocast('cpu'), and for
                                   # float16 a torch.amp.GradScaler('cpu') on the loss
    python3 -m tessera.distributed.run --nproc_per_node 2 examples/train_digits.py --ddp
                            # data-parallel on two processes (DistributedDataParallel)

Prints loss and accuracy per epoch (a tqdm bar per epoch), the final test accuracy, and
writes a PNG of the curves and a checkpoint of the model's state_dict into --out.
"""
import argparse
import importlib
import os
import subprocess
import sys
import time


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=("tessera", "torch"), default="tessera",
                   help="the library imported as torch (default tessera)")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    p.add_argument("--out", default="build/digits", help="where the PNG and the checkpoint go")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG (no matplotlib needed)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--amp", nargs="?", const="bfloat16", choices=("bfloat16", "float16"), default=None,
                   help="run forward and loss under torch.autocast('cpu', dtype) (bfloat16 when no dtype is "
                        "given); float16 also scales the loss with torch.amp.GradScaler('cpu') (current "
                        "torch; torch 1.13 has bfloat16 CPU autocast only)")
    p.add_argument("--ddp", action="store_true",
                   help="data-parallel over the processes of a launcher (python -m tessera.distributed.run "
                        "--nproc_per_node N ...): DistributedDataParallel on Gloo, each rank a 1/N share of the "
                        "batch and of the epoch, one progress bar (rank 0)")
    p.add_argument("--quantize", nargs="?", const="all", choices=("static", "qat", "dynamic", "all"), default=None,
                   help="after training, quantize the model to int8 (post-training static, quantization-aware "
                        "fine-tuning, or dynamic; all three when no mode is given) and print float vs int8 test "
                        "accuracy, state_dict size and inference time")
    p.add_argument("--qat-epochs", type=_positive_int, default=2, help="fine-tuning epochs of --quantize qat")
    p.add_argument("--compare-torch", action="store_true",
                   help="also run this script under real torch and print both times")
    return p.parse_args(argv)


def load_digits_split(seed):
    """The digits as float32 [N, 1, 8, 8] in [0, 1] and int64 labels, split 80/20 with a
    fixed seed (stratified, so both halves see every digit)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    images = (digits.images / 16.0).astype("float32")[:, None, :, :]
    labels = digits.target.astype("int64")
    return train_test_split(images, labels, test_size=0.2, random_state=seed, stratify=labels)


def build_model(nn):
    return nn.Sequential(
        nn.Conv2d(1, 32, kernel_size=3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),                                     # 32 x 4 x 4
        nn.Conv2d(32, 64, kernel_size=3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.MaxPool2d(2),                                     # 64 x 2 x 2
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(64 * 2 * 2, 128), nn.ReLU(),
        nn.Linear(128, 10),
    )


def evaluate(torch, model, loader, loss_fn, amp_dtype=None):
    model.eval()
    total, correct, loss_sum = 0, 0, 0.0
    with torch.no_grad(), torch.autocast("cpu", dtype=amp_dtype, enabled=amp_dtype is not None):
        for x, y in loader:
            logits = model(x)
            loss_sum += loss_fn(logits, y).item() * y.shape[0]
            correct += (logits.argmax(1) == y).sum().item()
            total += y.shape[0]
    return loss_sum / total, correct / total


def train(args):
    torch = importlib.import_module(args.backend)
    from tqdm import tqdm
    nn = torch.nn
    from_numpy = torch.from_numpy
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))

    x_train, x_test, y_train, y_test = load_digits_split(args.seed)
    TensorDataset, DataLoader = torch.utils.data.TensorDataset, torch.utils.data.DataLoader
    train_set = TensorDataset(from_numpy(x_train), from_numpy(y_train))
    test_set = TensorDataset(from_numpy(x_test), from_numpy(y_test))
    shuffle_gen = torch.Generator().manual_seed(args.seed)
    rank, world, sampler = 0, 1, None
    if args.ddp:
        dist = torch.distributed
        dist.init_process_group("gloo")  # env:// from the launcher
        rank, world = dist.get_rank(), dist.get_world_size()
        sampler = torch.utils.data.DistributedSampler(train_set, seed=args.seed)
    train_loader = DataLoader(train_set, batch_size=max(1, args.batch_size // world), shuffle=sampler is None,
                              sampler=sampler, generator=shuffle_gen if sampler is None else None,
                              num_workers=args.workers)
    test_loader = DataLoader(test_set, batch_size=256)

    model = build_model(nn)
    if args.ddp:
        model = nn.parallel.DistributedDataParallel(model)
    quiet = args.quiet or rank != 0
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                                    steps_per_epoch=len(train_loader))
    # Mixed precision: convolutions and linear layers run in amp_dtype, the loss in float32;
    # the weights and their grads stay float32. float16's narrow range needs loss scaling.
    amp_dtype = getattr(torch, args.amp) if args.amp else None
    scaler = torch.amp.GradScaler("cpu") if args.amp == "float16" else None
    history = {"train_loss": [], "train_acc": [], "test_loss": [], "test_acc": []}
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        if sampler is not None:
            sampler.set_epoch(epoch)
        seen, correct, loss_sum = 0, 0, 0.0
        bar = tqdm(train_loader, desc=f"epoch {epoch:2d}/{args.epochs}", leave=False, disable=quiet,
                   unit="batch")
        for x, y in bar:
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=amp_dtype, enabled=amp_dtype is not None):
                logits = model(x)
                loss = loss_fn(logits, y)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                optimizer.step()
            scheduler.step()
            loss_sum += loss.item() * y.shape[0]
            correct += (logits.argmax(1) == y).sum().item()
            seen += y.shape[0]
            bar.set_postfix(loss=f"{loss_sum / seen:.3f}")
        if args.ddp:  # the epoch's figures over every rank's share
            totals = torch.tensor([loss_sum, float(correct), float(seen)], dtype=torch.float64)
            torch.distributed.all_reduce(totals)
            loss_sum, correct, seen = totals[0].item(), int(totals[1].item()), int(totals[2].item())
        test_loss, test_acc = evaluate(torch, model, test_loader, loss_fn, amp_dtype)
        history["train_loss"].append(loss_sum / seen)
        history["train_acc"].append(correct / seen)
        history["test_loss"].append(test_loss)
        history["test_acc"].append(test_acc)
        if rank == 0:
            print(f"epoch {epoch:2d}: train loss {loss_sum / seen:.4f} acc {correct / seen:.4f} | "
                  f"test loss {test_loss:.4f} acc {test_acc:.4f}", flush=True)
    elapsed = time.perf_counter() - start
    if args.ddp:
        model = model.module
        torch.distributed.destroy_process_group()
        if rank != 0:
            return history["test_acc"][-1], elapsed

    os.makedirs(args.out, exist_ok=True)
    checkpoint = os.path.join(args.out, f"digits_cnn_{args.backend}.pt")
    torch.save(model.state_dict(), checkpoint)
    if not args.no_plot:
        plot(history, os.path.join(args.out, f"digits_curves_{args.backend}.png"), args.backend)
    final = history["test_acc"][-1]
    print(f"{args.backend}: final test accuracy {final:.4f} ({round(final * len(y_test))}/{len(y_test)}), "
          f"training took {elapsed:.1f} s; checkpoint {checkpoint}")
    print(f"TRAIN_SECONDS {elapsed:.3f}")
    if args.quantize:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from quantize_digits import QUANTIZE_MODES, quantize_and_report
        modes = QUANTIZE_MODES if args.quantize == "all" else (args.quantize,)
        args.quantized = quantize_and_report(torch, model, train_loader, test_loader, modes, args.qat_epochs)
    return final, elapsed


def plot(history, path, backend):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    epochs = range(1, len(history["train_loss"]) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    ax_loss.plot(epochs, history["train_loss"], label="train")
    ax_loss.plot(epochs, history["test_loss"], label="test")
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy loss", title=f"loss ({backend})")
    ax_acc.plot(epochs, history["train_acc"], label="train")
    ax_acc.plot(epochs, history["test_acc"], label="test")
    ax_acc.set(xlabel="epoch", ylabel="accuracy", title=f"accuracy ({backend})", ylim=(0.5, 1.0))
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"curves written to {path}")


def main(argv=None):
    args = parse_args(argv)
    final, elapsed = train(args)
    if args.compare_torch and args.backend == "tessera":
        try:
            import torch  # noqa: F401
        except ImportError:
            print("--compare-torch: real torch is not installed", file=sys.stderr)
            return 0 if final >= 0.97 else 1
        if args.amp == "float16" and not hasattr(torch.amp, "GradScaler"):
            print(f"--compare-torch: torch {torch.__version__} has no float16 CPU autocast or CPU GradScaler "
                  "(current PyTorch's); compare with --amp bfloat16", file=sys.stderr)
            return 0 if final >= 0.97 else 1
        argv_torch = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--compare-torch"]
        # The same script under real torch, its output passed through as it comes.
        torch_seconds = None
        with subprocess.Popen([sys.executable, os.path.abspath(__file__), "--backend", "torch", *argv_torch],
                              stdout=subprocess.PIPE, text=True) as child:
            for line in child.stdout:
                print(line, end="", flush=True)
                if line.startswith("TRAIN_SECONDS"):
                    torch_seconds = float(line.split()[1])
        if child.returncode not in (0, 1) or torch_seconds is None:
            print(f"--compare-torch: the torch run failed (exit status {child.returncode})", file=sys.stderr)
            return 1
        print(f"training time: tessera {elapsed:.2f} s, torch {torch_seconds:.2f} s "
              f"(ratio {elapsed / torch_seconds:.2f})")
    return 0 if final >= 0.97 else 1


if __name__ == "__main__":
    sys.exit(main())
