"""The eager-mode conversion passes of torch.ao.quantization.quantize that exist so far:
propagate_qconfig_ (each module's qconfig from a spec keyed by type or name, inherited by
children), convert / swap_module (modules with a qconfig replaced by their mapping's
from_float) and quantize_dynamic, which converts Linear layers to the dynamically quantized
Linear. prepare / prepare_qat / quantize (the observer-inserting passes) are not there yet."""
import copy

from ...nn.modules import linear as float_linear
from ...nn.modules import rnn
from ...nn.modules.multihead import NonDynamicallyQuantizableLinear
from ..nn.intrinsic.modules import _FusedModule
from .qconfig import assert_valid_qconfig, default_dynamic_qconfig

__all__ = ["propagate_qconfig_", "convert", "swap_module", "quantize_dynamic",
           "get_default_dynamic_quant_module_mappings"]


def get_default_dynamic_quant_module_mappings():
    """Float module type -> dynamically quantized module type."""
    from ..nn.quantized import dynamic as nnqd
    return {float_linear.Linear: nnqd.Linear, NonDynamicallyQuantizableLinear: nnqd.Linear}


def _propagate(module, spec, parent_qconfig, prefix):
    qconfig = spec.get(type(module), parent_qconfig)
    qconfig = spec.get(prefix, qconfig)
    qconfig = getattr(module, "qconfig", qconfig)
    assert_valid_qconfig(qconfig, module)
    module.qconfig = qconfig
    for name, child in module.named_children():
        _propagate(child, spec, qconfig, prefix + "." + name if prefix else name)


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None):
    """Sets `qconfig` on every module: its own if it has one, else the spec's for its name or
    its type, else its parent's."""
    _propagate(module, qconfig_dict or {}, None, "")


def swap_module(mod, mapping, custom_module_class_mapping=None):
    """mod's quantized replacement (mapping[type(mod)].from_float(mod)) when it has a qconfig,
    keeping its forward hooks; else mod itself."""
    custom = custom_module_class_mapping or {}
    if getattr(mod, "qconfig", None) is None:
        return mod
    if type(mod) in custom:
        new_mod = custom[type(mod)].from_observed(mod)
    elif type(mod) in mapping:
        new_mod = mapping[type(mod)].from_float(mod)
    else:
        return mod
    for hook in mod._forward_pre_hooks.values():
        new_mod.register_forward_pre_hook(hook)
    for hook in mod._forward_hooks.values():
        new_mod.register_forward_hook(hook)
    return new_mod


def _convert(module, mapping, custom):
    swapped = {}
    for name, child in module.named_children():
        if not isinstance(child, _FusedModule) and type(child) not in custom:
            _convert(child, mapping, custom)
        swapped[name] = swap_module(child, mapping, custom)
    for name, child in swapped.items():
        module._modules[name] = child
    return module


def _remove_qconfig(module):
    for child in module.children():
        _remove_qconfig(child)
    if hasattr(module, "qconfig"):
        del module.qconfig
    if hasattr(module, "activation_post_process"):
        delattr(module, "activation_post_process")


def convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
            convert_custom_config_dict=None):
    """Swaps every module that has a qconfig and a mapping entry for its quantized form."""
    if mapping is None or is_reference:
        raise NotImplementedError("convert needs an explicit mapping until prepare() and the static and reference "
                                  "module mappings exist")
    if not inplace:
        module = copy.deepcopy(module)
    custom = (convert_custom_config_dict or {}).get("observed_to_quantized_custom_module_class", {})
    _convert(module, mapping, custom)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


_RNN_TYPES = (rnn.LSTM, rnn.GRU, rnn.LSTMCell, rnn.RNNCell, rnn.GRUCell)


def quantize_dynamic(model, qconfig_spec=None, dtype=None, mapping=None, inplace=False):
    """model with its Linear layers (those qconfig_spec selects) replaced by dynamically
    quantized ones: qint8 weights, activations quantized per call. The recurrent layers torch
    also converts (LSTM, GRU and their cells) and the float16 and embedding forms are not
    implemented: asking for them raises NotImplementedError."""
    from ... import _C
    dtype = _C.qint8 if dtype is None else dtype
    if dtype != _C.qint8:
        raise NotImplementedError(f"quantize_dynamic with dtype {dtype} is not implemented (qint8 is)")
    if qconfig_spec is None:
        qconfig_spec = {t: default_dynamic_qconfig for t in (float_linear.Linear,) + _RNN_TYPES}
    elif isinstance(qconfig_spec, set):
        qconfig_spec = dict.fromkeys(qconfig_spec, default_dynamic_qconfig)
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    for name, mod in model.named_modules():
        if isinstance(mod, _RNN_TYPES) and getattr(mod, "qconfig", None) is not None and type(mod) not in mapping:
            raise NotImplementedError(f"dynamic quantization of {type(mod).__name__} ('{name}') is not implemented "
                                      "yet; leave it out of qconfig_spec to keep it in float")
    return convert(model, mapping, inplace=True)
