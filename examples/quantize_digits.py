"""Int8 quantization of the digits CNN that train_digits.py trains, written against
torch.ao.quantization's eager API (so it runs on tessera and on real torch alike):

  static   fuse conv-bn-relu and linear-relu, observe activations on training batches
           (the engine's default qconfig: histogram activations, per-channel weights),
           convert to int8 modules
  qat      fuse for training, fine-tune with fake-quantized weights and activations for
           a few epochs, convert
  dynamic  int8 weights for the Linear layers, activations quantized per batch

    PYTHONPATH=build/release/python /usr/bin/python3 examples/train_digits.py --quantize all

For each mode it prints float and int8 test accuracy, the size of the saved state_dict and
the inference time over the test set (batches of 256, best of several runs).
"""
import copy
import io
import time

QUANTIZE_MODES = ("static", "qat", "dynamic")
ENGINE = "onednn"  # tessera computes what torch's oneDNN engine computes
FUSE_INFERENCE = [["0", "1", "2"], ["4", "5", "6"], ["10", "11"]]  # conv-bn-relu twice, linear-relu


def _accuracy(torch, model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += y.shape[0]
    return correct / total


def _inference_seconds(torch, model, loader, repeats=5):
    """The best of `repeats` passes over the test set: the fairest figure on a shared machine."""
    model.eval()
    best = float("inf")
    with torch.no_grad():
        for _ in range(repeats):
            start = time.perf_counter()
            for x, _ in loader:
                model(x)
            best = min(best, time.perf_counter() - start)
    return best


def _state_dict_bytes(torch, model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return buf.tell()


def _static(torch, float_model, train_loader, calibration_batches=8):
    tq = torch.ao.quantization
    model = tq.QuantWrapper(tq.fuse_modules(copy.deepcopy(float_model).eval(), FUSE_INFERENCE))
    model.qconfig = tq.get_default_qconfig(ENGINE)
    tq.prepare(model, inplace=True)
    with torch.no_grad():
        for i, (x, _) in enumerate(train_loader):
            if i == calibration_batches:
                break
            model(x)
    return tq.convert(model)


def _qat(torch, float_model, train_loader, epochs, lr):
    tq = torch.ao.quantization
    model = copy.deepcopy(float_model).train()
    tq.fuse_modules_qat(model, FUSE_INFERENCE, inplace=True)
    model = tq.QuantWrapper(model)
    model.qconfig = tq.get_default_qat_qconfig(ENGINE)
    tq.prepare_qat(model, inplace=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in range(epochs):
        model.train()
        if epoch == epochs - 1 and epochs > 1:
            # the last epoch with batch-norm statistics and observed ranges frozen, as torch's tutorial does
            model.apply(torch.nn.intrinsic.qat.freeze_bn_stats)
            model.apply(tq.disable_observer)
        for x, y in train_loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
    return tq.convert(model.eval())


def _dynamic(torch, float_model):
    return torch.ao.quantization.quantize_dynamic(copy.deepcopy(float_model).eval(), {torch.nn.Linear},
                                                  dtype=torch.qint8)


def quantize_and_report(torch, float_model, train_loader, test_loader, modes, qat_epochs=2, qat_lr=1e-3):
    """Quantizes float_model in each of `modes` and prints (and returns, by mode) float and
    int8 accuracy, state_dict size and inference time."""
    if hasattr(torch.backends.quantized, "engine"):
        torch.backends.quantized.engine = ENGINE
    float_model = float_model.eval()
    float_row = (_accuracy(torch, float_model, test_loader), _state_dict_bytes(torch, float_model),
                 _inference_seconds(torch, float_model, test_loader))
    results = {}
    for mode in modes:
        if mode == "static":
            quantized = _static(torch, float_model, train_loader)
        elif mode == "qat":
            quantized = _qat(torch, float_model, train_loader, qat_epochs, qat_lr)
        else:
            quantized = _dynamic(torch, float_model)
        results[mode] = (_accuracy(torch, quantized, test_loader), _state_dict_bytes(torch, quantized),
                         _inference_seconds(torch, quantized, test_loader))
    print(f"{'model':<10} {'test acc':>9} {'size (KiB)':>11} {'inference (ms)':>15}")
    for name, (acc, size, seconds) in [("float32", float_row), *results.items()]:
        print(f"{name:<10} {acc:9.4f} {size / 1024:11.1f} {seconds * 1e3:15.2f}")
    return {"float32": float_row, **results}
