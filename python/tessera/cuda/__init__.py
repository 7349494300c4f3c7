"""tessera.cuda as a CPU-only torch has it: programs that probe for a GPU at start-up
(is_available, device_count, seeding, cache and memory queries) carry on, and the calls
that need a device raise as torch's do without one. Tessera has no CUDA backend yet (the
CUDA issue fills this module in); until then no device is ever available."""
import contextlib as _contextlib

__all__ = ["is_available", "device_count", "is_initialized", "init", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "initial_seed", "empty_cache", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "memory_stats", "reset_peak_memory_stats", "synchronize",
           "current_device", "set_device", "get_device_name", "get_device_capability", "get_device_properties",
           "is_bf16_supported", "get_rng_state_all", "set_rng_state_all", "get_arch_list", "device", "device_of"]

_NO_CUDA = "Tessera has no CUDA backend in this build (CPU only): no CUDA device is available"


def _lazy_init():
    raise AssertionError(_NO_CUDA)


def is_available():
    """False: no CUDA device can be used."""
    return False


def device_count():
    return 0


def is_initialized():
    return False


def init():
    _lazy_init()


# Seeding is accepted and remembered for no device, as a CPU-only torch queues it.
def manual_seed(seed):
    int(seed)


def manual_seed_all(seed):
    int(seed)


def seed():
    pass


def seed_all():
    pass


def initial_seed():
    _lazy_init()


def empty_cache():
    pass


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def memory_stats(device=None):
    return {}


def reset_peak_memory_stats(device=None):
    _lazy_init()


def synchronize(device=None):
    _lazy_init()


def current_device():
    _lazy_init()


def set_device(device):
    _lazy_init()


def get_device_name(device=None):
    _lazy_init()


def get_device_capability(device=None):
    _lazy_init()


def get_device_properties(device):
    _lazy_init()


def is_bf16_supported():
    _lazy_init()


def get_rng_state_all():
    return []


def set_rng_state_all(new_states):
    for _ in new_states:
        _lazy_init()


def get_arch_list():
    return []


class device:
    """Context manager that would make `idx` the current device; entering it needs one."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        if self.idx is not None and self.idx != -1:
            _lazy_init()

    def __exit__(self, *exc):
        return False


def device_of(obj):
    """The device context of a tensor: a no-op for CPU tensors."""
    return device(-1) if not getattr(obj, "is_cuda", False) else device(obj.get_device())


@_contextlib.contextmanager
def stream(stream=None):
    if stream is not None:
        _lazy_init()
    yield
