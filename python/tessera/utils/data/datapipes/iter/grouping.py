"""Batcher (`batch`), UnBatcher (`unbatch`), Grouper (`groupby`) and ShardingFilter
(`sharding_filter`, the pipe DataLoader workers split a stream at)."""
from collections.abc import Sized
from itertools import islice

from .._common import check_unpickable_fn, no_length
from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe

__all__ = ["BatcherIterDataPipe", "GrouperIterDataPipe", "ShardingFilterIterDataPipe", "UnBatcherIterDataPipe"]


def _sized_len(pipe, source):
    """len(source), or the usual TypeError naming `pipe` when the source has no length."""
    if not isinstance(source, Sized):
        raise no_length(pipe)
    return len(source)


@functional_datapipe("sharding_filter")
class ShardingFilterIterDataPipe(IterDataPipe):
    """Of the source's items, keeps every `num_of_instances`-th one starting at position
    `instance_id`. graph_settings.apply_sharding (which DataLoader calls in each worker)
    sets both numbers; until then (1, 0) lets everything through."""

    def __init__(self, source_datapipe):
        self.num_of_instances, self.instance_id = 1, 0
        self.source_datapipe = source_datapipe

    def is_shardable(self):
        return True

    def apply_sharding(self, num_of_instances, instance_id):
        self.num_of_instances, self.instance_id = num_of_instances, instance_id

    def __iter__(self):
        stride, first = self.num_of_instances, self.instance_id
        if not 0 <= first < stride:  # a share that does not exist: read the source, keep nothing
            for _ in self.source_datapipe:
                pass
            return
        yield from islice(self.source_datapipe, first, None, stride)

    def __len__(self):
        full_rounds, leftover = divmod(_sized_len(self, self.source_datapipe), self.num_of_instances)
        return full_rounds + int(self.instance_id < leftover)


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe):
    """Groups consecutive items into `wrapper_class` (DataChunk) batches of `batch_size`;
    a final, shorter batch is kept unless `drop_last`."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        assert batch_size > 0, "Batch size is required to be larger than 0!"
        super().__init__()
        self.datapipe, self.wrapper_class = datapipe, wrapper_class
        self.batch_size, self.drop_last = batch_size, drop_last

    def __iter__(self):
        source = iter(self.datapipe)
        while True:
            chunk = list(islice(source, self.batch_size))
            if len(chunk) == self.batch_size:
                yield self.wrapper_class(chunk)
                continue
            # The source ran out part-way through this batch.
            if chunk and not self.drop_last:
                yield self.wrapper_class(chunk)
            return

    def __len__(self):
        whole, partial = divmod(_sized_len(self, self.datapipe), self.batch_size)
        return whole if (self.drop_last or not partial) else whole + 1


def _flatten(item, depth, requested):
    """The items `depth` list levels inside `item` (-1: every level)."""
    if depth == 0:
        yield item
    elif not isinstance(item, list):  # DataChunk is a list too
        if depth != -1:
            raise IndexError(f"unbatch_level {requested} exceeds the depth of the DataPipe")
        yield item
    else:
        below = -1 if depth == -1 else depth - 1
        for inner in item:
            yield from _flatten(inner, below, requested)


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    """Flattens `unbatch_level` levels of lists (-1: all of them; 0: none). Going deeper
    than the data is an IndexError."""

    def __init__(self, datapipe, unbatch_level=1):
        self.datapipe, self.unbatch_level = datapipe, unbatch_level

    def __iter__(self):
        level = self.unbatch_level
        for batch in self.datapipe:
            if level < -1:
                raise ValueError("unbatch_level must be -1 or >= 0")
            yield from _flatten(batch, level, level)


@functional_datapipe("groupby")
class GrouperIterDataPipe(IterDataPipe):
    """Groups items by `group_key_fn(item)` into DataChunks. A group is yielded when it
    reaches `group_size`; when `buffer_size` items are held, the largest group leaves
    (dropped instead if smaller than `guaranteed_group_size` and `drop_remaining`, an
    error if smaller and not). At the end the remaining groups leave in key order of
    first appearance."""

    def __init__(self, datapipe, group_key_fn, *, buffer_size=10000, group_size=None, guaranteed_group_size=None,
                 drop_remaining=False):
        check_unpickable_fn(group_key_fn)
        minimum = None
        if group_size is not None and buffer_size is not None:
            assert 0 < group_size <= buffer_size
            minimum = group_size
        if guaranteed_group_size is not None:
            assert group_size is not None and 0 < guaranteed_group_size <= group_size
            minimum = guaranteed_group_size
        self.datapipe, self.group_key_fn = datapipe, group_key_fn
        self.max_buffer_size, self.group_size = buffer_size, group_size
        self.guaranteed_group_size, self.drop_remaining = minimum, drop_remaining
        self.wrapper_class = DataChunk
        self.reset()

    def reset(self):
        self._groups = {}  # key -> items, in order of (re)appearance
        self._held = 0

    def _take(self, key):
        items = self._groups.pop(key)
        self._held -= len(items)
        return items

    def _evict_largest(self):
        """Removes the biggest group (the earliest among equals): returned, or None when it
        is too small and `drop_remaining` says to discard it."""
        key = max(self._groups, key=lambda k: len(self._groups[k]))
        too_small = self.guaranteed_group_size is not None and len(self._groups[key]) < self.guaranteed_group_size
        if too_small and not self.drop_remaining:
            raise RuntimeError("Failed to group items", str(self._groups[key]))
        items = self._take(key)
        return None if too_small else items

    def __iter__(self):
        for element in self.datapipe:
            key = self.group_key_fn(element)
            self._groups.setdefault(key, []).append(element)
            self._held += 1
            if len(self._groups[key]) == self.group_size:
                yield self.wrapper_class(self._take(key))
            if self._held == self.max_buffer_size:
                evicted = self._evict_largest()
                if evicted is not None:
                    yield self.wrapper_class(evicted)
        while self._groups:
            yield self.wrapper_class(self._take(next(iter(self._groups))))

    def __getstate__(self):
        kept = {name: value for name, value in self.__dict__.items() if name not in ("_groups", "_held")}
        return self._hooked_state(kept)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.reset()
