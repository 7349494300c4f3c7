"""tessera.optim: torch.optim's optimizers, whose updates run as multi-tensor C++
operators (_foreach_*, _fused_adam_), and its learning-rate schedulers."""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]

# -- more optimizers
# -- lr_scheduler
