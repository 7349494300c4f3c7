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
        self.items = []
        self.name = name
        self.uid = LocalQueue.uid
        LocalQueue.uid += 1

    def put(self, item, block=True):
        LocalQueue.ops += 1
        LocalQueue.stored += 1
        self.items.append(item)

    def get(self, block=True, timeout=0):
        # Nothing else can fill it while we wait, so `block` makes no difference.
        LocalQueue.ops += 1
        if not self.items:
            LocalQueue.empty += 1
            raise Exception('LocalQueue is empty')
        LocalQueue.stored -= 1
        return self.items.pop()


class ThreadingQueue():
    """A lock-protected queue between threads. A blocking `get` waits until an item arrives."""

    def __init__(self, name='unnamed'):
        self.lock = threading.Lock()
        self.items = []
        self.name = name
        self._arrived = threading.Condition(self.lock)

    def put(self, item, block=True):
        with self.lock:
            self.items.append(item)
            self._arrived.notify()

    def get(self, block=True, timeout=0):
        with self.lock:
            if not block and not self.items:
                raise Exception("Not available")
            while not self.items:
                self._arrived.wait()
            return self.items.pop()
