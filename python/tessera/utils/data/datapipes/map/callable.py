"""Mapper (`map`) over a MapDataPipe."""
from .._common import check_unpickable_fn
from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe

__all__ = ["MapperMapDataPipe"]


def default_fn(data):
    """The identity: Mapper's function when none is given."""
    return data


@functional_datapipe("map")
class MapperMapDataPipe(MapDataPipe):
    """`fn(datapipe[index])` for each index."""

    def __init__(self, datapipe, fn=default_fn):
        check_unpickable_fn(fn)
        self.datapipe, self.fn = datapipe, fn

    def __getitem__(self, index):
        item = self.datapipe[index]
        return self.fn(item)

    def __len__(self):
        return len(self.datapipe)
