"""The error classes of tessera.onnx, as torch.onnx.errors defines them."""

__all__ = ["OnnxExporterError", "CheckerError", "UnsupportedOperatorError", "SymbolicValueError"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


class CheckerError(OnnxExporterError):
    """Raised when the checker rejects an exported graph."""


class UnsupportedOperatorError(OnnxExporterError):
    """Raised when an operator has no ONNX symbolic."""


class SymbolicValueError(OnnxExporterError):
    """Raised when a symbolic function meets a value it cannot convert."""
