"""Mapper (`map`) and Collator (`collate`): a function applied to each item, or to some
columns of it."""
import functools
from collections.abc import Sized

from ..._collate import default_collate
from .._common import check_unpickable_fn, no_length, validate_input_col
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["CollatorIterDataPipe", "MapperIterDataPipe"]


@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe):
    """Yields `fn(item)`. With `input_col` (an index or key, or several), `fn` gets those
    columns of the item as arguments and its result replaces the first of them (the others
    are removed), or goes to `output_col` (-1 appends to a list or tuple)."""

    def __init__(self, datapipe, fn, input_col=None, output_col=None):
        super().__init__()
        self.datapipe = datapipe
        check_unpickable_fn(fn)
        self.fn = fn
        self.input_col = input_col
        if input_col is None and output_col is not None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        if isinstance(output_col, (list, tuple)):
            if len(output_col) > 1:
                raise ValueError("`output_col` must be a single-element list or tuple")
            output_col = output_col[0]
        self.output_col = output_col
        validate_input_col(fn, input_col)

    def _apply_fn(self, data):
        cols = self.input_col
        if cols is None:
            return self.fn(data)
        multi = isinstance(cols, (list, tuple))
        res = self.fn(*(data[c] for c in cols)) if multi else self.fn(data[cols])
        was_tuple = isinstance(data, tuple)
        if was_tuple:
            data = list(data)
        if self.output_col is None:
            if multi:
                data[cols[0]] = res
                for c in sorted(cols[1:], reverse=True):
                    del data[c]
            else:
                data[cols] = res
        elif self.output_col == -1:
            data.append(res)
        else:
            data[self.output_col] = res
        return tuple(data) if was_tuple else data

    def __iter__(self):
        for data in self.datapipe:
            yield self._apply_fn(data)

    def __len__(self):
        if isinstance(self.datapipe, Sized):
            return len(self.datapipe)
        raise no_length(self)


def _no_dataframe_collation(conversion, batch):
    raise NotImplementedError("Collator: a dict `conversion` collates DataFrame columns (with TorchArrow), which "
                              "tessera does not support; pass a callable `collate_fn` instead.")


@functional_datapipe("collate")
class CollatorIterDataPipe(MapperIterDataPipe):
    """Maps each item (usually a batch) through `collate_fn`, by default
    tessera.utils.data.default_collate."""

    def __init__(self, datapipe, conversion=default_collate, collate_fn=None):
        if collate_fn is not None:
            super().__init__(datapipe, fn=collate_fn)
        elif callable(conversion):
            super().__init__(datapipe, fn=conversion)
        else:
            super().__init__(datapipe, fn=functools.partial(_no_dataframe_collation, conversion))
