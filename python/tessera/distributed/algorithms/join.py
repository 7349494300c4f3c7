"""Training on uneven inputs (torch.distributed.algorithms.join): inside ``with Join([...])``
each rank runs its own number of iterations. Every iteration a Joinable (a
DistributedDataParallel, a ZeroRedundancyOptimizer) tells the context it is still running
by an all-reduce of 1; a rank that has run out of inputs stays in ``__exit__``, answering
with 0 and running each Joinable's main hook, which issues the collectives the running
ranks' iteration issues (with neutral values), until the count reaches 0. Then each post
hook runs once (DDP copies the last joiner's model to every rank)."""
import warnings
from abc import ABC, abstractmethod
from typing import NamedTuple

import tessera

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a Joinable does while its rank has joined: main_hook once per iteration of the
    ranks still running, post_hook once all have joined."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner: bool):
        pass


class Joinable(ABC):
    """A class that takes part in a Join context: it calls Join.notify_join_context(self)
    once per iteration and gives the hook that shadows that iteration once joined."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        ...

    @property
    @abstractmethod
    def join_device(self):
        ...

    @property
    @abstractmethod
    def join_process_group(self):
        ...


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Join:
    """The context manager. ``joinables`` share one process group; ``enable=False`` makes it
    a no-op; with ``throw_on_early_termination`` every rank raises once the first one
    runs out of inputs instead of shadowing its iterations. Extra keyword arguments go to
    each Joinable's join_hook."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        self._set_joinable_configs()
        self._extract_dist_info()

    def _set_joinable_configs(self):
        assert len(self._joinables) > 0
        is_first_joinable = True
        for joinable in self._joinables:
            joinable._join_config = _JoinConfig(enable=self._enable,
                                                throw_on_early_termination=self._throw_on_early_termination,
                                                is_first_joinable=is_first_joinable)
            is_first_joinable = False

    def _extract_dist_info(self):
        process_group = None
        device = None
        for joinable in self._joinables:
            if process_group is None:
                process_group = joinable.join_process_group
            elif process_group != joinable.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if device is None:
                device = joinable.join_device
        self._process_group = process_group
        self._rank = tessera.distributed.get_rank(self._process_group)
        self._device = device

    def __enter__(self):
        pass

    def __exit__(self, type, value, traceback):
        if not self._enable or type:
            return  # an exception propagates as it is
        all_procs_joined = False
        is_last_joiner = True
        i = 0
        warn_threshold = 1000
        warnings.simplefilter("once")
        while not all_procs_joined:
            if i > warn_threshold:
                warnings.warn("Detected uneven input skew of greater than "
                              f"{warn_threshold}. This means that rank {self._rank} has at least {warn_threshold} "
                              "fewer inputs than other currently-active ranks. This level of skew could lead to "
                              "performance degradation during training.")
            num_nonjoined_procs = self._get_num_nonjoined_procs()
            if num_nonjoined_procs == 0:
                all_procs_joined = True
            else:
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for join_hook in self._join_hooks:
                    join_hook.main_hook()
                is_last_joiner = False
                i += 1
        for join_hook in self._join_hooks:
            join_hook.post_hook(is_last_joiner)

    def _get_num_nonjoined_procs(self):
        num_nonjoined_procs = tessera.zeros(1, device=self._device)
        tessera.distributed.all_reduce(num_nonjoined_procs, group=self._process_group)
        return num_nonjoined_procs.item()

    def _notify_procs_to_terminate(self):
        ones = tessera.ones(1, device=self._device)
        tessera.distributed.all_reduce(ones, group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Called by the first Joinable of a context each iteration on a running rank: the
        all-reduce that counts running ranks (its Work, for DDP's gradient divisor). Does
        nothing outside an enabled context."""
        assert hasattr(joinable, "_join_config"), \
            f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor"
        join_config = joinable._join_config
        if not join_config.is_first_joinable or not join_config.enable:
            return None
        device = joinable.join_device
        process_group = joinable.join_process_group
        ones = tessera.ones(1, device=device)
        work = tessera.distributed.all_reduce(ones, group=process_group, async_op=True)
        if join_config.throw_on_early_termination:
            zeros = tessera.zeros(1, device=device)
            tessera.distributed.all_reduce(zeros, group=process_group)
            if zeros.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work
