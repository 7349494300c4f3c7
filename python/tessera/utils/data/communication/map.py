"""The MapDataPipe side of the queue protocol.

`DataPipeBehindQueues` is the server: a generator serving length and item requests from a
source MapDataPipe, one per step. `QueueWrapperForMap` is the client: a MapDataPipe whose
`[index]` asks the server for that key and gives back the pair `(key, value)`.
"""
import time
import types

from ..datapipes.datapipe import MapDataPipe
from . import messages as _messages
from . import protocol as _protocol

DEFAULT_NON_BLOCKING_SLEEP = 0.001

__all__ = [
    "DataPipeBehindQueues",
    "EnsureNonBlockingMapDataPipe",
    "NonBlockingMap",
    "NotAvailable",
    "QueueWrapperForMap",
    "default_not_available_hook",
]


def default_not_available_hook():
    time.sleep(DEFAULT_NON_BLOCKING_SLEEP)


class NotAvailable(Exception):
    pass


def _wait_a_little():
    hook = NonBlockingMap.not_available_hook
    if hook is not None:
        hook()


class NonBlockingMap(MapDataPipe):
    not_available_hook = default_not_available_hook

    def __getitem__(self, index):
        while True:
            try:
                return self.nonblocking_getitem(index)
            except NotAvailable:
                _wait_a_little()

    def __len__(self):
        # torch 1.13 gives up (len() then fails on None) after one NotAvailable; here the
        # length is awaited like an item is.
        while True:
            try:
                return self.nonblocking_len()
            except NotAvailable:
                _wait_a_little()

    def nonblocking_len(self):
        raise NotImplementedError("nonblocking_len is not implemented for %s" % self.__class__)

    def nonblocking_getitem(self, index):
        raise NotImplementedError("nonblocking_getitem is not implemented for %s" % self.__class__)

    @staticmethod
    def register_not_available_hook(hook_function):
        NonBlockingMap.not_available_hook = hook_function


def _len_now(self):
    return self.__len__()


def _getitem_now(self, index):
    return self.__getitem__(index)


def EnsureNonBlockingMapDataPipe(validated_datapipe):
    """Gives a MapDataPipe the non-blocking interface (in place) and returns it: without
    its own `nonblocking_len`/`nonblocking_getitem`, they are `len()` and `[index]`."""
    if not isinstance(validated_datapipe, MapDataPipe):
        raise Exception(f'Not Map DataPipe - got {validated_datapipe.__class__}')
    if isinstance(validated_datapipe, NonBlockingMap):
        return validated_datapipe
    if not hasattr(validated_datapipe, 'nonblocking_len'):
        validated_datapipe.nonblocking_len = types.MethodType(_len_now, validated_datapipe)
    if not hasattr(validated_datapipe, 'nonblocking_getitem'):
        validated_datapipe.nonblocking_getitem = types.MethodType(_getitem_now, validated_datapipe)
    return validated_datapipe


def DataPipeBehindQueues(source_datapipe, protocol, full_stop=False, blocking_request_get=False):
    """Serves `protocol`'s requests from `source_datapipe`, one step per `next()` (each step
    yields True), until a TerminateRequest arrives. A key the source rejects with IndexError
    is answered with a StopIterationResponse (and, with `full_stop`, ends the loop). With
    `blocking_request_get`, waiting for a request blocks instead of yielding."""
    if not isinstance(protocol, _protocol.MapDataPipeQueueProtocolServer):
        raise Exception('Expecting MapDataPipeQueueProtocolServer, got', protocol)
    source_datapipe = EnsureNonBlockingMapDataPipe(source_datapipe)
    while True:
        try:
            request = protocol.get_new_request(block=blocking_request_get)
        except _protocol.EmptyQueue:
            yield True
            continue

        if isinstance(request, _messages.TerminateRequest):
            protocol.response_terminate()
            return
        elif isinstance(request, _messages.LenRequest):
            protocol.response_len(source_datapipe.nonblocking_len())
        elif isinstance(request, _messages.GetItemRequest):
            while True:
                try:
                    value = source_datapipe.nonblocking_getitem(request.key)
                except NotAvailable:
                    yield True
                    continue
                except IndexError:
                    protocol.response_index_out_of_bound()
                    if full_stop:
                        return
                    yield True
                    break
                protocol.response_item(request.key, value)
                yield True
                break
        else:
            raise Exception('Unrecognized type of request received', request)


class QueueWrapperForMap(NonBlockingMap):
    """A MapDataPipe reading a map pipe served behind `protocol`'s queues (a
    MapDataPipeQueueProtocolClient): `wrapper[i]` is `(i, source[i])`. A key out of range
    raises IndexError, after which the wrapper refuses further use."""

    def __init__(self, protocol, response_wait_time=0.00001):
        if not isinstance(protocol, _protocol.MapDataPipeQueueProtocolClient):
            raise Exception('Got', protocol)
        self.protocol = protocol
        self.counter = 0
        self._stop_iteration = False
        self._response_wait_time = response_wait_time

    def nonblocking_getitem(self, index):
        if self._stop_iteration:
            raise Exception('`getitem` or `nonblocking_getitem` called after receiving StopIteration')
        if self.protocol.can_take_request():
            self.protocol.request_item(index)
        try:
            response = self.protocol.get_response_item(block=True, timeout=self._response_wait_time)
        except _protocol.EmptyQueue:
            raise NotAvailable
        if isinstance(response, _messages.StopIterationResponse):
            self._stop_iteration = True
            raise IndexError(f"Index {index} is out of bound.")
        return response.key, response.value

    def nonblocking_len(self):
        if self._stop_iteration:
            raise Exception('`len` or `nonblocking_len` called after receiving StopIteration')
        if self.protocol.can_take_request():
            self.protocol.request_len()
        try:
            response = self.protocol.get_response_len(block=True, timeout=self._response_wait_time)
        except _protocol.EmptyQueue:
            raise NotAvailable
        return response.len
