"""gradcheck and gradgradcheck: backward formulas checked against central finite
differences (use float64 or complex128 inputs), as torch.autograd.gradcheck does.

Complex tensors are checked through their real views: each complex input that requires
grad becomes view_as_real of it, each complex output view_as_real of it. Under torch's
convention the grad of z = x + iy is dL/dx + i dL/dy, which view_as_real's and
view_as_complex's backwards map to and from the real pair exactly, so the real function's
Jacobian check is the complex (Wirtinger) check of every formula in between."""
from .. import _C


class GradcheckError(RuntimeError):
    """A gradient formula disagrees with finite differences."""


def _as_tuple(x):
    return (x,) if isinstance(x, _C.Tensor) else tuple(x)


def _flat_values(t):
    t = t.detach()
    if t.layout is not _C.strided:  # a sparse grad or output: its Jacobian entries are its dense form's
        t = t.to_dense()
    return [float(v) for v in t.reshape(-1).tolist()]


def _differentiable_outputs(fn, inputs):
    outs = _as_tuple(fn(*inputs))
    return [o for o in outs if isinstance(o, _C.Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)]


def _is_complex(t):
    return isinstance(t, _C.Tensor) and t.dtype.is_complex


def _as_real_function(func, inputs):
    """(real_func, real_inputs) with the Jacobian of func read on real and imaginary parts;
    (func, inputs) itself when no input or output is complex."""
    complex_inputs = [k for k, t in enumerate(inputs) if _is_complex(t) and t.requires_grad]
    if not complex_inputs and not any(_is_complex(o) for o in _as_tuple(func(*inputs))):
        return func, inputs
    # view_as_real refuses conj() views: an input or output with the conjugate bit is
    # materialised first (differentiably, for outputs).
    real_inputs = tuple(_C.view_as_real(t.detach().resolve_conj()).clone().requires_grad_() if k in complex_inputs
                        else t for k, t in enumerate(inputs))

    def real_func(*args):
        ins = [_C.view_as_complex(a) if k in complex_inputs else a for k, a in enumerate(args)]
        return tuple(_C.view_as_real(o.resolve_conj()) if _is_complex(o) else o for o in _as_tuple(func(*ins)))
    return real_func, real_inputs


def _numerical_jacobian(fn, inputs, wrt, eps):
    """J[k][i][j] = d out_k[j] / d inputs[wrt][i], by central differences."""
    x = inputs[wrt]
    # A detached alias: writing through it perturbs the input without recording anything,
    # while fn itself runs with grad mode as the caller has it (gradgradcheck needs that).
    # Each cell is narrowed dim by dim, a view whatever x's strides (reshape would copy a
    # non-contiguous x and perturb the copy); cells go in row-major order, as grads flatten.
    # A sparse input is perturbed in its specified values only, as torch's gradcheck does
    # for sparse inputs (masked semantics): the rows of unspecified elements stay zero.
    alias, positions = _sparse_cells(x) if x.layout is not _C.strided else (x.detach(), None)
    columns = [None] * x.numel()
    for i in range(alias.numel()):
        cell = alias
        rest = i
        for d in reversed(range(alias.dim())):
            rest, index = divmod(rest, alias.shape[d])
            cell = cell.narrow(d, index, 1)
        orig = float(cell.item())
        cell.fill_(orig + eps)
        plus = [_flat_values(o) for o in _differentiable_outputs(fn, inputs)]
        cell.fill_(orig - eps)
        minus = [_flat_values(o) for o in _differentiable_outputs(fn, inputs)]
        cell.fill_(orig)
        column = [[(p - m) / (2 * eps) for p, m in zip(po, mo)] for po, mo in zip(plus, minus)]
        # (an uncoalesced input may name a position twice: perturbing either entry moves
        # that element by eps, so either column is its derivative, as torch takes it)
        columns[i if positions is None else positions[i]] = column
    sizes = [len(_flat_values(o)) for o in _differentiable_outputs(fn, inputs)]
    columns = [c if c is not None else [[0.0] * n for n in sizes] for c in columns]
    n_out = len(sizes)
    return [[columns[i][k] for i in range(len(columns))] for k in range(n_out)]


def _sparse_cells(x):
    """A sparse input's values (an alias of its member, written in place) and, for each
    element of them, its row-major position in the dense tensor."""
    x = x.detach()
    if x.layout is _C.sparse_coo:
        values, indices = x._values(), x._indices().tolist()
        sparse_sizes = list(x.shape[:len(indices)])
        per_entry = values[0].numel() if values.shape[0] else 1
        positions = []
        for e in range(values.shape[0]):
            linear = 0
            for d, size in enumerate(sparse_sizes):
                linear = linear * size + indices[d][e]
            positions.extend(linear * per_entry + j for j in range(per_entry))
        return values, positions
    # compressed layouts name each element once: number the values, densify, read the numbers back
    values = x.values()
    marker = x.clone()
    marker.values().copy_(_C.arange(1, values.numel() + 1, dtype=_C.float64).reshape(values.shape))
    dense = marker.to_dense().reshape(-1).tolist()
    positions = [0] * values.numel()
    for at, number in enumerate(dense):
        if number:
            positions[int(number) - 1] = at
    return values, positions


def _analytical_jacobian(fn, inputs, wrt_list):
    """J[k][w][i][j] = d out_k[j] / d inputs[wrt_list[w]][i], by one backward per output element."""
    from .. import zeros
    from . import grad as autograd_grad
    outputs = _differentiable_outputs(fn, inputs)
    wrt_tensors = [inputs[w] for w in wrt_list]
    result = []
    for out in outputs:
        per_input = [[[0.0] * out.numel() for _ in range(t.numel())] for t in wrt_tensors]
        for j in range(out.numel()):
            seed = zeros(out.numel(), dtype=out.dtype)
            seed.narrow(0, j, 1).fill_(1.0)
            if not out.requires_grad:
                continue
            grads = autograd_grad((out,), wrt_tensors, (seed.reshape(out.shape),), retain_graph=True,
                                  allow_unused=True)
            for w, g in enumerate(grads):
                if g is None:
                    continue
                for i, v in enumerate(_flat_values(g)):
                    per_input[w][i][j] = v
        result.append(per_input)
    return result


def _check_non_overlapping(t, idx):
    """Refuses an input with a stride-0 dimension (an expand), as torch's gradcheck does.
    The finite differences perturb each element in place through a view of the input, so
    elements that share memory would all move at once and the numerical Jacobian would be
    wrong. Like torch, only stride 0 is caught, not every kind of overlap."""
    if t.layout is not _C.strided:
        return
    if not all(st > 0 or sz <= 1 for st, sz in zip(t.stride(), t.shape)):
        raise RuntimeError(
            f"The {idx}th input has a dimension with stride 0. gradcheck only "
            "supports inputs that are non-overlapping to be able to "
            "compute the numerical gradients correctly. You should call "
            ".contiguous on the input before passing it to gradcheck.")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **unused):
    """Checks func's analytical gradients against finite differences for every input that
    requires grad. Returns True, or raises GradcheckError (False with raise_exception=False)."""
    inputs = _as_tuple(inputs)
    wrt = [i for i, t in enumerate(inputs) if isinstance(t, _C.Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i in wrt:
        if inputs[i].dtype not in (_C.float64, _C.complex128):
            import warnings
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. "
                          "This check will likely fail if all the inputs are not of double precision floating point.")
        _check_non_overlapping(inputs[i], i)
    func, inputs = _as_real_function(func, inputs)
    analytical = _analytical_jacobian(func, inputs, wrt)
    for w, i in enumerate(wrt):
        numerical = _numerical_jacobian(func, inputs, i, eps)
        for k, num_k in enumerate(numerical):
            ana_k = analytical[k][w]
            for a_row, n_row in zip(ana_k, num_k):
                for a, n in zip(a_row, n_row):
                    if not abs(a - n) <= atol + rtol * abs(n):
                        msg = (f"Jacobian mismatch for output {k} with respect to input {i},\n"
                               f"numerical:{num_k}\nanalytical:{ana_k}\n")
                        if raise_exception:
                            raise GradcheckError(msg)
                        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **unused):
    """gradcheck of the gradient itself: differentiates func's backward (create_graph=True)
    with respect to the inputs and to the seeds grad_outputs (random when not given)."""
    from .. import randn
    from . import grad as autograd_grad
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(randn(tuple(o.shape), dtype=o.dtype).requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    wrt = [i for i, t in enumerate(inputs) if isinstance(t, _C.Tensor) and t.requires_grad]

    def first_grads(*args):
        ins, seeds = args[:n_in], args[n_in:]
        outs = _differentiable_outputs(func, ins)
        grads = autograd_grad(outs, [ins[i] for i in wrt], seeds, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
