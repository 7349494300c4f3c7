"""tessera.ao.quantization: the modules model code builds before it is quantized.
QuantStub, DeQuantStub and QuantWrapper mark where a model's quantized region starts and
ends; in float mode (before convert) they pass tensors through unchanged, as torch's do,
so models written for the eager quantization workflow (torchvision's quantizable ones)
build and run in float.

Quantized tensors, observers, prepare and convert belong to the quantized backend, which
tessera does not have yet: those names are absent.
"""
from .stubs import DeQuantStub, QuantStub, QuantWrapper  # noqa: F401

__all__ = ["DeQuantStub", "QuantStub", "QuantWrapper"]
