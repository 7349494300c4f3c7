"""FloatFunctional, FXFloatFunctional and QFunctional, as torch.ao.nn.quantized.modules.functional_modules:
modules whose methods are tensor operations (forward is refused), so an eager
quantization workflow can attach an observer to each operation site, and their quantized
counterpart."""
from .... import _C
from ....ops import ops
from ....nn import functional as F
from ....nn.modules.linear import Identity
from ....nn.modules.module import Module

__all__ = ["FloatFunctional", "FXFloatFunctional", "QFunctional"]


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


class QFunctional(Module):
    """The quantized operators as module methods, into this module's (scale, zero_point):
    what convert() puts where a FloatFunctional stood. The scalar forms move the qparams
    themselves and are not observed."""

    def __init__(self):
        super().__init__()
        self.scale = 1.0
        self.zero_point = 0
        self.activation_post_process = Identity()

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = _C.tensor(self.scale)
        destination[prefix + "zero_point"] = _C.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def _get_name(self):
        return "QFunctional"

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, x):
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the underlying operation")

    def add(self, x, y):
        return self.activation_post_process(ops.quantized.add(x, y, scale=self.scale, zero_point=self.zero_point))

    def add_scalar(self, x, y):
        return ops.quantized.add_scalar(x, y)

    def mul(self, x, y):
        return self.activation_post_process(ops.quantized.mul(x, y, scale=self.scale, zero_point=self.zero_point))

    def mul_scalar(self, x, y):
        return ops.quantized.mul_scalar(x, y)

    def cat(self, x, dim=0):
        return self.activation_post_process(ops.quantized.cat(x, scale=self.scale, zero_point=self.zero_point,
                                                              dim=dim))

    def add_relu(self, x, y):
        return self.activation_post_process(ops.quantized.add_relu(x, y, scale=self.scale,
                                                                   zero_point=self.zero_point))

    @classmethod
    def from_float(cls, mod):
        assert type(mod) == FloatFunctional, "QFunctional.from_float expects an instance of FloatFunctional"
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        new_mod = QFunctional()
        new_mod.scale = float(scale)
        new_mod.zero_point = int(zero_point)
        return new_mod
