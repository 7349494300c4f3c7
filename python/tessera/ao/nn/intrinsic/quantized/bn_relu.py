"""The quantized BNReLU2d / BNReLU3d of torch.nn.intrinsic.quantized: the quantized batch norm
with the ReLU applied to its integers (quantized::batch_norm2d_relu / batch_norm3d_relu)."""
from ...quantized import batchnorm as qbn

__all__ = ["BNReLU2d", "BNReLU3d"]


def _bn_relu(base, dims):
    class BNReLU(base):
        __doc__ = f"BatchNorm{dims}d followed by ReLU, on quantized tensors."
        _OP = f"batch_norm{dims}d_relu"

        def forward(self, input):
            if len(input.shape) != dims + 2:
                raise ValueError("Input shape must be `(N, C, D, H, W)`!" if dims == 3
                                 else "Input shape must be `(N, C, H, W)`!")
            return super().forward(input)

        @classmethod
        def from_reference(cls, bn_relu, output_scale, output_zero_point):
            return super().from_reference(bn_relu[0], output_scale, output_zero_point)

    BNReLU.__name__ = BNReLU.__qualname__ = f"BNReLU{dims}d"
    return BNReLU


BNReLU2d = _bn_relu(qbn.BatchNorm2d, 2)
BNReLU3d = _bn_relu(qbn.BatchNorm3d, 3)
