"""Concater (`concat`) and Zipper (`zip`) over MapDataPipes."""
from collections.abc import Sized

from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe

__all__ = ["ConcaterMapDataPipe", "ZipperMapDataPipe"]


def _validated(datapipes):
    """`datapipes`, once it is known to be a non-empty collection of sized MapDataPipes."""
    problem = None
    if not datapipes:
        problem = ValueError("Expected at least one DataPipe, but got nothing")
    elif any(not isinstance(dp, MapDataPipe) for dp in datapipes):
        problem = TypeError("Expected all inputs to be `MapDataPipe`")
    elif any(not isinstance(dp, Sized) for dp in datapipes):
        problem = TypeError("Expected all inputs to be `Sized`")
    if problem is not None:
        raise problem
    return datapipes


@functional_datapipe("concat")
class ConcaterMapDataPipe(MapDataPipe):
    """Indices 0..len(first)-1 read the first pipe, the next ones the second, and so on."""

    def __init__(self, *datapipes):
        self.datapipes = _validated(datapipes)

    def __getitem__(self, index):
        local = index
        for part in self.datapipes:
            size = len(part)
            if local < size:
                return part[local]
            local -= size
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self):
        return sum(map(len, self.datapipes))


@functional_datapipe("zip")
class ZipperMapDataPipe(MapDataPipe):
    """The tuple of every input's item at an index; as long as the shortest input."""

    def __init__(self, *datapipes):
        self.datapipes = _validated(datapipes)

    def _item_of(self, dp, index):
        try:
            return dp[index]
        except IndexError:
            raise IndexError(f"Index {index} is out of range for one of the input MapDataPipes {dp}.")

    def __getitem__(self, index):
        return tuple(self._item_of(dp, index) for dp in self.datapipes)

    def __len__(self):
        return min(map(len, self.datapipes))
