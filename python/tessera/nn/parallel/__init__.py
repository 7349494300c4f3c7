"""tessera.nn.parallel as a CPU-only torch has it: DataParallel and data_parallel with no
GPU run the wrapped module on the caller's inputs (torch does the same when it finds no
device); DistributedDataParallel (distributed.py) runs on tessera.distributed's process groups."""
from ..modules.module import Module
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


def _cuda_devices(device_ids):
    """The devices DataParallel may use: none without a CUDA backend; naming one is an error."""
    from ... import cuda
    if device_ids:
        raise AssertionError("DataParallel: device_ids name CUDA devices, but " + cuda._NO_CUDA)
    return []


class DataParallel(Module):
    """Splits the input across GPUs and gathers the outputs; with no GPU (always, for now)
    forward calls `module` on the inputs unchanged, as torch's does on a CPU-only machine."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = _cuda_devices(device_ids)
        self.output_device = output_device
        self.dim = dim
        self.src_device_obj = None

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional DataParallel: module(*inputs, **module_kwargs) when there is no GPU."""
    _cuda_devices(device_ids)
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))


