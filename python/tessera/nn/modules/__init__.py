"""tessera.nn's module classes, one file per family, as torch.nn.modules."""
from .module import Module  # noqa: F401

__all__ = ["Module"]

# -- layers (linear, conv, pooling, normalization, dropout, sparse, flatten, upsampling, container)
# -- activations and losses
# -- attention, transformer, rnn
