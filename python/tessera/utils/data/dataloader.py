"""DataLoader: batches from a dataset, read in the main process or by worker processes
(_multiprocess_iter.py), with torch's arguments, checks and error messages.
"""
import math
import multiprocessing
import os
import warnings

from ... import _C
from . import _collate, _worker
from . import graph_settings
from .datapipes.datapipe import IterDataPipe, MapDataPipe
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]


class _InfiniteConstantSampler(Sampler):
    """None forever: an IterableDataset decides itself when a stream ends."""

    def __iter__(self):
        while True:
            yield None


def _suggested_max_workers():
    try:
        return len(os.sched_getaffinity(0)), True
    except (AttributeError, OSError):
        return os.cpu_count(), False


class DataLoader:
    """Iterates over `dataset` in batches; see torch.utils.data.DataLoader.

    prefetch_factor defaults to None, as in current torch (2 batches per worker when
    num_workers > 0); torch 1.13 defaulted it to 2 and refused other values without workers.
    """
    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers "
                             "> 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        # DataPipes: turn the pipeline's Shufflers on or off (shuffle=None leaves them). Unlike
        # torch 1.13, which warns that it appends a Shuffler to a pipeline without one but then
        # drops it, the appended Shuffler is kept.
        if isinstance(dataset, IterDataPipe) and shuffle is not None:
            dataset = graph_settings.apply_shuffle_settings(dataset, shuffle=shuffle)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context

        # Iterable datasets order themselves: a sampler or shuffling has no meaning for them.
        if isinstance(dataset, IterableDataset):
            self._iterable = True
            if shuffle not in {False, None} and not isinstance(dataset, IterDataPipe):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._iterable = False

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = _collate.default_collate if self._auto_collation else _collate.default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self.__multiprocessing_context = context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        from ._multiprocess_iter import _MultiProcessingDataLoaderIter
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        # Persistent workers belong to one iterator that every epoch resets.
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._iterable:
            # Trusts the dataset's own __len__ (which must then account for sharding).
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        if not self.num_workers:
            return
        suggested, cpuset_checked = _suggested_max_workers()
        if suggested is not None and self.num_workers <= suggested:
            return
        if suggested is None:
            why = "DataLoader is not able to compute a suggested max number of worker in current system."
        else:
            why = (f"Our suggested max number of worker in current system is {suggested}"
                   f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, which is smaller than "
                   f"what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. {why} Please be "
                      f"aware that excessive worker creation might get DataLoader running slow or even freeze, "
                      f"lower the worker number to avoid potential slowness/freeze if necessary.")


def _draw_seed(generator):
    return _C.empty((), dtype=_C.int64, device="cpu").random_(generator=generator).item()


def _distributed_settings():
    """(world size, rank) of the default process group, (1, 0) outside one: a DataPipe is
    sharded over every rank's workers (torch's _get_distributed_settings)."""
    from ... import distributed as dist
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def _share_dist_seed(generator, world_size):
    """The epoch's DataPipe seed, rank 0's on every rank, so that every rank shuffles alike
    and the shards split one order."""
    seed = _draw_seed(generator)
    if world_size > 1:
        from ... import distributed as dist
        t = _C.empty(1, dtype=_C.int64, device="cpu").fill_(seed)
        dist.broadcast(t, src=0)
        seed = int(t.item())
    return seed


def seed_random_pipes(datapipe, shared_seed):
    """Seeds every random pipe of the graph from one generator seeded with `shared_seed`,
    so the main process and every worker shuffle alike (and sharding splits one order)."""
    rng = _C.Generator()
    rng.manual_seed(shared_seed)
    graph_settings.apply_random_seed(datapipe, rng)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        # Note [DataPipe seeds]: an IterDataPipe's random pipes are seeded per epoch from one
        # seed drawn (before the workers' base seed, in torch's order) from the loader's
        # generator; workers reseed their copies from it. tessera's generator streams differ
        # from torch's, so the orders differ; the laws (same order everywhere) do not.
        self._shared_seed = None
        is_pipe = isinstance(self._dataset, (IterDataPipe, MapDataPipe))
        self._world_size, self._rank = _distributed_settings() if is_pipe else (1, 0)
        if isinstance(self._dataset, IterDataPipe):
            self._shared_seed = _share_dist_seed(loader.generator, self._world_size)
            seed_random_pipes(self._dataset, self._shared_seed)
        self._iterable = loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        if loader.pin_memory:
            # Current torch's warning; pinned memory only matters for copies to an accelerator.
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.")
        self._pin_memory = False
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _draw_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        if isinstance(self._dataset, IterDataPipe) and not first_iter:
            self._shared_seed = _share_dist_seed(loader.generator, self._world_size)
            seed_random_pipes(self._dataset, self._shared_seed)

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._IterableDataset_len_called is not None and \
                self._num_yielded > self._IterableDataset_len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called} "
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
            warnings.warn(msg)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if isinstance(self._dataset, (IterDataPipe, MapDataPipe)):
            # this rank's share (every item outside a process group)
            graph_settings.apply_sharding(self._dataset, self._world_size, self._rank)
        self._fetcher = _worker.make_fetcher(self._iterable, self._dataset, self._auto_collation,
                                             self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)
