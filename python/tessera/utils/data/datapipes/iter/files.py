"""File pipes: FileLister (`list_files`), FileOpener (`open_files`, and the deprecated
FileLoader) and StreamReader (`read_from_stream`)."""
from .._common import (deprecation_warning, get_file_binaries_from_pathnames, get_file_pathnames_from_root,
                       no_length)
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from .utils import IterableWrapperIterDataPipe

__all__ = ["FileListerIterDataPipe", "FileLoaderIterDataPipe", "FileOpenerIterDataPipe",
           "StreamReaderIterDataPipe"]


def _unknown_or(pipe, length):
    """`length`, or the usual TypeError when it is -1 (unknown)."""
    if length != -1:
        return length
    raise no_length(pipe)


@functional_datapipe("list_files")
class FileListerIterDataPipe(IterDataPipe):
    """Paths of the files under each root (a path, paths, or a pipe of paths) matching
    `masks` (glob patterns); sorted unless `non_deterministic`. `length` is what len()
    reports (-1: unknown)."""

    def __init__(self, root=".", masks="", *, recursive=False, abspath=False, non_deterministic=False, length=-1):
        super().__init__()
        roots = [root] if isinstance(root, str) else root
        self.datapipe = roots if isinstance(roots, IterDataPipe) else IterableWrapperIterDataPipe(roots)
        self.masks, self.length = masks, length
        self.recursive, self.abspath, self.non_deterministic = recursive, abspath, non_deterministic

    def __len__(self):
        return _unknown_or(self, self.length)

    def __iter__(self):
        options = (self.masks, self.recursive, self.abspath, self.non_deterministic)
        for top in self.datapipe:
            yield from get_file_pathnames_from_root(top, *options)


_READ_MODES = ("b", "t", "rb", "rt", "r")


@functional_datapipe("open_files")
class FileOpenerIterDataPipe(IterDataPipe):
    """(path, StreamWrapper of the open file) for each path; mode 'r', 'rt', 't', 'rb' or
    'b'."""

    def __init__(self, datapipe, mode="r", encoding=None, length=-1):
        super().__init__()
        if mode not in _READ_MODES:
            raise ValueError(f"Invalid mode {mode}")
        if encoding is not None and "b" in mode:
            raise ValueError("binary mode doesn't take an encoding argument")
        self.datapipe, self.length = datapipe, length
        self.mode, self.encoding = mode, encoding

    def __len__(self):
        return _unknown_or(self, self.length)

    def __iter__(self):
        opened = get_file_binaries_from_pathnames(self.datapipe, self.mode, self.encoding)
        yield from opened


class FileLoaderIterDataPipe(IterDataPipe):
    """Deprecated: builds a FileOpener (binary mode by default)."""

    def __new__(cls, datapipe, mode="b", length=-1):
        deprecation_warning(cls.__name__, deprecation_version="1.12", removal_version="1.13",
                            new_class_name="FileOpener")
        return FileOpenerIterDataPipe(datapipe, mode, length=length)


@functional_datapipe("read_from_stream")
class StreamReaderIterDataPipe(IterDataPipe):
    """(path, chunk) for each `chunk`-sized read (None: the whole stream) of each
    (path, stream); a stream is closed once read."""

    def __init__(self, datapipe, chunk=None):
        self.chunk, self.datapipe = chunk, datapipe

    def __iter__(self):
        for path, stream in self.datapipe:
            piece = stream.read(self.chunk)
            while piece:
                yield path, piece
                piece = stream.read(self.chunk)
            stream.close()
