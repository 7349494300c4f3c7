"""tessera.fx.graph_module: GraphModule, a Module whose forward is generated from a Graph,
as torch.fx.GraphModule. It holds what the graph reads from the root (the submodules,
parameters and buffers its call_module and get_attr nodes name, at the same paths) and
recompiles forward whenever its graph is replaced or recompile() is called.
"""
import linecache

from .. import _C
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .graph import Graph

__all__ = ["GraphModule"]

_counter = [0]


def _copy_attr(from_module, to_module, target):
    """Give ``to_module`` the attribute at dotted path ``target`` of ``from_module``
    (the object itself: submodule, parameter, or tensor as a buffer), making empty
    Modules for the missing levels of the path."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # already copied, with everything below it
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, _C.Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, _C.Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _new_graph_module(class_name):
    """An empty GraphModule of its own class, for unpickling (state comes next)."""
    gm = GraphModule.__new__(GraphModule)
    type(gm).__name__ = class_name
    return gm


class GraphModule(Module):
    """A Module running the code generated from ``graph``; ``root`` (a Module, or a dict
    from qualified names to objects) supplies what the graph's nodes refer to."""

    def __new__(cls, *args, **kwargs):
        # each instance gets a class of its own, so that its generated forward is its own
        for base in cls.__mro__:
            if base.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = base
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that target was not "
                                           "provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self._tracer_cls = None
        if graph._tracer_cls is not None and "<locals>" not in graph._tracer_cls.__qualname__:
            self._tracer_cls = graph._tracer_cls

    @property
    def graph(self):
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise TypeError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The source of the generated forward."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Regenerate forward from the graph (after editing it in place)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        _counter[0] += 1
        filename = f"<eval_with_key>.{_counter[0]}"
        # registered with linecache so tracebacks through forward show its lines
        linecache.cache[filename] = (len(self._code), None, self._code.splitlines(True), filename)
        namespace = dict(python_code.globals)
        exec(compile(self._code, filename, "exec"), namespace)  # noqa: S102 (code generated from the graph)
        cls = type(self)
        cls.forward = namespace["forward"]
        return python_code

    def print_readable(self, print_output=True):
        text = f"class {self._get_name()}(torch.nn.Module):\n" + "".join(
            f"    {line}\n" for line in self._code.splitlines())
        if print_output:
            print(text)
        return text

    def __str__(self):
        return super().__str__() + "\n\n" + self._code

    def __reduce__(self):
        # the per-instance class is local: rebuild one, then restore the state (the graph
        # included, which refers back to this module) and regenerate forward
        return (_new_graph_module, (type(self).__name__,), self.__dict__.copy())

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._graph.owning_module = self
        self.recompile()

    def __copy__(self):
        return GraphModule(self, self.graph)

    def __deepcopy__(self, memo):
        import copy
        result = type(self).__new__(type(self))
        memo[id(self)] = result  # the graph refers back to its module: copies of it find this one
        fake = Module()
        fake.__dict__.update(copy.deepcopy(self.__dict__, memo))
        GraphModule.__init__(result, fake, fake.__dict__["_graph"], type(self).__name__)
        return result
