"""QuantStub, DeQuantStub and QuantWrapper, as torch.ao.quantization.stubs defines them:
placeholders that convert() would replace by quantize / dequantize modules; until then
they are identities."""
from ...nn.modules.module import Module

__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper"]


class _Stub(Module):
    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantStub(_Stub):
    """Where float tensors would become quantized; the identity before convert()."""


class DeQuantStub(_Stub):
    """Where quantized tensors would become float again; the identity before convert()."""


class QuantWrapper(Module):
    """``module`` between a QuantStub and a DeQuantStub (with the module's qconfig)."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X):  # noqa: N803 (torch's argument name)
        return self.dequant(self.module(self.quant(X)))
