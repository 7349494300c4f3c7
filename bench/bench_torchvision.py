#!/usr/bin/python3
"""torchvision 0.14's models on tessera side by side with the same models on torch 1.13,
alternating torch / tessera in one run at the same thread count (bench_common.THREADS):
resnet18, mobilenet_v3_small and vit_b_16, forward in eval mode (batch 8, 224x224, no
grad) and one SGD training step in train mode (batch 8), both built by the package from
the same weights.

The process holds two copies of torchvision: the first imported on torch, the second
imported with tessera as torch (tessera.as_torch) while torch's modules are set aside,
so each copy's models run on their own library.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_torchvision.py [rounds] [filter ...]
"""
import sys

import torch
import torchvision

import tessera
import tessera.as_torch
from bench_common import header, run_table, set_threads


def tessera_torchvision():
    """A second torchvision, imported with ``import torch`` answering tessera."""
    def ours(name):
        return name.split(".")[0] in ("torch", "torchvision")
    saved = {name: module for name, module in sys.modules.items() if ours(name)}
    for name in saved:
        del sys.modules[name]
    try:
        tessera.as_torch.install()
        import torchvision as on_tessera
    finally:
        tessera.as_torch.uninstall()
        for name in [n for n in sys.modules if ours(n)]:
            del sys.modules[name]
        sys.modules.update(saved)
    return on_tessera


VISION = {torch: torchvision}


def model_setup(name, train):
    def setup(lib):
        vision = VISION[lib]
        torch.manual_seed(0)
        reference = torchvision.models.get_model(name)  # one set of weights for both libraries
        model = vision.models.get_model(name)
        if lib is torch:
            model.load_state_dict(reference.state_dict())
        else:
            model.load_state_dict({k: tessera.from_numpy(v.numpy().copy()) for k, v in reference.state_dict().items()})
        model.train(train)
        gen = torch.Generator().manual_seed(1)
        x = lib.from_numpy(torch.randn(8, 3, 224, 224, generator=gen).numpy())
        y = lib.from_numpy(torch.randint(0, 1000, (8,), generator=gen).numpy())
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9) if train else None
        return model, x, y, opt
    return setup


def forward_op(lib, model, x, y, opt):
    with lib.no_grad():
        return model(x)


def train_op(lib, model, x, y, opt):
    opt.zero_grad(set_to_none=True)
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()


CASES = []
for _name in ("resnet18", "mobilenet_v3_small", "vit_b_16"):
    CASES.append((f"{_name} forward, batch 8, 224x224", model_setup(_name, False), forward_op))
    CASES.append((f"{_name} train step, batch 8", model_setup(_name, True), train_op))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    VISION[tessera] = tessera_torchvision()
    set_threads()
    print(header(rounds))
    run_table(CASES, rounds, sys.argv[2:], width=44)


if __name__ == "__main__":
    main()
