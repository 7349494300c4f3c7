"""The fused modules (torch.ao.nn.intrinsic.modules.fused): a Sequential of the modules fused,
typed so that prepare and convert know which quantized module replaces it."""
from .....nn.modules.container import Sequential
from .....nn.modules.activation import ReLU
from .....nn.modules.conv import Conv1d, Conv2d, Conv3d
from .....nn.modules.linear import Linear

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU"]


class _FusedModule(Sequential):
    pass


class LinearReLU(_FusedModule):
    """Linear followed by ReLU."""

    def __init__(self, linear, relu):
        assert type(linear) == Linear and type(relu) == ReLU, \
            f"Incorrect types for input modules{type(linear)}{type(relu)}"
        super().__init__(linear, relu)


def _conv_relu(conv_type, dims):
    class ConvReLU(_FusedModule):
        __doc__ = f"Conv{dims}d followed by ReLU."

        def __init__(self, conv, relu):
            assert type(conv) == conv_type and type(relu) == ReLU, \
                f"Incorrect types for input modules{type(conv)}{type(relu)}"
            super().__init__(conv, relu)

    ConvReLU.__name__ = ConvReLU.__qualname__ = f"ConvReLU{dims}d"
    return ConvReLU


ConvReLU1d = _conv_relu(Conv1d, 1)
ConvReLU2d = _conv_relu(Conv2d, 2)
ConvReLU3d = _conv_relu(Conv3d, 3)
