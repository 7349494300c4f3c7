"""tessera.ao.nn.qat: the modules of torch.ao.nn.qat that quantization-aware training swaps in
for float ones (prepare_qat): Linear, Conv1d/2d/3d, Embedding and EmbeddingBag, whose weights
pass through a fake quantizer. The dynamic QAT Linear (torch.ao.nn.qat.dynamic) is not there."""
from .conv import Conv1d, Conv2d, Conv3d  # noqa: F401
from .embedding_ops import Embedding, EmbeddingBag  # noqa: F401
from .linear import Linear  # noqa: F401

__all__ = ["Linear", "Conv1d", "Conv2d", "Conv3d", "Embedding", "EmbeddingBag"]
