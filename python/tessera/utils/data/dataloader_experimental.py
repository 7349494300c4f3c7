"""DataLoader2, torch 1.13's prototype: for an IterDataPipe it batches inside the pipeline
(`.batch`, then collate) and hands the pipe to a DataLoader with batch_size=None; for any
other dataset it is a plain DataLoader.

torch's parallelism_mode='thread' (threads talking over torch.utils.data.communication's
queue protocol, the only mode where torch honours batch_outside_worker) is not provided:
asking for it raises NotImplementedError.
"""
from . import _collate, graph_settings
from .dataloader import DataLoader
from .datapipes.datapipe import IterDataPipe

__all__ = ["DataLoader2"]


class DataLoader2:
    def __new__(cls, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None, *,
                prefetch_factor=2, persistent_workers=False, batch_outside_worker=False, parallelism_mode="mp"):
        if parallelism_mode == "thread":
            raise NotImplementedError("DataLoader2: parallelism_mode='thread' is not supported by tessera; use the "
                                      "default 'mp'.")
        if parallelism_mode != "mp":
            raise Exception("Unsupported parallelism mode", parallelism_mode)
        # torch 1.13 passes prefetch_factor=2 even without workers; tessera's DataLoader,
        # like current torch, takes None there.
        prefetch = prefetch_factor if num_workers > 0 else None
        if not isinstance(dataset, IterDataPipe):
            return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, sampler=sampler,
                              batch_sampler=batch_sampler, num_workers=num_workers, collate_fn=collate_fn,
                              pin_memory=pin_memory, drop_last=drop_last, timeout=timeout,
                              worker_init_fn=worker_init_fn, prefetch_factor=prefetch,
                              persistent_workers=persistent_workers)
        if batch_sampler is not None:
            raise Exception("batch_sampler is not yet supported by DataPipes")
        if sampler is not None:
            raise Exception("sampler is not yet supported by DataPipes")
        if batch_outside_worker and pin_memory:
            raise Exception("pin_memory is not yet compatible with batch_outside_worker")
        datapipe = graph_settings.apply_shuffle_settings(dataset, shuffle=shuffle)
        if batch_outside_worker:  # torch 1.13 offers it only with threads
            raise Exception("Unsupported parallelism mode", parallelism_mode)
        if batch_size is not None:
            datapipe = datapipe.batch(batch_size, drop_last=drop_last)
            if collate_fn is None:
                collate_fn = _collate.default_collate
        return DataLoader(datapipe, batch_size=None, shuffle=shuffle, num_workers=num_workers,
                          collate_fn=collate_fn, pin_memory=pin_memory, timeout=timeout,
                          worker_init_fn=worker_init_fn, prefetch_factor=prefetch,
                          persistent_workers=persistent_workers)
