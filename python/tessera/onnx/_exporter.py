"""tessera.onnx.export's tracer: the model runs once on the example inputs under a
TorchFunctionMode (tessera.overrides), which sees each top-level call (F.linear,
Tensor.reshape, ...) with its real arguments and result. A symbolic function per call
(_symbolics.py) turns it into ONNX nodes; the graph is then written with the onnx package.

Like torch 1.13's exporter in its default mode, the model runs in eval mode, sizes read
from tensors during the trace are baked into the graph as constants, parameters and
buffers become initializers named by their state_dict keys, and an eval-mode BatchNorm
right after a convolution is folded into the convolution's weights.
"""
import itertools
import warnings

from .. import overrides
from . import _passes
from .errors import OnnxExporterError

_IR_VERSIONS = {14: 7, 15: 8, 16: 8, 17: 8}  # what torch 1.13 writes for each opset
SUPPORTED_OPSETS = tuple(sorted(_IR_VERSIONS))


class Graph:
    """The ONNX graph being built: nodes, initializers and the name of each traced value.
    Values are keyed by the tensor object: the trace keeps every result alive, so an id is
    never reused while the graph is built."""

    def __init__(self, opset, np, onnx):
        self.opset = opset
        self.np, self.onnx = np, onnx
        self.nodes = []
        self.initializers = {}          # name -> numpy array
        self.producers = {}             # value name -> node
        self._names = {}                # id(tensor) -> value name, for traced tensors
        self._traced = {}               # id(tensor) -> the traced tensor (kept alive: ids stay unique)
        self._constants = {}            # id(tensor) -> initializer name (None: not made yet)
        self._constant_tensors = []     # those tensors
        self._counters = itertools.count()
        self._per_op = {}
        self.current = None             # the name of the call being converted
        self.baked = []                 # calls whose nodes hold sizes read during the trace

    # ---- values
    def name_of(self, tensor):
        """The graph value of a traced tensor (one computed from the inputs), else None."""
        return self._names.get(id(tensor))

    def bind(self, tensor, name):
        self._names[id(tensor)] = name
        self._traced[id(tensor)] = tensor

    def traced_tensors(self):
        return self._traced.values()

    def bind_constant(self, tensor, name=None):
        """A parameter or buffer (name: its initializer), or a tensor computed from them
        alone (an initializer made when a node first reads it: torch's constant folding)."""
        if id(tensor) in self._constants:
            return  # (a call that gives back its constant argument keeps its name)
        self._constants[id(tensor)] = name
        self._constant_tensors.append(tensor)

    def constant_tensors(self):
        return self._constant_tensors

    def is_constant(self, tensor):
        return id(tensor) in self._constants

    def value(self, x):
        """The graph value for x: a traced tensor, an initializer, or a constant node for a
        tensor or number made during the trace."""
        if not (hasattr(x, "dtype") and hasattr(x, "shape")):
            return self.constant(self.array(x))
        name = self.name_of(x)
        if name is not None:
            return name
        if id(x) in self._constants:
            if self._constants[id(x)] is None:
                self._constants[id(x)] = self.initializer(self.unique_initializer_name("Constant"), self.array(x))
            return self._constants[id(x)]
        return self.constant(self.array(x))

    def array(self, x):
        if hasattr(x, "detach"):
            return x.detach().numpy().copy()
        raise OnnxExporterError(f"tessera.onnx.export: cannot use {type(x).__name__} {x!r} as a graph value")

    def fresh(self, op):
        k = self._per_op.get(op, 0)
        self._per_op[op] = k + 1
        return f"/{op}_output_0" if k == 0 else f"/{op}_{k}_output_0"

    # ---- nodes
    def op(self, op_type, *inputs, outputs=1, **attrs):
        """A node; its output's name (a list of names when outputs > 1). An input "" is an
        omitted optional one."""
        first = self.fresh(op_type)
        outs = [first] + [first[:-1] + str(k) for k in range(1, outputs)]
        node = self.onnx.helper.make_node(op_type, list(inputs), outs, **attrs)
        self.nodes.append(node)
        for out in outs:
            self.producers[out] = node
        return outs if outputs > 1 else first

    def constant(self, array):
        """A Constant node holding array (a 0-dim array for a number)."""
        out = self.fresh("Constant")
        tensor = self.onnx.numpy_helper.from_array(self.np.asarray(array))
        node = self.onnx.helper.make_node("Constant", [], [out], value=tensor)
        self.nodes.append(node)
        self.producers[out] = node
        return out

    def scalar_like(self, number, tensor):
        """number as a 0-dim constant of tensor's dtype (torch's exporter casts Python
        numbers to the other operand's type)."""
        dtype = self.array(tensor.detach().reshape(-1)[:0]).dtype
        return self.constant(self.np.array(number, dtype=dtype))

    def ints(self, values):
        return self.constant(self.np.array(list(values), dtype=self.np.int64))

    def initializer(self, name, array):
        self.initializers[name] = array
        return name

    def unique_initializer_name(self, op):
        return f"onnx::{op}_{next(self._counters) + 1000}"


# Calls that read metadata, or turn a value into a Python number (baked into the graph, as
# torch's tracer does, with its warning when the value is a traced one)
_METADATA = {"size", "dim", "numel", "__len__", "__format__", "__repr__", "is_floating_point", "is_complex",
             "ndimension", "nelement", "element_size", "stride", "is_contiguous", "data_ptr", "get_device"}
_TO_PYTHON = ("__bool__", "item", "tolist", "__index__", "__int__", "__float__")
# Metadata reads that put a traced size into the graph (dim() does not: ranks are static)
_READS_SIZES = {"size", "numel", "nelement", "stride"}
# Tensor properties with an ONNX form: the perm of the Transpose they are. (torch's tracer
# bakes .data in as a constant; here it is refused, as is any other property of a traced
# value that is a tensor.)
_PROPERTIES = {"T": lambda n: list(reversed(range(n))), "mT": lambda n: list(range(n - 2)) + [n - 1, n - 2]}


def _is_tensor(x):
    return hasattr(x, "shape") and hasattr(x, "dtype")


def _writes_first_argument(name):
    return name == "__setitem__" or (name.endswith("_") and not name.endswith("__")) or \
        (name.startswith("__i") and name.endswith("__") and name not in ("__index__", "__int__", "__invert__"))


# Where F's activations take inplace= positionally
_INPLACE_POSITION = {"relu": 1, "relu6": 1, "selu": 1, "silu": 1, "mish": 1, "hardswish": 1, "hardsigmoid": 1,
                     "elu": 2, "celu": 2, "leaky_relu": 2, "hardtanh": 3, "dropout": 3, "alpha_dropout": 3,
                     "feature_alpha_dropout": 3, "dropout1d": 3, "dropout2d": 3, "dropout3d": 3, "threshold": 3,
                     "rrelu": 4}


def _write_target(name, args, kwargs):
    """The tensor a call writes into: its out=, self for in-place methods and operators,
    the input for inplace=True; None for a call that writes nothing."""
    out = kwargs.get("out")
    if _is_tensor(out):
        return out
    if not args or not _is_tensor(args[0]):
        return None
    position = _INPLACE_POSITION.get(name)
    inplace = kwargs.get("inplace", args[position] if position is not None and len(args) > position else False)
    return args[0] if _writes_first_argument(name) or inplace is True else None


def _extent(t):
    """(first byte, one past the last) of t's elements, or None when it has none."""
    if t.numel() == 0:
        return None
    start = t.data_ptr()
    return start, start + (sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1) * t.element_size()


class _Tracer(overrides.TorchFunctionMode):
    def __init__(self, graph, symbolics):
        super().__init__()
        self.graph, self.symbolics = graph, symbolics

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", None)
        graph = self.graph
        touches = _touches_graph(graph, args, kwargs)
        target = _write_target(name, args, kwargs)
        if target is not None:
            self._refuse_writes_into_constants(name, target)
        aliases = self._aliases(target) if touches and target is not None else []
        stale = target is not None and (graph.name_of(target) is None or aliases or _is_tensor(kwargs.get("out")))
        if touches and stale:
            # a write of traced values into a constant, into a value other traced values
            # share memory with, or into an out= tensor would leave them stale: it and they
            # are refused (when an output needs them)
            result = func(*args, **kwargs)
            refused = graph.op(_passes.UNSUPPORTED + f"{name} (an in-place write into a constant, a view or an "
                               "out= tensor)", *self._inputs(args, kwargs))
            for t in [target] + aliases + ([result] if _is_tensor(result) else []):
                graph.bind(t, refused)
            return result
        result = func(*args, **kwargs)
        if name == "__get__":
            return self._property(func, args, result)
        if name in _METADATA or name in _TO_PYTHON or name == "tensor":
            if touches and name in _READS_SIZES:
                graph.baked.append(name)
            if touches and name in _TO_PYTHON + ("tensor",):
                warnings.warn(f"tessera.onnx.export: {name}() of a traced value bakes its value into the graph; "
                              "the model will not follow other inputs here", stacklevel=3)
            return result
        if not touches:
            # a computation on constants only: its result is a constant too, and one made
            # from parameters becomes an initializer if the graph reads it
            if _touches_constants(graph, args, kwargs):
                for r in (result if isinstance(result, (tuple, list)) else [result]):
                    if _is_tensor(r):
                        graph.bind_constant(r)
            return result
        symbolic = self.symbolics.get(name)
        if symbolic is not None and name in _FUNCTIONAL_ONLY and \
                not str(getattr(func, "__module__", "")).startswith("tessera.nn.functional"):
            symbolic = None  # (the aten form of the call takes its arguments in another order)
        graph.current = name  # (symbolics shared by several calls read which one this is)
        out = None
        if symbolic is not None:
            try:
                out = symbolic(graph, result, *args, **kwargs)
            except TypeError as e:  # arguments the symbolic does not take (rounding_mode=, ...)
                raise OnnxExporterError(f"tessera.onnx.export: exporting '{name}' with these arguments is not "
                                        f"supported ({e})") from None
            if isinstance(result, (tuple, list)) and not isinstance(out, (tuple, list)):
                symbolic = None  # (one value for several results: not this call's form)
        if symbolic is None:
            # refused only if the graph's outputs need it (torch prunes what they do not)
            out = graph.op(_passes.UNSUPPORTED + name, *self._inputs(args, kwargs))
        if target is not None and not _is_tensor(result):
            result_tensors, outs = [target], [out]
        elif isinstance(result, (tuple, list)):
            result_tensors = list(result)
            outs = list(out) if isinstance(out, (tuple, list)) else [out] * len(result)
        else:
            result_tensors, outs = [result], [out]
            if target is not None and target is not result:
                result_tensors.append(target)
                outs.append(out)
        for r, o in zip(result_tensors, outs):
            if _is_tensor(r) and o is not None:
                graph.bind(r, o)
        return result

    def _refuse_writes_into_constants(self, name, target):
        """Parameters and buffers were copied into initializers when the trace began (and
        tensors computed from them are read when a node first needs them): a write into
        any of them would leave the graph with old values."""
        mine = _extent(target)
        for other in self.graph.constant_tensors():
            theirs = _extent(other)
            if other is target or (mine is not None and theirs is not None and theirs[0] < mine[1] and
                                   mine[0] < theirs[1]):
                raise OnnxExporterError(f"tessera.onnx.export: '{name}' writes into a parameter, a buffer or a "
                                        "tensor computed from them, which the graph holds as a constant")

    def _property(self, func, args, result):
        graph = self.graph
        if not (args and _is_tensor(args[0]) and graph.name_of(args[0]) is not None):
            return result
        descriptor = getattr(func, "__self__", None)  # (a C getset, or a Python property)
        prop = getattr(descriptor, "__name__", None) or getattr(getattr(descriptor, "fget", None), "__name__", None)
        if prop == "shape":
            graph.baked.append("shape")
        if not _is_tensor(result):
            return result
        if graph.name_of(result) is not None:
            return result  # (a property that gives back a traced tensor: _base, ...)
        source = graph.name_of(args[0])
        if prop in _PROPERTIES:
            graph.bind(result, graph.op("Transpose", source, perm=_PROPERTIES[prop](args[0].dim())))
        else:
            graph.bind(result, graph.op(_passes.UNSUPPORTED + f"the property {prop}", source))
        return result

    def _aliases(self, tensor):
        """The other traced tensors whose memory overlaps tensor's."""
        mine = _extent(tensor)
        if mine is None:
            return []
        out = []
        for other in list(self.graph.traced_tensors()):
            theirs = _extent(other) if other is not tensor else None
            if theirs is not None and theirs[0] < mine[1] and mine[0] < theirs[1]:
                out.append(other)
        return out

    def _inputs(self, args, kwargs):
        names = []
        for x in list(args) + list(kwargs.values()):
            for v in (x if isinstance(x, (list, tuple)) else [x]):
                if _is_tensor(v) and self.graph.name_of(v) is not None:
                    names.append(self.graph.name_of(v))
        return names


# Names whose aten form (tessera.batch_norm, ...) orders its arguments unlike F's
_FUNCTIONAL_ONLY = {"batch_norm", "instance_norm", "embedding"}


def _any_tensor(args, kwargs, test):
    def walk(x):
        if isinstance(x, (list, tuple)):
            return any(walk(v) for v in x)
        return hasattr(x, "shape") and hasattr(x, "dtype") and test(x)
    return walk(list(args)) or walk(list(kwargs.values()))


def _touches_graph(graph, args, kwargs):
    return _any_tensor(args, kwargs, lambda t: graph.name_of(t) is not None)


def _touches_constants(graph, args, kwargs):
    return _any_tensor(args, kwargs, graph.is_constant)


def trace(lib, model, args, opset, input_names, output_names, dynamic_axes, symbolics):
    """The ONNX ModelProto of model(*args)."""
    import numpy as np
    import onnx
    import onnx.numpy_helper  # noqa: F401 - a submodule the graph uses

    if opset not in _IR_VERSIONS:
        raise ValueError(f"tessera.onnx.export: opset_version {opset} is not supported; use one of "
                         f"{', '.join(map(str, SUPPORTED_OPSETS))}")
    graph = Graph(opset, np, onnx)
    args = args if isinstance(args, tuple) else (args,)
    tensors = [a for a in args if isinstance(a, lib.Tensor)]
    if len(tensors) != len(args):
        raise OnnxExporterError("tessera.onnx.export: the example inputs must be tensors")
    input_names = list(input_names or [])
    names = input_names + [f"input.{i}" if i else "input" for i in range(len(input_names), len(tensors))]
    for t, n in zip(tensors, names):
        graph.bind(t, n)
    state = {}
    for qualified, t in itertools.chain(model.named_parameters(), model.named_buffers()):
        if id(t) not in state:
            state[id(t)] = qualified
            graph.bind_constant(t, qualified)
            graph.initializer(qualified, t.detach().numpy().copy())
    was_training = model.training
    model.train(False)
    try:
        with lib.no_grad(), _Tracer(graph, symbolics):
            result = model(*args)
    finally:
        model.train(was_training)
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    if not all(_is_tensor(r) for r in results):
        raise OnnxExporterError("tessera.onnx.export: the model must return a tensor or a tuple or list of tensors, "
                                f"not {type(result).__name__}")
    traced = [graph.name_of(r) for r in results]
    if any(name is None for name in traced):
        raise OnnxExporterError("tessera.onnx.export: the model's output does not depend on its inputs")
    _passes.remove_dead_nodes(graph, traced)
    _passes.fold_batch_norms(graph, traced)
    _passes.merge_transposes(graph, traced)
    if dynamic_axes and graph.baked:
        raise OnnxExporterError("tessera.onnx.export: dynamic_axes cannot be honoured: "
                                f"{', '.join(sorted(set(graph.baked)))} write sizes read during the trace into the "
                                "graph (export without dynamic_axes, for the traced sizes only)")
    _check_dynamic_axes_names(dynamic_axes or {}, names, output_names)
    outputs = []
    output_names = list(output_names or [])
    clashes = [n for n in output_names if n in names or n in graph.initializers]
    if clashes or len(set(output_names)) != len(output_names):
        raise OnnxExporterError(f"tessera.onnx.export: output_names {output_names} repeat a name or reuse an input's "
                                "or a parameter's")
    for i, (r, name) in enumerate(zip(results, traced)):
        wanted = output_names[i] if i < len(output_names) else name
        taken = {n for n, _ in outputs}
        if wanted in taken or (wanted == name and (name in names or name in graph.initializers)):
            wanted = graph.fresh("Identity")  # (an output that is an input, or given twice)
        if wanted != name:
            graph.nodes.append(onnx.helper.make_node("Identity", [name], [wanted]))
        outputs.append((wanted, r))
    return _model(graph, tensors, names, outputs, dynamic_axes or {})


def _check_dynamic_axes_names(dynamic_axes, input_names, output_names):
    known = set(input_names) | set(output_names or [])
    for key in dynamic_axes:
        if key not in known:
            warnings.warn(f"Provided key {key} for dynamic axes is not a valid input/output name", stacklevel=4)


def _value_info(onnx, np, name, tensor, axes):
    elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(tensor.detach().reshape(-1)[:0].numpy().dtype)]
    shape = [axes.get(d, size) for d, size in enumerate(tensor.shape)]
    return onnx.helper.make_tensor_value_info(name, elem, shape)


def _model(graph, inputs, input_names, outputs, dynamic_axes):
    onnx, np = graph.onnx, graph.np
    used = set()
    for node in graph.nodes:
        used.update(node.input)
    initializers = [onnx.numpy_helper.from_array(a, name) for name, a in graph.initializers.items() if name in used]
    proto = onnx.helper.make_graph(
        graph.nodes, "tessera_graph",
        [_value_info(onnx, np, n, t, dynamic_axes.get(n, {})) for n, t in zip(input_names, inputs)],
        [_value_info(onnx, np, n, t, dynamic_axes.get(n, {})) for n, t in outputs],
        initializer=initializers)
    model = onnx.helper.make_model(proto, producer_name="tessera", opset_imports=[onnx.helper.make_opsetid("",
                                                                                                         graph.opset)])
    model.ir_version = _IR_VERSIONS[graph.opset]
    return model
