"""Gradient clipping as torch.nn.utils: rescale every gradient so that their joint p-norm
stays under a limit (clip_grad_norm_), or clamp each gradient entry (clip_grad_value_)."""
import types
import warnings

import tessera as _t
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, _t.Tensor) else list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` taken together, as if concatenated into one
    vector (a 0-dim tensor; ``tensor(0.)`` when there are none)."""
    # foreach only picks torch's fused multi-tensor kernels; the result is the same either way.
    del foreach
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _t.tensor(0.0)
    with no_grad():
        # The p-norm of the per-tensor p-norms is the p-norm of the concatenation (max for inf),
        # and needs neither a copy of the data nor a loop over elements.
        norms = [_t.linalg.vector_norm(g, norm_type) for g in tensors]
        total_norm = _t.linalg.vector_norm(_t.stack(norms), norm_type)
    if error_if_nonfinite and bool(_t.logical_or(total_norm.isnan(), total_norm.isinf())):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`")
    return total_norm


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients of ``parameters`` by min(1, max_norm / (total_norm + 1e-6))."""
    del foreach
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    with no_grad():
        # Always multiplying (by 1 when under the limit) avoids reading the norm back to decide.
        coef = _t.clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescales, in place, the gradients of ``parameters`` (a tensor or an iterable) so that
    their joint ``norm_type``-norm is at most ``max_norm``; returns the norm before clipping.
    Parameters without a gradient are skipped."""
    if isinstance(parameters, _t.Tensor):
        parameters = [parameters]
    else:
        was_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if was_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps, in place, every gradient of ``parameters`` into [-clip_value, clip_value]."""
    del foreach
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
