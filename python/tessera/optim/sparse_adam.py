"""optim.SparseAdam: the lazy Adam of sparse gradients (nn.Embedding(sparse=True)): only
the rows a gradient has move, and only their moments decay, in torch's arithmetic order."""
import math

from .optimizer import Optimizer, _sparse_like

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
        # No copies of the parameters and moments to restore a failed step (that would cost
        # whole embedding tables each step): every write to them is deferred to the end.
        exp_avgs, exp_avg_sqs, steps = self._group_state(params, ("exp_avg", "exp_avg_sq"), guard=False)
        lr, eps, maximize = group["lr"], group["eps"], group["maximize"]
        defer = self._txn.defer
        beta1, beta2 = group["betas"]
        for p, grad, exp_avg, exp_avg_sq, step in zip(params, grads, exp_avgs, exp_avg_sqs, steps):
            grad = (-grad if maximize else grad).coalesce()  # not linear in the grad: one entry per row
            indices, values = grad._indices(), grad._values()
            # old <- b * old + (1 - b) * new, written old += (1 - b) * (new - old) on the rows
            old_avg = exp_avg.sparse_mask(grad)._values()
            avg_update = values.sub(old_avg).mul_(1 - beta1)
            old_sq = exp_avg_sq.sparse_mask(grad)._values()
            sq_update = values.pow(2).sub_(old_sq).mul_(1 - beta2)
            # (the rows' new moments, as torch reads them back after its add_)
            numer = avg_update.add(old_avg)
            denom = sq_update.add(old_sq).sqrt_().add_(eps)
            k = step.item()
            step_size = lr * math.sqrt(1 - beta2 ** k) / (1 - beta1 ** k)
            defer(exp_avg.add_, _sparse_like(grad, indices, avg_update))
            defer(exp_avg_sq.add_, _sparse_like(grad, indices, sq_update))
            defer(p.add_, _sparse_like(grad, indices, -step_size * numer.div_(denom)))
