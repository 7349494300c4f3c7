"""The DataLoader iterator with worker processes: each worker has an index queue, results
come back (in any order) on one result queue and are handed out in order; at most
prefetch_factor * num_workers batches are outstanding. Batches' tensors arrive in shared
memory (tessera.multiprocessing), so only their descriptions are pickled.
"""
import itertools
import multiprocessing
import os
import queue
import signal
import time
from multiprocessing.reduction import ForkingPickler

from ...multiprocessing import _shm
from . import _worker
from .dataloader import _BaseDataLoaderIter

# How often (seconds) the main process, waiting for a batch, checks that its workers live.
_POLL = 0.25
# How long shutdown waits for a worker to exit by itself before terminating it.
_JOIN_TIMEOUT = 5.0


def _death_message(w):
    code = w.exitcode
    if code is not None and code < 0:
        try:
            name = signal.strsignal(-code) or signal.Signals(-code).name
        except (ValueError, AttributeError):
            name = f"signal {-code}"
        return f"DataLoader worker (pid {w.pid}) is killed by signal: {name}."
    return f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code {code}."


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._shutdown = True  # until the workers exist, there is nothing to shut down
        self._owner_pid = os.getpid()
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._workers, self._index_queues = [], []
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._shutdown = False
        # Under spawn / forkserver the workers' arguments (the dataset's tensors) are pickled
        # into shared-memory blocks that each worker unlinks when it unpickles them.
        self._startup_blocks = []
        for worker_id in range(self._num_workers):
            index_queue = ctx.Queue()
            # Indices still queued at shutdown need not reach a worker that is going away.
            index_queue.cancel_join_thread()
            w = ctx.Process(target=_worker.worker_loop,
                            args=(self._iterable, self._dataset, index_queue, self._result_queue, self._done_event,
                                  self._auto_collation, self._collate_fn, self._drop_last, self._base_seed,
                                  loader.worker_init_fn, worker_id, self._num_workers, self._persistent_workers,
                                  self._shared_seed, (self._world_size, self._rank)),
                            daemon=True)
            try:
                with _shm.recording_handoffs() as names:
                    try:
                        w.start()
                    except BaseException:
                        # e.g. a collate_fn spawn cannot pickle: the dataset's tensors are
                        # already copied into blocks no worker will take.
                        names.take_back()
                        raise
            except BaseException:
                index_queue.close()
                self._shutdown_workers()  # the workers already started
                raise
            self._startup_blocks += names
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task to hand to a worker
        self._rcvd_idx = 0  # the next task to return from __next__
        # task -> (worker_id,) while outstanding, (worker_id, data) once it arrived early
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers: restart every worker's fetcher, and drop whatever the last
            # epoch left in flight until each has acknowledged.
            for q in self._index_queues:
                q.put(_worker._ResumeIteration(self._shared_seed))
            pending = self._num_workers
            while pending:
                idx, _ = self._get_data()
                if isinstance(idx, _worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _check_workers(self):
        dead = [w for wid, w in enumerate(self._workers) if self._workers_status[wid] and not w.is_alive()]
        if dead:
            msg = " ".join(_death_message(w) for w in dead)
            self._shutdown_workers()
            raise RuntimeError(f"{msg} Details are lost due to multiprocessing. Rerunning with num_workers=0 may "
                               "give better error trace.")

    def _get_data(self):
        """The next (task index, data) from any worker; fails if a worker died or, with a
        timeout, if nothing came in time."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _POLL if deadline is None else max(0.0, min(_POLL, deadline - time.monotonic()))
            try:
                payload = self._result_queue.get(timeout=wait)
            except queue.Empty:
                self._check_workers()
                if deadline is not None and time.monotonic() >= deadline:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
                continue
            return ForkingPickler.loads(payload)

    def _try_put_index(self):
        assert self._tasks_outstanding < self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker still taking tasks
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _next_data(self):
        while True:
            # Skip tasks given to workers whose stream has since ended: they will not answer.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                return self._process_data(self._task_info.pop(self._rcvd_idx)[1])
            assert not self._shutdown and self._tasks_outstanding > 0
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if idx in self._task_info:  # not a stale task of an earlier epoch
                    self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            return self._process_data(data)

    def _process_data(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id):
        self._index_queues[worker_id].put(None)  # the worker exits when it reads this
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        # A forked child may garbage-collect its copy of an iterator: only the process that
        # started the workers can stop them.
        if getattr(self, "_shutdown", True) or os.getpid() != self._owner_pid:
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for q in self._index_queues:
                q.put(None)
            for w in self._workers:
                w.join(timeout=_JOIN_TIMEOUT)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_JOIN_TIMEOUT)
            self._result_queue.cancel_join_thread()
            self._result_queue.close()
            # Batches written to shared memory but never received (still in the pipe when
            # the epoch was abandoned) would outlive everyone otherwise.
            for w in self._workers:
                if w.pid is not None and not w.is_alive():
                    _shm.unlink_orphans(w.pid)
            if not any(w.is_alive() for w in self._workers):
                for name in self._startup_blocks:  # a worker that died before taking them
                    _shm.unlink(name)

    def __del__(self):
        self._shutdown_workers()
