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
    """Sleeps briefly; NonBlockingMap's default pause between attempts."""
    time.sleep(DEFAULT_NON_BLOCKING_SLEEP)


class NotAvailable(Exception):
    """Raised by a non-blocking call when its answer is not ready yet."""


def _wait_a_little():
    hook = NonBlockingMap.not_available_hook
    if hook is not None:
        hook()


class NonBlockingMap(MapDataPipe):
    """Base of map pipes that can answer "not yet" (NotAvailable) from
    `nonblocking_getitem`/`nonblocking_len`; `[index]` and `len()` retry those, pausing
    through the class-wide hook in between."""

    not_available_hook = default_not_available_hook

    def __getitem__(self, index):
        while True:
            try:
                item = self.nonblocking_getitem(index)
            except NotAvailable:
                _wait_a_little()
            else:
                return item

    def __len__(self):
        # torch 1.13 gives up (len() then fails on None) after one NotAvailable; here the
        # length is awaited like an item is.
        while True:
            try:
                return self.nonblocking_len()
            except NotAvailable:
                _wait_a_little()

    def nonblocking_len(self):
        raise NotImplementedError(f"nonblocking_len is not implemented for {type(self)}")

    def nonblocking_getitem(self, index):
        raise NotImplementedError(f"nonblocking_getitem is not implemented for {type(self)}")

    @staticmethod
    def register_not_available_hook(hook_function):
        setattr(NonBlockingMap, "not_available_hook", hook_function)


def _len_blocking(pipe):
    return len(pipe)


def _getitem_blocking(pipe, index):
    return pipe[index]


def EnsureNonBlockingMapDataPipe(validated_datapipe):
    """Adds the non-blocking interface to a MapDataPipe, in place, and returns the pipe.
    Missing `nonblocking_len`/`nonblocking_getitem` methods simply call `len()` and
    `[index]`."""
    pipe = validated_datapipe
    if not isinstance(pipe, MapDataPipe):
        raise Exception(f'Not Map DataPipe - got {pipe.__class__}')
    if isinstance(pipe, NonBlockingMap):
        return pipe
    for attr, fn in (("nonblocking_len", _len_blocking), ("nonblocking_getitem", _getitem_blocking)):
        if not hasattr(pipe, attr):
            setattr(pipe, attr, types.MethodType(fn, pipe))
    return pipe


def _serve_item(source, server, key, full_stop):
    """Sub-generator answering one GetItemRequest; returns True when the loop must end."""
    while True:
        try:
            found = source.nonblocking_getitem(key)
        except NotAvailable:
            yield True
            continue
        except IndexError:
            server.response_index_out_of_bound()
            if full_stop:
                return True
        else:
            server.response_item(key, found)
        yield True
        return False


def DataPipeBehindQueues(source_datapipe, protocol, full_stop=False, blocking_request_get=False):
    """Generator that answers the requests coming through `protocol` from `source_datapipe`,
    one step per `next()` (each yields True), until told to terminate. A key the source
    rejects with IndexError gets a StopIterationResponse (ending the loop too when
    `full_stop`). With `blocking_request_get`, it blocks for requests instead of yielding."""
    if not isinstance(protocol, _protocol.MapDataPipeQueueProtocolServer):
        raise Exception('Expecting MapDataPipeQueueProtocolServer, got', protocol)
    source = EnsureNonBlockingMapDataPipe(source_datapipe)
    server = protocol
    while True:
        try:
            req = server.get_new_request(block=blocking_request_get)
        except _protocol.EmptyQueue:
            yield True
            continue
        if isinstance(req, _messages.TerminateRequest):
            server.response_terminate()
            return
        if isinstance(req, _messages.LenRequest):
            server.response_len(source.nonblocking_len())
        elif isinstance(req, _messages.GetItemRequest):
            if (yield from _serve_item(source, server, req.key, full_stop)):
                return
        else:
            raise Exception('Unrecognized type of request received', req)


class QueueWrapperForMap(NonBlockingMap):
    """MapDataPipe over a map pipe served on the far side of `protocol` (a
    MapDataPipeQueueProtocolClient); `wrapper[i]` gives `(i, source[i])`. An out-of-range
    key raises IndexError, and the wrapper is unusable afterwards."""

    def __init__(self, protocol, response_wait_time=0.00001):
        if not isinstance(protocol, _protocol.MapDataPipeQueueProtocolClient):
            raise Exception('Got', protocol)
        self.protocol = protocol
        self.counter = 0
        self._stop_iteration = False
        self._reply_timeout = response_wait_time

    def _exchange(self, send, receive):
        """Sends a request unless one is in flight, then waits briefly for its reply."""
        if self.protocol.can_take_request():
            send()
        try:
            return receive(block=True, timeout=self._reply_timeout)
        except _protocol.EmptyQueue:
            raise NotAvailable

    def nonblocking_getitem(self, index):
        if self._stop_iteration:
            raise Exception('`getitem` or `nonblocking_getitem` called after receiving StopIteration')
        client = self.protocol
        reply = self._exchange(lambda: client.request_item(index), client.get_response_item)
        if not isinstance(reply, _messages.StopIterationResponse):
            return reply.key, reply.value
        self._stop_iteration = True
        raise IndexError(f"Index {index} is out of bound.")

    def nonblocking_len(self):
        if self._stop_iteration:
            raise Exception('`len` or `nonblocking_len` called after receiving StopIteration')
        client = self.protocol
        return self._exchange(client.request_len, client.get_response_len).len
