"""tessera.func: torch.func's function transforms over tessera's tape autograd: grad,
grad_and_value, vjp, jacrev, jvp, jacfwd, hessian and functional_call, with torch's
argument forms (argnums, has_aux, pytrees of tensors) and errors.

How they are built: each call of a transformed function runs `func` on aliases of its
inputs that require grad and differentiates the recorded graph (create_graph while grad
mode is on, so transforms nest: grad(grad(f)) is the second derivative). jvp and jacfwd
use reverse mode too, by the double-vjp trick (the vjp is linear in its cotangent, and
the vjp of that is the jvp), until forward-mode AD lands: the values are the same, the
cost is a second backward pass. Results are cut from this call's graph; at the outermost
call they keep a graph only when an input required grad (as torch.func composes with
autograd). A tensor captured by `func` from an enclosing scope that requires grad is not
seen as such at the outermost call: the result does not reach it.

vmap (the Batched dispatch key) and functionalize (the Functionalize key) are not there
yet: they raise NotImplementedError."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Optional, Tuple, Union

from .. import Tensor, enable_grad, is_grad_enabled, stack, zeros, zeros_like
from ..utils import _pytree as pytree

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call", "vmap",
           "functionalize"]

# How many transformed calls are running (nested transforms differentiate again).
_depth = 0


@contextlib.contextmanager
def _level():
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _check_tensors(leaves, what="Thing passed to transform API"):
    for leaf in leaves:
        if not _is_tensor(leaf):
            raise ValueError(f"{what} must be Tensor, got {type(leaf)}")


def _spec_str(spec) -> str:
    """A pytree structure as torch's messages print it: * per leaf, (..) [..] {..} around."""
    if isinstance(spec, pytree.LeafSpec):
        return "*"
    children = [_spec_str(c) for c in spec.children_specs]
    if spec.type is dict:
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(spec.context, children)) + "}"
    if spec.type is list:
        return "[" + ", ".join(children) + "]"
    if spec.type is tuple:
        return "(" + ", ".join(children) + ("," if len(children) == 1 else "") + ")"
    return f"{spec.type.__name__}(" + ", ".join(children) + ")"


def _alias(x):
    """x as this level's input: a differentiable alias when x already has a graph above
    this level, else a new leaf."""
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_()


def _keep_graph(inputs) -> bool:
    """Whether results must stay differentiable: inside another transform, or when an
    input of the outermost call requires grad (and grad mode is on outside the call:
    the transform itself records whatever the caller's mode, as torch.func does)."""
    return is_grad_enabled() and (_depth > 1 or any(t.requires_grad for t in inputs))


def _versions(aliases):
    return [a._version for a in aliases]


def _check_not_modified(aliases, before):
    # (an in-place change of an input being differentiated would be differentiated as the
    # changed tensor: torch.func refuses it as autograd refuses an in-place leaf)
    if _versions(aliases) != before:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _call_on_aliases(func, argnums, args, kwargs, has_aux, api):
    """func called with the arguments at argnums replaced by this level's aliases:
    (aliases, their pytree spec, keep, output, aux)."""
    selected_argnums = _check_argnums(argnums, len(args))
    flat, spec = pytree.tree_flatten(_selected(args, selected_argnums))
    _check_tensors(flat)
    keep = _keep_graph(flat)
    with enable_grad():
        aliases = [_alias(x) for x in flat]
        before = _versions(aliases)
        output = func(*_replace(args, selected_argnums, pytree.tree_unflatten(aliases, spec)), **kwargs)
    _check_not_modified(aliases, before)
    aux = None
    if has_aux:
        output, aux = _has_aux_output(output, api)
    return aliases, spec, keep, output, aux


def _finish(tensors, keep):
    return [t if keep or t is None else t.detach() for t in tensors]


def _autograd_grad(outputs, inputs, grad_outputs, create_graph, retain_graph=None):
    from .. import autograd
    with enable_grad():
        grads = autograd.grad(outputs, inputs, grad_outputs, retain_graph=retain_graph, create_graph=create_graph,
                              allow_unused=True)
    return [g if g is not None else zeros_like(x) for g, x in zip(grads, inputs)]


# ---------------------------------------------------------------- argnums

def _check_argnums(argnums, nargs):
    if isinstance(argnums, int):
        if not -nargs <= argnums < nargs:
            raise RuntimeError(f"Got argnum={argnums}, but only {nargs} positional inputs")
        return argnums % nargs
    if not isinstance(argnums, tuple) or not all(isinstance(a, int) for a in argnums):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    wrapped = tuple(_check_argnums(a, nargs) for a in argnums)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {wrapped}")
    return wrapped


def _selected(args, argnums):
    return tuple(args[a] for a in argnums) if isinstance(argnums, tuple) else args[argnums]


def _replace(args, argnums, values):
    out = list(args)
    if isinstance(argnums, tuple):
        for a, v in zip(argnums, values):
            out[a] = v
    else:
        out[argnums] = values
    return tuple(out)


def _has_aux_output(output, api):
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _detached_aux(aux, keep):
    return aux if keep else pytree.tree_map(lambda x: x.detach() if _is_tensor(x) else x, aux)


# ---------------------------------------------------------------- grad

def grad_and_value(func: Callable, argnums: Union[int, Tuple[int, ...]] = 0, has_aux: bool = False) -> Callable:
    """A function returning (gradient of func's scalar output with respect to the
    arguments at `argnums`, that output); with has_aux, func returns (output, aux) and
    the result is ((gradient, (output, aux))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _level():
            aliases, spec, keep, output, aux = _call_on_aliases(func, argnums, args, kwargs, has_aux,
                                                                "grad_and_value(f)(*args)")
            if not _is_tensor(output):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                                   "APIs instead?")
            grads = _autograd_grad([output], aliases, None, create_graph=keep) if output.requires_grad else \
                [zeros_like(x) for x in aliases]
            grads = pytree.tree_unflatten(_finish(grads, keep), spec)
            value = output if keep else output.detach()
            if has_aux:
                return grads, (value, _detached_aux(aux, keep))
            return grads, value
    return wrapper


def grad(func: Callable, argnums: Union[int, Tuple[int, ...]] = 0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of func's scalar output with respect to the
    arguments at `argnums` (a pytree like them); with has_aux, (gradient, aux)."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


# ---------------------------------------------------------------- vjp

def _check_outputs(flat_out, api):
    for o in flat_out:
        if not _is_tensor(o):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def vjp(func: Callable, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn) where vjp_fn(cotangents) gives the vector-Jacobian
    products with respect to each primal (a tuple like primals); vjp_fn may be called
    more than once. With has_aux, func returns (output, aux) and a third item is aux."""
    with _level():
        aliases, spec, keep, output, aux = _call_on_aliases(func, tuple(range(len(primals))) if primals else 0,
                                                            primals, {}, has_aux, "vjp(f, *primals)")
        flat_out, out_spec = pytree.tree_flatten(output)
        _check_outputs(flat_out, "vjp(f, *primals)")

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        flat_cot, cot_spec = pytree.tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {_spec_str(cot_spec)}, "
                               f"primal output: {_spec_str(out_spec)}")
        for i, (c, o) in enumerate(zip(flat_cot, flat_out)):
            if not _is_tensor(c):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(c)}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and output[{i}] "
                                   f"has a shape of {o.shape}.")
        with _level():
            make_graph = (keep or is_grad_enabled() and (_depth > 1 or any(c.requires_grad for c in flat_cot))) \
                if create_graph is None else create_graph
            pairs = [(o, c) for o, c in zip(flat_out, flat_cot) if o.requires_grad]
            if pairs:
                grads = _autograd_grad([o for o, _ in pairs], aliases, [c for _, c in pairs], create_graph=make_graph,
                                       retain_graph=retain_graph)
            else:
                grads = [zeros_like(x) for x in aliases]
            result = pytree.tree_unflatten(_finish(grads, make_graph), spec)
            return result if isinstance(result, tuple) else (result,)

    out_value = pytree.tree_unflatten(_finish(flat_out, keep), out_spec)
    if has_aux:
        return out_value, vjp_fn, _detached_aux(aux, keep)
    return out_value, vjp_fn


# ---------------------------------------------------------------- jvp

def _jvp_flat(func, flat, spec, flat_tangents, has_aux, api):
    """(flat outputs, their spec, flat jvps, aux, keep for the outputs) by the double-vjp
    trick; the jvps keep a graph also when only the tangents require grad."""
    keep_primal = _keep_graph(flat)
    keep = _keep_graph(list(flat) + list(flat_tangents))
    with enable_grad():
        aliases = [_alias(x) for x in flat]
        before = _versions(aliases)
        output = func(*pytree.tree_unflatten(aliases, spec))
    _check_not_modified(aliases, before)
    aux = None
    if has_aux:
        output, aux = _has_aux_output(output, api)
    flat_out, out_spec = pytree.tree_flatten(output)
    _check_outputs(flat_out, api)
    # u -> J^T u is linear in u: its vjp with cotangent t is J t
    live = [i for i, o in enumerate(flat_out) if o.requires_grad]
    jvps = [zeros_like(o) for o in flat_out]
    if live:
        from .. import autograd
        with enable_grad():
            dummies = [zeros_like(flat_out[i]).requires_grad_() for i in live]
            vjps = autograd.grad([flat_out[i] for i in live], aliases, dummies, create_graph=True, allow_unused=True)
            used = [(v, t) for v, t in zip(vjps, flat_tangents) if v is not None and v.requires_grad]
            if used:
                back = autograd.grad([v for v, _ in used], dummies, [t for _, t in used], create_graph=keep,
                                     allow_unused=True)
                for i, b in zip(live, back):
                    if b is not None:
                        jvps[i] = b
    return flat_out, out_spec, _finish(jvps, keep), aux, keep_primal


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), the Jacobian-vector product of func at primals with tangents):
    primals is a tuple (of pytrees) of tensors, tangents one like it. strict is accepted
    and has no effect, as in torch."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to call "
                           "f(*primals).")
    flat, spec = pytree.tree_flatten(primals)
    flat_tangents, tangent_spec = pytree.tree_flatten(tangents)
    if spec != tangent_spec:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {spec!r} and tangents with structure "
                           f"{tangent_spec!r}")
    for what, leaves in (("primals", flat), ("tangents", flat_tangents)):
        if not leaves:
            raise RuntimeError(f"jvp(f, primals, tangents): Expected {what} to contain at least one Tensor.")
        for leaf in leaves:
            if not _is_tensor(leaf):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected {what} to only contain Tensors, got "
                                   f"{type(leaf)}")
    for p, t in zip(flat, flat_tangents):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
    with _level():
        flat_out, out_spec, jvps, aux, keep = _jvp_flat(func, flat, spec, flat_tangents, has_aux,
                                                        "jvp(f, primals, tangents)")
    result = (pytree.tree_unflatten(_finish(flat_out, keep), out_spec), pytree.tree_unflatten(jvps, out_spec))
    return result + (_detached_aux(aux, keep),) if has_aux else result


# ---------------------------------------------------------------- Jacobians

def _jacobian(func, argnums, has_aux, api, chunk_size=None):
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _level():
            aliases, spec, keep, output, aux = _call_on_aliases(func, argnums, args, kwargs, has_aux, api)
            flat_out, out_spec = pytree.tree_flatten(output)
            _check_outputs(flat_out, api)
            # one backward pass per output element: row r of d(out)/d(inputs)
            per_output = []
            for o in flat_out:
                rows = [[] for _ in aliases]
                with enable_grad():  # (the rows are taken under the transform's own grad mode)
                    flat_o = o.reshape(-1)
                    elements = [flat_o[r] for r in range(flat_o.numel())]
                for element in elements:
                    if o.requires_grad:
                        g = _autograd_grad([element], aliases, None, create_graph=keep, retain_graph=True)
                    else:
                        g = [zeros_like(x) for x in aliases]
                    for k, gk in enumerate(g):
                        rows[k].append(gk)
                jac = []
                for k, x in enumerate(aliases):
                    shape = tuple(o.shape) + tuple(x.shape)
                    j = stack(rows[k]).reshape(shape) if rows[k] else zeros(shape, dtype=o.dtype)
                    jac.append(j if keep else j.detach())
                per_output.append(pytree.tree_unflatten(jac, spec))
            result = pytree.tree_unflatten(per_output, out_spec)
            if has_aux:
                return result, _detached_aux(aux, keep)
            return result
    return wrapper


def jacrev(func: Callable, argnums: Union[int, Tuple[int, ...]] = 0, *, has_aux: bool = False,
           chunk_size: Optional[int] = None, _preallocate_and_copy: bool = False) -> Callable:
    """A function returning the Jacobian of func with respect to the arguments at
    `argnums`, by reverse mode: for each output (a pytree leaf) a tensor of shape
    output.shape + input.shape per input (a pytree like the selected arguments)."""
    return _jacobian(func, argnums, has_aux, "vjp(f, *primals)", chunk_size)


def jacfwd(func: Callable, argnums: Union[int, Tuple[int, ...]] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """jacrev's Jacobian in jacfwd's form (torch computes it by forward mode; here the
    values come from reverse mode until forward-mode AD lands). randomness is accepted as
    torch's ('error', 'different', 'same'): without vmap every column sees the same call."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    return _jacobian(func, argnums, has_aux, "jvp(f, primals, tangents)")


def hessian(func: Callable, argnums: Union[int, Tuple[int, ...]] = 0) -> Callable:
    """The Hessian of func's output with respect to the arguments at `argnums`:
    jacfwd(jacrev(func, argnums), argnums)."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------- modules

def functional_call(module, parameter_and_buffer_dicts, args, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """module(*args, **kwargs) computed with the tensors of parameter_and_buffer_dicts (a
    dict of names as named_parameters/named_buffers give them, or a tuple or list of such
    dicts) in place of the module's own; the module is left as it was. With tie_weights, a
    tensor given for one name of a tied parameter stands for all its names; with strict,
    every parameter and buffer must be given, and nothing else."""
    from ..nn.utils import stateless
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        merged = {}
        for d in parameter_and_buffer_dicts:
            for key, value in d.items():
                if key in merged:
                    raise ValueError(f"{key} appeared in multiple dictionaries; behavior of functional call is "
                                     "ambiguous")
                merged[key] = value
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    owned = list(module.named_parameters(remove_duplicate=False)) + list(module.named_buffers(remove_duplicate=False))
    if tie_weights:
        by_tensor = {}
        for name, tensor in owned:
            by_tensor.setdefault(id(tensor), []).append(name)
        for names in by_tensor.values():
            given = [n for n in names if n in merged]
            if len(names) < 2 or not given:
                continue
            values = {id(merged[n]) for n in given}
            if len(values) > 1:
                raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, which are tied. "
                                 "Consider using tie_weights=False")
            for n in names:
                merged.setdefault(n, merged[given[0]])
    if strict:
        names = {name for name, _ in owned}
        missing = sorted(names - set(merged))
        unexpected = sorted(set(merged) - names)
        if missing or unexpected:
            lines = []
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                lines.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(lines))
    return stateless.functional_call(module, merged, args, kwargs)


# ---------------------------------------------------------------- not there yet

def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None) -> Callable:
    """torch.func.vmap: needs the Batched dispatch key and its batching rules, which
    tessera does not have yet."""
    raise NotImplementedError("tessera.func.vmap is not available yet: it needs the Batched dispatch key "
                              "(batching rules per operator), which tessera does not have")


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """torch.func.functionalize: needs the Functionalize dispatch key, which tessera does
    not have yet."""
    raise NotImplementedError("tessera.func.functionalize is not available yet: it needs the Functionalize dispatch "
                              "key, which tessera does not have")
