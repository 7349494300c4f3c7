"""The fused modules (torch.ao.nn.intrinsic.modules.fused): a Sequential of the modules fused,
typed so that prepare and convert know which quantized module replaces it."""
from .....nn.modules.container import Sequential
from .....nn.modules.linear import Linear
from .....nn.modules.activation import ReLU

__all__ = ["LinearReLU"]


class _FusedModule(Sequential):
    pass


class LinearReLU(_FusedModule):
    """Linear followed by ReLU."""

    def __init__(self, linear, relu):
        assert type(linear) == Linear and type(relu) == ReLU, \
            f"Incorrect types for input modules{type(linear)}{type(relu)}"
        super().__init__(linear, relu)
