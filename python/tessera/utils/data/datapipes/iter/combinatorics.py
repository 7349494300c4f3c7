"""Sampler (the indices a sampler draws over a sized pipe) and Shuffler (`shuffle`): a
buffered shuffle driven by Python's `random.Random`, seeded per iteration."""
import random
from collections.abc import Sized

from ..... import _C
from ...sampler import SequentialSampler
from .._common import no_length
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["SamplerIterDataPipe", "ShufflerIterDataPipe"]


class SamplerIterDataPipe(IterDataPipe):
    """Yields what `sampler(data_source=datapipe, *sampler_args, **sampler_kwargs)` yields."""

    def __init__(self, datapipe, sampler=SequentialSampler, sampler_args=None, sampler_kwargs=None):
        assert isinstance(datapipe, Sized), "Sampler class requires input datapipe implemented `__len__`"
        super().__init__()
        args = tuple() if sampler_args is None else sampler_args
        kwargs = dict() if sampler_kwargs is None else sampler_kwargs
        self.datapipe, self.sampler_args, self.sampler_kwargs = datapipe, args, kwargs
        self.sampler = sampler(*args, data_source=datapipe, **kwargs)

    def __len__(self):
        known = isinstance(self.sampler, Sized) and len(self.sampler) >= 0
        if not known:
            raise no_length(self)
        return len(self.sampler)

    def __iter__(self):
        return iter(self.sampler)


def _fresh_seed():
    """A seed from tessera's global generator, as torch draws one from its own."""
    return int(_C.empty((), dtype=_C.int64).random_().item())


@functional_datapipe("shuffle")
class ShufflerIterDataPipe(IterDataPipe):
    """Shuffles through a buffer of `buffer_size` items: once full, each new item replaces a
    uniformly chosen one, which is yielded; at the end the rest leave in random order.

    Each iteration seeds a `random.Random` with the seed given by `set_seed` (used once),
    or else with one drawn from tessera's global generator; so with `set_seed(s)` the order
    is exactly torch's for the same `s`. `set_shuffle(False)` passes items through.
    """

    def __init__(self, datapipe, *, buffer_size=10000, unbatch_level=0):
        super().__init__()
        self._buffer = []
        assert buffer_size > 0, "buffer_size should be larger than 0"
        if unbatch_level != 0:
            datapipe = datapipe.unbatch(unbatch_level=unbatch_level)
        self.datapipe, self.buffer_size = datapipe, buffer_size
        self._rng, self._seed, self._enabled = random.Random(), None, True

    def set_seed(self, seed):
        self._seed = seed
        return self

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def reset(self):
        self._buffer = []
        if not self._enabled:
            return
        seed, self._seed = self._seed, None
        self._rng.seed(_fresh_seed() if seed is None else seed)

    def _pick(self):
        """A uniformly chosen position of the buffer (the same draw torch makes)."""
        return self._rng.randint(0, len(self._buffer) - 1)

    def __iter__(self):
        if self._enabled:
            pool = self._buffer
            for incoming in self.datapipe:
                if len(pool) < self.buffer_size:
                    pool.append(incoming)
                    continue
                slot = self._pick()
                outgoing = pool[slot]
                pool[slot] = incoming
                yield outgoing
            while pool:
                yield pool.pop(self._pick())
        else:
            yield from self.datapipe

    def __len__(self):
        if not isinstance(self.datapipe, Sized):
            raise no_length(self)
        return len(self.datapipe)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_rng"] = self._rng.getstate()
        return self._hooked_state(state)

    def __setstate__(self, state):
        rng = random.Random()
        rng.setstate(state["_rng"])
        self.__dict__.update(state)
        self._rng = rng
