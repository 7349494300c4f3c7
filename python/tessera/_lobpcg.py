"""torch.lobpcg: the k largest (or smallest) eigenpairs of the symmetric generalized
eigenproblem A x = lambda B x (B positive definite, identity by default) by LOBPCG, the
Locally Optimal Block Preconditioned Conjugate Gradient method (Knyazev 2001).

Each step makes a search basis S of the current Ritz vectors X, the (preconditioned)
residuals W and the previous step's direction P, and takes the best n vectors of span(S) by
Rayleigh-Ritz. method="basic" B-orthonormalizes S by a Cholesky factor of its Gram matrix
(fast, fails when S is nearly dependent); method="ortho" (the default) B-orthogonalizes
[W, P] against X and then by SVQB (Stathopoulos and Wu 2002), dropping dependent directions.

A with requires_grad differentiates through an eigenvector-perturbation backward (B
must then be None, and A real): the gradient of k eigenpairs, with the part of each
eigenvector's change outside span(U) found by one shifted linear solve per pair.
"""
from . import _C, autograd, linalg

__all__ = ["lobpcg"]

# torch's machine epsilons for the default tolerance, sqrt(eps)
_FEPS_FLOAT32, _FEPS_FLOAT64 = 1.2e-07, 2.23e-16


class LOBPCG:
    """One run of the iteration, in the shape a `tracker` sees (torch's attribute names):
    iparams / fparams / bparams (the inputs), ivars["istep"], ivars["converged_count"],
    tvars["rerr"] (each pair's relative residual), bvars["force_stop"] (a tracker may set it),
    A, B, iK, and the iterates E (Ritz values), X (Ritz vectors), S (the search basis) and R
    (residuals)."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        self.ivars = {"istep": 0, "converged_count": 0}
        self.fvars = {}
        self.bvars = {"force_stop": False}
        self.tvars = {}
        self.X, self.S, self.P = X, X, None
        self.E = self.R = None

    # ---- products
    def _times_B(self, V):
        return V if self.B is None else self.B @ V

    def _precondition(self, R):
        return R if self.iK is None else self.iK @ R

    # ---- B-orthonormal bases
    def _svqb(self, V, threshold):
        """A B-orthonormal basis of span(V) by the eigendecomposition of its scaled Gram
        matrix; directions whose eigenvalue is below threshold * the largest are dropped."""
        scale = self._column_norms_B(V)
        keep = scale > 0
        if not bool(keep.all()):
            V, scale = V[:, keep], scale[keep]
        if V.shape[-1] == 0:
            return V
        V = V / scale
        theta, Z = linalg.eigh(V.mT @ self._times_B(V))
        kept = theta > threshold * theta.max().clamp(min=0)
        return (V @ Z[:, kept]) / theta[kept].sqrt()

    def _nonzero_columns(self, V):
        """V without its zero columns (a converged pair's residual can vanish exactly)."""
        keep = self._column_norms_B(V) > 0
        return V if bool(keep.all()) else V[:, keep]

    def _column_norms_B(self, V):
        return (V * self._times_B(V)).sum(0).clamp(min=0).sqrt()

    def _orthogonalize_against_X(self, V):
        """V made B-orthogonal to X and B-orthonormal itself (ortho_i_max outer passes of
        projection, each followed by up to ortho_j_max SVQB passes until V^T B V is I
        within ortho_tol)."""
        ip, fp, bp = self.iparams, self.fparams, self.bparams
        threshold = fp["ortho_tol_drop"] if bp["ortho_use_drop"] else fp["ortho_tol_replace"]
        X, BX = self.X, self._times_B(self.X)
        for _ in range(ip["ortho_i_max"]):
            V = V - X @ (BX.mT @ V)
            for _ in range(ip["ortho_j_max"]):
                V = self._svqb(V, threshold)
                if V.shape[-1] == 0:
                    return V
                off_identity = V.mT @ self._times_B(V) - _C.eye(V.shape[-1], dtype=V.dtype)
                if float(off_identity.abs().max()) <= fp["ortho_tol"]:
                    break
            if float((BX.mT @ V).abs().max()) <= fp["ortho_tol"]:
                break
        return V

    # ---- Rayleigh-Ritz
    def _rayleigh_ritz(self, S):
        """The n best Ritz pairs of span(S): values E and coefficients C with X = S C."""
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.method == "basic":
            scale = self._column_norms_B(S)
            S = S / scale
            L = linalg.cholesky(S.mT @ self._times_B(S))
            projected = linalg.solve_triangular(L, linalg.solve_triangular(L, S.mT @ (self.A @ S), upper=False).mT,
                                                upper=False).mT
            theta, Z = linalg.eigh(projected)
            C = linalg.solve_triangular(L.mT, Z, upper=True) / scale.unsqueeze(-1)
        else:
            theta, C = linalg.eigh(S.mT @ (self.A @ S))
        order = _C.arange(theta.shape[-1] - 1, theta.shape[-1] - 1 - n, -1) if largest else _C.arange(n)
        return theta[order], C[:, order]

    # ---- the iteration
    def _estimate_norms(self):
        """||A|| and ||B|| as seen by the starting block, ||A X||_F / ||X||_F (as torch), for
        the residuals' scale."""
        x_norm = float(self.X.norm())
        self.fvars["X_norm"] = x_norm
        self.fvars["A_norm"] = float((self.A @ self.X).norm()) / x_norm
        self.fvars["B_norm"] = float(self._times_B(self.X).norm()) / x_norm

    def _finish_pass(self):
        """After each Rayleigh-Ritz pass: the step count, the residuals R = A X - B X E, each
        pair's relative residual |r| / ((||A|| + |e| ||B||) |x|), the converged count (the
        leading pairs under tol, so pairs converge in order) and the tracker's call."""
        self.ivars["istep"] += 1
        self.R = self.A @ self.X - self._times_B(self.X) * self.E
        scale = (self.fvars["A_norm"] + self.E.abs() * self.fvars["B_norm"]) * self.X.norm(dim=0)
        rerr = self.R.norm(dim=0) / scale
        self.tvars["rerr"] = rerr
        count = 0
        for converged in (rerr < self.fparams["tol"]).tolist():
            if not converged:
                break
            count += 1
        self.ivars["converged_count"] = count
        if self.tracker is not None:
            self.tracker(self)

    def _step(self):
        n = self.iparams["n"]
        W = self._precondition(self.R)
        if self.method == "basic":
            blocks = [self.X, self._nonzero_columns(W)] + ([self._nonzero_columns(self.P)] if self.P is not None else [])
            S = _C.cat(blocks, 1)
        else:
            extra = W if self.P is None else _C.cat([W, self.P], 1)
            S = _C.cat([self.X, self._orthogonalize_against_X(extra)], 1)
        self.S = S
        self.E, C = self._rayleigh_ritz(S)
        self.X = S @ C
        self.P = S[:, n:] @ C[n:, :]  # the step's direction beyond the old X

    def _stop(self):
        # niter counts the passes, the first Rayleigh-Ritz one included; as torch, niter 0 or
        # -1 runs until convergence
        niter = self.iparams["niter"]
        return (self.bvars["force_stop"] or self.ivars["converged_count"] >= self.iparams["k"]
                or (niter > 0 and self.ivars["istep"] >= niter))

    def run(self):
        self.X = self._svqb(self.X, self.fparams["ortho_tol_drop"])
        if self.X.shape[-1] < self.iparams["n"]:
            raise ValueError("lobpcg: the initial approximation X must have linearly independent columns")
        self._estimate_norms()
        self.E, C = self._rayleigh_ritz(self.X)
        self.X = self.X @ C
        self._finish_pass()
        while not self._stop():
            self._step()
            self._finish_pass()


def _check(A, B, X, k, n):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"lobpcg: A must be a (*, m, m) tensor of square matrices, got shape {tuple(A.shape)}")
    if A.is_complex() or (B is not None and B.is_complex()):
        raise NotImplementedError("lobpcg: complex inputs are not supported")
    if not A.is_floating_point():
        raise RuntimeError(f"lobpcg: expected a floating point tensor as input, got {A.dtype}")
    if B is not None and B.shape != A.shape:
        raise ValueError(f"lobpcg: B must have A's shape {tuple(A.shape)}, got {tuple(B.shape)}")
    m = A.shape[-1]
    if X is not None and (X.dim() < 2 or X.shape[-2] != m):
        raise ValueError(f"lobpcg: X must be a (*, {m}, n) tensor, got shape {tuple(X.shape)}")
    if m < 3 * n:
        raise ValueError("LPBPCG algorithm is not applicable when the number of A rows (={}) is smaller than 3 x "
                         "the number of requested eigenpairs (={})".format(m, n))
    if k > n:
        raise ValueError(f"lobpcg: k (={k}) must not exceed the number of approximation columns n (={n})")


def _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
            ortho_bparams):
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    _check(A, B, X, k, n)
    method = "ortho" if method is None else method
    if method not in ("basic", "ortho"):
        raise ValueError(f'lobpcg: method must be "basic" or "ortho", got "{method}"')
    if tol is None:
        tol = (_FEPS_FLOAT64 if A.dtype == _C.float64 else _FEPS_FLOAT32) ** 0.5
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter,
               "ortho_i_max": 3, "ortho_j_max": 3}
    fparams = {"tol": tol, "ortho_tol": tol, "ortho_tol_drop": tol, "ortho_tol_replace": tol}
    bparams = {"largest": True if largest is None else largest, "ortho_use_drop": False}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})

    batch = tuple(A.shape[:-2])
    count = 1
    for s in batch:
        count *= s
    As = A.reshape(count, m, m)
    Bs = None if B is None else B.reshape(count, m, m)
    Xs = None if X is None else X.reshape(count, m, n)
    values, vectors = [], []
    for i in range(count):
        X0 = _C.randn(m, n, dtype=A.dtype, device=A.device) if Xs is None else Xs[i].to(A.dtype)
        iparams["batch_index"] = i
        worker = LOBPCG(As[i], None if Bs is None else Bs[i], X0, iK, iparams, fparams, bparams, method, tracker)
        worker.run()
        values.append(worker.E[:k])
        vectors.append(worker.X[:, :k])
    return _C.stack(values).reshape(batch + (k,)), _C.stack(vectors).reshape(batch + (m, k))


def _eigenpairs_backward(A, D, U, grad_D, grad_U):
    """The gradient of A for the eigenpairs (D, U) of the symmetric A (U: k of its m
    orthonormal eigenvectors). In span(U) it is eigh's formula; outside, eigenvector j moves
    by (d_j - A)^+ P dA u_j (P projecting out span(U)), solved with the matrix
    d_j I - A + U diag(d - d_j + 1) U^T, which is d_j I - A outside span(U) and I inside
    (one m x m solve per pair, so memory stays O(m^2))."""
    Ut = U.mT
    k, m = D.shape[-1], A.shape[-1]
    inner = _C.zeros(A.shape[:-2] + (k, k), dtype=A.dtype)
    if grad_D is not None:
        inner = inner + _C.diag_embed(grad_D)
    grad_A = None
    if grad_U is not None:
        gaps = D.unsqueeze(-2) - D.unsqueeze(-1)  # [i, j] = d_j - d_i
        eye_k = _C.eye(k, dtype=A.dtype)
        inner = inner + (1 - eye_k) / (gaps + eye_k) * (Ut @ grad_U)
        projected = grad_U - U @ (Ut @ grad_U)
        eye_m = _C.eye(m, dtype=A.dtype)
        moves = []
        for j in range(k):
            d_j = D[..., j, None, None]
            shifted = d_j * eye_m - A + (U * (D - D[..., j, None] + 1).unsqueeze(-2)) @ Ut
            moves.append(linalg.solve(shifted, projected[..., j:j + 1]))
        Y = _C.cat(moves, -1)
        grad_A = (Y - U @ (Ut @ Y)) @ Ut
    in_span = U @ inner @ Ut
    return in_span if grad_A is None else in_span + grad_A


class _LOBPCGFunction(autograd.Function):
    @staticmethod
    def forward(ctx, A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
                ortho_bparams):
        D, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
                       ortho_bparams)
        ctx.save_for_backward(A, D, U)
        ctx.has_B = B is not None
        return D, U

    @staticmethod
    def backward(ctx, grad_D, grad_U):
        if ctx.has_B:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        A, D, U = ctx.saved_tensors
        return (_eigenpairs_backward(A, D, U, grad_D, grad_U),) + (None,) * 13


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The k largest (largest=False: smallest) eigenvalues E (*, k) and eigenvectors X
    (*, m, k) of A x = lambda B x for symmetric A and positive definite B (None: the
    identity), by LOBPCG from n random starting vectors (or from X); iK preconditions the
    residuals, tol bounds each pair's relative residual (default sqrt(eps)), niter caps the
    steps (1000; -1 unbounded). method "ortho" (default) or "basic" (see the module note).
    ortho_* dicts override ortho_i_max, ortho_j_max (orthogonalization passes), ortho_tol,
    ortho_tol_drop / ortho_tol_replace (the relative size below which a dependent search
    direction is dropped, the first when ortho_use_drop) and ortho_use_drop. With
    A.requires_grad, A is symmetrized as (A + A^T) / 2 and the result differentiates
    (B None, real A)."""
    if A.requires_grad or (B is not None and B.requires_grad):
        A_sym = (A + A.mT) / 2
        B_sym = None if B is None else (B + B.mT) / 2
        return _LOBPCGFunction.apply(A_sym, k, B_sym, X, n, iK, niter, tol, largest, method, tracker,
                                     ortho_iparams, ortho_fparams, ortho_bparams)
    return _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
                   ortho_bparams)
