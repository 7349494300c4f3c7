"""Ready-made parametrizations, as torch.nn.utils.parametrizations: spectral_norm
(the weight divided by its largest singular value, estimated by power iteration) and
orthogonal (the weight kept orthogonal/unitary). Both register through parametrize."""
from enum import Enum, auto

import tessera as _t
from ...autograd.grad_mode import no_grad
from .. import functional as F  # noqa: F401 (torch's module namespace has it)
from ..modules.module import Module
from . import parametrize

Tensor = _t.Tensor

__all__ = ["orthogonal", "spectral_norm"]


def _normalize(x, eps):
    # torch.nn.functional.normalize(x, dim=0, eps=eps) for a vector x
    return x / x.norm(2).clamp_min(eps)


# ------------------------------------------------------------------ orthogonal


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _linalg_op(name):
    # The operators orthogonal needs, looked up where torch keeps them; None when tessera
    # does not have them yet.
    if name in ("householder_product", "solve", "matrix_exp"):
        found = getattr(_t.linalg, name, None)
        if found is not None:
            return found
    return getattr(_t, name, None)


def _require_linalg(orthogonal_map):
    # right_inverse (run when registering) factors the weight with geqrf and
    # householder_product; the forward map needs its own operator.
    needed = ["geqrf", "householder_product"]
    needed += {"matrix_exp": ["matrix_exp"], "cayley": ["solve"], "householder": []}[orthogonal_map]
    missing = [n for n in needed if _linalg_op(n) is None]
    if missing:
        names = ", ".join(("tessera.linalg." if n in ("householder_product", "solve") else "tessera.") + n
                          for n in missing)
        raise NotImplementedError(f"orthogonal(orthogonal_map='{orthogonal_map}') needs {names}, which tessera "
                                  "does not implement yet")


def _make_orthogonal(A):
    X, tau = _linalg_op("geqrf")(A)
    Q = _linalg_op("householder_product")(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    eye = _t.eye(k, dtype=Q.dtype, device=Q.device)
    return _t.allclose(Q.mH @ Q, eye, atol=10.0 * n * _t.finfo(Q.dtype).eps)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = _t.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _linalg_op("matrix_exp")(A)
            else:
                eye = _t.eye(n, dtype=A.dtype, device=A.device)
                Q = _linalg_op("solve")(_t.add(eye, A, alpha=-0.5), _t.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _linalg_op("householder_product")(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape "
                                 f"{parametrize._torch_str(self.shape)}. "
                                 f"Got a tensor of shape {parametrize._torch_str(Q.shape)}.")
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q, n, k = Q.mT, k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                              "or the Cayley parametrizations when use_trivialization=False.")
                A, tau = _linalg_op("geqrf")(Q)
                A.diagonal(dim1=-2, dim2=-1).sign_()
                A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                extra = _t.randn(*(tuple(Q.size()[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(_t.cat([Q, extra], dim=-1))
            self.base = Q
            neg_eye = _t.zeros_like(Q_init)
            neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keeps ``module.<name>`` (a matrix or batch of matrices) orthogonal, or unitary when
    complex, through ``orthogonal_map``: "matrix_exp", "cayley" or "householder" (default:
    matrix_exp for square or complex matrices, householder otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    _require_linalg(orthogonal_map)
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ------------------------------------------------------------------ spectral_norm


class _SpectralNorm(Module):
    """weight / sigma, sigma the largest singular value of the weight seen as a matrix
    (rows along ``dim``), estimated with the vectors ``_u`` and ``_v`` that each training
    forward refines by ``n_power_iterations`` steps of power iteration."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # A 1-D weight is only normalized: no singular vectors to keep.
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", _normalize(u, self.eps))
            self.register_buffer("_v", _normalize(v, self.eps))
            # Start from good estimates: 15 iterations now.
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # In place: u and v are buffers whose values carry over between calls.
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(_normalize(_t.mv(weight_mat, self._v), self.eps))
                self._v.copy_(_normalize(_t.mv(weight_mat.t(), self._u), self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return weight / weight.norm(2).clamp_min(self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # Clones: backward must see the u, v this forward used, not later updates.
        u = self._u.clone(memory_format=_t.contiguous_format)
        v = self._v.clone(memory_format=_t.contiguous_format)
        sigma = _t.dot(u, _t.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        # Any weight is accepted as the original; its norm is fixed on the way out.
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Registers the spectral normalization of ``module.<name>`` as a parametrization
    (``module.parametrizations.<name>.original`` holds the unnormalized tensor). ``dim``
    defaults to 1 for transposed convolutions and 0 otherwise."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _is_conv_transpose(module):
    from .. import modules
    kinds = tuple(getattr(modules, n) for n in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
                  if hasattr(modules, n))
    return isinstance(module, kinds)
