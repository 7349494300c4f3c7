"""tessera.backends: the flags programs set at start-up (cudnn.benchmark, allow_tf32, ...)
and the availability queries, answered as for Tessera's CPU build: oneDNN (convolutions)
and OpenMP are there; CUDA, cuDNN, MPS and MKL are not. The flags are kept and read back;
they change nothing on the CPU, as in a CPU-only torch.

As in torch, cudnn's and mkldnn's flags are ContextProp descriptors on a PropModule: after
disable_global_flags(), assigning one raises, and only their flags() blocks change them."""
import contextlib as _contextlib
import sys as _sys
import types as _types

# Test suites call disable_global_flags() so that a bare `cudnn.enabled = False`, easy to
# leave behind by mistake, raises; the flags() blocks restore what they change.
__allow_nonbracketed_mutation_flag = True


def disable_global_flags():
    """Makes plain assignment to the cudnn / mkldnn flags raise from now on; their flags()
    context managers still set them (and put them back)."""
    global __allow_nonbracketed_mutation_flag
    __allow_nonbracketed_mutation_flag = False


def flags_frozen():
    """Whether disable_global_flags() has been called."""
    return not __allow_nonbracketed_mutation_flag


@_contextlib.contextmanager
def __allow_nonbracketed_mutation():
    global __allow_nonbracketed_mutation_flag
    old = __allow_nonbracketed_mutation_flag
    __allow_nonbracketed_mutation_flag = True
    try:
        yield
    finally:
        __allow_nonbracketed_mutation_flag = old


class ContextProp:
    """A flag of a PropModule: reads call getter(), assignments call setter(value) unless
    disable_global_flags() has frozen the flags."""

    def __init__(self, getter, setter):
        self.getter = getter
        self.setter = setter

    def __get__(self, obj, objtype):
        return self.getter()

    def __set__(self, obj, val):
        if flags_frozen():
            raise RuntimeError(f"not allowed to set {obj.__name__} flags after disable_global_flags; please use "
                               "flags() context manager instead")
        self.setter(val)


class PropModule(_types.ModuleType):
    """A module standing in for module `m` in sys.modules: its class's ContextProps catch
    `module.flag = value`, and every other attribute is read from m."""

    def __init__(self, m, name):
        super().__init__(name)
        self.m = m

    def __getattr__(self, attr):
        return self.m.__getattribute__(attr)


def _query(value):
    return lambda: value


def _bool_flag(store, key, setter_name):
    """A ContextProp over store[key] that takes only bools, refusing others as torch's
    setters do (naming the setter as torch's messages do)."""

    def setter(value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{setter_name} expects a bool, but got {type(value).__name__}")
        store[key] = value

    return ContextProp(lambda: store[key], setter)


def _flag_module(name, doc, cls, **functions):
    """The PropModule `cls` over a plain module holding `functions`, registered in
    sys.modules so that `import tessera.backends.<x>` finds it."""
    inner = _types.ModuleType(name, doc)
    inner.__dict__.update(functions)
    for fn in functions.values():
        if isinstance(fn, _types.FunctionType):
            fn.__module__ = name
    wrapped = cls(inner, name)
    wrapped.__doc__ = doc
    _sys.modules[name] = wrapped
    return wrapped


class _Flags(_types.ModuleType):
    """A submodule whose attributes are plain settable flags."""

    def __init__(self, name, doc, **flags):
        super().__init__(name, doc)
        self.__dict__.update(flags)


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


# ---------------------------------------------------------------- cudnn

_cudnn_flags = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}


def _cudnn_set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None):
    """Sets the given cudnn flags and returns the previous ones as a tuple (enabled,
    benchmark, benchmark_limit, deterministic, allow_tf32); benchmark_limit is None here,
    as in torch without cuDNN."""
    orig_flags = (_cudnn_flags["enabled"], _cudnn_flags["benchmark"], None, _cudnn_flags["deterministic"],
                  _cudnn_flags["allow_tf32"])
    for name, value in (("enabled", _enabled), ("benchmark", _benchmark), ("deterministic", _deterministic),
                        ("allow_tf32", _allow_tf32)):
        if value is not None:
            _CudnnModule.__dict__[name].setter(value)
    return orig_flags


@_contextlib.contextmanager
def _cudnn_flags_block(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    with __allow_nonbracketed_mutation():
        orig_flags = _cudnn_set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    try:
        yield
    finally:
        with __allow_nonbracketed_mutation():
            _cudnn_set_flags(*orig_flags)


_cudnn_flags_block.__doc__ = ("flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, "
                              "allow_tf32=True): a block with these cudnn flags, the previous ones restored after "
                              "it (allowed after disable_global_flags()).")


class _CudnnModule(PropModule):
    enabled = _bool_flag(_cudnn_flags, "enabled", "set_enabled_cudnn")
    deterministic = _bool_flag(_cudnn_flags, "deterministic", "set_deterministic_cudnn")
    benchmark = _bool_flag(_cudnn_flags, "benchmark", "set_benchmark_cudnn")
    benchmark_limit = None  # a ContextProp only where cuDNN is available, as in torch
    allow_tf32 = _bool_flag(_cudnn_flags, "allow_tf32", "set_allow_tf32_cublas")  # torch's message names cublas


cudnn = _flag_module("tessera.backends.cudnn", "cuDNN settings; cuDNN is not available.", _CudnnModule,
                     is_available=_query(False), version=_query(None),
                     set_flags=_named(_cudnn_set_flags, "set_flags"), flags=_named(_cudnn_flags_block, "flags"))

# ---------------------------------------------------------------- mkldnn

_mkldnn_flags = {"enabled": True}


def _mkldnn_set_flags(_enabled):
    """Sets mkldnn.enabled and returns the previous value as a 1-tuple."""
    orig_flags = (_mkldnn_flags["enabled"],)
    _MkldnnModule.__dict__["enabled"].setter(_enabled)
    return orig_flags


@_contextlib.contextmanager
def _mkldnn_flags_block(enabled=False):
    with __allow_nonbracketed_mutation():
        orig_flags = _mkldnn_set_flags(enabled)
    try:
        yield
    finally:
        with __allow_nonbracketed_mutation():
            _mkldnn_set_flags(orig_flags[0])


_mkldnn_flags_block.__doc__ = ("flags(enabled=False): a block with mkldnn.enabled set so, restored after it "
                               "(allowed after disable_global_flags()).")


class _MkldnnModule(PropModule):
    enabled = _bool_flag(_mkldnn_flags, "enabled", "set_enabled_mkldnn")


mkldnn = _flag_module("tessera.backends.mkldnn", "oneDNN (formerly MKL-DNN): Tessera's convolutions use it.",
                      _MkldnnModule, is_available=_query(True), set_flags=_named(_mkldnn_set_flags, "set_flags"),
                      flags=_named(_mkldnn_flags_block, "flags"))

# ---------------------------------------------------------------- opt_einsum

# Plain attributes, not ContextProps: torch's opt_einsum module means to make them
# ContextProps but (its class body declares them global) never does, so assignment there
# is always allowed, frozen flags or not; only set_flags() / flags() check the values.
opt_einsum = _Flags("tessera.backends.opt_einsum", "opt_einsum contraction ordering: not used.", enabled=False,
                    strategy=None)
opt_einsum.is_available = _query(False)
opt_einsum.get_opt_einsum = _query(None)


def _opt_einsum_set_flags(_enabled=None, _strategy=None):
    """Sets opt_einsum.enabled / strategy and returns the previous (enabled, strategy).
    Enabling it, or choosing a strategy, raises ValueError: Tessera does not use opt_einsum."""
    orig_flags = (opt_einsum.enabled, None)
    if _enabled is not None:
        if _enabled:
            raise ValueError(f"opt_einsum is not available, so setting `enabled` to {_enabled} will not reap the "
                             "benefits of calculating an optimal path for einsum. tessera.einsum will fall back to "
                             "contracting from left to right (Tessera does not use opt-einsum).")
        opt_einsum.enabled = _enabled
    if _strategy is not None:
        raise ValueError(f"opt_einsum is not available, so setting `strategy` to {_strategy} will not be meaningful. "
                         "tessera.einsum will bypass path calculation and simply contract from left to right "
                         "(Tessera does not use opt-einsum).")
    return orig_flags


@_contextlib.contextmanager
def _opt_einsum_flags_block(enabled=None, strategy=None):
    orig_flags = _opt_einsum_set_flags(enabled, strategy)
    try:
        yield
    finally:
        _opt_einsum_set_flags(*orig_flags)


_opt_einsum_flags_block.__doc__ = "flags(enabled=None, strategy=None): a block with these opt_einsum flags."
opt_einsum.set_flags = _named(_opt_einsum_set_flags, "set_flags")
opt_einsum.flags = _named(_opt_einsum_flags_block, "flags")

# ---------------------------------------------------------------- the query-only modules

cuda = _Flags("tessera.backends.cuda", "CUDA settings; no CUDA backend in this build.")
cuda.matmul = _Flags("tessera.backends.cuda.matmul", "cuBLAS settings.", allow_tf32=False,
                     allow_fp16_reduced_precision_reduction=True)
cuda.is_built = _query(False)

openmp = _Flags("tessera.backends.openmp", "OpenMP: Tessera's CPU kernels use it.")
openmp.is_available = _query(True)

mps = _Flags("tessera.backends.mps", "Apple's Metal backend: not available.")
mps.is_available = _query(False)
mps.is_built = _query(False)

mkl = _Flags("tessera.backends.mkl", "Intel MKL: not used (Tessera's BLAS is OpenBLAS).")
mkl.is_available = _query(False)

cpu = _Flags("tessera.backends.cpu", "The CPU's capability as tessera's kernels use it.")


def _get_cpu_capability():
    """The instruction set tessera's vectorised kernels were dispatched to, in torch's
    spelling: "AVX2" or "DEFAULT" (tessera builds no AVX-512 kernels)."""
    from .. import _C
    return _C._cpu_capability().upper()


cpu.get_cpu_capability = _named(_get_cpu_capability, "get_cpu_capability")

# ---------------------------------------------------------------- quantized

# torch's engine names and the enum names its "not supported" message uses. Tessera's
# quantized kernels compute what torch's oneDNN engine computes, and only that engine (and
# 'none', which torch always accepts) is offered: setting another would promise arithmetic
# (fbgemm's, qnnpack's) it does not do.
_QENGINE_ENUM_NAMES = {"none": "NoQEngine", "": "NoQEngine", None: "NoQEngine", "fbgemm": "FBGEMM",
                       "qnnpack": "QNNPACK", "onednn": "ONEDNN", "x86": "X86"}
_SUPPORTED_QENGINES = ("none", "onednn")
_qengine = {"engine": "onednn"}


def _set_qengine(value):
    if value not in _QENGINE_ENUM_NAMES:
        raise RuntimeError(f"{value} is not a valid value for quantized engine")
    name = "none" if value in ("", None) else value
    if name not in _SUPPORTED_QENGINES:
        raise RuntimeError(f"quantized engine {_QENGINE_ENUM_NAMES[value]} is not supported")
    _qengine["engine"] = name


class _QEngineProp:
    # unlike cudnn's flags, untouched by disable_global_flags(), as in torch
    def __get__(self, obj, objtype):
        return _qengine["engine"]

    def __set__(self, obj, value):
        _set_qengine(value)


class _SupportedQEnginesProp:
    def __get__(self, obj, objtype):
        return list(_SUPPORTED_QENGINES)

    def __set__(self, obj, value):
        raise RuntimeError("Assignment not supported")


class _QuantizedModule(PropModule):
    engine = _QEngineProp()
    supported_engines = _SupportedQEnginesProp()


quantized = _flag_module("tessera.backends.quantized", "The quantized engine: 'onednn' (torch's oneDNN arithmetic).",
                         _QuantizedModule)

for _sub in (cuda, openmp, mps, mkl, opt_einsum, cpu):
    _sys.modules[_sub.__name__] = _sub  # `import tessera.backends.cuda` works too (cudnn, mkldnn: above)
del _sub
