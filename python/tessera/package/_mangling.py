"""Name mangling of modules a PackageImporter loads.

Every importer gets its own prefix, `<torch_package_N>` (the spelling torch.package uses,
so names and ids read the same), and the modules it creates are named
`<torch_package_N>.real.name`: objects from two packages, or from a package and the
environment, never share a module name.
"""
import itertools
import re

_next_index = itertools.count()
_MANGLED = re.compile(r"<torch_package_\d+>")


class PackageMangler:
    """The mangling of one importer."""

    def __init__(self):
        self._mangle_index = next(_next_index)
        self._mangle_parent = f"<torch_package_{self._mangle_index}>"

    def mangle(self, name) -> str:
        assert len(name) != 0
        return f"{self._mangle_parent}.{name}"

    def demangle(self, mangled: str) -> str:
        """`mangled` without this importer's prefix; names of other manglers pass unchanged."""
        prefix = self._mangle_parent + "."
        return mangled[len(prefix):] if mangled.startswith(prefix) else mangled

    def parent_name(self):
        return self._mangle_parent


def is_mangled(name: str) -> bool:
    return _MANGLED.match(name) is not None


def demangle(name: str) -> str:
    """`name` without any importer's prefix (a bare prefix demangles to '')."""
    if not is_mangled(name):
        return name
    _, dot, rest = name.partition(".")
    return rest if dot else ""


def get_mangle_prefix(name: str) -> str:
    return name.partition(".")[0] if is_mangled(name) else name
