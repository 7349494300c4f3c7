"""tessera.distributed.algorithms: DistributedDataParallel's communication hooks."""
