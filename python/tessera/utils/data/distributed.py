"""DistributedSampler under torch.utils.data's name: gives each of num_replicas processes its
own equal-sized, disjoint share of a map-style dataset's indices, reshuffled per epoch from
seed + epoch so that every replica draws the same permutation."""
import math

from ... import _C
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler[int]):
    """Indices rank, rank + num_replicas, ... of one (optionally shuffled) pass over the
    dataset, padded by repeating its head (or cut, with drop_last) to a multiple of
    num_replicas. Call set_epoch before each epoch to get a fresh order."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        # Omitted, the world size and rank are the default process group's (as torch's).
        if num_replicas is None or rank is None:
            from tessera import distributed as dist
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # every replica gets the same count, so the tail that would not go round is dropped
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = _C.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _C.randperm(n, generator=g, device="cpu").tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            missing = self.total_size - len(indices)
            if missing <= len(indices):
                indices += indices[:missing]
            else:
                # more replicas than samples: the whole list repeats as often as needed
                indices += (indices * math.ceil(missing / len(indices)))[:missing]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"DistributedSampler: built {len(indices)} indices, expected {self.total_size}")
        mine = indices[self.rank:self.total_size:self.num_replicas]
        if len(mine) != self.num_samples:
            raise AssertionError(f"DistributedSampler: rank {self.rank} got {len(mine)} indices, "
                                 f"expected {self.num_samples}")
        return iter(mine)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Seeds the next shuffle with seed + epoch; without it every epoch repeats one order."""
        self.epoch = epoch
