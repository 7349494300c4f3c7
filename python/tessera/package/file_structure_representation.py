"""Directory: the tree of files in a package archive, as PackageImporter.file_structure()
returns it; str() draws it."""
from typing import Dict, List

from .glob_group import GlobGroup, GlobPattern

__all__ = ["Directory"]


_BRANCH = "├── "
_LAST = "└── "


class Directory:
    """A node of the file tree: a directory (`is_dir`, with `children` by name) or a file."""

    def __init__(self, name: str, is_dir: bool):
        self.name = name
        self.is_dir = is_dir
        self.children: Dict[str, "Directory"] = {}

    def _subdir(self, segments):
        """The directory at the relative path `segments`, created along the way."""
        here = self
        for seg in segments:
            here = here.children.setdefault(seg, Directory(seg, True))
        return here

    def _insert_path(self, rel_path):
        segments = rel_path.split("/")
        leaf = segments.pop()
        self._subdir(segments).children[leaf] = Directory(leaf, False)

    def has_file(self, filename: str) -> bool:
        """Whether the "/"-separated relative path `filename` exists under this directory."""
        here = self
        for seg in filename.split("/"):
            if seg not in here.children:
                return False
            here = here.children[seg]
        return True

    def __str__(self):
        out: List[str] = []
        self._draw(out, "", "─── ")
        return "".join(out)

    def _draw(self, out, indent, connector):
        """Appends this node's line and, below it, its subdirectories then its files, both
        sorted by name, drawn with box-drawing connectors."""
        out.append(indent + connector + self.name + "\n")
        inner = indent + ("│   " if connector == _BRANCH else "    ")
        subdirs = sorted(n for n, c in self.children.items() if c.is_dir)
        leaves = sorted(n for n, c in self.children.items() if not c.is_dir)
        entries = [(n, True) for n in subdirs] + [(n, False) for n in leaves]
        for pos, (label, is_folder) in enumerate(entries):
            mark = _LAST if pos == len(entries) - 1 else _BRANCH
            if is_folder:
                self.children[label]._draw(out, inner, mark)
            else:
                out.append(inner + mark + label + "\n")


def _create_directory_from_file_list(filename: str, file_list: List[str], include: "GlobPattern" = "**",
                                     exclude: "GlobPattern" = ()) -> Directory:
    """A Directory named `filename` holding the paths of `file_list` that match `include`
    and not `exclude` (patterns over "/"-separated paths)."""
    selector = GlobGroup(include, exclude=exclude, separator="/")
    root = Directory(filename, True)
    for entry in filter(selector.matches, file_list):
        root._insert_path(entry)
    return root
