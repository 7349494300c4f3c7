"""tessera.nn.init: weight initialisation as torch.nn.init (gains, fans, uniform/normal,
Xavier, Kaiming, truncated normal, orthogonal, sparse, eye and dirac). Every function
fills its tensor in place without recording autograd history and returns it."""
import math
import warnings

import tessera as _t
from .. import _C
from ..autograd.grad_mode import no_grad

Tensor = _C.Tensor  # re-exported, as torch.nn.init has it

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
    "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_",
]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """The recommended scale for weights feeding ``nonlinearity`` (an nn.functional name);
    ``param`` is leaky_relu's negative slope (0.01 when omitted)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, float) or (isinstance(param, int) and not isinstance(param, bool)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        # torch's empirical choice (pytorch#50664); self-normalising nets want 'linear' instead.
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    # Dims 0 and 1 are (out, in) channels; every later dim is part of each unit's receptive field.
    receptive = math.prod(tensor.shape[2:])
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills ``tensor`` from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills ``tensor`` from N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills ``tensor`` from N(mean, std^2) restricted to [a, b], by inverting the normal
    CDF on uniform draws between CDF(a) and CDF(b); accurate when a <= mean <= b."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)

    def std_normal_cdf(z):
        return (1.0 + math.erf(z / math.sqrt(2.0))) / 2.0

    lo = std_normal_cdf((a - mean) / std)
    hi = std_normal_cdf((b - mean) / std)
    with no_grad():
        # Phi^-1(p) = sqrt(2) * erfinv(2p - 1), so draw 2p - 1 directly.
        tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        # Rounding in erfinv can step just past the bounds.
        tensor.clamp_(min=a, max=b)
        return tensor


def constant_(tensor, val):
    """Fills ``tensor`` with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fills ``tensor`` with 1."""
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    """Fills ``tensor`` with 0."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fills a 2-D ``tensor`` with the identity (as many inputs kept as the shape allows)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        _t.eye(*tensor.shape, out=tensor)
    return tensor


def dirac_(tensor, groups=1):
    """Fills a 3-, 4- or 5-D convolution weight with a centred delta per channel, so the
    convolution passes its first min(out/groups, in) channels through in every group."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    kept = min(out_per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        if kept > 0 and groups > 0:
            # One advanced-indexing write for every (group, channel) pair at the kernel centre.
            channel = _t.arange(kept).expand(groups, kept)
            out_channel = channel + _t.arange(groups).unsqueeze(1) * out_per_group
            centre = tuple(s // 2 for s in sizes[2:])
            tensor[(out_channel, channel) + centre] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan); ``a`` is the
    leaky_relu slope used for the gain."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std^2) with std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def _householder_qr(a):
    """Reduced QR of a tall (m >= n) matrix from n Householder reflections, in tensor ops:
    tessera has no linalg.qr yet. Each step is whole-matrix work, so the Python loop runs
    over columns, never over elements."""
    m, n = a.shape
    r = a.clone()
    q = _t.eye(m, dtype=a.dtype)
    tiny = _t.finfo(a.dtype).tiny
    for k in range(n):
        x = r[k:, k]
        # Reflect x onto -sign(x0) * |x| e1: adding rather than cancelling keeps v well scaled.
        sign = 1.0 if float(x[0]) >= 0 else -1.0
        v = x.clone()
        v[0] = x[0] + sign * _t.linalg.vector_norm(x)
        # An all-zero column leaves v = 0; the clamp keeps it 0 instead of 0/0.
        v = v / _t.linalg.vector_norm(v).clamp(min=tiny)
        r[k:, k:] -= 2 * _t.outer(v, v.matmul(r[k:, k:]))
        q[:, k:] -= 2 * _t.outer(q[:, k:].matmul(v), v)
    return q[:, :n], r[:n, :]


def _qr(a):
    qr = getattr(_t.linalg, "qr", None)
    return qr(a) if qr is not None else _householder_qr(a)


def orthogonal_(tensor, gain=1, generator=None):
    """Fills ``tensor`` (2-D or more, trailing dims flattened) with a (semi-)orthogonal
    matrix: the Q of a Gaussian matrix, made Haar-distributed by fixing R's diagonal signs."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with no_grad():
        gaussian = _t.empty(rows, cols, dtype=tensor.dtype, device=tensor.device).normal_(0, 1, generator=generator)
        wide = rows < cols
        if wide:
            gaussian = gaussian.t()
        # The reflections lose accuracy in reduced precision; factor in float64 and cast back.
        q, r = _qr(gaussian.to(_t.float64))
        q = q * _t.diagonal(r).sign()
        if wide:
            q = q.t()
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fills a 2-D ``tensor`` from N(0, std^2), then zeroes ceil(sparsity * rows) randomly
    chosen entries in every column."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        if num_zeros > 0 and cols > 0:
            # Sorting independent uniforms gives an independent random permutation per column.
            perms = _t.rand(rows, cols, generator=generator).argsort(dim=0)
            tensor.scatter_(0, perms[:num_zeros], 0.0)
    return tensor


def _deprecated(fn):
    old = fn.__name__[:-1]

    def alias(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{fn.__name__}`.", FutureWarning,
                      stacklevel=2)
        return fn(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"Deprecated alias of :func:`{fn.__name__}`."
    return alias


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
