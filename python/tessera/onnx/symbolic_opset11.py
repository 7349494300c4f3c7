"""tessera.onnx.symbolic_opset11: the opset-11 symbolic functions that libraries import to
build their own (torchvision does at import). Building export-graph nodes needs the
exporter, which tessera does not have yet: calling one raises NotImplementedError."""
from ._symbolic import define

__all__ = ["select", "squeeze", "unsqueeze", "cat", "index_put", "clamp"]

define(globals(), "symbolic_opset11", __all__)
