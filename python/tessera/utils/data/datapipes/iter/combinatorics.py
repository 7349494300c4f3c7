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
        self.datapipe = datapipe
        self.sampler_args = () if sampler_args is None else sampler_args
        self.sampler_kwargs = {} if sampler_kwargs is None else sampler_kwargs
        self.sampler = sampler(*self.sampler_args, data_source=self.datapipe, **self.sampler_kwargs)

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self):
        if isinstance(self.sampler, Sized) and len(self.sampler) >= 0:
            return len(self.sampler)
        raise no_length(self)


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
        self.datapipe = datapipe if unbatch_level == 0 else datapipe.unbatch(unbatch_level=unbatch_level)
        self.buffer_size = buffer_size
        self._enabled = True
        self._seed = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def __iter__(self):
        if not self._enabled:
            yield from self.datapipe
            return
        buf, rng = self._buffer, self._rng
        for x in self.datapipe:
            if len(buf) == self.buffer_size:
                i = rng.randint(0, len(buf) - 1)
                out, buf[i] = buf[i], x
                yield out
            else:
                buf.append(x)
        while buf:
            yield buf.pop(rng.randint(0, len(buf) - 1))

    def __len__(self):
        if isinstance(self.datapipe, Sized):
            return len(self.datapipe)
        raise no_length(self)

    def reset(self):
        self._buffer = []
        if self._enabled:
            self._rng.seed(_fresh_seed() if self._seed is None else self._seed)
            self._seed = None

    def __getstate__(self):
        return self._hooked_state((self.datapipe, self.buffer_size, self._enabled, self._seed, self._buffer,
                                   self._rng.getstate(), self._valid_iterator_id, self._number_of_samples_yielded))

    def __setstate__(self, state):
        (self.datapipe, self.buffer_size, self._enabled, self._seed, self._buffer, rng_state,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._rng = random.Random()
        self._rng.setstate(rng_state)
