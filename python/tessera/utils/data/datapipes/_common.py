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


class StreamWrapper:
    """A file object that closes itself when garbage-collected; attribute access goes to
    the file. A child stream keeps its parent open until the last child closes (after
    `parent.autoclose()`)."""
    session_streams = {}
    debug_unclosed_streams = False

    def __init__(self, file_obj, parent_stream=None, name=None):
        self.file_obj = file_obj
        self.child_counter = 0
        self.close_on_last_child = False
        self.name = name
        self.closed = False
        self.parent_stream = parent_stream
        if parent_stream is not None:
            if not isinstance(parent_stream, StreamWrapper):
                raise RuntimeError(f"Parent stream should be StreamWrapper, {type(parent_stream)} was given")
            parent_stream.child_counter += 1
        if StreamWrapper.debug_unclosed_streams:
            StreamWrapper.session_streams[self] = 1

    @classmethod
    def close_streams(cls, v, depth=0):
        """Closes every StreamWrapper found in `v` (through dicts, lists and tuples, 10 deep)."""
        if depth > 10:
            return
        if isinstance(v, StreamWrapper):
            v.close()
        elif isinstance(v, dict):
            for item in v.values():
                cls.close_streams(item, depth + 1)
        elif isinstance(v, (list, tuple)):
            for item in v:
                cls.close_streams(item, depth + 1)

    def __getattr__(self, name):
        return getattr(self.__dict__["file_obj"], name)

    def close(self, *args, **kwargs):
        if StreamWrapper.debug_unclosed_streams:
            StreamWrapper.session_streams.pop(self, None)
        parent = self.__dict__.get("parent_stream")
        if parent is not None:
            parent.child_counter -= 1
            if not parent.child_counter and parent.close_on_last_child:
                parent.close()
        try:
            self.file_obj.close(*args, **kwargs)
        except AttributeError:
            pass
        self.closed = True

    def autoclose(self):
        if self.child_counter == 0:
            self.close()
        self.close_on_last_child = True

    def __dir__(self):
        return sorted(set(self.__dict__) | set(StreamWrapper.__dict__) | set(dir(self.file_obj)))

    def __del__(self):
        if not self.__dict__.get("closed", True):
            self.close()

    def __iter__(self):
        yield from self.file_obj

    def __next__(self):
        return next(self.file_obj)

    def __repr__(self):
        if self.name is None:
            return f"StreamWrapper<{self.file_obj!r}>"
        return f"StreamWrapper<{self.name},{self.file_obj!r}>"

    def __getstate__(self):
        return self.file_obj

    def __setstate__(self, obj):
        self.file_obj = obj


def match_masks(name, masks):
    if not masks:
        return True
    if isinstance(masks, str):
        masks = [masks]
    return any(fnmatch.fnmatch(name, m) for m in masks)


def get_file_pathnames_from_root(root, masks, recursive=False, abspath=False, non_deterministic=False):
    """Paths of the files under `root` (or `root` itself, a file) whose names match
    `masks`, sorted per directory unless `non_deterministic`."""
    def onerror(err):
        warnings.warn(err.filename + " : " + err.strerror)
        raise err

    if os.path.isfile(root):
        path = os.path.abspath(root) if abspath else root
        if match_masks(os.path.basename(path), masks):
            yield path
        return
    for path, dirs, files in os.walk(root, onerror=onerror):
        if abspath:
            path = os.path.abspath(path)
        if not non_deterministic:
            files.sort()
            dirs.sort()
        for f in files:
            if match_masks(f, masks):
                yield os.path.join(path, f)
        if not recursive:
            break


def get_file_binaries_from_pathnames(pathnames, mode, encoding=None):
    if not isinstance(pathnames, Iterable):
        pathnames = [pathnames]
    if mode in ("b", "t"):
        mode = "r" + mode
    for pathname in pathnames:
        if not isinstance(pathname, str):
            raise TypeError(f"Expected string type for pathname, but got {type(pathname)}")
        yield pathname, StreamWrapper(open(pathname, mode, encoding=encoding))


def no_length(dp):
    """The TypeError `len()` raises for a pipe whose length is unknown."""
    return TypeError(f"{type(dp).__name__} instance doesn't have valid length")
