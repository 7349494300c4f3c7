"""tessera.random, as torch.random: the default CPU generator's seeding and state, and
fork_rng to run a block on a copy of the random streams."""
import contextlib
import warnings

from . import _C
from . import cuda as _cuda
from ._C import Generator, default_generator  # noqa: F401

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng", "default_generator"]


def set_rng_state(new_state):
    """Restores the default CPU generator from a uint8 tensor that get_rng_state returned."""
    _C.set_rng_state(new_state)


def get_rng_state():
    """The default CPU generator's state as a uint8 tensor."""
    return _C.get_rng_state()


def manual_seed(seed):
    """Seeds the default generator (and, as torch, the CUDA ones: none here) and returns it."""
    return _C.manual_seed(seed)


def seed():
    """Seeds the default generator from a non-deterministic source and returns the seed."""
    return _C.seed()


def initial_seed():
    """The seed the default generator was last seeded with."""
    return _C.initial_seed()


_warned_many_devices = False


def _cuda_rng(name):
    fn = getattr(_cuda, name, None)
    if fn is None:  # a CPU-only build: raises as torch does without CUDA
        _cuda._lazy_init()
    return fn


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices"):
    """Runs the block, then puts the CPU generator (and the CUDA generators of ``devices``,
    default: every visible one) back to the state it had on entry. ``enabled=False``
    makes it a no-op."""
    global _warned_many_devices
    if not enabled:
        yield
        return
    if devices is None:
        count = _cuda.device_count()
        if count > 1 and not _warned_many_devices:
            warnings.warn(f"{_caller} forks the random state of all {count} CUDA devices, which initialises each of "
                          f"them; pass the ones you use as '{_devices_kw}' (devices=[] for CPU only), or "
                          f"range({count}) to keep this behaviour without the warning.")
            _warned_many_devices = True
        devices = list(range(count))
    else:
        devices = list(devices)
    cpu_state = get_rng_state()
    device_states = [_cuda_rng("get_rng_state")(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states):
            _cuda_rng("set_rng_state")(state, d)
