"""tessera.fx.proxy: the stand-in values a symbolic trace runs the program on, as
torch.fx.proxy. Every operation on a Proxy (a Python operator, a method, an attribute, a
tessera function through __torch_function__) records a Node in the tracer's graph and
returns a new Proxy; control flow that needs a Proxy's value cannot be traced (TraceError).
"""
import dis
import inspect
import operator

from .node import Node, map_aggregate

__all__ = ["Proxy", "Attribute", "TraceError", "ParameterProxy"]


class TraceError(ValueError):
    """An operation that a symbolic trace cannot record (control flow on a traced value)."""


class Proxy:
    """A traced value: ``node`` records how it was computed, ``tracer`` records what is
    done with it."""

    def __init__(self, node: Node, tracer=None):
        if tracer is None:
            from ._symbolic_trace import GraphAppendingTracer
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        # a method or an attribute: which one is known only when (if) it is called
        return Attribute(self, k)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # `a, b = proxy` unpacks into proxy[0], proxy[1] (the count read off the caller's
        # UNPACK_SEQUENCE instruction, as current torch.fx does; 1.13's reading of the
        # bytecode predates Python 3.11's and fails there)
        frame = inspect.currentframe().f_back
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset == frame.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop or "
                         "as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a more "
                         "detailed explanation of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def __bool__(self):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    def keys(self):
        return self.tracer.create_proxy("call_method", "keys", (self,), {})

    def __index__(self):
        raise TraceError("symbolically traced variables cannot be used as indices or sizes")

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = {}

        def find_tracer(a):
            if isinstance(a, cls):
                tracers[a.tracer] = None
        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers.keys())} while trying to trace "
                               f"operations {orig_method}")
        tracer = next(iter(tracers))
        from ..overrides import is_tensor_method_or_property
        if is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=tracer.graph._target_to_str(orig_method.__name__))


class Attribute(Proxy):
    """``proxy.name``: a getattr node made only if the attribute is used as a value; when
    it is called instead, the call is recorded as one call_method node."""

    def __init__(self, root: Proxy, attr: str):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A get_attr proxy of a parameter: its shape and size are the parameter's own values,
    not traced ones (param_shapes_constant=True)."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


_MAGIC = ["add", "sub", "mul", "floordiv", "truediv", "div", "mod", "pow", "lshift", "rshift", "and_", "or_", "xor",
          "getitem", "matmul", "eq", "ne", "lt", "gt", "le", "ge", "neg", "pos", "invert"]
_REFLECTABLE = ["add", "sub", "mul", "floordiv", "truediv", "div", "mod", "pow", "lshift", "rshift", "and_", "or_",
                "xor", "matmul"]


def _define_magic(name):
    target = getattr(operator, name)

    def impl(*args, **kwargs):
        tracer = args[0].tracer
        return tracer.create_proxy("call_function", target, args, kwargs)
    impl.__name__ = name
    setattr(Proxy, f"__{name.strip('_')}__", impl)


def _define_reflected(name):
    target = getattr(operator, name)

    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})
    impl.__name__ = f"__r{name.strip('_')}__"
    setattr(Proxy, impl.__name__, impl)


for _name in _MAGIC:
    if hasattr(operator, _name):
        _define_magic(_name)
for _name in _REFLECTABLE:
    if hasattr(operator, _name):
        _define_reflected(_name)
