"""Symbolic tracing, as torch.fx's: Tracer runs a module's forward (or a function) on
Proxies, recording each operation; leaf modules (tessera.nn's own layers, by default)
become single call_module nodes and other modules are traced through; parameters become
get_attr nodes; functions marked with fx.wrap, and functions of the autowrap modules,
become single call_function nodes.
"""
import builtins
import functools
import inspect
import math
import warnings

from ..nn.modules.container import Sequential
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate
from .proxy import ParameterProxy, Proxy

__all__ = ["Tracer", "symbolic_trace", "wrap", "GraphAppendingTracer", "PH"]

# (globals of the module that called wrap, function name): replaced while a trace runs
_wrapped_fns_to_patch = []


def wrap(fn_or_name):
    """Mark a module-level function (given itself or by name) to be recorded as one call
    node when traced, instead of being traced through; called at a module's top level.
    Returns its argument unchanged."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    fn_name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__code__.co_name
    caller = inspect.currentframe().f_back
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch.append((caller.f_globals, fn_name))
    return fn_or_name


def _assert_is_none(value, msg):
    assert value is None, msg


_BASE_TYPES = (str, int, float, bool, complex)


class PHBase:
    """A placeholder for a concrete argument that should stay an input."""

    def __repr__(self):
        return "PH"


PH = PHBase()


class _Patcher:
    """Sets attributes and dict entries for the trace's duration and restores them after."""

    def __init__(self):
        self._undo = []

    def patch_attr(self, owner, name, value):
        self._undo.append((setattr, owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def patch_item(self, mapping, name, value):
        if name in mapping:
            self._undo.append((mapping.__setitem__, name, mapping[name]))
        else:
            self._undo.append((mapping.pop, name, None))
        mapping[name] = value

    def restore(self):
        for action in reversed(self._undo):
            if action[0] is setattr:
                setattr(action[1], action[2], action[3])
            elif getattr(action[0], "__name__", "") == "pop":
                action[0](action[1], None)
            else:
                action[0](action[1], action[2])
        self._undo.clear()


def _traced_call(tracer, original):
    """A wrapper for a wrapped / autowrapped function: one call_function node when a Proxy
    is among its arguments, the function itself otherwise."""
    @functools.wraps(original)
    def call(*args, **kwargs):
        proxies = []
        map_aggregate((args, kwargs), lambda a: proxies.append(a) if isinstance(a, Proxy) else None)
        if proxies:
            return proxies[0].tracer.create_proxy("call_function", original, args, kwargs)
        return original(*args, **kwargs)
    call.__fx_already_patched = True
    return call


class Tracer:
    """Records a module's forward (or a function) as a Graph. Subclasses choose which
    modules stay whole (is_leaf_module) and may intercept call_module / create_proxy."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        self._autowrap_function_ids = {id(value) for module in autowrap_modules
                                       for name, value in module.__dict__.items()
                                       if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.graph = None
        self.root = None
        self.submodule_paths = None
        self.scope = None

    # ---- the hooks subclasses override
    def is_leaf_module(self, m, module_qualified_name):
        """tessera.nn's (torch.nn's) layers are leaves; Sequential and user modules are traced."""
        module = type(m).__module__ or ""
        return (module.startswith(("tessera.nn", "torch.nn", "tessera.ao.nn", "torch.ao.nn"))
                and not isinstance(m, Sequential))

    def path_of_module(self, mod):
        """The qualified name of ``mod`` in the root module."""
        if self.submodule_paths is None:
            self.submodule_paths = {id(m): name for name, m in self.root.named_modules()}
        path = self.submodule_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        """A leaf module becomes one call_module node; any other is traced through."""
        module_qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, module_qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", module_qualified_name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A parameter read off a module becomes a get_attr proxy (one per parameter)."""
        if isinstance(attr_val, Parameter):
            for name, param in self.root.named_parameters():
                if attr_val is param:
                    if name not in parameter_proxy_cache:
                        if self.param_shapes_constant:
                            node = self.create_node("get_attr", name, (), {})
                            parameter_proxy_cache[name] = ParameterProxy(self, node, name, attr_val)
                        else:
                            parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                    return parameter_proxy_cache[name]
        return attr_val

    # ---- recording
    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """An argument as a node argument: proxies become their nodes, the root's
        parameters and tensors get_attr nodes, other tensors constants kept on the root."""
        from .. import _C
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Parameter):
            for name, param in self.root.named_parameters():
                if a is param:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, _C.Tensor):
            name = self.tensor_attrs.get(id(a))
            if name is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                name = f"_tensor_constant{i}"
                setattr(self.root, name, a)
                self.tensor_attrs[id(a)] = name
            return self.create_node("get_attr", name, (), {})
        if isinstance(a, Module):
            raise NotImplementedError(f"argument of type: {type(a)}")
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*(self.create_arg(e) for e in a))
        if isinstance(a, (tuple, list)):
            return type(a)(self.create_arg(e) for e in a)
        if isinstance(a, dict):
            return {k: self.create_arg(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        return a

    # ---- the trace
    def _collect_tensor_attrs(self, module, prefix):
        from .. import _C
        for name, value in vars(module).items():
            if isinstance(value, _C.Tensor) and not isinstance(value, Parameter):
                self.tensor_attrs.setdefault(id(value), prefix + name)
        for name, buf in module._buffers.items():
            if buf is not None:
                self.tensor_attrs.setdefault(id(buf), prefix + name)
        for name, child in module._modules.items():
            if child is not None:
                self._collect_tensor_attrs(child, prefix + name + ".")

    def _placeholders(self, fn, is_module, concrete_args):
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        if is_module:
            params = params[1:]  # self
        concrete_args = concrete_args or {}
        args, kwargs = [], {}
        for p in params:
            if p.kind == inspect.Parameter.KEYWORD_ONLY:
                # passed by keyword while tracing; the generated forward takes it either way
                if p.name in concrete_args:
                    kwargs[p.name] = self._specialize(p, concrete_args[p.name])
                else:
                    default = () if p.default is inspect.Parameter.empty else (p.default,)
                    kwargs[p.name] = self.create_proxy("placeholder", p.name, default, {})
                continue
            if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise NotImplementedError("tracing a forward with *args or **kwargs is not supported")
            if p.name in concrete_args:
                args.append(self._specialize(p, concrete_args[p.name]))
                continue
            default = () if p.default is inspect.Parameter.empty else (p.default,)
            args.append(self.create_proxy("placeholder", p.name, default, {},
                                          type_expr=None if p.annotation is inspect.Parameter.empty else p.annotation))
        return args, kwargs

    def _specialize(self, param, value):
        """A concrete argument, as torch.fx 1.13 traces one: every leaf of it becomes a
        placeholder <name>_<i>; a PH leaf stays an input, and a constant leaf is checked
        (an assertion node) and used as the constant."""
        from .. import _C
        from ..functional import _assert
        count = [0]
        default = () if param.default is inspect.Parameter.empty else (param.default,)

        def replace(leaf):
            count[0] += 1
            placeholder = self.create_proxy("placeholder", f"{param.name}_{count[0]}", default, {})
            if leaf is PH:
                return placeholder
            if type(leaf) is bool or (type(leaf) in _BASE_TYPES and not isinstance(leaf, _C.Tensor)):
                _assert(placeholder == leaf, f"{param.name} has been specialized to have value {leaf} but got another "
                        "value")
            elif leaf is None:
                self.create_proxy("call_function", _assert_is_none, (placeholder, f"{param.name} has been specialized "
                                  "to have value None but got another value"), {})
            else:
                warnings.warn(f"Was not able to add assertion to guarantee correct input {param.name} to specialized "
                              "function. It is up to the user to make sure that your inputs match the inputs you "
                              "specialized the function with.")
            return leaf
        return map_aggregate(value, replace)

    def _autowrap(self, patcher, fn_globals):
        for name, value in list(fn_globals.items()):
            if not name.startswith("_") and callable(value) and id(value) in self._autowrap_function_ids \
                    and not getattr(value, "__fx_already_patched", False):
                patcher.patch_item(fn_globals, name, _traced_call(self, value))

    def trace(self, root, concrete_args=None):
        """The Graph of ``root`` (a Module's forward, or a function) run on placeholders."""
        is_module = isinstance(root, Module)
        if is_module:
            self.root = root
            fn = type(root).forward
        else:
            self.root = Module()
            fn = root
        self.submodule_paths = None
        self.graph = Graph(tracer_cls=getattr(self, "__class__", None))
        self.tensor_attrs = {}
        self._collect_tensor_attrs(self.root, "")
        parameter_proxy_cache = {}
        patcher = _Patcher()
        tracer = self
        original_call, original_getattr = Module.__call__, Module.__getattr__

        def module_getattr(mod, attr):
            return tracer.getattr(attr, original_getattr(mod, attr), parameter_proxy_cache)

        def module_call(mod, *args, **kwargs):
            def forward(*args, **kwargs):
                return original_call(mod, *args, **kwargs)
            tracer._autowrap(patcher, getattr(getattr(mod, "forward", mod), "__globals__", {}))
            return tracer.call_module(mod, forward, args, kwargs)

        try:
            patcher.patch_attr(Module, "__getattr__", module_getattr)
            patcher.patch_attr(Module, "__call__", module_call)
            for fn_globals, name in _wrapped_fns_to_patch:
                original = fn_globals.get(name, getattr(builtins, name, None))
                if original is not None and not getattr(original, "__fx_already_patched", False):
                    patcher.patch_item(fn_globals, name, _traced_call(self, original))
            self._autowrap(patcher, fn.__globals__)
            for module in self._autowrap_search:  # math.sqrt(x.size(-1)): called through the module
                self._autowrap(patcher, module.__dict__)
            args, kwargs = self._placeholders(fn, is_module, concrete_args)
            result = fn(root, *args, **kwargs) if is_module else fn(*args, **kwargs)
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=fn.__annotations__.get("return", None))
        finally:
            patcher.restore()
        self.submodule_paths = None
        return self.graph


class GraphAppendingTracer(Tracer):
    """The tracer of a Proxy made directly on a graph: appends to it."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph


def symbolic_trace(root, concrete_args=None):
    """Trace ``root`` (a Module or a function) and return a GraphModule of its graph."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
