"""The IterDataPipe side of the queue protocol.

`DataPipeBehindQueues` is the server: a generator that serves the requests arriving on the
protocol's request queue from a source IterDataPipe, yielding after each step so one thread
can drive several of them. `QueueWrapper` is the client: an IterDataPipe whose items are
fetched over the queues.

Pipes here may be non-blocking: `nonblocking_next()` raises `NotAvailable` when the next
item is not ready yet, instead of waiting; `NonBlocking` builds the blocking iterator
protocol on top of that, calling `not_available_hook` between tries.
"""
import time
import types

from ..datapipes.datapipe import IterDataPipe
from . import messages as _messages
from . import protocol as _protocol

DEFAULT_NON_BLOCKING_SLEEP = 0.001

__all__ = [
    "DataPipeBehindQueues",
    "EnsureNonBlockingDataPipe",
    "InvalidStateResetRequired",
    "NonBlocking",
    "NotAvailable",
    "QueueWrapper",
    "default_not_available_hook",
]


def default_not_available_hook():
    time.sleep(DEFAULT_NON_BLOCKING_SLEEP)


class NotAvailable(Exception):
    pass


class InvalidStateResetRequired(Exception):
    """Raised by a pipe that cannot give more items until it is reset, for instance one that
    serves several readers and waits until all of them asked for a reset."""
    pass


class NonBlocking(IterDataPipe):
    not_available_hook = default_not_available_hook

    def __iter__(self):
        self.reset_iterator()
        return self

    def __next__(self):
        while True:
            try:
                return self.nonblocking_next()
            except NotAvailable:
                hook = NonBlocking.not_available_hook
                if hook is not None:
                    hook()

    def nonblocking_next(self):
        raise NotImplementedError("nonblocking_next is not implemented for %s" % self.__class__)

    def reset_iterator(self):
        raise NotImplementedError("reset_iterator is not implemented for %s" % self.__class__)

    @staticmethod
    def register_not_available_hook(hook_function):
        NonBlocking.not_available_hook = hook_function


def _next_of_own_iterator(self):
    if self._as_iterator is None:
        self._as_iterator = iter(self)
    return next(self._as_iterator)


def _drop_own_iterator(self):
    self._as_iterator = None


def EnsureNonBlockingDataPipe(validated_datapipe):
    """Gives an IterDataPipe the non-blocking interface (in place) and returns it: a pipe
    without `nonblocking_next`/`reset_iterator` gets ones that read from an iterator of its
    own, created on first use and dropped by `reset_iterator`."""
    if not isinstance(validated_datapipe, IterDataPipe):
        raise Exception('Not Iterable DataPipe ' + str(validated_datapipe.__class__))
    if isinstance(validated_datapipe, NonBlocking):
        return validated_datapipe
    if not hasattr(validated_datapipe, '_as_iterator'):
        validated_datapipe._as_iterator = None
    if not hasattr(validated_datapipe, 'nonblocking_next'):
        validated_datapipe.nonblocking_next = types.MethodType(_next_of_own_iterator, validated_datapipe)
    if not hasattr(validated_datapipe, 'reset_iterator'):
        validated_datapipe.reset_iterator = types.MethodType(_drop_own_iterator, validated_datapipe)
    return validated_datapipe


def DataPipeBehindQueues(source_datapipe, protocol, full_stop=False, blocking_request_get=False):
    """Serves `protocol`'s requests from `source_datapipe`, one step per `next()` (each step
    yields True), until a TerminateRequest arrives. With `full_stop`, the end of the source
    (or an invalid state) also ends the loop, after its response is sent. With
    `blocking_request_get`, waiting for a request blocks instead of yielding."""
    if not isinstance(protocol, _protocol.IterDataPipeQueueProtocolServer):
        raise Exception('Expecting IterDataPipeQueueProtocolServer, got', protocol)
    source_datapipe = EnsureNonBlockingDataPipe(source_datapipe)
    while True:
        try:
            request = protocol.get_new_request(block=blocking_request_get)
        except _protocol.EmptyQueue:
            yield True
            continue

        if isinstance(request, _messages.ResetIteratorRequest):
            source_datapipe.reset_iterator()
            protocol.response_reset_iterator()
        elif isinstance(request, _messages.TerminateRequest):
            protocol.response_terminate()
            return
        elif isinstance(request, _messages.GetNextRequest):
            while True:
                try:
                    value = source_datapipe.nonblocking_next()
                except NotAvailable:
                    yield True  # not ready: let the driver do other work, then try again
                    continue
                except StopIteration:
                    protocol.response_stop_iteration()
                except InvalidStateResetRequired:
                    protocol.response_invalid_state()
                else:
                    protocol.response_next(value)
                    yield True
                    break
                # The source ended or needs a reset; the response is sent.
                if full_stop:
                    return
                yield True
                break
        else:
            raise Exception('Unrecognized type of request received', request)


class QueueWrapper(NonBlocking):
    """An IterDataPipe reading the items of a pipe served behind `protocol`'s queues (an
    IterDataPipeQueueProtocolClient). Each `nonblocking_next` waits up to
    `response_wait_time` seconds for the answer, else raises NotAvailable (the request stays
    outstanding and the next call picks its answer up)."""

    def __init__(self, protocol, response_wait_time=0.00001):
        if not isinstance(protocol, _protocol.IterDataPipeQueueProtocolClient):
            raise Exception('Got', protocol)
        self.protocol = protocol
        self.counter = 0
        self._stop_iteration = False
        self._response_wait_time = response_wait_time

    def reset_iterator(self):
        self._stop_iteration = False
        self.counter = 0
        self.protocol.request_reset_iterator()
        while True:
            try:
                self.protocol.get_response_reset_iterator()
                return
            except _protocol.EmptyQueue:
                hook = NonBlocking.not_available_hook
                if hook is not None:
                    hook()

    def nonblocking_next(self):
        if self._stop_iteration:
            raise Exception('`next` or `nonblocking_next` called after receiving StopIteration')
        if self.protocol.can_take_request():
            self.protocol.request_next()
        try:
            response = self.protocol.get_response_next(block=True, timeout=self._response_wait_time)
        except _protocol.EmptyQueue:
            raise NotAvailable
        if isinstance(response, _messages.StopIterationResponse):
            self._stop_iteration = True
            raise StopIteration
        if isinstance(response, _messages.InvalidStateResponse):
            raise NotAvailable
        return response.value
