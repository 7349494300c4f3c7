"""tessera.utils.data: datasets, samplers, collation and the DataLoader (with worker
processes), and torch 1.13's DataPipes (datapipes.iter, datapipes.map, graph,
graph_settings), communication (a DataPipe served over queues
from a thread or process), under torch.utils.data's names."""
from ._collate import default_collate, default_convert
from ._worker import get_worker_info
from .dataloader import DataLoader
from .datapipes._decorator import (argument_validation, functional_datapipe, guaranteed_datapipes_determinism,
                                   non_deterministic, runtime_validation, runtime_validation_disabled)
from .datapipes.datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)
from . import backward_compatibility, communication, dataloader_experimental, datapipes, graph, graph_settings
from .dataloader_experimental import DataLoader2

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DFIterDataPipe", "DataChunk", "DataLoader",
           "DataLoader2", "Dataset", "DistributedSampler", "IterDataPipe", "IterableDataset", "MapDataPipe",
           "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "argument_validation", "communication", "default_collate",
           "default_convert", "functional_datapipe", "get_worker_info", "guaranteed_datapipes_determinism",
           "non_deterministic", "random_split", "runtime_validation", "runtime_validation_disabled"]
