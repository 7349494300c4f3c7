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
    "testing": {"FileCheck": _JIT},
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
                           "ScriptListIterator", "StaticModule", "TracingState",
                           # TorchScript's type system and serializer, its mobile optimizer's
                           # passes and its logging
                           "AnyType", "BoolType", "Capsule", "ClassType", "Code", "CompleteArgumentSpec",
                           "ComplexType", "DeviceObjType", "DictType", "EnumType", "FloatType", "FutureType",
                           "IntType", "InterfaceType", "JITException", "ListType", "NoneType", "NumberType",
                           "OptionalType", "PyObjectType", "RRefType", "ScriptModuleSerializer",
                           "ScriptObjectProperty", "SerializationStorageContext", "StreamObjType", "StringType",
                           "SymFloatNode", "SymIntNode", "SymIntType", "TensorType", "TupleType", "Type",
                           "UnionType", "unify_type_list", "attr", "classes", "MobileOptimizerType",
                           "CONV_BN_FUSION", "FUSE_ADD_RELU", "HOIST_CONV_PACKED_PARAMS", "INSERT_FOLD_PREPACK_OPS",
                           "REMOVE_DROPOUT", "LockingLogger", "LoggerBase", "NoopLogger", "fx",
                           # AggregationType's members (ThroughputBenchmark's), ScriptModule's buffer
                           # and parameter dicts, the mobile-model operator-info API
                           "AVG", "SUM", "BufferDict", "ParameterDict", "OperatorInfo")} | {
        n: "libtorch's own loading, build and telemetry switches (how torch's shared libraries are "
           "opened, its internal usage counters): no counterpart in a library with its own build"
        for n in ("USE_GLOBAL_DEPS", "USE_RTLD_GLOBAL_WITH_LIBTORCH", "read_vitals", "set_vital", "vitals_enabled",
                  "get_file_path", "prepare_multiprocessing_environment")} | {
        n: "a name leaked from torch/__init__.py's own code (a loop variable, a typing flag, a helper "
           "class), not API" for n in ("candidate", "obj", "classproperty", "TYPE_CHECKING", "name",
                                       "PRIVATE_OPS")} | {
        "cpp": "torch._C.cpp: bindings that wrap libtorch's C++-frontend torch::nn modules as Python modules; "
               "tessera has no C++ module frontend to wrap (its nn modules are Python only)"},
}


# Missing names another issue owns (issue 23 owns the rest): by namespace, the issue and a
# test on the name. Only the report uses this; the missing list holds every missing name.
_LINALG_ETC = {"adjoint", "angle", "conj", "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg",
               "is_conj", "is_neg", "real", "imag", "complex", "polar", "cholesky",
               "cholesky_inverse", "cholesky_solve", "det", "logdet", "slogdet", "eig", "symeig", "geqrf", "orgqr",
               "ormqr", "inverse", "lstsq", "lu", "lu_solve", "lu_unpack", "matrix_exp", "matrix_power",
               "matrix_rank", "pinverse", "qr", "solve", "svd", "svd_lowrank", "pca_lowrank", "lobpcg",
               "triangular_solve", "cross", "vander", "nuclear_norm", "frobenius_norm", "fft", "special",
               "distributions", "i0", "i0_", "igamma", "igamma_", "igammac", "igammac_", "mvlgamma", "mvlgamma_",
               "stft", "istft", "hamming_window", "hann_window", "bartlett_window", "blackman_window",
               "kaiser_window"}


def owner(ns, name):
    """The issue that owns a missing name: 24 (linalg, fft, special, distributions, complex),
    25 (sparse layouts), 26 (quantization), 27 (distributed), 28 (dispatcher features:
    __torch_function__, autocast, functionalization's *_copy ops, profiler), 29 (CUDA), else 23."""
    if ns not in ("", "Tensor"):
        return {"nn": 26 if name in ("intrinsic", "qat", "quantizable", "quantized") else
                27 if name == "SyncBatchNorm" else 23,
                "nn.parallel": 27, "backends": 26 if name == "quantized" else 23,
                "autograd": 28 if name.startswith(("Profiler", "profiler", "kineto")) or name in (
                    "forward_ad", "handle_torch_function", "has_torch_function", "is_tensor_like") else 23,
                "autograd.functional": 28}.get(ns, 23)
    if name in _LINALG_ETC:
        return 24
    if name.startswith(("sparse", "to_sparse")) or name in (
            "spmm", "smm", "hsmm", "hspmm", "dsmm", "saddmm", "sspaddmm", "coalesce", "is_coalesced", "dense_dim",
            "sparse_dim", "to_dense", "values", "indices", "crow_indices", "col_indices", "ccol_indices",
            "row_indices", "resize_as_sparse_", "native_norm") or (name.endswith("_indices_copy") or
                                                                    name == "values_copy"):
        return 25
    if name.startswith(("quantize", "q_", "per_channel", "per_tensor", "quint", "QInt", "QUInt", "fake_quantize",
                        "fbgemm")) or name in ("dequantize", "int_repr", "qscheme", "fused_moving_avg_obs_fake_quant",
                                               "choose_qparams_optimized", "empty_quantized", "quantization", "ao"):
        return 26
    if name in ("distributed", "is_distributed", "futures") or name.startswith("batch_norm_"):
        return 27
    if name.endswith("_copy") or "autocast" in name or name in (
            "amp", "overrides", "DisableTorchFunction", "DispatchKey", "DispatchKeySet", "ExcludeDispatchKeyGuard",
            "profiler", "Tag"):
        return 28
    if name.startswith(("cudnn_", "miopen_")) or name in ("Stream", "is_vulkan_available"):
        return 29
    return 23


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
    lines = [f"{'namespace':28s} {'have':>5s} / {'torch':>5s}  coverage  missing: issue 23's, other issues'"]
    for ns, (theirs, ours) in census().items():
        counted = theirs - set(EXEMPT.get(ns, {}))
        have = len(counted & ours)
        share = 100.0 * have / len(counted) if counted else 100.0
        missing = counted - ours
        mine = sum(1 for n in missing if owner(ns, n) == 23)
        lines.append(f"{'torch.' + ns if ns else 'torch':28s} {have:5d} / {len(counted):5d}  {share:5.1f}%   "
                     f"{mine:5d} {len(missing) - mine:5d}")
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
