"""Datasets under torch.utils.data's names: the map-style Dataset and the stream-style
IterableDataset, and the ways of combining them (TensorDataset, StackDataset, Subset,
ConcatDataset, ChainDataset, random_split).
"""
import bisect
import itertools
import math
import warnings
from typing import Generic, TypeVar

from ... import _C

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset",
           "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map from keys (usually indices 0..len-1) to samples: subclasses define __getitem__
    and, for the default samplers, __len__."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A stream of samples: subclasses define __iter__. With DataLoader workers every worker
    iterates its own copy; shard the stream with get_worker_info()."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the rows (first dimension) of several tensors of equal length."""

    def __init__(self, *tensors):
        # torch checks with an assert, so the error class is AssertionError there too.
        assert all(tensors[0].size(0) == t.size(0) for t in tensors), "Size mismatch between tensors"
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Samples are tuples (positional datasets) or dicts (keyword datasets) of the samples of
    several datasets of equal length."""

    def __init__(self, *args, **kwargs):
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                                 "input/output, but both types are given.")
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            parts = list(kwargs.values())
            self._length = len(parts[0])
            if any(self._length != len(d) for d in parts):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Several map-style datasets one after another."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        assert len(self.datasets) > 0, "datasets should not be an empty iterable"
        for d in self.datasets:
            assert not isinstance(d, IterableDataset), "ConcatDataset does not support IterableDataset"
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        # The first dataset whose cumulative end lies past idx holds it.
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]

    @property
    def cummulative_sizes(self):
        warnings.warn("cummulative_sizes attribute is renamed to cumulative_sizes", DeprecationWarning,
                      stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """Several iterable datasets streamed one after another."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of `dataset` at `indices`, renumbered 0..len(indices)-1."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        # A dataset that fetches a whole batch at once keeps doing so through the subset.
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def _lengths_from_fractions(n, fractions):
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(int(math.floor(n * frac)))
    # What flooring left over goes one by one to the splits, first to last.
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.")
    return lengths


def random_split(dataset, lengths, generator=None):
    """Splits `dataset` into non-overlapping Subsets of the given lengths, or of the given
    fractions of its length (summing to 1), drawn by a random permutation.

    generator: a tessera.Generator (default: the global one)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_from_fractions(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    if generator is None:
        generator = _C.default_generator
    order = _C.randperm(sum(lengths), generator=generator, device="cpu").tolist()
    ends = list(itertools.accumulate(lengths))
    return [Subset(dataset, order[end - length:end]) for end, length in zip(ends, lengths)]
