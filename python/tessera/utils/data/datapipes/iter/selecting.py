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
        self.datapipe = datapipe
        check_unpickable_fn(filter_fn)
        self.filter_fn = filter_fn
        if drop_empty_batches is None:
            drop_empty_batches = True
        else:
            deprecation_warning(type(self).__name__, deprecation_version="1.12", removal_version="1.14",
                                old_argument_name="drop_empty_batches")
        self.drop_empty_batches = drop_empty_batches
        self.input_col = input_col
        validate_input_col(filter_fn, input_col)

    def _keep(self, data):
        cols = self.input_col
        if cols is None:
            cond = self.filter_fn(data)
        elif isinstance(cols, (list, tuple)):
            cond = self.filter_fn(*(data[c] for c in cols))
        else:
            cond = self.filter_fn(data[cols])
        if not isinstance(cond, bool):
            raise ValueError("Boolean output is required for `filter_fn` of FilterIterDataPipe, got", type(cond))
        return cond

    def __iter__(self):
        for data in self.datapipe:
            if self._keep(data) and data is not None and \
                    not (isinstance(data, list) and len(data) == 0 and self.drop_empty_batches):
                yield data
            else:
                StreamWrapper.close_streams(data)
