"""Randomized low-rank SVD and PCA: torch.svd_lowrank and torch.pca_lowrank.

Both follow Halko, Martinsson and Tropp (2009), "Finding structure with randomness":
a Gaussian sketch of A's range sharpened by `niter` power iterations (each re-orthonormalized
by QR), then the exact SVD of the small projected matrix. They are compositions of tessera
ops (matmul, linalg.qr, linalg.svd), so they differentiate and batch through those ops.
As current PyTorch does, the sketch is always of A's column space (torch 1.13 sketched A's
transpose for most shapes); the results agree up to the randomness of the sketch.
"""
from . import _C, linalg

__all__ = ["svd_lowrank", "pca_lowrank"]


def _range_basis(A, q, niter, M):
    """An orthonormal (*, m, q) basis close to the range of A - M (M None: of A)."""
    A_H = A.mH
    M_H = None if M is None else M.mH

    def times(X):  # (A - M) @ X without forming A - M
        return A @ X if M is None else A @ X - M @ X

    def times_H(X):  # (A - M)^H @ X
        return A_H @ X if M is None else A_H @ X - M_H @ X

    Q = linalg.qr(times(_C.randn(A.shape[-1], q, dtype=A.dtype, device=A.device))).Q
    for _ in range(niter):
        Q = linalg.qr(times_H(Q)).Q
        Q = linalg.qr(times(Q)).Q
    return Q


def _check_input(A, name):
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"{name}: expected a floating point or complex tensor as input, got {A.dtype}")
    if A.dim() < 2:
        raise RuntimeError(f"{name}: expected a tensor of at least 2 dimensions (*, m, n), got {A.dim()}")


def svd_lowrank(A, q=6, niter=2, M=None):
    """An approximate truncated SVD ``A - M ~= U diag(S) V^H`` of the (*, m, n) matrix A:
    U (*, m, q), S (*, q), V (*, n, q), by a randomized range finder with `niter` power
    iterations (q: a slight overestimate of A's rank; M: an optional mean broadcast to A)."""
    _check_input(A, "svd_lowrank")
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if M is not None:
        M = M.broadcast_to(A.shape)
    Q = _range_basis(A, q, niter, M)
    Q_H = Q.mH
    small = Q_H @ A if M is None else Q_H @ A - Q_H @ M
    U, S, Vh = linalg.svd(small, full_matrices=False)
    return Q @ U, S, Vh.mH


def pca_lowrank(A, q=None, center=True, niter=2):
    """Principal components of the (*, m, n) data A (rows are samples), as svd_lowrank of A
    with its column means removed when `center`: returns U, S, V with q = min(6, m, n) by
    default. The principal directions are V's columns; S**2 / (m - 1) are the variances."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    _check_input(A, "pca_lowrank")
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    return svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter, M=None)
