"""Batcher (`batch`), UnBatcher (`unbatch`), Grouper (`groupby`) and ShardingFilter
(`sharding_filter`, the pipe DataLoader workers split a stream at)."""
from collections import defaultdict
from collections.abc import Sized

from .._common import check_unpickable_fn, no_length
from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe

__all__ = ["BatcherIterDataPipe", "GrouperIterDataPipe", "ShardingFilterIterDataPipe", "UnBatcherIterDataPipe"]


@functional_datapipe("sharding_filter")
class ShardingFilterIterDataPipe(IterDataPipe):
    """Keeps items i with i % num_of_instances == instance_id; graph_settings.apply_sharding
    (which DataLoader calls in each worker) sets the two numbers. Unsharded: everything."""

    def __init__(self, source_datapipe):
        self.source_datapipe = source_datapipe
        self.num_of_instances = 1
        self.instance_id = 0

    def is_shardable(self):
        return True

    def apply_sharding(self, num_of_instances, instance_id):
        self.num_of_instances = num_of_instances
        self.instance_id = instance_id

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self):
        if isinstance(self.source_datapipe, Sized):
            n, k = len(self.source_datapipe), self.num_of_instances
            return n // k + (1 if self.instance_id < n % k else 0)
        raise no_length(self)


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe):
    """Consecutive items in `wrapper_class` (DataChunk) batches of `batch_size`; the last,
    shorter one is dropped when `drop_last`."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        assert batch_size > 0, "Batch size is required to be larger than 0!"
        super().__init__()
        self.datapipe = datapipe
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.length = None
        self.wrapper_class = wrapper_class

    def __iter__(self):
        batch = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self):
        if self.length is None:
            if not isinstance(self.datapipe, Sized):
                raise no_length(self)
            n = len(self.datapipe)
            self.length = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return self.length


@functional_datapipe("unbatch")
class UnBatcherIterDataPipe(IterDataPipe):
    """Flattens `unbatch_level` levels of lists (-1: all of them; 0: none). Going deeper
    than the data is an IndexError."""

    def __init__(self, datapipe, unbatch_level=1):
        self.datapipe = datapipe
        self.unbatch_level = unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, self.unbatch_level)

    def _dive(self, element, level):
        if level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        if level == 0:
            yield element
        elif isinstance(element, list):  # DataChunk is a list
            for item in element:
                yield from self._dive(item, level if level == -1 else level - 1)
        elif level == -1:
            yield element
        else:
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the DataPipe")


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
        self.datapipe = datapipe
        self.group_key_fn = group_key_fn
        self.max_buffer_size = buffer_size
        self.buffer_elements = defaultdict(list)
        self.curr_buffer_size = 0
        self.group_size = group_size
        self.guaranteed_group_size = None
        if group_size is not None and buffer_size is not None:
            assert 0 < group_size <= buffer_size
            self.guaranteed_group_size = group_size
        if guaranteed_group_size is not None:
            assert group_size is not None and 0 < guaranteed_group_size <= group_size
            self.guaranteed_group_size = guaranteed_group_size
        self.drop_remaining = drop_remaining
        self.wrapper_class = DataChunk

    def _remove_biggest_key(self):
        biggest_key, biggest_size = None, 0
        for key, group in self.buffer_elements.items():
            if len(group) > biggest_size:
                biggest_key, biggest_size = key, len(group)
        small = self.guaranteed_group_size is not None and biggest_size < self.guaranteed_group_size
        if small and not self.drop_remaining:
            raise RuntimeError("Failed to group items", str(self.buffer_elements[biggest_key]))
        result = None if small else self.buffer_elements[biggest_key]
        self.curr_buffer_size -= biggest_size
        del self.buffer_elements[biggest_key]
        return result

    def __iter__(self):
        for x in self.datapipe:
            key = self.group_key_fn(x)
            group = self.buffer_elements[key]
            group.append(x)
            self.curr_buffer_size += 1
            if self.group_size is not None and len(group) == self.group_size:
                yield self.wrapper_class(group)
                self.curr_buffer_size -= len(group)
                del self.buffer_elements[key]
            if self.curr_buffer_size == self.max_buffer_size:
                result = self._remove_biggest_key()
                if result is not None:
                    yield self.wrapper_class(result)
        for key in tuple(self.buffer_elements):
            group = self.buffer_elements.pop(key)
            self.curr_buffer_size -= len(group)
            yield self.wrapper_class(group)

    def reset(self):
        self.curr_buffer_size = 0
        self.buffer_elements = defaultdict(list)

    def __getstate__(self):
        return self._hooked_state((self.datapipe, self.group_key_fn, self.max_buffer_size, self.group_size,
                                   self.guaranteed_group_size, self.drop_remaining, self.wrapper_class,
                                   self._valid_iterator_id, self._number_of_samples_yielded))

    def __setstate__(self, state):
        (self.datapipe, self.group_key_fn, self.max_buffer_size, self.group_size, self.guaranteed_group_size,
         self.drop_remaining, self.wrapper_class, self._valid_iterator_id, self._number_of_samples_yielded) = state
        self.curr_buffer_size = 0
        self.buffer_elements = defaultdict(list)
