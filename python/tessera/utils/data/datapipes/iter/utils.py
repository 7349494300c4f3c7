"""IterableWrapper: any iterable as an IterDataPipe."""
import copy
import warnings

from ..datapipe import IterDataPipe

__all__ = ["IterableWrapperIterDataPipe"]


class IterableWrapperIterDataPipe(IterDataPipe):
    """Yields the items of `iterable`. With `deepcopy` (default) each iteration reads a deep
    copy, so changes to the source after construction, or to yielded items, do not leak."""

    def __init__(self, iterable, deepcopy=True):
        self.iterable = iterable
        self.deepcopy = deepcopy

    def __iter__(self):
        source = self.iterable
        if self.deepcopy:
            try:
                source = copy.deepcopy(self.iterable)
            except TypeError:
                warnings.warn("The input iterable can not be deepcopied, please be aware of in-place modification "
                              "would affect source data.")
        yield from source

    def __len__(self):
        return len(self.iterable)
