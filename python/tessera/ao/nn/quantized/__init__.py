"""tessera.ao.nn.quantized: the modules of torch.ao.nn.quantized that exist so far.
FloatFunctional (and FXFloatFunctional) stand in for the tensor operations a quantized
model observes, running them in float until convert() swaps in QFunctional, which runs the
quantized operators; Quantize / DeQuantize replace the stubs; the activations (ReLU6,
Hardswish, ELU, LeakyReLU, Sigmoid) run their quantized operators and Dropout passes
quantized tensors through. `functional` holds the
quantized activations; Linear and Conv1d/2d/3d run quantized::linear and conv*d on prepacked
weights, and `dynamic` holds the dynamically quantized Linear. BatchNorm2d/3d, LayerNorm,
GroupNorm and InstanceNorm1d/2d/3d run the quantized norms. The transposed convolutions and
the modules that need quantized embedding kernels are not there yet."""
from . import functional  # noqa: F401
from .activation import ELU, Hardswish, LeakyReLU, ReLU6, Sigmoid  # noqa: F401
from .functional_modules import FloatFunctional, FXFloatFunctional, QFunctional  # noqa: F401
from .batchnorm import BatchNorm2d, BatchNorm3d  # noqa: F401
from .conv import Conv1d, Conv2d, Conv3d  # noqa: F401
from .dropout import Dropout  # noqa: F401
from .linear import Linear, LinearPackedParams  # noqa: F401
from .normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LayerNorm  # noqa: F401
from .quantize import DeQuantize, Quantize  # noqa: F401
from . import dynamic  # noqa: F401,E402

__all__ = ["functional", "FloatFunctional", "FXFloatFunctional", "QFunctional", "Quantize", "DeQuantize", "ReLU6",
           "Hardswish", "ELU", "LeakyReLU", "Sigmoid", "Dropout", "BatchNorm2d", "BatchNorm3d", "LayerNorm",
           "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "Linear", "Conv1d", "Conv2d", "Conv3d",
           "dynamic"]
