"""tessera.utils.dlpack: torch.utils.dlpack's to_dlpack / from_dlpack."""
from .._interop import from_dlpack  # noqa: F401


def to_dlpack(tensor):
    """A DLPack capsule sharing the tensor's memory (consumed once by a from_dlpack)."""
    return tensor.__dlpack__()
