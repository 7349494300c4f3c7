"""The quantized normalization modules of torch.ao.nn.quantized that exist so far: LayerNorm
(quantized::layer_norm, the output qparams kept as `scale` / `zero_point` buffers). GroupNorm
and InstanceNorm1d/2d/3d wait for their quantized kernels."""
from .... import _C
from ....nn.modules import normalization as float_normalization
from ....ops import ops

__all__ = ["LayerNorm"]


class LayerNorm(float_normalization.LayerNorm):
    """Layer norm from the integers in to the integers out, sharing the float module's weight
    and bias."""

    def __init__(self, normalized_shape, weight, bias, scale, zero_point, eps=1e-5, elementwise_affine=True,
                 device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(normalized_shape, eps=eps, elementwise_affine=elementwise_affine, **factory_kwargs)
        self.weight = weight
        self.bias = bias
        self.register_buffer("scale", _C.tensor(scale, **factory_kwargs))
        self.register_buffer("zero_point", _C.tensor(zero_point, **factory_kwargs))

    def forward(self, input):
        return ops.quantized.layer_norm(input, list(self.normalized_shape), self.weight, self.bias, self.eps,
                                        float(self.scale), int(self.zero_point))

    def _get_name(self):
        return "QuantizedLayerNorm"

    @classmethod
    def from_float(cls, mod):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return cls(mod.normalized_shape, mod.weight, mod.bias, float(scale), int(zero_point), mod.eps,
                   mod.elementwise_affine)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(mod.normalized_shape, mod.weight, mod.bias, float(scale), int(zero_point), mod.eps,
                   mod.elementwise_affine)
