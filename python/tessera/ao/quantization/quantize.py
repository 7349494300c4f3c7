"""The eager-mode passes of torch.ao.quantization.quantize: propagate_qconfig_ (each module's
qconfig from a spec keyed by type or name, inherited by children), prepare (an observer as
`activation_post_process` on every leaf module with a qconfig, run by a forward hook),
prepare_qat (float and fused modules swapped for their QAT forms, then prepare), convert
(observed modules swapped for quantized ones through their from_float), and the one-call
forms quantize, quantize_qat and quantize_dynamic."""
import copy
import itertools
import warnings

from ... import _C
from ...nn.modules import dropout, rnn
from ...nn.modules.container import Sequential
from ...nn.modules.multihead import MultiheadAttention
from ...nn.utils.parametrize import is_parametrized, type_before_parametrizations
from ..nn.intrinsic.modules import _FusedModule
from .fake_quantize import FakeQuantizeBase
from .observer import ObserverBase
from .qconfig import (activation_is_memoryless, add_module_to_qconfig_obs_ctr, assert_valid_qconfig,
                      default_dynamic_qconfig, float16_dynamic_qconfig, float_qparams_weight_only_qconfig,
                      float_qparams_weight_only_qconfig_4bit)
from .quantization_mappings import (_get_special_act_post_process, _has_special_act_post_process,
                                    get_default_dynamic_quant_module_mappings, get_default_qat_module_mappings,
                                    get_default_qconfig_propagation_list, get_default_static_quant_module_mappings,
                                    no_observer_set, not_yet_quantizable_module_types)
from .stubs import DeQuantStub, QuantWrapper

__all__ = ["propagate_qconfig_", "add_observer_", "add_quant_dequant", "prepare", "prepare_qat", "convert",
           "swap_module", "quantize", "quantize_qat", "quantize_dynamic", "get_observer_dict",
           "register_activation_post_process_hook", "get_default_custom_config_dict", "is_activation_post_process"]

_RNN_TYPES = (rnn.LSTM, rnn.GRU, rnn.LSTMCell, rnn.RNNCell, rnn.GRUCell)
# torch's default custom config makes these quantizable (nn.quantizable.LSTM, ...) in prepare
_STATIC_CUSTOM_MODULE_TYPES = (rnn.LSTM, MultiheadAttention)


def get_default_custom_config_dict():
    """The custom-module config prepare and convert use by default: torch's maps LSTM and
    MultiheadAttention to quantizable forms tessera does not have, so this one is empty."""
    return {"float_to_observed_custom_module_class": {}, "observed_to_quantized_custom_module_class": {}}


def is_activation_post_process(module):
    """Whether module is an observer or a fake quantizer."""
    return isinstance(module, (ObserverBase, FakeQuantizeBase))


def _has_no_children(module):
    # a leaf, counting a parametrized module's `parametrizations` container as no child
    return not module._modules or (is_parametrized(module) and list(module._modules) == ["parametrizations"])


def _propagate(module, spec, parent_qconfig, prefix, custom):
    qconfig = spec.get(type_before_parametrizations(module), parent_qconfig)
    qconfig = spec.get(prefix, qconfig)
    qconfig = getattr(module, "qconfig", qconfig)
    assert_valid_qconfig(qconfig, module)
    qconfig = add_module_to_qconfig_obs_ctr(qconfig, module)
    module.qconfig = qconfig
    for name, child in module.named_children():
        if name in custom.get("non_traceable_module_name", []) or \
                type(child) in custom.get("non_traceable_module_class", []):
            continue
        # as torch 1.13: the non-traceable lists apply to the top module's children only
        _propagate(child, spec, qconfig, prefix + "." + name if prefix else name, {})


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None):
    """Sets `qconfig` on every module: its own if it has one, else the spec's for its name or
    its type, else its parent's."""
    _propagate(module, qconfig_dict or {}, None, "", prepare_custom_config_dict or {})


def _observer_forward_hook(self, input, output):
    return self.activation_post_process(output)


def _observer_forward_pre_hook(self, input):
    return self.activation_post_process(input[0])


def register_activation_post_process_hook(module, pre_hook=False):
    """Runs module.activation_post_process on the module's output (or, pre_hook, its
    input) before any other hook."""
    assert hasattr(module, "activation_post_process"), \
        "Expect activation_post_process attribute already attached to the module"
    if pre_hook:
        handle = module.register_forward_pre_hook(_observer_forward_pre_hook)
        module._forward_pre_hooks.move_to_end(handle.id, last=False)
    else:
        handle = module.register_forward_hook(_observer_forward_hook)
        module._forward_hooks.move_to_end(handle.id, last=False)


def _module_device(module):
    devices = {p.device for p in module.parameters()} | {b.device for b in module.buffers()}
    assert len(devices) <= 1, \
        f"add_observer_ only works with cpu or single-device CUDA modules, but got devices {devices}"
    return next(iter(devices)) if devices else None


def _needs_observation(m):
    return getattr(m, "qconfig", None) is not None


def add_observer_(module, qconfig_propagation_list=None, non_leaf_module_list=None, device=None,
                  custom_module_class_mapping=None):
    """Attaches an observer (activation_post_process, run by a forward hook) to every leaf
    module of a propagation-list type that has a qconfig, to fused modules, to
    FloatFunctionals (which call it themselves) and to the non-leaf types listed."""
    from ..nn import quantized as nnq
    propagation = get_default_qconfig_propagation_list() if qconfig_propagation_list is None \
        else qconfig_propagation_list
    custom = custom_module_class_mapping or {}
    device = _module_device(module) if device is None else device

    def make_observer(qconfig, special=None):
        observer = special() if special is not None else qconfig.activation()
        return observer.to(device) if device is not None else observer

    def insert(m, special=None):
        if _needs_observation(m) and not isinstance(m, DeQuantStub):
            m.add_module("activation_post_process", make_observer(m.qconfig, special))
            register_activation_post_process_hook(m, pre_hook=activation_is_memoryless(m.qconfig))

    for name, child in module.named_children():
        kind = type_before_parametrizations(child)
        if kind is dropout.Dropout:
            continue
        if _needs_observation(child) and kind in _STATIC_CUSTOM_MODULE_TYPES and kind not in custom:
            raise NotImplementedError(f"static quantization of {kind.__name__} ('{name}') is not implemented: torch "
                                      "swaps it for a quantizable module that tessera does not have yet; set its "
                                      "qconfig to None to keep it in float")
        if kind in (nnq.FloatFunctional, nnq.QFunctional):
            if _needs_observation(child):
                child.activation_post_process = make_observer(child.qconfig)
        elif isinstance(child, _FusedModule):
            insert(child)
        elif _has_special_act_post_process(child):
            insert(child, _get_special_act_post_process(child))
        elif non_leaf_module_list is not None and kind in non_leaf_module_list:
            insert(child)
        elif _needs_observation(child) and kind in custom:
            observed = custom[kind].from_float(child)
            setattr(module, name, observed)
            if custom[kind] not in no_observer_set():
                insert(observed)
        else:
            add_observer_(child, propagation, non_leaf_module_list, device, custom)
    if _has_no_children(module) and not isinstance(module, Sequential) and \
            type_before_parametrizations(module) in propagation:
        insert(module)


def add_quant_dequant(module):
    """Wraps every leaf module that has a qconfig in a QuantWrapper (the module itself is
    returned wrapped when it is such a leaf)."""
    if _has_no_children(module) and getattr(module, "qconfig", None):
        return QuantWrapper(module)
    for name, child in module.named_children():
        module._modules[name] = add_quant_dequant(child)
    return module


def prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """model (a copy unless inplace) with qconfigs propagated from the `qconfig` attributes
    set on its submodules and observers attached, ready for calibration."""
    custom_config = prepare_custom_config_dict if prepare_custom_config_dict is not None \
        else get_default_custom_config_dict()
    custom_mapping = custom_config.get("float_to_observed_custom_module_class", {})
    if not inplace:
        model = copy.deepcopy(model)
    propagation = get_default_qconfig_propagation_list() if allow_list is None else allow_list
    propagate_qconfig_(model, qconfig_dict=None)
    if not any(getattr(m, "qconfig", None) for m in model.modules()):
        warnings.warn("None of the submodule got qconfig applied. Make sure you passed correct configuration through "
                      "`qconfig_dict` or by assigning the `.qconfig` attribute directly on submodules")
    add_observer_(model, propagation, observer_non_leaf_module_list, custom_module_class_mapping=custom_mapping)
    return model


def _remove_activation_post_process(module):
    if is_activation_post_process(getattr(module, "activation_post_process", None)):
        delattr(module, "activation_post_process")
    for hooks, observer_hook in ((module._forward_pre_hooks, _observer_forward_pre_hook),
                                 (module._forward_hooks, _observer_forward_hook)):
        for handle_id in [h for h, fn in hooks.items() if fn is observer_hook]:
            hooks.pop(handle_id)


def _remove_qconfig(module):
    for child in module.children():
        _remove_qconfig(child)
    if hasattr(module, "qconfig"):
        del module.qconfig
    _remove_activation_post_process(module)


def prepare_qat(model, mapping=None, inplace=False):
    """model (a copy unless inplace, in training mode) with its float and fused modules
    swapped for QAT modules (fake-quantized weights) and fake quantizers attached to the
    activations, ready for quantization-aware training."""
    assert model.training, "prepare_qat only works on models in training mode"
    mapping = get_default_qat_module_mappings() if mapping is None else mapping
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, qconfig_dict=None)
    convert(model, mapping=mapping, inplace=True, remove_qconfig=False)
    prepare(model, observer_non_leaf_module_list=set(mapping.values()), inplace=True)
    return model


def quantize(model, run_fn, run_args, mapping=None, inplace=False):
    """Post-training static quantization in one call: prepare in eval mode, run_fn(model,
    *run_args) to calibrate, convert."""
    mapping = get_default_static_quant_module_mappings() if mapping is None else mapping
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, mapping, inplace=True)
    return model


def quantize_qat(model, run_fn, run_args, inplace=False):
    """Quantization-aware training in one call: prepare_qat, run_fn(model, *run_args) to
    train, convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, inplace=True)
    return model


def swap_module(mod, mapping, custom_module_class_mapping=None):
    """mod's replacement (mapping[type].from_float(mod)) when it has a qconfig, keeping its
    forward hooks other than the observer's; else mod itself."""
    custom = custom_module_class_mapping or {}
    kind = type_before_parametrizations(mod)
    if getattr(mod, "qconfig", None) is None:
        return mod
    if kind in custom:
        new_mod = custom[kind].from_observed(mod)
    elif kind in mapping:
        new_mod = mapping[kind].from_float(mod)
    else:
        return mod
    for hook in mod._forward_pre_hooks.values():
        if hook is not _observer_forward_pre_hook:
            new_mod.register_forward_pre_hook(hook)
    for hook in mod._forward_hooks.values():
        if hook is not _observer_forward_hook:
            new_mod.register_forward_hook(hook)
    # the quantized module lives where the observed one did
    devices = {p.device for p in mod.parameters()} | {b.device for b in mod.buffers()}
    assert len(devices) <= 1, \
        f"swap_module only works with cpu or single-device CUDA modules, but got devices {devices}"
    if devices:
        new_mod.to(next(iter(devices)))
    return new_mod


def _check_static_conversions(module):
    # what torch's default mapping converts and tessera cannot yet: refused, never left in float silently
    missing = not_yet_quantizable_module_types()
    for name, mod in module.named_modules():
        kind = type_before_parametrizations(mod)
        if kind in missing and hasattr(mod, "activation_post_process") and getattr(mod, "qconfig", None) is not None:
            raise NotImplementedError(f"converting {kind.__name__} ('{name}') to a quantized module is not "
                                      "implemented yet (tessera has no quantized kernel for it); set its qconfig to "
                                      "None to keep it in float, between a DeQuantStub and a QuantStub")


def _convert(module, mapping, custom):
    swapped = {}
    for name, child in module.named_children():
        if not isinstance(child, _FusedModule) and type_before_parametrizations(child) not in custom:
            _convert(child, mapping, custom)
        swapped[name] = swap_module(child, mapping, custom)
    for name, child in swapped.items():
        module._modules[name] = child
    return module


def convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
            convert_custom_config_dict=None):
    """Swaps every module that has a qconfig and a mapping entry for its quantized form
    (by default the static quantized modules), then drops qconfigs and observers."""
    if is_reference:
        raise NotImplementedError("reference quantized modules (is_reference=True) are not implemented")
    if not inplace:
        module = copy.deepcopy(module)
    if mapping is None:
        mapping = get_default_static_quant_module_mappings()
        _check_static_conversions(module)
    custom_config = convert_custom_config_dict if convert_custom_config_dict is not None \
        else get_default_custom_config_dict()
    _convert(module, mapping, custom_config.get("observed_to_quantized_custom_module_class", {}))
    if remove_qconfig:
        _remove_qconfig(module)
    return module




def _default_dynamic_spec(dtype, as_set=None):
    if dtype == _C.qint8:
        qconfig, types = default_dynamic_qconfig, _RNN_TYPES
    elif dtype == _C.float16:
        qconfig, types = float16_dynamic_qconfig, _RNN_TYPES
    elif dtype == _C.quint8:
        from ...nn.modules import sparse
        qconfig, types = float_qparams_weight_only_qconfig, (sparse.EmbeddingBag, sparse.Embedding)
    elif dtype == _C.quint4x2:
        from ...nn.modules import sparse
        qconfig, types = float_qparams_weight_only_qconfig_4bit, (sparse.EmbeddingBag,)
    elif as_set is not None:
        raise RuntimeError("Unknown dtype specified for quantize_dynamic: ", str(dtype))
    else:
        raise ValueError(f"Don't know how to quantize with default settings for {dtype}. Provide full qconfig please")
    if as_set is not None:
        return dict(zip(as_set, itertools.repeat(qconfig)))
    from ...nn.modules import linear as float_linear
    linear_types = (float_linear.Linear,) if dtype in (_C.qint8, _C.float16) else ()
    return dict.fromkeys(linear_types + types, qconfig)


def _check_dynamic_conversions(model, mapping):
    # what torch's default mapping would convert and tessera cannot yet: refused, never left in float silently
    missing = not_yet_quantizable_module_types(dynamic=True)
    for name, mod in model.named_modules():
        qconfig = getattr(mod, "qconfig", None)
        if qconfig is None:
            continue
        kind = type_before_parametrizations(mod)
        weight_dtype = getattr(qconfig.weight(), "dtype", None)
        if kind in mapping and weight_dtype == _C.qint8:
            continue
        if kind in mapping or kind in missing:
            raise NotImplementedError(f"dynamic quantization of {kind.__name__} ('{name}') with {weight_dtype} "
                                      "weights is not implemented yet; leave it out of qconfig_spec to keep it in "
                                      "float")


def quantize_dynamic(model, qconfig_spec=None, dtype=None, mapping=None, inplace=False):
    """model with its Linear layers (those qconfig_spec selects) replaced by dynamically
    quantized ones: qint8 weights, activations quantized per call. The forms torch also
    has and tessera does not yet (float16 weights, the recurrent layers, the weight-only
    embeddings) raise NotImplementedError when a module would be converted to them."""
    dtype = _C.qint8 if dtype is None else dtype
    if qconfig_spec is None:
        qconfig_spec = _default_dynamic_spec(dtype)
    elif isinstance(qconfig_spec, set):
        qconfig_spec = _default_dynamic_spec(dtype, as_set=qconfig_spec)
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
        _check_dynamic_conversions(model, mapping)
    return convert(model, mapping, inplace=True)


def get_observer_dict(mod, target_dict, prefix=""):
    """Fills target_dict with every activation_post_process under mod, keyed by dotted path."""
    def with_dot(p):
        return p if p == "" else p + "."

    if hasattr(mod, "activation_post_process"):
        target_dict[with_dot(prefix) + "activation_post_process"] = mod.activation_post_process
    for name, child in mod.named_children():
        get_observer_dict(child, target_dict, with_dot(prefix) + name if prefix else name)
