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


class FunctionSchema:
    """An overload's schema, as torch's ``func._schema``: name, overload_name and str()."""

    def __init__(self, qualified: str, overload: str):
        self.name = qualified
        self.overload_name = overload
        self._text = _C._op_schema(qualified, overload)

    def __str__(self):
        return self._text

    def __repr__(self):
        return self._text


class OpOverload:
    """One overload of an operator, as torch's ``torch.ops.aten.add.Tensor``: callable, and
    the ``func`` that __torch_dispatch__ handlers receive."""

    def __init__(self, packet: "OpOverloadPacket", overload: str):
        qualified = packet._qualified_op_name
        self._overloadpacket = packet
        self._overloadname = overload or "default"
        self._name = f"{qualified}.{overload}" if overload else qualified
        self._op = _C._OpCall(qualified, overload, self)
        self.__name__ = f"{qualified.split('::')[1]}.{self._overloadname}"
        self.__qualname__ = self._name
        self.__module__ = packet.__module__
        self._schema_cache = None

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def name(self) -> str:
        """'aten::add.Tensor' ('aten::add' for the default overload)."""
        return self._name

    @property
    def _schema(self) -> FunctionSchema:
        if self._schema_cache is None:
            self._schema_cache = FunctionSchema(self._overloadpacket._qualified_op_name,
                                                "" if self._overloadname == "default" else self._overloadname)
        return self._schema_cache

    @property
    def overloadpacket(self) -> "OpOverloadPacket":
        return self._overloadpacket

    @property
    def namespace(self) -> str:
        return self._name.split("::")[0]

    @property
    def op(self):
        return self._op

    @property
    def tags(self):
        return ()

    def __deepcopy__(self, memo=None):
        return self

    def __hash__(self):
        return hash(self._name)

    def __str__(self):
        ns, name = self._overloadpacket._qualified_op_name.split("::")
        return f"{ns}.{name}.{self._overloadname}"

    def __repr__(self):
        ns, name = self._overloadpacket._qualified_op_name.split("::")
        return f"<OpOverload(op='{ns}.{name}', overload='{self._overloadname}')>"


class OpOverloadPacket:
    """All overloads of an operator name (``torch.ops.aten.add``); calling it picks one by
    the arguments. Each overload is made once and kept, so ``func is ops.aten.add.Tensor``."""

    def __init__(self, qualified: str):
        self._qualified_op_name = qualified
        self._op = _C._OpCall(qualified, None, self)
        self.__name__ = qualified.split("::")[1]
        self.__module__ = f"tessera.ops.{qualified.split('::')[0]}"

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    @property
    def op(self):
        return self._op

    def overloads(self):
        return [name or "default" for name in _C._op_overloads(self._qualified_op_name)]

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        name = "" if overload == "default" else overload
        if name not in _C._op_overloads(self._qualified_op_name):
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{overload}'")
        op = OpOverload(self, name)
        setattr(self, overload, op)
        return op

    def __deepcopy__(self, memo=None):
        return self

    def __hash__(self):
        return hash(self._qualified_op_name)

    def __str__(self):
        return self._qualified_op_name.replace("::", ".")

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self}')>"


def _overload_of(qualified: str, overload: str) -> OpOverload:
    """The OpOverload object of one operator overload (what __torch_dispatch__ gets as func)."""
    ns, name = qualified.split("::", 1)
    return getattr(getattr(getattr(ops, ns), name), overload or "default")


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


# (package directory name, extension module name) -> the library in tessera's package
# that registers the same operator namespace.
_SUBSTITUTES = {("torchvision", "_C"): "libtessera_torchvision.so"}


def _substitute(path):
    """Tessera's build of the extension at ``path`` when there is one, else None."""
    package = os.path.basename(os.path.dirname(path))
    module = os.path.basename(path).split(".")[0]
    library = _SUBSTITUTES.get((package, module))
    if library is None:
        return None
    candidate = os.path.join(os.path.dirname(os.path.realpath(_C.__file__)), library)
    return candidate if os.path.exists(candidate) else None


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
        registers nothing with tessera.

        A few packages' own extensions have a tessera build of the same operators, which
        is loaded in their place (see _SUBSTITUTES): torchvision's _C gives
        libtessera_torchvision, so torchvision.ops runs on tessera's kernels."""
        real = os.path.realpath(os.fspath(path))
        _C._load_library(_substitute(real) or real)

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
