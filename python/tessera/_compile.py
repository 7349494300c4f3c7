"""tessera.compile: torch.compile's signature with one backend, eager execution.

Tessera has no graph capture (TorchDynamo) nor code generation (Inductor): compile returns
a callable that runs the original function or module as it is, so programs written for
torch 2's compile run unchanged. Every backend name torch ships is accepted and means the
same thing here; a custom backend (a callable that receives a captured FX graph) cannot
work without graph capture and raises NotImplementedError.
"""
import functools

__all__ = ["compile"]

_BACKENDS = ("inductor", "eager", "aot_eager", "aot_eager_decomp_partition", "cudagraphs", "onnxrt", "openxla", "tvm",
             "ipex")
_MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """Returns `model` ready to call: a module as it is (no `_orig_mod` wrapper: its
    state_dict keys stay its own), a function wrapped (functools.wraps) so that calling it
    calls the original. Without `model`, a decorator. Arguments are
    checked as torch does; none changes what runs (see the module note)."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if backend == "inductor" and mode is not None and mode not in _MODES:  # (torch checks modes for inductor)
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if callable(backend) and not disable:
        raise NotImplementedError("tessera.compile: custom backends receive a graph captured by TorchDynamo, which "
                                  "tessera does not have; use a backend name (all run eagerly)")
    if not callable(backend) and backend not in _BACKENDS:
        raise RuntimeError(f"Invalid backend: {backend!r}, expected one of {list(_BACKENDS)}")
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if not callable(model):
        raise RuntimeError("model must be a callable")
    from .nn import Module
    if disable or isinstance(model, Module):
        return model

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)

    compiled._torchdynamo_orig_callable = model
    return compiled
