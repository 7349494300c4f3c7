"""optim.SparseAdam: Adam for sparse gradients, touching only the entries a gradient has.
tessera has no sparse tensors yet: the optimizer can be built (with the argument checks
torch makes) but a step with any gradient fails as torch does for a dense gradient."""
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


def _require(ok, what, value):
    if not ok:
        raise ValueError(f"Invalid {what}: {value}")


def _sparse_positions(entries):
    """Where sparse tensors sit among the constructor's params: an index for a bare
    tensor, [group index, position] for one inside a group dict."""
    found = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            if entry.is_sparse:
                found.append(i)
            continue
        found.extend([i, k] for k, t in enumerate(entry.get("params", [])) if t.is_sparse)
    return found


class SparseAdam(Optimizer):
    _complex_as_real = False  # dense parameters with sparse grads only

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _require(0.0 < lr, "learning rate", lr)
        _require(0.0 < eps, "epsilon value", eps)
        for i in (0, 1):
            _require(0.0 <= betas[i] < 1.0, f"beta parameter at index {i}", betas[i])
        # Listed here first, as torch does (a lone tensor so becomes its rows).
        entries = list(params)
        sparse = _sparse_positions(entries)
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors")
        super().__init__(entries, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def _update_group(self, group, params, grads):
        if any(not g.is_sparse for g in grads):
            raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        raise NotImplementedError("SparseAdam: tessera has no sparse tensors")
