"""The public API census: which public names of torch 1.13's namespaces tessera has.

`python3 api_census.py` prints the coverage per namespace; test_api_census.py checks the
gap against the checked-in list api_census_missing.txt (names still to come: it may only
shrink) and the short list of names tessera never provides (EXEMPT, each with its reason).
`python3 api_census.py --write-missing` rewrites that list from the current build, after
names have landed.
"""
import importlib
import pathlib
import sys
import types

import torch

import tessera

# torch namespace -> the same path under tessera. Modules are imported (torch does not
# import every submodule on `import torch`); "Tensor" is the class.
NAMESPACES = ["", "Tensor", "nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.rnn", "nn.utils.parametrize",
              "nn.utils.parametrizations", "nn.utils.prune", "nn.utils.stateless", "nn.utils.fusion", "nn.parallel",
              "optim", "optim.lr_scheduler", "optim.swa_utils", "utils.data", "utils.checkpoint", "autograd",
              "autograd.functional", "testing", "backends", "random", "hub"]

# Names tessera never provides, by reason. Short on purpose.
_TYPING = "a helper or module re-export inside torch's source that reexported() cannot tell, not API"
_JIT = "TorchScript / JIT machinery: tessera has no graph compiler (eager only)"
EXEMPT = {
    "nn.functional": {n: _TYPING for n in (
        "BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "DType",
        "TYPE_CHECKING", "Tensor", "utils", "boolean_dispatch",
        "handle_torch_function", "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
        "assert_int_or_pair", "reproducibility_notes", "sparse_support_notes", "tf32_notes")},
    "": {n: _JIT for n in ("jit", "ScriptFunction", "ScriptMethod", "ScriptModule", "ScriptObject",
                           "compiled_with_cxx11_abi", "import_ir_module", "import_ir_module_from_buffer",
                           "merge_type_from_type_comment", "parse_ir", "parse_schema", "parse_type_comment",
                           "fork", "wait", "Future", "AliasDb", "Graph", "Block", "Node", "Value", "Use",
                           "Gradient", "Argument", "FunctionSchema", "ErrorReport", "ExecutionPlan",
                           "GraphExecutorState", "PyTorchFileReader", "PyTorchFileWriter", "CompilationUnit",
                           "ConcreteModuleType", "ConcreteModuleTypeBuilder", "IODescriptor", "LiteScriptModule",
                           "FileCheck", "DeserializationStorageContext", "ThroughputBenchmark", "BenchmarkConfig",
                           "BenchmarkExecutionStats", "AggregationType", "ArgumentSpec", "CallStack",
                           "DeepCopyMemoTable", "InferredType", "ModuleDict", "ScriptClass", "ScriptClassFunction",
                           "ScriptDict", "ScriptDictIterator", "ScriptDictKeyIterator", "ScriptList",
                           "ScriptListIterator", "StaticModule", "TracingState")},
}


def namespace(root, path):
    """The object at `path` under `root` (a module imported if need be), or None."""
    if path == "":
        return root
    if path == "Tensor":
        return root.Tensor
    try:
        return importlib.import_module(f"{root.__name__}.{path}")
    except ImportError:
        obj = root
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj


def public(obj):
    return set() if obj is None else {n for n in dir(obj) if not n.startswith("_")}


def reexported(value):
    """True for what a torch module merely imports from elsewhere (typing names, stdlib
    modules and helpers, the torch package itself): visible in dir() but not torch's API."""
    if isinstance(value, types.ModuleType):
        return not value.__name__.startswith("torch.")
    if isinstance(value, (bool, int, float, str, tuple, list, dict, set)):
        return False
    owner = getattr(value, "__module__", None)
    return isinstance(owner, str) and owner.split(".")[0] not in ("torch", "builtins")


def torch_api(ns):
    """torch's public names in `ns`, less its re-exports."""
    obj = namespace(torch, ns)
    return {n for n in public(obj) if not reexported(getattr(obj, n, None))}


def census():
    """{namespace: (torch's public names, tessera's public names)}"""
    # every submodule first: importing one adds its name to its parent's dir()
    for ns in NAMESPACES:
        namespace(torch, ns), namespace(tessera, ns)
    return {ns: (torch_api(ns), public(namespace(tessera, ns))) for ns in NAMESPACES}


def missing_now():
    """{namespace: torch names tessera lacks, less EXEMPT}"""
    out = {}
    for ns, (theirs, ours) in census().items():
        out[ns] = sorted(theirs - ours - set(EXEMPT.get(ns, {})))
    return out


def report():
    lines = [f"{'namespace':28s} {'have':>5s} / {'torch':>5s}  coverage"]
    for ns, (theirs, ours) in census().items():
        counted = theirs - set(EXEMPT.get(ns, {}))
        have = len(counted & ours)
        share = 100.0 * have / len(counted) if counted else 100.0
        lines.append(f"{'torch.' + ns if ns else 'torch':28s} {have:5d} / {len(counted):5d}  {share:5.1f}%")
    return "\n".join(lines)


def write_missing():
    path = pathlib.Path(__file__).with_name("api_census_missing.txt")
    header = [line for line in path.read_text().splitlines() if line.startswith("#")]
    names = [f"{ns or '-'} {n}" for ns, missing in missing_now().items() for n in missing]
    path.write_text("\n".join(header + names) + "\n")
    return len(names)


if __name__ == "__main__":
    if "--write-missing" in sys.argv:
        print(f"{write_missing()} names still missing")
    print(report())
