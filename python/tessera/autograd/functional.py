"""Higher-order autograd helpers over whole functions, as torch.autograd.functional:
vjp, jvp, jacobian, hessian, vhp and hvp.

Everything is reverse mode. jvp and hvp use the double-backward trick as torch 1.13 does
(the backward of a backward is linear in its grad_outputs, so differentiating it with
respect to them gives the forward-mode product). ``jacobian(vectorize=True)`` gives the
same values as the default, one autograd.grad call per output element: tessera has no
vmap, so the flag is accepted and the rows are looped. ``strategy="forward-mode"`` needs
forward-mode AD, which tessera lacks: it raises NotImplementedError.
"""
import tessera as _t

from . import grad as _grad
from .grad_mode import enable_grad, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _tensors(value, what, fn):
    """(was_tuple, tuple of tensors) for ``value``: a tensor or a tuple of tensors."""
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, _t.Tensor):
            where = f"the value at index {i}" if was_tuple else f"the given {what}"
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but {where} has "
                            f"type {type(item)}.")
    return was_tuple, items


def _unwrap(result, was_tuple):
    """Undoes _tensors' wrapping; ``was_tuple`` may be a pair (outer, inner) for a tuple
    of tuples."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(row[0] for row in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def _fresh(tensors, create_graph, need_graph):
    """New tensor objects for the inputs, so the function's use of them is told apart
    from tensors it captured. With create_graph, inputs that require grad stay attached
    (a view) so the result can be differentiated back to them."""
    out = []
    for x in tensors:
        if create_graph and x.requires_grad:
            out.append(x.clone() if x.is_sparse else x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(tensors, create_graph):
    """Detaches results (recursively through tuples) unless a graph was asked for."""
    if isinstance(tensors[0], _t.Tensor):
        return tensors if create_graph else tuple(x.detach() for x in tensors)
    return tuple(_finish(x, create_graph) for x in tensors)


def _check_v(v, like, like_is_tuple):
    if len(v) != len(like):
        if like_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.size() != b.size():
            prefix = f"Entry {i} in " if like_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.size()} but got {a.size()}.")


_STRICT_NO_GRAD = {
    "outputs": "Output {} of the user-provided function does not require gradients. The outputs must be computed in a "
               "differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {} is independent of the inputs of the user-provided function. "
                   "This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {} is independent of the input. This is not allowed in strict mode. You should ensure that your "
                "function is twice differentiable and that the jacobian depends on the inputs (this would be violated "
                "by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {} is independent of the input. This "
               "is not allowed in strict mode. You should ensure that your function is thrice differentiable and that "
               "the hessian depends on the inputs.",
}


def _strict_requires_grad(tensors, kind, strict):
    """In strict mode, every tensor must exist and require grad; ``kind`` picks the
    message."""
    if not strict:
        return
    for i, x in enumerate(tensors):
        if x is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not x.requires_grad:
            raise RuntimeError(_STRICT_NO_GRAD[kind].format(i))


def _grads(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad (others contribute nothing);
    None for every input when none does."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    outs, gouts = zip(*kept)
    return _grad(outs, inputs, gouts, retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {}. This is not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _zeros_for_none(grads, like, strict, create_graph, stage):
    """Replaces missing gradients by zeros shaped as ``like`` (or, in strict mode,
    raises with the message for ``stage``)."""
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i))
            g = _t.zeros_like(like[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _prepare(fn_name, inputs, v, create_graph, v_default_text):
    """Shared first step of the product functions: fresh inputs and a checked v."""
    inputs_tuple, inputs = _tensors(inputs, "inputs", fn_name)
    inputs = _fresh(inputs, create_graph, need_graph=True)
    if v is not None:
        _, v = _tensors(v, "v", fn_name)
        v = _fresh(v, create_graph, need_graph=False)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError(v_default_text)
    return inputs_tuple, inputs, v


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at ``inputs``.

    ``v`` matches func's output (it may be omitted when that is a single one-element
    tensor). Inputs the output does not depend on get zeros, or an error with
    ``strict=True``. With ``create_graph=True`` the results can be differentiated further.
    """
    with enable_grad():
        inputs_tuple, inputs = _tensors(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _tensors(func(*inputs), "outputs of the user-provided function", "vjp")
        _strict_requires_grad(outputs, "outputs", strict)
        if v is not None:
            _, v = _tensors(v, "v", "vjp")
            v = _fresh(v, create_graph, need_graph=False)
            _check_v(v, outputs, outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
    with set_grad_enabled(True if create_graph else _t.is_grad_enabled()):
        result = _zeros_for_none(_grads(outputs, inputs, v, create_graph=create_graph), inputs, strict, create_graph,
                                 "back")
    return (_unwrap(_finish(outputs, create_graph), outputs_tuple),
            _unwrap(_finish(result, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product at ``inputs``.

    ``v`` matches ``inputs`` (it may be omitted when that is a single one-element tensor).
    Computed by the double-backward trick: the gradient of the inputs' gradient with
    respect to a dummy grad_output.
    """
    with enable_grad():
        inputs_tuple, inputs, v = _prepare(
            "jvp", inputs, v, create_graph,
            "The vector v can only be None if the input to the user-provided function is a single Tensor with a "
            "single element.")
        if v is not None:
            _check_v(v, inputs, inputs_tuple)
        outputs_tuple, outputs = _tensors(func(*inputs), "outputs of the user-provided function", "jvp")
        _strict_requires_grad(outputs, "outputs", strict)
        # Any finite value serves: the backward is linear in it, so it drops out.
        dummies = tuple(_t.zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grads(outputs, inputs, dummies, create_graph=True)
        _strict_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else _t.is_grad_enabled()):
        result = _zeros_for_none(_grads(grad_inputs, dummies, v, create_graph=create_graph), outputs, strict,
                                 create_graph, "back_trick")
    return (_unwrap(_finish(outputs, create_graph), outputs_tuple),
            _unwrap(_finish(result, create_graph), outputs_tuple))


def _forward_mode_unavailable(func, inputs, strict, vectorize):
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    _tensors(inputs, "inputs", "jacobian")
    if not vectorize:
        # "isonly" (sic) is torch 1.13's text, kept so code matching it works alike.
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                  "implemented for `vectorize=True`.")
    raise NotImplementedError('jacobian(strategy="forward-mode"): tessera has no forward-mode AD (no dual tensors, '
                              'no vmap); use strategy="reverse-mode", which gives the same Jacobian.')


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``.

    One input and one output give a tensor of shape ``output.shape + input.shape``; a
    tuple on either side gives a tuple, and tuples on both sides a tuple of tuples where
    ``[i][j]`` is output i against input j. Inputs an output does not depend on get
    zeros (an error with ``strict=True``). ``vectorize=True`` is accepted and gives the
    same values (tessera loops the rows; it has no vmap); it cannot be combined with
    ``strict``. ``strategy="forward-mode"`` raises NotImplementedError: tessera has no
    forward-mode AD.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        _forward_mode_unavailable(func, inputs, strict, vectorize)

    with enable_grad():
        inputs_tuple, inputs = _tensors(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _tensors(func(*inputs), "outputs of the user-provided function", "jacobian")
        _strict_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")

        rows = []
        for i, out in enumerate(outputs):
            per_input = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.nelement()):
                row = _grads((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, x) in enumerate(zip(row, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")
                        g = _t.zeros_like(x)
                    elif strict and create_graph and not g.requires_grad:
                        # torch numbers this message by the output (i), not the input.
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                           "This is not allowed in strict mode when create_graph=True.")
                    per_input[j].append(g)
            rows.append(tuple(_stack_rows(gs, out, x) for gs, x in zip(per_input, inputs)))
        return _unwrap(_finish(tuple(rows), create_graph), (outputs_tuple, inputs_tuple))


def _stack_rows(grads, out, x):
    # An output with no elements leaves ``grads`` empty and stack raises, as in torch.
    return _t.stack(grads, dim=0).view(tuple(out.shape) + tuple(x.shape))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of the scalar function ``func`` at ``inputs``: the Jacobian of its
    gradient. One input gives a tensor of shape ``input.shape * 2``; a tuple gives a tuple
    of tuples where ``[i][j]`` pairs inputs i and j. ``strict``, ``create_graph`` and
    ``vectorize`` as for jacobian; ``outer_jacobian_strategy="forward-mode"`` raises
    NotImplementedError (no forward-mode AD in tessera)."""
    inputs_tuple, inputs = _tensors(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*xs):
        out = func(*xs)
        out_tuple, outs = _tensors(out, "outputs of the user-provided function", "hessian")
        _strict_requires_grad(outs, "outputs", strict)
        if out_tuple or not isinstance(out, _t.Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def gradient(*xs):
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(x.requires_grad_(True) for x in xs)
        jac = jacobian(scalar_func, xs, create_graph=True)
        _strict_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                      strategy=outer_jacobian_strategy)
    return _unwrap(result, (inputs_tuple, inputs_tuple))


def _scalar_output(fn_name, func, inputs, strict):
    outputs_tuple, outputs = _tensors(func(*inputs), "outputs of the user-provided function", fn_name)
    _strict_requires_grad(outputs, "outputs", strict)
    if outputs_tuple or not isinstance(outputs[0], _t.Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return outputs_tuple, outputs


_V_FOR_ONE_ELEMENT = ("The vector v can only be None if the input to the user-provided function is a single Tensor "
                      "with a single element.")


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function: the gradient of (gradient . v)."""
    with enable_grad():
        inputs_tuple, inputs, v = _prepare("vhp", inputs, v, create_graph, _V_FOR_ONE_ELEMENT)
        if v is not None:
            _check_v(v, inputs, inputs_tuple)
        outputs_tuple, outputs = _scalar_output("vhp", func, inputs, strict)
        jac = _grads(outputs, inputs, create_graph=True)
        _strict_requires_grad(jac, "jacobian", strict)
    with set_grad_enabled(True if create_graph else _t.is_grad_enabled()):
        result = _zeros_for_none(_grads(jac, inputs, v, create_graph=create_graph), inputs, strict, create_graph,
                                 "double_back")
    return (_unwrap(_finish(outputs, create_graph), outputs_tuple),
            _unwrap(_finish(result, create_graph), inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function, by the double-backward trick over the
    gradient. Equal to vhp for twice continuously differentiable functions (where vhp
    is cheaper)."""
    with enable_grad():
        inputs_tuple, inputs, v = _prepare("hvp", inputs, v, create_graph, _V_FOR_ONE_ELEMENT)
        if v is not None:
            _check_v(v, inputs, inputs_tuple)
        outputs_tuple, outputs = _scalar_output("hvp", func, inputs, strict)
        jac = _grads(outputs, inputs, create_graph=True)
        _strict_requires_grad(jac, "jacobian", strict)
        dummies = tuple(_t.zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _grads(jac, inputs, dummies, create_graph=True)
        _strict_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else _t.is_grad_enabled()):
        result = _zeros_for_none(_grads(double_back, dummies, v, create_graph=create_graph), inputs, strict,
                                 create_graph, "double_back_trick")
    return (_unwrap(_finish(outputs, create_graph), outputs_tuple),
            _unwrap(_finish(result, create_graph), inputs_tuple))
