"""Shuffler (`shuffle` on a MapDataPipe): an IterDataPipe over a random permutation of the
indices, drawn from Python's `random.Random` seeded per iteration."""
import random

from ..... import _C
from ..datapipe import IterDataPipe, MapDataPipe

__all__ = ["ShufflerIterDataPipe"]


class ShufflerIterDataPipe(IterDataPipe):
    """Yields `datapipe[i]` for the `indices` (default: all) in a random order: each
    iteration seeds with the `set_seed` value (used once) or one drawn from tessera's
    global generator, then takes `random.sample` of the indices, read from the end. So with
    `set_seed(s)` the order is exactly torch's. `set_shuffle(False)`: indices in order."""

    def __init__(self, datapipe, *, indices=None):
        super().__init__()
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else indices
        self._enabled = True
        self._seed = None
        self._rng = random.Random()
        self._shuffled_indices = self.indices

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def __iter__(self):
        if not self._enabled:
            for i in self.indices:
                yield self.datapipe[i]
        else:
            while self._shuffled_indices:
                yield self.datapipe[self._shuffled_indices.pop()]

    def reset(self):
        if self._enabled and self._seed is None:
            self._seed = int(_C.empty((), dtype=_C.int64).random_().item())
        self._rng.seed(self._seed)
        self._seed = None
        self._shuffled_indices = self._rng.sample(self.indices, len(self.indices))

    def __len__(self):
        return len(self.datapipe)

    def __getstate__(self):
        return self._hooked_state((self.datapipe, self.indices, self._enabled, self._seed, self._rng.getstate(),
                                   self._shuffled_indices, self._valid_iterator_id,
                                   self._number_of_samples_yielded))

    def __setstate__(self, state):
        (self.datapipe, self.indices, self._enabled, self._seed, rng_state, self._shuffled_indices,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._rng = random.Random()
        self._rng.setstate(rng_state)


MapDataPipe.register_datapipe_as_function("shuffle", ShufflerIterDataPipe)
