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
    """Sleeps briefly; the hook NonBlocking uses by default between attempts."""
    time.sleep(DEFAULT_NON_BLOCKING_SLEEP)


class NotAvailable(Exception):
    """Raised by a non-blocking call when its answer is not ready yet."""


class InvalidStateResetRequired(Exception):
    """Raised by a pipe that cannot give more items until it is reset, for instance one that
    serves several readers and waits until all of them asked for a reset."""


class NonBlocking(IterDataPipe):
    """Base of pipes that can answer "not yet": subclasses implement `nonblocking_next`
    (raising NotAvailable when nothing is ready) and `reset_iterator`; plain iteration then
    retries, running the registered hook between attempts."""

    not_available_hook = default_not_available_hook

    def __iter__(self):
        self.reset_iterator()
        return self

    def __next__(self):
        while True:
            try:
                return self.nonblocking_next()
            except NotAvailable:
                _idle()

    def nonblocking_next(self):
        raise NotImplementedError(f"nonblocking_next is not implemented for {type(self)}")

    def reset_iterator(self):
        raise NotImplementedError(f"reset_iterator is not implemented for {type(self)}")

    @staticmethod
    def register_not_available_hook(hook_function):
        setattr(NonBlocking, "not_available_hook", hook_function)


def _idle():
    """One pause between two attempts, through the class-wide hook (None: busy retry)."""
    pause = NonBlocking.not_available_hook
    if pause is not None:
        pause()


# Attribute that holds the private iterator of a pipe made non-blocking by
# EnsureNonBlockingDataPipe (same spelling as torch, as code may inspect it).
_ITER_SLOT = "_as_iterator"


def _step_private_iterator(pipe):
    it = getattr(pipe, _ITER_SLOT)
    if it is None:
        it = iter(pipe)
        setattr(pipe, _ITER_SLOT, it)
    return next(it)


def _forget_private_iterator(pipe):
    setattr(pipe, _ITER_SLOT, None)


def EnsureNonBlockingDataPipe(validated_datapipe):
    """Adds the non-blocking interface to an IterDataPipe, in place, and returns the pipe.
    Missing `nonblocking_next`/`reset_iterator` methods are supplied: they step through an
    iterator kept on the pipe, made on first use and discarded on reset."""
    pipe = validated_datapipe
    if not isinstance(pipe, IterDataPipe):
        raise Exception('Not Iterable DataPipe ' + str(pipe.__class__))
    if isinstance(pipe, NonBlocking):
        return pipe
    supplied = ((_ITER_SLOT, None),
                ("nonblocking_next", types.MethodType(_step_private_iterator, pipe)),
                ("reset_iterator", types.MethodType(_forget_private_iterator, pipe)))
    for attr, value in supplied:
        if not hasattr(pipe, attr):
            setattr(pipe, attr, value)
    return pipe


def _serve_next(source, server, full_stop):
    """Sub-generator answering one GetNextRequest. Yields while the source is not ready;
    returns True when the serving loop has to end (only with `full_stop`)."""
    while True:
        try:
            item = source.nonblocking_next()
        except NotAvailable:
            yield True
            continue
        except StopIteration:
            server.response_stop_iteration()
        except InvalidStateResetRequired:
            server.response_invalid_state()
        else:
            server.response_next(item)
            yield True
            return False
        # End of data or a reset needed: the answer went out already.
        if full_stop:
            return True
        yield True
        return False


def DataPipeBehindQueues(source_datapipe, protocol, full_stop=False, blocking_request_get=False):
    """Generator that answers the requests coming through `protocol` from `source_datapipe`,
    doing one step per `next()` (every step yields True) until told to terminate. With
    `full_stop`, running out of data (or an invalid state) also stops it, once answered.
    With `blocking_request_get`, it blocks for requests instead of yielding."""
    if not isinstance(protocol, _protocol.IterDataPipeQueueProtocolServer):
        raise Exception('Expecting IterDataPipeQueueProtocolServer, got', protocol)
    source = EnsureNonBlockingDataPipe(source_datapipe)
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
        if isinstance(req, _messages.ResetIteratorRequest):
            source.reset_iterator()
            server.response_reset_iterator()
        elif isinstance(req, _messages.GetNextRequest):
            if (yield from _serve_next(source, server, full_stop)):
                return
        else:
            raise Exception('Unrecognized type of request received', req)


class QueueWrapper(NonBlocking):
    """IterDataPipe over a pipe served on the far side of `protocol` (an
    IterDataPipeQueueProtocolClient). `nonblocking_next` waits at most
    `response_wait_time` seconds for the reply and raises NotAvailable otherwise; the
    request stays in flight and a later call collects the reply."""

    def __init__(self, protocol, response_wait_time=0.00001):
        if not isinstance(protocol, _protocol.IterDataPipeQueueProtocolClient):
            raise Exception('Got', protocol)
        self.protocol = protocol
        self.counter = 0
        # Name shared with torch: callers clear it to reuse the wrapper after a reset.
        self._stop_iteration = False
        self._reply_timeout = response_wait_time

    def reset_iterator(self):
        self._stop_iteration = False
        self.counter = 0
        client = self.protocol
        client.request_reset_iterator()
        while True:
            try:
                client.get_response_reset_iterator()
            except _protocol.EmptyQueue:
                _idle()
            else:
                return

    def nonblocking_next(self):
        if self._stop_iteration:
            raise Exception('`next` or `nonblocking_next` called after receiving StopIteration')
        client = self.protocol
        if client.can_take_request():
            client.request_next()
        try:
            reply = client.get_response_next(block=True, timeout=self._reply_timeout)
        except _protocol.EmptyQueue:
            raise NotAvailable
        if isinstance(reply, _messages.InvalidStateResponse):
            raise NotAvailable
        if isinstance(reply, _messages.StopIterationResponse):
            self._stop_iteration = True
            raise StopIteration
        return reply.value
