"""tessera.onnx.symbolic_opset9: the opset-9 symbolic functions that libraries import to
build their own (torchvision does at import). Building export-graph nodes needs the
exporter, which tessera does not have yet: calling one raises NotImplementedError."""
from ._symbolic import define

__all__ = ["_cast_Long", "_cast_Float", "_cast_Int", "add", "mul", "select", "squeeze", "unsqueeze", "reshape", "transpose", "cat", "relu"]

define(globals(), "symbolic_opset9", __all__)
