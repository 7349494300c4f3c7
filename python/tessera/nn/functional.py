"""tessera.nn.functional: torch.nn.functional's operators with torch's signatures and
defaults. Most are the generated bindings of aten operators (tessera._C._nn holds the
ones torch keeps in torch._C._nn); the rest are the few lines of Python torch writes
too (inplace= flags, softsign, tanhshrink)."""
import warnings

import tessera as _t
from tessera._C import _nn

# ---------------------------------------------------------------- activations
# Bound as they are, as torch binds them: gelu(input, *, approximate='none'),
# softplus(input, beta=1, threshold=20), softshrink/hardshrink(input, lambd=0.5),
# prelu(input, weight), threshold_(input, threshold, value), and the in-place forms.
gelu = _nn.gelu
softplus = _nn.softplus
softshrink = _nn.softshrink
hardshrink = _t.hardshrink
logsigmoid = _nn.log_sigmoid
prelu = _t.prelu
elu_ = _nn.elu_
leaky_relu_ = _nn.leaky_relu_
hardtanh_ = _nn.hardtanh_
relu_ = _t.relu_
threshold_ = _t.threshold_
celu_ = _t.celu_
selu_ = _t.selu_
sigmoid = _t.sigmoid
tanh = _t.tanh


def relu(input, inplace=False):
    return _t.relu_(input) if inplace else _t.relu(input)


def relu6(input, inplace=False):
    return _nn.relu6_(input) if inplace else _nn.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    return _nn.elu_(input, alpha) if inplace else _nn.elu(input, alpha)


def selu(input, inplace=False):
    return _t.selu_(input) if inplace else _t.selu(input)


def celu(input, alpha=1.0, inplace=False):
    return _t.celu_(input, alpha) if inplace else _t.celu(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _nn.leaky_relu_(input, negative_slope) if inplace else _nn.leaky_relu(input, negative_slope)


def silu(input, inplace=False):
    return _nn.silu_(input) if inplace else _nn.silu(input)


def mish(input, inplace=False):
    return _nn.mish_(input) if inplace else _nn.mish(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _nn.hardtanh_(input, min_val, max_val) if inplace else _nn.hardtanh(input, min_val, max_val)


def hardsigmoid(input, inplace=False):
    return _nn.hardsigmoid_(input) if inplace else _nn.hardsigmoid(input)


def hardswish(input, inplace=False):
    return _nn.hardswish_(input) if inplace else _nn.hardswish(input)


def threshold(input, threshold, value, inplace=False):
    return _t.threshold_(input, threshold, value) if inplace else _t.threshold(input, threshold, value)


def glu(input, dim=-1):
    return _nn.glu(input, dim)


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


# ---------------------------------------------------------------- softmax family

def _implicit_softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim("softmax", input.dim())
    return input.softmax(dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim("softmin", input.dim())
    return (-input).softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim("log_softmax", input.dim())
    return input.log_softmax(dim, dtype=dtype)
