"""tessera.nn.qat: torch.nn.qat's older name for tessera.ao.nn.qat (the same
quantization-aware-training modules)."""
from ...ao.nn.qat import Conv1d, Conv2d, Conv3d, Embedding, EmbeddingBag, Linear

__all__ = ["Linear", "Conv1d", "Conv2d", "Conv3d", "Embedding", "EmbeddingBag"]
