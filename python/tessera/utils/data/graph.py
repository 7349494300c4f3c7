"""The graph of a DataPipe pipeline: `traverse_dps(dp)` maps id(dp) to (dp, the same kind
of map for the pipes dp reads from), found by pickling dp's state and noting every other
DataPipe met on the way (without pickling those; each is traversed in turn)."""
import io
import warnings
from collections.abc import Collection
from pickle import Pickler

from .datapipes.datapipe import IterDataPipe, MapDataPipe

__all__ = ["traverse", "traverse_dps"]

_PIPES = (IterDataPipe, MapDataPipe)


def _stub():
    return "STUB"


def _keep_pipes_and_collections(state):
    """What of a pipe's pickled state can lead to other pipes (only_datapipe=True)."""
    def wanted(v):
        return isinstance(v, _PIPES + (Collection,))
    if isinstance(state, dict):
        return {k: v for k, v in state.items() if wanted(v)}
    if isinstance(state, (tuple, list)):
        return [v for v in state if wanted(v)]
    return state if wanted(state) else None


class _ConnectionFinder(Pickler):
    def __init__(self, root, skip):
        super().__init__(io.BytesIO())
        self.root, self.skip, self.found = root, skip, []

    def reducer_override(self, obj):
        if obj is not self.root and isinstance(obj, _PIPES):
            if id(obj) not in self.skip:
                self.skip.add(id(obj))
                self.found.append(obj)
            return _stub, ()
        return NotImplemented


def _connected(datapipe, only_datapipe, skip):
    finder = _ConnectionFinder(datapipe, skip)
    if only_datapipe:
        state = datapipe.__getstate__() if hasattr(type(datapipe), "__getstate__") else datapipe.__dict__
        finder.dump(_keep_pipes_and_collections(state))
    else:
        finder.dump(datapipe)
    return finder.found


def _traverse(datapipe, only_datapipe, ancestors):
    if not isinstance(datapipe, _PIPES):
        raise RuntimeError(f"Expected `IterDataPipe` or `MapDataPipe`, but {type(datapipe)} is found")
    if id(datapipe) in ancestors:
        return {}
    ancestors = ancestors | {id(datapipe)}
    children = {}
    for child in _connected(datapipe, only_datapipe, set(ancestors)):
        children.update(_traverse(child, only_datapipe, ancestors))
    return {id(datapipe): (datapipe, children)}


def traverse_dps(datapipe):
    """The pipeline graph ending at `datapipe`, following only attributes that are
    DataPipes or collections (lists, tuples, dicts, sets) holding them."""
    return _traverse(datapipe, True, frozenset())


def traverse(datapipe, only_datapipe=None):
    """Deprecated form of traverse_dps; with only_datapipe False (the default) every
    attribute is followed, so all of them must pickle."""
    msg = "`traverse` function and will be removed after 1.13. Please use `traverse_dps` instead."
    if not only_datapipe:
        msg += " And, the behavior will be changed to the equivalent of `only_datapipe=True`."
    warnings.warn(msg, FutureWarning)
    return _traverse(datapipe, bool(only_datapipe), frozenset())
