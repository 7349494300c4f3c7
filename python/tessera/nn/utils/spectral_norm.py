"""Spectral normalization (Miyato et al., 2018) the hook-based way, as
torch.nn.utils.spectral_norm: the parameter moves to ``<name>_orig``, the power-iteration
vectors are the buffers ``<name>_u`` and ``<name>_v``, and a forward pre-hook sets
``module.<name>`` to ``<name>_orig / sigma`` (refining u, v first in training mode).
State-dict hooks record a version so that checkpoints from before ``<name>_v`` was saved
(version 0) still load."""
import tessera as _t

from ...autograd.grad_mode import no_grad
from ..modules.module import RemovableHandle
from ..parameter import Parameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


def _normalize(x, eps):
    # torch.nn.functional.normalize(x, dim=0, eps=eps) for a vector x
    return x / x.norm(2).clamp_min(eps)


class SpectralNorm:
    """The forward pre-hook that spectral_norm registers."""

    # 0: checkpoints hold <name> and <name>_orig, <name>_u but no <name>_v.
    # 1: they hold <name>_orig, <name>_u and <name>_v.
    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim])
        return weight_mat.reshape(weight_mat.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                # u and v are updated in place (they are the buffers), then cloned so that
                # backward sees the values this forward used.
                for _ in range(self.n_power_iterations):
                    v.copy_(_normalize(_t.mv(weight_mat.t(), u), self.eps))
                    u.copy_(_normalize(_t.mv(weight_mat, v), self.eps))
                u = u.clone(memory_format=_t.contiguous_format)
                v = v.clone(memory_format=_t.contiguous_format)
        sigma = _t.dot(u, _t.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # v with u = W v / sigma (least squares), scaled so that u^T W v = target_sigma.
        pinverse = getattr(_t, "pinverse", None)
        if pinverse is None:
            raise NotImplementedError("spectral_norm: loading a version-0 checkpoint (no '_v' entry) needs "
                                      "tessera.pinverse, which tessera does not implement yet")
        v = (pinverse(weight_mat.t().mm(weight_mat)).mm(weight_mat.t()).mm(u.unsqueeze(1))).squeeze(1)
        return v.mul_(target_sigma / _t.dot(u, _t.mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = _normalize(weight.new_empty(h).normal_(0, 1), fn.eps)
            v = _normalize(weight.new_empty(w).normal_(0, 1), fn.eps)

        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # A plain attribute until the first forward: the hook recomputes it every call.
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        _register_load_pre_hook(module, SpectralNormLoadStateDictPreHook(fn))
        return fn


def _register_load_pre_hook(module, hook):
    handle = RemovableHandle(module._load_state_dict_pre_hooks)
    module._load_state_dict_pre_hooks[handle.id] = hook
    return handle


class SpectralNormLoadStateDictPreHook:
    """Converts a version-0 checkpoint (``<name>`` saved, ``<name>_v`` not) on load:
    sigma = mean(orig / weight), and v solved from u and sigma."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if version is None and weight_key not in state_dict and \
                all(weight_key + s in state_dict for s in ("_orig", "_u", "_v")):
            return  # a current checkpoint saved without metadata
        has_missing_keys = False
        for suffix in ("_orig", "", "_u"):
            if weight_key + suffix not in state_dict:
                has_missing_keys = True
                if strict:
                    missing_keys.append(weight_key + suffix)
        if has_missing_keys:
            return
        with no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records ``spectral_norm: {<name>.version: 1}`` in the module's state_dict metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        entry = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in entry:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        entry[key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Applies spectral normalization to ``module.<name>`` with hooks. ``dim`` (the
    output dimension) defaults to 1 for transposed convolutions and 0 otherwise.
    Returns ``module``."""
    if dim is None:
        from .parametrizations import _is_conv_transpose
        dim = 1 if _is_conv_transpose(module) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Takes spectral normalization off ``module.<name>``, which becomes a plain parameter
    holding the last normalized value; the state-dict hooks go too."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    # (torch 1.13 leaves its load pre-hook behind, wrapped where its isinstance check
    # misses it, so that loading the module's own state_dict then fails; here it goes.)
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for k, hook in hooks.items():
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[k]
                break
    return module
