"""TorchVersion: tessera.__version__ is a str that also compares as a version, against
another version string, a packaging Version or a tuple of numbers:
``tessera.__version__ >= (0, 1)``, ``tessera.__version__ < "1.0"``."""
from typing import Any, Iterable

from .version import __version__ as internal_version

__all__ = ["TorchVersion", "Version", "InvalidVersion"]

try:
    from packaging.version import InvalidVersion, Version
except ImportError:  # pragma: no cover - Debian and pip installs both bring packaging
    from pkg_resources.extern.packaging.version import InvalidVersion, Version  # type: ignore


class TorchVersion(str):
    """A version string that compares by version rules when the other side reads as a
    version, and as a plain string otherwise."""

    @staticmethod
    def _as_version(other: Any):
        if isinstance(other, Version):
            return other
        if isinstance(other, str):
            return Version(other)
        if isinstance(other, Iterable):
            return Version(".".join(str(part) for part in other))
        raise InvalidVersion(other)

    def _compare(self, other: Any, op: str) -> bool:
        try:
            return getattr(Version(self), op)(self._as_version(other))
        except InvalidVersion:
            return getattr(str, op)(self, other)

    def __eq__(self, other):
        return self._compare(other, "__eq__")

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")

    __hash__ = str.__hash__


__version__ = TorchVersion(internal_version)
