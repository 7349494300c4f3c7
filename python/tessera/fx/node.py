"""tessera.fx.node: one operation of a Graph, as torch.fx.node.Node.

A node is a placeholder (an input), get_attr (a parameter, buffer or submodule of the
root), call_function, call_module, call_method, or output; its args and kwargs may hold
other nodes, which then list it among their users.
"""
import builtins
import operator
import types
from typing import Any, Callable, Dict, Tuple, Union

__all__ = ["Node", "Target", "Argument", "map_arg", "map_aggregate"]

Target = Union[Callable[..., Any], str]
Argument = Any

_OPCODES = ("placeholder", "get_attr", "call_function", "call_module", "call_method", "output", "root")


def map_aggregate(a, fn):
    """Apply ``fn`` to every leaf of nested tuples, lists, dicts and slices in ``a``."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(elem, fn) for elem in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)  # namedtuples keep their type
    if isinstance(a, list):
        return [map_aggregate(elem, fn) for elem in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply ``fn`` to every Node in ``a`` (nested as map_aggregate walks it)."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _qualified_name(func):
    """A function's importable name (builtins and operator functions by their plain name)."""
    if getattr(builtins, func.__name__, None) is func:
        return func.__name__
    name = func.__name__
    module = getattr(func, "__module__", None) or ""
    if isinstance(func, types.BuiltinFunctionType) and module in ("", None):
        module = "tessera"
    return f"{module}.{name}" if module else name


class Node:
    """One operation in a Graph: ``op``, ``target``, ``args``, ``kwargs``, a unique
    ``name``, the nodes that use it (``users``) and free-form ``meta``."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OPCODES:
            raise ValueError(f"Node op must be one of {_OPCODES}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type {type(target)} but a "
                             "Callable is expected")
        if op in ("placeholder", "get_attr", "call_module", "call_method", "output") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type {type(target)} but a "
                             "str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: Dict["Node", None] = {}
        self._args: Tuple = ()
        self._kwargs: Dict[str, Any] = {}
        self.users: Dict["Node", None] = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta: Dict[str, Any] = {}
        self._update_args_kwargs(map_arg(args, lambda x: x), map_arg(kwargs, lambda x: x))

    # ---- ordering (a doubly linked list rooted at the graph's sentinel)
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def prepend(self, x: "Node"):
        """Move ``x`` to just before this node."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: "Node"):
        """Move ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # ---- arguments
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(map_arg(a, lambda x: x), self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, map_arg(k, lambda x: x))

    @property
    def all_input_nodes(self):
        """The nodes this one reads, in first-use order."""
        return list(self._input_nodes.keys())

    def _update_args_kwargs(self, new_args, new_kwargs):
        self._args, self._kwargs = tuple(new_args), dict(new_kwargs)
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        map_arg(self._args, lambda n: self._input_nodes.setdefault(n))
        map_arg(self._kwargs, lambda n: self._input_nodes.setdefault(n))
        for node in self._input_nodes:
            node.users.setdefault(self)

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        kwargs = dict(self.kwargs)
        kwargs[key] = arg
        self.kwargs = kwargs

    def replace_all_uses_with(self, replace_with: "Node", delete_user_cb=lambda user: True):
        """Make every user of this node read ``replace_with`` instead; the users changed."""
        changed = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            changed.append(user)
            user._update_args_kwargs(map_arg(user.args, lambda n: replace_with if n is self else n),
                                     map_arg(user.kwargs, lambda n: replace_with if n is self else n))
        return changed

    def replace_input_with(self, old_input: "Node", new_input: "Node"):
        self._update_args_kwargs(map_arg(self.args, lambda n: new_input if n is old_input else n),
                                 map_arg(self.kwargs, lambda n: new_input if n is old_input else n))

    def is_impure(self):
        """Whether removing the node could change the program (placeholders, outputs and
        in-place calls are kept by dead-code elimination)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_method":
            return isinstance(self.target, str) and self.target.endswith("_") and not self.target.endswith("__")
        if self.op == "call_function":
            name = getattr(self.target, "__name__", "")
            return self.target in _SIDE_EFFECTFUL or (name.endswith("_") and not name.endswith("__"))
        if self.op == "call_module":
            return False
        return False

    # ---- printing
    def _pretty_print_target(self, target):
        if isinstance(target, str):
            return target
        if hasattr(target, "__module__") and hasattr(target, "__name__"):
            if target.__module__ == "builtins":
                return f"builtins.{target.__name__}"
            if target.__module__ == "_operator":
                return f"operator.{target.__name__}"
        return _qualified_name(target) if callable(target) else str(target)

    def format_node(self):
        """One line of Graph.__str__: ``%name : [#users=n] = op[target=...](args = ..., kwargs = ...)``."""
        if self.op == "placeholder":
            arg_str = self.target
            if self.args:
                arg_str += f" = {self.args[0]!r}"
            return f"%{self.name} : [#users={len(self.users)}] = placeholder[target={arg_str}]"
        if self.op == "output":
            return f"return {_format_arg(self.args[0])}"
        return (f"%{self.name} : [#users={len(self.users)}] = {self.op}[target={self._pretty_print_target(self.target)}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self):
        return self.name


_SIDE_EFFECTFUL = {operator.setitem}


def _format_arg(arg):
    """An argument as the graph prints it: nodes as %name, containers spelled out."""
    if isinstance(arg, Node):
        return "%" + arg.name
    if isinstance(arg, tuple):
        inner = ", ".join(_format_arg(a) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return repr(arg)
