"""The quantized activation modules of torch.ao.nn.quantized (modules/activation.py): each
runs its quantized operator, with the output qparams that from_float reads from the float
module's observer."""
from ....ops import ops
from ....nn.modules import activation as float_activation
from .... import _C
from . import functional as qF

__all__ = ["ReLU6", "Hardswish", "ELU", "LeakyReLU", "Sigmoid"]


class ReLU6(float_activation.ReLU):
    """min(max(zero_point, x), q(6)) on the integers."""

    def __init__(self, inplace=False):
        super().__init__(inplace)
        self.inplace = inplace

    def forward(self, input):
        return ops.quantized.relu6(input, self.inplace)

    def _get_name(self):
        return "QuantizedReLU6"

    @staticmethod
    def from_float(mod):
        return ReLU6(mod.inplace)


class Hardswish(float_activation.Hardswish):
    """hardswish into the output qparams (scale, zero_point)."""

    def __init__(self, scale, zero_point):
        super().__init__()
        self.scale = scale
        self.zero_point = zero_point

    def forward(self, input):
        return qF.hardswish(input, scale=self.scale, zero_point=self.zero_point)

    def _get_name(self):
        return "QuantizedHardswish"

    @staticmethod
    def from_float(mod):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Hardswish(float(scale), int(zero_point))

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(float(scale), int(zero_point))


class ELU(float_activation.ELU):
    """elu into the output qparams (scale, zero_point)."""

    def __init__(self, scale, zero_point, alpha=1.):
        super().__init__(alpha)
        self.scale = scale
        self.zero_point = zero_point

    def forward(self, input):
        return qF.elu(input, self.scale, self.zero_point, self.alpha)

    def _get_name(self):
        return "QuantizedELU"

    @staticmethod
    def from_float(mod):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return ELU(float(scale), int(zero_point), mod.alpha)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(float(scale), int(zero_point), mod.alpha)


class LeakyReLU(float_activation.LeakyReLU):
    """leaky_relu into the output qparams, kept as buffers (so they are in the state dict)."""

    def __init__(self, scale, zero_point, negative_slope=1e-2, inplace=False, device=None, dtype=None):
        super().__init__(negative_slope, inplace)
        self.register_buffer("scale", _C.tensor(scale, device=device, dtype=dtype))
        self.register_buffer("zero_point", _C.tensor(zero_point, device=device, dtype=dtype))

    def forward(self, input):
        return ops.quantized.leaky_relu(input, self.negative_slope, self.inplace, float(self.scale),
                                        int(self.zero_point))

    def _get_name(self):
        return "QuantizedLeakyReLU"

    @classmethod
    def from_float(cls, mod):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return cls(float(scale), int(zero_point), mod.negative_slope, mod.inplace)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(float(scale), int(zero_point), mod.negative_slope, mod.inplace)


class Sigmoid(float_activation.Sigmoid):
    """sigmoid into the output qparams (output_scale, output_zero_point)."""

    def __init__(self, output_scale, output_zero_point):
        super().__init__()
        self.output_scale = output_scale
        self.output_zero_point = output_zero_point

    def forward(self, input):
        return ops.quantized.sigmoid(input, self.output_scale, self.output_zero_point)

    @classmethod
    def from_float(cls, mod):
        output_scale, output_zero_point = mod.activation_post_process.calculate_qparams()
        return cls(float(output_scale), int(output_zero_point))
