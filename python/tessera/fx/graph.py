"""tessera.fx.graph: the Graph, an ordered list of Nodes, and the Python code it stands
for (Graph.python_code), as torch.fx.graph.Graph.

Node names are made as torch.fx makes them (the target's name in snake_case, characters
illegal in an identifier replaced by '_', a _1, _2, ... suffix on repeats, builtins and
keywords avoided), so names users pick, such as create_feature_extractor's return nodes,
are the same on both libraries.
"""
import builtins
import contextlib
import inspect
import keyword
import math
import operator
import re

from .node import Node, _format_arg, map_arg

__all__ = ["Graph", "PythonCode"]

_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
          operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
          operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<", operator.rshift: ">>",
          operator.eq: "==", operator.ne: "!=", operator.lt: "<", operator.le: "<=", operator.gt: ">",
          operator.ge: ">="}
_PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}


def _snake_case(s):
    """camelCase -> camel_case, as torch.fx 1.13 names nodes: an underscore only where a
    lower-case letter meets an upper-case one (block1A -> block1a)."""
    chars, prev_lower = [], False
    for c in s:
        if prev_lower and c.isupper():
            chars.append("_")
        chars.append(c.lower())
        prev_lower = c.islower()
    return "".join(chars)


# Names the generated code reads as globals (torch.fx 1.13's "custom builtins"): a node
# never takes one, or its local would shadow the global.
_RESERVED = {"inf", "nan", "NoneType", "torch", "tessera", "device", "fx_pytree", "pytree"}


def _is_magic(x):
    return x.startswith("__") and x.endswith("__")


class _Namespace:
    """Unique Python identifiers for nodes (and for the globals the code refers to)."""

    _illegal = re.compile("[^0-9a-zA-Z_]+")
    _suffix = re.compile(r"(.*)_(\d+)$")

    def __init__(self):
        self._obj_to_name = {}
        self._used = set()

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        candidate = self._illegal.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = self._suffix.match(candidate)
        if match is None:
            base, num = candidate, None
        else:
            base, num = match.group(1), int(match.group(2))
        candidate = base if num is None else f"{base}_{num}"
        num = num if num else 0  # torch.fx 1.13: the lowest free suffix from there
        while candidate in self._used or self._is_illegal(candidate, obj):
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._obj_to_name[obj] = name

    def _is_illegal(self, name, obj):
        if name in keyword.kwlist or name in _RESERVED:
            return True
        if name in builtins.__dict__:
            return obj is not builtins.__dict__[name]
        return False


class _NodeList:
    """Graph.nodes: iterable (also reversed) over the live nodes in order."""

    def __init__(self, graph, direction="_next"):
        self._graph, self._direction = graph, direction

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = getattr(root, self._direction)
        while cur is not root:
            nxt = getattr(cur, self._direction)
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return iter(_NodeList(self._graph, "_prev" if self._direction == "_next" else "_next"))


class PythonCode:
    """Graph.python_code's result: the source of ``forward`` and the globals it reads."""

    def __init__(self, src, globals_):
        self.src, self.globals = src, globals_


class Graph:
    """The operations of a traced program in order; ``python_code`` turns them back into a
    function. Nodes are made with placeholder / get_attr / call_function / call_module /
    call_method / output (or create_node) at the insertion point (the end by default)."""

    def __init__(self, owning_module=None, tracer_cls=None):
        self._root = Node(self, "", "root", "", (), {})
        self._len = 0
        self._namespace = _Namespace()
        self._insert = self._root.prepend
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, module):
        self._owning_module = module

    @property
    def nodes(self):
        return _NodeList(self)

    # ---- building
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """A new node at the insertion point; its name comes from ``name`` or the target."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        candidate = name if name is not None else self._target_to_str(target)
        node = Node(self, self._namespace.create_name(candidate, None), op, target, args, kwargs, type_expr)
        self._namespace.associate_name_with_obj(node.name, node)
        self._insert(node)
        self._len += 1
        return node

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def _target_to_str(self, target):
        if callable(target):
            op = target.__name__
        else:
            op = target
            if _is_magic(op):
                op = op[2:-2]
        return _snake_case(op)

    @contextlib.contextmanager
    def inserting_before(self, n=None):
        """New nodes go just before ``n`` (the start of the graph when None)."""
        previous = self._insert
        self._insert = n.prepend if n is not None else self._root.append
        try:
            yield
        finally:
            self._insert = previous

    @contextlib.contextmanager
    def inserting_after(self, n=None):
        """New nodes go just after ``n`` (the end of the graph when None), in order."""
        previous = self._insert
        anchor = [n if n is not None else self._root._prev]

        def insert(node):
            anchor[0].append(node)
            anchor[0] = node
        self._insert = insert
        try:
            yield
        finally:
            self._insert = previous

    def erase_node(self, to_erase):
        """Remove a node that nothing uses any more."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users in the "
                               f"graph: {to_erase.users}!")
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of ``node`` (from any graph) here, its node arguments mapped by arg_transform."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = dict(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy every node of ``g`` but its output here; val_map maps g's nodes to the copies.
        Returns the copy of g's output value."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                value = map_arg(node.args[0], lambda n: val_map[n])
                return (value, node) if return_output_node else value
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def eliminate_dead_code(self):
        """Remove nodes whose values nobody uses (in reverse order, so chains go too);
        returns whether anything changed."""
        changed = False
        for node in reversed(self.nodes):
            if not node.is_impure() and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Check the graph's invariants: every node's inputs come before it and belong to
        this graph, names are unique, one output at most."""
        seen, names = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node.all_input_nodes:
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)

    def __getstate__(self):
        # without the back reference to the owning GraphModule (which sets it again when
        # it is restored): a pickled graph then never restores a module half-way
        state = self.__dict__.copy()
        state["_owning_module"] = None
        return state

    def __deepcopy__(self, memo=None):
        """A copy of every node (the copies named as the originals), in a new graph."""
        memo = memo if memo is not None else {}
        g = Graph(tracer_cls=self._tracer_cls)
        result = g.graph_copy(self, val_map=memo, return_output_node=True)
        if result is not None:
            value, old_output = result
            new_output = g.output(value, type_expr=getattr(old_output, "type", None))
            new_output.meta = dict(old_output.meta)
        return g

    def __str__(self):
        placeholders = [n.target for n in self.nodes if n.op == "placeholder"]
        lines = [f"graph({', '.join(placeholders)}):"]
        lines += ["    " + n.format_node() for n in self.nodes]
        return "\n".join(lines)

    def print_tabular(self):
        """Print every node's opcode, name, target, args and kwargs as a table."""
        rows = [(n.op, n.name, n._pretty_print_target(n.target), _format_arg(n.args), _format_arg(n.kwargs))
                for n in self.nodes]
        head = ("opcode", "name", "target", "args", "kwargs")
        widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(5)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        print("  ".join("-" * w for w in widths))
        for r in rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))

    # ---- code generation
    def python_code(self, root_module="self"):
        """The source of ``def forward(self, <placeholders>)`` computing the graph, and the
        globals it needs (functions and constants that have no literal spelling)."""
        return _CodeGen(self, root_module).generate()


class _CodeGen:
    def __init__(self, graph, root_module):
        self.graph = graph
        self.root = root_module
        import tessera
        self.globals = {"torch": tessera, "tessera": tessera, "inf": math.inf, "nan": math.nan}
        self._global_names = {}
        self._node_names = {n.name for n in graph.nodes}  # a global must not be shadowed by a local

    def global_name(self, obj, hint):
        """A name in the code's globals that holds ``obj``."""
        if id(obj) in self._global_names:
            return self._global_names[id(obj)]
        name = re.sub("[^0-9a-zA-Z_]+", "_", hint) or "_global"
        if name[0].isdigit():
            name = "_" + name
        base, i = name, 0
        while name in self.globals or name in self._node_names or name in builtins.__dict__ or \
                keyword.iskeyword(name):
            i += 1
            name = f"{base}_{i}"
        self.globals[name] = obj
        self._global_names[id(obj)] = name
        return name

    def function_name(self, fn):
        import tessera
        name = getattr(fn, "__name__", None)
        if name and getattr(builtins, name, None) is fn:
            return name
        if name and getattr(tessera, name, None) is fn:
            return f"torch.{name}"
        if name and getattr(tessera.nn.functional, name, None) is fn:
            return f"torch.nn.functional.{name}"
        return self.global_name(fn, name or "fn")

    def literal(self, value):
        import tessera
        if isinstance(value, Node):
            return value.name
        if isinstance(value, tuple):
            items = [self.literal(v) for v in value]
            if hasattr(value, "_fields"):
                return f"{self.global_name(type(value), type(value).__name__)}({', '.join(items)})"
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        if isinstance(value, list):
            return "[" + ", ".join(self.literal(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{self.literal(k)}: {self.literal(v)}" for k, v in value.items()) + "}"
        if isinstance(value, slice):
            return f"slice({self.literal(value.start)}, {self.literal(value.stop)}, {self.literal(value.step)})"
        if isinstance(value, float):
            if math.isinf(value):
                return "inf" if value > 0 else "-inf"
            if math.isnan(value):
                return "nan"
            return repr(value)
        if value is None or value is Ellipsis or isinstance(value, (bool, int, str, complex)):
            return repr(value)
        if isinstance(value, tessera.dtype):
            return f"torch.{str(value).split('.')[-1]}"
        return self.global_name(value, type(value).__name__.lower())

    def attribute_path(self, base, path):
        expr = base
        for atom in path.split("."):
            expr = f"{expr}.{atom}" if atom.isidentifier() and not keyword.iskeyword(atom) else \
                f"getattr({expr}, {atom!r})"
        return expr

    def expression(self, node):
        args = [self.literal(a) for a in node.args]
        kwargs = [f"{k} = {self.literal(v)}" for k, v in node.kwargs.items()]
        call_args = ", ".join(args + kwargs)
        if node.op == "get_attr":
            return self.attribute_path(self.root, node.target)
        if node.op == "call_module":
            return f"{self.attribute_path(self.root, node.target)}({call_args})"
        if node.op == "call_method":
            rest = ", ".join(args[1:] + kwargs)
            return f"{args[0]}.{node.target}({rest})"
        target = node.target
        if not node.kwargs:
            if target in _INFIX and len(args) == 2:
                return f"{args[0]} {_INFIX[target]} {args[1]}"
            if target in _PREFIX and len(args) == 1:
                return f"{_PREFIX[target]}{args[0]}"
            if target is operator.getitem and len(args) == 2:
                return f"{args[0]}[{args[1]}]"
            if target is builtins.getattr and len(args) == 2 and isinstance(node.args[1], str) \
                    and node.args[1].isidentifier():
                return f"{args[0]}.{node.args[1]}"
        return f"{self.function_name(target)}({call_args})"

    def generate(self):
        nodes = list(self.graph.nodes)
        # free each value after its last use, so a long forward does not hold every tensor
        last_use = {}
        for node in nodes:
            for arg in node.all_input_nodes:
                last_use[arg] = node
        frees = {}
        for value, user in last_use.items():
            frees.setdefault(user, []).append(value)
        params, body = [self.root], []
        for node in nodes:
            if node.op == "placeholder":
                params.append(node.name if not node.args else f"{node.name} = {self.literal(node.args[0])}")
                continue
            if node.op == "output":
                body.append(f"return {self.literal(node.args[0])}")
                continue
            line = f"{node.name} = {self.expression(node)}"
            freed = [v.name for v in frees.get(node, [])]
            if freed:
                line += ";  " + " = ".join(freed) + " = None"
            body.append(line)
        if not body or not body[-1].startswith("return"):
            body.append("return None")
        src = f"def forward({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body)
        return PythonCode(src, self.globals)
