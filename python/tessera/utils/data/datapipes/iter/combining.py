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


class _CachedLength:
    """len() from the inputs' lengths, computed once (-1 remembers 'unknown')."""
    length = None

    def _length_from(self, combine):
        if self.length is None:
            self.length = combine() if all(isinstance(dp, Sized) for dp in self.datapipes) else -1
        if self.length == -1:
            raise no_length(self)
        return self.length


@functional_datapipe("concat")
class ConcaterIterDataPipe(_CachedLength, IterDataPipe):
    """The items of each input pipe, one pipe after another."""

    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("Expected all inputs to be `IterDataPipe`")
        self.datapipes = datapipes
        self.length = None

    def __iter__(self):
        for dp in self.datapipes:
            yield from dp

    def __len__(self):
        return self._length_from(lambda: sum(len(dp) for dp in self.datapipes))


@functional_datapipe("zip")
class ZipperIterDataPipe(_CachedLength, IterDataPipe):
    """Tuples of one item from each input, until the shortest input ends. The other inputs
    are then read to their end, so that streams in them get closed."""

    def __init__(self, *datapipes):
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("All inputs are required to be `IterDataPipe` for `ZipIterDataPipe`.")
        super().__init__()
        self.datapipes = datapipes
        self.length = None

    def __iter__(self):
        iterators = [iter(dp) for dp in self.datapipes]
        try:
            yield from zip(*iterators)
        finally:
            for it in iterators:
                try:
                    for item in it:
                        StreamWrapper.close_streams(item)
                except RuntimeError:  # an iterator the single-iterator rule already invalidated
                    pass

    def __len__(self):
        return self._length_from(lambda: min(len(dp) for dp in self.datapipes))


@functional_datapipe("mux")
class MultiplexerIterDataPipe(_CachedLength, IterDataPipe):
    """One item from each input in turn, round after round, stopping at the first round
    some input cannot complete (that incomplete round is dropped)."""

    def __init__(self, *datapipes):
        self.datapipes = datapipes
        self.length = None
        self.buffer = []

    def __iter__(self):
        iterators = [iter(dp) for dp in self.datapipes]
        while iterators:
            for it in iterators:
                try:
                    self.buffer.append(next(it))
                except StopIteration:
                    self.buffer.clear()
                    return
            yield from self.buffer
            self.buffer.clear()

    def __len__(self):
        return self._length_from(lambda: min(len(dp) for dp in self.datapipes) * len(self.datapipes))

    def reset(self):
        self.buffer = []

    def __getstate__(self):
        return self._hooked_state((self.datapipes, self.length, self._valid_iterator_id,
                                   self._number_of_samples_yielded))

    def __setstate__(self, state):
        self.datapipes, self.length, self._valid_iterator_id, self._number_of_samples_yielded = state
        self.buffer = []


class _ChildDataPipe(IterDataPipe):
    """One output of fork/demux: reads its share through `main_datapipe`, the parent that
    owns the source's iterator. Iterating any child again restarts every child (the
    parent's iterator id is shared)."""
    _is_child_datapipe = True

    def __init__(self, main_datapipe, instance_id):
        for attr in ("get_next_element_by_instance", "is_every_instance_exhausted", "reset"):
            if not callable(getattr(main_datapipe, attr, None)):
                raise NotImplementedError("Main Datapipe must have methods ['get_next_element_by_instance', "
                                          "'is_every_instance_exhausted', 'reset'] implemented.")
        self.main_datapipe = main_datapipe
        self.instance_id = instance_id

    def __iter__(self):
        return self.main_datapipe.get_next_element_by_instance(self.instance_id)

    def __len__(self):
        return len(self.main_datapipe)

    def _set_main_datapipe_valid_iterator_id(self):
        """A child that is already on the parent's current epoch starts a new one (resetting
        the parent); a child behind it joins the current epoch."""
        main = self.main_datapipe
        if main._valid_iterator_id is None:
            main._valid_iterator_id = 0
        elif main._valid_iterator_id == self._valid_iterator_id:
            main._valid_iterator_id += 1
            if not main.is_every_instance_exhausted():
                warnings.warn("Some child DataPipes are not exhausted when __iter__ is called. We are resetting the "
                              "buffer and each child DataPipe will read from the start again.", UserWarning)
            main.reset()
        self._valid_iterator_id = main._valid_iterator_id
        return self._valid_iterator_id

    def _check_valid_iterator_id(self, iterator_id):
        return iterator_id == self._valid_iterator_id == self.main_datapipe._valid_iterator_id


@functional_datapipe("fork")
class ForkerIterDataPipe(IterDataPipe):
    """`num_instances` children that each yield every item of `datapipe`. Items one child
    read and another has not yet are buffered, at most `buffer_size` (-1: no limit)
    beyond the slowest child, else BufferError. One instance returns `datapipe` itself."""

    def __new__(cls, datapipe, num_instances, buffer_size=1000):
        if num_instances < 1:
            raise ValueError(f"Expected `num_instaces` larger than 0, but {num_instances} is found")
        if num_instances == 1:
            return datapipe
        parent = _ForkerIterDataPipe(datapipe, num_instances, buffer_size)
        return [_ChildDataPipe(parent, i) for i in range(num_instances)]


class _ForkerIterDataPipe(IterDataPipe):
    """The parent of fork's children. Positions count from 1: child_pointers[i] is the last
    position child i read, the buffer holds positions slowest_ptr+1 .. leading_ptr, and
    end_ptr is one past the last position once the source ended."""

    def __init__(self, datapipe, num_instances, buffer_size=1000):
        self.main_datapipe = datapipe
        self.num_instances = num_instances
        self.buffer_size = buffer_size
        if buffer_size < 0:
            warnings.warn("Unlimited buffer size is set for `fork`, please be aware of OOM at random places",
                          UserWarning)
        self._clear()

    def _clear(self):
        self._datapipe_iterator = None
        self.buffer = deque()
        self.child_pointers = [0] * self.num_instances
        self.slowest_ptr = 0
        self.leading_ptr = 0
        self.end_ptr = None

    def __len__(self):
        return len(self.main_datapipe)

    def get_next_element_by_instance(self, instance_id):
        if self._datapipe_iterator is None:
            self._datapipe_iterator = iter(self.main_datapipe)
        ptrs = self.child_pointers
        while self.end_ptr is None or ptrs[instance_id] + 1 < self.end_ptr:
            ptrs[instance_id] += 1
            if self.buffer and ptrs[instance_id] <= self.leading_ptr:
                value = self.buffer[ptrs[instance_id] - self.slowest_ptr - 1]
            else:  # this child leads: read a new item from the source
                self.leading_ptr = ptrs[instance_id]
                try:
                    value = next(self._datapipe_iterator)
                except StopIteration:
                    self.end_ptr = self.leading_ptr
                    continue
                self.buffer.append(value)
            if ptrs[instance_id] == self.slowest_ptr + 1:
                # This child may have been the slowest: drop what every child has read.
                new_min = min(ptrs)
                if self.slowest_ptr < new_min:
                    self.slowest_ptr = new_min
                    self.buffer.popleft()
            if self.buffer_size >= 0 and self.leading_ptr > self.buffer_size + self.slowest_ptr:
                raise BufferError(f"ForkerIterDataPipe buffer overflow,buffer size {self.buffer_size} is "
                                  "insufficient.")
            yield value
        if all(p + 1 == self.end_ptr for p in ptrs):
            self._datapipe_iterator = None

    def is_every_instance_exhausted(self):
        return self.end_ptr is not None and all(p in (self.end_ptr, self.end_ptr - 1) for p in self.child_pointers)

    def reset(self):
        self._clear()
        self._datapipe_iterator = iter(self.main_datapipe)

    def __getstate__(self):
        return self._hooked_state((self.main_datapipe, self.num_instances, self.buffer_size, self._valid_iterator_id,
                                   self._number_of_samples_yielded))

    def __setstate__(self, state):
        (self.main_datapipe, self.num_instances, self.buffer_size, self._valid_iterator_id,
         self._number_of_samples_yielded) = state
        self._clear()


@functional_datapipe("demux")
class DemultiplexerIterDataPipe(IterDataPipe):
    """`num_instances` children; child i yields the items for which `classifier_fn` returns
    i (None drops the item when `drop_none`, else is an error). Items read for other
    children wait in their buffers, at most `buffer_size` in all (-1: no limit)."""

    def __new__(cls, datapipe, num_instances, classifier_fn, drop_none=False, buffer_size=1000):
        if num_instances < 1:
            raise ValueError(f"Expected `num_instaces` larger than 0, but {num_instances} is found")
        check_unpickable_fn(classifier_fn)
        parent = _DemultiplexerIterDataPipe(datapipe, num_instances, classifier_fn, drop_none, buffer_size)
        return [_ChildDataPipe(parent, i) for i in range(num_instances)]


class _DemultiplexerIterDataPipe(IterDataPipe):
    def __init__(self, datapipe, num_instances, classifier_fn, drop_none, buffer_size):
        self.main_datapipe = datapipe
        self.num_instances = num_instances
        self.buffer_size = buffer_size
        if buffer_size < 0:
            warnings.warn("Unlimited buffer size is set for `demux`, please be aware of OOM at random places",
                          UserWarning)
        self.classifier_fn = classifier_fn
        self.drop_none = drop_none
        self._clear()

    def _clear(self):
        self._datapipe_iterator = None
        self.current_buffer_usage = 0
        self.child_buffers = [deque() for _ in range(self.num_instances)]
        self.main_datapipe_exhausted = False

    def _find_next(self, instance_id):
        """The next source item for `instance_id`, buffering the others' on the way."""
        while True:
            if self.main_datapipe_exhausted:
                raise StopIteration
            value = next(self._datapipe_iterator)
            which = self.classifier_fn(value)
            if which is None and self.drop_none:
                StreamWrapper.close_streams(value)
                continue
            if which is None or which >= self.num_instances or which < 0:
                raise ValueError(f"Output of the classification fn should be between 0 and {self.num_instances - 1}. "
                                 f"{which} is returned.")
            if which == instance_id:
                return value
            self.child_buffers[which].append(value)
            self.current_buffer_usage += 1
            if 0 <= self.buffer_size < self.current_buffer_usage:
                raise BufferError(f"DemultiplexerIterDataPipe buffer overflow, buffer size {self.buffer_size} is "
                                  "insufficient.")

    def get_next_element_by_instance(self, instance_id):
        if self._datapipe_iterator is None and not self.main_datapipe_exhausted:
            self._datapipe_iterator = iter(self.main_datapipe)
        while True:
            if self.child_buffers[instance_id]:
                self.current_buffer_usage -= 1
                yield self.child_buffers[instance_id].popleft()
                continue
            try:
                value = self._find_next(instance_id)
            except StopIteration:
                self.main_datapipe_exhausted = True
                self._datapipe_iterator = None
                return
            yield value

    def is_every_instance_exhausted(self):
        return self.main_datapipe_exhausted and not any(self.child_buffers)

    def reset(self):
        self._clear()

    def __getstate__(self):
        return self._hooked_state((self.main_datapipe, self.num_instances, self.buffer_size, self.classifier_fn,
                                   self.drop_none, self._valid_iterator_id, self._number_of_samples_yielded))

    def __setstate__(self, state):
        (self.main_datapipe, self.num_instances, self.buffer_size, self.classifier_fn, self.drop_none,
         self._valid_iterator_id, self._number_of_samples_yielded) = state
        self._clear()
