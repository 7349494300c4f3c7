"""Dropout for quantized models (torch.ao.nn.quantized.Dropout): what convert() puts where a
float Dropout stood, so a model trained with dropout runs on quantized tensors; it passes
its input through in train and eval mode alike."""
from ....nn.modules.dropout import Dropout as FloatDropout

__all__ = ["Dropout"]


class Dropout(FloatDropout):
    """The identity on quantized tensors, keeping p and inplace."""

    def forward(self, input):
        return input

    def _get_name(self):
        return "QuantizedDropout"

    @classmethod
    def from_float(cls, mod):
        return cls(mod.p, mod.inplace)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(mod.p, mod.inplace)
