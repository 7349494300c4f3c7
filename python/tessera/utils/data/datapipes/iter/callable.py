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
        check_unpickable_fn(fn)
        output_is_seq = isinstance(output_col, (list, tuple))
        if output_col is not None and input_col is None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        if output_is_seq and len(output_col) > 1:
            raise ValueError("`output_col` must be a single-element list or tuple")
        if output_is_seq:
            output_col = output_col[:1][0]
        validate_input_col(fn, input_col)
        self.datapipe, self.fn = datapipe, fn
        self.input_col, self.output_col = input_col, output_col

    def _apply_fn(self, data):
        where = self.input_col
        if where is None:
            return self.fn(data)
        several = isinstance(where, (list, tuple))
        result = self.fn(*[data[c] for c in where]) if several else self.fn(data[where])
        row = list(data) if isinstance(data, tuple) else data
        target = self.output_col
        if target == -1:
            row.append(result)
        elif target is not None:
            row[target] = result
        elif not several:
            row[where] = result
        else:
            # The result takes the first input column's place; the other inputs go.
            row[where[0]] = result
            for extra in sorted(where[1:], reverse=True):
                del row[extra]
        return tuple(row) if isinstance(data, tuple) else row

    def __iter__(self):
        yield from map(self._apply_fn, self.datapipe)

    def __len__(self):
        if not isinstance(self.datapipe, Sized):
            raise no_length(self)
        return len(self.datapipe)


def _no_dataframe_collation(conversion, batch):
    raise NotImplementedError("Collator: a dict `conversion` collates DataFrame columns (with TorchArrow), which "
                              "tessera does not support; pass a callable `collate_fn` instead.")


@functional_datapipe("collate")
class CollatorIterDataPipe(MapperIterDataPipe):
    """Maps each item (usually a batch) through `collate_fn`, by default
    tessera.utils.data.default_collate."""

    def __init__(self, datapipe, conversion=default_collate, collate_fn=None):
        if collate_fn is None:
            collate_fn = conversion if callable(conversion) else functools.partial(_no_dataframe_collation,
                                                                                  conversion)
        super().__init__(datapipe, fn=collate_fn)
