"""fuse_modules and fuse_modules_qat (torch.ao.quantization.fuse_modules): replace named
sequences of submodules (conv-bn, conv-bn-relu, conv-relu, linear-bn, linear-relu, bn-relu)
by one fused module in the first name's place and Identity in the others', keeping the first
module's forward pre-hooks and the last one's forward hooks."""
import copy

from ...nn.modules.linear import Identity
from ...nn.utils.parametrize import type_before_parametrizations
from .fuser_method_mappings import fuse_conv_bn, fuse_conv_bn_relu, get_fuser_method  # noqa: F401 (torch's names)

__all__ = ["fuse_known_modules", "fuse_modules", "fuse_modules_qat"]


def _get_module(model, key):
    for name in key.split("."):
        model = getattr(model, name)
    return model


def _set_module(model, key, module):
    *parents, last = key.split(".")
    setattr(_get_module(model, ".".join(parents)) if parents else model, last, module)


def fuse_known_modules(mod_list, is_qat, additional_fuser_method_mapping=None):
    """The fused module followed by Identity()s, one entry per module of mod_list."""
    fuser_method = get_fuser_method(tuple(type_before_parametrizations(m) for m in mod_list),
                                    additional_fuser_method_mapping)
    fused = fuser_method(is_qat, *mod_list)
    # the hooks move: pre-hooks of the first module, hooks of the last
    for handle_id, hook in list(mod_list[0]._forward_pre_hooks.items()):
        fused.register_forward_pre_hook(hook)
        del mod_list[0]._forward_pre_hooks[handle_id]
    for handle_id, hook in list(mod_list[-1]._forward_hooks.items()):
        fused.register_forward_hook(hook)
        del mod_list[-1]._forward_hooks[handle_id]
    new_mods = [fused]
    for _ in mod_list[1:]:
        identity = Identity()
        identity.training = mod_list[0].training
        new_mods.append(identity)
    return new_mods


def _fuse_one(model, names, is_qat, fuser_func, fuse_custom_config_dict):
    additional = (fuse_custom_config_dict or {}).get("additional_fuser_method_mapping", {})
    new_mods = fuser_func([_get_module(model, name) for name in names], is_qat, additional)
    for name, mod in zip(names, new_mods):
        _set_module(model, name, mod)


def _fuse_modules(model, modules_to_fuse, is_qat, inplace, fuser_func, fuse_custom_config_dict):
    if not inplace:
        model = copy.deepcopy(model)
    if all(isinstance(name, str) for name in modules_to_fuse):
        modules_to_fuse = [modules_to_fuse]
    for names in modules_to_fuse:
        _fuse_one(model, names, is_qat, fuser_func, fuse_custom_config_dict)
    return model


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules, fuse_custom_config_dict=None):
    """model (a copy unless inplace) with each list of submodule names in modules_to_fuse (or
    the one list, if given flat) fused for inference: batch norms are folded, so the model
    must be in eval mode. fuse_custom_config_dict's "additional_fuser_method_mapping" adds
    fuser methods by type tuple; fuser_func and it are honoured as in current torch (1.13
    ignores both)."""
    return _fuse_modules(model, modules_to_fuse, False, inplace, fuser_func, fuse_custom_config_dict)


def fuse_modules_qat(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                     fuse_custom_config_dict=None):
    """fuse_modules for quantization-aware training: conv/linear and batch norm stay separate
    inside a fused container (ConvBn2d, ...) that prepare_qat swaps for its QAT module."""
    return _fuse_modules(model, modules_to_fuse, True, inplace, fuser_func, fuse_custom_config_dict)
