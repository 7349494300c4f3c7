"""tessera.cpu.amp (torch.cpu.amp): autocast and GradScaler with the device fixed to "cpu"."""
from .autocast_mode import autocast  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "GradScaler"]
