"""The IterDataPipes of torch.utils.data.datapipes.iter, under their short names."""
from .callable import CollatorIterDataPipe as Collator, MapperIterDataPipe as Mapper
from .combinatorics import SamplerIterDataPipe as Sampler, ShufflerIterDataPipe as Shuffler
from .combining import (ConcaterIterDataPipe as Concater, DemultiplexerIterDataPipe as Demultiplexer,
                        ForkerIterDataPipe as Forker, MultiplexerIterDataPipe as Multiplexer,
                        ZipperIterDataPipe as Zipper)
from .files import (FileListerIterDataPipe as FileLister, FileLoaderIterDataPipe as FileLoader,
                    FileOpenerIterDataPipe as FileOpener, StreamReaderIterDataPipe as StreamReader)
from .grouping import (BatcherIterDataPipe as Batcher, GrouperIterDataPipe as Grouper,
                       ShardingFilterIterDataPipe as ShardingFilter, UnBatcherIterDataPipe as UnBatcher)
from .selecting import FilterIterDataPipe as Filter
from .utils import IterableWrapperIterDataPipe as IterableWrapper

__all__ = ["Batcher", "Collator", "Concater", "Demultiplexer", "FileLister", "FileLoader", "FileOpener", "Filter",
           "Forker", "Grouper", "IterableWrapper", "Mapper", "Multiplexer", "Sampler", "ShardingFilter", "Shuffler",
           "StreamReader", "UnBatcher", "Zipper"]
