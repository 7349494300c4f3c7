"""Pipes over several pipes: Concater (`concat`), Zipper (`zip`), Multiplexer (`mux`), and
the splitting ones, Forker (`fork`) and Demultiplexer (`demux`), whose children read one
shared source through a buffer kept by a hidden parent pipe."""
import warnings
from collections import deque
from collections.abc import Sized

from .._common import StreamWrapper, check_unpickable_fn, no_length
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ["ConcaterIterDataPipe", "DemultiplexerIterDataPipe", "ForkerIterDataPipe", "MultiplexerIterDataPipe",
           "ZipperIterDataPipe"]


def _all_sized(datapipes):
    return all(isinstance(dp, Sized) for dp in datapipes)


class _CachedLength:
    """len() worked out once from the inputs' lengths by `_combine_lengths` (a subclass
    method); inputs without a length make it the usual TypeError."""
    length = None

    def __len__(self):
        if self.length is None:
            self.length = self._combine_lengths() if _all_sized(self.datapipes) else -1
        if self.length < 0:
            raise no_length(self)
        return self.length


@functional_datapipe("concat")
class ConcaterIterDataPipe(_CachedLength, IterDataPipe):
    """The items of each input pipe, one pipe after another."""

    def __init__(self, *datapipes):
        if not datapipes:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        for dp in datapipes:
            if not isinstance(dp, IterDataPipe):
                raise TypeError("Expected all inputs to be `IterDataPipe`")
        self.datapipes = datapipes

    def _combine_lengths(self):
        return sum(map(len, self.datapipes))

    def __iter__(self):
        for source in self.datapipes:
            yield from source


def _drain(iterators):
    """Reads each iterator to its end, closing any streams it still yields."""
    for rest in iterators:
        try:
            for leftover in rest:
                StreamWrapper.close_streams(leftover)
        except RuntimeError:  # an iterator the single-iterator rule already invalidated
            pass


@functional_datapipe("zip")
class ZipperIterDataPipe(_CachedLength, IterDataPipe):
    """Tuples of one item from each input, until the shortest input ends. The other inputs
    are then read to their end, so that streams in them get closed."""

    def __init__(self, *datapipes):
        if any(not isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("All inputs are required to be `IterDataPipe` for `ZipIterDataPipe`.")
        super().__init__()
        self.datapipes = datapipes

    def _combine_lengths(self):
        return min(map(len, self.datapipes))

    def __iter__(self):
        readers = list(map(iter, self.datapipes))
        try:
            yield from zip(*readers)
        finally:
            _drain(readers)


@functional_datapipe("mux")
class MultiplexerIterDataPipe(_CachedLength, IterDataPipe):
    """One item from each input in turn, round after round, stopping at the first round
    some input cannot complete (that incomplete round is dropped)."""

    def __init__(self, *datapipes):
        self.datapipes = datapipes
        self._round = []

    def _combine_lengths(self):
        return len(self.datapipes) * min(map(len, self.datapipes))

    def reset(self):
        self._round = []

    def __iter__(self):
        readers = [iter(dp) for dp in self.datapipes]
        if not readers:
            return
        pending = self._round
        while True:
            # Collect a whole round before yielding any of it.
            for reader in readers:
                try:
                    pending.append(next(reader))
                except StopIteration:
                    pending.clear()
                    return
            while pending:
                yield pending.pop(0)

    def __getstate__(self):
        state = {name: value for name, value in self.__dict__.items() if name != "_round"}
        return self._hooked_state(state)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.reset()


_PARENT_API = ("get_next_element_by_instance", "is_every_instance_exhausted", "reset")


class _ChildDataPipe(IterDataPipe):
    """One output of fork/demux: reads its share through `main_datapipe`, the parent that
    owns the source's iterator. Iterating any child again restarts every child (the
    parent's iterator id is shared)."""
    _is_child_datapipe = True

    def __init__(self, main_datapipe, instance_id):
        if any(not callable(getattr(main_datapipe, method, None)) for method in _PARENT_API):
            raise NotImplementedError("Main Datapipe must have methods ['get_next_element_by_instance', "
                                      "'is_every_instance_exhausted', 'reset'] implemented.")
        self.main_datapipe, self.instance_id = main_datapipe, instance_id

    def __len__(self):
        parent = self.main_datapipe
        return len(parent)

    def __iter__(self):
        parent = self.main_datapipe
        return parent.get_next_element_by_instance(self.instance_id)

    def _set_main_datapipe_valid_iterator_id(self):
        """A child that is already on the parent's current epoch starts a new one (resetting
        the parent); a child behind it joins the current epoch."""
        parent = self.main_datapipe
        current = parent._valid_iterator_id
        if current is None:
            parent._valid_iterator_id = 0
        elif current == self._valid_iterator_id:
            if not parent.is_every_instance_exhausted():
                warnings.warn("Some child DataPipes are not exhausted when __iter__ is called. We are resetting the "
                              "buffer and each child DataPipe will read from the start again.", UserWarning)
            parent._valid_iterator_id = current + 1
            parent.reset()
        self._valid_iterator_id = parent._valid_iterator_id
        return self._valid_iterator_id

    def _check_valid_iterator_id(self, iterator_id):
        own = self._valid_iterator_id
        return own == iterator_id and own == self.main_datapipe._valid_iterator_id


def _check_instances(num_instances):
    if num_instances >= 1:
        return
    raise ValueError(f"Expected `num_instaces` larger than 0, but {num_instances} is found")


def _warn_unlimited(buffer_size, what):
    if buffer_size < 0:
        warnings.warn(f"Unlimited buffer size is set for `{what}`, please be aware of OOM at random places",
                      UserWarning)


@functional_datapipe("fork")
class ForkerIterDataPipe(IterDataPipe):
    """`num_instances` children that each yield every item of `datapipe`. Items one child
    read and another has not yet are buffered, at most `buffer_size` (-1: no limit)
    beyond the slowest child, else BufferError. One instance returns `datapipe` itself."""

    def __new__(cls, datapipe, num_instances, buffer_size=1000):
        _check_instances(num_instances)
        if num_instances > 1:
            hub = _ForkerIterDataPipe(datapipe, num_instances, buffer_size)
            return [_ChildDataPipe(hub, k) for k in range(num_instances)]
        return datapipe


class _ForkerIterDataPipe(IterDataPipe):
    """The parent of fork's children. Items are numbered from 1 in source order:
    `_seen[i]` is the number child i has read, `_window` holds items `_floor`+1 ..
    `_front` (those some child has not read yet), and `_total` is set to the source's
    item count plus one once the source has ended."""

    def __init__(self, datapipe, num_instances, buffer_size=1000):
        _warn_unlimited(buffer_size, "fork")
        self.main_datapipe = datapipe
        self.num_instances, self.buffer_size = num_instances, buffer_size
        self._restart(None)

    def _restart(self, source_iterator):
        self._source_it = source_iterator
        self._window = deque()
        self._seen = [0 for _ in range(self.num_instances)]
        self._floor = self._front = 0
        self._total = None

    def __len__(self):
        return len(self.main_datapipe)

    def _unfinished(self, instance_id):
        return self._total is None or self._seen[instance_id] + 1 < self._total

    def _item_at(self, position):
        """Item number `position`: from the window, or read from the source when it is the
        next unread one; None (with `_total` set) when the source has ended."""
        if self._window and position <= self._front:
            return self._window[position - self._floor - 1], True
        self._front = position
        try:
            item = next(self._source_it)
        except StopIteration:
            self._total = position
            return None, False
        self._window.append(item)
        return item, True

    def get_next_element_by_instance(self, instance_id):
        if self._source_it is None:
            self._source_it = iter(self.main_datapipe)
        seen = self._seen
        while self._unfinished(instance_id):
            seen[instance_id] += 1
            item, found = self._item_at(seen[instance_id])
            if not found:
                continue
            if seen[instance_id] - 1 == self._floor and min(seen) > self._floor:
                # Every child has now read the oldest buffered item.
                self._floor = min(seen)
                self._window.popleft()
            if self.buffer_size >= 0 and self._front - self._floor > self.buffer_size:
                raise BufferError(f"ForkerIterDataPipe buffer overflow,buffer size {self.buffer_size} is "
                                  "insufficient.")
            yield item
        if all(count + 1 == self._total for count in seen):
            self._source_it = None

    def is_every_instance_exhausted(self):
        if self._total is None:
            return False
        return all(self._total - count in (0, 1) for count in self._seen)

    def reset(self):
        self._restart(iter(self.main_datapipe))

    def __getstate__(self):
        state = {name: self.__dict__[name] for name in ("main_datapipe", "num_instances", "buffer_size")}
        state.update({name: getattr(self, name) for name in ("_valid_iterator_id", "_number_of_samples_yielded")})
        return self._hooked_state(state)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._restart(None)


@functional_datapipe("demux")
class DemultiplexerIterDataPipe(IterDataPipe):
    """`num_instances` children; child i yields the items for which `classifier_fn` returns
    i (None drops the item when `drop_none`, else is an error). Items read for other
    children wait in their buffers, at most `buffer_size` in all (-1: no limit)."""

    def __new__(cls, datapipe, num_instances, classifier_fn, drop_none=False, buffer_size=1000):
        _check_instances(num_instances)
        check_unpickable_fn(classifier_fn)
        hub = _DemultiplexerIterDataPipe(datapipe, num_instances, classifier_fn, drop_none, buffer_size)
        return [_ChildDataPipe(hub, k) for k in range(num_instances)]


class _DemultiplexerIterDataPipe(IterDataPipe):
    """The parent of demux's children: one source iterator, one queue per child."""

    def __init__(self, datapipe, num_instances, classifier_fn, drop_none, buffer_size):
        _warn_unlimited(buffer_size, "demux")
        self.main_datapipe = datapipe
        self.num_instances, self.buffer_size = num_instances, buffer_size
        self.classifier_fn, self.drop_none = classifier_fn, drop_none
        self._restart()

    def _restart(self):
        self._source_it = None
        self._source_done = False
        self._queues = [deque() for _ in range(self.num_instances)]
        self._queued = 0

    def _route(self, item):
        """The child `item` belongs to, or None for an item to drop."""
        target = self.classifier_fn(item)
        if target is None and self.drop_none:
            StreamWrapper.close_streams(item)
            return None
        if target is None or not 0 <= target < self.num_instances:
            raise ValueError(f"Output of the classification fn should be between 0 and {self.num_instances - 1}. "
                             f"{target} is returned.")
        return target

    def _pull_for(self, instance_id):
        """Reads the source until an item for `instance_id` turns up, queueing the rest."""
        for item in self._source_it:
            target = self._route(item)
            if target is None:
                continue
            if target == instance_id:
                return True, item
            self._queues[target].append(item)
            self._queued += 1
            if self.buffer_size >= 0 and self._queued > self.buffer_size:
                raise BufferError(f"DemultiplexerIterDataPipe buffer overflow, buffer size {self.buffer_size} is "
                                  "insufficient.")
        self._source_done = True
        self._source_it = None
        return False, None

    def get_next_element_by_instance(self, instance_id):
        if self._source_it is None and not self._source_done:
            self._source_it = iter(self.main_datapipe)
        own = self._queues[instance_id]
        while True:
            if own:
                self._queued -= 1
                yield own.popleft()
            elif self._source_done:
                return
            else:
                found, item = self._pull_for(instance_id)
                if not found:
                    return
                yield item

    def is_every_instance_exhausted(self):
        return self._source_done and all(len(q) == 0 for q in self._queues)

    def reset(self):
        self._restart()

    def __getstate__(self):
        names = ("main_datapipe", "num_instances", "buffer_size", "classifier_fn", "drop_none")
        state = {name: self.__dict__[name] for name in names}
        state.update({name: getattr(self, name) for name in ("_valid_iterator_id", "_number_of_samples_yielded")})
        return self._hooked_state(state)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._restart()
