"""Filter (`filter`): the items a predicate keeps."""
from .._common import StreamWrapper, check_unpickable_fn, deprecation_warning, validate_input_col
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["FilterIterDataPipe"]


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe):
    """Yields the items for which `filter_fn` (given the item, or its `input_col` columns)
    returns True; it must return a bool. Empty lists are dropped too (the deprecated
    `drop_empty_batches=False` keeps them). The length is unknown."""

    def __init__(self, datapipe, filter_fn, drop_empty_batches=None, input_col=None):
        super().__init__()
        check_unpickable_fn(filter_fn)
        if drop_empty_batches is not None:
            deprecation_warning(type(self).__name__, deprecation_version="1.12", removal_version="1.14",
                                old_argument_name="drop_empty_batches")
        validate_input_col(filter_fn, input_col)
        self.datapipe, self.filter_fn, self.input_col = datapipe, filter_fn, input_col
        self.drop_empty_batches = True if drop_empty_batches is None else drop_empty_batches

    def _verdict(self, data):
        selector = self.input_col
        if selector is None:
            args = (data,)
        elif isinstance(selector, (list, tuple)):
            args = tuple(data[c] for c in selector)
        else:
            args = (data[selector],)
        keep = self.filter_fn(*args)
        if isinstance(keep, bool):
            return keep
        raise ValueError("Boolean output is required for `filter_fn` of FilterIterDataPipe, got", type(keep))

    def _discard(self, data):
        """Whether an item the predicate accepted is still left out (None, or an empty batch)."""
        if data is None:
            return True
        return self.drop_empty_batches and isinstance(data, list) and not data

    def __iter__(self):
        for data in self.datapipe:
            if not self._verdict(data) or self._discard(data):
                StreamWrapper.close_streams(data)
                continue
            yield data
