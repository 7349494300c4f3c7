"""Name-resolution rules of Python's import statement, as PackageImporter needs them:
turning a relative import into an absolute name, validating __import__ arguments,
finding the package a module imports relative to, plus two small text helpers.
Written from the language reference's description of the import system."""
import os.path
import warnings


def _normalize_line_endings(raw):
    """bytes with Windows (CRLF) and old-Mac (CR) line breaks turned into LF."""
    for ending in (b"\r\n", b"\r"):
        raw = raw.replace(ending, b"\n")
    return raw


def _resolve_name(tail, anchor, depth):
    """Absolute module name for `from <depth dots><tail> import ...` written inside package
    `anchor`. One dot means `anchor` itself; each further dot climbs one package up."""
    climb = depth - 1
    pieces = anchor.split(".")
    if climb >= len(pieces):
        raise ValueError("attempted relative import beyond top-level package")
    base = ".".join(pieces[:len(pieces) - climb])
    return base + "." + tail if tail else base


def _sanity_check(modname, anchor, depth):
    """Reject __import__ arguments the import statement could never produce."""
    if not isinstance(modname, str):
        raise TypeError(f"module name must be str, not {type(modname)}")
    if depth < 0:
        raise ValueError("level must be >= 0")
    relative = depth > 0
    if relative and not isinstance(anchor, str):
        raise TypeError("__package__ not set to a string")
    if relative and not anchor:
        raise ImportError("attempted relative import with no known parent package")
    if not relative and modname == "":
        raise ValueError("Empty module name")


def _calc___package__(namespace):
    """The package a module whose globals are `namespace` resolves relative imports against:
    __package__ first, then __spec__.parent, then derived from __name__ (and __path__)."""
    declared = namespace.get("__package__")
    module_spec = namespace.get("__spec__")
    if declared is None:
        if module_spec is not None:
            return module_spec.parent
        warnings.warn("can't resolve package from __spec__ or __package__, falling back on __name__ and __path__",
                      ImportWarning, stacklevel=3)
        own_name = namespace["__name__"]
        if "__path__" in namespace:
            # A package is its own anchor.
            return own_name
        head, _, _ = own_name.rpartition(".")
        return head
    if module_spec is not None and module_spec.parent != declared:
        warnings.warn(f"__package__ != __spec__.parent ({declared!r} != {module_spec.parent!r})", ImportWarning,
                      stacklevel=3)
    return declared


def _normalize_path(resource):
    """`resource` when it is a bare file name; one with a directory part is refused."""
    folder, leaf = os.path.split(resource)
    if folder:
        raise ValueError(f"{resource!r} must be only a file name")
    return leaf
