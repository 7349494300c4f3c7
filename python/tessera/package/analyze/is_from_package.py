from types import ModuleType
from typing import Any

from .._mangling import is_mangled


def is_from_package(obj: Any) -> bool:
    """Whether `obj` (a module, or an object by its class's module) was loaded from a
    package. Objects of externed modules come from the environment: False."""
    name = obj.__name__ if type(obj) == ModuleType else type(obj).__module__
    return is_mangled(name)
