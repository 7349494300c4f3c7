"""Name mangling of modules a PackageImporter loads.

Every importer gets its own prefix, `<torch_package_N>` (the spelling torch.package uses,
so names and ids read the same), and the modules it creates are named
`<torch_package_N>.real.name`: objects from two packages, or from a package and the
environment, never share a module name.
"""
import itertools
import re

_importer_serial = itertools.count()
_PREFIX_RE = re.compile(r"<torch_package_\d+>")


class PackageMangler:
    """The mangling of one importer."""

    def __init__(self):
        self._serial = next(_importer_serial)
        self._root = "<torch_package_%d>" % self._serial

    def mangle(self, name) -> str:
        assert len(name) != 0
        return self._root + "." + name

    def demangle(self, mangled: str) -> str:
        """`mangled` without this importer's prefix; names of other manglers pass unchanged."""
        head = self._root + "."
        if not mangled.startswith(head):
            return mangled
        return mangled[len(head):]

    def parent_name(self):
        return self._root


def is_mangled(name: str) -> bool:
    return bool(_PREFIX_RE.match(name))


def demangle(name: str) -> str:
    """`name` without any importer's prefix (a bare prefix demangles to '')."""
    if is_mangled(name):
        pieces = name.split(".", 1)
        return pieces[1] if len(pieces) == 2 else ""
    return name


def get_mangle_prefix(name: str) -> str:
    if not is_mangled(name):
        return name
    return name.split(".", 1)[0]
