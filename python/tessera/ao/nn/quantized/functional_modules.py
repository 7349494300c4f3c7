"""FloatFunctional and FXFloatFunctional, as torch.ao.nn.quantized.modules.functional_modules:
modules whose methods are tensor operations (forward is refused), so an eager
quantization workflow can attach an observer to each operation site."""
from .... import _C
from ....nn import functional as F
from ....nn.modules.linear import Identity
from ....nn.modules.module import Module

__all__ = ["FloatFunctional", "FXFloatFunctional"]


class FloatFunctional(Module):
    """Tensor operations as module methods; each result passes activation_post_process
    (an Identity until an observer is attached), except the scalar forms'."""

    def __init__(self):
        super().__init__()
        self.activation_post_process = Identity()

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying operation")

    def add(self, x, y):
        return self.activation_post_process(_C.add(x, y))

    def add_scalar(self, x, y):
        return _C.add(x, y)

    def mul(self, x, y):
        return self.activation_post_process(_C.mul(x, y))

    def mul_scalar(self, x, y):
        return _C.mul(x, y)

    def cat(self, x, dim=0):
        return self.activation_post_process(_C.cat(x, dim=dim))

    def add_relu(self, x, y):
        return self.activation_post_process(F.relu(_C.add(x, y)))


class FXFloatFunctional(Module):
    """FloatFunctional for FX graph-mode quantization: the operations without an observer."""

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying operation")

    def add(self, x, y):
        return _C.add(x, y)

    def add_scalar(self, x, y):
        return _C.add(x, y)

    def mul(self, x, y):
        return _C.mul(x, y)

    def mul_scalar(self, x, y):
        return _C.mul(x, y)

    def cat(self, x, dim=0):
        return _C.cat(x, dim=dim)

    def add_relu(self, x, y):
        return F.relu(_C.add(x, y))
