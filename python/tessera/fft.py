"""tessera.fft: torch.fft's functions. Each is the generated binding of an aten fft_*
operator (ops.yaml entries with ``python_module: fft``), named as torch names it:
``tessera.fft.rfft`` is ``aten::fft_rfft``. They are composites over three transform
kernels (_fft_c2c, _fft_r2c, _fft_c2r: aten/native/spectral/) on tessera's own mixed-radix
and Bluestein plans, differentiable through those kernels' formulas; float32/float64 and
their complex types (integers promote to the default dtype).
"""
from ._C import _fft

_NAMES = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn",
    "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]
for _name in _NAMES:
    globals()[_name] = getattr(_fft, "fft_" + _name)
del _name

__all__ = list(_NAMES)
