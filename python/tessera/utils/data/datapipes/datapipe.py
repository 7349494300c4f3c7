"""The DataPipe base classes under torch.utils.data's names: IterDataPipe (a stream, one
live iterator at a time), MapDataPipe (indexable), DFIterDataPipe and DataChunk (the list a
batching pipe yields). Functional forms (`dp.map(f)`) are looked up by `__getattr__` in a
registry that `functional_datapipe` fills.

Pipes pickle by their `__dict__` (or their own `__getstate__`), so DataLoader workers get a
copy of the whole graph; lambdas do not pickle (tessera has no dill).
"""
import functools
from abc import ABCMeta
from typing import Callable, Dict, Generic, Optional, TypeVar

from ..dataset import Dataset, IterableDataset
from ._iterator_guard import guard_iter

__all__ = ["DataChunk", "DFIterDataPipe", "IterDataPipe", "MapDataPipe"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _DataPipeMeta(ABCMeta):
    """The metaclass of every DataPipe (torch 1.13 keeps no type annotations on it)."""


class _IterDataPipeMeta(_DataPipeMeta):
    """Wraps each `__iter__` a class defines so that iterating resets the pipe and older
    iterators become invalid (_iterator_guard.py)."""

    def __new__(mcs, name, bases, namespace, **kwargs):
        if "__iter__" in namespace:
            namespace["__iter__"] = guard_iter(namespace["__iter__"])
        return super().__new__(mcs, name, bases, namespace, **kwargs)


class _PipeBase:
    """What both kinds of pipe share; each kind keeps its own registry and hooks."""

    def _lookup_function(self, registry, attribute_name):
        if attribute_name in registry:
            return functools.partial(registry[attribute_name], self)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attribute_name}'")

    def __repr__(self):
        hook = type(self)._base().repr_hook
        return hook(self) if hook is not None else type(self).__qualname__

    def __str__(self):
        hook = type(self)._base().str_hook
        return hook(self) if hook is not None else type(self).__qualname__

    def _hooked_state(self, state):
        """`state` as pickled: through the kind's getstate hook when one is set."""
        hook = type(self)._base().getstate_hook
        return hook(state) if hook is not None else state

    def __getstate__(self):
        return self._hooked_state(self.__dict__)

    def __reduce_ex__(self, protocol):
        hook = type(self)._base().reduce_ex_hook
        if hook is not None:
            try:
                return hook(self)
            except NotImplementedError:
                pass
        return super().__reduce_ex__(protocol)

    @classmethod
    def register_function(cls, function_name, function):
        cls._base().functions[function_name] = function

    @classmethod
    def set_getstate_hook(cls, hook_fn):
        base = cls._base()
        if base.getstate_hook is not None and hook_fn is not None:
            raise Exception("Attempt to override existing getstate_hook")
        base.getstate_hook = hook_fn

    @classmethod
    def set_reduce_ex_hook(cls, hook_fn):
        base = cls._base()
        if base.reduce_ex_hook is not None and hook_fn is not None:
            raise Exception("Attempt to override existing reduce_ex_hook")
        base.reduce_ex_hook = hook_fn


def _construct(cls, source_dp, *args, **kwargs):
    return cls(source_dp, *args, **kwargs)


class IterDataPipe(_PipeBase, IterableDataset[T_co], metaclass=_IterDataPipeMeta):
    """An iterable-style DataPipe: subclasses define `__iter__` (and `__len__` when the
    length is known) and may define `reset()`, which every new iterator calls first.

    Only one iterator per pipe is valid at a time: creating another invalidates the first,
    whose next step raises RuntimeError. Use `.fork()` to read a stream twice.
    """
    # The registry of functional forms and the pickling/printing hooks belong to the
    # kind (IterDataPipe), not to subclasses; see _PipeBase.
    functions: Dict[str, Callable] = {}
    getstate_hook = reduce_ex_hook = None
    repr_hook = str_hook = None
    # The single-iterator rule's bookkeeping (_iterator_guard.py).
    _number_of_samples_yielded = 0
    _valid_iterator_id: Optional[int] = None

    @staticmethod
    def _base():
        return IterDataPipe

    def __getattr__(self, attribute_name):
        return self._lookup_function(IterDataPipe.functions, attribute_name)

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register, enable_df_api_tracing=False):
        # enable_df_api_tracing is accepted for torch's signature; tessera has no DataFrame
        # tracing, so it changes nothing.
        if function_name in IterDataPipe.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is already taken")
        IterDataPipe.functions[function_name] = functools.partial(_construct, cls_to_register)

    def reset(self) -> None:
        """Brings the pipe back to its initial state; called by every new iterator. No-op here."""


class DFIterDataPipe(IterDataPipe):
    def _is_dfpipe(self):
        return True


class MapDataPipe(_PipeBase, Dataset[T_co], metaclass=_DataPipeMeta):
    """A map-style DataPipe: subclasses define `__getitem__` and usually `__len__`."""
    functions: Dict[str, Callable] = {}
    getstate_hook = reduce_ex_hook = None
    repr_hook = str_hook = None

    @staticmethod
    def _base():
        return MapDataPipe

    def __getattr__(self, attribute_name):
        return self._lookup_function(MapDataPipe.functions, attribute_name)

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register):
        if function_name in MapDataPipe.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is already taken")
        MapDataPipe.functions[function_name] = functools.partial(_construct, cls_to_register)


class DataChunk(list, Generic[T]):
    """A list (what batching pipes yield) that also keeps the list it was built from."""

    def __init__(self, items):
        self.items = items
        list.__init__(self, items)

    def as_str(self, indent=""):
        return indent + "[" + ", ".join(str(i) for i in self) + "]"

    def raw_iterator(self):
        yield from self.items

    def __iter__(self):
        yield from list.__iter__(self)
