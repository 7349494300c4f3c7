"""Ready-made parametrizations with the interface of torch.nn.utils.parametrizations:
spectral_norm (a weight divided by an estimate of its largest singular value, refined by
power iteration) and orthogonal (a weight kept orthogonal, or unitary). Both go through
parametrize.register_parametrization."""
from enum import Enum, auto

import tessera as _t
from ...autograd.grad_mode import no_grad
from .. import functional as F  # noqa: F401 (part of torch's module namespace)
from ..modules.module import Module
from . import parametrize

Tensor = _t.Tensor

__all__ = ["orthogonal", "spectral_norm"]


def _unit(vec, eps):
    # vec / max(||vec||, eps): functional.normalize of one vector
    return vec / vec.norm(2).clamp_min(eps)


def _tensor_of(module, name):
    found = getattr(module, name, None)
    if isinstance(found, Tensor):
        return found
    raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")


# ---------------------------------------------------------------- orthogonal

class _Map(Enum):
    # the ways of producing an orthogonal matrix from an unconstrained one
    householder = auto()
    matrix_exp = auto()
    cayley = auto()


_LINALG_NAMES = {"householder_product", "solve", "matrix_exp"}


def _op(name):
    """The operator ``name`` from tessera.linalg (where torch keeps some of them) or
    tessera; None while tessera lacks it."""
    if name in _LINALG_NAMES and getattr(_t.linalg, name, None) is not None:
        return getattr(_t.linalg, name)
    return getattr(_t, name, None)


def _ensure_ops(map_name):
    # Registering runs right_inverse, which needs geqrf and householder_product; each map's
    # forward needs its own operator on top.
    extra = {"householder": (), "matrix_exp": ("matrix_exp",), "cayley": ("solve",)}[map_name]
    absent = [op for op in ("geqrf", "householder_product") + extra if _op(op) is None]
    if absent:
        where = ", ".join(f"tessera.linalg.{op}" if op in ("householder_product", "solve") else f"tessera.{op}"
                          for op in absent)
        raise NotImplementedError(f"orthogonal(orthogonal_map='{map_name}') needs {where}, which tessera "
                                  "does not implement yet")


def _diag(M):
    return M.diagonal(dim1=-2, dim2=-1)


def _q_of(M):
    # Q from the QR factorization of M, columns signed so that R has a positive diagonal
    reflectors, tau = _op("geqrf")(M)
    return _op("householder_product")(reflectors, tau) * _diag(reflectors).sgn().unsqueeze(-2)


def _close_to_orthogonal(Q):
    rows, cols = Q.shape[-2], Q.shape[-1]
    gram = Q.mH @ Q
    return _t.allclose(gram, _t.eye(cols, dtype=Q.dtype, device=Q.device),
                       atol=10.0 * rows * _t.finfo(Q.dtype).eps)


class _Orthogonal(Module):
    """Maps any (batch of) matrix to an orthogonal one through ``orthogonal_map``; with the
    trivialization, the result is multiplied by the stored orthogonal ``base``."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if orthogonal_map == _Map.householder and weight.is_complex():
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.orthogonal_map = orthogonal_map
        self.shape = weight.shape
        if use_trivialization:
            self.register_buffer("base", None)

    def _tall(self, X):
        # work on matrices with at least as many rows as columns
        wide = X.shape[-2] < X.shape[-1]
        return (X.mT if wide else X), wide

    def _skew_map(self, X):
        rows, cols = X.shape[-2], X.shape[-1]
        low = X.tril()
        if rows > cols:
            pad = low.new_zeros(rows, rows - cols).expand(*low.shape[:-2], -1, -1)
            low = _t.cat([low, pad], dim=-1)
        skew = low - low.mH
        if self.orthogonal_map == _Map.matrix_exp:
            out = _op("matrix_exp")(skew)
        else:
            ident = _t.eye(rows, dtype=skew.dtype, device=skew.device)
            out = _op("solve")(_t.add(ident, skew, alpha=-0.5), _t.add(ident, skew, alpha=0.5))
        return out[..., :cols] if rows > cols else out

    def _householder_map(self, X):
        below = X.tril(diagonal=-1)
        tau = 2.0 / (1.0 + (below * below).sum(dim=-2))
        return _op("householder_product")(below, tau) * _diag(X).int().unsqueeze(-2)

    def forward(self, X):
        X, wide = self._tall(X)
        Q = self._householder_map(X) if self.orthogonal_map == _Map.householder else self._skew_map(X)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if wide else Q

    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape "
                             f"{parametrize._tstr(self.shape)}. "
                             f"Got a tensor of shape {parametrize._tstr(Q.shape)}.")
        with no_grad():
            given = Q
            Q, wide = self._tall(Q)
            rows, cols = Q.shape[-2], Q.shape[-1]
            if not hasattr(self, "base"):
                if self.orthogonal_map != _Map.householder:
                    raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                              "or the Cayley parametrizations when use_trivialization=False.")
                factors, tau = _op("geqrf")(Q)
                _diag(factors).sign_()
                _diag(factors)[tau == 0.0] *= -1
                return factors.mT if wide else factors
            if rows != cols:
                fill = _t.randn(*Q.shape[:-2], rows, rows - cols, dtype=Q.dtype, device=Q.device)
                self.base = _q_of(_t.cat([Q, fill], dim=-1))
            elif _close_to_orthogonal(Q):
                self.base = Q.clone()
            else:
                self.base = _q_of(Q)
            # the unconstrained value whose image is the identity: minus the identity
            out = _t.zeros_like(given)
            _diag(out).fill_(-1.0)
            return out


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrains ``module.<name>`` (a matrix or a batch of them) to be orthogonal -- unitary
    if complex -- through ``orthogonal_map``: "matrix_exp", "cayley" or "householder"; by
    default matrix_exp for square or complex matrices and householder otherwise."""
    weight = _tensor_of(module, name)
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.is_complex() or weight.shape[-1] == weight.shape[-2]
                          else "householder")
    chosen = getattr(_Map, orthogonal_map, None)
    if not isinstance(chosen, _Map):
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    _ensure_ops(orthogonal_map)
    parametrize.register_parametrization(
        module, name, _Orthogonal(weight, chosen, use_trivialization=use_trivialization), unsafe=True)
    return module


# ---------------------------------------------------------------- spectral_norm

class _SpectralNorm(Module):
    """``weight / sigma``: sigma estimates the top singular value of the weight laid out as
    a matrix with ``dim`` as rows, from the buffers ``_u`` and ``_v``, which each forward in
    training mode improves by ``n_power_iterations`` power-iteration steps."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        rank = weight.ndim
        if not -rank <= dim < rank:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{rank}, {rank - 1}] but got {dim})")
        if n_power_iterations < 1:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.eps = eps
        self.dim = dim % rank
        if rank == 1:
            return  # a vector is just normalized: nothing to estimate
        self.n_power_iterations = n_power_iterations
        mat = self._matrix(weight)
        rows, cols = mat.shape
        start_u = mat.new_empty(rows).normal_(0, 1)
        start_v = mat.new_empty(cols).normal_(0, 1)
        self.register_buffer("_u", _unit(start_u, eps))
        self.register_buffer("_v", _unit(start_v, eps))
        self._iterate(mat, 15)  # begin from converged estimates

    def _matrix(self, weight):
        # ``dim`` first, the remaining dimensions flattened into columns
        if self.dim:
            order = [self.dim] + [d for d in range(weight.dim()) if d != self.dim]
            weight = weight.permute(*order)
        return weight.flatten(1)

    def _iterate(self, mat, steps):
        # updates the buffers in place, so the estimates carry over between calls
        with no_grad():
            for _ in range(steps):
                self._u.copy_(_unit(_t.mv(mat, self._v), self.eps))
                self._v.copy_(_unit(_t.mv(mat.t(), self._u), self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return _unit(weight, self.eps)
        mat = self._matrix(weight)
        if self.training:
            self._iterate(mat, self.n_power_iterations)
        # copies: autograd must keep the vectors of this call, not later in-place updates
        left = self._u.clone(memory_format=_t.contiguous_format)
        right = self._v.clone(memory_format=_t.contiguous_format)
        return weight / _t.dot(left, _t.mv(mat, right))

    def right_inverse(self, value):
        # every tensor is a valid original: the forward normalizes it
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalization of ``module.<name>`` as a parametrization (the unnormalized
    tensor is ``module.parametrizations.<name>.original``). ``dim`` is 1 for transposed
    convolutions and 0 otherwise unless given."""
    weight = _tensor_of(module, name)
    if dim is None:
        dim = int(_is_conv_transpose(module))
    normalizer = _SpectralNorm(weight, n_power_iterations, dim, eps)
    parametrize.register_parametrization(module, name, normalizer)
    return module


def _is_conv_transpose(module):
    from .. import modules
    kinds = [getattr(modules, f"ConvTranspose{k}d", None) for k in (1, 2, 3)]
    return isinstance(module, tuple(k for k in kinds if k is not None))
