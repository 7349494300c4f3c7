"""tessera.backends: the flags programs set at start-up (cudnn.benchmark, allow_tf32, ...)
and the availability queries, answered as for Tessera's CPU build: oneDNN (convolutions)
and OpenMP are there; CUDA, cuDNN, MPS and MKL are not. The flags are kept and read back;
they change nothing on the CPU, as in a CPU-only torch."""
import sys as _sys
import types as _types


class _Flags(_types.ModuleType):
    """A submodule whose attributes are plain settable flags."""

    def __init__(self, name, doc, **flags):
        super().__init__(name, doc)
        self.__dict__.update(flags)


def _query(value):
    return lambda: value


cudnn = _Flags("tessera.backends.cudnn", "cuDNN settings; cuDNN is not available.", enabled=True, benchmark=False,
               deterministic=False, allow_tf32=True, benchmark_limit=10)
cudnn.is_available = _query(False)
cudnn.version = _query(None)

cuda = _Flags("tessera.backends.cuda", "CUDA settings; no CUDA backend in this build.")
cuda.matmul = _Flags("tessera.backends.cuda.matmul", "cuBLAS settings.", allow_tf32=False,
                     allow_fp16_reduced_precision_reduction=True)
cuda.is_built = _query(False)

mkldnn = _Flags("tessera.backends.mkldnn", "oneDNN (formerly MKL-DNN): Tessera's convolutions use it.",
                enabled=True)
mkldnn.is_available = _query(True)

openmp = _Flags("tessera.backends.openmp", "OpenMP: Tessera's CPU kernels use it.")
openmp.is_available = _query(True)

mps = _Flags("tessera.backends.mps", "Apple's Metal backend: not available.")
mps.is_available = _query(False)
mps.is_built = _query(False)

mkl = _Flags("tessera.backends.mkl", "Intel MKL: not used (Tessera's BLAS is OpenBLAS).")
mkl.is_available = _query(False)

opt_einsum = _Flags("tessera.backends.opt_einsum", "opt_einsum contraction ordering: not used.", enabled=False,
                    strategy=None)
opt_einsum.is_available = _query(False)

for _sub in (cudnn, cuda, mkldnn, openmp, mps, mkl, opt_einsum):
    _sys.modules[_sub.__name__] = _sub  # `import tessera.backends.cudnn` works too
