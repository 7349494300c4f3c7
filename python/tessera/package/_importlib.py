"""Pieces of the import system PackageImporter reimplements: relative names, argument
checks, __package__, line endings and resource names. They follow CPython's importlib."""
import os.path
import warnings


def _normalize_line_endings(source):
    """bytes with every \\r\\n and lone \\r turned into \\n."""
    return source.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _resolve_name(name, package, level):
    """The absolute name of `name` imported `level` dots up from `package`."""
    parts = package.rsplit(".", level - 1)
    if len(parts) < level:
        raise ValueError("attempted relative import beyond top-level package")
    return f"{parts[0]}.{name}" if name else parts[0]


def _sanity_check(name, package, level):
    if not isinstance(name, str):
        raise TypeError("module name must be str, not {}".format(type(name)))
    if level < 0:
        raise ValueError("level must be >= 0")
    if level > 0:
        if not isinstance(package, str):
            raise TypeError("__package__ not set to a string")
        if not package:
            raise ImportError("attempted relative import with no known parent package")
    if not name and level == 0:
        raise ValueError("Empty module name")


def _calc___package__(globals):
    """The package a module with these globals imports relative to."""
    package = globals.get("__package__")
    spec = globals.get("__spec__")
    if package is not None:
        if spec is not None and package != spec.parent:
            warnings.warn(f"__package__ != __spec__.parent ({package!r} != {spec.parent!r})", ImportWarning,
                          stacklevel=3)
        return package
    if spec is not None:
        return spec.parent
    warnings.warn("can't resolve package from __spec__ or __package__, falling back on __name__ and __path__",
                  ImportWarning, stacklevel=3)
    package = globals["__name__"]
    if "__path__" not in globals:
        package = package.rpartition(".")[0]
    return package


def _normalize_path(path):
    """`path` as a bare file name; a name with a directory part is refused."""
    parent, file_name = os.path.split(path)
    if parent:
        raise ValueError("{!r} must be only a file name".format(path))
    return file_name
