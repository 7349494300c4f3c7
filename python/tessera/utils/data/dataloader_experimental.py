"""DataLoader2, torch 1.13's prototype loader.

For an IterDataPipe it batches inside the pipeline (`.batch`, then collate) and hands the
pipe to a DataLoader with batch_size=None. With `batch_outside_worker=True` and
`parallelism_mode='thread'`, the pipe instead runs in `num_workers` threads (one sharded
copy each, served over communication's queue protocol), their items are interleaved, and
batching and collation happen afterwards, in the reading thread. Any other dataset gets a
plain DataLoader.
"""
import time

from . import _collate, communication, graph_settings
from .dataloader import DataLoader
from .datapipes.datapipe import IterDataPipe
from .datapipes.iter.utils import IterableWrapperIterDataPipe as IterableWrapper

__all__ = ["DataLoader2"]


class _ThreadingDataLoader2:
    """The items of `num_workers` threads, each serving its own shard of a copy of
    `datapipe`, taken round-robin from whichever thread has one ready."""

    def __init__(self, datapipe, num_workers=0, collate_fn=None):
        self.threads = []
        self.datapipes = []
        self.collate_fn = collate_fn
        for worker_id in range(num_workers):
            thread, req_queue, res_queue, local_copy = communication.eventloop.SpawnThreadForDataPipeline(datapipe)
            graph_settings.apply_sharding(local_copy, num_workers, worker_id)
            thread.start()
            self.threads.append((thread, req_queue, res_queue))
            client = communication.protocol.IterDataPipeQueueProtocolClient(req_queue, res_queue)
            self.datapipes.append(communication.iter.QueueWrapper(client))

    def __iter__(self):
        exhausted = []
        while len(exhausted) < len(self.datapipes):
            waiting = False
            for dp in self.datapipes:
                if any(dp is done for done in exhausted):
                    continue
                try:
                    value = dp.nonblocking_next()
                except StopIteration:
                    exhausted.append(dp)
                    continue
                except communication.iter.NotAvailable:
                    waiting = True
                    continue
                yield value
            if waiting:
                time.sleep(0.001)

    def __del__(self):
        self._cleanup_all_threads()

    def _cleanup_all_threads(self):
        # getattr: a copy that failed half-way (IterableWrapper tries a deep copy) has none.
        for thread, req_queue, res_queue in getattr(self, "threads", ()):
            req_queue.put(communication.messages.TerminateRequest())
            res_queue.get()  # the latest response: the TerminateResponse
            thread.join()


class DataLoader2:
    def __new__(cls, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None, *,
                prefetch_factor=2, persistent_workers=False, batch_outside_worker=False, parallelism_mode="mp"):
        # torch 1.13 passes prefetch_factor=2 even without workers; tessera's DataLoader,
        # like current torch, takes None there.
        prefetch = prefetch_factor if num_workers > 0 else None
        if not isinstance(dataset, IterDataPipe):
            if parallelism_mode == "thread":
                raise Exception("thread parallelism mode is not supported for old DataSets")
            return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, sampler=sampler,
                              batch_sampler=batch_sampler, num_workers=num_workers, collate_fn=collate_fn,
                              pin_memory=pin_memory, drop_last=drop_last, timeout=timeout,
                              worker_init_fn=worker_init_fn, prefetch_factor=prefetch,
                              persistent_workers=persistent_workers)
        if batch_sampler is not None:
            raise Exception("batch_sampler is not yet supported by DataPipes")
        if sampler is not None:
            raise Exception("sampler is not yet supported by DataPipes")
        datapipe = graph_settings.apply_shuffle_settings(dataset, shuffle=shuffle)
        if batch_outside_worker and pin_memory:
            raise Exception("pin_memory is not yet compatible with batch_outside_worker")
        if not batch_outside_worker:
            # parallelism_mode plays no part here, as in torch 1.13.
            if batch_size is not None:
                datapipe = datapipe.batch(batch_size, drop_last=drop_last)
                if collate_fn is None:
                    collate_fn = _collate.default_collate
            return DataLoader(datapipe, batch_size=None, shuffle=shuffle, num_workers=num_workers,
                              collate_fn=collate_fn, pin_memory=pin_memory, timeout=timeout,
                              worker_init_fn=worker_init_fn, prefetch_factor=prefetch,
                              persistent_workers=persistent_workers)
        if parallelism_mode != "thread":
            raise Exception("Unsupported parallelism mode", parallelism_mode)
        if worker_init_fn is not None:
            raise Exception("worker_init_fn is not yet supported by DataPipes with Threading")
        loader = _ThreadingDataLoader2(datapipe, num_workers=num_workers, collate_fn=collate_fn)
        if collate_fn is None:
            collate_fn = _collate.default_collate
        return IterableWrapper(loader).batch(batch_size, drop_last=drop_last).map(collate_fn)
