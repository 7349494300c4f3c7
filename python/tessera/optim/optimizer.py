"""optim.Optimizer: parameter groups, per-parameter state, zero_grad and the
state_dict / load_state_dict format torch uses (state keyed by parameter index, groups
listing indices). Subclasses write step() with the multi-tensor _foreach_* operators."""
from collections import defaultdict
import copy
import itertools

from .. import _C
from ..autograd.grad_mode import no_grad

Tensor = _C.Tensor

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """The default of an argument the caller must give (SGD's lr in torch 1.13)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class: Optimizer(params, defaults). params is an iterable of tensors or of dicts
    (parameter groups with their own options)."""

    _txn = None  # the _StepTransaction of the step under way (_run_step sets it)
    _originals = {}  # id(real view) -> complex parameter, during a step (_run_step sets it)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        self._optimizer_step_pre_hooks = {}
        self._optimizer_step_post_hooks = {}
        self._hook_ids = itertools.count()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", {})
        self.__dict__.setdefault("_optimizer_step_post_hooks", {})
        self.__dict__.setdefault("_hook_ids", itertools.count())

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\nParameter Group {0}".format(i)
            for key in sorted(group.keys()):
                if key != "params":
                    text += "\n    {0}: {1}".format(key, group[key])
        return text + "\n)"

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError("param_group must be a dict, but got " + type(param_group).__name__)
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization parameter "
                                 + name)
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        # set_to_none=True is current torch's default (1.13: False).
        with no_grad():
            grads = []
            for group in self.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if set_to_none:
                        p.grad = None
                    else:
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        grads.append(g)
            if grads:
                _C._foreach_zero_(grads)

    def step(self, closure=None):
        """One update of every parameter group. The built-in optimizers define
        _update_group(group, params, grads); a subclass of its own overrides step()."""
        update = getattr(self, "_update_group", None)
        if update is None:
            raise NotImplementedError(type(self).__name__ + ".step() is not implemented")
        return self._run_step(update, closure)

    # ------------------------------------------------------------ for the subclasses

    def _setstate_defaults(self, state, extra=(), capturable=True):
        """__setstate__ for the subclasses: options an older pickle or state_dict lacks get
        their defaults (`extra`, then the flags every optimizer has; SGD and Adagrad have no
        'capturable'), and Python-number steps become tensors."""
        Optimizer.__setstate__(self, state)
        keys = tuple(extra) + (_FLAG_DEFAULTS if capturable else _FLAG_DEFAULTS[:3])
        for group in self.param_groups:
            for key, value in keys:
                group.setdefault(key, value)
        _tensor_steps(self)

    def _group_state(self, params, names, init=None, guard=True):
        """The state a step reads: one list per buffer name (across `params`), then the list
        of 'step' tensors, advanced by one. A parameter's first step creates its state: 'step'
        0 and zero buffers shaped like it, except the entries init (name -> fn(param)) makes.
        guard: the update writes the parameters and buffers in place with allocations in
        between (the _foreach_* paths), so the step keeps copies to restore if one fails;
        a fused update (one allocation-free call) passes False and goes through
        self._txn.defer. Called from _update_group only, inside _run_step's transaction."""
        txn = self._txn
        # (real parameters only, the common case: no lookups, no views per buffer)
        originals = [self._originals.get(id(p), p) for p in params] if self._originals else params
        states = [self.state[p] for p in originals]
        if not all(states):
            for p, state in zip(originals, states):
                if not state:
                    txn.created(state, "step", *names)
                    _fill_state(state, p, names, init)
        # A complex parameter's buffers are complex, as torch keeps them; the update sees
        # their real views, as it sees the parameter's.
        buffers = [[s[name] for s in states] for name in names]
        if self._originals:
            buffers = [[_real_view(b) for b in column] for column in buffers]
        if guard:
            txn.guard(params, *buffers)
        steps = [s["step"] for s in states]
        txn.advanced(steps, _advance(steps))
        return buffers + [steps]

    # ------------------------------------------------------------ hooks

    def register_step_pre_hook(self, hook):
        return _HookHandle(self._optimizer_step_pre_hooks, next(self._hook_ids), hook)

    def register_step_post_hook(self, hook):
        return _HookHandle(self._optimizer_step_post_hooks, next(self._hook_ids), hook)

    # Whether a complex parameter updates through view_as_real (of it, its grad and its
    # state), as current torch's optimizers do: the elementwise arithmetic then treats the
    # real and imaginary parts as two real parameters. False where the update is linear in
    # the parameter and grad (SGD: the same either way) or the optimizer has its own rule.
    _complex_as_real = True

    def _run_step(self, update, closure):
        """step()'s frame for the subclasses: hooks, the closure under enable_grad, and
        update(group, params, grads) for each group with at least one grad, under no_grad."""
        for hook in list(self._optimizer_step_pre_hooks.values()):
            hook(self, (), {})
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        # One step is all or nothing: an error in any group (an OutOfMemoryError from an
        # allocation half-way) restores every parameter and state entry it had touched.
        with no_grad():
            txn = self._txn = _StepTransaction()
            try:
                for group in self.param_groups:
                    params, grads = _params_with_grad(group)
                    if not params:
                        continue
                    if self._complex_as_real and any(p.is_complex() for p in params):
                        views = [_real_view(p) for p in params]
                        self._originals = {id(v): p for v, p in zip(views, params) if v is not p}
                        # (a grad may be a conj() view, which view_as_real refuses; grads are only read)
                        params, grads = views, [_real_view(g.resolve_conj()) for g in grads]
                    update(group, params, grads)
                    self._originals = {}
                for fn, args, kwargs in txn.deferred:
                    fn(*args, **kwargs)
            except BaseException:
                txn.rollback()
                raise
            finally:
                self._txn = None
                self._originals = {}
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, (), {})
        return loss

    # ------------------------------------------------------------ state_dict

    def state_dict(self):
        """{'state': {index: state}, 'param_groups': [group with 'params': [indices]]}; the
        tensors are the optimizer's own (not copies), as in torch."""
        index_of = {}
        next_index = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ids = []
            for p in group["params"]:
                if id(p) not in index_of:
                    index_of[id(p)] = next_index
                    next_index += 1
                ids.append(index_of[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index_of[id(p)]: s for p, s in _state_items(self.state) if id(p) in index_of}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        state_dict = copy.deepcopy(_shallow_tensors(state_dict))
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {old: p for old, p in zip(itertools.chain.from_iterable(s["params"] for s in saved_groups),
                                           itertools.chain.from_iterable(g["params"] for g in groups))}

        def cast(param, value, key=None):
            # Floating state follows its parameter's dtype, except 'step' (torch keeps it float32).
            if isinstance(value, Tensor):
                if key != "step" and param.is_floating_point():
                    value = value.to(dtype=param.dtype, device=param.device)
                else:
                    value = value.to(device=param.device)
                return value
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                # LBFGS keeps its curvature history as lists of tensors.
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            merged = dict(saved)
            merged["params"] = group["params"]
            new_groups.append(merged)
        self.__setstate__({"state": state, "param_groups": new_groups})


class _StepTransaction:
    """What one optimizer step changed, to undo it if the step fails: copies of tensors
    updated in place (guard), 'step' counters advanced (undone by subtracting the same
    ones, exact in float32), state entries created. Undoing allocates nothing."""

    def __init__(self):
        self.saved = []      # (tensors, copies)
        self.steps = []      # (steps, ones)
        self.new = []        # (state dict, keys it did not have)
        self.deferred = []   # fused updates, run last

    def guard(self, *tensor_lists):
        """Before in-place writes that later allocations could interrupt: kept copies are
        restored if the step fails."""
        tensors = [t for lst in tensor_lists for t in lst]
        if tensors:
            self.saved.append((tensors, [t.clone() for t in tensors]))

    def advanced(self, steps, ones):
        self.steps.append((steps, ones))

    def defer(self, fn, *args, **kwargs):
        """An allocation-free update (a fused kernel) runs once every group has prepared, so
        that no failure can come after it."""
        self.deferred.append((fn, args, kwargs))

    def created(self, state, *keys):
        """State entries this step adds: a failed step removes them."""
        self.new.append((state, keys))

    def rollback(self):
        for tensors, copies in reversed(self.saved):
            for t, c in zip(tensors, copies):
                t.copy_(c)
        for steps, ones in reversed(self.steps):
            _C._foreach_sub_(steps, ones)
        for state, keys in reversed(self.new):
            for k in keys:
                state.pop(k, None)


class _HookHandle:
    def __init__(self, hooks, key, hook):
        self._hooks, self.id = hooks, key
        hooks[key] = hook

    def remove(self):
        self._hooks.pop(self.id, None)


def _state_items(state):
    return list(state.items())


def _shallow_tensors(state_dict):
    """A copy of the dict structure whose tensors are fresh aliases, so deepcopy clones
    them once and the caller's dict is left alone."""
    return {"state": {k: dict(v) if isinstance(v, dict) else v for k, v in state_dict["state"].items()},
            "param_groups": [dict(g) for g in state_dict["param_groups"]]}


def _typename(obj):
    if isinstance(obj, Tensor):
        return "torch.Tensor"
    return type(obj).__module__ + "." + type(obj).__qualname__ if type(obj).__module__ != "builtins" \
        else type(obj).__name__


def _params_with_grad(group):
    """The group's parameters that have a grad, and those grads."""
    params, grads = [], []
    for p in group["params"]:
        g = p.grad  # each read makes a new Python wrapper: read once
        if g is not None:
            params.append(p)
            grads.append(g)
    return params, grads


_FLAG_DEFAULTS = (("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))


def _fill_state(state, p, names, init=None):
    """A parameter's fresh state: 'step' and the buffers `names`, in that order (the order
    torch's state_dict lists them); init maps a name to fn(p) for entries not zero-filled
    as float32 0 / zeros_like(p)."""
    init = init or {}
    make = init.get("step")
    state["step"] = make(p) if make is not None else _scalar_step()
    for name in names:
        make = init.get(name)
        state[name] = make(p) if make is not None else _C.zeros_like(p, memory_format=_C.preserve_format)


def _advance(steps):
    """steps += 1, in place; returns the ones added, which a failed step subtracts again.
    A list of ones in the steps' own dtype as the operand: tessera's _foreach_add_(tensors,
    scalar) costs about twice as much a tensor (~1 us against ~0.5 us) and gives the same
    values. Steps of mixed dtypes get a one of each's dtype."""
    dtype = steps[0].dtype
    if any(s.dtype is not dtype for s in steps):
        ones = [_C.tensor(1, dtype=s.dtype) for s in steps]
    else:
        ones = [_C.tensor(1, dtype=dtype)] * len(steps)
    _C._foreach_add_(steps, ones)
    return ones


def _decayed_grads(group, params, grads, decoupled=False):
    """The gradients an update follows: negated under maximize, plus weight_decay * param
    (L2 decay); with decoupled decay the parameters shrink by lr * weight_decay instead."""
    if group["maximize"]:
        grads = _C._foreach_neg(grads)
    weight_decay = group["weight_decay"]
    if weight_decay != 0:
        if decoupled:
            _C._foreach_mul_(params, 1 - group["lr"] * weight_decay)
        else:
            grads = _C._foreach_add(grads, params, alpha=weight_decay)
    return grads


def _any_sparse(grads):
    return any(g.is_sparse for g in grads)


def _sparse_like(grad, indices, values):
    """A COO tensor of grad's size over (coalesced) grad's indices with other values: the
    sparse update operand of Adagrad and SparseAdam (the indices are grad's, so they are
    not validated again)."""
    return _C._sparse_coo_tensor_unsafe(indices, values, grad.size())


def _fusable(tensors):
    """Whether a fused update (_fused_adam_, _fused_sgd_) takes these tensors: contiguous
    CPU float32 or float64, one dtype. Read afresh every step (a .data assignment changes a
    parameter's layout in place); the loop is kept to the three cheapest reads a tensor has."""
    dtype = tensors[0].dtype
    if dtype is not _C.float32 and dtype is not _C.float64:
        return False
    for t in tensors:
        if t.dtype is not dtype or not t.is_cpu or not t.is_contiguous():
            return False
    return True


def _by_step(state_steps, *lists):
    """Splits parallel lists by the value of each parameter's step, so that updates whose
    scalars depend on the step (bias corrections) run as one foreach call per distinct
    step (one call in the usual case, every parameter at the same step)."""
    # item() costs ~50 ns a tensor here, well under one stack of the list (~40 us for 100).
    values = [s.item() for s in state_steps]
    first = values[0]
    if values.count(first) == len(values):
        yield first, list(lists)
        return
    buckets = {}
    for i, s in enumerate(values):
        buckets.setdefault(s, []).append(i)
    for step, idx in buckets.items():
        yield step, [[lst[i] for i in idx] for lst in lists]


def _refuse_unsupported(name, differentiable=False, capturable=False):
    """Flags torch accepts that tessera cannot honour: a clear error
    instead of a silently different update."""
    if differentiable:
        raise NotImplementedError(name + "(differentiable=True) is not supported by tessera: its optimizer "
                                  "updates run under no_grad through the _foreach_* operators")
    if capturable:
        raise NotImplementedError(name + "(capturable=True) needs CUDA graphs, which tessera does not have")


def _real_view(t):
    return _C.view_as_real(t) if isinstance(t, _C.Tensor) and t.is_complex() else t


def _scalar_step(value=0.0):
    """'step' as a float32 0-dim tensor, as current torch keeps it (1.13's RMSprop and
    Adadelta kept a Python int; __setstate__ converts those)."""
    return _C.tensor(float(value), dtype=_C.float32)


def _tensor_steps(optimizer):
    for s in optimizer.state.values():
        if "step" in s and not isinstance(s["step"], _C.Tensor):
            s["step"] = _scalar_step(s["step"])
