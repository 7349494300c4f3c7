"""Quantize and DeQuantize, the modules convert() puts where QuantStub and DeQuantStub
stood (torch.ao.nn.quantized.modules): float -> quantized with fixed qparams, and back."""
from .... import _C
from ....nn.modules.module import Module

__all__ = ["Quantize", "DeQuantize"]


class Quantize(Module):
    """quantize_per_tensor with the qparams kept as buffers (so they are in the state dict)."""

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        factory_kwargs = dict(factory_kwargs or {})
        super().__init__()
        self.register_buffer("scale", _C.tensor([scale], **factory_kwargs))
        self.register_buffer("zero_point", _C.tensor([zero_point], dtype=_C.long,
                                                     **{k: v for k, v in factory_kwargs.items() if k != "dtype"}))
        self.dtype = dtype

    def forward(self, X):  # noqa: N803 (torch's argument name)
        return _C.quantize_per_tensor(X, float(self.scale), int(self.zero_point), self.dtype)

    @staticmethod
    def from_float(mod):
        assert hasattr(mod, "activation_post_process")
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(scale.float().item(), zero_point.long().item(), mod.activation_post_process.dtype)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(Module):
    """Xq.dequantize()."""

    def forward(self, Xq):  # noqa: N803 (torch's argument name)
        return Xq.dequantize()

    @staticmethod
    def from_float(mod):
        return DeQuantize()
