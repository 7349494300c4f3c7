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
        self.datapipe, self.wrapper_class = datapipe, wrapper_class
        self.batch_size, self.drop_last = batch_size, drop_last

    def __getitem__(self, index):
        start = index * self.batch_size
        items = []
        for position in range(start, start + self.batch_size):
            try:
                items.append(self.datapipe[position])
            except IndexError:
                # Past the source's end: a partial batch stands unless drop_last.
                if items and not self.drop_last:
                    break
                raise IndexError(f"Index {index} is out of bound.")
        return self.wrapper_class(items)

    def __len__(self):
        if not isinstance(self.datapipe, Sized):
            raise no_length(self)
        whole, partial = divmod(len(self.datapipe), self.batch_size)
        return whole if (self.drop_last or not partial) else whole + 1
