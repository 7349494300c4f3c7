"""The quantized normalization modules of torch.ao.nn.quantized: LayerNorm, GroupNorm and
InstanceNorm1d/2d/3d (quantized::layer_norm, group_norm, instance_norm), sharing the float
module's weight and bias, with the output qparams kept as `scale` / `zero_point` buffers."""
from .... import _C
from ....nn.modules import instancenorm as float_instancenorm
from ....nn.modules import normalization as float_normalization
from ....ops import ops

__all__ = ["LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


def _output_qparams(module, weight, bias, scale, zero_point, factory_kwargs):
    module.weight = weight
    module.bias = bias
    module.register_buffer("scale", _C.tensor(scale, **factory_kwargs))
    module.register_buffer("zero_point", _C.tensor(zero_point, **factory_kwargs))


class LayerNorm(float_normalization.LayerNorm):
    """Layer norm from the integers in to the integers out, sharing the float module's weight
    and bias."""

    def __init__(self, normalized_shape, weight, bias, scale, zero_point, eps=1e-5, elementwise_affine=True,
                 device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(normalized_shape, eps=eps, elementwise_affine=elementwise_affine, **factory_kwargs)
        _output_qparams(self, weight, bias, scale, zero_point, factory_kwargs)

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


class GroupNorm(float_normalization.GroupNorm):
    """Group norm from the integers in to the integers out."""
    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, weight, bias, scale, zero_point, eps=1e-5, affine=True, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(num_groups, num_channels, eps, affine, **factory_kwargs)
        _output_qparams(self, weight, bias, scale, zero_point, factory_kwargs)

    def forward(self, input):
        return ops.quantized.group_norm(input, self.num_groups, self.weight, self.bias, self.eps, float(self.scale),
                                        int(self.zero_point))

    def _get_name(self):
        return "QuantizedGroupNorm"

    @classmethod
    def from_float(cls, mod):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return cls(mod.num_groups, mod.num_channels, mod.weight, mod.bias, float(scale), int(zero_point), mod.eps,
                   mod.affine)


def _instance_norm(float_cls, dims):
    class InstanceNorm(float_cls):
        __doc__ = f"Instance norm ({dims}-d) from the integers in to the integers out."

        def __init__(self, num_features, weight, bias, scale, zero_point, eps=1e-5, momentum=0.1, affine=False,
                     track_running_stats=False, device=None, dtype=None):
            factory_kwargs = {"device": device, "dtype": dtype}
            super().__init__(num_features, eps, momentum, affine, track_running_stats, **factory_kwargs)
            _output_qparams(self, weight, bias, scale, zero_point, factory_kwargs)

        def forward(self, input):
            return ops.quantized.instance_norm(input, self.weight, self.bias, self.eps, float(self.scale),
                                               int(self.zero_point))

        def _get_name(self):
            return f"QuantizedInstanceNorm{dims}d"

        @classmethod
        def from_float(cls, mod):
            scale, zero_point = mod.activation_post_process.calculate_qparams()
            return cls(mod.num_features, mod.weight, mod.bias, float(scale), int(zero_point), mod.eps, mod.affine)

        @classmethod
        def from_reference(cls, mod, scale, zero_point):
            return cls(mod.num_features, mod.weight, mod.bias, float(scale), int(zero_point), mod.eps, mod.affine)

    InstanceNorm.__name__ = InstanceNorm.__qualname__ = f"InstanceNorm{dims}d"
    return InstanceNorm


InstanceNorm1d = _instance_norm(float_instancenorm.InstanceNorm1d, 1)
InstanceNorm2d = _instance_norm(float_instancenorm.InstanceNorm2d, 2)
InstanceNorm3d = _instance_norm(float_instancenorm.InstanceNorm3d, 3)
