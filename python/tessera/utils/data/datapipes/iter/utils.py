"""IterableWrapper: any iterable as an IterDataPipe."""
from copy import deepcopy as _deep_copy
from warnings import warn

from ..datapipe import IterDataPipe

__all__ = ["IterableWrapperIterDataPipe"]


def _copy_or_same(iterable):
    """A deep copy of `iterable`; the original, with a warning, when it cannot be copied."""
    try:
        return _deep_copy(iterable)
    except TypeError:
        warn("The input iterable can not be deepcopied, please be aware of in-place modification would "
                      "affect source data.")
    return iterable


class IterableWrapperIterDataPipe(IterDataPipe):
    """Yields the items of `iterable`. With `deepcopy` (default) each iteration reads a deep
    copy, so changes to the source after construction, or to yielded items, do not leak."""

    def __init__(self, iterable, deepcopy=True):
        self.deepcopy, self.iterable = deepcopy, iterable

    def __len__(self):
        return len(self.iterable)

    def __iter__(self):
        yield from (_copy_or_same(self.iterable) if self.deepcopy else self.iterable)
