"""What runs in a DataLoader worker process: the loop that takes batches of indices from
its index queue and puts (task index, batch) on the shared result queue, get_worker_info(),
and the wrapper that carries an exception and its traceback back to the main process.
"""
import os
import pickle
import queue
import random
import sys
import traceback
from multiprocessing.reduction import ForkingPickler

import numpy as np

from ...multiprocessing import _shm

__all__ = ["WorkerInfo", "get_worker_info"]

# How often (seconds) a worker with nothing to do checks that the main process still exists
# and has not asked it to stop.
_WORKER_POLL = 0.2

_worker_info = None


class WorkerInfo:
    """id, num_workers, seed and dataset (this worker's copy) of the worker it is read in."""
    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")
        super().__setattr__(key, val)

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{type(self).__name__}({fields})"


def get_worker_info():
    """In a DataLoader worker process, its WorkerInfo; in the main process, None."""
    return _worker_info


class _IterableDatasetStopIteration:
    """A worker's note that its copy of an IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of each epoch after the first, with the
    epoch's seed for an IterDataPipe's random pipes (None for other datasets)."""

    def __init__(self, seed=None):
        self.seed = seed


class _KeyErrorMessage(str):
    # KeyError's str() is the repr() of its argument, which would print the traceback text
    # as one line full of \n escapes.
    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker: its class (when it can be pickled) and the text of
    its traceback, re-raised in the main process."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_name = exc_info[0].__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        try:  # a class defined in a function cannot be pickled by reference
            pickle.dumps(self.exc_type)
        except Exception:
            self.exc_type = None

    def reraise(self):
        msg = f"Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is None:
            raise RuntimeError(msg)
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:  # a class whose constructor wants other arguments
            raise RuntimeError(msg) from None
        raise exc


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(index) if getitems else [self.dataset[i] for i in index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.iterator = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        data = []
        for _ in index:  # index is a list of batch_size placeholders
            try:
                data.append(next(self.iterator))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _seed_all(base_seed, worker_id):
    from ... import _C
    seed = base_seed + worker_id
    random.seed(seed)
    _C.manual_seed(seed)
    # numpy's legacy seed takes 32-bit words; a SeedSequence mixes the two inputs into them
    # (torch's values differ: it uses its own hash).
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def _put(data_queue, idx, data, worker_id):
    # Pickled here rather than in the queue's feeder thread: an object that cannot be
    # pickled becomes an error in the main process instead of a batch silently lost.
    with _shm.recording_handoffs() as handoffs:
        try:
            payload = ForkingPickler.dumps((idx, data))
        except Exception:
            # Tensors pickled before the failing object already gave their blocks away (or
            # were copied into new ones) for a receiver that will never see them.
            handoffs.take_back()
            err = ExceptionWrapper(where=f"in DataLoader worker process {worker_id} (sending its batch)")
            payload = ForkingPickler.dumps((idx, err))
    data_queue.put(bytes(payload))


def _prepare_datapipe(dataset, shared_seed, worker_id, num_workers, distributed=(1, 0)):
    """An IterDataPipe worker copy: reseeded like the main process's, then sharded so that
    the sharding_filter of every worker of every rank keeps a disjoint share (torch's order:
    worker_id * world_size + rank of num_workers * world_size)."""
    world_size, rank = distributed
    from .datapipes.datapipe import IterDataPipe, MapDataPipe
    from .dataloader import seed_random_pipes
    from .graph_settings import apply_sharding
    if isinstance(dataset, IterDataPipe):
        seed_random_pipes(dataset, shared_seed)
    if isinstance(dataset, (IterDataPipe, MapDataPipe)):
        apply_sharding(dataset, num_workers * world_size, worker_id * world_size + rank)


def worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                base_seed, init_fn, worker_id, num_workers, persistent_workers, shared_seed=None,
                distributed=(1, 0)):
    """The body of worker `worker_id`: runs until it gets None (or the main process dies)."""
    global _worker_info
    try:
        from ... import _C
        _C.set_num_threads(1)  # workers run side by side; intra-op threads would oversubscribe
        seed = _seed_all(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_error = None
        fetcher = None
        try:
            _prepare_datapipe(dataset, shared_seed, worker_id, num_workers, distributed)
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        parent = os.getppid()
        while os.getppid() == parent:
            try:
                r = index_queue.get(timeout=_WORKER_POLL)
            except queue.Empty:
                # The None that ends the loop can be lost: when the main process's iterator
                # is garbage-collected in a cycle, its queues' finalizers stop their feeder
                # threads before the iterator's __del__ puts anything. The event still says.
                if done_event.is_set():
                    break
                continue
            if isinstance(r, _ResumeIteration):
                _put(data_queue, r, None, worker_id)
                iteration_end = False
                if r.seed is not None:
                    from .dataloader import seed_random_pipes
                    seed_random_pipes(dataset, r.seed)
                if init_error is None:
                    fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue  # drain what was sent before shutdown / after the stream ended
            idx, index = r
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            _put(data_queue, idx, data, worker_id)
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        # The main process no longer reads: do not wait for the pipe to take what is queued.
        data_queue.cancel_join_thread()
        data_queue.close()
