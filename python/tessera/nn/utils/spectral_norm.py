"""Hook-based spectral normalization (Miyato et al., 2018), with the interface of
torch.nn.utils.spectral_norm. The parameter is kept as ``<name>_orig``; the buffers
``<name>_u`` and ``<name>_v`` hold the power-iteration vectors; a forward pre-hook sets
``module.<name> = <name>_orig / sigma`` each call, improving u and v first when training.
Two state-dict hooks stamp a format version into the metadata and upgrade checkpoints of
version 0 (which stored ``<name>`` but no ``<name>_v``) while loading."""
import tessera as _t

from ...autograd.grad_mode import no_grad
from ..modules.module import RemovableHandle
from ..parameter import Parameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


def _unit(vec, eps):
    return vec / vec.norm(2).clamp_min(eps)


class SpectralNorm:
    """The forward pre-hook that spectral_norm installs."""

    # checkpoint format: 0 stored <name>, <name>_orig and <name>_u; 1 stores <name>_orig,
    # <name>_u and <name>_v
    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations < 1:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.eps = name, dim, eps
        self.n_power_iterations = n_power_iterations

    def _key(self, suffix=""):
        return self.name + suffix

    def reshape_weight_to_matrix(self, weight):
        """``weight`` as a matrix: dimension ``dim`` along the rows, the rest flattened."""
        if self.dim:
            rest = [d for d in range(weight.dim()) if d != self.dim]
            weight = weight.permute(self.dim, *rest)
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        """``<name>_orig / sigma``; with ``do_power_iteration`` the stored u and v are first
        improved in place by n_power_iterations steps."""
        orig = getattr(module, self._key("_orig"))
        left, right = getattr(module, self._key("_u")), getattr(module, self._key("_v"))
        mat = self.reshape_weight_to_matrix(orig)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    right.copy_(_unit(_t.mv(mat.t(), left), self.eps))
                    left.copy_(_unit(_t.mv(mat, right), self.eps))
                # what backward sees are this call's vectors, not later updates
                left, right = (x.clone(memory_format=_t.contiguous_format) for x in (left, right))
        return orig / _t.dot(left, _t.mv(mat, right))

    def remove(self, module):
        with no_grad():
            final = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self._key(suffix))
        module.register_parameter(self.name, Parameter(final.detach()))

    def __call__(self, module, inputs):
        current = self.compute_weight(module, do_power_iteration=module.training)
        setattr(module, self.name, current)

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # the least-squares v for W v = sigma u, scaled so that u^T W v = target_sigma
        pinv = getattr(_t, "pinverse", None)
        if pinv is None:
            raise NotImplementedError("spectral_norm: loading a version-0 checkpoint (no '_v' entry) needs "
                                      "tessera.pinverse, which tessera does not implement yet")
        wt = weight_mat.t()
        v = pinv(wt.mm(weight_mat)).mm(wt).mm(u.unsqueeze(1)).squeeze(1)
        return v.mul_(target_sigma / _t.dot(u, _t.mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        if any(isinstance(h, SpectralNorm) and h.name == name for h in module._forward_pre_hooks.values()):
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        hook = SpectralNorm(name, n_power_iterations, dim, eps)
        param = module._parameters[name]
        if param is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            rows, cols = hook.reshape_weight_to_matrix(param).shape
            start_u = _unit(param.new_empty(rows).normal_(0, 1), hook.eps)
            start_v = _unit(param.new_empty(cols).normal_(0, 1), hook.eps)

        # the parameter object moves to <name>_orig; <name> is a plain attribute that the
        # hook overwrites on every call
        module._parameters.pop(name)
        module.register_parameter(name + "_orig", param)
        setattr(module, name, param.data)
        module.register_buffer(name + "_u", start_u)
        module.register_buffer(name + "_v", start_v)
        module.register_forward_pre_hook(hook)
        module._register_state_dict_hook(SpectralNormStateDictHook(hook))
        loader = SpectralNormLoadStateDictPreHook(hook)
        handle = RemovableHandle(module._load_state_dict_pre_hooks)
        module._load_state_dict_pre_hooks[handle.id] = loader
        return hook


class SpectralNormLoadStateDictPreHook:
    """Upgrades a version-0 checkpoint while it loads: sigma = mean(orig / weight), then
    ``<name>_v`` solved from u and sigma."""

    def __init__(self, fn):
        self.fn = fn

    def _is_current(self, state_dict, prefix, version):
        if version is not None:
            return version >= 1
        # no metadata (e.g. a dict built by hand): the keys tell the format
        base = prefix + self.fn.name
        return base not in state_dict and all(base + s in state_dict for s in ("_orig", "_u", "_v"))

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if self._is_current(state_dict, prefix, version):
            return
        base = prefix + fn.name
        absent = [base + s for s in ("_orig", "", "_u") if base + s not in state_dict]
        if absent:
            if strict:
                missing_keys.extend(absent)
            return
        with no_grad():
            orig = state_dict[base + "_orig"]
            sigma = (orig / state_dict.pop(base)).mean()
            state_dict[base + "_v"] = fn._solve_v_and_rescale(fn.reshape_weight_to_matrix(orig),
                                                              state_dict[base + "_u"], sigma)


class SpectralNormStateDictHook:
    """Writes ``{"<name>.version": 1}`` under "spectral_norm" in the state_dict metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault("spectral_norm", {})
        entry = f"{self.fn.name}.version"
        if entry in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {entry}")
        versions[entry] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalization of ``module.<name>`` through hooks. ``dim``, the output
    dimension, is 1 for transposed convolutions and 0 otherwise unless given. Returns
    ``module``."""
    if dim is None:
        from .parametrizations import _is_conv_transpose
        dim = int(_is_conv_transpose(module))
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def _drop_first(hooks, wanted):
    # removes the first hook of the dict for which wanted(hook) holds; True if one went
    key = next((k for k, h in hooks.items() if wanted(h)), None)
    if key is None:
        return False
    del hooks[key]
    return True


def remove_spectral_norm(module, name="weight"):
    """Undoes spectral_norm on ``module.<name>``: it becomes a plain parameter holding the
    last normalized value, and the state-dict hooks are removed as well."""
    pre_hooks = module._forward_pre_hooks
    key = next((k for k, h in pre_hooks.items() if isinstance(h, SpectralNorm) and h.name == name), None)
    if key is None:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    pre_hooks[key].remove(module)
    del pre_hooks[key]
    # (torch 1.13 leaves its load pre-hook in place, wrapped so that its own isinstance test
    # misses it, and loading the module's own state_dict then fails; here it is removed.)
    _drop_first(module._state_dict_hooks,
                lambda h: isinstance(h, SpectralNormStateDictHook) and h.fn.name == name)
    _drop_first(module._load_state_dict_pre_hooks,
                lambda h: isinstance(h, SpectralNormLoadStateDictPreHook) and h.fn.name == name)
    return module
