"""Hook-based weight normalization (Salimans & Kingma, 2016), with the interface of
torch.nn.utils.weight_norm: ``module.<name>`` is split into the parameters ``<name>_g``
(magnitude) and ``<name>_v`` (direction), and a forward pre-hook rebuilds it each call as
``<name>_g * <name>_v / ||<name>_v||``, the norm taken over every dimension but ``dim``."""
import tessera as _t

from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """Like torch.norm_except_dim: the ``pow``-norm of ``v`` over every dimension except
    ``dim``, with those dimensions kept at size 1; ``dim=-1`` reduces everything to a
    0-dim tensor."""
    if dim == -1:
        return v.norm(pow)
    keep = dim % v.dim()
    reduce_over = [d for d in range(v.dim()) if d != keep]
    if reduce_over:
        return _t.linalg.vector_norm(v, pow, dim=reduce_over, keepdim=True)
    # a 1-D tensor: each entry is its own slice
    return (v != 0).to(v.dtype) if pow == 0 else v.abs()


class WeightNorm:
    """The forward pre-hook weight_norm installs; it recomputes ``module.<name>``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = dim if dim is not None else -1

    def compute_weight(self, module):
        direction = getattr(module, f"{self.name}_v")
        magnitude = getattr(module, f"{self.name}_g")
        return direction * (magnitude / norm_except_dim(direction, 2, self.dim))

    @staticmethod
    def apply(module, name, dim):
        if any(isinstance(h, WeightNorm) and h.name == name for h in module._forward_pre_hooks.values()):
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        hook = WeightNorm(name, dim)
        param = module._parameters.pop(name)
        magnitude = norm_except_dim(param, 2, hook.dim)
        module.register_parameter(f"{name}_g", Parameter(magnitude.data))
        module.register_parameter(f"{name}_v", Parameter(param.data))
        hook(module, None)
        module.register_forward_pre_hook(hook)
        return hook

    def remove(self, module):
        final = self.compute_weight(module)
        delattr(module, self.name)
        for part in ("_g", "_v"):
            module._parameters.pop(self.name + part)
        module.register_parameter(self.name, Parameter(final.data))

    def __call__(self, module, inputs):
        rebuilt = self.compute_weight(module)
        setattr(module, self.name, rebuilt)


def weight_norm(module, name="weight", dim=0):
    """Reparametrizes ``module.<name>`` into ``<name>_g`` and ``<name>_v``, with one norm
    per slice along ``dim`` (per output channel by default); ``dim=None`` (or -1, as in
    torch) uses the norm of the whole tensor. Returns ``module``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Folds ``<name>_g`` and ``<name>_v`` back into one plain parameter ``<name>``."""
    hooks = module._forward_pre_hooks
    found = [k for k, h in hooks.items() if isinstance(h, WeightNorm) and h.name == name]
    if not found:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    hooks[found[0]].remove(module)
    del hooks[found[0]]
    return module
