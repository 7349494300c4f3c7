"""Queues for the DataPipe protocol when both ends live in one process.

The protocol keeps at most one message in each queue, so these are simple item lists. Like
torch's, `get` takes the most recently put item and its `timeout` is accepted but unused.
"""
import threading


class LocalQueue():
    """A queue for both ends in the same thread (the server loop is stepped by hand).

    The class attributes count, over all LocalQueues: operations (`ops`), items currently
    stored (`stored`), queues created (`uid`, also each queue's own id) and gets that found
    the queue empty (`empty`).
    """
    ops = 0
    stored = 0
    uid = 0
    empty = 0

    def __init__(self, name='unnamed'):
        self.name, self.items, self.uid = name, [], LocalQueue.uid
        LocalQueue.uid = self.uid + 1

    @staticmethod
    def _tally(stored_delta=0, empty_delta=0):
        LocalQueue.ops += 1
        LocalQueue.stored += stored_delta
        LocalQueue.empty += empty_delta

    def put(self, item, block=True):
        self._tally(stored_delta=1)
        self.items.append(item)

    def get(self, block=True, timeout=0):
        # Nothing else can fill it while we wait, so `block` makes no difference.
        if self.items:
            self._tally(stored_delta=-1)
            return self.items.pop()
        self._tally(empty_delta=1)
        raise Exception('LocalQueue is empty')


class ThreadingQueue():
    """A lock-protected queue between threads. A blocking `get` waits until an item arrives."""

    def __init__(self, name='unnamed'):
        self.name = name
        self.items = []
        self.lock = threading.Lock()
        self._nonempty = threading.Condition(self.lock)

    def put(self, item, block=True):
        with self._nonempty:
            self.items.append(item)
            self._nonempty.notify()

    def get(self, block=True, timeout=0):
        with self._nonempty:
            if block:
                self._nonempty.wait_for(lambda: len(self.items) > 0)
            elif not self.items:
                raise Exception("Not available")
            return self.items.pop()
