"""SequenceWrapper: an indexable sequence as a MapDataPipe."""
from copy import deepcopy as _deep_copy
from warnings import warn

from ..datapipe import MapDataPipe

__all__ = ["SequenceWrapperMapDataPipe"]

_NO_COPY_WARNING = ("The input sequence can not be deepcopied, please be aware of in-place modification would "
                    "affect source data")


def _private_copy(sequence):
    """A deep copy of `sequence`, or (with a warning) `sequence` itself when it cannot be copied."""
    try:
        return _deep_copy(sequence)
    except TypeError:
        warn(_NO_COPY_WARNING)
        return sequence


class SequenceWrapperMapDataPipe(MapDataPipe):
    """`sequence[index]` for each index; by default over a deep copy made at construction."""

    def __init__(self, sequence, deepcopy=True):
        self.sequence = _private_copy(sequence) if deepcopy else sequence

    def __len__(self):
        return len(self.sequence)

    def __getitem__(self, index):
        return self.sequence.__getitem__(index)
