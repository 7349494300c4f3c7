"""Samplers under torch.utils.data's names: iterables of dataset indices (or of lists of
indices, BatchSampler) that decide the order a DataLoader reads a map-style dataset in.
"""
import itertools
from typing import Generic, TypeVar

from ... import _C

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class of samplers: subclasses define __iter__ and usually __len__."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _fresh_generator():
    # Without a generator each epoch draws its own seed from the global RNG, so that
    # tessera.manual_seed still makes the whole run reproducible.
    seed = int(_C.empty((), dtype=_C.int64, device="cpu").random_().item())
    g = _C.Generator()
    g.manual_seed(seed)
    return g


class RandomSampler(Sampler[int]):
    """A random permutation of the indices (several, concatenated, when num_samples exceeds
    the dataset), or num_samples indices drawn with replacement."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        g = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            # Drawn in chunks of 32, as torch does, so a partly consumed epoch costs little.
            for _ in range(self.num_samples // 32):
                yield from _C.randint(high=n, size=(32,), dtype=_C.int64, generator=g, device="cpu").tolist()
            yield from _C.randint(high=n, size=(self.num_samples % 32,), dtype=_C.int64, generator=g,
                                  device="cpu").tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _C.randperm(n, generator=g, device="cpu").tolist()
            yield from _C.randperm(n, generator=g, device="cpu").tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _C.randperm(len(self.indices), generator=self.generator, device="cpu").tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """num_samples indices into `weights`, each drawn with probability proportional to its
    weight (tessera.multinomial)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        from ... import as_tensor
        weights_tensor = as_tensor(weights, dtype=_C.float64)
        if weights_tensor.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = _C.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups the indices of `sampler` into lists of batch_size (the last one shorter,
    unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            # islice pulls at most batch_size indices, so an infinite sampler works too.
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch
            if len(batch) < self.batch_size:
                return

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
