"""The fused modules (torch.ao.nn.intrinsic.modules.fused): a Sequential of the modules fused,
typed so that prepare and convert know which quantized module replaces it. Each checks the
exact types of its parts (a parametrized part counts as its original class), as torch does."""
from .....nn.modules.activation import ReLU
from .....nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .....nn.modules.container import Sequential
from .....nn.modules.conv import Conv1d, Conv2d, Conv3d
from .....nn.modules.linear import Linear
from .....nn.utils.parametrize import type_before_parametrizations

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU", "ConvBn1d", "ConvBn2d", "ConvBnReLU1d",
           "ConvBnReLU2d", "ConvBn3d", "ConvBnReLU3d", "BNReLU2d", "BNReLU3d", "LinearBn1d"]


class _FusedModule(Sequential):
    pass


def _check_types(modules, expected):
    types = [type_before_parametrizations(m) for m in modules]
    assert types == list(expected), "Incorrect types for input modules" + "".join(str(t) for t in types)


def _fused(name, parts, arg_names, doc):
    """A fused module class taking one module of each type in `parts`, in that order (by
    position or by torch's argument names)."""

    def __init__(self, *args, **kwargs):
        modules = list(args) + [kwargs.pop(n) for n in arg_names[len(args):] if n in kwargs]
        if kwargs or len(modules) != len(parts):
            raise TypeError(f"{name}.__init__() takes the modules ({', '.join(arg_names)})")
        _check_types(modules, parts)
        _FusedModule.__init__(self, *modules)

    return type(name, (_FusedModule,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


_CR, _CB, _CBR = ("conv", "relu"), ("conv", "bn"), ("conv", "bn", "relu")
ConvReLU1d = _fused("ConvReLU1d", (Conv1d, ReLU), _CR, "Conv1d followed by ReLU.")
ConvReLU2d = _fused("ConvReLU2d", (Conv2d, ReLU), _CR, "Conv2d followed by ReLU.")
ConvReLU3d = _fused("ConvReLU3d", (Conv3d, ReLU), _CR, "Conv3d followed by ReLU.")
ConvBn1d = _fused("ConvBn1d", (Conv1d, BatchNorm1d), _CB, "Conv1d followed by BatchNorm1d.")
ConvBn2d = _fused("ConvBn2d", (Conv2d, BatchNorm2d), _CB, "Conv2d followed by BatchNorm2d.")
ConvBn3d = _fused("ConvBn3d", (Conv3d, BatchNorm3d), _CB, "Conv3d followed by BatchNorm3d.")
ConvBnReLU1d = _fused("ConvBnReLU1d", (Conv1d, BatchNorm1d, ReLU), _CBR, "Conv1d, BatchNorm1d, then ReLU.")
ConvBnReLU2d = _fused("ConvBnReLU2d", (Conv2d, BatchNorm2d, ReLU), _CBR, "Conv2d, BatchNorm2d, then ReLU.")
ConvBnReLU3d = _fused("ConvBnReLU3d", (Conv3d, BatchNorm3d, ReLU), _CBR, "Conv3d, BatchNorm3d, then ReLU.")
BNReLU2d = _fused("BNReLU2d", (BatchNorm2d, ReLU), ("batch_norm", "relu"), "BatchNorm2d followed by ReLU.")
BNReLU3d = _fused("BNReLU3d", (BatchNorm3d, ReLU), ("batch_norm", "relu"), "BatchNorm3d followed by ReLU.")
LinearReLU = _fused("LinearReLU", (Linear, ReLU), ("linear", "relu"), "Linear followed by ReLU.")
LinearBn1d = _fused("LinearBn1d", (Linear, BatchNorm1d), ("linear", "bn"), "Linear followed by BatchNorm1d.")
