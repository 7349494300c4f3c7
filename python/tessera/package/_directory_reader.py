"""Reading an unzipped package (a directory holding the archive's files) with the same
calls PackageImporter makes on a zip archive."""
import os
import os.path

import numpy


class DirectoryReader(object):
    def __init__(self, directory):
        self.directory = directory

    def _path(self, name):
        return f"{self.directory}/{name}"

    def get_record(self, name):
        with open(self._path(name), "rb") as f:
            return f.read()

    def get_storage_bytes(self, name, nbytes):
        """The first `nbytes` bytes of record `name` as a uint8 numpy array."""
        return numpy.fromfile(self._path(name), dtype=numpy.uint8, count=nbytes)

    def has_record(self, path):
        return os.path.isfile(os.path.join(self.directory, path))

    def get_all_records(self):
        records = []
        for root, _, files in os.walk(self.directory):
            for file in files:
                full = os.path.join(root, file)
                records.append(os.path.relpath(full, self.directory).replace(os.sep, "/"))
        return sorted(records)
