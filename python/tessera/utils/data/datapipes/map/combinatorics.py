"""Shuffler (`shuffle` on a MapDataPipe): an IterDataPipe over a random permutation of the
indices, drawn from Python's `random.Random` seeded per iteration."""
from random import Random

from ..... import _C
from ..datapipe import IterDataPipe, MapDataPipe

__all__ = ["ShufflerIterDataPipe"]


def _global_seed():
    """A seed drawn from tessera's global generator, as torch draws one from its own."""
    return int(_C.empty((), dtype=_C.int64).random_().item())


class ShufflerIterDataPipe(IterDataPipe):
    """Yields `datapipe[i]` for the `indices` (default: all) in a random order: each
    iteration seeds with the `set_seed` value (used once) or one drawn from tessera's
    global generator, then takes `random.sample` of the indices, read from the end. So with
    `set_seed(s)` the order is exactly torch's. `set_shuffle(False)`: indices in order."""

    def __init__(self, datapipe, *, indices=None):
        super().__init__()
        if indices is None:
            indices = list(range(len(datapipe)))
        self.datapipe, self.indices = datapipe, indices
        self._enabled, self._seed = True, None
        self._rng = Random()
        self._order = list(indices)  # what the next iteration reads, last index first

    def set_seed(self, seed):
        self._seed = seed
        return self

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def reset(self):
        seed = self._seed
        if seed is None and self._enabled:
            seed = _global_seed()
        self._seed = None
        self._rng.seed(seed)
        self._order = self._rng.sample(self.indices, len(self.indices))

    def __iter__(self):
        if self._enabled:
            order = self._order
            while order:
                yield self.datapipe[order.pop()]
        else:
            yield from (self.datapipe[i] for i in self.indices)

    def __len__(self):
        return len(self.datapipe)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_rng"] = self._rng.getstate()
        return self._hooked_state(state)

    def __setstate__(self, state):
        rng = Random()
        rng.setstate(state["_rng"])
        self.__dict__.update(state)
        self._rng = rng


MapDataPipe.register_datapipe_as_function("shuffle", ShufflerIterDataPipe)
