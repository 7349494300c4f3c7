"""Concater (`concat`) and Zipper (`zip`) over MapDataPipes."""
from collections.abc import Sized

from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe

__all__ = ["ConcaterMapDataPipe", "ZipperMapDataPipe"]


def _check_inputs(datapipes):
    if len(datapipes) == 0:
        raise ValueError("Expected at least one DataPipe, but got nothing")
    if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
        raise TypeError("Expected all inputs to be `MapDataPipe`")
    if not all(isinstance(dp, Sized) for dp in datapipes):
        raise TypeError("Expected all inputs to be `Sized`")


@functional_datapipe("concat")
class ConcaterMapDataPipe(MapDataPipe):
    """Indices 0..len(first)-1 read the first pipe, the next ones the second, and so on."""

    def __init__(self, *datapipes):
        _check_inputs(datapipes)
        self.datapipes = datapipes
        self.length = -1

    def __getitem__(self, index):
        offset = 0
        for dp in self.datapipes:
            if index - offset < len(dp):
                return dp[index - offset]
            offset += len(dp)
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self):
        if self.length == -1:
            self.length = sum(len(dp) for dp in self.datapipes)
        return self.length


@functional_datapipe("zip")
class ZipperMapDataPipe(MapDataPipe):
    """The tuple of every input's item at an index; as long as the shortest input."""

    def __init__(self, *datapipes):
        _check_inputs(datapipes)
        self.datapipes = datapipes
        self.length = -1

    def __getitem__(self, index):
        items = []
        for dp in self.datapipes:
            try:
                items.append(dp[index])
            except IndexError:
                raise IndexError(f"Index {index} is out of range for one of the input MapDataPipes {dp}.")
        return tuple(items)

    def __len__(self):
        if self.length == -1:
            self.length = min(len(dp) for dp in self.datapipes)
        return self.length
