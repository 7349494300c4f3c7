"""skip_init, as torch.nn.utils.skip_init: a module built without running its
initialisers (its tensors are allocated, uninitialised, as torch.empty does)."""
import inspect

import tessera as _t

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` built on the meta device (no data, so no
    initialisation) and then given empty storage on ``device`` (default cpu). The class
    must take a ``device`` argument and do no computation on its tensors at
    construction beyond nn.init calls."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    module = module_cls(*args, **kwargs)
    # Module.to_empty(device=final_device), which tessera's Module does not have yet
    return module._apply(lambda t: _t.empty_like(t, device=final_device))
