"""LazyModuleMixin: modules whose parameter shapes come from their first input. Until the
first forward their parameters and buffers are UninitializedParameter/UninitializedBuffer
placeholders; a forward pre-hook then calls initialize_parameters(*input), and the module
turns into its ordinary class (cls_to_become), as torch.nn.modules.lazy does."""
import itertools
import warnings

from ... import _C
from ...autograd.grad_mode import no_grad
from ..parameter import _MaterializedTensor, is_lazy

__all__ = ["LazyModuleMixin"]


def _plain_buffers(module):
    """Swap materialised buffers (a stand-in subclass, see parameter.py) for plain tensors
    aliasing the same data."""
    for name, buf in module._buffers.items():
        if type(buf) is _MaterializedTensor:
            module._buffers[name] = _C.Tensor._make_subclass(_C.Tensor, buf, buf.requires_grad)


class LazyModuleMixin:
    """Mixed in before an ordinary module class; the subclass writes initialize_parameters
    (materialise the placeholders from the input, then reset_parameters) and names the
    class to become in cls_to_become.

    A state_dict of an uninitialised module holds the placeholders; loading real tensors
    into one materialises the placeholders to their shapes first (and the loaded values are
    then kept: the first forward does not re-initialise them)."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)
        warnings.warn("Lazy modules are a new feature under heavy development, so their API and behaviour may "
                      "still change.")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # as Module's, but placeholders go in as they are (they cannot be detached)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if (keep_vars or is_lazy(param)) else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if (keep_vars or is_lazy(buf)) else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        """load_state_dict pre-hook: a placeholder about to receive a real tensor takes that
        tensor's shape first, so the ordinary copy can follow."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if param is None or key not in state_dict:
                continue
            incoming = state_dict[key]
            if is_lazy(param) and not is_lazy(incoming):
                with no_grad():
                    param.materialize(incoming.shape)
        _plain_buffers(self)

    def initialize_parameters(self, *args, **kwargs):
        """Shape and initialise the placeholders from the first forward's arguments."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self):
        """Whether any parameter or buffer is still a placeholder."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, input):
        """The forward pre-hook: initialise from the input, then drop both hooks and become
        cls_to_become."""
        module.initialize_parameters(*input)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        _plain_buffers(module)
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
