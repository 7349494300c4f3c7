"""tessera.ops: every registered operator by namespace, as torch.ops.

    tessera.ops.load_library("libmyops.so")      # runs its TORCH_LIBRARY blocks
    tessera.ops.myops.scale(t, 2.0)             # any overload, chosen by the arguments
    tessera.ops.myops.scale.default(t, 2.0)     # one overload by name
    tessera.ops.aten.add.Tensor(a, b)

Calls go through the dispatcher's boxed path with the shared schema-driven parser.
"""
from __future__ import annotations

import os
import types

from . import _C


class OpOverload:
    """One overload of an operator: `aten::add.Tensor`."""

    def __init__(self, qualified: str, overload: str):
        self._qualified = qualified
        self._overload = overload
        self._op = _C._OpCall(qualified, overload, self)
        self.__name__ = f"{qualified}.{overload or 'default'}"

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverload {self.__name__}>"


class OpOverloadPacket:
    """All overloads of an operator name; calling it picks one by the arguments."""

    def __init__(self, qualified: str):
        self._qualified = qualified
        self._op = _C._OpCall(qualified, None, self)
        self.__name__ = qualified

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def overloads(self):
        return [name or "default" for name in _C._op_overloads(self._qualified)]

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        name = "" if overload == "default" else overload
        if name not in _C._op_overloads(self._qualified):
            raise AttributeError(f"operator {self._qualified} has no overload '{overload}'")
        return OpOverload(self._qualified, name)

    def __repr__(self):
        return f"<OpOverloadPacket {self._qualified}>"


class _Namespace(types.ModuleType):
    """tessera.ops.<namespace>: its attributes are the operators registered there. A packet
    is looked up once and kept; it follows later changes to the operator's registrations
    and raises if the operator is gone."""

    def __init__(self, name: str):
        super().__init__(f"tessera.ops.{name}")
        self._name = name

    def __getattr__(self, op: str) -> OpOverloadPacket:
        if op.startswith("__"):
            raise AttributeError(op)
        qualified = f"{self._name}::{op}"
        if not _C._op_overloads(qualified):
            raise AttributeError(f"No such operator {qualified}")
        packet = OpOverloadPacket(qualified)
        setattr(self, op, packet)
        return packet


class _Ops(types.ModuleType):
    def __init__(self):
        super().__init__("tessera.ops")

    def __getattr__(self, namespace: str) -> _Namespace:
        if namespace.startswith("__"):
            raise AttributeError(namespace)
        ns = _Namespace(namespace)
        setattr(self, namespace, ns)
        return ns

    @staticmethod
    def load_library(path) -> None:
        """Loads a shared library whose TORCH_LIBRARY blocks register operators.

        OSError when it cannot be opened, when it is linked against PyTorch's own libraries
        (built for PyTorch, not tessera: refused before anything is mapped), or when it
        registers nothing with tessera."""
        _C._load_library(os.path.realpath(os.fspath(path)))

    def unload_library(self, path) -> None:
        """Unloads a library loaded with load_library; its operators and kernels go with it."""
        _C._unload_library(os.path.realpath(os.fspath(path)))
        self._forget()

    def _forget(self) -> None:
        """Drops the cached namespaces, so operators that are gone stop resolving."""
        for name, value in list(vars(self).items()):
            if isinstance(value, _Namespace):
                delattr(self, name)


ops = _Ops()
