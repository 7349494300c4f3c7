"""Helpers the DataPipes share: checks on the functions they are given, the deprecation
warning text, and StreamWrapper with the file-listing helpers behind FileLister/FileOpener.
"""
import fnmatch
import functools
import inspect
import os
import warnings
from typing import Iterable

__all__ = ["StreamWrapper", "validate_input_col"]


def validate_input_col(fn, input_col):
    """Raises ValueError when `fn` cannot take the 1 (or len(input_col)) positional
    arguments a pipe will pass it, or needs keyword-only arguments nobody passes."""
    try:
        sig = inspect.signature(fn)
    except ValueError:  # built-ins without a signature: nothing to check
        return
    n = len(input_col) if isinstance(input_col, (list, tuple)) else 1
    kinds = [p.kind for p in sig.parameters.values()]
    positional = [p for p in sig.parameters.values()
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    takes_varargs = inspect.Parameter.VAR_POSITIONAL in kinds
    required_kw = [p for p in sig.parameters.values()
                   if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is p.empty]
    if required_kw:
        raise ValueError(f"The function {fn} takes {len(required_kw)} non-default keyword-only parameters, which is "
                         "not allowed.")
    if len(sig.parameters) < n:
        if not takes_varargs:
            raise ValueError(f"The function {fn} takes {len(sig.parameters)} parameters, but {n} are required.")
    elif len(positional) > n:
        if any(p.default is p.empty for p in positional[n:]):
            raise ValueError(f"The function {fn} takes {len(positional)} positional parameters, but {n} are required.")
    elif len(positional) < n and not takes_varargs:
        raise ValueError(f"The function {fn} takes {len(positional)} positional parameters, but {n} are required.")


def _is_local_fn(fn):
    code = getattr(fn, "__code__", None)
    if code is not None:
        return bool(code.co_flags & inspect.CO_NESTED)
    qualname = getattr(fn, "__qualname__", None) or getattr(type(fn), "__qualname__", "")
    return "<locals>" in qualname


def check_unpickable_fn(fn):
    """TypeError for a non-callable; a UserWarning for a lambda or local function, which
    worker processes cannot receive (tessera has no dill)."""
    if not callable(fn):
        raise TypeError(f"A callable function is expected, but {type(fn)} is provided.")
    if isinstance(fn, functools.partial):
        fn = fn.func
    if _is_local_fn(fn):
        warnings.warn("Local function is not supported by pickle, please use regular python function or "
                      "functools.partial instead.")
    elif getattr(fn, "__name__", None) == "<lambda>":
        warnings.warn("Lambda function is not supported by pickle, please use regular python function or "
                      "functools.partial instead.")


def deprecation_warning(old_class_name, *, deprecation_version, removal_version, old_argument_name="",
                        new_class_name=""):
    """The FutureWarning torch gives for a deprecated DataPipe class or argument."""
    what = f"`{old_class_name}()`"
    what = f"The argument `{old_argument_name}` of {what} is" if old_argument_name else f"{what} is"
    msg = (f"{what} deprecated since {deprecation_version} and will be removed in {removal_version}.\n"
           "See https://github.com/pytorch/data/issues/163 for details.")
    if new_class_name:
        msg += f"\nPlease use `{new_class_name}()` instead."
    warnings.warn(msg, FutureWarning)


def _each_nested(value, depth):
    """StreamWrappers inside `value`: itself, or within its dict values, list and tuple
    items, looked for at most 10 levels down."""
    if depth > 10:
        return
    if isinstance(value, StreamWrapper):
        yield value
        return
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, (list, tuple)):
        return
    for inner in value:
        yield from _each_nested(inner, depth + 1)


class StreamWrapper:
    """A file object that closes itself when garbage-collected; attribute access goes to
    the file. A child stream keeps its parent open until the last child closes (after
    `parent.autoclose()`)."""
    session_streams = {}
    debug_unclosed_streams = False

    def __init__(self, file_obj, parent_stream=None, name=None):
        if parent_stream is not None and not isinstance(parent_stream, StreamWrapper):
            raise RuntimeError(f"Parent stream should be StreamWrapper, {type(parent_stream)} was given")
        self.file_obj, self.name, self.parent_stream = file_obj, name, parent_stream
        self.closed = self.close_on_last_child = False
        self.child_counter = 0
        if parent_stream is not None:
            parent_stream.child_counter += 1
        if type(self).debug_unclosed_streams:
            type(self).session_streams[self] = 1

    @classmethod
    def close_streams(cls, v, depth=0):
        """Closes every StreamWrapper found in `v` (through dicts, lists and tuples, 10 deep)."""
        for stream in _each_nested(v, depth):
            stream.close()

    def __getattr__(self, name):
        return getattr(self.__dict__["file_obj"], name)

    def _release_parent(self):
        parent = self.__dict__.get("parent_stream")
        if parent is None:
            return
        parent.child_counter -= 1
        if parent.close_on_last_child and parent.child_counter == 0:
            parent.close()

    def close(self, *args, **kwargs):
        if type(self).debug_unclosed_streams:
            type(self).session_streams.pop(self, None)
        self._release_parent()
        closer = getattr(self.file_obj, "close", None)
        if closer is not None:
            closer(*args, **kwargs)
        self.closed = True

    def autoclose(self):
        """Closes now if no child stream is open, else once the last child closes."""
        no_children = not self.child_counter
        if no_children:
            self.close()
        self.close_on_last_child = True

    def __dir__(self):
        names = set(self.__dict__)
        names.update(StreamWrapper.__dict__)
        names.update(dir(self.file_obj))
        return sorted(names)

    def __del__(self):
        if self.__dict__.get("closed", True):
            return
        self.close()

    def __iter__(self):
        return (line for line in self.file_obj)

    def __next__(self):
        return self.file_obj.__next__()

    def __repr__(self):
        label = "" if self.name is None else f"{self.name},"
        return "StreamWrapper<" + label + repr(self.file_obj) + ">"

    def __getstate__(self):
        return self.file_obj

    def __setstate__(self, file_obj):
        self.file_obj = file_obj


def match_masks(name, masks):
    """Whether `name` matches one of the glob patterns `masks` (a pattern or a list; an
    empty one matches everything)."""
    if not masks:
        return True
    patterns = (masks,) if isinstance(masks, str) else masks
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def _walk_error(err):
    warnings.warn(f"{err.filename} : {err.strerror}")
    raise err


def get_file_pathnames_from_root(root, masks, recursive=False, abspath=False, non_deterministic=False):
    """Paths of the files under `root` (or `root` itself, a file) whose names match
    `masks`, sorted per directory unless `non_deterministic`."""
    if os.path.isfile(root):
        candidate = os.path.abspath(root) if abspath else root
        if match_masks(os.path.basename(candidate), masks):
            yield candidate
        return
    walker = os.walk(root, onerror=_walk_error)
    for directory, subdirs, names in walker:
        if not non_deterministic:
            subdirs.sort()  # in place: os.walk then descends in this order
            names = sorted(names)
        base = os.path.abspath(directory) if abspath else directory
        yield from (os.path.join(base, n) for n in names if match_masks(n, masks))
        if not recursive:
            return


def get_file_binaries_from_pathnames(pathnames, mode, encoding=None):
    """(path, StreamWrapper of the opened file) for each path; mode 'b'/'t' mean 'rb'/'rt'."""
    paths = pathnames if isinstance(pathnames, Iterable) else [pathnames]
    open_mode = "r" + mode if mode in ("b", "t") else mode
    for path in paths:
        if not isinstance(path, str):
            raise TypeError(f"Expected string type for pathname, but got {type(path)}")
        yield path, StreamWrapper(open(path, open_mode, encoding=encoding))


def no_length(dp):
    """The TypeError `len()` raises for a pipe whose length is unknown."""
    return TypeError(f"{type(dp).__name__} instance doesn't have valid length")
