"""The messages exchanged over a DataPipe's request and response queues. Requests go from
the reader (client) to the pipe's loop (server), responses come back."""


class DataLoaderQueueMessage(object):
    pass


class Request(DataLoaderQueueMessage):
    pass


class Response(DataLoaderQueueMessage):
    pass


# IterDataPipe: start over.
class ResetIteratorRequest(Request):
    pass


class ResetIteratorResponse(Response):
    pass


# Both kinds: stop the server loop.
class TerminateRequest(Request):
    pass


class TerminateResponse(Response):
    pass


# MapDataPipe: the length.
class LenRequest(Request):
    pass


class LenResponse(Response):
    __slots__ = ("len",)

    def __init__(self, len):
        self.len = len


# MapDataPipe: one item by key.
class GetItemRequest(Request):
    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key


class GetItemResponse(Response):
    __slots__ = ("key", "value")

    def __init__(self, key, value):
        self.key = key
        self.value = value


# IterDataPipe: the next item.
class GetNextRequest(Request):
    pass


class GetNextResponse(Response):
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


# The stream is exhausted (iter), or the key is out of range (map).
class StopIterationResponse(Response):
    pass


class InvalidStateResponse(Response):
    """The pipe cannot give an item until it is reset (e.g. a pipe shared by several readers
    that waits for all of them to ask for a reset)."""
    pass
