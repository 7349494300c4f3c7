"""File pipes: FileLister (`list_files`), FileOpener (`open_files`, and the deprecated
FileLoader) and StreamReader (`read_from_stream`)."""
from .._common import (deprecation_warning, get_file_binaries_from_pathnames, get_file_pathnames_from_root,
                       no_length)
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from .utils import IterableWrapperIterDataPipe

__all__ = ["FileListerIterDataPipe", "FileLoaderIterDataPipe", "FileOpenerIterDataPipe",
           "StreamReaderIterDataPipe"]


@functional_datapipe("list_files")
class FileListerIterDataPipe(IterDataPipe):
    """Paths of the files under each root (a path, paths, or a pipe of paths) matching
    `masks` (glob patterns); sorted unless `non_deterministic`. `length` is what len()
    reports (-1: unknown)."""

    def __init__(self, root=".", masks="", *, recursive=False, abspath=False, non_deterministic=False, length=-1):
        super().__init__()
        if isinstance(root, str):
            root = [root]
        if not isinstance(root, IterDataPipe):
            root = IterableWrapperIterDataPipe(root)
        self.datapipe = root
        self.masks = masks
        self.recursive = recursive
        self.abspath = abspath
        self.non_deterministic = non_deterministic
        self.length = length

    def __iter__(self):
        for path in self.datapipe:
            yield from get_file_pathnames_from_root(path, self.masks, self.recursive, self.abspath,
                                                    self.non_deterministic)

    def __len__(self):
        if self.length == -1:
            raise no_length(self)
        return self.length


@functional_datapipe("open_files")
class FileOpenerIterDataPipe(IterDataPipe):
    """(path, StreamWrapper of the open file) for each path; mode 'r', 'rt', 't', 'rb' or
    'b'."""

    def __init__(self, datapipe, mode="r", encoding=None, length=-1):
        super().__init__()
        self.datapipe = datapipe
        self.mode = mode
        self.encoding = encoding
        if mode not in ("b", "t", "rb", "rt", "r"):
            raise ValueError(f"Invalid mode {mode}")
        if "b" in mode and encoding is not None:
            raise ValueError("binary mode doesn't take an encoding argument")
        self.length = length

    def __iter__(self):
        yield from get_file_binaries_from_pathnames(self.datapipe, self.mode, self.encoding)

    def __len__(self):
        if self.length == -1:
            raise no_length(self)
        return self.length


class FileLoaderIterDataPipe(IterDataPipe):
    """Deprecated: builds a FileOpener (binary mode by default)."""

    def __new__(cls, datapipe, mode="b", length=-1):
        deprecation_warning(cls.__name__, deprecation_version="1.12", removal_version="1.13",
                            new_class_name="FileOpener")
        return FileOpenerIterDataPipe(datapipe=datapipe, mode=mode, length=length)


@functional_datapipe("read_from_stream")
class StreamReaderIterDataPipe(IterDataPipe):
    """(path, chunk) for each `chunk`-sized read (None: the whole stream) of each
    (path, stream); a stream is closed once read."""

    def __init__(self, datapipe, chunk=None):
        self.datapipe = datapipe
        self.chunk = chunk

    def __iter__(self):
        for path, stream in self.datapipe:
            while True:
                data = stream.read(self.chunk)
                if not data:
                    stream.close()
                    break
                yield path, data
