"""tessera.autograd: reverse-mode automatic differentiation, as torch.autograd.

Every op on tensors that require grad records a backward Node; ``backward`` and ``grad``
run the engine (libtessera_autograd) over that graph.
"""
import warnings

from .. import _C
from .grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .function import Function, FunctionCtx, NestedIOFunction, once_differentiable  # noqa: F401
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
from . import graph  # noqa: F401
from . import anomaly_mode  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from . import variable  # noqa: F401
from .variable import Variable  # noqa: F401
# The device kinds of torch's profiler events (torch._C._autograd.DeviceType).
from ._device_type import DeviceType  # noqa: F401
# torch.autograd re-exports the __torch_function__ helpers (torch.overrides).
from ..overrides import handle_torch_function, has_torch_function, is_tensor_like  # noqa: F401,E402

_A = _C._autograd
# One tensor a backward Node saved: grad_fn._raw_saved_<name>, with register_hooks().
SavedTensor = _A.SavedTensor


def _tensor_or_tensors(x):
    if x is None:
        return None
    if isinstance(x, _C.Tensor):
        return (x,)
    return tuple(x)


def _warn_named_grads(grads):
    """torch's warning for a named seed grad, whose names autograd ignores."""
    for g in grads or ():
        if isinstance(g, _C.Tensor) and g.has_names():
            warnings.warn(f"Autograd was passed a named grad tensor with dims {list(g.names)}. Autograd does not yet "
                          "support named tensor semantics, so all names will be ignored. In practice all computed "
                          "gradients will still be correct according to regular tensor semantics.", UserWarning,
                          stacklevel=3)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates into .grad of the graph's leaves (or of ``inputs``) the gradient of
    ``tensors`` seeded with ``grad_tensors``."""
    tensors = _tensor_or_tensors(tensors)
    grads = _tensor_or_tensors(grad_tensors)
    inputs = _tensor_or_tensors(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _warn_named_grads(grads)
    _A.backward(tensors, grads, retain_graph, create_graph, inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, is_grads_batched=False):
    """The gradients of ``outputs`` with respect to ``inputs`` (a tuple), leaving every
    .grad untouched."""
    if is_grads_batched:
        raise NotImplementedError("grad(is_grads_batched=True) is not supported")
    outputs = _tensor_or_tensors(outputs)
    inputs = _tensor_or_tensors(inputs)
    grad_outputs = _tensor_or_tensors(grad_outputs)
    _warn_named_grads(grad_outputs)
    return _A.run_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)


def is_anomaly_enabled():
    return _A.is_anomaly_enabled()


# After grad(): functional's helpers call it.
from . import functional  # noqa: E402,F401
from . import profiler, profiler_util  # noqa: E402,F401
