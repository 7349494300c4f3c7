"""Settings applied across a whole pipeline graph: sharding (for DataLoader workers and
distributed ranks), turning Shufflers on or off, and seeding every random pipe."""
import inspect
import warnings

from ... import _C
from .graph import traverse_dps

__all__ = ["apply_random_seed", "apply_sharding", "apply_shuffle_seed", "apply_shuffle_settings",
           "get_all_graph_pipes"]


def get_all_graph_pipes(graph):
    """Every pipe of `graph` (from traverse_dps) once, parents before the pipes they read."""
    seen, out = set(), []

    def visit(g):
        for dp_id, (dp, sub) in g.items():
            if dp_id not in seen:
                seen.add(dp_id)
                out.append(dp)
                visit(sub)
    visit(graph)
    return out


def apply_sharding(datapipe, num_of_instances, instance_id):
    """Tells the one shardable pipe (sharding_filter) of the graph to keep share
    `instance_id` of `num_of_instances`; a second shardable pipe is an error."""
    applied_to = None
    for pipe in get_all_graph_pipes(traverse_dps(datapipe)):
        if hasattr(pipe, "is_shardable") and pipe.is_shardable() and hasattr(pipe, "apply_sharding"):
            if applied_to is not None:
                raise RuntimeError("This implementation of sharding can be only applied once per instance of "
                                   "DataPipeline.", "Already applied to", applied_to, "while trying to apply to",
                                   pipe)
            pipe.apply_sharding(num_of_instances, instance_id)
            applied_to = pipe
    return datapipe


def _has_methods(pipe, *names):
    return all(inspect.ismethod(getattr(pipe, n, None)) for n in names)


def apply_shuffle_settings(datapipe, shuffle=None):
    """Turns every shuffling pipe (one with set_shuffle and set_seed) on or off; None
    changes nothing. With shuffle=True and no such pipe, a Shuffler is appended (with a
    warning) and the new end of the pipeline is returned."""
    if shuffle is None:
        return datapipe
    shufflers = [p for p in get_all_graph_pipes(traverse_dps(datapipe)) if _has_methods(p, "set_shuffle", "set_seed")]
    if not shufflers and shuffle:
        warnings.warn("`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. Adding one at the end. "
                      "Be aware that the default buffer size might not be sufficient for your task.")
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for s in shufflers:
        s.set_shuffle(shuffle)
    return datapipe


def apply_random_seed(datapipe, rng):
    """Gives every random pipe (one with set_seed) a seed drawn from the tessera.Generator
    `rng`, in graph order."""
    for pipe in get_all_graph_pipes(traverse_dps(datapipe)):
        if _has_methods(pipe, "set_seed"):
            pipe.set_seed(int(_C.empty((), dtype=_C.int64, device="cpu").random_(generator=rng).item()))
    return datapipe


def apply_shuffle_seed(datapipe, rng):
    warnings.warn("`apply_shuffle_seed` is deprecated since 1.12 and will be removed in the future releases.\nPlease "
                  "use `apply_random_seed` instead.")
    return apply_random_seed(datapipe, rng)
