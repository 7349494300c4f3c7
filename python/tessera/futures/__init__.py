"""tessera.futures: torch.futures' Future, the result of an asynchronous call (a
collective's Work.get_future(), rpc in torch) that callbacks can chain on."""
import logging
import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A value that arrives later. ``wait()`` blocks for it (raising what the producer set
    with ``set_exception``); ``then(fn)`` gives a Future of ``fn(self)``."""

    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []

    def done(self):
        with self._cond:
            return self._done

    def wait(self):
        with self._cond:
            self._cond.wait_for(lambda: self._done)
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        with self._cond:
            if not self._done:
                raise RuntimeError("Future.value() called on a Future that has not completed")
        if self._error is not None:
            raise self._error
        return self._value

    def _finish(self, value, error):
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once")
            self._done, self._value, self._error = True, value, error
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for fn in callbacks:
            self._run_callback(fn)

    def _run_callback(self, fn):
        # As torch's: a callback that raises is logged and the others still run.
        try:
            fn(self)
        except Exception:
            logging.getLogger(__name__).exception("Got the following error when running the callback")

    def set_result(self, result):
        self._finish(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._finish(None, result)

    def add_done_callback(self, callback):
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        self._run_callback(callback)

    def then(self, callback):
        out = Future()

        def run(fut):
            try:
                out.set_result(callback(fut))
            except Exception as e:  # the chained Future carries the callback's error
                out.set_exception(e)

        self.add_done_callback(run)
        return out


def collect_all(futures):
    """A Future of the list of ``futures``, done when all of them are; it fails with the
    first error among them."""
    out = Future()
    futures = list(futures)
    if not futures:
        out.set_result([])
        return out
    left = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            error = next((f._error for f in futures if f._error is not None), None)
            if error is not None:
                out.set_exception(error)
            else:
                out.set_result(futures)

    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    """Waits for every Future and returns their values (raising the first error)."""
    return [f.wait() for f in collect_all(futures).wait()]
