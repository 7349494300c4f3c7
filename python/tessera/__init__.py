"""Tessera: eager tensors with a runtime dispatcher, in PyTorch's image.

    import tessera as torch     # everyday code ports by changing the import
    a = tessera.tensor([[1., 2.], [3., 4.]])
    (a + 1) * 2.5

Everything here comes from the extension ``tessera._C``: the Tensor type, the dtype,
device, layout and memory_format objects, ``tensor()``, ``Size`` and every operator's
binding (generated from ops.yaml), plus pure-Python modules such as ``tessera.ops``.
"""
from . import cpu  # noqa: F401  (first: it sets GOMP_SPINCOUNT before _C loads libgomp)
from . import _C
from ._C import (  # noqa: F401  (the names spelled out are the core API)
    OutOfMemoryError,
    Size,
    Tensor,
    device,
    dtype,
    layout,
    memory_format,
    tensor,
)
# dtypes (float32, float, ...), layouts, memory formats and every generated operator.
from ._C import *  # noqa: F401,F403,E402

__version__ = _C._version
# The oneDNN layout keeps torch's private-looking name, which `import *` would skip.
_mkldnn = _C._mkldnn

# The __torch_function__ protocol: Tensor's default override (subclasses' results come
# back as the subclass) and torch._C's context managers; installed before any Python-defined
# Tensor method, which _C._add_tensor_methods makes overridable.
from . import _torch_function  # noqa: E402
_C._add_tensor_methods({"__torch_function__": classmethod(_torch_function._tensor_torch_function)})
_C.DisableTorchFunction = _torch_function.DisableTorchFunction
_C.DisableTorchFunctionSubclass = _torch_function.DisableTorchFunctionSubclass
_C._EnableTorchFunction = _torch_function._EnableTorchFunction
# __torch_dispatch__: Tensor's own is the disabled one (only subclasses that define theirs
# get the Python key); _make_wrapper_subclass builds the instances of such subclasses.
_C._add_tensor_methods({"__torch_dispatch__": _C._disabled_torch_dispatch_impl,
                        "_make_wrapper_subclass": staticmethod(_C._make_wrapper_subclass)})

# Tensor methods torch defines in Python: the casts t.float(), t.half(), ... and to()'s
# positional-device form, and x.where(condition, y). (T, mT, H and mH are properties of
# the C type itself.)
from . import _tensor_casts  # noqa: E402,F401
from ._tensor_casts import typename  # noqa: E402,F401
from . import _tensor_methods  # noqa: E402,F401
from . import _tensor_autograd  # noqa: E402,F401
from . import _named_tensor  # noqa: E402,F401

# tessera.autograd, and torch's top-level names for the grad modes.
from . import autograd  # noqa: E402,F401
from .autograd.grad_mode import (  # noqa: E402,F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

# Operators named with a leading underscore (torch._softmax, torch._to_copy, ...), which
# `import *` leaves out: every _C function that is an aten operator's binding.
globals().update({_n: getattr(_C, _n) for _n in dir(_C)
                  if _n.startswith("_") and not _n.startswith("__") and _C._op_overloads("aten::" + _n)})

# tessera.fft: the fft_* operators under torch.fft's names.
from . import fft  # noqa: E402,F401
# tessera.linalg: the linalg_* operators under torch.linalg's names.
from . import linalg  # noqa: E402,F401
# torch 1.13's removed linalg names (eig, lstsq, solve, matrix_rank: errors) and the
# deprecated symeig (a warning), on tessera and Tensor.
from ._linalg_legacy import eig, lstsq, matrix_rank, solve, symeig  # noqa: E402,F401
# Randomized low-rank SVD / PCA and the LOBPCG eigensolver, written over the linalg ops.
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402,F401
from ._lobpcg import lobpcg  # noqa: E402,F401
# tessera.special: the special_* operators under torch.special's names.
from . import special  # noqa: E402,F401
# tessera.nested: nested tensors (torch.nested's prototype API).
from . import nested  # noqa: E402,F401
# tessera.sparse, and the sparse constructors with current torch's check_invariants=.
from . import sparse  # noqa: E402,F401
for _name in ("sparse_coo_tensor", "sparse_compressed_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
              "sparse_bsr_tensor", "sparse_bsc_tensor"):
    globals()[_name] = sparse._constructor(getattr(_C, _name))
del _name
# tessera.nn.functional: torch.nn.functional's operators.
from . import nn  # noqa: E402,F401
# tessera.optim: optimizers and learning-rate schedulers.
from . import optim  # noqa: E402,F401
# The functions torch writes in Python (torch/functional.py) over its operators.
from .functional import (  # noqa: E402,F401
    align_tensors, atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes,
    broadcast_tensors, cartesian_prod, cdist, chain_matmul, gradient, histogramdd, istft, lu, meshgrid, nonzero,
    norm, stft, tensordot, unique, unique_consecutive, _assert)

# Pickling (torch's reduce protocol) and tessera.TypedStorage.
from . import _utils  # noqa: E402,F401
from .storage import TypedStorage  # noqa: E402,F401
# Checkpoints in torch's zip format: tessera.save / tessera.load.
from . import serialization  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401

# numpy and DLPack interop (from_numpy itself comes from _C).
from ._interop import as_tensor, asarray, from_dlpack, from_file, frombuffer  # noqa: E402,F401
from .utils.dlpack import to_dlpack  # noqa: E402,F401
from . import utils  # noqa: E402,F401

# Type queries and printing options under torch's top-level names.
from ._dtype_info import (  # noqa: E402,F401
    finfo, get_default_device, get_default_dtype, iinfo, is_tensor, set_default_device, set_default_dtype)
from ._tensor_str import set_printoptions  # noqa: E402,F401

# tessera.ops: every registered operator by namespace (tessera.ops.aten.add, custom ops).
from .ops import ops  # noqa: E402,F401
# tessera.library: operators defined and implemented from Python.
from . import library  # noqa: E402,F401
# tessera.multiprocessing: tensors sent between processes travel through shared memory.
from . import multiprocessing  # noqa: E402,F401
# What a CPU-only torch has at start-up: tessera.cuda (no device), tessera.backends (the
# flags and availability queries) and tessera.onnx (no export yet).
from . import backends, cuda, onnx  # noqa: E402,F401
# torch.random, torch.testing and torch.hub under tessera's names.
from . import random, testing, hub  # noqa: E402,F401
from . import profiler  # noqa: E402,F401
# Mixed precision: tessera.autocast (the AutocastCPU key) and the GradScaler, also under
# torch's per-device names tessera.cpu.amp and tessera.cuda.amp.
from . import amp  # noqa: E402,F401
from .amp import autocast  # noqa: E402,F401
from .cpu import amp as _cpu_amp  # noqa: E402,F401
from .cuda import amp as _cuda_amp  # noqa: E402,F401
# tessera.jit: torch.jit's eager surface (is_scripting, the decorators); no TorchScript.
from . import jit  # noqa: E402,F401
# tessera.fx (torch.fx's symbolic tracing) and quantization (tessera.ao.quantization's workflow,
# tessera.ao.nn's quantized, fused and QAT modules, reachable as torch has them after
# `import torch`: tessera.nn.quantized, tessera.nn.intrinsic, tessera.nn.qat).
from . import ao, fx  # noqa: E402,F401
from .nn import intrinsic as _nn_intrinsic, qat as _nn_qat, quantized as _nn_quantized  # noqa: E402,F401
# tessera.compile: torch.compile's signature, running eagerly (no graph capture).
from ._compile import compile  # noqa: E402,F401,A001
# tessera.package: torch.package's hermetic code + pickle archives (imported eagerly, as torch does).
from . import package  # noqa: E402,F401
# torch.quasirandom (SobolEngine): its direction-number table loads at the first engine built.
from . import quasirandom  # noqa: E402,F401
# tessera.masked: torch.masked's reductions and normalizations with a mask= argument.
from . import masked  # noqa: E402,F401
# torch's older names of the sparse products: dsmm and spmm are mm (a sparse mat1, a dense
# result), hsmm is hspmm, saddmm is sspaddmm.
dsmm, spmm, hsmm, saddmm = mm, mm, hspmm, sspaddmm  # noqa: F405
# tessera.distributions: torch.distributions' probability distributions, transforms,
# constraints and kl_divergence (imported eagerly, as torch does).
from . import distributions  # noqa: E402,F401
# torch's process-wide switches and build facts (has_*, deterministic mode, ...), its
# legacy tensor and storage classes, and the Tensor methods old code and other devices use.
from ._runtime_flags import *  # noqa: E402,F401,F403
from . import _tensor_legacy, _tensor_resize  # noqa: E402,F401
from ._tensor_legacy import (  # noqa: E402,F401
    get_device_fn as get_device, is_conj_fn as is_conj, is_inference_fn as is_inference, is_neg_fn as is_neg,
    is_nonzero_fn as is_nonzero, is_same_size_fn as is_same_size)
from ._legacy_tensors import set_default_tensor_type  # noqa: E402,F401
from .storage import StorageBase, UntypedStorage, is_storage  # noqa: E402,F401
globals().update({_t.__name__: _t for _t in _legacy_tensors.TENSOR_TYPES.values()})
globals().update({_s.__name__: _s for _s in storage.LEGACY_STORAGES.values()})
Storage = FloatStorage  # noqa: F821  (set_default_tensor_type changes it, as torch's)
legacy_contiguous_format = contiguous_format  # noqa: F405
from . import return_types, torch_version, version  # noqa: E402,F401
# tessera.types: the aliases annotations use (Number, Device, _size, ...); last of the
# imports above, since it names tessera's classes.
from . import types  # noqa: E402,F401


class FatalError(Exception):
    """torch.FatalError: the exception torch's core raises for an error it cannot recover
    from. Kept for code that catches it; Tessera raises it nowhere."""


__version__ = torch_version.__version__

# Note: like torch, this namespace defines `float`, `int`, `bool`, ... as dtypes, so code
# below this line must not rely on those builtins by name.

# einsum(equation, *operands) as torch spells it (the generated binding takes a list).
from ._einsum import einsum  # noqa: E402,F401

# torch.range (deprecated, the end included): bound last, so the module's own code keeps the builtin.
from .functional import deprecated_range as range  # noqa: E402,F401,A001

# tessera.overrides (torch.overrides); the Python-defined functions of the namespaces
# become overridable last, when every one of them is bound.
from . import overrides  # noqa: E402,F401
overrides._make_python_functions_overridable()
_C._DisableTorchDispatch = utils._python_dispatch._DisableTorchDispatch
from . import _api_usage  # noqa: E402
_api_usage.install(_C)
# tessera.distributed (c10d on tessera's stores and Gloo) and tessera.futures, as torch
# makes them reachable from the top-level module.
from . import distributed, futures  # noqa: E402,F401
# torch.func's transforms (after the functions they call are defined)
from . import func  # noqa: E402,F401


def is_distributed(input):
    """Whether input is a distributed tensor; tensors never are (as in torch 1.13, where the
    legacy THD distributed tensors are gone)."""
    from .overrides import handle_torch_function, has_torch_function_unary
    if not isinstance(input, _C.Tensor) or type(input) is not _C.Tensor:
        if has_torch_function_unary(input):
            return handle_torch_function(is_distributed, (input,), input)
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"is_distributed(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return False
