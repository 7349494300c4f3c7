"""Helpers shared by the distributions: parameter broadcasting, the probs <-> logits
conversions, clamping probabilities away from 0 and 1, and lazy_property (a parameter
computed from another on first use, as torch.distributions.utils has them); also, private
to this package, the parametrisations several families share (probs or logits; loc and
scale), the copying of parameters that expand() methods share, and the log multivariate
gamma function (Wishart, LKJCholesky)."""
import math
from functools import update_wrapper
from numbers import Number

import tessera

from . import constraints

__all__ = ["broadcast_all", "clamp_probs", "euler_constant", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def _is_tensor(value):
    return isinstance(value, tessera.Tensor)


def broadcast_all(*values):
    """Broadcasts numbers and tensors to one shape. Numbers become tensors of the first
    tensor argument's dtype (the default dtype when there is none)."""
    if not all(_is_tensor(v) or isinstance(v, Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if all(_is_tensor(v) for v in values):
        return tessera.broadcast_tensors(*values)
    like = next((v for v in values if _is_tensor(v)), None)
    options = ({"dtype": tessera.get_default_dtype()} if like is None
               else {"dtype": like.dtype, "device": like.device})
    return tessera.broadcast_tensors(*[v if _is_tensor(v) else tessera.tensor(v, **options) for v in values])


def _probs_or_logits(probs, logits):
    """("probs", probs) or ("logits", logits): exactly one of the two must be given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return ("probs", probs) if probs is not None else ("logits", logits)


def _expand_params(old, new, shape, names):
    """Sets on `new` each of `names` that `old` holds, expanded to `shape`. A name may hold a
    tensor or an inner distribution: both have .expand(shape). One that `old` does not hold
    (the logits of a distribution built from probs, never asked for) is left for `new` to
    derive lazily too. `_param`, where kept, follows the parameter given at construction."""
    for name in names:
        if name in old.__dict__:
            setattr(new, name, old.__dict__[name].expand(shape))
    if "_param" in old.__dict__:
        new._param = new.probs if "probs" in old.__dict__ else new.logits


def _enumerate_values(values, batch_shape, expand):
    """The support `values` (1-D) along a new leading dimension, as enumerate_support returns
    it: the batch dimensions are singletons, or `values` is broadcast over them if `expand`."""
    values = values.view((-1,) + (1,) * len(batch_shape))
    return values.expand((-1,) + batch_shape) if expand else values


def _standard_normal(shape, dtype, device):
    return tessera.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sums the `dim` rightmost dimensions of `value` (none when dim is 0)."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:value.dim() - dim] + (-1,)).sum(-1)


def _mvlgamma(x, p):
    """The log of the multivariate gamma function of dimension p, elementwise:
    p (p - 1) / 4 log(pi) + sum over i < p of lgamma(x - i / 2) (as torch.mvlgamma; tessera
    has no operator for it). Like torch 1.13's, it does not check x > (p - 1) / 2."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    # the half-integer shifts -(p - 1) / 2, ..., -1/2, 0, in the order torch sums them
    shifts = tessera.arange(-(p - 1) / 2, 0.5, 0.5, dtype=x.dtype, device=x.device)
    return tessera.lgamma(x.unsqueeze(-1) + shifts).sum(-1) + p * (p - 1) * math.log(math.pi) / 4


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: a sigmoid for binary events, else a softmax over the last dim."""
    if is_binary:
        return tessera.sigmoid(logits)
    return tessera.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Keeps probabilities inside [eps, 1 - eps] so that their logs stay finite."""
    eps = tessera.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (clamped first): log-odds for binary events, else log-probs."""
    clamped = clamp_probs(probs)
    if is_binary:
        return tessera.log(clamped) - tessera.log1p(-clamped)
    return tessera.log(clamped)


class lazy_property:
    """A property computed on first access and then stored on the instance, so that a
    distribution built from `probs` derives `logits` only if asked (and the other way)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            # on the class it behaves as a property, which keeps help() and doc tools working
            return _lazy_property_and_property(self.wrapped)
        # grad mode on: a value cached under no_grad must still carry its graph later
        with tessera.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What lazy_property looks like when read from the class."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


class _ProbsOrLogits:
    """Mixin for a distribution given either `probs` or `logits` (exactly one). The one given
    is stored and used as it is; the other is derived from it only when first read.
    `_is_binary` says whether logits are the log-odds of one event (sigmoid) or unnormalised
    log-probabilities over the last dimension (softmax)."""
    _is_binary = True

    def _set_probs_or_logits(self, probs, logits, *others):
        """Broadcasts `others` (further parameters) and the given one of probs/logits, stores
        the latter under its name and returns (*others, param), all broadcast. The others
        come first, as in the constructors' broadcast_all calls: a number takes the dtype of
        the first tensor."""
        name, value = _probs_or_logits(probs, logits)
        *others, param = broadcast_all(*others, value)
        setattr(self, name, param)
        return (*others, param)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._is_binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._is_binary)


class _ProbsOrLogitsParam(_ProbsOrLogits):
    """_ProbsOrLogits that also keeps the given tensor as `_param`, which fixes param_shape
    and the dtype and device of _new() whichever of the two was given. (Geometric, like
    torch's, keeps no `_param` and so has neither.)"""

    def _set_probs_or_logits(self, probs, logits, *others):
        broadcast = super()._set_probs_or_logits(probs, logits, *others)
        self._param = broadcast[-1]
        return broadcast

    @property
    def param_shape(self):
        return self._param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)


class _LocationScale:
    """Mixin for a real-valued family shifted by `loc` and stretched by `scale`, about which
    it is symmetric and unimodal (Normal, Laplace, Cauchy): the constructor, which
    broadcasts the two together, the constraints, and the mode, loc."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    @property
    def mode(self):
        return self.loc


def _tril_mask(n, diag, device):
    rows = tessera.arange(n, device=device)
    return rows < rows.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The entries of `mat` on and below diagonal `diag`, row by row, as a vector."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: a square matrix, zero above diagonal `diag`."""
    # solve n(n+1)/2 + n*diag (adjusted for negative diag) = len(vec) for the side n
    k = 1 + 2 * diag
    n = (-k + (k * k + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > tessera.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
