"""Both ends of a DataPipe's queue pair. A client sends one request at a time and must
collect its response before sending the next; a server takes one request at a time and
must answer it before taking the next. The Iter/Map variants add the message kinds of each
kind of pipe."""
import queue as _stdlib_queue

from . import messages as _messages


class EmptyQueue(Exception):
    """No request (server side) or response (client side) arrived in time."""


# What a queue's get() raises when nothing came in time: multiprocessing and queue.Queue
# raise queue.Empty, a wait with a deadline TimeoutError.
_NOTHING_YET = (TimeoutError, _stdlib_queue.Empty)


class Protocol(object):
    __slots__ = ("request_queue", "response_queue")

    def __init__(self, request_queue, response_queue):
        self.request_queue, self.response_queue = request_queue, response_queue


class ProtocolClient(Protocol):
    """The reading side: puts requests on request_queue, takes responses from response_queue."""
    _in_flight = None

    def __init__(self, request_queue, response_queue):
        super().__init__(request_queue, response_queue)
        self._in_flight = None

    def can_take_request(self):
        return self._in_flight is None

    def waiting_for_response(self):
        return not self.can_take_request()

    def request_sent(self, request=True):
        if self._in_flight is not None:
            raise Exception("Protocol only supports one request in the Queue")
        self._in_flight = request

    def request_served(self, result=None):
        if self._in_flight is None:
            raise Exception("Expected no peding requests, but something got served", result)
        self._in_flight = None

    def _send(self, request):
        self.request_queue.put(request)
        self.request_sent(request)

    def _submit(self, request, what):
        """Sends `request` if no other one is in flight; `what` names it in the error."""
        if self.waiting_for_response():
            raise Exception(f"Can not {what} while we are still waiting response for previous request")
        self._send(request)

    def _expect_response(self):
        if self._in_flight is None:
            raise Exception("Can not expect any response without submitted request")


class ProtocolServer(Protocol):
    """The serving side: takes requests from request_queue, puts responses on response_queue."""
    _unanswered = None

    def __init__(self, request_queue, response_queue):
        super().__init__(request_queue, response_queue)
        self._unanswered = None

    def have_pending_request(self):
        return not (self._unanswered is None)

    def get_new_request(self, block=False):
        if self._unanswered is not None:
            raise Exception("Trying to get next request, while having one unserved")
        try:
            request = self.request_queue.get(block=block)
        except Exception:
            # Every queue kind signals "nothing there" differently (LocalQueue and
            # ThreadingQueue raise a plain Exception); all of them mean: no request yet.
            raise EmptyQueue("queue is empty")
        self._unanswered = request
        return request

    def _answer(self, response):
        if self._unanswered is None:
            raise Exception("Attempting to reply with pending request")
        self.response_queue.put(response)
        self._unanswered = None

    def _answer_only(self, request_type, response, what):
        if self._unanswered is None:
            raise Exception("Attempting to reply with pending request")
        if not isinstance(self._unanswered, request_type):
            raise Exception(f"Replaying with {what} status to other type of message")
        self._answer(response)

    def response_terminate(self):
        self._answer_only(_messages.TerminateRequest, _messages.TerminateResponse(), "terminate")


class MapDataPipeQueueProtocolServer(ProtocolServer):
    def response_item(self, key, value):
        self._answer(_messages.GetItemResponse(key, value))

    def response_len(self, size):
        self._answer(_messages.LenResponse(size))

    def response_index_out_of_bound(self):
        self._answer(_messages.StopIterationResponse())


class MapDataPipeQueueProtocolClient(ProtocolClient):
    def request_len(self):
        self._submit(_messages.LenRequest(), "request len")

    def request_item(self, index):
        self._submit(_messages.GetItemRequest(index), "request item")

    def _take_response(self, block, timeout):
        self._expect_response()
        try:
            reply = self.response_queue.get(block=block, timeout=timeout)
        except _NOTHING_YET:
            raise EmptyQueue("queue is empty")
        self.request_served(reply)
        return reply

    def get_response_len(self, block=False, timeout=None):
        response = self._take_response(block, timeout)
        if not isinstance(response, _messages.LenResponse):
            raise Exception("Invalid response received")
        return response

    def get_response_item(self, block=False, timeout=None):
        # Either a GetItemResponse or, for a key out of range, a StopIterationResponse.
        return self._take_response(block, timeout=timeout)


class IterDataPipeQueueProtocolServer(ProtocolServer):
    def response_reset_iterator(self):
        self._answer_only(_messages.ResetIteratorRequest, _messages.ResetIteratorResponse(), "reset")

    def response_next(self, value):
        self._answer(_messages.GetNextResponse(value))

    def response_stop_iteration(self):
        self._answer(_messages.StopIterationResponse())

    def response_invalid_state(self):
        self._answer(_messages.InvalidStateResponse())


class IterDataPipeQueueProtocolClient(ProtocolClient):
    def request_reset_iterator(self):
        self._submit(_messages.ResetIteratorRequest(), "reset")

    def request_next(self):
        self._submit(_messages.GetNextRequest(), "request next item")

    def _take_response(self, block, **timeout):
        try:
            reply = self.response_queue.get(block=block, **timeout)
        except Exception:
            raise EmptyQueue("queue is empty")
        self.request_served(reply)
        return reply

    def get_response_reset_iterator(self, block=False):
        response = self._take_response(block)
        if not isinstance(response, _messages.ResetIteratorResponse):
            raise Exception("Invalid response received")

    def get_response_next(self, block=False, timeout=None):
        self._expect_response()
        # Any response kind may come back: GetNextResponse, StopIterationResponse or
        # InvalidStateResponse; QueueWrapper tells them apart.
        return self._take_response(block, timeout=timeout)
