"""Batcher (`batch`) over a MapDataPipe."""
from collections.abc import Sized

from .._common import no_length
from .._decorator import functional_datapipe
from ..datapipe import DataChunk, MapDataPipe

__all__ = ["BatcherMapDataPipe"]


@functional_datapipe("batch")
class BatcherMapDataPipe(MapDataPipe):
    """Index i is the DataChunk of items i*batch_size .. (i+1)*batch_size-1; a last,
    shorter batch exists unless `drop_last`."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        assert batch_size > 0, "Batch size is required to be larger than 0!"
        super().__init__()
        self.datapipe = datapipe
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.length = None
        self.wrapper_class = wrapper_class

    def __getitem__(self, index):
        batch = []
        try:
            for i in range(index * self.batch_size, (index + 1) * self.batch_size):
                batch.append(self.datapipe[i])
        except IndexError:
            if self.drop_last or not batch:
                raise IndexError(f"Index {index} is out of bound.")
        return self.wrapper_class(batch)

    def __len__(self):
        if self.length is None:
            if not isinstance(self.datapipe, Sized):
                raise no_length(self)
            n = len(self.datapipe)
            self.length = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return self.length
