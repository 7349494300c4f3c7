"""The quantized batch norms of torch.ao.nn.quantized (BatchNorm2d, BatchNorm3d): an eval-mode
batch norm from the integers in to the integers out (quantized::batch_norm2d/3d), the output
qparams kept as `scale` / `zero_point` buffers; the fused BNReLU forms (nn.intrinsic.quantized)
derive from them."""
from .... import _C
from ....nn.modules import batchnorm as float_batchnorm
from ....ops import ops

__all__ = ["BatchNorm2d", "BatchNorm3d"]


class _BatchNorm(float_batchnorm._BatchNorm):
    _OP = None  # the quantized:: operator's name
    _DIMS = None

    def __init__(self, num_features, eps=1e-5, momentum=0.1, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(num_features, eps, momentum, True, True, **factory_kwargs)
        self.register_buffer("scale", _C.tensor(1.0, **factory_kwargs))
        self.register_buffer("zero_point", _C.tensor(0, **factory_kwargs))

    def forward(self, input):
        return getattr(ops.quantized, self._OP)(input, self.weight, self.bias, self.running_mean, self.running_var,
                                               self.eps, float(self.scale), int(self.zero_point))

    def _get_name(self):
        return "Quantized" + type(self).__name__

    @classmethod
    def from_float(cls, mod):
        """The quantized batch norm of an observed float one (or of a fused BNReLU's first
        module), sharing its parameters and running statistics."""
        from ..intrinsic import modules as nni
        activation_post_process = mod.activation_post_process
        if type(mod) in (nni.BNReLU2d, nni.BNReLU3d):
            mod = mod[0]
        scale, zero_point = activation_post_process.calculate_qparams()
        new_mod = cls(mod.num_features, mod.eps)
        new_mod.weight, new_mod.bias = mod.weight, mod.bias
        new_mod.running_mean, new_mod.running_var = mod.running_mean, mod.running_var
        new_mod.scale, new_mod.zero_point = scale, zero_point
        return new_mod

    @classmethod
    def from_reference(cls, bn, output_scale, output_zero_point):
        qbn = cls(bn.num_features, bn.eps, bn.momentum, device=bn.weight.device, dtype=bn.weight.dtype)
        qbn.weight, qbn.bias = bn.weight, bn.bias
        qbn.running_mean, qbn.running_var = bn.running_mean, bn.running_var
        qbn.scale, qbn.zero_point = output_scale, output_zero_point
        return qbn


class BatchNorm2d(_BatchNorm):
    """quantized::batch_norm2d on (N, C, H, W); the result is channels-last."""
    _OP = "batch_norm2d"
    _DIMS = 2


class BatchNorm3d(_BatchNorm):
    """quantized::batch_norm3d on (N, C, D, H, W); the result is channels-last."""
    _OP = "batch_norm3d"
    _DIMS = 3
