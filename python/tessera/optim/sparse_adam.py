"""optim.SparseAdam: Adam for sparse gradients, updating only the entries a gradient names.
tessera has no sparse tensors yet, so the optimizer is constructed (with torch's checks) but
every step with a gradient ends in the error torch gives for a dense one."""
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    _checks_complex = False  # the dense-gradient error comes first, as in torch

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 < eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
        # torch lists the parameters itself first (so a lone tensor passes as its rows).
        params = list(params)
        sparse = []
        for index, param in enumerate(params):
            if isinstance(param, dict):
                sparse += [[index, j] for j, p in enumerate(param.get("params", [])) if p.is_sparse]
            elif param.is_sparse:
                sparse.append(index)
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def _update_group(self, group, params, grads):
        for g in grads:
            if not g.is_sparse:
                raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        raise NotImplementedError("SparseAdam: tessera has no sparse tensors")
