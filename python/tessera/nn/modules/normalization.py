"""LayerNorm and GroupNorm: normalisation over trailing dims or channel groups, with
torch.nn's optional elementwise affine parameters (ones/zeros at start) and printed form;
LocalResponseNorm and the legacy CrossMapLRN2d over neighbouring channels."""
import numbers

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm"]


class LayerNorm(Module):
    """Normalises over the last len(normalized_shape) dims. bias=False (current torch)
    keeps the weight and drops the bias."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(_C.empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(_C.empty(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Splits the C channels of [N, C, *] into num_groups groups and normalises each."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if self.affine:
            self.weight = Parameter(_C.empty(num_channels, device=device, dtype=dtype))
            self.bias = Parameter(_C.empty(num_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class LocalResponseNorm(Module):
    """Divides each element by (k + alpha * mean square over `size` neighbouring channels) ** beta."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _cross_map_window(channels, size):
    """rows[c][j]: how many times channel j's square is in channel c's sum, as torch's
    CrossMapLRN2d (a port of Lua Torch's) accumulates it: a running sum that adds channel
    c + pre_pad - 1 and, past the first pre_pad channels, drops channel c - pre_pad. That
    window is not centred, and channel 0 never leaves it; the numbers follow torch's."""
    pre_pad = int((size - 1) / 2 + 1)
    counts = [0] * channels
    for j in range(min(pre_pad, channels)):
        counts[j] += 1
    rows = [list(counts)]
    for c in range(1, channels):
        if c < channels - pre_pad + 1:
            counts[c + pre_pad - 1] += 1
        if c > pre_pad:
            counts[c - pre_pad] -= 1
        rows.append(list(counts))
    return rows


class CrossMapLRN2d(Module):
    """Lua Torch's cross-channel LRN on [N, C, H, W] input: x * (k + alpha / size * S) ** -beta,
    S summing squares over torch's channel window (see _cross_map_window). Built from
    tensor ops, so its gradient is the exact derivative of this forward."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        if input.dim() != 4:
            raise AssertionError()  # torch's forward asserts this, with no message
        n, c, h, w = input.shape
        window = _C.tensor(_cross_map_window(c, self.size), dtype=input.dtype, device=input.device)
        squares = (input * input).reshape(n, c, h * w)
        scale = window.matmul(squares).reshape(n, c, h, w) * (self.alpha / self.size) + self.k
        return scale.pow(-self.beta) * input

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
